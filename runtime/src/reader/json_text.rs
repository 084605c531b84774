//! JSON in text, fenced or not: call objects (`name`/`arguments`,
//! `functionName`/`args`, `name`/`parameters`) or lists of them. JSON
//! without a call's shape (no name or arguments key: an answer a model
//! wrote as JSON) is no call.

use serde_json::Value;

use super::common::{call_shaped, named_calls};
use super::layout::Layout;
use super::{CallFormat, ReadError, ToolCall};

/// How many JSON values [`read`] tries to parse in one text at most.
const MAX_ATTEMPTS: usize = 64;

/// JSON values in text (fenced or not): each a call object or a list of
/// them. Not in inline code in a sentence or in a code sample (`layout`),
/// and a tool's definition (`name` with `description` or a schema of
/// `parameters`, as a catalog lists it) is no call.
pub(super) fn read(
    text: &str,
    layout: &Layout,
    max_json: usize,
) -> Result<Vec<ToolCall>, ReadError> {
    const FORMAT: CallFormat = CallFormat::Json;
    let mut calls = Vec::new();
    let mut first_error = None;
    let mut offset = 0;
    let mut attempts = 0;
    while let Some(start) = text[offset..].find(['{', '[']).map(|i| offset + i) {
        // A call is an object, or a list of objects: nothing else can start one.
        let next = text[start + 1..].trim_start().chars().next();
        let plausible = match &text[start..start + 1] {
            "{" => matches!(next, Some('"' | '}')),
            _ => next == Some('{'),
        };
        if !plausible || layout.hidden(start) {
            offset = start + 1;
            continue;
        }
        // Bounded work on hostile text: each attempt may read deep before failing.
        attempts += 1;
        if attempts > MAX_ATTEMPTS {
            break;
        }
        match next_value(&text[start..], max_json) {
            Some(Ok((value, length))) if !call_shaped(&value) => {
                // JSON that is no call (an answer written as JSON): passed.
                offset = start + length;
            }
            Some(Ok((value, length))) => {
                let at = format!("byte {start}");
                let value = without_definitions(value);
                match named_calls(FORMAT, &value, &at) {
                    Ok(found) => calls.extend(found),
                    Err(error) => {
                        first_error.get_or_insert(error);
                    }
                }
                offset = start + length;
            }
            Some(Err(Unread::Duplicate(path, length))) => {
                first_error.get_or_insert_with(|| {
                    super::duplicate(FORMAT, format!("byte {start}, {path}"))
                });
                offset = start + length;
            }
            Some(Err(Unread::TooLong(length))) => {
                first_error.get_or_insert_with(|| {
                    super::too_long(FORMAT, format!("byte {start}"), length, max_json)
                });
                offset = start + length;
            }
            Some(Err(Unread::Invalid(error))) => {
                first_error.get_or_insert_with(|| {
                    ReadError::new(
                        FORMAT,
                        format!("byte {start}"),
                        "a JSON object",
                        format!("invalid JSON ({error})"),
                    )
                });
                offset = start + 1;
            }
            None => break,
        }
    }
    if !calls.is_empty() {
        return Ok(calls);
    }
    Err(first_error.unwrap_or_else(|| {
        ReadError::no_call(
            FORMAT,
            "a JSON object {\"name\": ..., \"arguments\": {...}}",
            "no JSON in the text",
        )
    }))
}

/// Why the JSON value at the start of a text was not read.
enum Unread {
    Invalid(serde_json::Error),
    /// A key given twice: its path, and the length of the value's text.
    Duplicate(crate::schema::JsonPath, usize),
    /// Longer than the limit: its length.
    TooLong(usize),
}

/// The JSON value at the start of `text` and the length of its text;
/// `None` when there is none. Its extent is found first, building nothing:
/// one longer than `max_json` bytes is not built (a value can take 40
/// times its text), nor one that gives a key twice.
fn next_value(text: &str, max_json: usize) -> Option<Result<(Value, usize), Unread>> {
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<serde::de::IgnoredAny>();
    if let Err(error) = stream.next()? {
        return Some(Err(Unread::Invalid(error)));
    }
    let length = stream.byte_offset();
    if length > max_json {
        return Some(Err(Unread::TooLong(length)));
    }
    Some(match crate::json::from_str_unique(&text[..length]) {
        Ok(value) => Ok((value, length)),
        Err(crate::json::Unread::Duplicate(path)) => Err(Unread::Duplicate(path, length)),
        // Deeper than serde_json builds (128 levels).
        Err(crate::json::Unread::Syntax(error)) => Err(Unread::Invalid(error)),
    })
}

/// The value without the tools' definitions in it: a list without its
/// definitions (perhaps empty); an empty list for a definition alone.
fn without_definitions(value: Value) -> Value {
    match value {
        Value::Array(items) => {
            Value::Array(items.into_iter().filter(|v| !is_definition(v)).collect())
        }
        value if is_definition(&value) => Value::Array(Vec::new()),
        value => value,
    }
}

/// Whether a JSON object is a tool's definition rather than a call: a name
/// with a `description`, or with `parameters` that are a JSON Schema of an
/// object (`"type": "object"` and `properties`), or an `input_schema`; or
/// such a definition under `function` (OpenAI's catalog).
fn is_definition(value: &Value) -> bool {
    let Some(object) = value.as_object() else {
        return false;
    };
    if let Some(function) = object.get("function") {
        return is_definition(function);
    }
    let schema = |key: &str| {
        object.get(key).is_some_and(|schema| {
            schema.get("type").and_then(Value::as_str) == Some("object")
                && schema.get("properties").is_some()
        })
    };
    object.get("name").is_some_and(Value::is_string)
        && !["arguments", "args", "input"]
            .iter()
            .any(|key| object.contains_key(*key))
        && (object.contains_key("description")
            || schema("parameters")
            || object.contains_key("input_schema")
            || object.contains_key("inputSchema"))
}
