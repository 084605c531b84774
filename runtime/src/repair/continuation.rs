//! Whether the text from a point reads as strict JSON continuing the value
//! being read. This is how the structure decides where a string that lacks
//! its closing quote ends: in `{"a": "x, "b": 1}` the string ends before
//! the comma, because `, "b": 1}` reads as JSON there, while in
//! `{"q": "He said, "hi" to me"}` the quotes are part of the text, because
//! `, "hi" to` does not.

use super::lex::is_ws;
use super::parse::Parser;
use super::string::find_stop_double;

/// What strict JSON expects next.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Expect {
    /// A value.
    Value,
    /// A value or `]`, just after `[`.
    ValueOrClose,
    /// A key, after `,` in an object.
    Key,
    /// A key or `}`, just after `{`.
    KeyOrClose,
    /// `:`, after a key.
    Colon,
    /// `,` or a closing bracket, after a value.
    AfterValue,
}

/// How far a check reads before it accepts.
#[derive(Clone, Copy, Debug)]
pub(super) struct Reach {
    /// Accept after this many tokens.
    pub(super) tokens: usize,
    /// Stop at this byte. Bounding each check keeps the pass linear.
    pub(super) until: usize,
    /// Accept, where the text or the reach ends first, only if at least
    /// this many whole tokens were read.
    pub(super) min_tokens: usize,
}

impl Reach {
    /// No bound: accept only where the value closes, every container open
    /// around the check closed (not where the text ends).
    pub(super) const CLOSED: Reach = Reach {
        tokens: usize::MAX,
        until: usize::MAX,
        min_tokens: usize::MAX,
    };
}

/// Why a strict token could not be read.
pub(super) enum Stop {
    /// The text (or the reach) ended inside it.
    Cut,
    /// It is not strict JSON.
    Bad,
}

