//! Bytes for the repairing parser: classes, whitespace and comments, and the
//! lookahead that decides whether a quote ends a string.

use super::continuation::{Expect, Reach};
use super::parse::{fail, Parser, Step};
use super::{RepairErrorKind, RepairKind};

/// Where a token is, which decides how a quote inside a string is read.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Ctx {
    /// The whole value.
    Top,
    /// An object's key.
    Key,
    /// An object member's value.
    ObjectValue,
    /// An array's item.
    ArrayItem,
}

/// The quote a string was opened with.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Quote {
    /// `"`: JSON's own.
    Double,
    /// `'`
    Single,
    /// `“` or `”`: closed by either, or by `"`.
    CurlyDouble,
    /// `‘` or `’`: closed by either, or by `'`.
    CurlySingle,
    /// `` ` `` (not a fence): closed by `` ` ``, `´` or `'`.
    Backtick,
}

/// JSON's whitespace.
pub(super) fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// The literals read in value position: name, JSON, and the repair if it is not JSON's.
pub(super) const LITERALS: [(&str, &str, Option<RepairKind>); 9] = [
    ("true", "true", None),
    ("false", "false", None),
    ("null", "null", None),
    ("True", "true", Some(RepairKind::PythonLiteral)),
    ("False", "false", Some(RepairKind::PythonLiteral)),
    ("None", "null", Some(RepairKind::PythonLiteral)),
    ("undefined", "null", Some(RepairKind::Undefined)),
    ("NaN", "null", Some(RepairKind::NonFiniteNumber)),
    ("Infinity", "null", Some(RepairKind::NonFiniteNumber)),
];

/// The first bytes of whitespace, of a comment, or of whitespace JSON does not
/// allow.
const MAY_BE_SPACE: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b <= 0x20 {
        table[b] = true;
        b += 1;
    }
    table[b'/' as usize] = true;
    table[b'#' as usize] = true;
    table[0x7F] = true;
    table[0xC2] = true;
    table[0xE1] = true;
    table[0xE2] = true;
    table[0xE3] = true;
    table[0xEF] = true;
    table
};

/// The bytes that may end a string, per kind of quote, for lookahead.
const fn lookahead_stops(quote: Quote) -> [bool; 256] {
    let mut table = [false; 256];
    table[b'\\' as usize] = true;
    match quote {
        Quote::Double => table[b'"' as usize] = true,
        Quote::Single => table[b'\'' as usize] = true,
        Quote::CurlyDouble | Quote::CurlySingle => {
            table[b'"' as usize] = true;
            table[b'\'' as usize] = true;
            table[0xE2] = true;
        }
        Quote::Backtick => {
            table[b'`' as usize] = true;
            table[b'\'' as usize] = true;
            table[0xC2] = true;
        }
    }
    table
}

const LOOKAHEAD_STOPS_DOUBLE: [bool; 256] = lookahead_stops(Quote::Double);
const LOOKAHEAD_STOPS_SINGLE: [bool; 256] = lookahead_stops(Quote::Single);
const LOOKAHEAD_STOPS_CURLY: [bool; 256] = lookahead_stops(Quote::CurlyDouble);
const LOOKAHEAD_STOPS_BACKTICK: [bool; 256] = lookahead_stops(Quote::Backtick);

/// The longest comment a lookahead skips (see [`Parser::skip_ws_from`]),
/// and how far the check of a member after junk reads.
const LOOKAHEAD_COMMENT: usize = 1024;

/// The most junk read between a comma and the next key (see
/// [`Parser::junk_then_member`]).
const JUNK: usize = 64;

/// The bytes of a word: ASCII letters and digits, `_` and `$`.
const WORD_BYTES: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let byte = b as u8;
        table[b] = byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'$';
        b += 1;
    }
    table
};

#[inline(always)]
fn is_word_byte(b: u8) -> bool {
    WORD_BYTES[b as usize]
}

/// A byte that may be part of an unquoted key.
pub(super) fn is_key_byte(b: u8) -> bool {
    !is_ws(b)
        && !matches!(
            b,
            b':' | b','
                | b'{'
                | b'}'
                | b'['
                | b']'
                | b'"'
                | b'\''
                | b'`'
                | b'('
                | b')'
                | b';'
                | b'='
        )
}

