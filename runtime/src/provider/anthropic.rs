//! Anthropic Messages: `POST {base}/v1/messages`.

use reqwest::header::{HeaderMap, HeaderValue};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::assemble::{self, Assembly, Flow};
use super::http::{cut, ApiKey, Env, Transport};
use super::sse::Event;
use super::{client_api, env_var, id_of, native_tools, with_ids, Wire};
use crate::catalog::{Catalog, CatalogFormat};
use crate::model::{Message, ModelError, Request, Response, StopReason, ToolChoice};
use crate::reader::{read_calls, CallFormat, ToolCall};

/// A client for Anthropic Messages. Feature `anthropic`; **it needs a tokio
/// runtime** (see the [module docs](super)).
///
/// System messages go in `system`; the catalog in `tools`
/// ([`CatalogFormat::Anthropic`]); the answer's `tool_use` blocks come back
/// as [`Response::calls`] with their ids, read by [`reader`](crate::reader);
/// tool results go back as `tool_result` blocks answering those ids (with
/// `is_error` for a failed call), the results of one turn together in one
/// user message. Requests carry `x-api-key` and `anthropic-version`
/// ([`VERSION`](Self::VERSION)). Anthropic requires a token limit: a request
/// without [`Request::max_tokens`] takes [`default_max_tokens`](Self::default_max_tokens)
/// (4096 by default).
///
/// ```
/// use typed_tools::model::Model;
/// use typed_tools::provider::Anthropic;
/// use typed_tools::CatalogFormat;
///
/// let model = Anthropic::new("claude-sonnet-4-5").api_key("sk-ant-...").default_max_tokens(1024);
/// assert_eq!(model.name(), "anthropic/claude-sonnet-4-5");
/// assert_eq!(model.tool_format(), Some(CatalogFormat::Anthropic));
/// assert!(!format!("{model:?}").contains("sk-ant-..."));
/// ```
///
/// Streaming an answer, against a real server:
///
/// ```no_run
/// use futures::StreamExt;
/// use typed_tools::model::{Message, Model, Request, StreamEvent};
/// use typed_tools::provider::Anthropic;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// // ANTHROPIC_API_KEY and ANTHROPIC_MODEL set.
/// let model = Anthropic::from_env()?;
/// let mut events = model.stream(Request::new(vec![Message::user("Write a haiku.")]));
/// while let Some(event) = events.next().await {
///     match event? {
///         StreamEvent::Text(piece) => print!("{piece}"),
///         StreamEvent::Done(response) => println!("\n({} tokens)", response.usage.total()),
///         _ => {}
///     }
/// }
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct Anthropic {
    transport: Transport,
    model: String,
    name: String,
    max_tokens: u32,
    parallel_tool_calls: Option<bool>,
}

impl Anthropic {
    /// Anthropic's API, the base URL when none is given.
    pub const DEFAULT_BASE_URL: &'static str = "https://api.anthropic.com";

    /// The `anthropic-version` every request is sent with.
    pub const VERSION: &'static str = "2023-06-01";

    /// A client for `model` at [`DEFAULT_BASE_URL`](Self::DEFAULT_BASE_URL),
    /// with no key: set one with [`api_key`](Self::api_key). Reads nothing
    /// from the environment.
    pub fn new(model: impl Into<String>) -> Anthropic {
        let model = model.into();
        Anthropic {
            transport: Transport::new(Anthropic::DEFAULT_BASE_URL),
            name: format!("anthropic/{model}"),
            model,
            max_tokens: 4096,
            parallel_tool_calls: None,
        }
    }

    /// A client set up from the environment: `ANTHROPIC_MODEL` (required),
    /// `ANTHROPIC_BASE_URL` ([`DEFAULT_BASE_URL`](Self::DEFAULT_BASE_URL)
    /// when unset) and `ANTHROPIC_API_KEY` (required unless the base URL is
    /// on this machine). What is missing is a [`ModelError::Config`] saying
    /// what to set.
    ///
    /// ```
    /// use typed_tools::model::ModelError;
    /// use typed_tools::provider::Anthropic;
    ///
    /// if std::env::var("ANTHROPIC_MODEL").is_err() {
    ///     let Err(ModelError::Config { message }) = Anthropic::from_env() else { unreachable!() };
    ///     assert!(message.contains("ANTHROPIC_MODEL"));
    /// }
    /// ```
    pub fn from_env() -> Result<Anthropic, ModelError> {
        super::from_vars(env_var)
    }