impl Parser<'_> {
    /// Whether the text from `i`, read as strict JSON expecting `expect`
    /// inside the containers the parser has open, reads without an error
    /// until the text ends, the containers all close, or `reach` stops it.
    pub(super) fn continues(&self, i: usize, expect: Expect, reach: Reach) -> bool {
        self.continues_in(i, expect, reach, &[])
    }

    /// [`Parser::continues`], inside `opened` too: brackets opened since
    /// the parser's last one (in text it took for a string).
    pub(super) fn continues_in(
        &self,
        i: usize,
        expect: Expect,
        reach: Reach,
        opened: &[u8],
    ) -> bool {
        self.continues_within(i, expect, reach, opened, self.stack.len())
    }

    /// [`Parser::continues_in`], with only the `outer` outermost of the
    /// parser's containers open (the text it took for a string closed the
    /// others).
    pub(super) fn continues_within(
        &self,
        mut i: usize,
        mut expect: Expect,
        reach: Reach,
        opened: &[u8],
        outer: usize,
    ) -> bool {
        // Containers the text opens, and how many of the parser's are open.
        let mut inner: Vec<u8> = opened.to_vec();
        let mut outer = outer.min(self.stack.len());
        let mut tokens = 0;
        let until = reach.until.min(self.end);
        loop {
            while i < until && is_ws(self.src[i]) {
                i += 1;
            }
            if i >= self.end {
                return tokens >= reach.min_tokens;
            }
            if tokens >= reach.tokens {
                return true;
            }
            if i >= until {
                return tokens >= reach.min_tokens;
            }
            let b = self.src[i];
            let token_end = match (expect, b) {
                (Expect::Value | Expect::ValueOrClose, b'{') => {
                    inner.push(b'{');
                    expect = Expect::KeyOrClose;
                    Ok(i + 1)
                }
                (Expect::Value | Expect::ValueOrClose, b'[') => {
                    inner.push(b'[');
                    expect = Expect::ValueOrClose;
                    Ok(i + 1)
                }
                (Expect::Key | Expect::KeyOrClose, b'"') => {
                    expect = Expect::Colon;
                    self.strict_string(i, until)
                }
                (Expect::Colon, b':') => {
                    expect = Expect::Value;
                    Ok(i + 1)
                }
                (Expect::AfterValue, b',') => {
                    let open = inner
                        .last()
                        .copied()
                        .or_else(|| outer.checked_sub(1).map(|top| self.stack.at(top)));
                    expect = match open {
                        Some(b'{') => Expect::Key,
                        Some(_) => Expect::Value,
                        None => return false,
                    };
                    Ok(i + 1)
                }
                (Expect::AfterValue | Expect::KeyOrClose | Expect::ValueOrClose, b'}' | b']') => {
                    let wanted = if b == b'}' { b'{' } else { b'[' };
                    let allowed = match expect {
                        Expect::KeyOrClose => b == b'}',
                        Expect::ValueOrClose => b == b']',
                        _ => true,
                    };
                    if !allowed {
                        return false;
                    }
                    if let Some(open) = inner.pop() {
                        if open != wanted {
                            return false;
                        }
                    } else if outer > 0 && self.stack.at(outer - 1) == wanted {
                        outer -= 1;
                    } else {
                        return false;
                    }
                    if inner.is_empty() && outer == 0 {
                        // The whole value is closed: what follows is not
                        // this check's business.
                        return true;
                    }
                    expect = Expect::AfterValue;
                    Ok(i + 1)
                }
                (Expect::Value | Expect::ValueOrClose, _) => {
                    expect = Expect::AfterValue;
                    self.strict_scalar(i, until)
                }
                _ => return false,
            };
            match token_end {
                Ok(end) => {
                    i = end;
                    tokens += 1;
                }
                // A token the reach's window cuts (a string longer than
                // the window) was strict as far as the check may read: it
                // counts; one the text cuts does not.
                Err(Stop::Cut) => {
                    let whole = usize::from(until < self.end);
                    return tokens + whole >= reach.min_tokens;
                }
                Err(Stop::Bad) => return false,
            }
        }
    }

    /// What [`Parser::continues`] from the quote at `i` needs first, when
    /// it expects a key or a value and `reach` asks for two tokens or more:
    /// a strict string there and then `:`, `,`, `}` or `]`, within the
    /// reach. A cheap test that spares the full check (and what it needs)
    /// for most quotes inside a string's text (`"item" data`).
    pub(super) fn string_then_punctuation(&self, i: usize, reach: Reach) -> bool {
        debug_assert!(reach.min_tokens >= 2);
        // Any other quote reads as no key or value at all.
        if self.src.get(i) != Some(&b'"') {
            return false;
        }
        let until = reach.until.min(self.end);
        let Ok(mut j) = self.strict_string(i, until) else {
            return false;
        };
        while j < until && is_ws(self.src[j]) {
            j += 1;
        }
        j < until && matches!(self.src[j], b':' | b',' | b'}' | b']')
    }

    /// Whether a strict JSON string opens at `i` and ends the text (only
    /// whitespace after it).
    pub(super) fn string_ends_text(&self, i: usize) -> bool {
        self.src.get(i) == Some(&b'"')
            && self.strict_string(i, self.end).is_ok_and(|mut j| {
                while j < self.end && is_ws(self.src[j]) {
                    j += 1;
                }
                j == self.end
            })
    }

    /// The end of the strict JSON string at `i` (a `"`).
    fn strict_string(&self, i: usize, until: usize) -> Result<usize, Stop> {
        let src = &self.src[..until];
        let mut j = i + 1;
        loop {
            j = find_stop_double(src, j);
            match src.get(j) {
                Some(b'"') => return Ok(j + 1),
                Some(b'\\') => j += 2,
                Some(_) => return Err(Stop::Bad),
                None => return Err(Stop::Cut),
            }
        }
    }

    /// The end of the strict JSON string, number or literal at `i`.
    pub(super) fn strict_scalar(&self, i: usize, until: usize) -> Result<usize, Stop> {
        let s = &self.src[..until];
        let b = s[i];
        if b == b'"' {
            return self.strict_string(i, until);
        }
        // Digits due at `j` and none there: cut short if the text ends there.
        let missing = |j: usize| if j >= s.len() { Stop::Cut } else { Stop::Bad };
        let boundary = |j: usize| -> Result<usize, Stop> {
            match s.get(j) {
                None => Err(Stop::Cut),
                Some(&c) if is_ws(c) || matches!(c, b',' | b'}' | b']' | b':') => Ok(j),
                Some(_) => Err(Stop::Bad),
            }
        };
        if b.is_ascii_lowercase() {
            for literal in [&b"true"[..], b"false", b"null"] {
                let end = (i + literal.len()).min(s.len());
                if s[i..end] == literal[..end - i] {
                    return if end - i < literal.len() {
                        Err(Stop::Cut)
                    } else {
                        boundary(end)
                    };
                }
            }
            return Err(Stop::Bad);
        }
        match number_end(s, i) {
            Ok(j) => boundary(j),
            Err(due) => Err(missing(due)),
        }
    }
}

/// The end of the strict JSON number at `i` in `s` (what follows it is the
/// caller's to check), or where digits are due and missing (after a leading
/// `0`'s digits, too: `01`).
pub(super) fn number_end(s: &[u8], i: usize) -> Result<usize, usize> {
    let digits = |mut j: usize| {
        let from = j;
        while j < s.len() && s[j].is_ascii_digit() {
            j += 1;
        }
        (j, j - from)
    };
    let mut j = i + usize::from(s.get(i) == Some(&b'-'));
    let (after, n) = digits(j);
    if n == 0 || (n > 1 && s[j] == b'0') {
        return Err(after);
    }
    j = after;
    if s.get(j) == Some(&b'.') {
        let (after, n) = digits(j + 1);
        if n == 0 {
            return Err(after);
        }
        j = after;
    }
    if matches!(s.get(j), Some(b'e' | b'E')) {
        j += 1;
        if matches!(s.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        let (after, n) = digits(j);
        if n == 0 {
            return Err(after);
        }
        j = after;
    }
    Ok(j)
}
