//! The fast path for what needs no repair: an array or object that is
//! strict JSON already is copied as it is, after one tight scan, instead of
//! being read token by token with every rule.
//!
//! The repairing parser reads strict JSON as it is (each string's closing
//! quote is followed by what closes a string in its place, each number and
//! literal is whole), so copying such a container gives the same output
//! with no repair, only sooner. The scan checks the strict grammar, nothing
//! looser: a container with any damage, a lone surrogate escape, or deeper
//! nesting than allowed is left to the parser.
//!
//! Linear overall: a scan that fails at a byte remembers which containers
//! were open there; the parser then reads those itself and scans again only
//! the ones inside that closed before the failure (which succeed), so each
//! byte is read by at most one failed scan and one that succeeds. A budget
//! of scanned bytes proportional to the text bounds the work whatever the
//! parser does.

use super::continuation::number_end;
use super::lex::is_ws;
use super::parse::Parser;
use super::string::find_stop_double;

/// Containers that start this close to the end of the text are left to the
/// parser (see [`Parser::verbatim_container`]).
const SHORT: usize = 256;

/// What the last failed scan learned, and the work left.
pub(super) struct Verbatim {
    /// The last failed scan started here...
    from: usize,
    /// ...and failed here: the text between read as strict JSON.
    failed_at: usize,
    /// The containers open where it failed (their first bytes, outermost
    /// first): each holds the failure.
    open: Vec<usize>,
    /// The containers open in a scan.
    scratch: Vec<usize>,
    /// Bytes left to scan.
    budget: usize,
}

impl Verbatim {
    pub(super) fn new(text_len: usize) -> Verbatim {
        Verbatim {
            from: 0,
            failed_at: 0,
            open: Vec::new(),
            scratch: Vec::new(),
            // Each byte is scanned at most twice (see the module docs);
            // the rest is slack for the parser's second readings.
            budget: 4 * text_len + 4096,
        }
    }
}

impl Parser<'_> {
    /// At a `{` or `[` in value position, inside `depth` containers: if the
    /// container that opens here is strict JSON, closed within the region
    /// and nested no deeper than allowed, where it ends.
    #[inline]
    pub(super) fn verbatim_container(&mut self, depth: usize) -> Option<usize> {
        let start = self.pos;
        if depth == 0 || self.end - start < SHORT {
            // The whole value reached the parser because it needs repair
            // (valid JSON is returned before), most often near its end (a
            // trailing comma, a cut), so a scan would mostly be wasted; its
            // arrays and objects are tried. So it is in a short text, where
            // the scan saves little.
            return None;
        }
        // Most damaged containers show it at once (`{a: 1}`, `['a']`): no
        // scan for those.
        let mut first = start + 1;
        while first < self.end && is_ws(self.src[first]) {
            first += 1;
        }
        let strict_start = match (self.src[start], self.src.get(first)) {
            (b'{', Some(b'"' | b'}')) => true,
            (b'[', Some(b)) => matches!(
                b,
                b'"' | b'{' | b'[' | b']' | b'-' | b'0'..=b'9' | b't' | b'f' | b'n'
            ),
            _ => false,
        };
        if !strict_start {
            return None;
        }
        let memo = &self.verbatim;
        if memo.budget == 0
            || (start >= memo.from
                && start < memo.failed_at
                && memo.open.binary_search(&start).is_ok())
        {
            // No work left, or it holds the failure the last scan found.
            return None;
        }
        let room = self.options.max_depth.saturating_sub(depth);
        let until = self.end.min(start.saturating_add(memo.budget));
        let memo = &mut self.verbatim;
        match scan(&self.src[..until], start, room, &mut memo.scratch) {
            Ok(end) => {
                memo.budget -= end - start;
                Some(end)
            }
            Err(at) => {
                memo.budget = if at >= until && until < self.end {
                    0
                } else {
                    memo.budget.saturating_sub(at - start + 1)
                };
                memo.from = start;
                memo.failed_at = at;
                std::mem::swap(&mut memo.open, &mut memo.scratch);
                None
            }
        }
    }
}

/// Scans the strict JSON array or object that opens at `start` in `src`,
/// nested at most `room` deep: where it ends, or the byte where it stops
/// being strict JSON (or `src` ends), with `open` holding the containers
/// open there.
fn scan(src: &[u8], start: usize, room: usize, open: &mut Vec<usize>) -> Result<usize, usize> {
    open.clear();
    let mut i = start;
    let ws = |mut i: usize| {
        while i < src.len() && is_ws(src[i]) {
            i += 1;
        }
        i
    };
    'value: loop {
        // A value starts at `i`.
        let Some(&b) = src.get(i) else {
            return Err(i);
        };
        match b {
            b'{' | b'[' => {
                open.push(i);
                if open.len() > room {
                    return Err(i);
                }
                i = ws(i + 1);
                let close = if b == b'{' { b'}' } else { b']' };
                if src.get(i) != Some(&close) {
                    if b == b'{' {
                        i = member_key(src, i)?;
                    }
                    continue 'value;
                }
                // Empty: closed below.
            }
            b'"' => i = string(src, i)?,
            b'-' | b'0'..=b'9' => i = number_end(src, i)?,
            b't' => i = literal(src, i, b"true")?,
            b'f' => i = literal(src, i, b"false")?,
            b'n' => i = literal(src, i, b"null")?,
            _ => return Err(i),
        }
        // After a value (or at the closing bracket of an empty container).
        loop {
            i = ws(i);
            let Some(&b) = src.get(i) else {
                return Err(i);
            };
            let Some(&inner) = open.last() else {
                return Err(i);
            };
            let in_object = src[inner] == b'{';
            match b {
                b',' => {
                    i = ws(i + 1);
                    if in_object {
                        i = member_key(src, i)?;
                    }
                    continue 'value;
                }
                b'}' if in_object => {}
                b']' if !in_object => {}
                _ => return Err(i),
            }
            open.pop();
            i += 1;
            if open.is_empty() {
                return Ok(i);
            }
        }
    }
}