    /// The token limit of a request that sets none
    /// ([`Request::max_tokens`]): Anthropic requires one. 4096 by default.
    pub fn default_max_tokens(mut self, tokens: u32) -> Anthropic {
        self.max_tokens = tokens;
        self
    }

    /// Whether the model may make several calls in one answer: `false` sends
    /// `disable_parallel_tool_use`. Unset by default (the provider's
    /// default: yes); sent only with tools.
    pub fn parallel_tool_calls(mut self, on: bool) -> Anthropic {
        self.parallel_tool_calls = Some(on);
        self
    }

    /// The catalog format it sends.
    fn format(&self) -> CatalogFormat {
        CatalogFormat::Anthropic
    }
}

impl Wire for Anthropic {
    const ENV: Env = Env {
        key: "ANTHROPIC_API_KEY",
        url: "ANTHROPIC_BASE_URL",
        model: "ANTHROPIC_MODEL",
        example: "`claude-sonnet-4-5`",
    };
    const PATH: &'static str = "/v1/messages";

    fn for_model(model: String) -> Anthropic {
        Anthropic::new(model)
    }

    fn transport(&self) -> &Transport {
        &self.transport
    }

    fn transport_mut(&mut self) -> &mut Transport {
        &mut self.transport
    }

    fn headers(&self, key: Option<&ApiKey>) -> Result<HeaderMap, ModelError> {
        let mut headers = HeaderMap::new();
        headers.insert(
            "anthropic-version",
            HeaderValue::from_static(Anthropic::VERSION),
        );
        if let Some(key) = key {
            headers.insert("x-api-key", key.header("")?);
        }
        Ok(headers)
    }

    fn body(
        &self,
        request: &Request,
        _: &reqwest::Url,
        stream: bool,
    ) -> Result<Vec<u8>, ModelError> {
        let tools = native_tools(request, &[CatalogFormat::Anthropic], "an Anthropic client")?;
        let messages = with_ids(&request.messages);
        let (system, turns) = turns(&messages);
        let body = Body {
            model: &self.model,
            max_tokens: request.max_tokens.unwrap_or(self.max_tokens),
            system,
            messages: turns,
            tools,
            tool_choice: tools.map(|_| tool_choice(&request.tool_choice, self.parallel_tool_calls)),
            stream,
        };
        serde_json::to_vec(&body).map_err(|error| ModelError::other(error.to_string()))
    }

    fn parse(body: &[u8]) -> Result<Response, ModelError> {
        parse(body)
    }

    fn parse_event(event: &Event, assembly: &mut Assembly) -> Result<Flow, ModelError> {
        parse_event(event, assembly)
    }
}

client_api!(Anthropic, "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL");

/// The call's arguments as a JSON value (`input`): the object the model
/// wrote, or `{}` when its text is not an object (the result that answers
/// the call says what was wrong with it).
fn arguments_value(call: &ToolCall) -> Value {
    match serde_json::from_str::<Value>(&call.arguments) {
        Ok(value @ Value::Object(_)) => value,
        _ => Value::Object(serde_json::Map::new()),
    }
}

#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    max_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    system: Option<String>,
    messages: Vec<Turn<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<&'a Catalog>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<Value>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    stream: bool,
}

#[derive(Serialize)]
struct Turn<'a> {
    role: &'static str,
    content: Vec<Block<'a>>,
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Block<'a> {
    Text {
        text: &'a str,
    },
    ToolUse {
        id: &'a str,
        name: &'a str,
        input: Value,
    },
    ToolResult {
        tool_use_id: &'a str,
        content: &'a str,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
    },
}

