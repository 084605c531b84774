//! JSON in text, fenced or not: call objects (`name`/`arguments`,
//! `functionName`/`args`, `name`/`parameters`) or lists of them.

use serde_json::Value;

use super::common::named_calls;
use super::{CallFormat, ReadError, ToolCall};

/// How many JSON values [`read`] tries to parse in one text at most.
const MAX_ATTEMPTS: usize = 64;

/// JSON values in text (fenced or not): each a call object or a list of them.
pub(super) fn read(text: &str) -> Result<Vec<ToolCall>, ReadError> {
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
        if !plausible {
            offset = start + 1;
            continue;
        }
        // Bounded work on hostile text: each attempt may read deep before failing.
        attempts += 1;
        if attempts > MAX_ATTEMPTS {
            break;
        }
        let mut stream = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>();
        match stream.next() {
            Some(Ok(value)) => {
                let at = format!("byte {start}");
                match named_calls(FORMAT, &value, &at) {
                    Ok(found) => calls.extend(found),
                    Err(error) => {
                        first_error.get_or_insert(error);
                    }
                }
                offset = start + stream.byte_offset();
            }
            Some(Err(error)) => {
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
        ReadError::new(
            FORMAT,
            "byte 0",
            "a JSON object {\"name\": ..., \"arguments\": {...}}",
            "no JSON in the text",
        )
    }))
}
