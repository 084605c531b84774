//! Where in a text a call may stand. A model that takes its tools as text
//! calls them alone on a line, as the whole answer, in a fence of calls, or
//! after saying it will; the same text also holds prose that only mentions
//! calls. [`Layout`] marks what is never a call's place:
//!
//! - a fenced block that is a code sample: one with a line that defines
//!   or imports something (`def`, `class`, `import`, `function`, `fn`,
//!   `const`, ...), so the calls in it are the sample's own. Only a line
//!   that starts a statement counts, outside strings and brackets: a line
//!   of a call's string ("let me know") or arguments (`package = "curl",`)
//!   defines nothing;
//! - a definition outside fences: a line that looks like one (`def name(`,
//!   `class Name:`, `function name(`, `fn name(`; "class notes:" is prose)
//!   and the lines indented under it;
//! - inline code (`` `f(x)` ``) in a line of prose; inline code that is all
//!   its line holds (`` `f(x=1)` ``, ```` ```f(x=1)``` ````) is read as that
//!   line.
//!
//! The text formats read only outside these; the Pythonic reader also asks
//! where a call's line or sentence starts and ends ([`Layout::line_of`]).

use std::ops::Range;

use crate::markdown::Fence;

/// What in a text is no place for a call; see the [module docs](self).
pub(super) struct Layout {
    /// Sorted, disjoint byte ranges where no call stands.
    hidden: Vec<Range<usize>>,
    /// Inline code spans that are all their line holds: their content,
    /// which is read as a line of its own. Sorted, disjoint.
    alone: Vec<Range<usize>>,
}

/// The words that open a line of code that defines or imports something:
/// a fenced block with such a line is a code sample.
const DEFINES: [&str; 16] = [
    "def",
    "class",
    "import",
    "from",
    "function",
    "fn",
    "func",
    "const",
    "let",
    "var",
    "struct",
    "impl",
    "interface",
    "package",
    "#include",
    "using",
];

/// Runs of more backticks than this open no inline code span and close
/// none (CommonMark sets no bound; code spans are opened with one or two,
/// and a bound keeps a line's failed searches for a closing run few).
const MAX_TICKS: usize = 16;

/// Words a definition's line may start with before its keyword.
const MODIFIERS: [&str; 6] = ["async", "pub", "export", "default", "public", "static"];

impl Layout {
    pub(super) fn new(text: &str) -> Layout {
        let mut layout = Layout {
            hidden: Vec::new(),
            alone: Vec::new(),
        };
        let mut fence: Option<OpenFence> = None;
        // An open definition outside fences: where it starts, its indentation.
        let mut definition: Option<(usize, usize)> = None;
        let mut at = 0;
        for line in text.split_inclusive('\n') {
            let start = at;
            at += line.len();
            let trimmed = line.trim_start();
            let indent = line.len() - trimmed.len();
            if let Some(open) = &mut fence {
                if open.fence.closes(line) {
                    if open.sample {
                        layout.hidden.push(open.body..start);
                    }
                    fence = None;
                } else if !open.sample {
                    // Only a line that starts a statement defines: not a
                    // line of a string or of a call's arguments.
                    open.sample = open.code.at_statement() && opens_with(trimmed, &DEFINES);
                    open.code.read(line);
                }
                continue;
            }
            let opens = Fence::open(line).map(|(open, _)| open);
            if let Some((from, depth)) = definition {
                let body = trimmed.trim().is_empty()
                    || indent > depth
                    || (indent == depth && trimmed.starts_with(['}', ')']));
                if body && opens.is_none() {
                    continue;
                }
                layout.hidden.push(from..start);
                definition = None;
            }
            if let Some(open) = opens {
                fence = Some(OpenFence {
                    fence: open,
                    body: at,
                    sample: false,
                    code: Code::default(),
                });
                continue;
            }
            if starts_a_definition(trimmed) {
                definition = Some((start, indent));
                continue;
            }
            layout.inline_code(start, line);
        }
        if let Some(open) = fence.filter(|open| open.sample) {
            layout.hidden.push(open.body..text.len());
        }
        if let Some((from, _)) = definition {
            layout.hidden.push(from..text.len());
        }
        layout
    }