/// The system text and the turns of the conversation. System messages,
/// wherever they are, go in `system`; the tool results that follow an
/// assistant turn go together in one user turn, with the user's next words
/// after them (Anthropic wants results first); empty text is left out, as
/// Anthropic refuses an empty text block.
fn turns(messages: &[Message]) -> (Option<String>, Vec<Turn<'_>>) {
    let mut system: Vec<&str> = Vec::new();
    let mut turns: Vec<Turn<'_>> = Vec::new();
    // Whether the last turn is a user turn opened by tool results.
    let mut results_open = false;
    for message in messages {
        let mut push = |role, block, join: bool| match turns.last_mut() {
            Some(turn) if join => turn.content.push(block),
            _ => turns.push(Turn {
                role,
                content: vec![block],
            }),
        };
        match message {
            Message::System(text) => system.push(text),
            Message::User(text) if text.is_empty() => {}
            Message::User(text) => {
                push("user", Block::Text { text }, results_open);
                results_open = false;
            }
            Message::Assistant { text, calls } => {
                let mut content = Vec::new();
                if !text.is_empty() {
                    content.push(Block::Text { text });
                }
                content.extend(calls.iter().map(|call| Block::ToolUse {
                    id: id_of(&call.id),
                    name: &call.name,
                    input: arguments_value(call),
                }));
                if !content.is_empty() {
                    turns.push(Turn {
                        role: "assistant",
                        content,
                    });
                }
                results_open = false;
            }
            Message::ToolResult(result) => {
                let block = Block::ToolResult {
                    tool_use_id: id_of(&result.call_id),
                    content: &result.content,
                    is_error: result.is_error,
                };
                push("user", block, results_open);
                results_open = true;
            }
        }
    }
    let system = (!system.is_empty()).then(|| system.join("\n\n"));
    (system, turns)
}

fn tool_choice(choice: &ToolChoice, parallel: Option<bool>) -> Value {
    let mut value = match choice {
        ToolChoice::Auto => json!({ "type": "auto" }),
        ToolChoice::None => return json!({ "type": "none" }),
        ToolChoice::Required => json!({ "type": "any" }),
        ToolChoice::Only(name) => json!({ "type": "tool", "name": name }),
    };
    if parallel == Some(false) {
        value["disable_parallel_tool_use"] = json!(true);
    }
    value
}

fn stop_reason(reason: &str) -> StopReason {
    match reason {
        "end_turn" => StopReason::EndTurn,
        "max_tokens" => StopReason::MaxTokens,
        "stop_sequence" => StopReason::StopSequence,
        "tool_use" => StopReason::ToolUse,
        "refusal" => StopReason::Refused,
        other => StopReason::Other(other.to_owned()),
    }
}

/// Usage as Anthropic counts it: the input in three parts (uncached, written
/// to the cache, read from it), all of them tokens read.
#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    cache_creation_input_tokens: Option<u64>,
    #[serde(default)]
    cache_read_input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
}

impl WireUsage {
    fn input(&self) -> Option<u64> {
        let parts = [
            self.input_tokens,
            self.cache_creation_input_tokens,
            self.cache_read_input_tokens,
        ];
        parts.iter().any(Option::is_some).then(|| {
            parts
                .iter()
                .flatten()
                .fold(0u64, |sum, n| sum.saturating_add(*n))
        })
    }
}