/// A member's key at `i`, its colon and the whitespace after: where its
/// value starts.
#[inline]
fn member_key(src: &[u8], i: usize) -> Result<usize, usize> {
    if src.get(i) != Some(&b'"') {
        return Err(i);
    }
    let mut i = string(src, i)?;
    while i < src.len() && is_ws(src[i]) {
        i += 1;
    }
    if src.get(i) != Some(&b':') {
        return Err(i);
    }
    i += 1;
    while i < src.len() && is_ws(src[i]) {
        i += 1;
    }
    Ok(i)
}

/// The strict JSON string at `i` (a `"`): where it ends.
#[inline]
fn string(src: &[u8], i: usize) -> Result<usize, usize> {
    let mut j = i + 1;
    loop {
        j = find_stop_double(src, j);
        match src.get(j) {
            Some(b'"') => return Ok(j + 1),
            Some(b'\\') => j = escape(src, j)?,
            _ => return Err(j),
        }
    }
}

/// The escape at `i` (a `\`): where it ends. A `\u` escape of a surrogate
/// must be a high one followed by a low one.
fn escape(src: &[u8], i: usize) -> Result<usize, usize> {
    match src.get(i + 1) {
        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => Ok(i + 2),
        Some(b'u') => {
            let unit = hex4(src, i + 2).ok_or(i)?;
            match unit {
                0xD800..=0xDBFF => {
                    let low = (src.get(i + 6..i + 8) == Some(b"\\u"))
                        .then(|| hex4(src, i + 8))
                        .flatten();
                    match low {
                        Some(0xDC00..=0xDFFF) => Ok(i + 12),
                        _ => Err(i),
                    }
                }
                0xDC00..=0xDFFF => Err(i),
                _ => Ok(i + 6),
            }
        }
        _ => Err(i),
    }
}

/// The four hex digits at `i`, as a number.
fn hex4(src: &[u8], i: usize) -> Option<u32> {
    let digits = src.get(i..i + 4)?;
    digits.iter().try_fold(0, |unit, &b| {
        let digit = (b as char).to_digit(16)?;
        Some(unit * 16 + digit)
    })
}

/// The literal `word` at `i`: where it ends.
#[inline]
fn literal(src: &[u8], i: usize, word: &[u8]) -> Result<usize, usize> {
    if src.get(i..i + word.len()) == Some(word) {
        Ok(i + word.len())
    } else {
        Err(i)
    }
}

#[cfg(test)]
mod tests {
    use super::scan;

    fn scanned(text: &str) -> Result<usize, usize> {
        scan(text.as_bytes(), 0, 512, &mut Vec::new())
    }

    #[test]
    fn strict_containers_scan_to_their_end() {
        for text in [
            "{}",
            "[]",
            r#"{"a": [1, -2.5e+3, 0, true, false, null], "b": {"c": "\"\\\/\b\f\n\r\t\u00e9"}}"#,
            "[ \n\t{ } , [ ] ]",
            r#"["\ud83d\ude00"]"#,
        ] {
            assert_eq!(scanned(text), Ok(text.len()), "{text}");
            let longer = format!("{text}, 1");
            assert_eq!(scanned(&longer), Ok(text.len()), "{longer}");
        }
    }

    #[test]
    fn anything_looser_stops_the_scan_where_it_is() {
        for (text, at) in [
            ("[1,]", 3),
            ("{'a': 1}", 1),
            ("{a: 1}", 1),
            ("[01]", 3),
            ("[1.]", 3),
            ("[.5]", 1),
            ("[+1]", 1),
            ("[tru]", 1),
            ("[True]", 1),
            ("[1 2]", 3),
            ("{\"a\" 1}", 5),
            ("[\"a\nb\"]", 3),
            ("[\"\\x\"]", 2),
            ("[\"\\ud800\"]", 2),
            ("[\"\\udc00\"]", 2),
            ("[1}", 2),
            ("[1, 2", 5),
            ("[\"abc", 5),
            ("[/* c */ 1]", 1),
        ] {
            assert_eq!(scanned(text), Err(at), "{text}");
        }
    }

    #[test]
    fn nesting_deeper_than_allowed_stops_the_scan() {
        let mut open = Vec::new();
        assert_eq!(scan(b"[[[]]]", 0, 3, &mut open), Ok(6));
        assert_eq!(scan(b"[[[]]]", 0, 2, &mut open), Err(2));
        assert_eq!(open, [0, 1, 2]);
        // A scan of a container inside another.
        assert_eq!(scan(b"[[1], 2]", 1, 3, &mut open), Ok(4));
        assert_eq!(scan(b"[[1, ]]", 1, 3, &mut open), Err(5));
        assert_eq!(open, [1]);
    }
}
