//! Objects and arrays: commas (trailing, leading, repeated, missing), colons,
//! missing values, ellipses, mismatched brackets, and closing what the text
//! leaves open.

use super::lex::Ctx;
use super::parse::{fail, Parsed, Parser, Step};
use super::{RepairErrorKind, RepairKind};

impl Parser<'_> {
    /// Removes a comma read earlier, recording it unless an ellipsis or the
    /// end of the text accounts for it.
    fn drop_comma(&mut self, comma: Comma, kind: Option<RepairKind>) -> Step {
        if let Some(kind) = kind.filter(|_| !comma.silent) {
            self.record(kind, comma.in_at)?;
        }
        if self.copied <= comma.in_at {
            self.replace(comma.in_at, comma.in_at + 1, "");
        } else {
            self.out.remove(comma.out_at);
        }
        Ok(())
    }

    /// Closes a container with `closer`: at the current position, or at the
    /// end of the text, keeping what was read.
    fn close(&mut self, closer: &str) {
        self.replace(self.pos, self.pos, closer);
    }

    pub(super) fn object(&mut self, depth: usize) -> Step<Parsed> {
        self.enter(depth)?;
        self.pos += 1;
        self.open_objects += 1;
        self.stack.push(b'{');
        let mut members = 0usize;
        let mut comma: Option<Comma> = None;
        let mut after_ellipsis = false;
        // Where the last value ended, in the input and in the output.
        let mut value_end = (0usize, 0usize);
        loop {
            let Some(b) = self.next_token()? else {
                if let Some(comma) = comma.take() {
                    self.drop_comma(comma, None)?;
                }
                self.truncated()?;
                self.close("}");
                break;
            };
            match b {
                b'}' => {
                    if let Some(comma) = comma.take() {
                        self.drop_comma(comma, Some(RepairKind::TrailingComma))?;
                    }
                    self.pos += 1;
                    break;
                }
                b']' if self.open_arrays > 0 => {
                    if let Some(comma) = comma.take() {
                        self.drop_comma(comma, Some(RepairKind::TrailingComma))?;
                    }
                    self.record(RepairKind::MissingBracket, self.pos)?;
                    self.close("}");
                    break;
                }
                b']' => {
                    self.record(RepairKind::StrayBracket, self.pos)?;
                    self.replace(self.pos, self.pos + 1, "");
                    self.pos += 1;
                }
                b'{' if members > 0
                    && self.stack.len() >= 2
                    && self.stack.at(self.stack.len() - 2) == b'[' =>
                {
                    // `[{"a": 1 {"b": 2}]`: the object ends where the next
                    // item of the array begins.
                    if let Some(comma) = comma.take() {
                        self.drop_comma(comma, None)?;
                    }
                    self.record(RepairKind::MissingBracket, self.pos)?;
                    self.close("}");
                    break;
                }
                b',' => {
                    self.comma(&mut comma, members, &mut after_ellipsis)?;
                }
                b'.' | 0xE2 if self.ellipsis_len(self.pos) > 0 => {
                    let len = self.ellipsis_len(self.pos);
                    self.record(RepairKind::Ellipsis, self.pos)?;
                    self.replace(self.pos, self.pos + len, "");
                    self.pos += len;
                    if let Some(comma) = &mut comma {
                        comma.silent = true;
                    }
                    after_ellipsis = true;
                }
                _ => {
                    after_ellipsis = false;
                    let missing_comma = members > 0 && comma.is_none();
                    if missing_comma {
                        self.record(RepairKind::MissingComma, value_end.0)?;
                        self.insert_at(value_end.0, value_end.1, ',');
                    }
                    let key_at = self.pos;
                    self.key()?;
                    let key_end = (self.pos, self.out_at(self.pos));
                    let value = match self.next_token()? {
                        None => None,
                        Some(b':') => {
                            self.pos += 1;
                            let next = self.extra_colons()?;
                            Some(self.member_value(next, depth)?)
                        }
                        Some(b'=') => {
                            let len = if self.src.get(self.pos + 1) == Some(&b'>') {
                                2
                            } else {
                                1
                            };
                            self.record(RepairKind::EqualsForColon, self.pos)?;
                            self.replace(self.pos, self.pos + len, ":");
                            self.pos += len;
                            let next = self.next_token()?;
                            Some(self.member_value(next, depth)?)
                        }
                        Some(b',' | b'}' | b']') => {
                            return Err(fail(
                                RepairErrorKind::Unrepairable,
                                key_at,
                                "a key without a colon or a value (a set is not JSON)",
                            ));
                        }
                        Some(_) if self.stray_quote_after_key(key_end.0) => {
                            return Err(self.unexpected("a stray quote after a key"));
                        }
                        Some(_) if self.text_before_colon() => {
                            return Err(self.unexpected("text between a key and its colon"));
                        }
                        Some(_) if self.starts_value(self.pos) => {
                            self.record(RepairKind::MissingColon, key_end.0)?;
                            self.insert_at(key_end.0, key_end.1, ':');
                            Some(self.member_value(self.token(), depth)?)
                        }
                        Some(_) => return Err(self.unexpected("expected `:` after a key")),
                    };
                    if value != Some(Parsed::Value) {
                        // The text stops before this key's value: the key
                        // stays, with null for the value it does not give.
                        self.record(RepairKind::UnfinishedKey, key_at)?;
                        self.truncated()?;
                        let null = if value.is_none() { ": null" } else { "null" };
                        self.replace(self.pos, self.pos, null);
                        self.close("}");
                        break;
                    }
                    members += 1;
                    comma = None;
                    value_end = (self.pos, self.out_at(self.pos));
                }
            }
        }
        self.open_objects -= 1;
        self.stack.pop();
        Ok(Parsed::Value)
    }

    /// Whether the quote here is stray, after a key that ends at `key_end`:
    /// a quote right after the key's closing quote (`"a"" 1`), or one before
    /// the colon (`"a" ": 1`, `"a"”: 1`).
    fn stray_quote_after_key(&self, key_end: usize) -> bool {
        let Some((_, len)) = self.quote_at(self.pos) else {
            return false;
        };
        let doubled = self.pos == key_end && key_end > 0 && self.src[key_end - 1] == b'"';
        doubled || self.src.get(self.skip_ws_from(self.pos + len).0) == Some(&b':')
    }

    /// Whether an unquoted word here runs into a colon (`"a"0: 1`), so that
    /// it stands between a key and its colon rather than being the value.
    fn text_before_colon(&self) -> bool {
        if self.quote_at(self.pos).is_some() {
            return false;
        }
        self.src[self.pos..self.end.min(self.pos + 256)]
            .iter()
            .take_while(|&&b| !matches!(b, b',' | b'}' | b']' | b'\n' | b'"'))
            .any(|&b| b == b':')
    }

    /// Colons after the first (`{"a":: 1}`), removed; then the next token
    /// (see [`Parser::next_token`]).
    fn extra_colons(&mut self) -> Step<Option<u8>> {
        loop {
            let next = self.next_token()?;
            if next != Some(b':') {
                return Ok(next);
            }
            self.record(RepairKind::ExtraColon, self.pos)?;
            self.replace(self.pos, self.pos + 1, "");
            self.pos += 1;
        }
    }

    /// The value of an object member, after the colon and whitespace, which
    /// starts with `next` (`None` where the text ends).
    #[inline(always)]
    fn member_value(&mut self, next: Option<u8>, depth: usize) -> Step<Parsed> {
        let Some(b) = next else {
            return Ok(Parsed::Nothing);
        };
        match b {
            b',' | b'}' | b']' => {
                self.record(RepairKind::MissingValue, self.pos)?;
                self.replace(self.pos, self.pos, "null");
                Ok(Parsed::Value)
            }
            b'.' | 0xE2 if self.ellipsis_len(self.pos) > 0 => {
                let len = self.ellipsis_len(self.pos);
                self.record(RepairKind::Ellipsis, self.pos)?;
                self.replace(self.pos, self.pos + len, "null");
                self.pos += len;
                Ok(Parsed::Value)
            }
            _ => self.value_from(b, Ctx::ObjectValue, depth),
        }
    }

    /// A comma between members or items: kept once, extra ones dropped.
    #[inline(always)]
    fn comma(
        &mut self,
        comma: &mut Option<Comma>,
        count: usize,
        after_ellipsis: &mut bool,
    ) -> Step {
        if count > 0 && comma.is_none() && !*after_ellipsis {
            // The usual comma, after a value: kept, perhaps dropped later.
            *comma = Some(Comma {
                in_at: self.pos,
                out_at: self.out_at(self.pos),
                silent: false,
            });
            self.pos += 1;
            return Ok(());
        }
        self.odd_comma(comma, count, after_ellipsis)
    }

    /// A comma before any value, after another, or after an ellipsis.
    #[inline(never)]
    fn odd_comma(
        &mut self,
        comma: &mut Option<Comma>,
        count: usize,
        after_ellipsis: &mut bool,
    ) -> Step {
        let at = self.pos;
        self.pos += 1;
        if std::mem::take(after_ellipsis) && (comma.is_some() || count == 0) {
            // `[1, ..., 2]`, `[..., 2]`: the comma belongs to the removed ellipsis.
            self.replace(at, at + 1, "");
            return Ok(());
        }
        if count == 0 {
            self.record(RepairKind::LeadingComma, at)?;
            self.replace(at, at + 1, "");
        } else if comma.is_some() {
            self.record(RepairKind::ExtraComma, at)?;
            self.replace(at, at + 1, "");
        } else {
            *comma = Some(Comma {
                in_at: at,
                out_at: self.out_at(at),
                silent: false,
            });
        }
        Ok(())
    }

    pub(super) fn array(&mut self, depth: usize) -> Step<Parsed> {
        self.enter(depth)?;
        self.pos += 1;
        self.open_arrays += 1;
        self.stack.push(b'[');
        let mut items = 0usize;
        let mut comma: Option<Comma> = None;
        let mut after_ellipsis = false;
        let mut value_end = (0usize, 0usize);
        loop {
            let Some(b) = self.next_token()? else {
                if let Some(comma) = comma.take() {
                    self.drop_comma(comma, None)?;
                }
                self.truncated()?;
                self.close("]");
                break;
            };
            match b {
                b']' => {
                    if let Some(comma) = comma.take() {
                        self.drop_comma(comma, Some(RepairKind::TrailingComma))?;
                    }
                    self.pos += 1;
                    break;
                }
                b'}' if self.open_objects > 0 => {
                    if let Some(comma) = comma.take() {
                        self.drop_comma(comma, Some(RepairKind::TrailingComma))?;
                    }
                    self.record(RepairKind::MissingBracket, self.pos)?;
                    self.close("]");
                    break;
                }
                b'}' => {
                    self.record(RepairKind::StrayBracket, self.pos)?;
                    self.replace(self.pos, self.pos + 1, "");
                    self.pos += 1;
                }
                b',' => self.comma(&mut comma, items, &mut after_ellipsis)?,
                b'.' | 0xE2 if self.ellipsis_len(self.pos) > 0 => {
                    let len = self.ellipsis_len(self.pos);
                    self.record(RepairKind::Ellipsis, self.pos)?;
                    self.replace(self.pos, self.pos + len, "");
                    self.pos += len;
                    if let Some(comma) = &mut comma {
                        comma.silent = true;
                    }
                    after_ellipsis = true;
                }
                _ => {
                    after_ellipsis = false;
                    let missing_comma = items > 0 && comma.is_none();
                    if missing_comma {
                        self.record(RepairKind::MissingComma, value_end.0)?;
                        self.insert_at(value_end.0, value_end.1, ',');
                    }
                    if self.value_from(b, Ctx::ArrayItem, depth)? == Parsed::Nothing {
                        if missing_comma {
                            self.log.undo_last(RepairKind::MissingComma);
                            self.out.remove(value_end.1);
                        }
                        // The loop closes the array at the end of the text.
                        continue;
                    }
                    items += 1;
                    comma = None;
                    value_end = (self.pos, self.out_at(self.pos));
                }
            }
        }
        self.open_arrays -= 1;
        self.stack.pop();
        Ok(Parsed::Value)
    }
}

/// A comma written to the output, which may turn out to be trailing.
#[derive(Clone, Copy)]
struct Comma {
    in_at: usize,
    out_at: usize,
    /// It preceded an ellipsis that was removed: dropping it is part of that
    /// repair.
    silent: bool,
}