#[derive(Deserialize)]
struct WireMessage {
    content: Vec<ContentBlock>,
    #[serde(default)]
    stop_reason: Option<String>,
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct ContentBlock {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    text: Option<String>,
}

/// A whole Messages response: its text blocks, its `tool_use` blocks read
/// by [`reader`](crate::reader), usage and stop reason.
fn parse(body: &[u8]) -> Result<Response, ModelError> {
    let malformed = |message: String| ModelError::Malformed {
        message,
        body: cut(&String::from_utf8_lossy(body)),
    };
    let text = std::str::from_utf8(body).map_err(|error| malformed(error.to_string()))?;
    let message: WireMessage =
        serde_json::from_str(text).map_err(|error| malformed(format!("not a message: {error}")))?;
    let calls =
        read_calls(CallFormat::Anthropic, text).map_err(|error| malformed(error.to_string()))?;
    let answer: String = message
        .content
        .iter()
        .filter(|block| block.kind == "text")
        .filter_map(|block| block.text.as_deref())
        .collect();
    let mut usage = crate::model::Usage::default();
    if let Some(wire) = &message.usage {
        usage.input_tokens = wire.input().unwrap_or_default();
        usage.output_tokens = wire.output_tokens.unwrap_or_default();
    }
    Ok(assemble::finished(
        answer,
        calls,
        usage,
        message.stop_reason.as_deref().map(stop_reason),
    ))
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum StreamedEvent {
    MessageStart {
        message: StartedMessage,
    },
    ContentBlockStart {
        index: u64,
        content_block: Value,
    },
    ContentBlockDelta {
        index: u64,
        delta: Value,
    },
    ContentBlockStop {},
    MessageDelta {
        #[serde(default)]
        delta: Option<MessageChange>,
        #[serde(default)]
        usage: Option<WireUsage>,
    },
    MessageStop {},
    Ping {},
    Error {
        error: Value,
    },
    #[serde(other)]
    Unknown,
}

#[derive(Deserialize)]
struct StartedMessage {
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct MessageChange {
    #[serde(default)]
    stop_reason: Option<String>,
}

/// One event of a Messages stream. Events of types this crate does not know
/// are skipped, as Anthropic asks of clients.
fn parse_event(event: &Event, assembly: &mut Assembly) -> Result<Flow, ModelError> {
    match assemble::json::<StreamedEvent>(event)? {
        StreamedEvent::MessageStart { message } => {
            if let Some(usage) = message.usage {
                assembly.usage(usage.input(), usage.output_tokens);
            }
        }
        StreamedEvent::ContentBlockStart {
            index,
            content_block,
        } => match content_block["type"].as_str() {
            Some("text") => assembly.text(content_block["text"].as_str().unwrap_or_default())?,
            Some("tool_use") => {
                let (Some(id), Some(name)) =
                    (content_block["id"].as_str(), content_block["name"].as_str())
                else {
                    return Err(ModelError::Malformed {
                        message: "a `tool_use` block without its `id` or `name`".into(),
                        body: cut(&event.data),
                    });
                };
                assembly.call(index, Some(id), Some(name))?;
                match &content_block["input"] {
                    Value::Object(input) if !input.is_empty() => {
                        assembly.given(index, content_block["input"].to_string())?
                    }
                    _ => {}
                }
            }
            _ => {}
        },
        StreamedEvent::ContentBlockDelta { index, delta } => match delta["type"].as_str() {
            Some("text_delta") => assembly.text(delta["text"].as_str().unwrap_or_default())?,
            Some("input_json_delta") => {
                assembly.arguments(index, delta["partial_json"].as_str().unwrap_or_default())?
            }
            _ => {}
        },
        StreamedEvent::MessageDelta { delta, usage } => {
            if let Some(reason) = delta.and_then(|delta| delta.stop_reason) {
                assembly.stop(stop_reason(&reason));
            }
            if let Some(usage) = usage {
                assembly.usage(usage.input(), usage.output_tokens);
            }
        }
        StreamedEvent::MessageStop {} => return Ok(Flow::End),
        StreamedEvent::Error { error } => return Err(streamed_error(&error, &event.data)),
        StreamedEvent::ContentBlockStop {} | StreamedEvent::Ping {} | StreamedEvent::Unknown => {}
    }
    Ok(Flow::More)
}

/// An `error` event in the middle of a stream, as the HTTP error it would
/// have been before the stream began (Anthropic's table of error types).
fn streamed_error(error: &Value, data: &str) -> ModelError {
    let body = cut(data);
    let status = match error["type"].as_str().unwrap_or_default() {
        "invalid_request_error" => 400,
        "authentication_error" => 401,
        "permission_error" => 403,
        "not_found_error" => 404,
        "request_too_large" => 413,
        "rate_limit_error" => {
            return ModelError::RateLimited {
                retry_after: None,
                body,
            }
        }
        "api_error" => 500,
        "overloaded_error" => 529,
        _ => return ModelError::other(format!("the provider sent an error in the stream: {body}")),
    };
    ModelError::Status { status, body }
}

#[cfg(test)]
mod tests {
    use super::super::mutations;
    use super::*;
    use crate::model::{Model, ToolResult};

    #[test]
    fn results_of_one_turn_go_together_before_the_users_words() {
        let a = ToolCall {
            id: Some("toolu_a".into()),
            name: "search".into(),
            arguments: r#"{"q": "rust"}"#.into(),
        };
        let b = ToolCall {
            id: Some("toolu_b".into()),
            name: "wether".into(),
            arguments: "not json".into(),
        };
        let messages = vec![
            Message::system("Be brief."),
            Message::user("Search, then the weather."),
            Message::Assistant {
                text: "On it.".into(),
                calls: vec![a.clone(), b.clone()],
            },
            Message::tool_result(ToolResult::ok(&a, "[]")),
            Message::tool_result(ToolResult::refused(&b, "unknown tool `wether`")),
            Message::user("Thanks."),
            Message::system("Answer in French."),
        ];
        let (system, turns) = turns(&messages);
        assert_eq!(system.as_deref(), Some("Be brief.\n\nAnswer in French."));
        assert_eq!(
            serde_json::to_value(&turns).unwrap(),
            json!([
                {"role": "user", "content": [{"type": "text", "text": "Search, then the weather."}]},
                {"role": "assistant", "content": [
                    {"type": "text", "text": "On it."},
                    {"type": "tool_use", "id": "toolu_a", "name": "search", "input": {"q": "rust"}},
                    {"type": "tool_use", "id": "toolu_b", "name": "wether", "input": {}}
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_a", "content": "[]"},
                    {"type": "tool_result", "tool_use_id": "toolu_b", "content": "unknown tool `wether`", "is_error": true},
                    {"type": "text", "text": "Thanks."}
                ]}
            ])
        );
    }

    #[test]
    fn tool_choice_in_anthropics_words() {
        assert_eq!(
            tool_choice(&ToolChoice::Required, None),
            json!({"type": "any"})
        );
        assert_eq!(
            tool_choice(&ToolChoice::Only("search".into()), Some(false)),
            json!({"type": "tool", "name": "search", "disable_parallel_tool_use": true})
        );
        assert_eq!(
            tool_choice(&ToolChoice::None, Some(false)),
            json!({"type": "none"})
        );
    }

    #[test]
    fn a_stream_error_keeps_its_kind() {
        let data =
            r#"{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}"#;
        let error = streamed_error(&serde_json::from_str::<Value>(data).unwrap()["error"], data);
        assert!(matches!(error, ModelError::Status { status: 529, .. }));
        assert!(error.is_retryable());
    }

    #[test]
    fn the_environment_names_model_url_and_key() {
        let var = |name: &str| match name {
            "ANTHROPIC_MODEL" => Some("claude-haiku-4-5".to_string()),
            _ => None,
        };
        match super::super::from_vars::<Anthropic>(var) {
            Err(ModelError::Config { message }) => {
                assert!(message.contains("set ANTHROPIC_API_KEY"), "{message}")
            }
            other => panic!("{other:?}"),
        }
        let var = |name: &str| match name {
            "ANTHROPIC_MODEL" => Some("claude-haiku-4-5".to_string()),
            "ANTHROPIC_API_KEY" => Some("sk-ant-test".to_string()),
            _ => None,
        };
        let client = super::super::from_vars::<Anthropic>(var).unwrap();
        assert_eq!(client.name(), "anthropic/claude-haiku-4-5");
        let (url, headers) = super::super::endpoint(&client).unwrap();
        assert_eq!(url.as_str(), "https://api.anthropic.com/v1/messages");
        assert_eq!(headers["anthropic-version"], "2023-06-01");
        assert_eq!(headers["x-api-key"], "sk-ant-test");
    }

    const TOOL_USE: &str = include_str!("testdata/anthropic_tool_use.json");
    const PARALLEL: &str = include_str!("testdata/anthropic_parallel_tool_use.json");
    const ANSWER: &str = include_str!("testdata/anthropic_answer.json");
    const STREAM_TOOL_USE: &str = include_str!("testdata/anthropic_stream_tool_use.sse");
    const STREAM_ANSWER: &str = include_str!("testdata/anthropic_stream_answer.sse");

    #[test]
    fn a_whole_answer_and_its_stream_read_alike() {
        for (whole, streamed) in [(PARALLEL, STREAM_TOOL_USE), (ANSWER, STREAM_ANSWER)] {
            mutations::read_alike::<Anthropic>(whole, streamed);
        }
        assert_eq!(parse(TOOL_USE.as_bytes()).unwrap().calls.len(), 1);
    }

    #[test]
    fn mutations_of_real_answers_are_read_or_malformed_never_a_panic() {
        mutations::never_panic::<Anthropic>(
            &[TOOL_USE, PARALLEL, ANSWER],
            &[STREAM_TOOL_USE, STREAM_ANSWER],
            "\"stop_reason\":\"",
        );
    }
}
