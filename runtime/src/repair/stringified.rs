//! Double-encoded arguments: a JSON string whose content is a JSON object or
//! array (`"{\"city\": \"Paris\"}"`), decoded when the options allow
//! [`RepairKind::StringifiedJson`]. Only the whole value is decoded, never a
//! string inside it, since a string field may legitimately carry JSON text.

use std::borrow::Cow;

use serde::de::IgnoredAny;

use super::lex::is_ws;
use super::log::Log;
use super::string::find_stop_double;
use super::{Repair, RepairKind, RepairOptions, Repaired};

/// `text` is valid JSON: if it is a string holding an object or array, that
/// value (repaired as needed).
pub(super) fn unwrap_valid(text: &str, options: &RepairOptions) -> Option<Repaired<'static>> {
    let bytes = text.as_bytes();
    let start = bytes.iter().position(|&b| !is_ws(b))?;
    if bytes[start] != b'"' {
        return None;
    }
    let end = bytes.iter().rposition(|&b| !is_ws(b))? + 1;
    unwrap_literal(text, (start, end), options)
}

/// `text` is a JSON string literal and nothing else (but whitespace): the
/// value it holds if its content is a JSON object or array
/// (`Some(Some(_))`), or `Some(None)` if it is a valid string holding
/// anything else, which comes back as it is. `None` when that is not known
/// without a full parse: the text is not one literal, or its content does
/// not decode (a lone surrogate), or the options forbid the unwrap.
///
/// One pass that both checks the literal and decodes it, in place of
/// checking the text with a parser first.
pub(super) fn unwrap_text(
    text: &str,
    options: &RepairOptions,
) -> Option<Option<Repaired<'static>>> {
    if !options.allows(RepairKind::StringifiedJson) {
        return None;
    }
    let bytes = text.as_bytes();
    let start = bytes.iter().position(|&b| !is_ws(b))?;
    let end = bytes.iter().rposition(|&b| !is_ws(b))? + 1;
    if end - start < 2 || bytes[start] != b'"' || bytes[end - 1] != b'"' {
        return None;
    }
    // Decoding fails at an unescaped quote, so a text of two literals
    // (`"a" "b"`) or a final quote that is escaped (`"a\"`) is `None`.
    let content = unescape(&text[start + 1..end - 1])?;
    Some(unwrap_content(content, start))
}

/// `text[start..end]` is a valid JSON string literal: if its whole content is
/// a JSON object or array that parses as it is, that value. Content that
/// would need repairs (`"["`, `"{a: b}"`, `"[1,]"`) stays a string: a string
/// may carry text that only looks like JSON.
pub(super) fn unwrap_literal(
    text: &str,
    (start, end): (usize, usize),
    options: &RepairOptions,
) -> Option<Repaired<'static>> {
    if !options.allows(RepairKind::StringifiedJson) {
        return None;
    }
    let content = unescape(&text[start + 1..end - 1])?;
    unwrap_content(content, start)
}

/// The decoded `content` of the literal at `start`, as the JSON it holds if
/// it is an object or array that parses as it is.
fn unwrap_content(content: String, start: usize) -> Option<Repaired<'static>> {
    if !matches!(content.trim_start().as_bytes().first(), Some(b'{' | b'[')) {
        return None;
    }
    serde_json::from_str::<IgnoredAny>(&content).ok()?;
    Some(Repaired {
        json: Cow::Owned(content),
        repairs: vec![Repair {
            kind: RepairKind::StringifiedJson,
            at: start,
        }],
        omitted: Vec::new(),
    })
}

/// `{\"a\": 1}`: if `text` is JSON written as the content of a string (it
/// starts with `{\"`, `[\"` or `\"` and every quote in it is escaped), that
/// JSON, repaired.
pub(super) fn unwrap_escaped(text: &str, options: &RepairOptions) -> Option<Repaired<'static>> {
    if !options.allows(RepairKind::EscapedJson) {
        return None;
    }
    let bytes = text.as_bytes();
    let start = bytes.iter().position(|&b| !is_ws(b))?;
    let end = bytes.iter().rposition(|&b| !is_ws(b))? + 1;
    let after_open = start
        + bytes[start..]
            .iter()
            .position(|&b| !is_ws(b) && b != b'{' && b != b'[')?;
    if !bytes[after_open..].starts_with(b"\\\"") {
        return None;
    }
    // Every quote is escaped: an unescaped one means a stray backslash, not
    // escaped JSON.
    // (`\\"` is an escaped quote in a string inside, and the last quote may
    // have lost its backslash: `\"hello"`.)
    let mut i = start;
    while i < end {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' if i + 1 == end || bytes[..i].ends_with(b"\\\\") => i += 1,
            b'"' => return None,
            _ => i += 1,
        }
    }
    // A backslash where the text stops (`\"hello\`) was cut off.
    let end = if bytes[..end].ends_with(b"\\") && !bytes[..end].ends_with(b"\\\\") {
        end - 1
    } else {
        end
    };
    // (The quotes the scan let through stay quotes: `\\"` was an escaped
    // quote inside a string whose backslash was escaped instead.)
    let (content, offsets) = decode(&text[start..end], start, true)?;
    let inner_options = options.without(&[RepairKind::EscapedJson, RepairKind::StringifiedJson]);
    let inner = super::repair_with(&content, &inner_options).ok()?;
    let mut log = Log::new();
    log.record(Repair {
        kind: RepairKind::EscapedJson,
        at: start,
    });
    for repair in inner.repairs() {
        log.record(Repair {
            kind: repair.kind,
            at: offsets[repair.at],
        });
    }
    for &(kind, n) in &inner.omitted {
        log.count_more(kind, n);
    }
    let (repairs, omitted) = log.finish();
    Some(Repaired {
        json: Cow::Owned(inner.into_json().into_owned()),
        repairs,
        omitted,
    })
}

