//! The [`Model`] trait: what the framework sends a language model and what it
//! gets back, in the terms every provider shares.
//!
//! - A [`Request`] is a conversation of [`Message`]s (system, user, the
//!   assistant's text and [`ToolCall`]s with their ids, and [`ToolResult`]s
//!   answering those ids), the tools offered, as a [`Catalog`] in the format
//!   the model reads natively (see [`Model::tool_format`]), and limits.
//! - A [`Response`] is the model's text, the tool calls it made, the tokens
//!   it spent ([`Usage`]) and why it stopped ([`StopReason`]).
//! - A failure is a [`ModelError`]: an HTTP status with the provider's body, a
//!   rate limit with its `retry-after`, a timeout, a body that is not what the
//!   provider documents.
//!
//! The trait is object safe (`Arc<dyn Model>`) and names no async runtime.
//! Recovery asks a model to repair a call
//! ([`Fix::Model`](crate::recover::Fix::Model)); the agent loop and plan
//! authoring run whole conversations through it. Provider clients implement
//! it behind cargo features; [`ScriptedModel`] replays answers written in
//! advance, so that tests and examples run offline and deterministically.
//!
//! ```
//! # futures::executor::block_on(async {
//! use typed_tools::model::{Message, Model, Request, Response, ScriptedModel, StopReason, ToolResult};
//! use typed_tools::ToolCall;
//!
//! let call = ToolCall { id: Some("call_1".into()), name: "weather".into(), arguments: r#"{"city": "Lima"}"#.into() };
//! let model = ScriptedModel::new([
//!     Response::new("").calls(vec![call.clone()]),
//!     Response::new("Sunny in Lima."),
//! ]);
//!
//! let mut messages = vec![Message::user("Weather in Lima?")];
//! let first = model.complete(Request::new(messages.clone())).await?;
//! assert_eq!(first.stop, StopReason::ToolUse);
//! // The program decides what runs; the result answers the call's id.
//! messages.push(first.to_message());
//! messages.push(Message::tool_result(ToolResult::ok(&call, r#""sunny""#)));
//! let second = model.complete(Request::new(messages)).await?;
//! assert_eq!(second.text, "Sunny in Lima.");
//! assert_eq!(model.requests()[1].messages[2].text(), r#""sunny""#);
//! // The script is used up: the next request is an error, not a made-up answer.
//! assert!(model.complete(Request::new(vec![Message::user("again")])).await.is_err());
//! # Ok::<(), typed_tools::model::ModelError>(())
//! # }).unwrap();
//! ```

use std::collections::VecDeque;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use futures::stream::BoxStream;
use futures::{FutureExt, StreamExt};

use crate::catalog::{Catalog, CatalogFormat};
use crate::error::ToolError;
use crate::reader::ToolCall;

/// Who wrote a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// Instructions.
    System,
    /// The user, or the program speaking for them.
    User,
    /// The model.
    Assistant,
    /// A tool's result, handed back to the model.
    ToolResult,
}

/// One message of a conversation.
///
/// ```
/// use typed_tools::model::{Message, Role};
///
/// let message = Message::user("Refund order 7.");
/// assert_eq!(message.role(), Role::User);
/// assert_eq!(message.text(), "Refund order 7.");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Message {
    /// Instructions.
    System(String),
    /// The user, or the program speaking for them.
    User(String),
    /// The model's turn: its text, and the tool calls it made, each with the
    /// provider's id when it gave one.
    Assistant {
        /// What it said (may be empty when it only called tools).
        text: String,
        /// The calls it made, in order.
        calls: Vec<ToolCall>,
        /// What it thought before it answered, kept apart from the text;
        /// sent back only to a provider that requires it (Anthropic's
        /// signed thinking blocks).
        reasoning: Vec<Reasoning>,
    },
    /// A tool's result, answering one call of the previous assistant message.
    ToolResult(ToolResult),
}

impl Message {
    /// A system message.
    pub fn system(text: impl Into<String>) -> Message {
        Message::System(text.into())
    }

    /// A user message.
    pub fn user(text: impl Into<String>) -> Message {
        Message::User(text.into())
    }

    /// A message from the model, text only.
    pub fn assistant(text: impl Into<String>) -> Message {
        Message::Assistant {
            text: text.into(),
            calls: Vec::new(),
            reasoning: Vec::new(),
        }
    }

