//! Python call syntax, and the Python literals in it:
//! `[get_weather(city="Lima"), sort('report.pdf')]`.

use serde_json::{Map, Value};

use super::layout::Layout;
use super::{CallFormat, ReadError, ToolCall};
use crate::markdown::ListMarker;

const FORMAT: CallFormat = CallFormat::Pythonic;
/// Deeper literals than this are refused rather than risk the stack.
const MAX_DEPTH: usize = 128;

/// Every call (or `[...]` list of calls) in `text` that stands where a
/// call may (see [`crate::reader`]'s "Where a call stands in text"); an
/// error at the first one that does not parse, or when there is none.
pub(super) fn read(
    text: &str,
    layout: &Layout,
    parameters: &dyn Fn(&str) -> Option<Vec<String>>,
) -> Result<Vec<ToolCall>, ReadError> {
    let mut calls = Vec::new();
    let mut from = 0;
    while let Some(candidate) = next_candidate(text, from) {
        from = candidate.after_paren;
        if layout.hidden(candidate.start) {
            continue;
        }
        let line = layout.line_of(candidate.start);
        let (line_start, line_end) = match &line {
            Some(span) => (span.start, span.end),
            None => (0, text.len()),
        };
        if !opens_a_call(&text[line_start..candidate.start]) {
            continue;
        }
        // A call whose brackets close stands only where it ends its line or
        // sentence, and a signature there is a mention. One whose brackets
        // never close (cut, or broken) is a call the model tried to write:
        // the parser says where it broke.
        if let Some(end) = extent(text, candidate.start) {
            from = end;
            let list = text.as_bytes()[candidate.start] == b'[';
            if !closes_a_call(&text[end..line_end.max(end)])
                || (!list && is_signature(&text[candidate.after_paren..end - 1]))
            {
                continue;
            }
        }
        let mut parser = Parser {
            text,
            at: candidate.start,
            depth: 0,
        };
        calls.extend(parser.calls(parameters)?);
        from = from.max(parser.at);
    }
    if calls.is_empty() {
        return Err(ReadError::no_call(
            FORMAT,
            "calls written as `[tool_name(arg=value), ...]`",
            "no call in the text",
        ));
    }
    Ok(calls)
}

/// A place where a call may start: `name(` or `[name(`.
struct Candidate {
    /// The `[` or the name's first byte.
    start: usize,
    /// Just past the name's `(`.
    after_paren: usize,
}

/// The next `name(` (or `[name(`, a list of calls) at or after byte `from`.
/// A name is a word of letters, digits, `_` and `.` that starts with a
/// letter or `_`, written right before its `(`.
fn next_candidate(text: &str, from: usize) -> Option<Candidate> {
    let bytes = text.as_bytes();
    let mut at = from;
    while let Some(paren) = memchr::memchr(b'(', &bytes[at..]).map(|i| at + i) {
        at = paren + 1;
        let head = &text[from..paren];
        let word = head
            .char_indices()
            .rev()
            .take_while(|&(_, c)| c.is_alphanumeric() || c == '_' || c == '.')
            .last()
            .map_or(paren, |(i, _)| from + i);
        let name = &text[word..paren];
        // A word cut at `from` is the rest of a word read before.
        if name.is_empty()
            || (word == from && from > 0 && is_word_byte(bytes[from - 1]))
            || !name.starts_with(|c: char| c.is_alphabetic() || c == '_')
        {
            continue;
        }
        let before = text[..word].trim_end();
        let start = match before.strip_suffix('[') {
            Some(list) => list.len(),
            None => word,
        };
        return Some(Candidate {
            start,
            after_paren: paren + 1,
        });
    }
    None
}

fn is_word_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'.' || byte >= 0x80
}

