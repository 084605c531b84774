//! Numbers, literals (`true`, Python's `None`, `NaN`, ...) and bare words.

use super::continuation::number_end;
use super::lex::{is_ws, Ctx, LITERALS};
use super::parse::{fail, Parsed, Parser, Step};
use super::{RepairErrorKind, RepairKind};

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
        let mut exponent_empty = false;
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
            } else if self.token_end(d) {
                // `[2e, 3]`: an exponent with no digits.
                exponent_empty = true;
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
            let after = self.skip_ws_from(i).0;
            let alone = after >= self.end || matches!(self.src[after], b',' | b']');
            if ctx == Ctx::ArrayItem && sign.is_some() && i == start + 1 && !text_stops && alone {
                // `[-]`: a sign and no number is no item.
                self.record(RepairKind::LoneSign, start)?;
                self.replace(start, i, "");
                self.pos = i;
                return Ok(Parsed::Nothing);
            }
            if text_stops {
                // `-` or `.` where the text stops: dropped, and said so.
                self.record(RepairKind::LoneSign, start)?;
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
        if sign != Some(b'+') && int_len > 0 && !bare_dot && !exponent_cut && !exponent_empty {
            return Ok(Parsed::Value);
        }
        if sign == Some(b'+') || int_len == 0 || (bare_dot && !text_stops) || exponent_empty {
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
        // (Only a word that a `(`, a `.` or a space follows, or `new`, may
        // open a wrapper: most words are looked at no further.)
        let may_wrap = matches!(
            self.src[..self.end].get(end),
            Some(b'(' | b'.' | b' ' | b'\t')
        );
        if may_wrap {
            if let Some(paren) = self.wrapper_paren(start, end) {
                return self.type_wrapper(start, paren, ctx);
            }
        }
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

    /// If the word from `start` to `end` opens a wrapper around a value,
    /// where its `(` is: a MongoDB type's name (`NumberLong(`), or any
    /// name, dotted or after `new`, whose parentheses hold one string,
    /// number or literal, or nothing (`new Date("2020")`, `Foo(1)`, `Id()`).
    pub(super) fn wrapper_paren(&self, start: usize, end: usize) -> Option<usize> {
        let mut name = (start, end);
        if &self.src[start..end] == b"new" {
            let (next, _) = self.skip_ws_from(end);
            if next == end || !self.src.get(next).is_some_and(u8::is_ascii_alphabetic) {
                return None;
            }
            name = (next, self.word_end(next));
        }
        // A dotted name: `bson.Int64(`.
        while self.src[..self.end].get(name.1) == Some(&b'.')
            && self.src[..self.end]
                .get(name.1 + 1)
                .is_some_and(u8::is_ascii_alphabetic)
        {
            name.1 = self.word_end(name.1 + 1);
        }
        let (paren, _) = self.skip_ws_from(name.1);
        if paren >= self.end || self.src[paren] != b'(' {
            return None;
        }
        if name == (start, end) && MONGO_TYPES.contains(&&self.src[start..end]) {
            return Some(paren);
        }
        // Any other name: `(`, one scalar or nothing, `)`, on the spot.
        let (inner, _) = self.skip_ws_from(paren + 1);
        let after = match self.src[..self.end].get(inner)? {
            b')' => return Some(paren),
            _ if self.quote_at(inner).is_some() => {
                let (quote, len) = self.quote_at(inner)?;
                self.string_end(quote, inner + len)?
            }
            b'-' | b'0'..=b'9' => number_end(&self.src[..self.end], inner).ok()?,
            _ => inner + Some(self.literal_len(inner)).filter(|&len| len > 0)?,
        };
        let (close, _) = self.skip_ws_from(after);
        (self.src[..self.end].get(close) == Some(&b')')).then_some(paren)
    }

    /// `NumberLong("2")`, `new Date("2020")`: a wrapper's name (and `new`)
    /// and parentheses around a string, number or literal, removed; an
    /// empty one (`ObjectId()`) is `null`.
    fn type_wrapper(&mut self, start: usize, paren: usize, ctx: Ctx) -> Step<Parsed> {
        self.record(RepairKind::TypeWrapper, start)?;
        self.replace(start, paren + 1, "");
        self.pos = paren + 1;
        let Some(b) = self.next_token()? else {
            self.truncated()?;
            self.replace(self.pos, self.pos, "null");
            return Ok(Parsed::Value);
        };
        if b == b')' {
            self.replace(self.pos, self.pos + 1, "null");
            self.pos += 1;
            self.wrapper_semicolon(ctx);
            return Ok(Parsed::Value);
        }
        self.in_wrapper = true;
        let inner = match b {
            b'-' | b'+' | b'.' | b'0'..=b'9' => self.number(ctx),
            _ if self.quote_at(self.pos).is_some() => self.string(ctx),
            _ if self.literal_len(self.pos) > 0 => self.word(ctx),
            _ => Err(self.unexpected("expected a string or number in a MongoDB type")),
        };
        self.in_wrapper = false;
        let inner = inner?;
        if inner == Parsed::Nothing {
            self.replace(self.pos, self.pos, "null");
        }
        let end = self.skip_blank_and_comments(self.pos);
        match self.src.get(end) {
            Some(b')') if end < self.end => {
                self.replace(self.pos, end + 1, "");
                self.pos = end + 1;
                self.wrapper_semicolon(ctx);
            }
            None => self.truncated()?,
            _ if end >= self.end => self.truncated()?,
            _ => {
                return Err(fail(
                    RepairErrorKind::Unrepairable,
                    end,
                    "expected `)` after a MongoDB type's value",
                ))
            }
        }
        Ok(Parsed::Value)
    }

    /// Where a JavaScript regular expression literal that starts at `i`
    /// ends, after its flags (`/^[a-z]+$/i`), if one does, whole: a `/`
    /// that opens no comment, text on one line without quotes in which `\`
    /// escapes and `[...]` holds a class (a `/` inside it is text), the
    /// closing `/`, letters, and then whitespace, a `,`, a closing bracket
    /// or the end. (Without quotes: a `/` put before a value must not read
    /// on to a `/` inside a string, `{"a": /1, "u": "http://x"}`.)
    pub(super) fn regex_end(&self, i: usize) -> Option<usize> {
        let s = &self.src[..self.end.min(i + REGEX_WINDOW)];
        if matches!(s.get(i + 1), None | Some(b'/' | b'*')) {
            return None;
        }
        let mut j = i + 1;
        let mut class = false;
        loop {
            match *s.get(j)? {
                b'\n' | b'\r' | b'"' | b'\'' | b'`' => return None,
                b'\\' => j += 1,
                b'[' => class = true,
                b']' => class = false,
                b'/' if !class => break,
                _ => {}
            }
            j += 1;
        }
        j += 1;
        while s.get(j).is_some_and(u8::is_ascii_alphabetic) {
            j += 1;
        }
        let ends = match self.src[..self.end].get(j) {
            None => true,
            Some(&b) => is_ws(b) || matches!(b, b',' | b'}' | b']' | b')'),
        };
        ends.then_some(j)
    }

    /// A regular expression literal where a value belongs
    /// (`{"pattern": /^[a-z]+$/i}`): its text, kept as a string.
    pub(super) fn regex(&mut self) -> Step<Parsed> {
        let start = self.pos;
        let end = self.regex_end(start).expect("a regular expression");
        self.record(RepairKind::UnquotedString, start)?;
        self.quote_range(start, end);
        self.pos = end;
        Ok(Parsed::Value)
    }

    /// After a wrapper that is the whole value, a `;` that ends it as a
    /// statement (`callback(2);`), removed with it.
    fn wrapper_semicolon(&mut self, ctx: Ctx) {
        if ctx != Ctx::Top {
            return;
        }
        let semicolon = self.skip_blank_and_comments(self.pos);
        if self.src[..self.end].get(semicolon) == Some(&b';') {
            self.replace(self.pos, semicolon + 1, "");
            self.pos = semicolon + 1;
        }
    }

    /// A value without quotes, up to the next `,`, closing bracket, line
    /// break or quoted key, trailing whitespace trimmed; one that ends in a
    /// quote lacks its opening quote (`{"a": foo"}`).
    pub(super) fn unquoted_string(&mut self, start: usize) -> Step<Parsed> {
        let mut i = start;
        // Brackets the text opens are its own (`{text: a{b}}`).
        let mut depth = 0usize;
        loop {
            if i < self.end && matches!(self.src[i], b'{' | b'[') {
                let (inside, _) = self.skip_ws_from(i + 1);
                if inside < self.end
                    && (matches!(self.src[inside], b'0'..=b'9' | b'-' | b'"' | b'{' | b'[')
                        || self.literal_len(inside) > 0)
                {
                    // `Here you go: [1]`: a value inside text without quotes.
                    return Err(fail(
                        RepairErrorKind::Unrepairable,
                        inside,
                        "text without quotes holds a bracket and a value",
                    ));
                }
                depth += 1;
            } else if i < self.end && depth > 0 && matches!(self.src[i], b'}' | b']') {
                depth -= 1;
                i += 1;
                continue;
            }
            if self.ends_unquoted(i) {
                break;
            }
            if i > start && is_ws(self.src[i - 1]) && self.quote_at(i).is_some() {
                // A string after the text: the next member or item.
                if matches!(self.after_string(i), None | Some(b':' | b',' | b'}' | b']')) {
                    break;
                }
            }
            let key_or_member = match self.src[i] {
                b'"' => self.src.get(self.skip_ws_from(i + 1).0) == Some(&b':'),
                b':' => self.src.get(self.skip_ws_from(i + 1).0) == Some(&b'"'),
                _ => false,
            };
            if key_or_member {
                return Err(fail(
                    RepairErrorKind::Unrepairable,
                    start,
                    "text without quotes holds a key or a member (`\":`, `:\"`)",
                ));
            }
            i += 1;
        }
        let mut to = i;
        while to > start && is_ws(self.src[to - 1]) {
            to -= 1;
        }
        if let Some(at) = self.value_inside(start, to) {
            // `"a": x 12`: junk before a value, not one text.
            return Err(fail(
                RepairErrorKind::Unrepairable,
                at,
                "a number or literal after text without quotes",
            ));
        }
        if let Some(quote) = self.src[start..to.saturating_sub(1)]
            .iter()
            .position(|&b| b == b'"')
        {
            // `#["a"]`: a string inside text without quotes.
            return Err(fail(
                RepairErrorKind::Unrepairable,
                start + quote,
                "a string inside text without quotes",
            ));
        }
        if to - start >= 2 && self.src[to - 1] == b'"' {
            self.record(RepairKind::MissingQuote, start)?;
            self.quote_range(start, to - 1);
            self.skip_to(to);
            self.pos = i;
            return Ok(Parsed::Value);
        }
        self.record(RepairKind::UnquotedString, start)?;
        self.quote_range(start, to);
        self.pos = i;
        Ok(Parsed::Value)
    }
}

impl Parser<'_> {
    /// Whether text without quotes ends before `i`: the end, a `,`, a
    /// closing bracket, a line break, a fence or a JSONP wrapper's `)`.
    fn ends_unquoted(&self, i: usize) -> bool {
        i >= self.end
            || matches!(self.src[i], b',' | b'}' | b']' | b'\n' | b'\r')
            || self.fence_at(i)
            || (self.jsonp && self.src[i] == b')')
    }

    /// Where a word of the text from `start` to `to`, after the first, is a
    /// JSON number or literal on its own, if one is.
    fn value_inside(&self, start: usize, to: usize) -> Option<usize> {
        let text = &self.src[start..to];
        let mut i = text.iter().position(|&b| is_ws(b))?;
        while i < text.len() {
            while i < text.len() && is_ws(text[i]) {
                i += 1;
            }
            let word = i + text[i..]
                .iter()
                .position(|&b| is_ws(b))
                .unwrap_or(text.len() - i);
            let w = &text[i..word];
            // By JSON's grammar: `1e999` is a number, though no float.
            let number = number_end(w, 0) == Ok(w.len());
            let literal = LITERALS.iter().any(|(name, ..)| name.as_bytes() == w);
            if number || literal {
                return Some(start + i);
            }
            i = word;
        }
        None
    }
}

/// How far a regular expression literal is looked for (see
/// [`Parser::regex_end`]), so that the look is bounded.
const REGEX_WINDOW: usize = 1024;

/// MongoDB types whose wrapper is removed around their value.
const MONGO_TYPES: &[&[u8]] = &[
    b"ObjectId",
    b"ISODate",
    b"Date",
    b"NumberLong",
    b"NumberInt",
    b"NumberDecimal",
    b"NumberDouble",
    b"Decimal128",
    b"UUID",
];