    /// A message from the model with the tool calls it made.
    ///
    /// ```
    /// use typed_tools::model::Message;
    /// use typed_tools::ToolCall;
    ///
    /// let call = ToolCall { id: Some("call_1".into()), name: "weather".into(), arguments: "{}".into() };
    /// let message = Message::assistant_calls("", vec![call]);
    /// assert_eq!(message.calls()[0].name, "weather");
    /// ```
    pub fn assistant_calls(text: impl Into<String>, calls: Vec<ToolCall>) -> Message {
        Message::Assistant {
            text: text.into(),
            calls,
            reasoning: Vec::new(),
        }
    }

    /// A tool's result.
    pub fn tool_result(result: ToolResult) -> Message {
        Message::ToolResult(result)
    }

    /// Who wrote it.
    pub fn role(&self) -> Role {
        match self {
            Message::System(_) => Role::System,
            Message::User(_) => Role::User,
            Message::Assistant { .. } => Role::Assistant,
            Message::ToolResult(_) => Role::ToolResult,
        }
    }

    /// Its text: the words of a system, user or assistant message, a tool
    /// result's content.
    pub fn text(&self) -> &str {
        match self {
            Message::System(text) | Message::User(text) => text,
            Message::Assistant { text, .. } => text,
            Message::ToolResult(result) => &result.content,
        }
    }

    /// The tool calls of an assistant message; empty for the others.
    pub fn calls(&self) -> &[ToolCall] {
        match self {
            Message::Assistant { calls, .. } => calls,
            _ => &[],
        }
    }
}

/// A tool's result, answering one [`ToolCall`]: the output JSON, or the
/// error's [`for_model`](ToolError::for_model) text.
///
/// ```
/// use typed_tools::model::ToolResult;
/// use typed_tools::{ToolCall, ToolError};
///
/// let call = ToolCall { id: Some("toolu_1".into()), name: "wether".into(), arguments: "{}".into() };
/// let error = ToolError::UnknownTool {
///     name: "wether".into(),
///     suggestions: vec!["weather".into()],
///     available: vec!["weather".into()],
/// };
/// let result = ToolResult::error(&call, &error);
/// assert_eq!(result.call_id.as_deref(), Some("toolu_1"));
/// assert!(result.is_error);
/// assert!(result.content.contains("weather"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolResult {
    /// The provider's id of the call it answers; `None` for a call read from
    /// text, which has none.
    pub call_id: Option<String>,
    /// The tool's name, as the call gave it.
    pub name: String,
    /// The output as JSON text, or what went wrong, written for the model.
    pub content: String,
    /// Whether the call failed (Anthropic's `is_error`, MCP's `isError`).
    pub is_error: bool,
}

impl ToolResult {
    /// A call's output, as JSON text (a note on what recovery repaired may
    /// follow it).
    pub fn ok(call: &ToolCall, content: impl Into<String>) -> ToolResult {
        ToolResult {
            call_id: call.id.clone(),
            name: call.name.clone(),
            content: content.into(),
            is_error: false,
        }
    }

    /// A call's failure, told as [`ToolError::for_model`] tells it.
    pub fn error(call: &ToolCall, error: &ToolError) -> ToolResult {
        ToolResult::refused(call, error.for_model())
    }

    /// A call that did not run or failed, with `message` for the model: a
    /// refusal by a person, a limit reached.
    pub fn refused(call: &ToolCall, message: impl Into<String>) -> ToolResult {
        ToolResult {
            call_id: call.id.clone(),
            name: call.name.clone(),
            content: message.into(),
            is_error: true,
        }
    }
}

/// Whether the model may, must or must not call a tool.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolChoice {
    /// The model decides (the providers' default).
    #[default]
    Auto,
    /// It must answer in text.
    None,
    /// It must call some tool.
    Required,
    /// It must call this tool, and only it.
    Only(String),
}