impl Parser<'_> {
    /// The quote that opens or closes a string at `i`, and its length in bytes.
    #[inline]
    pub(super) fn quote_at(&self, i: usize) -> Option<(Quote, usize)> {
        match *self.src.get(i)? {
            b'"' => Some((Quote::Double, 1)),
            b'\'' => Some((Quote::Single, 1)),
            b'`' if !self.fence_at(i) => Some((Quote::Backtick, 1)),
            0xE2 if i + 2 < self.src.len() && self.src[i + 1] == 0x80 => match self.src[i + 2] {
                0x9C | 0x9D => Some((Quote::CurlyDouble, 3)),
                0x98 | 0x99 => Some((Quote::CurlySingle, 3)),
                _ => None,
            },
            _ => None,
        }
    }

    /// Whether a markdown fence (```` ``` ````) starts at `i`.
    #[inline]
    pub(super) fn fence_at(&self, i: usize) -> bool {
        self.src.get(i..i + 3) == Some(b"```")
    }

    /// Whether a fence that can close a block is at `i`: ```` ``` ```` with
    /// nothing after it on its line (```` ```b ```` is text, or opens one).
    pub(super) fn closing_fence_at(&self, i: usize) -> bool {
        if !self.fence_at(i) {
            return false;
        }
        let mut j = i + 3;
        while j < self.src.len() && matches!(self.src[j], b' ' | b'\t') {
            j += 1;
        }
        j >= self.src.len() || matches!(self.src[j], b'\n' | b'\r')
    }

    /// Whether the quote that closes a string opened by `quote` is at `i`,
    /// and its length.
    #[inline]
    pub(super) fn closer_at(&self, quote: Quote, i: usize) -> Option<usize> {
        let b = *self.src.get(i)?;
        match (quote, b) {
            (Quote::Double | Quote::CurlyDouble, b'"') => Some(1),
            (Quote::Single | Quote::CurlySingle | Quote::Backtick, b'\'') => Some(1),
            (Quote::Backtick, b'`') => Some(1),
            (Quote::Backtick, 0xC2) if self.src.get(i + 1) == Some(&0xB4) => Some(2),
            (Quote::CurlyDouble | Quote::CurlySingle, 0xE2) => match self.quote_at(i) {
                Some((closer, len)) if closer == quote => Some(len),
                _ => None,
            },
            _ => None,
        }
    }

    /// The length of an ellipsis standing for omitted items at `i` (`...` or
    /// `…`), or 0.
    #[inline]
    pub(super) fn ellipsis_len(&self, i: usize) -> usize {
        match self.src[..self.end].get(i..i + 3) {
            Some([b'.', b'.', b'.']) | Some([0xE2, 0x80, 0xA6]) => self.ellipsis_len_slow(i),
            _ => 0,
        }
    }

    fn ellipsis_len_slow(&self, i: usize) -> usize {
        let s = &self.src[i..self.end];
        let len = if s.starts_with(b"...") {
            3 + s[3..].iter().take_while(|&&b| b == b'.').count()
        } else if s.starts_with("…".as_bytes()) {
            3
        } else {
            return 0;
        };
        if self.token_end(i + len) {
            len
        } else {
            0
        }
    }

    /// The length of a whole literal word (`true`, `None`, `NaN`, ...) at `i`, or 0.
    pub(super) fn literal_len(&self, i: usize) -> usize {
        let end = self.word_end(i);
        let word = &self.src[i.min(end)..end];
        let known = LITERALS.iter().any(|(name, ..)| name.as_bytes() == word);
        if known && self.token_end(end) {
            end - i
        } else {
            0
        }
    }

    pub(super) fn word_end(&self, i: usize) -> usize {
        let region = &self.src[..self.end];
        region
            .get(i..)
            .and_then(|rest| rest.iter().position(|&b| !is_word_byte(b)))
            .map_or(region.len().max(i), |len| i + len)
    }

    /// Whether a token ends before `i`: the end, whitespace, punctuation, a
    /// quote or a comment.
    #[inline(always)]
    pub(super) fn token_end(&self, i: usize) -> bool {
        if i >= self.end {
            return true;
        }
        let b = self.src[i];
        is_ws(b)
            || matches!(b, b',' | b'}' | b']' | b'{' | b'[' | b')' | b';' | b'`')
            || self.quote_at(i).is_some()
            || self.comment_at(i)
            || (MAY_BE_SPACE[b as usize] && self.odd_space_len(i) > 0)
    }

    /// Whether a value can start at `i`.
    pub(super) fn starts_value(&self, i: usize) -> bool {
        match self.src.get(i) {
            Some(b'{' | b'[' | b'-' | b'+' | b'.' | b'0'..=b'9') => true,
            Some(&b) if is_word_byte(b) => true,
            Some(_) => self.quote_at(i).is_some(),
            None => false,
        }
    }

    /// Whether a comment starts at `i` (see [`Parser::comment_len`]); constant
    /// time, for lookahead.
    pub(super) fn comment_at(&self, i: usize) -> bool {
        let s = &self.src[i.min(self.end)..self.end];
        matches!(
            s,
            [b'/', b'/' | b'*', ..]
                | [b'#']
                | [b'#', b' ' | b'\t' | b'\n' | b'\r' | b'#' | b'!', ..]
        )
    }

    /// Whether a `//` or `/*` comment starts at `i`: after a quote, these
    /// end a string, where a `#` may be text (`"a "# b"`).
    fn slash_comment_at(&self, i: usize) -> bool {
        matches!(self.src.get(i..i + 2), Some(b"//" | b"/*")) && i + 1 < self.end
    }

    /// The length of a comment starting at `i`, or 0: `// ...` and `# ...` to
    /// the end of the line, `/* ... */` (to the end of the text if unclosed).
    /// `#` starts a comment only before a space or the end of a line, so that
    /// `#fff` stays a value.
    fn comment_len(&self, i: usize) -> usize {
        let s = &self.src[i.min(self.end)..self.end];
        let line = |from: usize| {
            s[from..]
                .iter()
                .position(|&b| b == b'\n' || b == b'\r')
                .map_or(s.len(), |p| p + from)
        };
        match s {
            [b'/', b'/', ..] => line(2),
            [b'/', b'*', ..] => find(&s[2..], b"*/").map_or(s.len(), |p| p + 4),
            [b'#'] | [b'#', b' ' | b'\t' | b'\n' | b'\r' | b'#' | b'!', ..] => line(1),
            _ => 0,
        }
    }

    /// The length of whitespace JSON does not allow at `i` (a control
    /// character, a form feed, a byte-order mark, and Unicode's spaces: no-break
    /// U+00A0, U+180E, U+2000 to U+200A, zero-width U+200B, line and paragraph
    /// separators, U+202F, U+205F, ideographic U+3000), or 0.
    fn odd_space_len(&self, i: usize) -> usize {
        let s = &self.src[i.min(self.end)..self.end];
        match s {
            [b, ..] if *b < 0x20 && !is_ws(*b) => 1,
            [0x7F, ..] => 1,
            [0xC2, 0xA0, ..] => 2,
            [0xEF, 0xBB, 0xBF, ..]
            | [0xE2, 0x80, 0x80..=0x8B | 0xA8 | 0xA9 | 0xAF, ..]
            | [0xE2, 0x81, 0x9F, ..]
            | [0xE3, 0x80, 0x80, ..]
            | [0xE1, 0xA0, 0x8E, ..] => 3,
            _ => 0,
        }
    }

    /// The first position at or after `i` that is neither whitespace nor a
    /// comment; records nothing.
    pub(super) fn skip_blank_and_comments(&self, mut i: usize) -> usize {
        loop {
            while i < self.end && is_ws(self.src[i]) {
                i += 1;
            }
            let skip = self.comment_len(i).max(self.odd_space_len(i));
            if skip == 0 {
                return i;
            }
            i += skip;
        }
    }

    /// Passes whitespace (kept in the output); removes comments and whitespace
    /// JSON does not allow, recording them.
    #[inline(always)]
    pub(super) fn whitespace(&mut self) -> Step {
        // Most tokens follow nothing or a single space: no call for those.
        let region = &self.src[..self.end];
        let mut i = self.pos;
        let mut b = region.get(i);
        if b == Some(&b' ') {
            i += 1;
            self.pos = i;
            b = region.get(i);
        }
        if b.is_some_and(|&b| !MAY_BE_SPACE[b as usize]) {
            return Ok(());
        }
        // A typographic quote starts with a byte that also starts odd
        // spaces: a token, not space.
        if i + 2 < self.end
            && self.src[i] == 0xE2
            && self.src[i + 1] == 0x80
            && matches!(self.src[i + 2], 0x98..=0x9D)
        {
            return Ok(());
        }
        self.more_whitespace()
    }

    #[inline(never)]
    fn more_whitespace(&mut self) -> Step {
        while self.pos < self.end && is_ws(self.src[self.pos]) {
            self.pos += 1;
        }
        if self.pos >= self.end || !MAY_BE_SPACE[self.src[self.pos] as usize] {
            return Ok(());
        }
        // A typographic quote starts with a byte that also starts odd
        // spaces: a token, not space.
        if self.src[self.pos] == 0xE2 && self.quote_at(self.pos).is_some() {
            return Ok(());
        }
        self.special_whitespace()
    }

    #[inline(never)]
    fn special_whitespace(&mut self) -> Step {
        loop {
            while self.pos < self.end && is_ws(self.src[self.pos]) {
                self.pos += 1;
            }
            // (No comment or odd space starts with another byte.)
            if self.pos >= self.end || !MAY_BE_SPACE[self.src[self.pos] as usize] {
                return Ok(());
            }
            let comment = self.comment_len(self.pos);
            if comment > 0 {
                let text = &self.src[self.pos..self.pos + comment];
                let line = text.starts_with(b"//") || text.starts_with(b"#");
                if line
                    && self.pos + comment >= self.end
                    && !self.stack.is_empty()
                    && text.iter().any(|&b| matches!(b, b'"' | b'}' | b']'))
                {
                    // `{"a": 1 // note }, "b": 2}` on one line: the rest of the
                    // value is in the comment.
                    return Err(fail(
                        RepairErrorKind::Unrepairable,
                        self.pos,
                        "a comment to the end of the text holds the rest of the value",
                    ));
                }
                self.record(RepairKind::Comment, self.pos)?;
                self.replace(self.pos, self.pos + comment, "");
                self.pos += comment;
                continue;
            }
            let odd = self.odd_space_len(self.pos);
            if odd > 0 {
                self.record(RepairKind::ControlCharacter, self.pos)?;
                self.replace(self.pos, self.pos + odd, "");
                self.pos += odd;
                continue;
            }
            return Ok(());
        }
    }

    /// For lookahead: the position after whitespace and short comments from
    /// `i`, and whether a line break was passed. Comments longer than
    /// [`LOOKAHEAD_COMMENT`] stop the skip, so that each lookahead is bounded
    /// and the pass stays linear.
    #[inline]
    pub(super) fn skip_ws_from(&self, i: usize) -> (usize, bool) {
        // Most tokens follow nothing or a single space.
        let j = i + usize::from(self.src.get(i) == Some(&b' '));
        match self.src.get(j) {
            Some(&b) if j < self.end && !MAY_BE_SPACE[b as usize] => (j, false),
            _ => self.skip_ws_and_comments_from(i),
        }
    }

    fn skip_ws_and_comments_from(&self, mut i: usize) -> (usize, bool) {
        let mut newline = false;
        loop {
            while i < self.end && is_ws(self.src[i]) {
                newline |= matches!(self.src[i], b'\n' | b'\r');
                i += 1;
            }
            // (A comment's first byte is no odd space's.)
            if i < self.end
                && MAY_BE_SPACE[self.src[i] as usize]
                && !matches!(self.src[i], b'/' | b'#')
            {
                let odd = self.odd_space_len(i);
                if odd > 0 {
                    i += odd;
                    continue;
                }
            }
            if !self.comment_at(i) {
                return (i, newline);
            }
            let window = &self.src[i..self.end.min(i + LOOKAHEAD_COMMENT)];
            let len = if window[0] == b'/' && window[1] == b'*' {
                match find(&window[2..], b"*/") {
                    Some(p) => p + 4,
                    None => return (i, newline),
                }
            } else {
                match window.iter().position(|&b| b == b'\n' || b == b'\r') {
                    Some(p) => p,
                    None if i + window.len() == self.end => window.len(),
                    None => return (i, newline),
                }
            };
            i += len;
        }
    }

    /// Whether an unquoted key and its colon open the line at `i`, at the
    /// indentation of the line the quote at `q` is on, which starts with a
    /// quote (`  "a": "x"\n  b: 2`): the next member, its comma and its
    /// key's quotes missing, after a member on one line.
    fn member_line_at(&self, q: usize, i: usize) -> bool {
        let indent = |line: usize| {
            self.src[line..]
                .iter()
                .take_while(|&&b| b == b' ' || b == b'\t')
                .count()
        };
        let line_start = |at: usize| {
            let from = at.saturating_sub(LOOKAHEAD_COMMENT);
            self.src[from..at]
                .iter()
                .rposition(|&b| matches!(b, b'\n' | b'\r'))
                .map(|p| from + p + 1)
        };
        let (Some(key_line), Some(quote_line)) = (line_start(i), line_start(q)) else {
            return false;
        };
        let width = indent(quote_line);
        key_line + indent(key_line) == i
            && i - key_line == width
            && self.src[quote_line + width] == b'"'
            && self.unquoted_key_at(i)
    }

    /// Whether an unquoted key followed by `:` starts at `i`.
    fn unquoted_key_at(&self, i: usize) -> bool {
        let mut j = i;
        while j < self.end && is_key_byte(self.src[j]) {
            j += 1;
        }
        // `key":` lacks its opening quote.
        if j > i && j < self.end && self.src[j] == b'"' {
            j += 1;
        }
        j > i && {
            let (k, _) = self.skip_ws_from(j);
            k < self.end && self.src[k] == b':'
        }
    }

    /// Whether a value that lacks its opening quote starts at `i`: text on
    /// one line without quotes, commas or brackets, then `"` and a `,` or
    /// closing bracket (`do",`, `a new value: 2",`).
    fn word_then_quote_at(&self, i: usize) -> bool {
        let mut j = i;
        while j < self.end
            && j < i + 1024
            && !matches!(
                self.src[j],
                b'"' | b',' | b'{' | b'}' | b'[' | b']' | b'\n' | b'\r'
            )
        {
            j += 1;
        }
        j > i && j < self.end && self.src[j] == b'"' && {
            let (k, _) = self.skip_ws_from(j + 1);
            k >= self.end || matches!(self.src[k], b',' | b']' | b'}')
        }
    }

    /// Whether a key without its colon starts at `i`: a string and then a
    /// value on the same line (`"days" 3`, `"a" "b"`).
    fn key_without_colon_at(&self, i: usize) -> bool {
        let Some((quote, len)) = self.quote_at(i) else {
            return false;
        };
        let Some(end) = self.string_end(quote, i + len) else {
            return false;
        };
        let mut j = end;
        while j < self.end && matches!(self.src[j], b' ' | b'\t') {
            j += 1;
        }
        j > end
            && j < self.end
            && (matches!(self.src[j], b'{' | b'[' | b'0'..=b'9')
                || self.quote_at(j).is_some()
                || self.literal_len(j) > 0)
    }

    /// Whether one stray mark is at `i` (`/`, `;`, `*`, ...) and then a
    /// comma and a quoted key: the member before ended at the quote before
    /// the mark (`"a"/, "b": 1`), whose text is not read on past it.
    fn stray_mark_then_member(&self, i: usize) -> bool {
        if !self.stray_mark_at(i) {
            return false;
        }
        let (comma, _) = self.skip_ws_from(i + 1);
        if self.src[..self.end].get(comma) != Some(&b',') {
            return false;
        }
        let (key, _) = self.skip_ws_from(comma + 1);
        key < self.end && self.key_string_at(key)
    }

    /// Whether one stray mark is at `i`, after a comma, and then a quoted
    /// key: the member before ended at the quote before the comma
    /// (`"a",\n - "b": 1`), whose text is not read on past it.
    fn stray_mark_then_key(&self, i: usize) -> bool {
        if i >= self.end || !self.stray_mark_at(i) {
            return false;
        }
        let (key, _) = self.skip_ws_from(i + 1);
        key < self.end && self.key_string_at(key)
    }

    /// Whether, at `i` after a comma, a few bytes of text without quotes
    /// (a stray character, a line of prose: `",]  "b": 1`, `",\nHere you
    /// go: "b": 1`) and then a quoted key whose member reads as strict JSON
    /// follow: the member before ended at the quote before the comma,
    /// whatever its text (code with brackets of its own too), whose text is
    /// not read on over a member.
    fn junk_then_member(&self, i: usize) -> bool {
        let junk = &self.src[i..self.end.min(i + JUNK)];
        let Some(q) = junk.iter().position(|&b| matches!(b, b'"' | b'\'')) else {
            return false;
        };
        let key = i + q;
        let reach = Reach {
            tokens: 6,
            until: key + LOOKAHEAD_COMMENT,
            min_tokens: 3,
        };
        q > 0
            && self.src[key] == b'"'
            && self.string_then_punctuation(key, reach)
            && self.continues(key, Expect::Key, reach)
    }

    /// Whether the byte at `i` is punctuation that no JSON token starts
    /// with, nor a quote of any kind (`/`, `;`, `*`, `-`, ...).
    #[inline(always)]
    fn stray_mark_at(&self, i: usize) -> bool {
        let mark = self.src[i];
        mark.is_ascii_punctuation()
            && !matches!(
                mark,
                b'"' | b'\'' | b'`' | b',' | b':' | b'{' | b'}' | b'[' | b']'
            )
    }

    /// Whether a quoted key starts at `i`: a string followed by `:`.
    pub(super) fn key_string_at(&self, i: usize) -> bool {
        self.quote_at(i).is_some() && self.after_string(i) == Some(b':')
    }

    /// For lookahead: what follows the string that opens at `i` (after
    /// whitespace and short comments); `None` if the text ends first. The
    /// string ends at the next quote of its kind.
    pub(super) fn after_string(&self, i: usize) -> Option<u8> {
        let (quote, len) = self.quote_at(i)?;
        let end = self.string_end(quote, i + len)?;
        let (j, _) = self.skip_ws_from(end);
        (j < self.end).then(|| self.src[j])
    }

    /// For lookahead: where the string opened by `quote`, whose content
    /// starts at `i`, ends (after its closing quote), reading every closing
    /// quote as its end; `None` if the text ends first.
    pub(super) fn string_end(&self, quote: Quote, mut i: usize) -> Option<usize> {
        let stops = match quote {
            Quote::Double => &LOOKAHEAD_STOPS_DOUBLE,
            Quote::Single => &LOOKAHEAD_STOPS_SINGLE,
            Quote::CurlyDouble | Quote::CurlySingle => &LOOKAHEAD_STOPS_CURLY,
            Quote::Backtick => &LOOKAHEAD_STOPS_BACKTICK,
        };
        loop {
            i += self.src[i.min(self.end)..self.end]
                .iter()
                .position(|&b| stops[b as usize])
                .unwrap_or(self.end.saturating_sub(i));
            if i >= self.end {
                return None;
            }
            if self.src[i] == b'\\' {
                i += 2;
                continue;
            }
            match self.closer_at(quote, i) {
                Some(len) => return Some(i + len),
                None => i += 1,
            }
        }
    }

    /// Whether the quote that ends just before `after` closes a string in
    /// `ctx`, judged by what follows it. See the module docs for the rule.
    #[inline]
    pub(super) fn closes(&self, ctx: Ctx, after: usize) -> bool {
        // The byte right after the quote settles the common cases.
        if after < self.end {
            match (ctx, self.src[after]) {
                (Ctx::Key, b':') | (Ctx::ObjectValue | Ctx::ArrayItem, b'}' | b']') => return true,
                // A letter or digit right after the quote goes on with the
                // text, except after a key (a value with the colon missing).
                (Ctx::ObjectValue | Ctx::ArrayItem | Ctx::Top, b) if b.is_ascii_alphanumeric() => {
                    return false
                }
                _ => {}
            }
        }
        self.closes_after_space(ctx, after)
    }

    fn closes_after_space(&self, ctx: Ctx, after: usize) -> bool {
        if self.comment_at(after) {
            // `"//p"`, `"## a"` right after a quote are text, not comments.
            return false;
        }
        let (j, newline) = self.skip_ws_from(after);
        if j >= self.end {
            return true;
        }
        let b = self.src[j];
        if self.closing_fence_at(j) || (b == b')' && (self.jsonp || self.in_wrapper)) {
            return true;
        }
        if b == b'+' && ctx != Ctx::Key {
            // `"a" + "b"`: concatenation, read by the string.
            let (k, _) = self.skip_ws_from(j + 1);
            if self.quote_at(k).is_some() {
                return true;
            }
        }
        if b.is_ascii_alphanumeric() && matches!(ctx, Ctx::ObjectValue | Ctx::ArrayItem) {
            // A word after the space: more text (a key or value needs a
            // quote, a comma or a bracket first), unless it is the next
            // member's unquoted key, opening its line as this member does.
            return newline && ctx == Ctx::ObjectValue && self.member_line_at(after - 1, j);
        }
        let after_comma = || self.skip_ws_from(j + 1).0;
        match ctx {
            // The whole value: a quote before more words is text; before
            // anything else (a line break, `;`, a bracket) it closes, and
            // what follows is dealt with after.
            Ctx::Top => {
                let lone_quote = j > after
                    && self
                        .quote_at(j)
                        .is_some_and(|(quote, len)| self.string_end(quote, j + len).is_none());
                newline
                    || lone_quote
                    || !(b.is_ascii_alphanumeric() || b >= 0x80 || self.quote_at(j).is_some())
            }
            // After a key: its colon, or (missing the colon) a value that is
            // not a bare word, which may be the rest of the key.
            Ctx::Key => {
                matches!(
                    b,
                    b':' | b'=' | b',' | b'}' | b']' | b'{' | b'[' | b'0'..=b'9'
                ) || (b == b'-' && self.src.get(j + 1).is_some_and(u8::is_ascii_digit))
                    || self.quote_at(j).is_some()
                    || self.literal_len(j) > 0
            }
            // After a member's value: the object closes, or a key follows
            // (after a comma, or without one).
            Ctx::ObjectValue => match b {
                b'}' | b']' => true,
                b',' => {
                    let k = after_comma();
                    k >= self.end
                        || matches!(self.src[k], b'}' | b'{' | b'[' | b',' | b'\\')
                        || self.fence_at(k)
                        || self.quote_at(k).is_some()
                        || self.ellipsis_len(k) > 0
                        || self.unquoted_key_at(k)
                        || self.stray_mark_then_key(k)
                        || self.junk_then_member(k)
                }
                _ => {
                    self.key_string_at(j)
                        || (j > after && self.slash_comment_at(j))
                        || self.ellipsis_len(j) > 0
                        || self.key_without_colon_at(j)
                        || self.stray_mark_then_member(j)
                }
            },
            // After an item: the array closes, or a value follows (after a
            // comma, or a string without one).
            Ctx::ArrayItem => match b {
                // A colon after an item: a key where none belongs, refused
                // after the string rather than read into it.
                b']' | b'}' | b':' => true,
                b',' => {
                    let k = after_comma();
                    k >= self.end
                        || matches!(
                            self.src[k],
                            b']' | b'}' | b'[' | b'{' | b',' | b'\\' | b'-' | b'0'..=b'9'
                        )
                        || self.fence_at(k)
                        || self.quote_at(k).is_some()
                        || self.literal_len(k) > 0
                        || self.ellipsis_len(k) > 0
                        || self.word_then_quote_at(k)
                }
                _ => {
                    (j > after && self.slash_comment_at(j))
                        || self.ellipsis_len(j) > 0
                        || (self.quote_at(j).is_some()
                            && matches!(
                                self.after_string(j),
                                Some(b',' | b']' | b'}' | b'"' | b'\'')
                            ))
                }
            },
        }
    }
}

/// The first occurrence of `needle` (not empty) in `haystack`.
#[inline(never)]
pub(super) fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    let mut from = 0;
    loop {
        let at = from + memchr::memchr(needle[0], haystack.get(from..)?)?;
        if haystack[at..].starts_with(needle) {
            return Some(at);
        }
        from = at + 1;
    }
}

pub(super) fn rfind(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).rposition(|w| w == needle)
}
