//! Hermes (and Qwen): `<tool_call>{"name": ..., "arguments": ...}</tool_call>` blocks in text.

use serde_json::Value;

use crate::json::Unread;

use super::common::named_calls;
use super::layout::Layout;
use super::{CallFormat, ReadError, ToolCall};

const OPEN: &str = "<tool_call>";
const CLOSE: &str = "</tool_call>";

/// The byte after each `<tool_call>` tag where a call may stand (not in
/// inline code or a code sample: "`<tool_call>` tags" is prose).
fn tags<'a>(text: &'a str, layout: &'a Layout) -> impl Iterator<Item = usize> + 'a {
    text.match_indices(OPEN)
        .filter(|(at, _)| !layout.hidden(*at))
        .map(|(at, _)| at + OPEN.len())
}

/// Whether `text` has a `<tool_call>` tag where a call may stand.
pub(super) fn has_tag(text: &str, layout: &Layout) -> bool {
    tags(text, layout).next().is_some()
}

/// `<tool_call>{...}</tool_call>`, several times; an unclosed last block (a
/// truncated answer) is read to the end of the text.
pub(super) fn read(
    text: &str,
    layout: &Layout,
    max_json: usize,
) -> Result<Vec<ToolCall>, ReadError> {
    const FORMAT: CallFormat = CallFormat::Hermes;
    let mut calls = Vec::new();
    let mut rest = 0;
    for start in tags(text, layout) {
        if start < rest {
            // Inside the block read before.
            continue;
        }
        let end = text[start..].find(CLOSE).map_or(text.len(), |i| start + i);
        let body = text[start..end].trim();
        if body.len() > max_json {
            return Err(super::too_long(
                FORMAT,
                format!("byte {start}"),
                body.len(),
                max_json,
            ));
        }
        let value: Value = crate::json::from_str_unique(body).map_err(|error| match error {
            Unread::Syntax(error) => ReadError::new(
                FORMAT,
                format!("byte {start}"),
                "a JSON object inside <tool_call>",
                format!("invalid JSON ({error})"),
            ),
            Unread::Duplicate(path) => super::duplicate(FORMAT, format!("byte {start}, {path}")),
        })?;
        calls.extend(named_calls(FORMAT, &value, &format!("byte {start}"))?);
        rest = (end + CLOSE.len()).min(text.len());
    }
    if calls.is_empty() {
        return Err(ReadError::no_call(
            FORMAT,
            "a <tool_call>...</tool_call> block",
            "none",
        ));
    }
    Ok(calls)
}