/// Where the call (or list of calls) starting at `start` ends: just past
/// its closing bracket, strings skipped. `None` when the text ends first,
/// or a one-line string runs past its line.
fn extent(text: &str, start: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut i = start;
    while i < bytes.len() {
        match bytes[i] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            quote @ (b'\'' | b'"') => {
                let triple = bytes[i..].starts_with(&[quote; 3]);
                let width = if triple { 3 } else { 1 };
                i += width;
                loop {
                    match bytes.get(i) {
                        None => return None,
                        Some(b'\\') => i += 2,
                        Some(b'\n') if !triple => return None,
                        Some(&b)
                            if b == quote && (!triple || bytes[i..].starts_with(&[quote; 3])) =>
                        {
                            i += width;
                            break;
                        }
                        Some(_) => i += 1,
                    }
                }
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// How far back, past the blanks and tags right before a call, its line is
/// read for the words that open it ("I'll call", "Action:", `-`): more
/// than any of them takes.
const LOOK_BACK: usize = 160;

/// Whether a call may start after `before` (the text from its line's start
/// or the text's): at the start of a line (after Llama's
/// `<|python_tag|>` or an opening tag such as `<tool_code>`), at the start of a sentence (after `.`, `!`, `?`, `:`
/// or `;` and a space; bold markers aside: `**Action:**`), or after the
/// model says it calls ("I'll call", "Let me use", "Calling"). Not in a
/// list item (`- f()`, `1. f()`), which is prose, nor after any other word.
///
/// The blanks and opening tags right before the call are read back however
/// many there are (a model may indent a call by any amount, or write any
/// number of special tokens before it): none of them is a `(`, so no two
/// candidates read the same ones, and the text is read once. Past them,
/// the words are read within [`LOOK_BACK`] bytes.
fn opens_a_call(before: &str) -> bool {
    let blank = |c: char| c.is_whitespace() && c != '\n';
    let head = before.trim_end_matches(blank);
    let mut rest = head;
    while let Some(tag) = opening_tag_before(rest) {
        rest = rest[..rest.len() - tag].trim_end_matches(blank);
    }
    if rest.is_empty() || rest.ends_with('\n') {
        return true;
    }
    if head.len() == before.len() {
        // A word or a sign right before the call: `x=f(`, `print(f(`.
        return false;
    }
    let mut cut = head.len().saturating_sub(LOOK_BACK);
    while !head.is_char_boundary(cut) {
        cut += 1;
    }
    let line = match head[cut..].rfind('\n') {
        Some(i) => &head[cut + i + 1..],
        None => &head[cut..],
    };
    let line = without_tags(line.trim_start(), |tag| !tag.starts_with("</"));
    if is_list_marker(line) {
        return false;
    }
    let spoken = line.trim_end_matches(['*', '_']);
    spoken.ends_with(['.', '!', '?', ':', ';']) || announces_a_call(spoken)
}

/// The length of the opening tag `text` ends with (`<tool_code>`,
/// `<|python_tag|>`: a short word in angle brackets, as [`without_tags`]
/// reads them), if it ends with one.
fn opening_tag_before(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let inner = bytes
        .len()
        .checked_sub(1)
        .filter(|&end| bytes[end] == b'>')?;
    let word = bytes[..inner]
        .iter()
        .rev()
        .take(33)
        .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'|' | b'/' | b'-'))
        .count();
    let open = inner.checked_sub(word + 1)?;
    let tag_ok = (1..=32).contains(&word) && bytes[open] == b'<' && bytes[open + 1] != b'/';
    tag_ok.then_some(word + 2)
}

/// `text` without the markup tags it starts with, and the blanks after
/// each: a model's or a server's special tokens (`<|python_tag|>`,
/// `<|eom_id|>`) and tags (`<tool_code>`), each a short word in angle
/// brackets, that `keep` accepts.
fn without_tags(text: &str, keep: impl Fn(&str) -> bool) -> &str {
    let mut rest = text;
    while rest.starts_with('<') {
        let word = rest
            .bytes()
            .skip(1)
            .take(32)
            .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'|' | b'/' | b'-'))
            .count();
        let tag = &rest[..1 + word];
        match rest[1 + word..].strip_prefix('>') {
            Some(after) if word > 0 && keep(tag) => {
                rest = after.trim_start_matches([' ', '\t', '\r']);
            }
            _ => break,
        }
    }
    rest
}

