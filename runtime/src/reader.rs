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
//! # Where a call stands in text
//!
//! Text that calls tools also mentions them: "try `send_email()`", a
//! `def get_weather(city):` in a code sample, "use `search(query)` to ...".
//! A call in text is read only where the model is calling:
//!
//! - not in inline code in a line of prose (`` `f(x=1)` `` or
//!   ```` ```f(x=1)``` ```` alone on its line is that line), nor in a fenced block that is a code sample (a
//!   line in it that starts a statement, outside strings and brackets,
//!   defines or imports something: `def`, `class`, `import`,
//!   `function`, `fn`, ...), nor in a definition outside fences (a line
//!   that looks like one, `def name(` or `class Name:`, not any line that
//!   starts with the word, and the lines indented under it). This holds for every text
//!   format: JSON objects and `<tool_call>` tags too;
//! - a Pythonic call (or `[...]` list of them) starts a line (however
//!   indented, Llama's `<|python_tag|>` or a tag such as `<tool_code>`
//!   aside, as many as there are) or a sentence (after `.`, `!`, `?`, `:`,
//!   `;`: `Action: f(x=1)`), or follows the model saying it calls ("I'll
//!   call", "Let me use", "Calling"); and it ends its line or sentence ("I'll
//!   call f(x=1) now." too), not before more prose ("Try calling f() later");
//!   nor is it a list item (`- f()`, `1. f()`);
//! - a signature is not a call: `get_weather(city)`, `search(query: str)`
//!   name a tool, with parameters where a call has values;
//! - a JSON tool definition (a `name` with a `description`, or with
//!   `parameters` that are an object's schema) is not a call.
//!
//! So a text that holds a definition and a call (a fenced sample with a
//! `def`, then the call on a line of its own) is read as the call, and
//! when that call cannot be read the error is at the call. A call cut
//! short (its brackets never close) is read as far as it goes, and the
//! error says where it broke.
//!
//! A JSON value (a call, a list of calls, a provider's response) is read
//! into memory only when its text is at most 1 MiB and 64 KiB more (with
//! [`Toolbox::read_calls`](crate::Toolbox::read_calls), the toolbox's
//! argument limit and 64 KiB more): a longer one holds no call a toolbox
//! would run with its default limit, and a JSON value can take 40 times
//! its text. It is measured without being built, and refused.
//!
//! ```
//! use typed_tools::reader::{read_calls, CallFormat, ReadErrorKind};
//!
//! let prose = "You can use `get_weather(city)` to get the forecast, or try send_email() later.";
//! assert_eq!(read_calls(CallFormat::Auto, prose).unwrap_err().kind, ReadErrorKind::NoCall);
//!
//! let sample_then_call = "```python\ndef get_weather(city: str) -> str: ...\n```\nget_weather(city=\"Lima\")";
//! assert_eq!(read_calls(CallFormat::Auto, sample_then_call)?[0].arguments, r#"{"city":"Lima"}"#);
//! # Ok::<(), typed_tools::reader::ReadError>(())
//! ```
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

use serde_json::Value;

use crate::cut::{cut, LINE};
use layout::Layout;

mod anthropic;
mod common;
mod hermes;
mod json_text;
mod layout;
mod openai;
mod pythonic;

/// One tool call read from a model's answer: give its `name` and
/// `arguments` to [`Toolbox::call`](crate::Toolbox::call), and answer the
/// provider with its `id`.
///
/// ```
/// use typed_tools::reader::{read_calls, CallFormat, ToolCall};
///
/// let answer = r#"{"type": "tool_use", "id": "toolu_1", "name": "get_note", "input": {"id": 7}}"#;
/// let calls = read_calls(CallFormat::Anthropic, answer)?;
/// assert_eq!(calls, [ToolCall {
///     id: Some("toolu_1".into()),
///     name: "get_note".into(),
///     arguments: r#"{"id":7}"#.into(),
/// }]);
/// # Ok::<(), typed_tools::reader::ReadError>(())
/// ```
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
///
/// ```
/// use typed_tools::reader::{read_calls, CallFormat};
///
/// let hermes = r#"<tool_call>{"name": "get_note", "arguments": {"id": 7}}</tool_call>"#;
/// assert_eq!(read_calls(CallFormat::Hermes, hermes)?[0].name, "get_note");
/// // `Auto` finds the format itself.
/// assert_eq!(read_calls(CallFormat::Auto, hermes)?[0].arguments, r#"{"id":7}"#);
/// # Ok::<(), typed_tools::reader::ReadError>(())
/// ```
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

