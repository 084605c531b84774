//! The repairing parser: one recursive-descent pass over the bytes that writes
//! JSON as it reads. This file holds the parser's state, its output (copied
//! lazily from the input, in spans between edits) and the dispatch on a value.
//! The rest, one concern per file:
//!
//! | file | what |
//! |---|---|
//! | `top.rs` | where the value is: fences, prose, JSONP, what follows it |
//! | `containers.rs` | objects and arrays: commas, colons, missing values, brackets, truncation |
//! | `lex.rs` | bytes: whitespace and comments, and the lookahead that decides where a string ends |
//! | `string.rs` | strings in any quotes, escapes, control characters |
//! | `scalar.rs` | numbers, literals, bare words |
//! | `stringified.rs` | JSON sent as a string |
//! | `log.rs` | the record of repairs: the first few of each kind, and counts |
//! | `verbatim.rs` | the fast path: an array or object that is strict JSON, copied as it is |

use std::borrow::Cow;

use serde::de::IgnoredAny;

use super::lex::Ctx;
use super::log::{Log, Since};
use super::verbatim::Verbatim;
use super::{
    stringified, Repair, RepairError, RepairErrorKind, RepairKind, RepairOptions, Repaired,
};

/// A failure inside the parser: boxed, so that the `Result` of each step fits
/// in registers.
pub(super) type Failure = Box<RepairError>;

/// The result of one step of the parser.
pub(super) type Step<T = ()> = Result<T, Failure>;

/// What a value parse produced.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Parsed {
    /// A value was written.
    Value,
    /// The text ended before any value began (`{"a": ` at the end): nothing was
    /// written.
    Nothing,
}

pub(super) struct Parser<'a> {
    pub(super) text: &'a str,
    pub(super) src: &'a [u8],
    pub(super) pos: usize,
    /// Where the JSON ends: the text's end, or a closing markdown fence found
    /// while reading an unfinished string.
    pub(super) end: usize,
    /// The output so far: the input up to `copied`, with the repairs applied.
    /// Unchanged input is copied lazily, in spans, when an edit needs it.
    pub(super) out: String,
    /// How much of the input the output accounts for (copied or replaced).
    pub(super) copied: usize,
    pub(super) log: Log,
    pub(super) options: &'a RepairOptions,
    /// While guessing at the top level, repairs are recorded but not yet checked
    /// against the allowed set.
    pub(super) speculating: bool,
    /// The text stopped inside the value, which was closed there.
    pub(super) truncated: bool,
    pub(super) open_objects: usize,
    pub(super) open_arrays: usize,
    /// The open arrays and objects, innermost last: `[` or `{`.
    pub(super) stack: Brackets,
    /// Inside a markdown fence: a ```` ``` ```` in an unfinished string ends it.
    pub(super) in_fence: bool,
    /// Inside `name(...)`: a `)` where a token is expected ends the value.
    pub(super) jsonp: bool,
    /// Inside a MongoDB type's parentheses: a `)` ends a string.
    pub(super) in_wrapper: bool,
    /// The fast path for containers that are strict JSON already.
    pub(super) verbatim: Verbatim,
    /// Where the stray brace that closes a fenced block in braces
    /// (`{```json ... ```}`) is, if the text is one.
    pub(super) brace_around_fence: Option<usize>,
}

/// How many open brackets [`Brackets`] holds without allocating: the
/// nesting of almost every text.
const INLINE_BRACKETS: usize = 32;

/// The open arrays and objects, innermost last (`[` or `{`): a stack whose
/// first levels are held inline, so that reading a short text does not
/// allocate for it.
pub(super) struct Brackets {
    inline: [u8; INLINE_BRACKETS],
    /// The levels beyond the inline ones.
    deeper: Vec<u8>,
    len: usize,
}

impl Brackets {
    fn new() -> Brackets {
        Brackets {
            inline: [0; INLINE_BRACKETS],
            deeper: Vec::new(),
            len: 0,
        }
    }

    #[inline]
    pub(super) fn push(&mut self, bracket: u8) {
        match self.inline.get_mut(self.len) {
            Some(slot) => *slot = bracket,
            None => self.deeper.push(bracket),
        }
        self.len += 1;
    }

