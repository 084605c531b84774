//! What several readers share: a JSON path walker for the provider formats,
//! and the call objects (`{"name": ..., "arguments": ...}` and variants) of
//! the text formats.

use serde_json::Value;

use super::{CallFormat, ReadError, ToolCall};

/// A JSON path and the value at it, for error messages.
pub(super) struct At<'v> {
    pub(super) path: String,
    pub(super) value: &'v Value,
}

impl<'v> At<'v> {
    pub(super) fn root(value: &'v Value) -> At<'v> {
        At {
            path: "$".into(),
            value,
        }
    }

    pub(super) fn field(&self, name: &str) -> Option<At<'v>> {
        self.value.get(name).map(|value| At {
            path: format!("{}.{name}", self.path),
            value,
        })
    }

    pub(super) fn items(&self) -> Vec<At<'v>> {
        match self.value {
            Value::Array(items) => items
                .iter()
                .enumerate()
                .map(|(i, value)| At {
                    path: format!("{}[{i}]", self.path),
                    value,
                })
                .collect(),
            _ => Vec::new(),
        }
    }

    pub(super) fn string(&self, format: CallFormat, name: &str) -> Result<String, ReadError> {
        match self.field(name) {
            Some(At {
                value: Value::String(s),
                ..
            }) => Ok(s.clone()),
            Some(other) => Err(ReadError::new(
                format,
                other.path,
                "a string",
                crate::schema::describe_value(other.value),
            )),
            None => Err(ReadError::new(
                format,
                format!("{}.{name}", self.path),
                format!("a `{name}` field"),
                "nothing",
            )),
        }
    }

    pub(super) fn optional_string(&self, name: &str) -> Option<String> {
        self.value
            .get(name)
            .and_then(Value::as_str)
            .map(str::to_owned)
    }

    /// Arguments as JSON text: a string as it is (OpenAI), an object serialized (Anthropic).
    pub(super) fn arguments(&self, format: CallFormat, name: &str) -> Result<String, ReadError> {
        match self.field(name) {
            Some(At {
                value: Value::String(s),
                ..
            }) => Ok(s.clone()),
            Some(At {
                value: value @ Value::Object(_),
                ..
            }) => Ok(value.to_string()),
            Some(At {
                value: Value::Null, ..
            })
            | None => Ok("{}".into()),
            Some(other) => Err(ReadError::new(
                format,
                other.path,
                "the arguments as a JSON object or a string of JSON",
                crate::schema::describe_value(other.value),
            )),
        }
    }
}

/// The entries of a response's `container` list, or a bare list of entries,
/// or a single entry.
pub(super) fn entries<'v>(
    format: CallFormat,
    root: At<'v>,
    container: &str,
    expected: &str,
) -> Result<Vec<At<'v>>, ReadError> {
    match (root.value, root.field(container)) {
        (_, Some(list)) => Ok(list.items()),
        (Value::Array(_), None) => Ok(root.items()),
        (Value::Object(_), None) => Ok(vec![root]),
        (other, None) => Err(ReadError::new(
            format,
            "$",
            expected,
            crate::schema::describe_value(other),
        )),
    }
}

/// The entries whose `type` is `kind`; the others (text, reasoning) are not calls.
pub(super) fn of_type<'v>(
    entries: Vec<At<'v>>,
    kind: &'static str,
) -> impl Iterator<Item = At<'v>> {
    entries
        .into_iter()
        .filter(move |entry| entry.value.get("type").and_then(Value::as_str) == Some(kind))
}

/// The keys models use for a call's name, and for its arguments, in the order tried.
const NAME_KEYS: [&str; 2] = ["name", "functionName"];

/// Whether a JSON value has the shape of a call or a list of calls: an
/// object with a name or arguments key, `function` or `tool_calls`, or a
/// key other models name their tool with (`tool`, `tool_name`,
/// `function_name`: read as an attempt, and told), or a list holding one. JSON without that shape (`{"items": [2, 3]}`, a
/// model's answer written as JSON) is no call attempt, and is read as no
/// call at all.
pub(super) fn call_shaped(value: &Value) -> bool {
    let object_shaped = |value: &Value| {
        value.as_object().is_some_and(|object| {
            NAME_KEYS
                .iter()
                .chain(&ARGUMENT_KEYS)
                .chain(&[
                    "function",
                    "tool_calls",
                    "tool",
                    "tool_name",
                    "function_name",
                ])
                .any(|key| object.contains_key(*key))
        })
    };
    match value {
        Value::Array(items) => items.iter().any(object_shaped),
        other => object_shaped(other),
    }
}
const ARGUMENT_KEYS: [&str; 4] = ["arguments", "args", "parameters", "input"];

/// A call object (`{"name": ..., "arguments": ...}` and its variants), or a list of them.
pub(super) fn named_calls(
    format: CallFormat,
    value: &Value,
    at: &str,
) -> Result<Vec<ToolCall>, ReadError> {
    match value {
        Value::Array(items) => items
            .iter()
            .map(|item| named_call(format, item, at))
            .collect(),
        Value::Object(object) => {
            if let Some(Value::Array(calls)) = object.get("tool_calls") {
                return calls
                    .iter()
                    .map(|item| named_call(format, item, at))
                    .collect();
            }
            Ok(vec![named_call(format, value, at)?])
        }
        other => Err(ReadError::new(
            format,
            at,
            "a call object or a list of them",
            crate::schema::describe_value(other),
        )),
    }
}

fn named_call(format: CallFormat, value: &Value, at: &str) -> Result<ToolCall, ReadError> {
    let object = match value {
        Value::Object(object) => object,
        other => {
            return Err(ReadError::new(
                format,
                at,
                "a call object",
                crate::schema::describe_value(other),
            ))
        }
    };
    // `{"function": {"name": ..., "arguments": ...}}` too.
    if let Some(inner @ Value::Object(_)) = object.get("function") {
        return named_call(format, inner, at);
    }
    let name = NAME_KEYS
        .iter()
        .find_map(|key| object.get(*key).and_then(Value::as_str));
    if let Some(name) = name {
        // The first argument key present; none at all means no arguments.
        let arguments = match ARGUMENT_KEYS
            .iter()
            .find_map(|key| object.get(*key).map(|v| (key, v)))
        {
            Some((_, Value::String(text))) => text.clone(),
            Some((_, args @ Value::Object(_))) => args.to_string(),
            None | Some((_, Value::Null)) => "{}".into(),
            Some((key, other)) => {
                return Err(ReadError::new(
                    format,
                    format!("{at}, `{key}`"),
                    "the arguments as an object",
                    crate::schema::describe_value(other),
                ))
            }
        };
        let id = object.get("id").and_then(Value::as_str).map(str::to_owned);
        return Ok(ToolCall {
            id,
            name: name.to_owned(),
            arguments,
        });
    }
    let keys: Vec<&str> = object.keys().map(String::as_str).collect();
    Err(ReadError::new(
        format,
        at,
        "a call object with `name` and `arguments` (or `functionName` and `args`, or `name` and `parameters`)",
        format!("an object with keys {keys:?}"),
    ))
}
