//! Strings in any quotes, written with `"`: quotes, escapes, control
//! characters, unfinished strings; and keys, quoted or not.

use super::lex::{is_key_byte, rfind, Ctx, Quote};
use super::parse::{Parsed, Parser, Step};
use super::RepairKind;

/// The bytes at which the fast loop of a string stops, per kind of quote.
const fn stops(quote: Quote) -> [bool; 256] {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = true;
        b += 1;
    }
    table[b'"' as usize] = true;
    table[b'\\' as usize] = true;
    match quote {
        Quote::Double => {}
        Quote::Single => table[b'\'' as usize] = true,
        Quote::CurlyDouble | Quote::CurlySingle => {
            table[b'\'' as usize] = true;
            // The first byte of `“ ” ‘ ’` (U+2018..U+201D).
            table[0xE2] = true;
        }
    }
    table
}

const STOPS_DOUBLE: [bool; 256] = stops(Quote::Double);
const STOPS_SINGLE: [bool; 256] = stops(Quote::Single);
const STOPS_CURLY: [bool; 256] = stops(Quote::CurlyDouble);

impl Parser<'_> {
    /// An object's key: a string, or an unquoted name followed by `:`.
    pub(super) fn key(&mut self) -> Step {
        if self.quote_at(self.pos).is_some() {
            return self.string(Ctx::Key).map(|_| ());
        }
        let start = self.pos;
        let mut i = start;
        while i < self.end && is_key_byte(self.src[i]) && !self.comment_at(i) {
            i += 1;
        }
        let (next, _) = self.skip_ws_from(i);
        let followed =
            next >= self.end || self.src[next] == b':' || (self.src[next] == b')' && self.jsonp);
        if i == start || !followed {
            return Err(self.unexpected("expected a key followed by `:`"));
        }
        self.record(RepairKind::UnquotedKey, start)?;
        self.pos = i;
        self.quote_range(start, i);
        Ok(())
    }

    /// Replaces `text[from..to]` with it as a JSON string.
    pub(super) fn quote_range(&mut self, from: usize, to: usize) {
        self.flush(from);
        self.out.push('"');
        let mut run = from;
        for i in from..to {
            let b = self.src[i];
            if b == b'"' || b == b'\\' || b < 0x20 {
                self.out.push_str(&self.text[run..i]);
                push_escaped(&mut self.out, b);
                run = i + 1;
            }
        }
        self.out.push_str(&self.text[run..to]);
        self.out.push('"');
        self.skip_to(to);
    }

    /// A string in any quotes, written with `"`.
    pub(super) fn string(&mut self, ctx: Ctx) -> Step<Parsed> {
        let Some((quote, open_len)) = self.quote_at(self.pos) else {
            return Err(self.unexpected("expected a string"));
        };
        let open_at = self.pos;
        let mark = self.output_mark();
        // Only in a fence can the string be read again (below).
        let since = self.in_fence.then(|| self.log.since());
        match quote {
            Quote::Double => {}
            Quote::Single => self.record(RepairKind::SingleQuotes, open_at)?,
            Quote::CurlyDouble | Quote::CurlySingle => {
                self.record(RepairKind::CurlyQuotes, open_at)?
            }
        }
        let stops = match quote {
            Quote::Double => &STOPS_DOUBLE,
            Quote::Single => &STOPS_SINGLE,
            Quote::CurlyDouble | Quote::CurlySingle => &STOPS_CURLY,
        };
        if quote != Quote::Double {
            self.replace(open_at, open_at + open_len, "\"");
        }
        self.pos += open_len;
        let mut control_recorded = false;
        loop {
            self.pos += self.src[self.pos..self.end]
                .iter()
                .position(|&b| stops[b as usize])
                .unwrap_or(self.end - self.pos);
            if self.pos >= self.end {
                if self.in_fence && self.end == self.src.len() {
                    if let Some(fence) = rfind(&self.src[open_at + open_len..self.end], b"```") {
                        // An unfinished string in a fenced block: the fence
                        // closes the block, so the string ends before it.
                        self.reset_output(mark);
                        if let Some(since) = &since {
                            self.log.reset(since);
                        }
                        // The line break before the fence belongs to it.
                        let content = open_at + open_len;
                        let mut end = content + fence;
                        while end > content && matches!(self.src[end - 1], b' ' | b'\t') {
                            end -= 1;
                        }
                        if end > content && self.src[end - 1] == b'\n' {
                            end -= 1;
                        }
                        if end > content && self.src[end - 1] == b'\r' {
                            end -= 1;
                        }
                        self.pos = open_at;
                        self.end = end;
                        return self.string(ctx);
                    }
                }
                self.truncated()?;
                self.replace(self.pos, self.pos, "\"");
                return Ok(Parsed::Value);
            }
            let at = self.pos;
            let b = self.src[at];
            match b {
                b'\\' => self.escape(quote)?,
                b'"' if matches!(quote, Quote::Double | Quote::CurlyDouble)
                    && self.closes(ctx, at + 1) =>
                {
                    self.pos += 1;
                    return Ok(Parsed::Value);
                }
                b'"' => {
                    if quote == Quote::Double {
                        self.record(RepairKind::UnescapedQuote, at)?;
                    }
                    self.replace(at, at + 1, "\\\"");
                    self.pos += 1;
                }
                b'\''
                    if matches!(quote, Quote::Single | Quote::CurlySingle)
                        && self.closes(ctx, at + 1) =>
                {
                    self.replace(at, at + 1, "\"");
                    self.pos += 1;
                    return Ok(Parsed::Value);
                }
                b'\'' => self.pos += 1,
                0xE2 => {
                    if let Some((closer, len)) = self.quote_at(at) {
                        if closer == quote && self.closes(ctx, at + len) {
                            self.replace(at, at + len, "\"");
                            self.pos += len;
                            return Ok(Parsed::Value);
                        }
                    }
                    // Some other character starting with 0xE2: three bytes.
                    self.pos += 3;
                }
                _ => {
                    if !control_recorded {
                        self.record(RepairKind::ControlCharacter, at)?;
                        control_recorded = true;
                    }
                    self.flush(at);
                    push_escaped(&mut self.out, b);
                    self.skip_to(at + 1);
                    self.pos += 1;
                }
            }
        }
    }

    /// A backslash in a string.
    fn escape(&mut self, quote: Quote) -> Step {
        let at = self.pos;
        let Some(&next) = self.src.get(at + 1).filter(|_| at + 1 < self.end) else {
            // A backslash where the text stops: dropped with the truncation.
            self.replace(at, at + 1, "");
            self.pos += 1;
            return Ok(());
        };
        match next {
            b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => self.pos += 2,
            b'u' => {
                let digits = self.src[at + 2..self.end]
                    .iter()
                    .take(4)
                    .take_while(|b| b.is_ascii_hexdigit())
                    .count();
                if digits == 4 {
                    self.pos += 6;
                } else if at + 2 + digits >= self.end {
                    // `\u12` where the text stops: dropped with the truncation.
                    self.replace(at, self.end, "");
                    self.pos = self.end;
                } else {
                    self.record(RepairKind::InvalidEscape, at)?;
                    self.replace(at, at + 1, "\\\\");
                    self.pos += 1;
                }
            }
            b'\'' => {
                if !matches!(quote, Quote::Single | Quote::CurlySingle) {
                    self.record(RepairKind::InvalidEscape, at)?;
                }
                self.replace(at, at + 2, "'");
                self.pos += 2;
            }
            _ => {
                // `\d`, `C:\Users`: the backslash was meant literally.
                self.record(RepairKind::InvalidEscape, at)?;
                self.replace(at, at + 1, "\\\\");
                self.pos += 1;
            }
        }
        Ok(())
    }
}

/// Writes the JSON escape of a byte that cannot appear raw in a string.
fn push_escaped(out: &mut String, b: u8) {
    match b {
        b'"' => out.push_str("\\\""),
        b'\\' => out.push_str("\\\\"),
        b'\n' => out.push_str("\\n"),
        b'\r' => out.push_str("\\r"),
        b'\t' => out.push_str("\\t"),
        0x08 => out.push_str("\\b"),
        0x0C => out.push_str("\\f"),
        _ => {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.push_str("\\u00");
            out.push(HEX[(b >> 4) as usize] as char);
            out.push(HEX[(b & 0xF) as usize] as char);
        }
    }
}