/// `-`, `*`, `+`, `1.`, `1)` and nothing else: a list item's marker.
fn is_list_marker(line: &str) -> bool {
    ListMarker::of(line).is_some_and(|marker| marker.len == line.len())
}

/// Words that may open a sentence before the model says it calls.
const OPENERS: [&str; 10] = [
    "now", "first", "next", "then", "ok", "okay", "sure", "so", "alright", "and",
];
/// Who calls, in the first person.
const SUBJECTS: [&[&str]; 11] = [
    &["i'll"],
    &["i", "will"],
    &["i'm", "going", "to"],
    &["i", "am", "going", "to"],
    &["let", "me"],
    &["let's"],
    &["i", "shall"],
    &["we'll"],
    &["we", "will"],
    &["i'm"],
    &["i", "am"],
];
/// The verbs of calling.
const VERBS: [&str; 6] = ["call", "use", "invoke", "run", "execute", "try"];
const VERBS_ING: [&str; 6] = [
    "calling",
    "using",
    "invoking",
    "running",
    "executing",
    "trying",
];

/// Whether the sentence that ends `line` is the model saying it calls a
/// tool now: an opener or two ("Now", "OK,"), a first-person subject
/// ("I'll", "Let me", "I'm"), a verb of calling ("call", "use", "calling"),
/// and at most "the tool" or "the function" after it. "Calling" alone
/// opens a sentence too. "You can use" and "Try calling" do not.
fn announces_a_call(line: &str) -> bool {
    let sentence = match line.rfind(['.', '!', '?', ':', ';']) {
        Some(i) => &line[i + 1..],
        None => line,
    };
    let sentence = sentence
        .trim_start_matches(|c: char| !c.is_alphanumeric())
        .to_lowercase()
        .replace('’', "'");
    let mut words: Vec<&str> = sentence
        .split_whitespace()
        .map(|w| w.trim_end_matches(','))
        .collect();
    while words.first().is_some_and(|w| OPENERS.contains(w)) {
        words.remove(0);
    }
    while matches!(words.last(), Some(&"tool" | &"function")) {
        words.pop();
        if words.last() == Some(&"the") {
            words.pop();
        }
    }
    let Some((verb, subject)) = words.split_last() else {
        return false;
    };
    let subject = subject.strip_suffix(&["now"]).unwrap_or(subject);
    if subject.is_empty() {
        return VERBS_ING.contains(verb);
    }
    let progressive = matches!(subject, ["i'm"] | ["i", "am"]);
    SUBJECTS.contains(&subject)
        && if progressive {
            VERBS_ING.contains(verb)
        } else {
            VERBS.contains(verb)
        }
}

/// Words that may end a sentence after a call the model says it makes:
/// "I'll call f(x=1) now."
const AFTER: [&str; 6] = ["now", "instead", "first", "again", "next", "for you"];

/// Whether a call may end before `after` (the rest of its line): at the
/// end of the line (Llama's `<|eom_id|>`, a closing tag and a closing fence
/// aside), at the
/// end of a sentence (`.`, `!` or `;`, then a space), or with one of a few
/// words before that ("now", "instead"). Not before more prose: "f() later".
///
/// The blanks, tags and run of `.`, `!`, `;` right after a call are read
/// however long they are: they hold no `(`, and the next candidate starts
/// after them, so no two calls read the same ones. The words after them
/// are read within a few bytes.
fn closes_a_call(after: &str) -> bool {
    // Special tokens a server left in (`<|eom_id|>`) and closing tags
    // (`</tool_code>`).
    let rest = without_tags(after.trim_start_matches([' ', '\t', '\r']), |tag| {
        tag.starts_with("<|") || tag.starts_with("</")
    });
    if rest.is_empty() || rest.starts_with('\n') || rest.starts_with("```") {
        return true;
    }
    // `.`, `!` or `;` (or `...`), then a blank or the end.
    let ends_a_sentence = |rest: &str| {
        let next = rest.trim_start_matches(['.', '!', ';']);
        next.len() < rest.len() && (next.is_empty() || next.starts_with(char::is_whitespace))
    };
    if ends_a_sentence(rest) {
        return true;
    }
    AFTER.iter().any(|word| {
        rest.get(..word.len())
            .is_some_and(|w| w.eq_ignore_ascii_case(word))
            && {
                let next = &rest[word.len()..];
                next.is_empty() || next.starts_with(['\n', '\r']) || ends_a_sentence(next)
            }
    })
}