/// What is sent to a model.
///
/// ```
/// use typed_tools::model::{Message, Request, ToolChoice};
/// use typed_tools::{tool, CatalogFormat, Toolbox};
///
/// /// Add two numbers.
/// #[tool(effects = Pure)]
/// fn add(a: i64, b: i64) -> i64 { a + b }
///
/// let toolbox = Toolbox::builder().tool(Add).build().unwrap();
/// let request = Request::new(vec![Message::user("2 + 3?")])
///     .tools(toolbox.catalog(CatalogFormat::OpenAiChat))
///     .tool_choice(ToolChoice::Required)
///     .max_tokens(256);
/// assert_eq!(request.tools.as_ref().unwrap().format(), CatalogFormat::OpenAiChat);
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct Request {
    /// The conversation so far.
    pub messages: Vec<Message>,
    /// The tools offered, rendered in the format the model reads natively
    /// ([`Model::tool_format`]); `None` offers none (tools described in the
    /// prompt as text are part of the messages).
    pub tools: Option<Catalog>,
    /// Whether a tool must be called.
    pub tool_choice: ToolChoice,
    /// The most tokens the answer may take, if limited.
    pub max_tokens: Option<u32>,
    /// The shape the answer's text must take, when the provider can hold the
    /// model to a JSON Schema (structured output); `None` for free text.
    pub output: Option<OutputSchema>,
}

/// A JSON Schema the answer's text must fit, for providers that hold a
/// model to one while it writes (OpenAI's `response_format` with a strict
/// `json_schema`, Anthropic's `output_config.format`). Each client sends
/// it in the dialect its provider takes (OpenAI's strict subset; for
/// Anthropic, that subset without the numeric and length bounds it does not
/// hold, which the caller checks when it reads the answer), or says why it
/// cannot ([`ModelError::Config`]).
///
/// ```
/// use typed_tools::model::{Message, OutputSchema, Request};
///
/// let schema = serde_json::json!({
///     "type": "object",
///     "properties": {"total": {"type": "integer"}},
///     "required": ["total"]
/// });
/// let request = Request::new(vec![Message::user("Sum 2 and 3.")])
///     .output(OutputSchema::new("sum", schema.clone()));
/// assert_eq!(request.output.unwrap().schema, schema);
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct OutputSchema {
    /// A name for it (OpenAI requires one): letters, digits, `_` and `-`.
    pub name: String,
    /// The JSON Schema, a Draft 2020-12 object schema as schemars writes it.
    pub schema: serde_json::Value,
}

impl OutputSchema {
    /// The schema `schema`, named `name`.
    pub fn new(name: impl Into<String>, schema: serde_json::Value) -> OutputSchema {
        OutputSchema {
            name: name.into(),
            schema,
        }
    }
}

impl Request {
    /// A request of `messages`, with no tools and no token limit.
    pub fn new(messages: Vec<Message>) -> Request {
        Request {
            messages,
            ..Request::default()
        }
    }

    /// Offers the tools of `catalog`, in the model's native format.
    pub fn tools(mut self, catalog: Catalog) -> Request {
        self.tools = Some(catalog);
        self
    }

    /// Sets whether a tool must be called.
    pub fn tool_choice(mut self, choice: ToolChoice) -> Request {
        self.tool_choice = choice;
        self
    }

    /// Limits the answer to `tokens` tokens.
    pub fn max_tokens(mut self, tokens: u32) -> Request {
        self.max_tokens = Some(tokens);
        self
    }

    /// Asks for an answer that fits `schema` (structured output).
    pub fn output(mut self, schema: OutputSchema) -> Request {
        self.output = Some(schema);
        self
    }
}

/// Tokens spent by one request, as the provider reports them, or estimated
/// where it reports none.
///
/// A provider that reports no usage (a local server that ignores
/// `stream_options.include_usage`, say) has it estimated by the client, one
/// token per four bytes ([`estimate_tokens`]) of the request in and of the
/// answer out, and [`estimated`](Self::estimated) says so: a budget is then
/// counted on the estimate, never on zero.
///
/// ```
/// use typed_tools::model::Usage;
///
/// let reported = Usage::new(120, 30);
/// assert_eq!(reported.total(), 150);
/// let guessed = Usage::estimate(40, 10);
/// assert!((reported + guessed).estimated);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Usage {
    /// Tokens read.
    pub input_tokens: u64,
    /// Tokens written.
    pub output_tokens: u64,
    /// Whether some of it is an estimate rather than the provider's count.
    pub estimated: bool,
}

impl Usage {
    /// Usage as a provider reported it.
    pub const fn new(input_tokens: u64, output_tokens: u64) -> Usage {
        Usage {
            input_tokens,
            output_tokens,
            estimated: false,
        }
    }

    /// Usage estimated where the provider reported none.
    pub const fn estimate(input_tokens: u64, output_tokens: u64) -> Usage {
        Usage {
            input_tokens,
            output_tokens,
            estimated: true,
        }
    }

