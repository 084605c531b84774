//! Anthropic Messages: `tool_use` content blocks.

use serde_json::Value;

use super::common::{entries, of_type, At};
use super::{CallFormat, ReadError, ToolCall};

/// A Messages response, its `content` blocks, or one `tool_use` block.
pub(super) fn read(value: &Value) -> Result<Vec<ToolCall>, ReadError> {
    const FORMAT: CallFormat = CallFormat::Anthropic;
    let expected = "a message with `content`, a list of content blocks, or a `tool_use` block";
    of_type(
        entries(FORMAT, At::root(value), "content", expected)?,
        "tool_use",
    )
    .map(|block| {
        Ok(ToolCall {
            id: block.optional_string("id"),
            name: block.string(FORMAT, "name")?,
            arguments: block.arguments(FORMAT, "input")?,
        })
    })
    .collect()
}