/// Whether an argument list (the text between a name's parentheses) is a
/// signature rather than a call's arguments: a parameter with a type
/// (`city: str`; a call never has a `:` outside brackets), or only bare
/// names (`city`, `*args`, `...`). A call passes values: in prose,
/// `get_weather(city)` names the tool.
fn is_signature(arguments: &str) -> bool {
    let bytes = arguments.as_bytes();
    let mut depth = 0usize;
    let mut parts = Vec::new();
    let mut from = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            quote @ (b'\'' | b'"') => {
                // Skip the string: a value, unless a type's annotation
                // holds it, which the `:` before it has settled.
                i += 1;
                while i < bytes.len() && bytes[i] != quote {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
            }
            b':' if depth == 0 => return true,
            b',' if depth == 0 => {
                parts.push(&arguments[from..i]);
                from = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    parts.push(&arguments[from..]);
    let bare = |part: &str| {
        let name = part.trim().trim_start_matches('*');
        matches!(part.trim(), "..." | "…" | "/" | "*")
            || (name.starts_with(|c: char| c.is_alphabetic() || c == '_')
                && name.chars().all(|c| c.is_alphanumeric() || c == '_')
                && !matches!(name, "True" | "False" | "None" | "true" | "false" | "null"))
    };
    !arguments.trim().is_empty() && parts.into_iter().all(bare)
}

struct Parser<'t> {
    text: &'t str,
    at: usize,
    depth: usize,
}

impl<'t> Parser<'t> {
    fn error(&self, expected: &str) -> ReadError {
        let found = match self.text[self.at..].chars().next() {
            None => "the end of the text".to_owned(),
            Some(_) => {
                let excerpt: String = self.text[self.at..].chars().take(20).collect();
                format!("`{excerpt}`")
            }
        };
        ReadError::new(FORMAT, format!("byte {}", self.at), expected, found)
    }

    fn blank(&mut self) {
        let rest = &self.text[self.at..];
        self.at += rest.len() - rest.trim_start().len();
    }

    fn eat(&mut self, token: &str) -> bool {
        self.blank();
        if self.text[self.at..].starts_with(token) {
            self.at += token.len();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, token: &str, expected: &str) -> Result<(), ReadError> {
        if self.eat(token) {
            Ok(())
        } else {
            Err(self.error(expected))
        }
    }

    fn peek(&mut self) -> Option<char> {
        self.blank();
        self.text[self.at..].chars().next()
    }

    fn calls(
        &mut self,
        parameters: &dyn Fn(&str) -> Option<Vec<String>>,
    ) -> Result<Vec<ToolCall>, ReadError> {
        if !self.eat("[") {
            return Ok(vec![self.call(parameters)?]);
        }
        let mut calls = Vec::new();
        loop {
            if self.eat("]") {
                return Ok(calls);
            }
            calls.push(self.call(parameters)?);
            if !self.eat(",") {
                self.expect("]", "`,` or `]` after a call")?;
                return Ok(calls);
            }
        }
    }

    fn identifier(&mut self) -> Option<&'t str> {
        self.blank();
        let text = self.text;
        let rest = &text[self.at..];
        let len = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
            .unwrap_or(rest.len());
        if len == 0 || !rest.starts_with(|c: char| c.is_alphabetic() || c == '_') {
            return None;
        }
        self.at += len;
        Some(&rest[..len])
    }

    fn call(
        &mut self,
        parameters: &dyn Fn(&str) -> Option<Vec<String>>,
    ) -> Result<ToolCall, ReadError> {
        let name = self
            .identifier()
            .ok_or_else(|| self.error("a tool name"))?
            .to_owned();
        self.expect("(", "`(` after the tool name")?;
        let mut arguments = Map::new();
        let mut positional = Vec::new();
        loop {
            if self.eat(")") {
                break;
            }
            let before = self.at;
            let keyword = match self.identifier() {
                Some(word) if self.eat("=") => Some(word.to_owned()),
                _ => {
                    self.at = before;
                    None
                }
            };
            let value_at = self.at;
            let value = self.literal()?;
            match keyword {
                Some(key) => {
                    if arguments.insert(key.clone(), value).is_some() {
                        return Err(ReadError::new(
                            FORMAT,
                            format!("byte {value_at}"),
                            format!("`{key}` given once"),
                            format!("`{key}` given twice"),
                        ));
                    }
                }
                None if arguments.is_empty() => positional.push((value_at, value)),
                None => {
                    return Err(ReadError::new(
                        FORMAT,
                        format!("byte {value_at}"),
                        "a keyword argument (positional ones come first)",
                        "a positional argument",
                    ));
                }
            }
            if !self.eat(",") {
                self.expect(")", "`,` or `)` in the argument list")?;
                break;
            }
        }
        if !positional.is_empty() {
            let Some(names) = parameters(&name) else {
                let (at, _) = positional[0];
                return Err(ReadError::new(
                    FORMAT,
                    format!("byte {at}"),
                    format!("keyword arguments (`{name}(name=value)`): positional ones need the tool's parameter names"),
                    "a positional argument",
                ));
            };
            let count = positional.len();
            for (index, (at, value)) in positional.into_iter().enumerate() {
                let Some(key) = names.get(index) else {
                    return Err(ReadError::new(
                        FORMAT,
                        format!("byte {at}"),
                        format!(
                            "at most {} positional argument(s) for `{name}`",
                            names.len()
                        ),
                        format!("{count}"),
                    ));
                };
                if arguments.contains_key(key) {
                    return Err(ReadError::new(
                        FORMAT,
                        format!("byte {at}"),
                        format!("`{key}` given once"),
                        format!("`{key}` by position and by keyword"),
                    ));
                }
                arguments.insert(key.clone(), value);
            }
            // Keep the declaration order.
            let mut ordered = Map::new();
            for key in &names {
                if let Some(value) = arguments.remove(key) {
                    ordered.insert(key.clone(), value);
                }
            }
            ordered.extend(arguments);
            arguments = ordered;
        }
        Ok(ToolCall {
            id: None,
            name,
            arguments: Value::Object(arguments).to_string(),
        })
    }

    fn literal(&mut self) -> Result<Value, ReadError> {
        if self.depth >= MAX_DEPTH {
            return Err(self.error(&format!("a value nested at most {MAX_DEPTH} deep")));
        }
        self.depth += 1;
        let value = self.literal_inner();
        self.depth -= 1;
        value
    }

    fn literal_inner(&mut self) -> Result<Value, ReadError> {
        match self.peek() {
            Some('\'' | '"') => self.string().map(Value::String),
            Some('[') => self.sequence('[', ']'),
            Some('(') => self.sequence('(', ')'),
            Some('{') => self.dict(),
            Some(c) if c.is_ascii_digit() || c == '-' || c == '+' || c == '.' => self.number(),
            Some(_) => {
                let before = self.at;
                match self.identifier() {
                    Some("True" | "true") => Ok(Value::Bool(true)),
                    Some("False" | "false") => Ok(Value::Bool(false)),
                    Some("None" | "null") => Ok(Value::Null),
                    _ => {
                        self.at = before;
                        Err(self.error("a value: a string, a number, `True`, `False`, `None`, a list or a dict"))
                    }
                }
            }
            None => Err(self.error("a value")),
        }
    }

    fn sequence(&mut self, open: char, close: char) -> Result<Value, ReadError> {
        self.at += open.len_utf8();
        let close = close.to_string();
        let mut items = Vec::new();
        loop {
            if self.eat(&close) {
                return Ok(Value::Array(items));
            }
            items.push(self.literal()?);
            if !self.eat(",") {
                self.expect(&close, &format!("`,` or `{close}`"))?;
                return Ok(Value::Array(items));
            }
        }
    }

    fn dict(&mut self) -> Result<Value, ReadError> {
        self.at += 1;
        let mut object = Map::new();
        loop {
            if self.eat("}") {
                return Ok(Value::Object(object));
            }
            let key_at = self.at;
            let key = match self.peek() {
                Some('\'' | '"') => self.string()?,
                _ => return Err(self.error("a string key")),
            };
            self.expect(":", "`:` after a dict key")?;
            let value = self.literal()?;
            // As a keyword given twice: which one is meant is not ours to pick.
            if object.contains_key(&key) {
                return Err(ReadError::new(
                    FORMAT,
                    format!("byte {key_at}"),
                    "each key given once",
                    "a key given twice",
                ));
            }
            object.insert(key, value);
            if !self.eat(",") {
                self.expect("}", "`,` or `}`")?;
                return Ok(Value::Object(object));
            }
        }
    }

    fn number(&mut self) -> Result<Value, ReadError> {
        let start = self.at;
        let rest = &self.text[start..];
        let len = rest
            .char_indices()
            .find(|&(i, c)| {
                !(c.is_ascii_digit()
                    || c == '.'
                    || c == '_'
                    || c == 'e'
                    || c == 'E'
                    || ((c == '-' || c == '+')
                        && (i == 0 || matches!(rest.as_bytes()[i - 1], b'e' | b'E'))))
            })
            .map_or(rest.len(), |(i, _)| i);
        let word: String = rest[..len].chars().filter(|c| *c != '_').collect();
        let word = word.strip_prefix('+').unwrap_or(&word);
        let parsed = if let Ok(n) = word.parse::<i64>() {
            Some(Value::from(n))
        } else if let Ok(n) = word.parse::<u64>() {
            Some(Value::from(n))
        } else {
            word.parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
                .map(Value::Number)
        };
        match parsed {
            Some(value) => {
                self.at += len;
                Ok(value)
            }
            None => Err(self.error("a number")),
        }
    }

    fn string(&mut self) -> Result<String, ReadError> {
        let start = self.at;
        let rest = &self.text[start..];
        let quote = if rest.starts_with("\"\"\"") {
            "\"\"\""
        } else if rest.starts_with("'''") {
            "'''"
        } else if rest.starts_with('"') {
            "\""
        } else {
            "'"
        };
        let mut out = String::new();
        let mut chars = rest[quote.len()..].char_indices();
        while let Some((i, c)) = chars.next() {
            if rest[quote.len() + i..].starts_with(quote) {
                self.at = start + quote.len() + i + quote.len();
                return Ok(out);
            }
            match c {
                '\\' => match chars.next() {
                    Some((_, 'n')) => out.push('\n'),
                    Some((_, 't')) => out.push('\t'),
                    Some((_, 'r')) => out.push('\r'),
                    Some((_, '0')) => out.push('\0'),
                    Some((j, 'u')) => {
                        let hex = rest.get(quote.len() + j + 1..quote.len() + j + 5);
                        match hex
                            .and_then(|h| u32::from_str_radix(h, 16).ok())
                            .and_then(char::from_u32)
                        {
                            Some(c) => {
                                out.push(c);
                                for _ in 0..4 {
                                    chars.next();
                                }
                            }
                            None => out.push_str("\\u"),
                        }
                    }
                    Some((_, other)) => out.push(other),
                    None => break,
                },
                '\n' if quote.len() == 1 => {
                    self.at = start + quote.len() + i;
                    return Err(self.error("the string's closing quote before the end of the line"));
                }
                c => out.push(c),
            }
        }
        self.at = start;
        Err(self.error(&format!("a string closed by {quote}")))
    }
}

#[cfg(test)]
mod tests {
    use crate::reader::{read_calls, CallFormat};

    #[test]
    fn pythonic_literals() {
        let calls = read_calls(
            CallFormat::Pythonic,
            r#"[f(a='it\'s', b=[1, 2.5, -3], c={'k': (True, None)}, d="""x"y""", e=1_000)]"#,
        )
        .unwrap();
        assert_eq!(
            calls[0].arguments,
            r#"{"a":"it's","b":[1,2.5,-3],"c":{"k":[true,null]},"d":"x\"y","e":1000}"#
        );
    }

    #[test]
    fn a_call_stands_where_the_model_calls() {
        use super::{announces_a_call, closes_a_call, is_signature, opens_a_call};

        for before in [
            "",
            "  ",
            "<|python_tag|>",
            "Let me check.\n",
            "I'll check. ",
            "Action: ",
            "**Action:** ",
            "I'll call ",
            "Now, let me use the tool ",
            "Calling ",
            "OK, I'm calling ",
            "<tool_code>",
            "<|python_tag|> ",
            // Blanks and tokens before a call, however many.
            &" ".repeat(400),
            &"\t".repeat(400),
            &"<|python_tag|>".repeat(40),
            &format!("Let me check.\n{}<tool_code> ", " ".repeat(300)),
            &format!("I'll call{}", " ".repeat(300)),
            &format!("Action:{}", " ".repeat(300)),
        ] {
            assert!(opens_a_call(before), "{before:?}");
        }
        for before in [
            "Try calling ",
            "You can use ",
            "The function ",
            "x = ",
            "- ",
            "1. ",
            ">>> ",
            "print(",
            "I'll call",
            "If you want, I can call ",
            "</tool_code>",
            "<b>Note</b> ",
            &format!("{}- ", " ".repeat(300)),
            &format!("{}1. ", " ".repeat(300)),
            &format!("Some text{}", "<a>".repeat(100)),
            &format!("Some text{} ", "<a>".repeat(100)),
            &format!("Try calling{}", " ".repeat(300)),
            &format!("{}</tool_code> ", " ".repeat(300)),
        ] {
            assert!(!opens_a_call(before), "{before:?}");
        }
        assert!(announces_a_call("Done. I will invoke the function"));
        assert!(!announces_a_call("Let me know if you call"));
        for after in [
            "",
            "\nmore",
            ".",
            ". Then",
            "; ",
            " now.",
            " instead",
            "...",
            "<|eom_id|>",
            "</tool_code>",
            "```",
        ] {
            assert!(closes_a_call(after), "{after:?}");
        }
        for after in [
            " later",
            ", then",
            ": returns",
            ".5",
            " -> str",
            "<|eom_id",
            " now returns",
            "<b> bold",
        ] {
            assert!(!closes_a_call(after), "{after:?}");
        }
        for signature in [
            "city",
            "to, subject, body",
            "city: str, unit: str = 'C'",
            "*args, **kwargs",
            "...",
        ] {
            assert!(is_signature(signature), "{signature:?}");
        }
        for arguments in [
            "",
            "'Lima'",
            "city=\"Lima\"",
            "city=Lima",
            "True",
            "[1]",
            "x, 2",
        ] {
            assert!(!is_signature(arguments), "{arguments:?}");
        }
    }

    #[test]
    fn every_call_that_stands_is_read_and_mentions_are_not() {
        let text =
            "`f(a=0)` is how.\nf(a=1)\nThen g(b=2) helps. I'll call g(b=3).\n[h(c=4), h(c=5)]";
        let calls = read_calls(CallFormat::Pythonic, text).unwrap();
        let arguments: Vec<&str> = calls.iter().map(|c| c.arguments.as_str()).collect();
        assert_eq!(
            arguments,
            [r#"{"a":1}"#, r#"{"b":3}"#, r#"{"c":4}"#, r#"{"c":5}"#]
        );
    }

    #[test]
    fn pythonic_errors_say_where() {
        let error = read_calls(CallFormat::Pythonic, "[f(a=1, b=)]").unwrap_err();
        assert_eq!(error.at, "byte 10");
        assert!(error.expected.starts_with("a value"), "{error}");
        let error = read_calls(CallFormat::Pythonic, "[f('x')]").unwrap_err();
        assert!(
            error
                .expected
                .contains("positional ones need the tool's parameter names"),
            "{error}"
        );
        let deep = format!("f(a={}{})", "[".repeat(10_000), "]".repeat(10_000));
        assert!(read_calls(CallFormat::Pythonic, &deep).is_err());
    }
}