    /// Both together.
    ///
    /// ```
    /// use typed_tools::model::Usage;
    ///
    /// assert_eq!(Usage::new(120, 30).total(), 150);
    /// ```
    pub fn total(&self) -> u64 {
        self.input_tokens.saturating_add(self.output_tokens)
    }
}

impl std::ops::Add for Usage {
    type Output = Usage;

    fn add(self, other: Usage) -> Usage {
        Usage {
            input_tokens: self.input_tokens.saturating_add(other.input_tokens),
            output_tokens: self.output_tokens.saturating_add(other.output_tokens),
            estimated: self.estimated || other.estimated,
        }
    }
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, other: Usage) {
        *self = *self + other;
    }
}

/// Why the model stopped writing.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StopReason {
    /// It finished its answer (OpenAI `stop`, Anthropic `end_turn`).
    EndTurn,
    /// It called tools and waits for their results (`tool_calls`, `tool_use`).
    ToolUse,
    /// It reached the token limit: the answer is cut short.
    MaxTokens,
    /// It wrote a stop sequence.
    StopSequence,
    /// The provider withheld or cut the answer (`content_filter`, `refusal`).
    Refused,
    /// A reason this crate does not know, as the provider wrote it.
    Other(String),
}

/// What a model thought before it answered, kept apart from the answer:
/// OpenAI-compatible servers' `reasoning_content` or `reasoning`, a
/// `thinking` part of a message's content, Anthropic's `thinking` and
/// `redacted_thinking` blocks.
///
/// Anthropic requires its thinking blocks back, signed, when the
/// conversation goes on after a tool call; its client sends back the blocks
/// that carry a [`signature`](Self::signature) or are
/// [`redacted`](Self::redacted), and no client sends reasoning to an
/// OpenAI-compatible server (DeepSeek refuses a request that holds it).
///
/// ```
/// use typed_tools::model::{Reasoning, Response};
///
/// let response = Response::new("42.").reasoning(vec![Reasoning::new("6 times 7 is 42.")]);
/// assert_eq!(response.text, "42.");
/// assert_eq!(response.reasoning_text(), "6 times 7 is 42.");
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Reasoning {
    /// Its text, as the provider shows it (empty for a redacted block).
    pub text: String,
    /// The provider's signature over it (Anthropic's `signature`), checked
    /// by the provider when the block comes back.
    pub signature: Option<String>,
    /// A block the provider redacted: its encrypted `data`, only passed back.
    pub redacted: Option<String>,
}

impl Reasoning {
    /// Reasoning text, unsigned.
    pub fn new(text: impl Into<String>) -> Reasoning {
        Reasoning {
            text: text.into(),
            ..Reasoning::default()
        }
    }

    /// Reasoning text with the provider's signature.
    pub fn signed(text: impl Into<String>, signature: impl Into<String>) -> Reasoning {
        Reasoning {
            text: text.into(),
            signature: Some(signature.into()),
            redacted: None,
        }
    }

    /// A redacted block: no text, its encrypted data.
    pub fn redacted(data: impl Into<String>) -> Reasoning {
        Reasoning {
            redacted: Some(data.into()),
            ..Reasoning::default()
        }
    }
}

/// What a model answered.
///
/// ```
/// use typed_tools::model::{Response, StopReason, Usage};
/// use typed_tools::ToolCall;
///
/// let call = ToolCall { id: None, name: "add".into(), arguments: r#"{"a": 2, "b": 3}"#.into() };
/// let response = Response::new("Let me add them.")
///     .calls(vec![call])
///     .usage(Usage::new(50, 12));
/// assert_eq!(response.stop, StopReason::ToolUse);
/// assert_eq!(response.to_message().calls()[0].name, "add");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Response {
    /// The text of the answer (never its reasoning).
    pub text: String,
    /// What the model thought before it answered, when the provider shows it.
    pub reasoning: Vec<Reasoning>,
    /// The tool calls it made natively (the provider's `tool_calls` or
    /// `tool_use` blocks), each with its id. Calls written in the text are
    /// read from [`text`](Self::text) with [`reader`](crate::reader).
    pub calls: Vec<ToolCall>,
    /// What it cost.
    pub usage: Usage,
    /// Why it stopped.
    pub stop: StopReason,
    /// What the answer held that this crate does not read, as the provider
    /// sent it: Anthropic's content blocks of other kinds (server tools'
    /// use and results, MCP connector blocks, kinds added later, a streamed
    /// block with its input put together), content parts of unknown types.
    /// They are skipped, never an error.
    pub unread: Vec<serde_json::Value>,
}

