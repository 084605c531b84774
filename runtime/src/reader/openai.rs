//! OpenAI: Chat Completions (`tool_calls`, and the legacy `function_call`)
//! and the Responses API (`function_call` output items).

use serde_json::Value;

use super::common::{entries, of_type, At};
use super::{CallFormat, ReadError, ToolCall};

/// A Chat Completions response (its first choice), its `message`, its
/// `tool_calls` list or one of them; or a legacy `function_call`.
pub(super) fn chat(value: &Value) -> Result<Vec<ToolCall>, ReadError> {
    const FORMAT: CallFormat = CallFormat::OpenAiChat;
    let root = At::root(value);
    // A whole response: the first choice (further choices are alternatives, not more calls).
    let message = match root.field("choices") {
        Some(choices) => match choices.items().into_iter().next() {
            Some(choice) => choice.field("message").ok_or_else(|| {
                ReadError::new(
                    FORMAT,
                    format!("{}.message", choice.path),
                    "a `message`",
                    "nothing",
                )
            })?,
            None => return Ok(Vec::new()),
        },
        None => root,
    };
    // A `null` is no call: vLLM-style servers send `"function_call": null`
    // (and `"tool_calls": null`) beside a plain answer.
    let present = |name| message.field(name).filter(|at| !at.value.is_null());
    let calls: Vec<At> = match (
        message.value,
        present("tool_calls"),
        present("function_call"),
    ) {
        (Value::Array(_), _, _) => message.items(),
        (_, Some(tool_calls), _) => tool_calls.items(),
        (_, None, Some(legacy)) => {
            let name = legacy.string(FORMAT, "name")?;
            return Ok(vec![ToolCall {
                id: None,
                name,
                arguments: legacy.arguments(FORMAT, "arguments")?,
            }]);
        }
        (Value::Object(o), None, None) if o.contains_key("function") => vec![message],
        (Value::Object(o), None, None) if o.contains_key("role") || o.contains_key("content") => {
            return Ok(Vec::new())
        }
        (other, None, None) => {
            return Err(ReadError::new(
                FORMAT,
                message.path,
                "a response, a message with `tool_calls`, or a list of tool calls",
                crate::schema::describe_value(other),
            ))
        }
    };
    calls
        .into_iter()
        .filter(|call| {
            call.value
                .get("type")
                .and_then(Value::as_str)
                .is_none_or(|t| t == "function")
        })
        .map(|call| {
            let function = call.field("function").ok_or_else(|| {
                ReadError::new(
                    FORMAT,
                    format!("{}.function", call.path),
                    "a `function` object",
                    "nothing",
                )
            })?;
            Ok(ToolCall {
                id: call.optional_string("id"),
                name: function.string(FORMAT, "name")?,
                arguments: function.arguments(FORMAT, "arguments")?,
            })
        })
        .collect()
}

/// A Responses API response, its `output` items, or one `function_call` item.
pub(super) fn responses(value: &Value) -> Result<Vec<ToolCall>, ReadError> {
    const FORMAT: CallFormat = CallFormat::OpenAiResponses;
    let expected = "a response with `output`, a list of output items, or a `function_call` item";
    of_type(
        entries(FORMAT, At::root(value), "output", expected)?,
        "function_call",
    )
    .map(|item| {
        Ok(ToolCall {
            id: item
                .optional_string("call_id")
                .or_else(|| item.optional_string("id")),
            name: item.string(FORMAT, "name")?,
            arguments: item.arguments(FORMAT, "arguments")?,
        })
    })
    .collect()
}
