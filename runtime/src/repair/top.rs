//! The top level: where the value is (the whole text, a markdown fence, the
//! first readable `{` or `[` after prose, a JSONP wrapper) and what follows it.

use super::lex::{find, is_ws, Ctx};
use super::parse::{fail, Failure, Parsed, Parser, Step};
use super::{RepairErrorKind, RepairKind};

/// How many `{`/`[` candidates the top level tries before giving up. Each try
/// starts after the point where the previous one failed, so the total work
/// stays linear.
const MAX_CANDIDATES: usize = 8;

/// What trying the text as one value found.
enum Direct {
    /// The value was read; the range of a string literal, if it is one.
    Done(Option<(usize, usize)>),
    /// Not a value here.
    NotHere,
    /// A container starts here but cannot be read.
    Failed(Failure),
}

impl Parser<'_> {
    /// Reads the text: finds the value, reads it, and deals with what follows.
    /// Returns the input range of the value when it is a string literal read
    /// without repairs (a candidate for [`RepairKind::StringifiedJson`]).
    pub(super) fn top(&mut self) -> Step<Option<(usize, usize)>> {
        let first = self.skip_blank(0);
        if first >= self.src.len() {
            return Err(fail(RepairErrorKind::Empty, 0, "empty"));
        }
        let mut region_start = first;
        let mut from = first;
        let mut error = None;
        // `{```json ... ```}`: a fenced block in a stray brace (an object
        // holds no bare value); the value is the fenced one.
        self.brace_around_fence = self.brace_around_fence(first);
        let direct = match self.brace_around_fence {
            Some(_) => Direct::NotHere,
            // The whole text is one value, perhaps with comments around it.
            None => self.direct(0)?,
        };
        match direct {
            Direct::Done(literal) => return Ok(literal),
            Direct::Failed(e) => {
                if self.reads_as_json(first, e.at()) {
                    return Err(e);
                }
                from = e.at().max(first + 1);
                error = Some(e);
            }
            Direct::NotHere => {
                // A markdown fence: the value is inside.
                if let Some((fence, content)) = find_fence(self.src) {
                    if fence > first {
                        let kind = match self.brace_around_fence {
                            Some(_) => RepairKind::StrayBracket,
                            None => RepairKind::SurroundingProse,
                        };
                        self.record(kind, first)?;
                    }
                    self.record(RepairKind::MarkdownFence, fence)?;
                    self.in_fence = true;
                    region_start = self.skip_blank(content);
                    from = content;
                    match self.direct(content)? {
                        Direct::Done(literal) => return Ok(literal),
                        Direct::Failed(e) => {
                            if self.reads_as_json(region_start, e.at()) {
                                return Err(e);
                            }
                            from = e.at().max(region_start + 1);
                            error = Some(e);
                        }
                        Direct::NotHere => {}
                    }
                }
            }
        }
        // The first `{` or `[` that starts a readable value.
        for _ in 0..MAX_CANDIDATES {
            let Some(start) = find_open(self.src, from) else {
                break;
            };
            if start > region_start && self.src[start - 1] == b'"' {
                // `" "{"`: a stray quote, and a string whose text starts
                // with the bracket; no value starts there.
                return Err(fail(
                    RepairErrorKind::Unrepairable,
                    start - 1,
                    "a `{` or `[` right after a quote, inside a string",
                ));
            }
            let mark = self.mark();
            match self.candidate(region_start, start) {
                Ok(()) => return Ok(None),
                Err(e) if e.kind() == RepairErrorKind::Unrepairable => {
                    self.reset(&mark);
                    if self.reads_as_json(start, e.at()) {
                        // Not prose with braces in it: JSON this cannot read.
                        return Err(e);
                    }
                    from = e.at().max(start + 1);
                    error.get_or_insert(e);
                }
                Err(e) => return Err(e),
            }
        }
        Err(error.unwrap_or_else(|| fail(RepairErrorKind::NoJson, first, "no JSON value")))
    }

    /// Tries the text from `from` as one value with only whitespace and comments
    /// around it. A scalar must be all there is (up to a closing fence): `1.` in
    /// "1. Call the tool" is prose.
    fn direct(&mut self, from: usize) -> Step<Direct> {
        let start = self.skip_blank_and_comments(from);
        if start >= self.src.len() {
            return Ok(Direct::NotHere);
        }
        let b = self.src[start];
        let container = b == b'{' || b == b'[';
        let scalar = self.quote_at(start).is_some()
            || matches!(b, b'-' | b'+' | b'.' | b'0'..=b'9')
            || self.literal_len(start) > 0
            || (b == b'/' && self.regex_end(start).is_some())
            || (b.is_ascii_alphabetic()
                && self.wrapper_paren(start, self.word_end(start)).is_some());
        if !container && !scalar {
            return Ok(Direct::NotHere);
        }
        let keep_blank = from == 0 && !self.in_fence;
        let mark = self.mark();
        self.speculating = !container;
        self.pos = from;
        let result = self.leading(keep_blank).and_then(|()| {
            let at = self.pos;
            let value_at = self.out_at(at);
            let repairs = self.log.total();
            let parsed = self.value(Ctx::Top, 0)?;
            let literal = (parsed == Parsed::Value
                && self.quote_at(at).is_some()
                && self.log.total() == repairs)
                .then_some((at, self.pos));
            Ok((parsed, literal, value_at))
        });
        if container {
            return match result {
                Ok((_, literal, value_at)) => {
                    self.after_value(keep_blank, value_at)?;
                    Ok(Direct::Done(literal))
                }
                Err(e) if e.kind() == RepairErrorKind::Unrepairable => {
                    self.reset(&mark);
                    Ok(Direct::Failed(e))
                }
                Err(e) => Err(e),
            };
        }
        if let Ok((Parsed::Value, literal, value_at)) = result {
            let after = self.skip_blank_and_comments(self.pos);
            if after >= self.src.len() || (self.in_fence && self.fence_at(after)) {
                self.confirm(&mark)?;
                self.after_value(keep_blank, value_at)?;
                return Ok(Direct::Done(literal));
            }
            if self.another_value_follows(self.pos, after) {
                // `1, 2`, `"a"\n"b"`: scalars one per line or after commas.
                self.confirm(&mark)?;
                self.after_value(keep_blank, value_at)?;
                return Ok(Direct::Done(None));
            }
        }
        self.speculating = false;
        self.reset(&mark);
        Ok(Direct::NotHere)
    }

    /// Whitespace and comments before the value: kept when nothing else
    /// around the value is removed, else dropped (comments recorded either way).
    fn leading(&mut self, keep_blank: bool) -> Step {
        if keep_blank {
            self.whitespace()
        } else {
            self.skip_to(self.pos);
            self.skip_quietly()
        }
    }

    /// Reads the value starting at the `{` or `[` at `start`, with prose (or a
    /// JSONP name) from `region_start`.
    fn candidate(&mut self, region_start: usize, start: usize) -> Step {
        match jsonp_name(self.src, region_start, start) {
            Some(name) => {
                self.record(RepairKind::Jsonp, name)?;
                self.jsonp = true;
            }
            None if region_start < start => {
                let quotes = unescaped_quotes(&self.src[region_start..start]);
                let prose = &self.text[region_start..start];
                // (The test by its ends first spares a parse, and the
                // error it would build, for prose.)
                let prose_value = prose.trim();
                let a_value = super::may_be_json(prose_value)
                    && serde_json::from_str::<serde::de::IgnoredAny>(prose_value).is_ok();
                if a_value {
                    // `"o" [1]`: a value before the value, which dropping would lose.
                    return Err(fail(
                        RepairErrorKind::Unrepairable,
                        start,
                        "a second JSON value follows the first",
                    ));
                }
                if quotes % 2 == 1 {
                    // `"r{" and prose`: the `{` is inside a string.
                    return Err(fail(
                        RepairErrorKind::Unrepairable,
                        start,
                        "the `{` or `[` is inside a string",
                    ));
                }
                if self.src[start - 1] == b'/' && self.slash_on_line(start) {
                    // `Use /[a-z]+/ here`: a `/` glued to the bracket and
                    // another after it on its line, with no quote between:
                    // the bracket is inside a
                    // regular expression, which dropping the text before it
                    // would cut.
                    return Err(fail(
                        RepairErrorKind::Unrepairable,
                        start - 1,
                        "a `/` right before the `{` or `[`: a regular expression or path holds it",
                    ));
                }
                if let Some(open) = self.opener_before(region_start, start) {
                    return Err(fail(
                        RepairErrorKind::Unrepairable,
                        open,
                        "a `{` or `[` that cannot be read opens the value",
                    ));
                }
                if let Some(at) = self.member_in(region_start, start) {
                    return Err(fail(
                        RepairErrorKind::Unrepairable,
                        at,
                        "the text before the value holds a `\"key\":` of it",
                    ));
                }
                self.record(RepairKind::SurroundingProse, region_start)?
            }
            None => {}
        }
        self.pos = start;
        self.skip_to(start);
        let value_at = self.out.len();
        self.value(Ctx::Top, 0)?;
        self.after_value(false, value_at)
    }

    /// After the value: the end of a JSONP wrapper or fence, prose, stray
    /// closers, more values one per line, or an error for a second value
    /// or for text that goes on with the value. `keep_blank` keeps trailing
    /// whitespace when nothing around the value was removed.
    fn after_value(&mut self, keep_blank: bool, value_at: usize) -> Step {
        self.end = self.src.len();
        self.flush(self.pos);
        let mut removed_any = !keep_blank;
        let mut value_end = self.pos;
        let mut listed = false;
        loop {
            if keep_blank && !removed_any {
                self.whitespace()?;
            } else {
                self.skip_quietly()?;
            }
            let Some(b) = self.peek() else { break };
            let may_list = matches!(
                b,
                b',' | b'{' | b'[' | b'"' | b'-' | b'0'..=b'9' | b't' | b'f' | b'n'
            );
            if may_list && !listed && self.another_value_follows(value_end, self.pos) {
                self.newline_delimited(value_at, value_end)?;
                listed = true;
                value_end = self.pos;
                continue;
            }
            match b {
                b')' if self.jsonp => {
                    self.jsonp = false;
                    self.pos += 1;
                    let after = self.skip_blank(self.pos);
                    if self.src.get(after) == Some(&b';') {
                        self.pos = after + 1;
                    }
                    removed_any = true;
                }
                b'`' if self.fence_at(self.pos) => {
                    if !self.in_fence {
                        self.record(RepairKind::MarkdownFence, self.pos)?;
                    }
                    self.in_fence = false;
                    self.pos += 3;
                    let rest = self.skip_blank(self.pos);
                    if self.brace_around_fence == Some(rest) {
                        self.record(RepairKind::StrayBracket, rest)?;
                    } else if rest < self.src.len() {
                        self.prose_after(rest, true)?;
                        self.record(RepairKind::SurroundingProse, rest)?;
                    }
                    removed_any = true;
                    break;
                }
                b'{' | b'[' | b',' => {
                    let next = if b == b',' {
                        self.skip_blank_and_comments(self.pos + 1)
                    } else {
                        self.pos
                    };
                    let another = matches!(self.src.get(next), Some(b'{' | b'['));
                    if another {
                        return Err(self.unexpected("a second JSON value follows the first"));
                    }
                    if b == b',' && next < self.src.len() && !removed_any && !listed {
                        return Err(self.unexpected("the text goes on after the value closed"));
                    }
                    if b == b',' && next >= self.src.len() {
                        // `{"a": 1},` at the end.
                        self.record(RepairKind::TrailingComma, self.pos)?;
                        self.pos += 1;
                        removed_any = true;
                        continue;
                    }
                    self.prose_after(self.pos, false)?;
                    self.record(RepairKind::SurroundingProse, self.pos)?;
                    removed_any = true;
                    break;
                }
                b'}' | b']' => {
                    self.record(RepairKind::StrayBracket, self.pos)?;
                    self.pos += 1;
                    removed_any = true;
                    let next = self.skip_blank_and_comments(self.pos);
                    if matches!(self.src.get(next), Some(b',' | b':'))
                        || self.quote_at(next).is_some()
                    {
                        return Err(fail(
                            RepairErrorKind::Unrepairable,
                            next,
                            "the text goes on after the value closed",
                        ));
                    }
                }
                b':' => return Err(self.unexpected("the text goes on after the value closed")),
                _ if self.quote_at(self.pos).is_some() && !removed_any => {
                    return Err(self.unexpected("a second JSON value follows the first"));
                }
                _ => {
                    self.prose_after(self.pos, false)?;
                    self.record(RepairKind::SurroundingProse, self.pos)?;
                    removed_any = true;
                    break;
                }
            }
        }
        if removed_any {
            self.skip_to(self.src.len());
            let trimmed = self.out.trim_end_matches(is_ws_char).len();
            self.out.truncate(trimmed);
        } else {
            self.flush(self.src.len());
        }
        Ok(())
    }

    /// Values one per line (`{"a": 1}\n{"a": 2}`, perhaps with commas):
    /// each read, and all put in an array. The first value starts at
    /// `value_at` in the output and ends at `value_end` in the input.
    fn newline_delimited(&mut self, value_at: usize, value_end: usize) -> Step {
        self.record(
            RepairKind::NewlineDelimited,
            self.skip_blank_and_comments(value_end),
        )?;
        self.out.insert(value_at, '[');
        let mut last_end = (value_end, self.out.len());
        loop {
            self.whitespace()?;
            if !self.another_value_follows(last_end.0, self.pos) {
                break;
            }
            let mut comma = false;
            if self.peek() == Some(b',') {
                comma = true;
                self.pos += 1;
                self.whitespace()?;
            }
            if !comma {
                self.insert_at(last_end.0, last_end.1, ',');
            }
            self.value(Ctx::Top, 0)?;
            // A fence may have ended the value's region; what follows it is
            // the top level's again.
            self.end = self.src.len();
            self.flush(self.pos);
            last_end = (self.pos, self.out.len());
        }
        // The closing bracket goes right after the last value.
        self.insert_at(last_end.0, last_end.1, ']');
        Ok(())
    }

    /// If the text is a fenced block in braces (`{```json`, and ```` ```}````
    /// at the end, whitespace aside), where its closing brace is.
    fn brace_around_fence(&self, first: usize) -> Option<usize> {
        if self.src[first] != b'{' || !self.fence_at(self.skip_blank(first + 1)) {
            return None;
        }
        let text = self.src.trim_ascii_end();
        let close = text.len().checked_sub(1)?;
        let before = text[..close].trim_ascii_end();
        (close > first + 1 && text[close] == b'}' && before.ends_with(b"```")).then_some(close)
    }

    /// Whether another value follows the one that ends at `value_end`,
    /// with `at` the first token after it: after a comma (`{"a": 1}, {"b":
    /// 2}`, `1, 2`) or a line break (`1\n2`, values one per line), a
    /// container, or a whole string that is no key, number or JSON literal.
    /// A comma between digits (`1,234`, `3,14`) separates no values: it may
    /// be a number's.
    fn another_value_follows(&self, value_end: usize, at: usize) -> bool {
        let comma = self.src.get(at) == Some(&b',');
        let next = if comma {
            self.skip_blank_and_comments(at + 1)
        } else {
            at
        };
        let digits = comma
            && at > 0
            && self.src[at - 1].is_ascii_digit()
            && self.src.get(at + 1).is_some_and(u8::is_ascii_digit);
        let line_break = self.src[value_end.min(next)..next]
            .iter()
            .any(|&b| matches!(b, b'\n' | b'\r'));
        if digits || !(comma || line_break) || next >= self.src.len() {
            return false;
        }
        match self.src[next] {
            b'{' | b'[' => true,
            b'"' => self
                .string_end(super::lex::Quote::Double, next + 1)
                .is_some_and(|end| self.src.get(self.skip_blank_and_comments(end)) != Some(&b':')),
            b'-' | b'0'..=b'9' => super::continuation::number_end(self.src, next)
                .is_ok_and(|end| end >= self.src.len() || self.token_end(end)),
            _ => {
                let len = self.literal_len(next);
                matches!(&self.src[next..next + len], b"true" | b"false" | b"null")
            }
        }
    }

    /// Prose from `at` to the end, after the value (and after a fence that
    /// closed it if `fenced`): an error if it holds another fenced value, or
    /// a key (`"name":`) unless a fence set it apart; and, after a value the
    /// text stopped inside of
    /// or whose brackets did not match, if it holds a quote or a bracket,
    /// which the value likely goes on with after the break.
    fn prose_after(&self, at: usize, fenced: bool) -> Step {
        if let Some((fence, content)) = find_fence(&self.src[at..]) {
            let first = self.skip_blank(at + content);
            if matches!(self.src.get(first), Some(b'{' | b'[')) {
                return Err(fail(
                    RepairErrorKind::Unrepairable,
                    at + fence,
                    "a second fenced JSON value follows the first",
                ));
            }
        }
        if !fenced {
            // Prose has words; text without one that holds numbers or
            // brackets is more JSON (`[1] 2]`: a bracket closed early).
            let rest = &self.src[at..];
            if !has_words(rest)
                && rest
                    .iter()
                    .any(|&b| b.is_ascii_digit() || matches!(b, b'}' | b']'))
            {
                return Err(fail(
                    RepairErrorKind::Unrepairable,
                    at,
                    "the text after the value is not prose: it holds numbers or brackets",
                ));
            }
            // A string and a closing bracket at the end are more JSON: the
            // value was closed early (`["a", ]b", "c"]`).
            let ends_closed = matches!(rest.trim_ascii_end().last(), Some(b'}' | b']'));
            if ends_closed && rest.contains(&b'"') {
                return Err(fail(
                    RepairErrorKind::Unrepairable,
                    at,
                    "the text after the value holds a string and ends with a bracket",
                ));
            }
            if let Some(key) = self.member_in(at, self.src.len()) {
                return Err(fail(
                    RepairErrorKind::Unrepairable,
                    key,
                    "the text after the value holds a key (`\"name\":`)",
                ));
            }
        }
        let broken = self.truncated
            || [
                RepairKind::MissingBracket,
                RepairKind::StrayBracket,
                RepairKind::MissingValue,
            ]
            .iter()
            .any(|&kind| self.log.count(kind) > 0);
        if !broken {
            return Ok(());
        }
        match self.src[at..]
            .iter()
            .position(|&b| matches!(b, b'"' | b'{' | b'}' | b'[' | b']'))
        {
            Some(quote) => Err(fail(
                RepairErrorKind::Unrepairable,
                at + quote,
                "the value goes on after a break in the text",
            )),
            None => Ok(()),
        }
    }

    /// Whether the text from `from`, where a value failed to read at
    /// `failed`, is JSON rather than prose with braces in it: it has a quote
    /// or a colon before the failure, or a quote before the next `{` or `[`
    /// (the text that skipping it would drop). Such text is refused rather
    /// than skipped, which would lose it.
    fn reads_as_json(&self, from: usize, failed: usize) -> bool {
        let failed = failed.clamp(from, self.src.len());
        let next = find_open(self.src, failed.max(from + 1)).unwrap_or(self.src.len());
        self.src[from..failed]
            .iter()
            .any(|&b| matches!(b, b'"' | b':'))
            || self.src[from..next].contains(&b'"')
    }

    /// A `{` or `[` in the text from `from` to the value at `to` that opens
    /// the value rather than being prose: one right before it (`Sure {[`),
    /// one with no whitespace between it and the value (`{au.[2.": 1}`, a
    /// key that lost its opening quote; a quote too: `""au.[2.": 1}`), one
    /// that starts the text, or any, in text without a word
    /// (`{[": 1}`). The value is then the inside of a container that could
    /// not be read; read alone, the bracket would be dropped and what
    /// follows it change its role. In text without a word, a closing
    /// bracket or a quote is no prose either (`"\t"][`).
    fn opener_before(&self, from: usize, to: usize) -> Option<usize> {
        let text = &self.src[from..to];
        let last = text.iter().rposition(|&b| !is_ws(b))?;
        if matches!(text[last], b'{' | b'[') {
            return Some(from + last);
        }
        // A bracket where the value was looked for first (the text's start,
        // or a fence's), which could not be read: what follows is inside
        // it (`{ au.[2.": 1}`).
        if matches!(text[0], b'{' | b'[') {
            return Some(from);
        }
        if let Some(open) = text.iter().position(|&b| matches!(b, b'{' | b'[' | b'"')) {
            if !text[open..].iter().any(|&b| is_ws(b)) {
                return Some(from + open);
            }
        }
        let open = text
            .iter()
            .position(|&b| matches!(b, b'{' | b'[' | b'}' | b']' | b'"'))?;
        (!has_words(text)).then_some(from + open)
    }

    /// Whether a `/` follows `from` on its line with no quote before it,
    /// as a regular expression's closing slash does.
    fn slash_on_line(&self, from: usize) -> bool {
        self.src[from..]
            .iter()
            .find(|&&b| matches!(b, b'/' | b'"' | b'\'' | b'\n' | b'\r'))
            == Some(&b'/')
    }

    /// Where prose from `from` to `to` holds a key of the value
    /// (`"name":`, perhaps with whitespace before the colon), if it does.
    fn member_in(&self, from: usize, to: usize) -> Option<usize> {
        let text = &self.src[from..to];
        let mut i = 0;
        while let Some(q) = text[i..].iter().position(|&b| b == b'"' || b == b'\'') {
            let at = i + q;
            let mut j = at + 1;
            while j < text.len() && is_ws(text[j]) {
                j += 1;
            }
            if at > 0 && text.get(j) == Some(&b':') {
                return Some(from + at);
            }
            i = at + 1;
        }
        None
    }

    /// Skips whitespace and comments, recording comments, and drops them from
    /// the output with whatever was not yet copied before them.
    fn skip_quietly(&mut self) -> Step {
        let mark = self.output_mark();
        let result = self.whitespace();
        self.reset_output(mark);
        self.skip_to(self.pos);
        result
    }

    /// The first position at or after `from` that is not JSON whitespace.
    pub(super) fn skip_blank(&self, from: usize) -> usize {
        let mut i = from;
        while i < self.src.len() && is_ws(self.src[i]) {
            i += 1;
        }
        i
    }
}