    /// The inline code spans of one line of prose, starting at byte
    /// `start`: as CommonMark has them, a run of backticks opens a span
    /// that the next run of as many closes (```` ```f(x=1)``` ```` on a
    /// line is one, as it opens no fence).
    fn inline_code(&mut self, start: usize, line: &str) {
        let bytes = line.as_bytes();
        // A span is all its line holds when only blanks come before it and
        // only blanks and a sentence's end after it: both measured once a
        // line, not once a span.
        let indent = line.len() - line.trim_start().len();
        let rest_len = line.trim_end().trim_end_matches(['.', ';', '!', ':']).len();
        // The lengths of run that no run of the same length follows: a
        // search that failed is not made again, so a line is searched at
        // most `MAX_TICKS` times past its spans.
        let mut none_after = 0u32;
        let mut i = 0;
        while let Some(open) = memchr::memchr(b'`', &bytes[i..]).map(|j| i + j) {
            let ticks = bytes[open..].iter().take_while(|&&b| b == b'`').count();
            let body = open + ticks;
            if ticks > MAX_TICKS || none_after & (1 << (ticks - 1)) != 0 {
                i = body;
                continue;
            }
            // The next run of exactly as many backticks closes the span.
            let mut close = None;
            let mut j = body;
            while let Some(k) = memchr::memchr(b'`', &bytes[j..]).map(|k| j + k) {
                let run = bytes[k..].iter().take_while(|&&b| b == b'`').count();
                if run == ticks {
                    close = Some(k);
                    break;
                }
                j = k + run;
            }
            let Some(close) = close else {
                none_after |= 1 << (ticks - 1);
                i = body;
                continue;
            };
            let span = start + open..start + close + ticks;
            if open == indent && close + ticks == rest_len {
                self.alone.push(start + body..start + close);
            } else {
                self.hidden.push(span);
            }
            i = close + ticks;
        }
    }

    /// Whether byte `at` is where no call stands.
    pub(super) fn hidden(&self, at: usize) -> bool {
        contains(&self.hidden, at)
    }

    /// The bounds of the line that byte `at` is read in: the content of an
    /// inline code span that is all its line holds, else `None` (the text's
    /// own line).
    pub(super) fn line_of(&self, at: usize) -> Option<Range<usize>> {
        let i = self.alone.partition_point(|span| span.end < at);
        self.alone
            .get(i)
            .filter(|span| span.start <= at && at <= span.end)
            .cloned()
    }
}

/// A fenced block being read.
struct OpenFence {
    /// What closes it.
    fence: Fence,
    /// Where its body starts.
    body: usize,
    /// Whether a line of it defines or imports something.
    sample: bool,
    /// Where its lines so far leave its code.
    code: Code,
}

/// Where the lines of a fenced block read so far leave its code: how many
/// brackets are open, and whether a string is. A line starts a statement,
/// and may define something, only outside both: a line of a string ("let
/// me know", "from Bob") or of a call's arguments (`package = "curl",`,
/// `interface = "eth0",`) defines nothing. Each line is read once.
#[derive(Default)]
struct Code {
    /// Brackets open: `(`, `[`, `{`.
    depth: usize,
    /// The quote of an open string, and whether it is tripled (Python's
    /// triple quotes, which run over lines; a string in one quote ends
    /// with its line).
    string: Option<(u8, bool)>,
}

impl Code {
    /// Whether the next line starts a statement.
    fn at_statement(&self) -> bool {
        self.depth == 0 && self.string.is_none()
    }

    /// Reads one line.
    fn read(&mut self, line: &str) {
        let bytes = line.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            let byte = bytes[i];
            if let Some((quote, triple)) = self.string {
                if byte == b'\\' {
                    i += 2;
                    continue;
                }
                if byte == quote && (!triple || bytes[i..].starts_with(&[quote; 3])) {
                    self.string = None;
                    i += if triple { 3 } else { 1 };
                    continue;
                }
                i += 1;
                continue;
            }
            match byte {
                b'(' | b'[' | b'{' => self.depth += 1,
                b')' | b']' | b'}' => self.depth = self.depth.saturating_sub(1),
                b'"' | b'\'' => {
                    let triple = bytes[i..].starts_with(&[byte; 3]);
                    self.string = Some((byte, triple));
                    i += if triple { 3 } else { 1 };
                    continue;
                }
                // A comment (`#`, `//`) runs to the end of its line.
                b'#' => break,
                b'/' if bytes.get(i + 1) == Some(&b'/') => break,
                _ => {}
            }
            i += 1;
        }
        if matches!(self.string, Some((_, false))) {
            self.string = None;
        }
    }
}