impl Response {
    /// A text answer that ended its turn, with no usage reported.
    pub fn new(text: impl Into<String>) -> Response {
        Response {
            text: text.into(),
            reasoning: Vec::new(),
            calls: Vec::new(),
            usage: Usage::default(),
            stop: StopReason::EndTurn,
            unread: Vec::new(),
        }
    }

    /// Sets the native tool calls; a non-empty list makes the stop reason
    /// [`StopReason::ToolUse`] (set another after, with [`stop`](Self::stop)).
    pub fn calls(mut self, calls: Vec<ToolCall>) -> Response {
        if !calls.is_empty() {
            self.stop = StopReason::ToolUse;
        }
        self.calls = calls;
        self
    }

    /// Sets what the model thought before it answered.
    pub fn reasoning(mut self, reasoning: Vec<Reasoning>) -> Response {
        self.reasoning = reasoning;
        self
    }

    /// Sets the tokens spent.
    pub fn usage(mut self, usage: Usage) -> Response {
        self.usage = usage;
        self
    }

    /// Sets why the model stopped.
    pub fn stop(mut self, stop: StopReason) -> Response {
        self.stop = stop;
        self
    }

    /// The text of its reasoning, every part joined.
    pub fn reasoning_text(&self) -> String {
        self.reasoning
            .iter()
            .map(|part| part.text.as_str())
            .collect()
    }

    /// The answer as the assistant message that goes back into the
    /// conversation: its text, calls and reasoning.
    pub fn to_message(&self) -> Message {
        Message::Assistant {
            text: self.text.clone(),
            calls: self.calls.clone(),
            reasoning: self.reasoning.clone(),
        }
    }
}

impl From<&str> for Response {
    fn from(text: &str) -> Response {
        Response::new(text)
    }
}

impl From<String> for Response {
    fn from(text: String) -> Response {
        Response::new(text)
    }
}

/// One piece of a streamed answer ([`Model::stream`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StreamEvent {
    /// More of the answer's text.
    Text(String),
    /// More of the model's reasoning, as it thinks: never part of the text
    /// (see [`Reasoning`]).
    Reasoning(String),
    /// A tool call began: its position among the answer's calls, the
    /// provider's id, and the tool's name.
    CallStarted {
        /// Its position among the calls of this answer.
        index: usize,
        /// The provider's id for it.
        id: Option<String>,
        /// The tool's name.
        name: String,
    },
    /// More of a call's argument text, which may end anywhere: mid-string,
    /// mid-escape.
    CallArguments {
        /// The call it belongs to.
        index: usize,
        /// The next piece of its argument text.
        fragment: String,
    },
    /// The whole answer, its calls assembled: the last event.
    Done(Response),
}

/// Why a model could not answer.
///
/// ```
/// use std::time::Duration;
/// use typed_tools::model::ModelError;
///
/// let limited = ModelError::RateLimited { retry_after: Some(Duration::from_secs(2)), body: String::new() };
/// assert!(limited.is_retryable());
/// let denied = ModelError::Status { status: 401, body: r#"{"error": "invalid api key"}"#.into() };
/// assert!(!denied.is_retryable());
/// assert_eq!(denied.to_string(), r#"the model could not answer: HTTP 401: {"error": "invalid api key"}"#);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ModelError {
    /// The provider answered with an error status, and this body.
    Status {
        /// The HTTP status.
        status: u16,
        /// The provider's error body (cut to a few KiB).
        body: String,
    },
    /// The provider limited the rate of requests (HTTP 429), still after
    /// any retries.
    RateLimited {
        /// How long it asked to wait (`retry-after`), if it said.
        retry_after: Option<Duration>,
        /// The provider's error body.
        body: String,
    },
    /// No answer within the time allowed.
    Timeout {
        /// The time allowed.
        after: Duration,
    },
    /// The provider could not be reached, or the connection broke.
    Connection {
        /// What the HTTP client said.
        message: String,
    },
    /// The provider answered with something it does not document.
    Malformed {
        /// What was wrong with it.
        message: String,
        /// The body, or its start.
        body: String,
    },
    /// The client is not set up: no API key, a bad base URL.
    Config {
        /// What is missing and how to give it.
        message: String,
    },
    /// Anything else: a script used up, a refusal by the implementation.
    Other {
        /// What went wrong.
        message: String,
    },
}

