//! Reading tool calls out of what models really send.
//!
//! A model's answer holds zero, one or several tool calls, in one of a few
//! shapes. [`read_calls`] turns each into a [`ToolCall`]: a name, the
//! arguments as JSON text (as the model wrote them: repair, if any, comes
//! later), and the provider's id for the call when there is one.
//!
//! | [`CallFormat`] | what it reads |
//! |---|---|
//! | `OpenAiChat` | a Chat Completions response, its `message`, or its `tool_calls` (arguments are a JSON string); the legacy `function_call` too |
//! | `OpenAiResponses` | a Responses API response, its `output` items, or one `function_call` item |
//! | `Anthropic` | a Messages response, its `content` blocks, or one `tool_use` block |
//! | `Hermes` | `<tool_call>{"name": ..., "arguments": ...}</tool_call>` blocks in text (Hermes, Qwen) |
//! | `Json` | JSON objects in text, possibly fenced: `name`/`arguments`, `functionName`/`args` (trivialai), `name`/`parameters`, or a list of them |
//! | `Pythonic` | `[get_weather(city="Lima"), sort('report.pdf')]`, as Llama-family models and function-calling benchmarks write them |
//! | `Auto` | whichever of the above the text is |
//!
//! Pythonic calls may pass arguments by position; they are mapped to names by
//! the tool's parameter order, which only a toolbox knows: use
//! [`Toolbox::read_calls`](crate::Toolbox::read_calls) for them.
//!
//! ```
//! use typed_tools::reader::{read_calls, CallFormat};
//!
//! let answer = r#"{
//!   "role": "assistant",
//!   "tool_calls": [
//!     {"id": "call_1", "type": "function",
//!      "function": {"name": "lookup_account", "arguments": "{\"id\": \"cust_1\"}"}}
//!   ]
//! }"#;
//! let calls = read_calls(CallFormat::OpenAiChat, answer)?;
//! assert_eq!(calls[0].name, "lookup_account");
//! assert_eq!(calls[0].arguments, r#"{"id": "cust_1"}"#);
//! assert_eq!(calls[0].id.as_deref(), Some("call_1"));
//!
//! let text = r#"I'll check. [lookup_account(id="cust_1"), send_reply(to='a@b.c', body="Hi", urgent=True)]"#;
//! let calls = read_calls(CallFormat::Auto, text)?;
//! assert_eq!(calls[1].arguments, r#"{"to":"a@b.c","body":"Hi","urgent":true}"#);
//! # Ok::<(), typed_tools::reader::ReadError>(())
//! ```

use std::fmt;

use serde_json::{Map, Value};

/// One tool call read from a model's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolCall {
    /// The provider's id for the call, to answer it with: OpenAI's `id` or
    /// `call_id`, Anthropic's `tool_use` id. `None` for text formats.
    pub id: Option<String>,
    /// The tool's name, as the model wrote it.
    pub name: String,
    /// The arguments as JSON text, as the model wrote them.
    pub arguments: String,
}

/// The shape a model's tool calls come in; see the [module docs](self).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CallFormat {
    /// OpenAI Chat Completions.
    OpenAiChat,
    /// OpenAI Responses API.
    OpenAiResponses,
    /// Anthropic Messages.
    Anthropic,
    /// `<tool_call>...</tool_call>` blocks in text.
    Hermes,
    /// JSON objects in text.
    Json,
    /// Python call syntax.
    Pythonic,
    /// Whichever of the others fits.
    Auto,
}

impl CallFormat {
    /// Every format, [`Auto`](CallFormat::Auto) last.
    ///
    /// ```
    /// use typed_tools::CallFormat;
    ///
    /// assert_eq!(CallFormat::ALL.last(), Some(&CallFormat::Auto));
    /// ```
    pub const ALL: [CallFormat; 7] = [
        CallFormat::OpenAiChat,
        CallFormat::OpenAiResponses,
        CallFormat::Anthropic,
        CallFormat::Hermes,
        CallFormat::Json,
        CallFormat::Pythonic,
        CallFormat::Auto,
    ];
}

/// Why no tool call could be read: what was expected, where, and what was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadError {
    /// The format being read.
    pub format: CallFormat,
    /// Where: a JSON path (`$.tool_calls[0].function.name`) or a byte offset (`byte 17`).
    pub at: String,
    /// What was expected there.
    pub expected: String,
    /// What was found.
    pub found: String,
}