/// Why no tool call could be read: whether the text held none or one that
/// could not be read ([`kind`](Self::kind)), what was expected, where, and
/// what was found.
///
/// ```
/// use typed_tools::reader::{read_calls, CallFormat, ReadErrorKind};
///
/// let answer = r#"{"tool_calls": [{"type": "function", "function": {"arguments": "{}"}}]}"#;
/// let error = read_calls(CallFormat::OpenAiChat, answer).unwrap_err();
/// assert_eq!(error.at, "$.tool_calls[0].function.name");
/// assert_eq!(error.format, CallFormat::OpenAiChat);
/// assert_eq!(error.kind, ReadErrorKind::Malformed);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadError {
    /// Whether the text held no call, or one that could not be read.
    pub kind: ReadErrorKind,
    /// The format being read.
    pub format: CallFormat,
    /// Where: a JSON path (`$.tool_calls[0].function.name`) or a byte offset (`byte 17`).
    pub at: String,
    /// What was expected there.
    pub expected: String,
    /// What was found.
    pub found: String,
}

/// What a [`ReadError`] says of the text: that it holds no call, or a call
/// (or a provider's response) that could not be read. An agent takes the
/// first for a final answer in prose and tells the model of the second.
///
/// ```
/// use typed_tools::reader::{read_calls, CallFormat, ReadErrorKind};
///
/// let prose = "The weather in Lima is sunny; `get_weather(city)` says so.";
/// assert_eq!(read_calls(CallFormat::Pythonic, prose).unwrap_err().kind, ReadErrorKind::NoCall);
/// let broken = "get_weather(city=)";
/// assert_eq!(read_calls(CallFormat::Pythonic, broken).unwrap_err().kind, ReadErrorKind::Malformed);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ReadErrorKind {
    /// A text format found no call where one may stand (see the [module
    /// docs](self#where-a-call-stands-in-text)): the text is prose, or
    /// only mentions calls. The provider formats give an empty list instead.
    NoCall,
    /// A call, or what was written as one, that could not be read; or a
    /// provider's response that is not what its format says.
    Malformed,
}

impl ReadError {
    fn new(
        format: CallFormat,
        at: impl Into<String>,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) -> ReadError {
        ReadError {
            kind: ReadErrorKind::Malformed,
            format,
            at: at.into(),
            expected: expected.into(),
            found: found.into(),
        }
    }

    /// The error of a text format that found no call in `text`, with what
    /// it looked for and what it says it found.
    fn no_call(format: CallFormat, expected: &str, found: &str) -> ReadError {
        ReadError {
            kind: ReadErrorKind::NoCall,
            ..ReadError::new(format, "byte 0", expected, found)
        }
    }

