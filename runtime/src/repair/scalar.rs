//! Numbers, literals (`true`, Python's `None`, `NaN`, ...) and bare words.

use super::lex::{is_ws, Ctx, LITERALS};
use super::parse::{Parsed, Parser, Step};
use super::RepairKind;

impl Parser<'_> {
    /// A number, or what starts like one (`-Infinity`, `2024-01-15`).
    pub(super) fn number(&mut self, ctx: Ctx) -> Step<Parsed> {
        let s = self.src;
        let end = self.end;
        let start = self.pos;
        let digits = |mut i: usize| {
            while i < end && s[i].is_ascii_digit() {
                i += 1;
            }
            i
        };
        let mut i = start;
        let sign = match s[i] {
            b'-' | b'+' => {
                i += 1;
                Some(s[start])
            }
            _ => None,
        };
        if sign.is_some() && i < end && matches!(s[i], b'I' | b'N') {
            return self.signed_non_finite(start, i, ctx);
        }
        let int_start = i;
        i = digits(i);
        let int_len = i - int_start;
        let mut frac = None;
        let mut bare_dot = false;
        if i < end && s[i] == b'.' {
            let k = digits(i + 1);
            if k > i + 1 {
                frac = Some((i, k));
            } else {
                bare_dot = true;
            }
            i = k;
        }
        let mut exponent = None;
        let mut exponent_cut = false;
        if i < end && (s[i] == b'e' || s[i] == b'E') && (int_len > 0 || frac.is_some()) {
            let mut k = i + 1;
            if k < end && (s[k] == b'+' || s[k] == b'-') {
                k += 1;
            }
            let d = digits(k);
            if d > k {
                exponent = Some((i, d));
                i = d;
            } else if d >= end {
                exponent_cut = true;
                i = d;
            } else {
                return self.not_a_number(start, ctx);
            }
        }
        let text_stops = i >= end;
        if !self.token_end(i) {
            return self.not_a_number(start, ctx);
        }
        if int_len == 0 && frac.is_none() {
            if text_stops {
                // `-` or `.` where the text stops: dropped.
                self.replace(start, i, "");
                self.pos = i;
                return Ok(Parsed::Nothing);
            }
            return self.not_a_number(start, ctx);
        }
        if int_len > 1 && s[int_start] == b'0' {
            // `007`: the zeros may matter (a code, an id), so keep the text.
            self.record(RepairKind::NumberFormat, start)?;
            self.quote_range(start, i);
            self.pos = i;
            return Ok(Parsed::Value);
        }
        self.pos = i;
        if sign != Some(b'+') && int_len > 0 && !bare_dot && !exponent_cut {
            return Ok(Parsed::Value);
        }
        if sign == Some(b'+') || int_len == 0 || (bare_dot && !text_stops) {
            self.record(RepairKind::NumberFormat, start)?;
        }
        if (bare_dot && text_stops) || exponent_cut {
            self.truncated()?;
        }
        self.flush(start);
        if sign == Some(b'-') {
            self.out.push('-');
        }
        if int_len == 0 {
            self.out.push('0');
        } else {
            self.out
                .push_str(&self.text[int_start..int_start + int_len]);
        }
        if let Some((from, to)) = frac {
            self.out.push_str(&self.text[from..to]);
        }
        if let Some((from, to)) = exponent {
            self.out.push_str(&self.text[from..to]);
        }
        self.skip_to(i);
        Ok(Parsed::Value)
    }

    /// `-Infinity`, `+NaN` (or where the text stops, `-Inf`).
    fn signed_non_finite(&mut self, start: usize, word: usize, ctx: Ctx) -> Step<Parsed> {
        let end = self.word_end(word);
        let name = &self.src[word..end];
        let whole = (name == b"Infinity" || name == b"NaN") && self.token_end(end);
        let cut = end >= self.end && (b"Infinity".starts_with(name) || b"NaN".starts_with(name));
        if !whole && !cut {
            return self.not_a_number(start, ctx);
        }
        self.record(RepairKind::NonFiniteNumber, start)?;
        if !whole {
            self.pos = end;
            self.truncated()?;
        }
        self.pos = end;
        self.replace(start, end, "null");
        Ok(Parsed::Value)
    }

    /// A token that is not a number after all: a string without quotes
    /// (`2024-01-15`), except as the whole text, where it is prose.
    fn not_a_number(&mut self, start: usize, ctx: Ctx) -> Step<Parsed> {
        if ctx == Ctx::Top {
            self.pos = start;
            return Err(self.unexpected("expected a value"));
        }
        self.unquoted_string(start)
    }

    /// A bare word: a literal, a literal cut short by the end of the text, or
    /// a string without quotes.
    pub(super) fn word(&mut self, ctx: Ctx) -> Step<Parsed> {
        let start = self.pos;
        let end = self.word_end(start);
        if self.token_end(end) {
            let word = &self.src[start..end];
            if let Some((_, json, kind)) =
                LITERALS.iter().find(|(name, ..)| name.as_bytes() == word)
            {
                if let Some(kind) = kind {
                    self.record(*kind, start)?;
                    self.replace(start, end, json);
                }
                self.pos = end;
                return Ok(Parsed::Value);
            }
            if end >= self.end {
                // `tru` where the text stops: complete it if only one JSON
                // literal can follow (`N` is None or NaN: null either way).
                let mut completions = LITERALS
                    .iter()
                    .filter(|(name, ..)| name.as_bytes().starts_with(word))
                    .map(|(_, json, _)| json);
                if let Some(json) = completions.next() {
                    if completions.all(|other| other == json) {
                        self.pos = end;
                        self.truncated()?;
                        self.replace(start, end, json);
                        return Ok(Parsed::Value);
                    }
                }
            }
        }
        self.not_a_number(start, ctx)
    }

    /// A value without quotes, up to the next `,`, closing bracket or line
    /// break, trailing whitespace trimmed.
    pub(super) fn unquoted_string(&mut self, start: usize) -> Step<Parsed> {
        let mut i = start;
        while i < self.end
            && !matches!(self.src[i], b',' | b'}' | b']' | b'\n' | b'\r' | b'`')
            && !(self.jsonp && self.src[i] == b')')
        {
            i += 1;
        }
        let mut to = i;
        while to > start && is_ws(self.src[to - 1]) {
            to -= 1;
        }
        self.record(RepairKind::UnquotedString, start)?;
        self.quote_range(start, to);
        self.pos = i;
        Ok(Parsed::Value)
    }
}