impl ReadError {
    fn new(
        format: CallFormat,
        at: impl Into<String>,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) -> ReadError {
        ReadError {
            format,
            at: at.into(),
            expected: expected.into(),
            found: found.into(),
        }
    }

    /// A short message for the model: what was wrong and how to write a call.
    pub fn for_model(&self) -> String {
        format!(
            "Your tool call could not be read: at {}, expected {}, found {}. \
             Write each call as a JSON object {{\"name\": \"tool_name\", \"arguments\": {{...}}}}.",
            self.at, self.expected, self.found
        )
    }
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cannot read a {:?} tool call: at {}, expected {}, found {}",
            self.format, self.at, self.expected, self.found
        )
    }
}

impl std::error::Error for ReadError {}

/// Reads every tool call in `text`. An answer with no tool call gives an empty
/// list in the provider formats (the model answered in prose); in the text
/// formats, text with no call in it is an error saying what was looked for.
///
/// Pythonic calls with positional arguments need the tools' parameter names:
/// read them with [`Toolbox::read_calls`](crate::Toolbox::read_calls).
pub fn read_calls(format: CallFormat, text: &str) -> Result<Vec<ToolCall>, ReadError> {
    read_calls_with(format, text, &|_| None)
}

/// [`read_calls`], with the parameter names of each tool for positional arguments.
pub(crate) fn read_calls_with(
    format: CallFormat,
    text: &str,
    parameters: &dyn Fn(&str) -> Option<Vec<String>>,
) -> Result<Vec<ToolCall>, ReadError> {
    match format {
        CallFormat::OpenAiChat => openai_chat(&parse_json(format, text)?),
        CallFormat::OpenAiResponses => openai_responses(&parse_json(format, text)?),
        CallFormat::Anthropic => anthropic(&parse_json(format, text)?),
        CallFormat::Hermes => hermes(text),
        CallFormat::Json => json_in_text(text),
        CallFormat::Pythonic => pythonic::read(text, parameters),
        CallFormat::Auto => auto(text, parameters),
    }
}

fn auto(
    text: &str,
    parameters: &dyn Fn(&str) -> Option<Vec<String>>,
) -> Result<Vec<ToolCall>, ReadError> {
    if let Ok(value) = serde_json::from_str::<Value>(text) {
        if let Some(format) = provider_of(&value) {
            return read_calls_with(format, text, parameters);
        }
    }
    if text.contains("<tool_call>") {
        return hermes(text);
    }
    let json = json_in_text(text);
    if matches!(&json, Ok(calls) if !calls.is_empty()) {
        return json;
    }
    match pythonic::read(text, parameters) {
        Ok(calls) => Ok(calls),
        Err(python) => match json {
            // Text that looked like JSON tells more than a Python parse error.
            Err(json) if text.trim_start().starts_with(['{', '[', '`']) => Err(json),
            _ => Err(ReadError {
                format: CallFormat::Auto,
                ..python
            }),
        },
    }
}

/// The provider format a parsed answer is in, by its marks.
fn provider_of(value: &Value) -> Option<CallFormat> {
    let first = match value {
        Value::Array(items) => items.first()?,
        other => other,
    };
    if first.get("choices").is_some()
        || first.get("tool_calls").is_some()
        || first.get("function_call").is_some()
    {
        return Some(CallFormat::OpenAiChat);
    }
    if first.get("type").and_then(Value::as_str) == Some("function")
        && first.get("function").is_some()
    {
        return Some(CallFormat::OpenAiChat);
    }
    if first.get("output").is_some()
        || first.get("type").and_then(Value::as_str) == Some("function_call")
    {
        return Some(CallFormat::OpenAiResponses);
    }
    let blocks = first.get("content").unwrap_or(first);
    let is_block = |b: &Value| {
        matches!(
            b.get("type").and_then(Value::as_str),
            Some("tool_use" | "text")
        )
    };
    match blocks {
        Value::Array(items) if items.iter().any(is_block) => Some(CallFormat::Anthropic),
        block if is_block(block) => Some(CallFormat::Anthropic),
        _ => None,
    }
}