/// Decodes a valid JSON string's content.
fn unescape(content: &str) -> Option<String> {
    decode_into(content, 0, None, false)
}

/// Decodes a string's content (JSON escapes, which must be valid, and no raw
/// `"` or control character); with
/// each decoded byte, the offset in the text of what produced it (`base` is
/// the content's offset), and one more entry for the end. `None` for an
/// invalid escape or a lone surrogate, which a Rust string cannot hold.
fn decode(literal: &str, base: usize, raw_quotes: bool) -> Option<(String, Vec<usize>)> {
    let mut offsets = Vec::with_capacity(literal.len() + 1);
    let content = decode_into(literal, base, Some(&mut offsets), raw_quotes)?;
    Some((content, offsets))
}

/// [`decode`], keeping the offsets only if asked for; with `raw_quotes`, a
/// raw `"` is decoded as itself.
fn decode_into(
    literal: &str,
    base: usize,
    mut offsets: Option<&mut Vec<usize>>,
    raw_quotes: bool,
) -> Option<String> {
    let bytes = literal.as_bytes();
    let inner = bytes.len();
    let mut content = String::with_capacity(inner);
    let mut offsets_extend = |range: std::ops::Range<usize>| {
        if let Some(offsets) = offsets.as_deref_mut() {
            offsets.extend(range);
        }
    };
    let mut i = 0;
    let mut run = i;
    while i < inner {
        i = find_stop_double(bytes, i);
        if i >= inner {
            break;
        }
        match bytes[i] {
            b'\\' => {}
            b'"' if raw_quotes => {
                i += 1;
                continue;
            }
            // A raw quote or control character: not a string's content.
            b'"' | 0..0x20 => return None,
            _ => {
                i += 1;
                continue;
            }
        }
        content.push_str(&literal[run..i]);
        offsets_extend(base + run..base + i);
        let at = i;
        let (c, len) = match *bytes.get(i + 1)? {
            b'"' => ('"', 2),
            b'\\' => ('\\', 2),
            b'/' => ('/', 2),
            b'b' => ('\u{8}', 2),
            b'f' => ('\u{c}', 2),
            b'n' => ('\n', 2),
            b'r' => ('\r', 2),
            b't' => ('\t', 2),
            b'u' => {
                let high = hex4(literal.get(i + 2..)?)?;
                if (0xD800..0xDC00).contains(&high) {
                    if literal.get(i + 6..i + 8) != Some("\\u") {
                        return None;
                    }
                    let low = hex4(literal.get(i + 8..)?)?;
                    if !(0xDC00..0xE000).contains(&low) {
                        return None;
                    }
                    (
                        char::from_u32(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))?,
                        12,
                    )
                } else {
                    (char::from_u32(high)?, 6)
                }
            }
            _ => return None,
        };
        content.push(c);
        for _ in 0..c.len_utf8() {
            offsets_extend(base + at..base + at + 1);
        }
        i += len;
        run = i;
    }
    content.push_str(&literal[run..inner]);
    offsets_extend(base + run..base + inner + 1);
    Some(content)
}

/// The value of the four hex digits `digits` starts with (exactly four:
/// no sign, which `from_str_radix` would take).
fn hex4(digits: &str) -> Option<u32> {
    let digits = digits.get(..4)?;
    if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u32::from_str_radix(digits, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::decode;

    #[test]
    fn offsets_point_at_what_produced_each_byte() {
        let (content, offsets) = decode(r#"a\"é\u00e9\ud83d\ude00"#, 11, false).unwrap();
        assert_eq!(content, "a\"éé😀");
        // a, \" , é (2 bytes), \u00e9 (2 bytes), the pair (4 bytes), the end.
        assert_eq!(offsets, [11, 12, 14, 15, 16, 16, 22, 22, 22, 22, 34]);
        assert_eq!(decode(r#"\ud800"#, 0, false), None);
        assert_eq!(decode(r#"\d"#, 0, false), None);
        assert_eq!(decode(r#"\u+abc"#, 0, false), None);
        assert_eq!(decode("a\"b", 0, false), None);
        assert_eq!(decode("a\nb", 0, false), None);
    }
}