impl ModelError {
    /// An error of a kind this enum does not name.
    pub fn other(message: impl Into<String>) -> ModelError {
        ModelError::Other {
            message: message.into(),
        }
    }

    /// Whether asking again later may succeed: a rate limit, a server error
    /// (5xx), a timeout, a broken connection. A server error whose body says
    /// the request itself is invalid (an `invalid_request_error`, a
    /// validation error of the request's fields, as some servers send with
    /// a 500) is not: the same request fails the same way.
    ///
    /// ```
    /// use typed_tools::model::ModelError;
    ///
    /// let busy = ModelError::Status { status: 503, body: "overloaded".into() };
    /// assert!(busy.is_retryable());
    /// // llama-cpp-python's answer to an assistant message with `"content": null`.
    /// let invalid = ModelError::Status {
    ///     status: 500,
    ///     body: r#"{"error": {"message": "1 validation error for ChatCompletionRequestAssistantMessage\ncontent\n  Input should be a valid string", "type": "internal_server_error"}}"#.into(),
    /// };
    /// assert!(!invalid.is_retryable());
    /// ```
    pub fn is_retryable(&self) -> bool {
        match self {
            ModelError::Status { status, body } => *status >= 500 && !says_request_is_invalid(body),
            ModelError::RateLimited { .. }
            | ModelError::Timeout { .. }
            | ModelError::Connection { .. } => true,
            ModelError::Malformed { .. } | ModelError::Config { .. } | ModelError::Other { .. } => {
                false
            }
        }
    }
}

/// Whether an error body says the request itself is invalid: an error
/// type or code of a bad request (OpenAI's and Anthropic's
/// `invalid_request_error`, vLLM's `BadRequestError`), or the words of a
/// validation error (pydantic's, which FastAPI-based servers such as
/// llama-cpp-python send, sometimes with a 500).
fn says_request_is_invalid(body: &str) -> bool {
    const MARKS: [&str; 8] = [
        "invalid_request_error",
        "BadRequestError",
        "context_length_exceeded",
        "validation error for ",
        "validation errors for ",
        "Input should be ",
        "Field required",
        "Extra inputs are not permitted",
    ];
    MARKS.iter().any(|mark| body.contains(mark))
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the model could not answer: ")?;
        match self {
            ModelError::Status { status, body } => write!(f, "HTTP {status}: {body}"),
            ModelError::RateLimited {
                retry_after: Some(wait),
                ..
            } => write!(f, "rate limited; retry after {wait:?}"),
            ModelError::RateLimited { .. } => f.write_str("rate limited"),
            ModelError::Timeout { after } => write!(f, "no answer within {after:?}"),
            ModelError::Connection { message } => write!(f, "connection failed: {message}"),
            ModelError::Malformed { message, .. } => {
                write!(
                    f,
                    "the answer is not what the provider documents: {message}"
                )
            }
            ModelError::Config { message } | ModelError::Other { message } => f.write_str(message),
        }
    }
}

impl std::error::Error for ModelError {}

/// A language model: a [`Request`] in, a [`Response`] out.
///
/// Implement it over your provider's client, or enable a provider feature of
/// this crate. Object safe, so that policies and agents can hold an
/// `Arc<dyn Model>`; it names no async runtime.
///
/// ```
/// use futures::future::BoxFuture;
/// use typed_tools::model::{Model, ModelError, Request, Response};
///
/// /// A model that always says the same thing.
/// struct Parrot;
///
/// impl Model for Parrot {
///     fn complete(&self, _: Request) -> BoxFuture<'_, Result<Response, ModelError>> {
///         Box::pin(async { Ok(Response::new("hello")) })
///     }
/// }
///
/// # futures::executor::block_on(async {
/// let model: std::sync::Arc<dyn Model> = std::sync::Arc::new(Parrot);
/// assert_eq!(model.complete(Request::default()).await.unwrap().text, "hello");
/// assert_eq!(model.tool_format(), None);
/// # });
/// ```
pub trait Model: Send + Sync {
    /// Answers one request.
    fn complete(&self, request: Request) -> BoxFuture<'_, Result<Response, ModelError>>;