/// Whether `text` has a word, as prose does: two letters in a row, or a
/// character beyond ASCII (`22e342` has none).
fn has_words(text: &[u8]) -> bool {
    text.windows(2)
        .any(|w| w[0].is_ascii_alphabetic() && w[1].is_ascii_alphabetic())
        || text.iter().any(|&b| b >= 0x80)
}

fn is_ws_char(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

/// The first markdown fence, preferring a ```` ```json ```` one: its position and
/// where its content starts (after the language tag and the line break).
fn find_fence(src: &[u8]) -> Option<(usize, usize)> {
    // ``` inside a string on its line (after an odd number of unescaped
    // double quotes since the line began: `"Paris```"`) is text, not a
    // fence. The count is carried from one ``` to the next, so the search
    // stays one pass over the text.
    let mut fences = {
        let (mut from, mut scanned, mut quotes) = (0, 0, 0usize);
        std::iter::from_fn(move || loop {
            let at = find_from(src, b"```", from)?;
            from = at + 3;
            while scanned < at {
                match src[scanned] {
                    b'\\' => scanned += 1,
                    b'"' => quotes += 1,
                    b'\n' | b'\r' => quotes = 0,
                    _ => {}
                }
                scanned += 1;
            }
            if quotes % 2 == 0 {
                return Some(at);
            }
        })
    };
    let is_json = |at: usize| {
        src.get(at + 3..at + 7)
            .is_some_and(|tag| tag.eq_ignore_ascii_case(b"json"))
    };
    // One pass: the first ```json fence, else the first fence.
    let mut first = None;
    let fence = fences
        .find(|&at| {
            first.get_or_insert(at);
            is_json(at)
        })
        .or(first)?;
    let mut content = fence + 3;
    while content < src.len()
        && (src[content].is_ascii_alphanumeric() || matches!(src[content], b'_' | b'+' | b'-'))
    {
        content += 1;
    }
    while content < src.len() && matches!(src[content], b' ' | b'\t') {
        content += 1;
    }
    if src.get(content) == Some(&b'\r') {
        content += 1;
    }
    if src.get(content) == Some(&b'\n') {
        content += 1;
    }
    Some((fence, content))
}

fn find_from(haystack: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    find(haystack.get(from..)?, needle).map(|i| i + from)
}

/// How many `"` in `text` are not escaped: preceded by an even number of
/// backslashes.
fn unescaped_quotes(text: &[u8]) -> usize {
    let mut quotes = 0;
    let mut backslashes = 0;
    for &b in text {
        match b {
            b'\\' => backslashes += 1,
            b'"' if backslashes % 2 == 0 => {
                quotes += 1;
                backslashes = 0;
            }
            _ => backslashes = 0,
        }
    }
    quotes
}

/// The first `{` or `[` at or after `from`.
fn find_open(src: &[u8], from: usize) -> Option<usize> {
    memchr::memchr2(b'{', b'[', src.get(from..)?).map(|i| i + from)
}

/// If the text between `region_start` and the value at `start` is exactly
/// `name(` (a JSONP callback, perhaps dotted), the position of the name.
fn jsonp_name(src: &[u8], region_start: usize, start: usize) -> Option<usize> {
    let mut i = start;
    while i > region_start && is_ws(src[i - 1]) {
        i -= 1;
    }
    if i == region_start || src[i - 1] != b'(' {
        return None;
    }
    i -= 1;
    while i > region_start && is_ws(src[i - 1]) {
        i -= 1;
    }
    let name_end = i;
    while i > region_start
        && (src[i - 1].is_ascii_alphanumeric() || matches!(src[i - 1], b'_' | b'$' | b'.'))
    {
        i -= 1;
    }
    let name = &src[i..name_end];
    let starts_ok = name.first().is_some_and(|b| !b.is_ascii_digit());
    (starts_ok && i == region_start).then_some(i)
}
