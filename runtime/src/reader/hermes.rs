//! Hermes (and Qwen): `<tool_call>{"name": ..., "arguments": ...}</tool_call>` blocks in text.

use serde_json::Value;

use super::common::named_calls;
use super::{CallFormat, ReadError, ToolCall};

/// `<tool_call>{...}</tool_call>`, several times; an unclosed last block (a
/// truncated answer) is read to the end of the text.
pub(super) fn read(text: &str) -> Result<Vec<ToolCall>, ReadError> {
    const FORMAT: CallFormat = CallFormat::Hermes;
    const OPEN: &str = "<tool_call>";
    const CLOSE: &str = "</tool_call>";
    let mut calls = Vec::new();
    let mut rest = 0;
    while let Some(start) = text[rest..].find(OPEN).map(|i| rest + i + OPEN.len()) {
        let end = text[start..].find(CLOSE).map_or(text.len(), |i| start + i);
        let body = text[start..end].trim();
        let value: Value = serde_json::from_str(body).map_err(|error| {
            ReadError::new(
                FORMAT,
                format!("byte {start}"),
                "a JSON object inside <tool_call>",
                format!("invalid JSON ({error})"),
            )
        })?;
        calls.extend(named_calls(FORMAT, &value, &format!("byte {start}"))?);
        rest = (end + CLOSE.len()).min(text.len());
    }
    if calls.is_empty() {
        return Err(ReadError::new(
            FORMAT,
            "byte 0",
            "a <tool_call>...</tool_call> block",
            "none",
        ));
    }
    Ok(calls)
}