    /// A short message for the model: what was wrong and how to write a call.
    ///
    /// ```
    /// use typed_tools::reader::{read_calls, CallFormat};
    ///
    /// let error = read_calls(CallFormat::Hermes, "<tool_call>{\"arguments\": {}}</tool_call>").unwrap_err();
    /// assert!(error.for_model().starts_with("Your tool call could not be read: at "));
    /// assert!(error.for_model().ends_with(r#"Write each call as a JSON object {"name": "tool_name", "arguments": {...}}."#));
    /// ```
    pub fn for_model(&self) -> String {
        format!(
            "Your tool call could not be read: at {}, expected {}, found {}. \
             Write each call as a JSON object {{\"name\": \"tool_name\", \"arguments\": {{...}}}}.",
            cut(&self.at, LINE),
            cut(&self.expected, LINE),
            cut(&self.found, LINE)
        )
    }
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cannot read a {:?} tool call: at {}, expected {}, found {}",
            self.format,
            cut(&self.at, LINE),
            cut(&self.expected, LINE),
            cut(&self.found, LINE)
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
///
/// ```
/// use typed_tools::reader::{read_calls, CallFormat};
///
/// // Prose and no call: nothing to run.
/// assert!(read_calls(CallFormat::OpenAiChat, r#"{"role": "assistant", "content": "Done."}"#)?.is_empty());
/// // Two JSON calls in text, one fenced.
/// let text = "First:\n```json\n{\"name\": \"list_notes\", \"arguments\": {}}\n```\nthen {\"name\": \"get_note\", \"arguments\": {\"id\": 1}}";
/// let names: Vec<String> = read_calls(CallFormat::Json, text)?.into_iter().map(|c| c.name).collect();
/// assert_eq!(names, ["list_notes", "get_note"]);
/// # Ok::<(), typed_tools::reader::ReadError>(())
/// ```
pub fn read_calls(format: CallFormat, text: &str) -> Result<Vec<ToolCall>, ReadError> {
    read_calls_with(format, text, &|_| None, DEFAULT_MAX_JSON)
}

/// How much longer than a call's arguments may be ([`read_limit`]) a JSON
/// value of calls may be: the name, the id, the keys and the layout.
const CALL_OVERHEAD: usize = 64 << 10;

/// The most JSON text read into a value at once, by default: the toolbox's
/// default argument limit (1 MiB) with [`CALL_OVERHEAD`].
const DEFAULT_MAX_JSON: usize = (1 << 20) + CALL_OVERHEAD;

/// The most JSON text the readers read into a value at once for a toolbox
/// whose arguments are at most `max_argument_bytes`: a JSON value (a call,
/// a list of calls, a provider's response) longer than that could only
/// hold arguments the toolbox would refuse, or no call at all, and a JSON
/// value takes up to 40 times the memory of its text. It is measured
/// without being built, and refused.
pub(crate) fn read_limit(max_argument_bytes: usize) -> usize {
    max_argument_bytes.saturating_add(CALL_OVERHEAD)
}

/// [`read_calls`], with the parameter names of each tool for positional
/// arguments, and no JSON value of more than `max_json` bytes of text read.
pub(crate) fn read_calls_with(
    format: CallFormat,
    text: &str,
    parameters: &dyn Fn(&str) -> Option<Vec<String>>,
    max_json: usize,
) -> Result<Vec<ToolCall>, ReadError> {
    match format {
        CallFormat::OpenAiChat => openai::chat(&parse_json(format, text, max_json)?),
        CallFormat::OpenAiResponses => openai::responses(&parse_json(format, text, max_json)?),
        CallFormat::Anthropic => anthropic::read(&parse_json(format, text, max_json)?),
        CallFormat::Hermes => hermes::read(text, &Layout::new(text), max_json),
        CallFormat::Json => json_text::read(text, &Layout::new(text), max_json),
        CallFormat::Pythonic => pythonic::read(text, &Layout::new(text), parameters),
        CallFormat::Auto => auto(text, parameters, max_json),
    }
}

fn auto(
    text: &str,
    parameters: &dyn Fn(&str) -> Option<Vec<String>>,
    max_json: usize,
) -> Result<Vec<ToolCall>, ReadError> {
    // A provider's response is read whole, so only one within the limit.
    if text.len() <= max_json {
        if let Ok(value) = serde_json::from_str::<Value>(text) {
            if let Some(format) = provider_of(&value) {
                return read_calls_with(format, text, parameters, max_json);
            }
        }
    }
    let layout = Layout::new(text);
    if hermes::has_tag(text, &layout) {
        return hermes::read(text, &layout, max_json);
    }
    let json = json_text::read(text, &layout, max_json);
    if matches!(&json, Ok(calls) if !calls.is_empty()) {
        return json;
    }
    let python = match pythonic::read(text, &layout, parameters) {
        Ok(calls) => return Ok(calls),
        Err(python) => python,
    };
    match json {
        // Text that looked like JSON tells more than a Python parse error.
        Err(json)
            if json.kind != ReadErrorKind::NoCall
                && text.trim_start().starts_with(['{', '[', '`']) =>
        {
            Err(json)
        }
        _ => Err(ReadError {
            format: CallFormat::Auto,
            ..python
        }),
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

/// The calls of a provider's response already parsed: for the provider
/// clients, which read the rest of the same response.
#[cfg_attr(
    not(any(feature = "openai", feature = "anthropic")),
    allow(dead_code, reason = "used by the provider clients only")
)]
pub(crate) fn read_parsed(format: CallFormat, value: &Value) -> Result<Vec<ToolCall>, ReadError> {
    match format {
        CallFormat::OpenAiChat => openai::chat(value),
        CallFormat::OpenAiResponses => openai::responses(value),
        CallFormat::Anthropic => anthropic::read(value),
        _ => read_calls(format, &value.to_string()),
    }
}

fn parse_json(format: CallFormat, text: &str, max_json: usize) -> Result<Value, ReadError> {
    if text.len() > max_json {
        return Err(too_long(format, "$", text.len(), max_json));
    }
    crate::json::from_str_unique(text).map_err(|error| {
        let error = match error {
            crate::json::Unread::Syntax(error) => error,
            crate::json::Unread::Duplicate(path) => return duplicate(format, path.to_string()),
        };
        ReadError::new(
            format,
            format!("line {} column {}", error.line(), error.column()),
            "the provider's JSON response",
            format!("invalid JSON ({error})"),
        )
    })
}

/// The error for JSON that gives a key twice (at `at`): which of the two a
/// reader keeps is its own choice, so no call is read from it.
fn duplicate(format: CallFormat, at: String) -> ReadError {
    ReadError::new(format, at, "each key given once", "a key given twice")
}

/// The error for a JSON value of `bytes` bytes of text, past `max_json`.
fn too_long(format: CallFormat, at: impl Into<String>, bytes: usize, max_json: usize) -> ReadError {
    ReadError::new(
        format,
        at,
        format!("calls in JSON of at most {max_json} bytes"),
        format!("JSON of {bytes} bytes, which is not read"),
    )
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
    fn json_past_the_read_limit_is_measured_and_refused_and_the_rest_read() {
        let none = |_: &str| None;
        let long =
            r#"{"name": "a", "arguments": {"text": "0123456789012345678901234567890123456789"}}"#;
        let short = r#"{"name": "b", "arguments": {}}"#;
        let text = format!("{long}\n{short}");
        for format in [CallFormat::Json, CallFormat::Auto] {
            // Within the limit, both; past it, the long one is refused unread.
            assert_eq!(
                names(&read_calls_with(format, &text, &none, 1 << 10).unwrap()),
                ["a", "b"]
            );
            assert_eq!(
                names(&read_calls_with(format, &text, &none, 40).unwrap()),
                ["b"]
            );
            let error = read_calls_with(format, long, &none, 40).unwrap_err();
            assert_eq!(
                (error.at.as_str(), error.found.as_str()),
                ("byte 0", "JSON of 80 bytes, which is not read")
            );
        }
        let tagged = format!("<tool_call>{long}</tool_call>");
        let error = read_calls_with(CallFormat::Hermes, &tagged, &none, 40).unwrap_err();
        assert_eq!(error.found, "JSON of 80 bytes, which is not read");
        let error = read_calls_with(CallFormat::OpenAiChat, long, &none, 40).unwrap_err();
        assert_eq!(
            (error.at.as_str(), error.expected.as_str()),
            ("$", "calls in JSON of at most 40 bytes")
        );
        // A key given twice: no call is read from it, whichever is meant.
        let twice = r#"{"name": "a", "arguments": {"x": 1, "x": 2}}"#;
        for format in [CallFormat::Json, CallFormat::Auto] {
            let error = read_calls_with(format, twice, &none, 1 << 10).unwrap_err();
            assert_eq!(
                (error.at.as_str(), error.found.as_str()),
                ("byte 0, $.arguments.x", "a key given twice")
            );
        }
        let tagged = format!("<tool_call>{twice}</tool_call>");
        let error = read_calls_with(CallFormat::Hermes, &tagged, &none, 1 << 10).unwrap_err();
        assert_eq!(error.at, "byte 11, $.arguments.x");
        let python = "f(options={'a': 1, 'a': 2})";
        let error = read_calls_with(CallFormat::Pythonic, python, &none, 1 << 10).unwrap_err();
        assert_eq!(
            (error.at.as_str(), error.found.as_str()),
            ("byte 19", "a key given twice")
        );
        let chat = r#"{"tool_calls": [], "tool_calls": [{"type": "function", "function": {"name": "a", "arguments": "{}"}}]}"#;
        let error = read_calls_with(CallFormat::OpenAiChat, chat, &none, 1 << 10).unwrap_err();
        assert_eq!(error.at, "$.tool_calls");
        // Invalid JSON past the limit is told as invalid, as within it.
        let broken = format!("{}!", &long[..long.len() - 1]);
        let error = read_calls_with(CallFormat::Json, &broken, &none, 40).unwrap_err();
        assert!(error.found.starts_with("invalid JSON"), "{error:?}");
    }
}