/// Whether a sorted list of disjoint ranges holds `at`.
fn contains(ranges: &[Range<usize>], at: usize) -> bool {
    let i = ranges.partition_point(|range| range.end <= at);
    ranges.get(i).is_some_and(|range| range.start <= at)
}

/// Whether a line outside fences starts a definition, whose indented lines
/// are its body: it must look like one, not only start with its keyword
/// ("class notes:" and "function calls to make:" are prose). After
/// modifiers (`async`, `pub`, `export`, ...):
///
/// - `def name(`, `fn name(` or `fn name<`, `function name(` (or
///   `function* name(`), `func name(` or `func (r Recv) name(`;
/// - `class Name`, its name capitalized as the languages' conventions have
///   it, then nothing, `:`, `(`, `{`, `<`, `extends` or `implements`.
fn starts_a_definition(line: &str) -> bool {
    let mut rest = line;
    let keyword = loop {
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let word = &rest[..end];
        rest = rest[end..].trim_start();
        if end == 0 || rest.is_empty() {
            return false;
        }
        if !MODIFIERS.contains(&word) {
            break word;
        }
    };
    // The name `rest` starts with, and what follows it.
    fn name(rest: &str) -> Option<(&str, &str)> {
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
            .unwrap_or(rest.len());
        let name = &rest[..end];
        let named = name.starts_with(|c: char| c.is_alphabetic() || c == '_' || c == '$');
        named.then(|| (name, rest[end..].trim_start()))
    }
    match keyword {
        "def" | "fn" | "function" | "function*" | "func" => {
            let mut rest = rest.strip_prefix('*').unwrap_or(rest).trim_start();
            if keyword == "func" && rest.starts_with('(') {
                // Go's receiver: `func (s *Server) Name(`.
                let Some(close) = rest.find(')') else {
                    return false;
                };
                rest = rest[close + 1..].trim_start();
            }
            let opens = if keyword == "def" { "(" } else { "(<[" };
            name(rest).is_some_and(|(_, after)| after.starts_with(|c| opens.contains(c)))
        }
        "class" => name(rest).is_some_and(|(name, after)| {
            name.starts_with(|c: char| c.is_uppercase())
                && (after.is_empty()
                    || after.starts_with([':', '(', '{', '<'])
                    || ["extends ", "implements "]
                        .iter()
                        .any(|word| after.starts_with(word)))
        }),
        _ => false,
    }
}