    /// Answers one request piece by piece: text and tool-call fragments as
    /// they arrive, then [`StreamEvent::Done`] with the whole response. The
    /// default streams [`complete`](Self::complete)'s answer as one event.
    fn stream(&self, request: Request) -> BoxStream<'_, Result<StreamEvent, ModelError>> {
        self.complete(request)
            .map(|answer| answer.map(StreamEvent::Done))
            .into_stream()
            .boxed()
    }

    /// The catalog format this model reads tools in natively (its `tools`
    /// field), or `None` when tools are described in the prompt as text and
    /// calls are read from the answer's text. `None` by default.
    fn tool_format(&self) -> Option<CatalogFormat> {
        None
    }

    /// A name for logs and traces: the provider and the model, such as
    /// `openai/gpt-4o-mini`.
    fn name(&self) -> &str {
        "model"
    }
}

impl<M: Model + ?Sized> Model for Arc<M> {
    fn complete(&self, request: Request) -> BoxFuture<'_, Result<Response, ModelError>> {
        (**self).complete(request)
    }

    fn stream(&self, request: Request) -> BoxStream<'_, Result<StreamEvent, ModelError>> {
        (**self).stream(request)
    }

    fn tool_format(&self) -> Option<CatalogFormat> {
        (**self).tool_format()
    }

    fn name(&self) -> &str {
        (**self).name()
    }
}

impl<M: Model + ?Sized> Model for Box<M> {
    fn complete(&self, request: Request) -> BoxFuture<'_, Result<Response, ModelError>> {
        (**self).complete(request)
    }

    fn stream(&self, request: Request) -> BoxStream<'_, Result<StreamEvent, ModelError>> {
        (**self).stream(request)
    }

    fn tool_format(&self) -> Option<CatalogFormat> {
        (**self).tool_format()
    }

    fn name(&self) -> &str {
        (**self).name()
    }
}

/// A model that replays answers written in advance, in order, and records the
/// requests it was sent. Once the answers are used up, each further request is
/// a [`ModelError::Other`].
///
/// An answer is a [`Response`]: text (`"..."` converts), or native tool calls
/// with [`Response::calls`]. One given without usage is charged an estimate:
/// a token per four bytes of the request's messages in, of the answer out.
/// By default it reads tools as text ([`Model::tool_format`] is `None`);
/// [`native`](Self::native) makes it take them in a provider's format, as a
/// real client would.
///
/// ```
/// # futures::executor::block_on(async {
/// use typed_tools::model::{Message, Model, ModelError, Request, ScriptedModel};
///
/// let model = ScriptedModel::new(["{\"city\": \"Lima\"}"]).then_fail("overloaded");
/// let response = model.complete(Request::new(vec![Message::user("Fix: {city: Lima")])).await?;
/// assert_eq!(response.text, "{\"city\": \"Lima\"}");
/// assert_eq!(response.usage.output_tokens, 4);
/// assert_eq!(model.requests()[0].messages[0].text(), "Fix: {city: Lima");
/// let outage = model.complete(Request::default()).await.unwrap_err();
/// assert_eq!(outage, ModelError::other("overloaded"));
/// # Ok::<(), ModelError>(())
/// # }).unwrap();
/// ```
#[derive(Debug, Default)]
pub struct ScriptedModel {
    answers: Mutex<VecDeque<Result<Response, ModelError>>>,
    requests: Mutex<Vec<Request>>,
    tool_format: Option<CatalogFormat>,
    /// Answers are picked by the conversation's turn, not taken in order.
    by_turn: bool,
}

impl ScriptedModel {
    /// A model that gives `answers`, one per request.
    pub fn new<A: Into<Response>>(answers: impl IntoIterator<Item = A>) -> ScriptedModel {
        ScriptedModel {
            answers: Mutex::new(answers.into_iter().map(|a| Ok(a.into())).collect()),
            requests: Mutex::default(),
            tool_format: None,
            by_turn: false,
        }
    }