    #[inline]
    pub(super) fn pop(&mut self) {
        if self.len > INLINE_BRACKETS {
            self.deeper.pop();
        }
        self.len = self.len.saturating_sub(1);
    }

    #[inline]
    pub(super) fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub(super) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bracket at `level` (0: the outermost); `level` is below
    /// [`Brackets::len`].
    #[inline]
    pub(super) fn at(&self, level: usize) -> u8 {
        debug_assert!(level < self.len);
        match self.inline.get(level) {
            Some(&bracket) => bracket,
            None => self.deeper[level - INLINE_BRACKETS],
        }
    }

    /// The innermost open bracket.
    pub(super) fn last(&self) -> Option<u8> {
        self.len.checked_sub(1).map(|level| self.at(level))
    }

    fn clear(&mut self) {
        self.deeper.clear();
        self.len = 0;
    }
}

/// A point to return to when a guess fails.
pub(super) struct Mark {
    pos: usize,
    output: OutputMark,
    log: Since,
    truncated: bool,
}

/// A state of the output to return to.
#[derive(Clone, Copy)]
pub(super) struct OutputMark {
    out: usize,
    pub(super) copied: usize,
}

pub(super) fn run<'a>(text: &'a str, options: &RepairOptions) -> Result<Repaired<'a>, RepairError> {
    if let Some(unescaped) = stringified::unwrap_escaped(text, options) {
        return Ok(unescaped);
    }
    let mut parser = Parser {
        text,
        src: text.as_bytes(),
        pos: 0,
        end: text.len(),
        out: String::with_capacity(text.len() + 16),
        copied: 0,
        log: Log::new(),
        options,
        speculating: false,
        truncated: false,
        open_objects: 0,
        open_arrays: 0,
        stack: Brackets::new(),
        in_fence: false,
        jsonp: false,
        in_wrapper: false,
        verbatim: Verbatim::new(text.len()),
        brace_around_fence: None,
    };
    let top_string = parser.top().map_err(|e| *e)?;
    // Taken by reference rather than by moving the parser apart, which
    // would copy the log's counts.
    let mut out = std::mem::take(&mut parser.out);
    let log = &mut parser.log;
    if let Some(literal) = top_string {
        if let Some(unwrapped) = stringified::unwrap_literal(text, literal, options) {
            unwrapped.log_into(log);
            out = unwrapped.json.into_owned();
        }
    }
    let (repairs, omitted) = log.finish();
    // The output is JSON by construction. Debug builds check it (the property
    // and fuzz tests run them); release builds leave it to the caller's own
    // parse, which follows every repair, instead of parsing twice.
    debug_assert!(
        serde_json::from_str::<IgnoredAny>(&out).is_ok(),
        "repair produced invalid JSON from {text:?}: {out:?}"
    );
    debug_assert!(
        !repairs.is_empty() || out == text,
        "unrecorded change to {text:?}"
    );
    Ok(Repaired {
        json: Cow::Owned(out),
        repairs,
        omitted,
    })
}

impl<'a> Parser<'a> {
    /// Copies the input up to `to` into the output.
    #[inline]
    pub(super) fn flush(&mut self, to: usize) {
        if to > self.copied {
            self.out.push_str(&self.text[self.copied..to]);
            self.copied = to;
        }
    }

    /// Drops the input up to `to` from the output, after what was copied.
    #[inline]
    pub(super) fn skip_to(&mut self, to: usize) {
        self.copied = self.copied.max(to);
    }

    /// Writes `with` in place of the input `from..to` (`from` not yet copied).
    #[inline]
    pub(super) fn replace(&mut self, from: usize, to: usize, with: &str) {
        self.flush(from);
        self.out.push_str(with);
        self.skip_to(to);
    }

    /// Writes a `"` in place of the input `from..to` (`from` not yet copied).
    #[inline]
    pub(super) fn replace_with_quote(&mut self, from: usize, to: usize) {
        self.flush(from);
        self.out.push('"');
        self.skip_to(to);
    }