/// Whether a line opens with one of `words` (after modifiers such as
/// `async` or `pub`), followed by a space.
fn opens_with(line: &str, words: &[&str]) -> bool {
    let mut rest = line;
    loop {
        let word_end = rest.find([' ', '\t']).unwrap_or(rest.len());
        let word = &rest[..word_end];
        if word_end < rest.len() && words.contains(&word) {
            return true;
        }
        if word_end == rest.len() || !MODIFIERS.contains(&word) {
            return false;
        }
        rest = rest[word_end..].trim_start();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hidden(text: &str) -> Vec<&str> {
        Layout::new(text)
            .hidden
            .iter()
            .map(|range| &text[range.clone()])
            .collect()
    }

    #[test]
    fn samples_definitions_and_inline_code_are_hidden() {
        let sample = "Like this:\n```python\nimport x\nf(a=1)\n```\nf(a=2)";
        assert_eq!(hidden(sample), ["import x\nf(a=1)\n"]);
        let calls = "```tool_code\nf(a=1)\n```";
        assert_eq!(hidden(calls), [] as [&str; 0]);
        let definition = "def f(a):\n    g(a)\n\n    return a\nf(a=1)";
        assert_eq!(
            hidden(definition),
            ["def f(a):\n    g(a)\n\n    return a\n"]
        );
        let js = "async function f(a) {\n  g(a);\n}\nf(1)";
        assert_eq!(hidden(js), ["async function f(a) {\n  g(a);\n}\n"]);
        let one_line = "```f(a=1)```\ng(b=2)";
        assert_eq!(hidden(one_line), [] as [&str; 0]);
        assert_eq!(Layout::new(one_line).line_of(3), Some(3..9));
        let inline = "Use `f(x)` or ``g(`y`)``.\n`h(a=1)`.";
        assert_eq!(hidden(inline), ["`f(x)`", "``g(`y`)``"]);
        let layout = Layout::new(inline);
        let alone = inline.find("h(").unwrap();
        assert_eq!(layout.line_of(alone), Some(alone..alone + 6));
        assert_eq!(layout.line_of(5), None);
        assert!(layout.hidden(5) && !layout.hidden(alone));
        // An unclosed fence that is a sample runs to the end; an unclosed
        // backtick is only a backtick.
        assert_eq!(hidden("```\nclass A:\n  f(1)"), ["class A:\n  f(1)"]);
        assert_eq!(hidden("it`s f(a=1)"), [] as [&str; 0]);
    }

    /// A definition outside fences is a line that looks like one, not any
    /// line that starts with its keyword; its body is the lines indented
    /// under it, and a line that closes its brackets at its indentation.
    #[test]
    fn a_definition_looks_like_one() {
        for line in [
            "def f(a):",
            "async def f(",
            "def f (a):",
            "class Foo:",
            "class Foo(Base):",
            "class Foo",
            "export class Foo extends Bar {",
            "public class Foo implements Bar {",
            "class Foo<T> {",
            "function f(a) {",
            "function* gen() {",
            "export default function f(",
            "pub fn f<T>(x: T) {",
            "pub async fn f(",
            "func Name(x int) {",
            "func (s *Server) Name(",
        ] {
            assert!(starts_a_definition(line), "{line:?}");
        }
        for line in [
            "class notes:",
            "class A students did well.",
            "def not needed",
            "function calls to make:",
            "function of time",
            "fn is short for function",
            "func: a word",
            "def",
            "class",
            "async",
            "definitely f(a)",
        ] {
            assert!(!starts_a_definition(line), "{line:?}");
        }
        let prose = "class notes:\n  f(a=1)";
        assert_eq!(hidden(prose), [] as [&str; 0]);
        let wrapped = "def f(\n    a,\n):\n    g(a=1)\nf(a=2)";
        assert_eq!(hidden(wrapped), ["def f(\n    a,\n):\n    g(a=1)\n"]);
    }

    /// A fence is a sample when a line that starts a statement defines or
    /// imports something: not a line of a string or of a call's arguments.
    #[test]
    fn only_a_statement_makes_a_fence_a_sample() {
        for calls in [
            "```tool_code\nsend(body=\"\"\"Hi,\nlet me know\nfrom Bob\n\"\"\")\n```",
            "```tool_code\ninstall(\n    package = \"curl\",\n)\n```",
            "```tool_code\nset(\n  interface=\"eth0\",\n  const=1,\n  struct={\"a\": [\n    1]},\n)\n```",
            "```tool_code\nf(a='it''s', b=\"(\")  # let (\nlet_me(a=1)\n```",
            "```python\nsend(body='''x\nimport y''')\n```",
        ] {
            assert_eq!(hidden(calls), [] as [&str; 0], "{calls:?}");
        }
        for sample in [
            "```python\nprint(\n  1,\n)\ndef f(): ...\n```",
            "```python\nx = \"\"\"a\nb\"\"\"\nimport os\n```",
            "```js\nx = 'unclosed\nconst a = 1\n```",
        ] {
            assert_eq!(hidden(sample).len(), 1, "{sample:?}");
        }
    }

    /// Fences open and close as CommonMark has it (`crate::markdown`), as
    /// the plan finder and the doc comment rules read them.
    #[test]
    fn fences_are_commonmark_fences() {
        // A line with an info string closes no fence: it is the block's.
        let info = "```\nimport x\n```python\nf(a=1)\n```\ng(b=2)";
        assert_eq!(hidden(info), ["import x\n```python\nf(a=1)\n"]);
        // A fence closes at one of its character at least as long.
        let long = "~~~~\nimport x\n~~~\n```\nf(a=1)\n~~~~~\ng(b=2)";
        assert_eq!(hidden(long), ["import x\n~~~\n```\nf(a=1)\n"]);
        // Backticks in an info string make inline code, not a fence; a run
        // of three backticks in prose opens a span as one of one does.
        let inline = "```import x``` and ```f(a=1)```\n```f(a=2)```";
        assert_eq!(hidden(inline), ["```import x```", "```f(a=1)```"]);
        let layout = Layout::new(inline);
        let alone = inline.find("f(a=2)").unwrap();
        assert_eq!(layout.line_of(alone), Some(alone..alone + 6));
    }
}