    /// A model that answers each request with the answer for its turn of
    /// the conversation: `answers[n]` when the request holds `n` answers of
    /// the model already. As a real model does, it answers the
    /// conversation it is sent, however many requests came before: a
    /// [durable](crate::durable) run resumed in a new process, whose first
    /// answers are replayed from its journal, is answered from where it
    /// stands. Its answers are never used up ([`remaining`](Self::remaining)
    /// counts them all); a turn past the last is a [`ModelError::Other`].
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::model::{Message, Model, Request, ScriptedModel};
    ///
    /// let model = ScriptedModel::by_turn(["Which city?", "Sunny in Lima."]);
    /// let later = Request::new(vec![
    ///     Message::user("Weather?"),
    ///     Message::assistant("Which city?"),
    ///     Message::user("Lima"),
    /// ]);
    /// assert_eq!(model.complete(later.clone()).await.unwrap().text, "Sunny in Lima.");
    /// // Asked again, it answers the same.
    /// assert_eq!(model.complete(later).await.unwrap().text, "Sunny in Lima.");
    /// # });
    /// ```
    pub fn by_turn<A: Into<Response>>(answers: impl IntoIterator<Item = A>) -> ScriptedModel {
        ScriptedModel {
            by_turn: true,
            ..ScriptedModel::new(answers)
        }
    }

    /// Adds an answer after the others.
    pub fn then(self, answer: impl Into<Response>) -> ScriptedModel {
        lock(&self.answers).push_back(Ok(answer.into()));
        self
    }

    /// Adds an answer that is an error (an outage, a refusal) after the others.
    pub fn then_fail(self, message: impl Into<String>) -> ScriptedModel {
        self.then_error(ModelError::other(message))
    }

    /// Adds an answer that is this error after the others.
    pub fn then_error(self, error: ModelError) -> ScriptedModel {
        lock(&self.answers).push_back(Err(error));
        self
    }

    /// Takes tools natively in `format`, as a provider's client does: the
    /// agent then passes its catalog in [`Request::tools`] and reads the
    /// answers' [`Response::calls`].
    pub fn native(mut self, format: CatalogFormat) -> ScriptedModel {
        self.tool_format = Some(format);
        self
    }

    /// The requests received so far.
    pub fn requests(&self) -> Vec<Request> {
        lock(&self.requests).clone()
    }

    /// How many answers are left.
    pub fn remaining(&self) -> usize {
        lock(&self.answers).len()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A rough count of the tokens in `text`: one per four bytes, at least one.
///
/// ```
/// assert_eq!(typed_tools::model::estimate_tokens("four score and seven"), 5);
/// ```
pub fn estimate_tokens(text: &str) -> u64 {
    (text.len() as u64).div_ceil(4).max(1)
}

/// The estimated tokens of a message: its text, its calls' names and
/// arguments.
pub(crate) fn message_tokens(message: &Message) -> u64 {
    let calls: u64 = message
        .calls()
        .iter()
        .map(|call| estimate_tokens(&call.name) + estimate_tokens(&call.arguments))
        .sum();
    estimate_tokens(message.text()) + calls
}

/// The estimated tokens a request reads: its messages and the tools it
/// offers.
pub(crate) fn request_tokens(request: &Request) -> u64 {
    let messages: u64 = request.messages.iter().map(message_tokens).sum();
    let tools = request
        .tools
        .as_ref()
        .map_or(0, |tools| estimate_tokens(&tools.to_string()));
    messages + tools
}

/// The estimated tokens an answer wrote: its text, reasoning and calls.
pub(crate) fn answer_tokens(response: &Response) -> u64 {
    let reasoning = match response.reasoning_text() {
        text if text.is_empty() => 0,
        text => estimate_tokens(&text),
    };
    message_tokens(&response.to_message()) + reasoning
}

impl Model for ScriptedModel {
    fn complete(&self, request: Request) -> BoxFuture<'_, Result<Response, ModelError>> {
        let input_tokens = request_tokens(&request);
        let turn = request
            .messages
            .iter()
            .filter(|message| message.role() == Role::Assistant)
            .count();
        lock(&self.requests).push(request);
        let answer = match self.by_turn {
            true => lock(&self.answers).get(turn).cloned(),
            false => lock(&self.answers).pop_front(),
        };
        let result = match answer {
            Some(Ok(mut response)) => {
                if response.usage == Usage::default() {
                    response.usage = Usage::estimate(input_tokens, answer_tokens(&response));
                }
                Ok(response)
            }
            Some(Err(error)) => Err(error),
            None => Err(ModelError::other("the script has no more answers")),
        };
        futures::future::ready(result).boxed()
    }

    fn tool_format(&self) -> Option<CatalogFormat> {
        self.tool_format
    }

    fn name(&self) -> &str {
        "scripted"
    }
}