    /// Where the input position `at` (not yet copied) lands in the output.
    pub(super) fn out_at(&self, at: usize) -> usize {
        self.out.len() + (at - self.copied)
    }

    /// Inserts `c` at the input position `at`, which maps to `out_at`.
    pub(super) fn insert_at(&mut self, at: usize, out_at: usize, c: char) {
        if self.copied <= at {
            self.replace(at, at, c.encode_utf8(&mut [0; 4]));
        } else {
            self.out.insert(out_at, c);
        }
    }

    pub(super) fn output_mark(&self) -> OutputMark {
        OutputMark {
            out: self.out.len(),
            copied: self.copied,
        }
    }

    pub(super) fn reset_output(&mut self, mark: OutputMark) {
        self.out.truncate(mark.out);
        self.copied = mark.copied;
    }

    /// Records a repair, or refuses it in strict mode.
    pub(super) fn record(&mut self, kind: RepairKind, at: usize) -> Step {
        if !self.speculating && !self.options.allows(kind) {
            return Err(refused(kind, at));
        }
        self.log.record(Repair { kind, at });
        Ok(())
    }

    /// Records that the text stops inside the value (once).
    pub(super) fn truncated(&mut self) -> Step {
        if self.truncated {
            return Ok(());
        }
        self.truncated = true;
        let at = self.pos.min(self.end);
        self.record(RepairKind::Truncated, at)
    }

    pub(super) fn peek(&self) -> Option<u8> {
        if self.pos < self.end {
            Some(self.src[self.pos])
        } else {
            None
        }
    }

    /// The byte here, or `None` where the JSON region ends: the end of the
    /// text, a markdown fence, or the `)` of a JSONP wrapper.
    #[inline]
    pub(super) fn token(&self) -> Option<u8> {
        let b = *self.src[..self.end].get(self.pos)?;
        match b {
            b'`' if self.fence_at(self.pos) => None,
            b')' if self.jsonp => None,
            _ => Some(b),
        }
    }

    /// Passes whitespace and comments, then [`Parser::token`]; inside an
    /// array or object, also a fence line that the value goes on after.
    #[inline(always)]
    pub(super) fn next_token(&mut self) -> Step<Option<u8>> {
        self.whitespace()?;
        match self.token() {
            None if self.pos < self.end && !self.stack.is_empty() => self.fence_inside(),
            token => Ok(token),
        }
    }

    /// A fence line inside an array or object: removed when what follows it
    /// goes on with the value (`[```json\n{"a": 1}\n```]`), else the end of
    /// the value (the fence that closes the block it is in).
    #[cold]
    fn fence_inside(&mut self) -> Step<Option<u8>> {
        while self.fence_at(self.pos) {
            let mut after = self.pos + 3;
            while after < self.end
                && (self.src[after].is_ascii_alphanumeric()
                    || matches!(self.src[after], b'_' | b'-'))
            {
                after += 1;
            }
            let after = self.skip_blank_and_comments(after);
            let goes_on = after < self.end
                && (matches!(
                    self.src[after],
                    b'"' | b'\'' | b'{' | b'[' | b'}' | b']' | b',' | b':' | b'-' | b'0'..=b'9'
                ) || self.quote_at(after).is_some()
                    || self.literal_len(after) > 0);
            if !goes_on {
                return Ok(None);
            }
            self.record(RepairKind::MarkdownFence, self.pos)?;
            self.replace(self.pos, after, "");
            self.pos = after;
            self.whitespace()?;
        }
        Ok(self.token())
    }

    pub(super) fn mark(&self) -> Mark {
        Mark {
            pos: self.pos,
            output: self.output_mark(),
            log: self.log.since(),
            truncated: self.truncated,
        }
    }

    pub(super) fn reset(&mut self, mark: &Mark) {
        self.pos = mark.pos;
        self.reset_output(mark.output);
        self.log.reset(&mark.log);
        self.truncated = mark.truncated;
        self.open_objects = 0;
        self.open_arrays = 0;
        self.stack.clear();
        self.end = self.src.len();
        self.jsonp = false;
    }