fn parse_json(format: CallFormat, text: &str) -> Result<Value, ReadError> {
    serde_json::from_str(text).map_err(|error| {
        ReadError::new(
            format,
            format!("line {} column {}", error.line(), error.column()),
            "the provider's JSON response",
            format!("invalid JSON ({error})"),
        )
    })
}

/// A JSON path and the value at it, for error messages.
struct At<'v> {
    path: String,
    value: &'v Value,
}

impl<'v> At<'v> {
    fn root(value: &'v Value) -> At<'v> {
        At {
            path: "$".into(),
            value,
        }
    }

    fn field(&self, name: &str) -> Option<At<'v>> {
        self.value.get(name).map(|value| At {
            path: format!("{}.{name}", self.path),
            value,
        })
    }

    fn items(&self) -> Vec<At<'v>> {
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

    fn string(&self, format: CallFormat, name: &str) -> Result<String, ReadError> {
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

    fn optional_string(&self, name: &str) -> Option<String> {
        self.value
            .get(name)
            .and_then(Value::as_str)
            .map(str::to_owned)
    }

    /// Arguments as JSON text: a string as it is (OpenAI), an object serialized (Anthropic).
    fn arguments(&self, format: CallFormat, name: &str) -> Result<String, ReadError> {
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

fn openai_chat(value: &Value) -> Result<Vec<ToolCall>, ReadError> {
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
    let calls: Vec<At> = match (
        message.value,
        message.field("tool_calls"),
        message.field("function_call"),
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

fn openai_responses(value: &Value) -> Result<Vec<ToolCall>, ReadError> {
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

fn anthropic(value: &Value) -> Result<Vec<ToolCall>, ReadError> {
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

/// The entries of a response's `container` list, or a bare list of entries,
/// or a single entry.
fn entries<'v>(
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
fn of_type<'v>(entries: Vec<At<'v>>, kind: &'static str) -> impl Iterator<Item = At<'v>> {
    entries
        .into_iter()
        .filter(move |entry| entry.value.get("type").and_then(Value::as_str) == Some(kind))
}

/// `<tool_call>{...}</tool_call>`, several times; an unclosed last block (a
/// truncated answer) is read to the end of the text.
fn hermes(text: &str) -> Result<Vec<ToolCall>, ReadError> {
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

/// How many JSON values [`json_in_text`] tries to parse in one text at most.
const MAX_ATTEMPTS: usize = 64;

/// JSON values in text (fenced or not): each a call object or a list of them.
fn json_in_text(text: &str) -> Result<Vec<ToolCall>, ReadError> {
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

/// The keys models use for a call's name, and for its arguments, in the order tried.
const NAME_KEYS: [&str; 2] = ["name", "functionName"];
const ARGUMENT_KEYS: [&str; 4] = ["arguments", "args", "parameters", "input"];

/// A call object (`{"name": ..., "arguments": ...}` and its variants), or a list of them.
fn named_calls(format: CallFormat, value: &Value, at: &str) -> Result<Vec<ToolCall>, ReadError> {
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

/// Python call syntax, and the Python literals in it.
mod pythonic {
    use super::{CallFormat, Map, ReadError, ToolCall, Value};

    const FORMAT: CallFormat = CallFormat::Pythonic;
    /// Deeper literals than this are refused rather than risk the stack.
    const MAX_DEPTH: usize = 128;

    pub(super) fn read(
        text: &str,
        parameters: &dyn Fn(&str) -> Option<Vec<String>>,
    ) -> Result<Vec<ToolCall>, ReadError> {
        let start = find_start(text).ok_or_else(|| {
            ReadError::new(
                FORMAT,
                "byte 0",
                "calls written as `[tool_name(arg=value), ...]`",
                "no call in the text",
            )
        })?;
        let mut parser = Parser {
            text,
            at: start,
            depth: 0,
        };
        let calls = parser.calls(parameters)?;
        parser.blank();
        Ok(calls)
    }

    /// The first `[name(` or `name(` in the text, skipping a `<|python_tag|>`.
    fn find_start(text: &str) -> Option<usize> {
        let bytes = text.as_bytes();
        text.char_indices().map(|(i, _)| i).find(|&i| {
            let at_word_start = i == 0
                || !(bytes[i - 1].is_ascii_alphanumeric()
                    || bytes[i - 1] == b'_'
                    || bytes[i - 1] == b'.');
            if !at_word_start {
                return false;
            }
            let rest = &text[i..];
            let rest = rest.strip_prefix('[').map(str::trim_start).unwrap_or(rest);
            let name_len = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
                .unwrap_or(rest.len());
            name_len > 0
                && rest.starts_with(|c: char| c.is_alphabetic() || c == '_')
                && rest[name_len..].trim_start().starts_with('(')
        })
    }

    struct Parser<'t> {
        text: &'t str,
        at: usize,
        depth: usize,
    }

    impl<'t> Parser<'t> {
        fn error(&self, expected: &str) -> ReadError {
            let found = match self.text[self.at..].chars().next() {
                None => "the end of the text".to_owned(),
                Some(_) => {
                    let excerpt: String = self.text[self.at..].chars().take(20).collect();
                    format!("`{excerpt}`")
                }
            };
            ReadError::new(FORMAT, format!("byte {}", self.at), expected, found)
        }

        fn blank(&mut self) {
            let rest = &self.text[self.at..];
            self.at += rest.len() - rest.trim_start().len();
        }

        fn eat(&mut self, token: &str) -> bool {
            self.blank();
            if self.text[self.at..].starts_with(token) {
                self.at += token.len();
                true
            } else {
                false
            }
        }

        fn expect(&mut self, token: &str, expected: &str) -> Result<(), ReadError> {
            if self.eat(token) {
                Ok(())
            } else {
                Err(self.error(expected))
            }
        }

        fn peek(&mut self) -> Option<char> {
            self.blank();
            self.text[self.at..].chars().next()
        }

        fn calls(
            &mut self,
            parameters: &dyn Fn(&str) -> Option<Vec<String>>,
        ) -> Result<Vec<ToolCall>, ReadError> {
            if !self.eat("[") {
                return Ok(vec![self.call(parameters)?]);
            }
            let mut calls = Vec::new();
            loop {
                if self.eat("]") {
                    return Ok(calls);
                }
                calls.push(self.call(parameters)?);
                if !self.eat(",") {
                    self.expect("]", "`,` or `]` after a call")?;
                    return Ok(calls);
                }
            }
        }

        fn identifier(&mut self) -> Option<&'t str> {
            self.blank();
            let text = self.text;
            let rest = &text[self.at..];
            let len = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
                .unwrap_or(rest.len());
            if len == 0 || !rest.starts_with(|c: char| c.is_alphabetic() || c == '_') {
                return None;
            }
            self.at += len;
            Some(&rest[..len])
        }

        fn call(
            &mut self,
            parameters: &dyn Fn(&str) -> Option<Vec<String>>,
        ) -> Result<ToolCall, ReadError> {
            let name = self
                .identifier()
                .ok_or_else(|| self.error("a tool name"))?
                .to_owned();
            self.expect("(", "`(` after the tool name")?;
            let mut arguments = Map::new();
            let mut positional = Vec::new();
            loop {
                if self.eat(")") {
                    break;
                }
                let before = self.at;
                let keyword = match self.identifier() {
                    Some(word) if self.eat("=") => Some(word.to_owned()),
                    _ => {
                        self.at = before;
                        None
                    }
                };
                let value_at = self.at;
                let value = self.literal()?;
                match keyword {
                    Some(key) => {
                        if arguments.insert(key.clone(), value).is_some() {
                            return Err(ReadError::new(
                                FORMAT,
                                format!("byte {value_at}"),
                                format!("`{key}` given once"),
                                format!("`{key}` given twice"),
                            ));
                        }
                    }
                    None if arguments.is_empty() => positional.push((value_at, value)),
                    None => {
                        return Err(ReadError::new(
                            FORMAT,
                            format!("byte {value_at}"),
                            "a keyword argument (positional ones come first)",
                            "a positional argument",
                        ));
                    }
                }
                if !self.eat(",") {
                    self.expect(")", "`,` or `)` in the argument list")?;
                    break;
                }
            }
            if !positional.is_empty() {
                let Some(names) = parameters(&name) else {
                    let (at, _) = positional[0];
                    return Err(ReadError::new(
                        FORMAT,
                        format!("byte {at}"),
                        format!("keyword arguments (`{name}(name=value)`): positional ones need the tool's parameter names"),
                        "a positional argument",
                    ));
                };
                let count = positional.len();
                for (index, (at, value)) in positional.into_iter().enumerate() {
                    let Some(key) = names.get(index) else {
                        return Err(ReadError::new(
                            FORMAT,
                            format!("byte {at}"),
                            format!(
                                "at most {} positional argument(s) for `{name}`",
                                names.len()
                            ),
                            format!("{count}"),
                        ));
                    };
                    if arguments.contains_key(key) {
                        return Err(ReadError::new(
                            FORMAT,
                            format!("byte {at}"),
                            format!("`{key}` given once"),
                            format!("`{key}` by position and by keyword"),
                        ));
                    }
                    arguments.insert(key.clone(), value);
                }
                // Keep the declaration order.
                let mut ordered = Map::new();
                for key in &names {
                    if let Some(value) = arguments.remove(key) {
                        ordered.insert(key.clone(), value);
                    }
                }
                ordered.extend(arguments);
                arguments = ordered;
            }
            Ok(ToolCall {
                id: None,
                name,
                arguments: Value::Object(arguments).to_string(),
            })
        }

        fn literal(&mut self) -> Result<Value, ReadError> {
            if self.depth >= MAX_DEPTH {
                return Err(self.error(&format!("a value nested at most {MAX_DEPTH} deep")));
            }
            self.depth += 1;
            let value = self.literal_inner();
            self.depth -= 1;
            value
        }

        fn literal_inner(&mut self) -> Result<Value, ReadError> {
            match self.peek() {
                Some('\'' | '"') => self.string().map(Value::String),
                Some('[') => self.sequence('[', ']'),
                Some('(') => self.sequence('(', ')'),
                Some('{') => self.dict(),
                Some(c) if c.is_ascii_digit() || c == '-' || c == '+' || c == '.' => self.number(),
                Some(_) => {
                    let before = self.at;
                    match self.identifier() {
                        Some("True" | "true") => Ok(Value::Bool(true)),
                        Some("False" | "false") => Ok(Value::Bool(false)),
                        Some("None" | "null") => Ok(Value::Null),
                        _ => {
                            self.at = before;
                            Err(self.error("a value: a string, a number, `True`, `False`, `None`, a list or a dict"))
                        }
                    }
                }
                None => Err(self.error("a value")),
            }
        }

        fn sequence(&mut self, open: char, close: char) -> Result<Value, ReadError> {
            self.at += open.len_utf8();
            let close = close.to_string();
            let mut items = Vec::new();
            loop {
                if self.eat(&close) {
                    return Ok(Value::Array(items));
                }
                items.push(self.literal()?);
                if !self.eat(",") {
                    self.expect(&close, &format!("`,` or `{close}`"))?;
                    return Ok(Value::Array(items));
                }
            }
        }

        fn dict(&mut self) -> Result<Value, ReadError> {
            self.at += 1;
            let mut object = Map::new();
            loop {
                if self.eat("}") {
                    return Ok(Value::Object(object));
                }
                let key = match self.peek() {
                    Some('\'' | '"') => self.string()?,
                    _ => return Err(self.error("a string key")),
                };
                self.expect(":", "`:` after a dict key")?;
                object.insert(key, self.literal()?);
                if !self.eat(",") {
                    self.expect("}", "`,` or `}`")?;
                    return Ok(Value::Object(object));
                }
            }
        }

        fn number(&mut self) -> Result<Value, ReadError> {
            let start = self.at;
            let rest = &self.text[start..];
            let len = rest
                .char_indices()
                .find(|&(i, c)| {
                    !(c.is_ascii_digit()
                        || c == '.'
                        || c == '_'
                        || c == 'e'
                        || c == 'E'
                        || ((c == '-' || c == '+')
                            && (i == 0 || matches!(rest.as_bytes()[i - 1], b'e' | b'E'))))
                })
                .map_or(rest.len(), |(i, _)| i);
            let word: String = rest[..len].chars().filter(|c| *c != '_').collect();
            let word = word.strip_prefix('+').unwrap_or(&word);
            let parsed = if let Ok(n) = word.parse::<i64>() {
                Some(Value::from(n))
            } else if let Ok(n) = word.parse::<u64>() {
                Some(Value::from(n))
            } else {
                word.parse::<f64>()
                    .ok()
                    .and_then(serde_json::Number::from_f64)
                    .map(Value::Number)
            };
            match parsed {
                Some(value) => {
                    self.at += len;
                    Ok(value)
                }
                None => Err(self.error("a number")),
            }
        }

        fn string(&mut self) -> Result<String, ReadError> {
            let start = self.at;
            let rest = &self.text[start..];
            let quote = if rest.starts_with("\"\"\"") {
                "\"\"\""
            } else if rest.starts_with("'''") {
                "'''"
            } else if rest.starts_with('"') {
                "\""
            } else {
                "'"
            };
            let mut out = String::new();
            let mut chars = rest[quote.len()..].char_indices();
            while let Some((i, c)) = chars.next() {
                if rest[quote.len() + i..].starts_with(quote) {
                    self.at = start + quote.len() + i + quote.len();
                    return Ok(out);
                }
                match c {
                    '\\' => match chars.next() {
                        Some((_, 'n')) => out.push('\n'),
                        Some((_, 't')) => out.push('\t'),
                        Some((_, 'r')) => out.push('\r'),
                        Some((_, '0')) => out.push('\0'),
                        Some((j, 'u')) => {
                            let hex = rest.get(quote.len() + j + 1..quote.len() + j + 5);
                            match hex
                                .and_then(|h| u32::from_str_radix(h, 16).ok())
                                .and_then(char::from_u32)
                            {
                                Some(c) => {
                                    out.push(c);
                                    for _ in 0..4 {
                                        chars.next();
                                    }
                                }
                                None => out.push_str("\\u"),
                            }
                        }
                        Some((_, other)) => out.push(other),
                        None => break,
                    },
                    '\n' if quote.len() == 1 => {
                        self.at = start + quote.len() + i;
                        return Err(
                            self.error("the string's closing quote before the end of the line")
                        );
                    }
                    c => out.push(c),
                }
            }
            self.at = start;
            Err(self.error(&format!("a string closed by {quote}")))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(calls: &[ToolCall]) -> Vec<&str> {
        calls.iter().map(|c| c.name.as_str()).collect()
    }

    #[test]
    fn provider_shapes_are_detected() {
        let chat = r#"{"choices":[{"message":{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"a","arguments":"{}"}}]}}]}"#;
        let responses = r#"{"output":[{"type":"reasoning"},{"type":"function_call","call_id":"c2","name":"b","arguments":"{\"x\":1}"}]}"#;
        let anthropic = r#"{"content":[{"type":"text","text":"ok"},{"type":"tool_use","id":"t1","name":"c","input":{"y":2}}]}"#;
        assert_eq!(names(&read_calls(CallFormat::Auto, chat).unwrap()), ["a"]);
        assert_eq!(
            read_calls(CallFormat::Auto, responses).unwrap()[0]
                .id
                .as_deref(),
            Some("c2")
        );
        assert_eq!(
            read_calls(CallFormat::Auto, anthropic).unwrap()[0].arguments,
            r#"{"y":2}"#
        );
    }

    #[test]
    fn pythonic_literals() {
        let calls = read_calls(
            CallFormat::Pythonic,
            r#"[f(a='it\'s', b=[1, 2.5, -3], c={'k': (True, None)}, d="""x"y""", e=1_000)]"#,
        )
        .unwrap();
        assert_eq!(
            calls[0].arguments,
            r#"{"a":"it's","b":[1,2.5,-3],"c":{"k":[true,null]},"d":"x\"y","e":1000}"#
        );
    }

    #[test]
    fn pythonic_errors_say_where() {
        let error = read_calls(CallFormat::Pythonic, "[f(a=1, b=)]").unwrap_err();
        assert_eq!(error.at, "byte 10");
        assert!(error.expected.starts_with("a value"), "{error}");
        let error = read_calls(CallFormat::Pythonic, "[f('x')]").unwrap_err();
        assert!(
            error
                .expected
                .contains("positional ones need the tool's parameter names"),
            "{error}"
        );
        let deep = format!("f(a={}{})", "[".repeat(10_000), "]".repeat(10_000));
        assert!(read_calls(CallFormat::Pythonic, &deep).is_err());
    }
}
