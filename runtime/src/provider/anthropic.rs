//! Anthropic Messages: `POST {base}/v1/messages`.

use reqwest::header::{HeaderMap, HeaderValue};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::assemble::{self, Assembly, Flow, Parse};
use super::http::{malformed, ApiKey, Env, Transport};
use super::sse::Event;
use super::{
    client_api, env_var, id_of, native_tools, read_answer, stream_error, to_json, with_ids, Wire,
};
use crate::catalog::{Catalog, CatalogFormat};
use crate::model::{
    Message, ModelError, OutputSchema, Reasoning, Request, Response, StopReason, ToolChoice,
};
use crate::reader::{CallFormat, ToolCall};

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
    const PARSE: fn(&[u8]) -> Result<Response, ModelError> = parse;
    const PARSE_EVENT: Parse = parse_event;

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
        let output_config = match &request.output {
            Some(output) => Some(output_config(output)?),
            None => None,
        };
        to_json(&Body {
            model: &self.model,
            max_tokens: request.max_tokens.unwrap_or(self.max_tokens),
            system,
            messages: turns,
            tools,
            tool_choice: tools.map(|_| tool_choice(&request.tool_choice, self.parallel_tool_calls)),
            output_config,
            stream,
        })
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
    #[serde(skip_serializing_if = "Option::is_none")]
    output_config: Option<Value>,
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
    Thinking {
        thinking: &'a str,
        signature: &'a str,
    },
    RedactedThinking {
        data: &'a str,
    },
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
            Message::Assistant {
                text,
                calls,
                reasoning,
            } => {
                // Thinking goes back first, as it came, and only as
                // Anthropic signed it: a block with no signature (another
                // provider's reasoning) would be refused.
                let mut content: Vec<Block<'_>> = reasoning
                    .iter()
                    .filter_map(|part| match (&part.redacted, &part.signature) {
                        (Some(data), _) => Some(Block::RedactedThinking { data }),
                        (None, Some(signature)) => Some(Block::Thinking {
                            thinking: &part.text,
                            signature,
                        }),
                        (None, None) => None,
                    })
                    .collect();
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

/// Structured output (`output_config.format`): the schema in the subset
/// Anthropic holds a model to: OpenAI's strict form (every object closed)
/// without the bounds it does not hold (numeric limits, lengths, patterns,
/// item counts), which whoever reads the answer checks; a recursive schema,
/// or one with no strict form, cannot be sent, and the error says what to do.
fn output_config(output: &OutputSchema) -> Result<Value, ModelError> {
    let schema = crate::catalog::strict_schema(&output.schema)
        .filter(|schema| !recursive(schema))
        .ok_or_else(|| ModelError::Config {
            message: format!(
                "the output schema `{}` has no form Anthropic's structured output takes (a recursive type, a map, a tuple, or a root that is not an object): ask for the output through a tool or in the prompt instead",
                output.name
            ),
        })?;
    Ok(json!({"format": {"type": "json_schema", "schema": without_bounds(schema)}}))
}

/// The schema without the keywords Anthropic's structured output refuses.
fn without_bounds(mut schema: Value) -> Value {
    const BOUNDS: [&str; 10] = [
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "pattern",
        "minItems",
        "maxItems",
    ];
    let mut stack = vec![&mut schema];
    while let Some(node) = stack.pop() {
        match node {
            Value::Object(keywords) => {
                for bound in BOUNDS {
                    // Only as keywords: a property may be named `pattern`.
                    if keywords.get(bound).is_some_and(|v| !v.is_object()) {
                        keywords.remove(bound);
                    }
                }
                stack.extend(keywords.values_mut());
            }
            Value::Array(items) => stack.extend(items.iter_mut()),
            _ => {}
        }
    }
    schema
}

/// Whether a schema's definitions refer to themselves, directly or not.
fn recursive(schema: &Value) -> bool {
    let Some(definitions) = schema.get("$defs").and_then(Value::as_object) else {
        return false;
    };
    let refers = |value: &Value| {
        let mut names = Vec::new();
        let mut stack = vec![value];
        while let Some(node) = stack.pop() {
            match node {
                Value::Object(keywords) => {
                    if let Some(name) = keywords
                        .get("$ref")
                        .and_then(Value::as_str)
                        .and_then(|r| r.strip_prefix("#/$defs/"))
                    {
                        names.push(name.to_owned());
                    }
                    stack.extend(keywords.values());
                }
                Value::Array(items) => stack.extend(items),
                _ => {}
            }
        }
        names
    };
    // Kahn's order: definitions that refer to none left are taken away
    // until none is; any left then lies on a cycle.
    let names: Vec<&String> = definitions.keys().collect();
    let edges: Vec<Vec<usize>> = definitions
        .values()
        .map(|definition| {
            refers(definition)
                .iter()
                .filter_map(|name| names.iter().position(|n| *n == name))
                .collect()
        })
        .collect();
    let mut pending: Vec<usize> = edges.iter().map(Vec::len).collect();
    let mut referred_by: Vec<Vec<usize>> = vec![Vec::new(); names.len()];
    for (from, targets) in edges.iter().enumerate() {
        for &to in targets {
            referred_by[to].push(from);
        }
    }
    let mut free: Vec<usize> = (0..names.len()).filter(|&i| pending[i] == 0).collect();
    let mut taken = 0;
    while let Some(done) = free.pop() {
        taken += 1;
        for &from in &referred_by[done] {
            pending[from] -= 1;
            if pending[from] == 0 {
                free.push(from);
            }
        }
    }
    taken < names.len()
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

    fn whole(&self) -> Option<crate::model::Usage> {
        let (input, output) = (self.input(), self.output_tokens);
        (input.is_some() || output.is_some()).then(|| {
            crate::model::Usage::new(input.unwrap_or_default(), output.unwrap_or_default())
        })
    }
}

#[derive(Deserialize)]
struct WireMessage {
    content: Vec<Value>,
    #[serde(default)]
    stop_reason: Option<String>,
    #[serde(default)]
    usage: Option<WireUsage>,
}

/// A block of content whose kind this client reads.
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Known {
    Text {
        text: String,
    },
    Thinking {
        #[serde(default)]
        thinking: String,
        #[serde(default)]
        signature: Option<String>,
    },
    RedactedThinking {
        data: String,
    },
}

/// A block of content read: `Ok` for text and thinking, `Err` for a block
/// this client does not read (a `tool_use` block is read by the reader;
/// server tools, MCP connector blocks and kinds added later are kept in
/// [`Response::unread`]). A known kind with fields of the wrong type is
/// malformed.
fn known(block: &Value) -> Result<Option<Known>, String> {
    match block.get("type") {
        Some(Value::String(kind))
            if matches!(&**kind, "text" | "thinking" | "redacted_thinking") =>
        {
            Known::deserialize(block).map(Some).map_err(|error| {
                format!("a `{kind}` block is not what Anthropic documents: {error}")
            })
        }
        Some(Value::String(_)) => Ok(None),
        _ => Err(format!(
            "a content block without a `type`: found {}",
            crate::schema::describe_value(block)
        )),
    }
}

/// A whole Messages response: its text blocks, its thinking (kept apart),
/// its `tool_use` blocks read by [`reader`](crate::reader), the blocks of
/// other kinds kept unread, usage and stop reason.
fn parse(body: &[u8]) -> Result<Response, ModelError> {
    let (message, calls) = read_answer::<WireMessage>(body, "a message", CallFormat::Anthropic)?;
    let mut answer = String::new();
    let mut reasoning = Vec::new();
    let mut unread = Vec::new();
    for block in message.content {
        match known(&block).map_err(|message| malformed(message, body))? {
            Some(Known::Text { text }) => answer.push_str(&text),
            Some(Known::Thinking {
                thinking,
                signature,
            }) => reasoning.push(Reasoning {
                signature,
                ..Reasoning::new(thinking)
            }),
            Some(Known::RedactedThinking { data }) => reasoning.push(Reasoning::redacted(data)),
            None if block.get("type").and_then(Value::as_str) == Some("tool_use") => {}
            None => unread.push(block),
        }
    }
    let mut response = assemble::finished(
        answer,
        calls,
        message.usage.as_ref().and_then(WireUsage::whole),
        message.stop_reason.as_deref().map(stop_reason),
    );
    response.reasoning = reasoning;
    response.unread = unread;
    Ok(response)
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
/// are skipped, as Anthropic asks of clients; so are blocks and deltas of
/// kinds it does not read: a block other than text, thinking and
/// `tool_use` (a server tool's use, streaming its input as
/// `input_json_delta` too) is kept in [`Response::unread`].
fn parse_event(event: &Event, assembly: &mut Assembly) -> Result<Flow, ModelError> {
    let malformed = |message: String| malformed(message, event.data.as_bytes());
    match assemble::json::<StreamedEvent>(event)? {
        StreamedEvent::MessageStart { message } => {
            if let Some(usage) = message.usage {
                assembly.usage(usage.input(), usage.output_tokens);
            }
        }
        StreamedEvent::ContentBlockStart {
            index,
            content_block,
        } => {
            if content_block["type"].as_str() == Some("tool_use") {
                let (Some(id), Some(name)) =
                    (content_block["id"].as_str(), content_block["name"].as_str())
                else {
                    return Err(malformed(
                        "a `tool_use` block without its `id` or `name`".into(),
                    ));
                };
                assembly.call(index, Some(id), Some(name))?;
                match &content_block["input"] {
                    Value::Object(input) if !input.is_empty() => {
                        assembly.given(index, content_block["input"].to_string())?
                    }
                    _ => {}
                }
                return Ok(Flow::More);
            }
            match known(&content_block).map_err(malformed)? {
                Some(Known::Text { text }) => assembly.text(&text)?,
                Some(Known::Thinking {
                    thinking,
                    signature,
                }) => assembly.reasoning_block(
                    index,
                    Reasoning {
                        signature: signature.filter(|s| !s.is_empty()),
                        ..Reasoning::new(thinking)
                    },
                )?,
                Some(Known::RedactedThinking { data }) => {
                    assembly.reasoning_block(index, Reasoning::redacted(data))?
                }
                None => assembly.unread(index, content_block)?,
            }
        }
        StreamedEvent::ContentBlockDelta { index, delta } => {
            let text = |field: &str| delta[field].as_str().unwrap_or_default();
            match delta["type"].as_str() {
                Some("text_delta") => assembly.text(text("text"))?,
                Some("input_json_delta") => assembly.arguments(index, text("partial_json"))?,
                Some("thinking_delta") => assembly.reasoning(Some(index), text("thinking"))?,
                Some("signature_delta") => assembly.signature(index, text("signature"))?,
                _ => {}
            }
        }
        StreamedEvent::MessageDelta { delta, usage } => {
            if let Some(reason) = delta.and_then(|delta| delta.stop_reason) {
                assembly.stop(stop_reason(&reason));
            }
            if let Some(usage) = usage {
                assembly.usage(usage.input(), usage.output_tokens);
            }
        }
        StreamedEvent::MessageStop {} => return Ok(Flow::End),
        StreamedEvent::Error { error } => return Err(stream_error(&error, &event.data)),
        StreamedEvent::ContentBlockStop {} | StreamedEvent::Ping {} | StreamedEvent::Unknown => {}
    }
    Ok(Flow::More)
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
            Message::assistant_calls("On it.", vec![a.clone(), b.clone()]),
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
    fn an_output_schema_goes_in_output_config_without_the_bounds_it_does_not_hold() {
        let client = Anthropic::new("m").api_key("k");
        let (url, _) = super::super::endpoint(&client).unwrap();
        let report = json!({"type": "object",
            "properties": {"total": {"type": "integer", "minimum": 0},
                           "code": {"type": "string", "pattern": "^[A-Z]+$", "maxLength": 8},
                           "pattern": {"type": "string"}},
            "required": ["total", "code", "pattern"]});
        let request =
            Request::new(vec![Message::user("hi")]).output(OutputSchema::new("report", report));
        let body: Value =
            serde_json::from_slice(&client.body(&request, &url, false).unwrap()).unwrap();
        let schema = &body["output_config"]["format"]["schema"];
        assert_eq!(body["output_config"]["format"]["type"], "json_schema");
        assert_eq!(schema["additionalProperties"], false);
        assert_eq!(schema["properties"]["total"], json!({"type": "integer"}));
        assert_eq!(schema["properties"]["code"], json!({"type": "string"}));
        // A property named like a keyword stays.
        assert_eq!(schema["properties"]["pattern"], json!({"type": "string"}));
        // A recursive type cannot be held: the error says what to do.
        let tree = json!({"type": "object", "properties": {"root": {"$ref": "#/$defs/Node"}},
            "required": ["root"],
            "$defs": {"Node": {"type": "object", "properties": {
                "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}},
                "required": ["children"]}}});
        let request =
            Request::new(vec![Message::user("hi")]).output(OutputSchema::new("tree", tree));
        match client.body(&request, &url, false) {
            Err(ModelError::Config { message }) => {
                assert!(message.contains("through a tool"), "{message}")
            }
            other => panic!("{other:?}"),
        }
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
        let error = stream_error(&serde_json::from_str::<Value>(data).unwrap()["error"], data);
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

    /// One event of a stream, as Anthropic frames it.
    fn event(data: serde_json::Value) -> String {
        format!(
            "event: {}\ndata: {data}\n\n",
            data["type"].as_str().unwrap()
        )
    }

    /// A stream as Anthropic sends it with extended thinking and its web
    /// search server tool (the shapes of its streaming docs): thinking with
    /// its signature, a `server_tool_use` block whose input streams as
    /// `input_json_delta`, its result block, text, then a client tool call.
    fn server_tool_stream(stop: &str) -> String {
        [
            json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [], "usage": {"input_tokens": 2679, "output_tokens": 3}}}),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "I need the weather, "}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "so I search first."}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "EqQBCgIYAhIM1gbcDa9GJwZA"}}),
            json!({"type": "content_block_stop", "index": 0}),
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "server_tool_use", "id": "srvtoolu_014hJH82Qum7Td6UV8gDXThB", "name": "web_search", "input": {}}}),
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"query\": \"weather "}}),
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "NYC today\"}"}}),
            json!({"type": "content_block_stop", "index": 1}),
            json!({"type": "content_block_start", "index": 2, "content_block": {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_014hJH82Qum7Td6UV8gDXThB", "content": [{"type": "web_search_result", "title": "Weather in New York City", "url": "https://weather.example/nyc", "encrypted_content": "Ev0DCioIAhgC"}]}}),
            json!({"type": "content_block_stop", "index": 2}),
            json!({"type": "content_block_start", "index": 3, "content_block": {"type": "text", "text": ""}}),
            json!({"type": "content_block_delta", "index": 3, "delta": {"type": "text_delta", "text": "It is sunny in New York."}}),
            json!({"type": "content_block_delta", "index": 3, "delta": {"type": "citations_delta", "citation": {"type": "web_search_result_location", "url": "https://weather.example/nyc"}}}),
            json!({"type": "content_block_stop", "index": 3}),
            json!({"type": "content_block_start", "index": 4, "content_block": {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"}}),
            json!({"type": "content_block_stop", "index": 4}),
            json!({"type": "content_block_start", "index": 5, "content_block": {"type": "a_block_added_next_year", "payload": 1}}),
            json!({"type": "content_block_delta", "index": 5, "delta": {"type": "a_delta_added_next_year", "more": 2}}),
            json!({"type": "content_block_stop", "index": 5}),
            json!({"type": "content_block_start", "index": 6, "content_block": {"type": "tool_use", "id": "toolu_01A", "name": "save_note", "input": {}}}),
            json!({"type": "content_block_delta", "index": 6, "delta": {"type": "input_json_delta", "partial_json": "{\"text\": \"sunny\"}"}}),
            json!({"type": "content_block_stop", "index": 6}),
            json!({"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 510, "server_tool_use": {"web_search_requests": 1}}}),
            json!({"type": "message_stop"}),
        ]
        .map(event)
        .concat()
    }

    #[test]
    fn server_tools_thinking_and_unknown_blocks_stream_without_failing() {
        let response =
            assemble::replay(server_tool_stream("tool_use").as_bytes(), parse_event).unwrap();
        assert_eq!(response.text, "It is sunny in New York.");
        // Only the client tool is a call; the server tool's input is its own.
        assert_eq!(response.calls.len(), 1);
        assert_eq!(response.calls[0].name, "save_note");
        assert_eq!(response.calls[0].arguments, r#"{"text": "sunny"}"#);
        assert_eq!(
            response.reasoning,
            [
                Reasoning::signed(
                    "I need the weather, so I search first.",
                    "EqQBCgIYAhIM1gbcDa9GJwZA"
                ),
                Reasoning::redacted("EmwKAhgBEgy3va3pzix"),
            ]
        );
        let kinds: Vec<_> = response.unread.iter().map(|b| b["type"].clone()).collect();
        assert_eq!(
            kinds,
            [
                "server_tool_use",
                "web_search_tool_result",
                "a_block_added_next_year"
            ]
        );
        assert_eq!(
            response.unread[0]["input"],
            json!({"query": "weather NYC today"})
        );
        assert_eq!(response.usage, crate::model::Usage::new(2679, 510));
        // The same blocks, whole, read alike.
        let whole = json!({"type": "message", "role": "assistant", "stop_reason": "pause_turn",
            "content": [
                {"type": "thinking", "thinking": "I need the weather.", "signature": "EqQB"},
                {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "weather"}},
                {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []},
                {"type": "mcp_tool_use", "id": "mcptoolu_1", "name": "echo", "server_name": "example", "input": {"x": 1}},
                {"type": "text", "text": "Searching.", "citations": null}
            ],
            "usage": {"input_tokens": 10, "output_tokens": 5}});
        let response = parse(whole.to_string().as_bytes()).unwrap();
        assert_eq!(response.text, "Searching.");
        assert_eq!(response.reasoning_text(), "I need the weather.");
        assert!(response.calls.is_empty());
        assert_eq!(response.unread.len(), 3);
        assert_eq!(response.stop, StopReason::Other("pause_turn".into()));
        let paused =
            assemble::replay(server_tool_stream("pause_turn").as_bytes(), parse_event).unwrap();
        assert_eq!(paused.stop, StopReason::Other("pause_turn".into()));
    }

    #[test]
    fn signed_thinking_goes_back_before_the_calls_it_led_to() {
        let call = ToolCall {
            id: Some("toolu_1".into()),
            name: "save_note".into(),
            arguments: r#"{"text": "sunny"}"#.into(),
        };
        let messages = vec![
            Message::user("Note the weather."),
            Message::Assistant {
                text: String::new(),
                calls: vec![call.clone()],
                reasoning: vec![
                    Reasoning::signed("Save it.", "sig"),
                    Reasoning::redacted("opaque"),
                    // Another provider's reasoning: Anthropic would refuse it.
                    Reasoning::new("unsigned"),
                ],
            },
            Message::tool_result(ToolResult::ok(&call, "true")),
        ];
        let (_, turns) = turns(&messages);
        assert_eq!(
            serde_json::to_value(&turns[1]).unwrap(),
            json!({"role": "assistant", "content": [
                {"type": "thinking", "thinking": "Save it.", "signature": "sig"},
                {"type": "redacted_thinking", "data": "opaque"},
                {"type": "tool_use", "id": "toolu_1", "name": "save_note", "input": {"text": "sunny"}}
            ]})
        );
    }

    #[test]
    fn a_delta_for_a_block_that_never_started_is_still_malformed() {
        let orphan = event(
            json!({"type": "content_block_delta", "index": 9, "delta": {"type": "input_json_delta", "partial_json": "{}"}}),
        );
        let error = assemble::replay(orphan.as_bytes(), parse_event).unwrap_err();
        assert!(matches!(error, ModelError::Malformed { .. }), "{error:?}");
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
    fn mutations_of_the_replay_corpus_never_panic() {
        mutations::corpus_never_panics::<Anthropic>("anthropic");
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