    /// Checks the repairs recorded while speculating against the allowed set.
    pub(super) fn confirm(&mut self, mark: &Mark) -> Step {
        self.speculating = false;
        match self
            .log
            .first_since(&mark.log, mark.pos, |kind| !self.options.allows(kind))
        {
            Some(repair) => Err(refused(repair.kind, repair.at)),
            None => Ok(()),
        }
    }

    /// Reads one value of any kind at the current position, which is not
    /// whitespace. `depth` counts the arrays and objects around it.
    pub(super) fn value(&mut self, ctx: Ctx, depth: usize) -> Step<Parsed> {
        match self.token() {
            Some(b) => self.value_from(b, ctx, depth),
            None => Ok(Parsed::Nothing),
        }
    }

    /// [`Parser::value`] where the token here, `b`, was read already (by
    /// [`Parser::token`] or [`Parser::next_token`]).
    pub(super) fn value_from(&mut self, b: u8, ctx: Ctx, depth: usize) -> Step<Parsed> {
        match b {
            b'"' => self.string(ctx),
            b'{' | b'[' => {
                if let Some(end) = self.verbatim_container(depth) {
                    // Strict JSON already: copied as it is.
                    self.pos = end;
                    return Ok(Parsed::Value);
                }
                if b == b'{' {
                    self.object(depth + 1)
                } else {
                    self.array(depth + 1)
                }
            }
            b'-' | b'+' | b'.' | b'0'..=b'9' => self.number(ctx),
            b'/' if self.regex_end(self.pos).is_some() => self.regex(),
            _ if self.quote_at(self.pos).is_some() => self.string(ctx),
            b'a'..=b'z' | b'A'..=b'Z' | b'_' | b'$' => self.word(ctx),
            b':' | b',' | b'}' | b']' | b'(' | b')' | b';' | b'=' => {
                Err(self.unexpected("expected a value"))
            }
            _ if ctx == Ctx::Top => Err(self.unexpected("expected a value")),
            _ => self.unquoted_string(self.pos),
        }
    }

    pub(super) fn unexpected(&self, reason: &'static str) -> Failure {
        fail(RepairErrorKind::Unrepairable, self.pos, reason)
    }

    pub(super) fn enter(&mut self, depth: usize) -> Step {
        if depth > self.options.max_depth {
            return Err(fail(
                RepairErrorKind::TooDeep,
                self.pos,
                "more levels of arrays and objects than allowed",
            ));
        }
        Ok(())
    }
}

pub(super) fn refused(kind: RepairKind, at: usize) -> Failure {
    fail(RepairErrorKind::Refused(kind), at, "")
}

#[cold]
pub(super) fn fail(kind: RepairErrorKind, at: usize, reason: &'static str) -> Failure {
    Box::new(RepairError::new(kind, at, reason))
}

#[cfg(test)]
mod tests {
    use crate::repair::repair;

    /// Text nested `depth` arrays deep around damage that the open
    /// brackets decide: an object that runs into the array's next item, and
    /// a string cut off before the brackets that close it.
    fn nested(depth: usize) -> String {
        format!(
            "{}{{\"a\": 1 {{\"b\": \"x}}{}",
            "[".repeat(depth),
            "]".repeat(depth)
        )
    }

    #[test]
    fn brackets_beyond_those_held_inline_read_as_the_first_ones() {
        let text = nested(2);
        let shallow = repair(&text).unwrap();
        assert_eq!(shallow.json(), r#"[[{"a": 1 },{"b": "x"}]]"#);
        for depth in [31, 32, 33, 40, 100] {
            let text = nested(depth);
            let deep = repair(&text).unwrap();
            let expected = format!(
                "{}{}{}",
                "[".repeat(depth - 2),
                shallow.json(),
                "]".repeat(depth - 2)
            );
            assert_eq!(deep.json(), expected, "at depth {depth}");
            let kinds = |r: &crate::repair::Repaired<'_>| {
                r.repairs().iter().map(|r| r.kind).collect::<Vec<_>>()
            };
            assert_eq!(kinds(&deep), kinds(&shallow), "at depth {depth}");
        }
    }
}
