//! OpenAI-compatible Chat Completions: `POST {base}/chat/completions`.

use reqwest::header::{HeaderMap, AUTHORIZATION};
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
    Message, ModelError, OutputSchema, Reasoning, Request, Response, StopReason, ToolChoice, Usage,
};
use crate::reader::CallFormat;

/// A client for OpenAI-compatible Chat Completions: OpenAI itself, and the
/// servers that speak its API on your machine or your cluster (Ollama,
/// vLLM, llama.cpp's `llama-server`). Feature `openai`; **it needs a tokio
/// runtime** (see the [module docs](super)).
///
/// The catalog goes in `tools` ([`CatalogFormat::OpenAiChat`], or
/// [`OpenAiChatStrict`](CatalogFormat::OpenAiChatStrict) after
/// [`strict(true)`](Self::strict)), the answer's `tool_calls` come back as
/// [`Response::calls`] with their ids, read by [`reader`](crate::reader);
/// tool results go back as `role: "tool"` messages answering those ids.
///
/// ```
/// use typed_tools::model::Model;
/// use typed_tools::provider::OpenAi;
/// use typed_tools::CatalogFormat;
///
/// // A model served by Ollama on this machine: no key needed.
/// let local = OpenAi::new("llama3.2").base_url("http://localhost:11434/v1");
/// assert_eq!(local.name(), "openai/llama3.2");
/// assert_eq!(local.tool_format(), Some(CatalogFormat::OpenAiChat));
///
/// // OpenAI, with strict schemas.
/// let hosted = OpenAi::new("gpt-4o-mini").api_key("sk-...").strict(true);
/// assert_eq!(hosted.tool_format(), Some(CatalogFormat::OpenAiChatStrict));
/// // The key never prints.
/// assert!(!format!("{hosted:?}").contains("sk-..."));
/// ```
///
/// A conversation with a tool, against a real server:
///
/// ```no_run
/// use typed_tools::model::{Message, Model, Request, ToolResult};
/// use typed_tools::provider::OpenAi;
/// use typed_tools::{tool, Toolbox};
///
/// /// Look up the weather in a city.
/// #[tool(effects = Network)]
/// fn weather(city: String) -> String { format!("sunny in {city}") }
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// // OPENAI_API_KEY and OPENAI_MODEL set; OPENAI_BASE_URL for another server.
/// let model = OpenAi::from_env()?;
/// let toolbox = Toolbox::builder().tool(Weather).build()?;
/// let catalog = toolbox.catalog(model.tool_format().unwrap());
///
/// let mut messages = vec![Message::user("Weather in Lima?")];
/// let answer = model.complete(Request::new(messages.clone()).tools(catalog.clone())).await?;
/// messages.push(answer.to_message());
/// for call in &answer.calls {
///     let result = match toolbox.call(&call.name, &call.arguments).await {
///         Ok(output) => ToolResult::ok(call, output.json()),
///         Err(error) => ToolResult::error(call, &error),
///     };
///     messages.push(Message::tool_result(result));
/// }
/// let last = model.complete(Request::new(messages).tools(catalog)).await?;
/// println!("{}", last.text);
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct OpenAi {
    transport: Transport,
    model: String,
    name: String,
    strict: bool,
    parallel_tool_calls: Option<bool>,
    max_completion_tokens: Option<bool>,
}

impl OpenAi {
    /// OpenAI's API, the base URL when none is given.
    pub const DEFAULT_BASE_URL: &'static str = "https://api.openai.com/v1";

    /// A client for `model` at [`DEFAULT_BASE_URL`](Self::DEFAULT_BASE_URL),
    /// with no key: set one with [`api_key`](Self::api_key), or point
    /// [`base_url`](Self::base_url) at a server on this machine, which needs
    /// none. Reads nothing from the environment.
    pub fn new(model: impl Into<String>) -> OpenAi {
        let model = model.into();
        OpenAi {
            transport: Transport::new(OpenAi::DEFAULT_BASE_URL),
            name: format!("openai/{model}"),
            model,
            strict: false,
            parallel_tool_calls: None,
            max_completion_tokens: None,
        }
    }

    /// A client set up from the environment: `OPENAI_MODEL` (required),
    /// `OPENAI_BASE_URL` ([`DEFAULT_BASE_URL`](Self::DEFAULT_BASE_URL) when
    /// unset), and `OPENAI_API_KEY` (required unless the base URL is on this
    /// machine). What is missing is a [`ModelError::Config`] saying what to set.
    ///
    /// ```
    /// use typed_tools::model::ModelError;
    /// use typed_tools::provider::OpenAi;
    ///
    /// if std::env::var("OPENAI_MODEL").is_err() {
    ///     let Err(ModelError::Config { message }) = OpenAi::from_env() else { unreachable!() };
    ///     assert!(message.contains("OPENAI_MODEL"));
    /// }
    /// ```
    pub fn from_env() -> Result<OpenAi, ModelError> {
        super::from_vars(env_var)
    }

    /// Sends the catalog in OpenAI's strict form
    /// ([`CatalogFormat::OpenAiChatStrict`]): the model's arguments then
    /// always match the schema. Off by default.
    pub fn strict(mut self, on: bool) -> OpenAi {
        self.strict = on;
        self
    }

    /// Sets `parallel_tool_calls`: whether the model may make several calls
    /// in one answer. Unset by default (the provider's default: yes); sent
    /// only with tools.
    pub fn parallel_tool_calls(mut self, on: bool) -> OpenAi {
        self.parallel_tool_calls = Some(on);
        self
    }

    /// Sends [`Request::max_tokens`] as `max_completion_tokens`, OpenAI's
    /// current name (which its reasoning models require), rather than
    /// `max_tokens`, the name every compatible server reads. By default,
    /// `max_completion_tokens` for `api.openai.com` and `max_tokens` for
    /// other servers.
    pub fn max_completion_tokens(mut self, on: bool) -> OpenAi {
        self.max_completion_tokens = Some(on);
        self
    }

    /// The catalog format it sends.
    fn format(&self) -> CatalogFormat {
        match self.strict {
            true => CatalogFormat::OpenAiChatStrict,
            false => CatalogFormat::OpenAiChat,
        }
    }
}

impl Wire for OpenAi {
    const ENV: Env = Env {
        key: "OPENAI_API_KEY",
        url: "OPENAI_BASE_URL",
        model: "OPENAI_MODEL",
        example: "`gpt-4o-mini`, or `llama3.2` for Ollama",
    };
    const PATH: &'static str = "/chat/completions";
    const PARSE: fn(&[u8]) -> Result<Response, ModelError> = parse;
    const PARSE_EVENT: Parse = parse_event;

    fn headers(&self, key: Option<&ApiKey>) -> Result<HeaderMap, ModelError> {
        let mut headers = HeaderMap::new();
        if let Some(key) = key {
            headers.insert(AUTHORIZATION, key.header("Bearer ")?);
        }
        Ok(headers)
    }

    fn body(
        &self,
        request: &Request,
        url: &reqwest::Url,
        stream: bool,
    ) -> Result<Vec<u8>, ModelError> {
        let formats = [CatalogFormat::OpenAiChat, CatalogFormat::OpenAiChatStrict];
        let formats = match self.strict {
            true => [formats[1], formats[0]],
            false => formats,
        };
        let tools = native_tools(request, &formats, "an OpenAI Chat client")?;
        let messages = with_ids(&request.messages);
        let completion_tokens = self
            .max_completion_tokens
            .unwrap_or(url.host_str() == Some("api.openai.com"));
        let body = Body {
            model: &self.model,
            messages: messages.iter().map(chat_message).collect(),
            tools,
            tool_choice: tools.map(|_| tool_choice(&request.tool_choice)),
            parallel_tool_calls: tools.and(self.parallel_tool_calls),
            response_format: request.output.as_ref().map(response_format),
            max_tokens: request.max_tokens.filter(|_| !completion_tokens),
            max_completion_tokens: request.max_tokens.filter(|_| completion_tokens),
            stream,
            stream_options: stream.then(|| json!({ "include_usage": true })),
        };
        to_json(&body)
    }
}

client_api!(OpenAi, "OPENAI_API_KEY", "OPENAI_BASE_URL");

#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    messages: Vec<ChatMessage<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<&'a Catalog>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    parallel_tool_calls: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    response_format: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_completion_tokens: Option<u32>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream_options: Option<Value>,
}

/// A message as Chat Completions takes it.
#[derive(Serialize)]
#[serde(tag = "role", rename_all = "lowercase")]
enum ChatMessage<'a> {
    System {
        content: &'a str,
    },
    User {
        content: &'a str,
    },
    Assistant {
        /// Always a string, `""` when the model only called tools: OpenAI
        /// takes `null` there, but strict servers (llama-cpp-python's, whose
        /// schema says a string) refuse it.
        content: &'a str,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<Value>,
    },
    Tool {
        tool_call_id: &'a str,
        content: &'a str,
    },
}

fn chat_message(message: &Message) -> ChatMessage<'_> {
    match message {
        Message::System(text) => ChatMessage::System { content: text },
        Message::User(text) => ChatMessage::User { content: text },
        Message::Assistant { text, calls, .. } => ChatMessage::Assistant {
            content: text,
            tool_calls: calls
                .iter()
                .map(|call| {
                    json!({
                        "id": id_of(&call.id),
                        "type": "function",
                        "function": { "name": call.name, "arguments": call.arguments },
                    })
                })
                .collect(),
        },
        Message::ToolResult(result) => ChatMessage::Tool {
            tool_call_id: id_of(&result.call_id),
            content: &result.content,
        },
    }
}

/// Structured output: the schema in OpenAI's strict subset when it has a
/// strict form (then the model's answer always fits it), else as it is,
/// `strict: false`.
fn response_format(output: &OutputSchema) -> Value {
    let (schema, strict) = match crate::catalog::strict_schema(&output.schema) {
        Some(strict) => (strict, true),
        None => (output.schema.clone(), false),
    };
    json!({
        "type": "json_schema",
        "json_schema": {"name": output.name, "schema": schema, "strict": strict},
    })
}

fn tool_choice(choice: &ToolChoice) -> Value {
    match choice {
        ToolChoice::Auto => json!("auto"),
        ToolChoice::None => json!("none"),
        ToolChoice::Required => json!("required"),
        ToolChoice::Only(name) => json!({ "type": "function", "function": { "name": name } }),
    }
}

/// The finish reason, `None` when none is given (missing, `null`, or `""`
/// as some servers send).
fn stop_reason(reason: Option<&str>) -> Option<StopReason> {
    Some(match reason? {
        "" => return None,
        "stop" => StopReason::EndTurn,
        "length" => StopReason::MaxTokens,
        "tool_calls" | "function_call" => StopReason::ToolUse,
        "content_filter" => StopReason::Refused,
        other => StopReason::Other(other.to_owned()),
    })
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
}

impl From<WireUsage> for Usage {
    fn from(usage: WireUsage) -> Usage {
        Usage::new(usage.prompt_tokens, usage.completion_tokens)
    }
}

/// What servers add beside the standard fields that this client reads:
/// Groq's streamed usage (`x_groq.usage`).
#[derive(Deserialize)]
struct Groq {
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct Completion {
    choices: Vec<Choice>,
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct Choice {
    message: Answer,
    #[serde(default)]
    finish_reason: Option<String>,
}

/// A message, or a streamed delta of one: its content (a string, or a
/// list of parts), its refusal, its reasoning (`reasoning_content`, as
/// DeepSeek, vLLM and llama.cpp send it, or `reasoning`, as OpenRouter,
/// Groq and Ollama do), its calls (read by the reader, or streamed).
#[derive(Deserialize)]
struct Answer {
    #[serde(default)]
    content: Option<Value>,
    #[serde(default)]
    refusal: Option<String>,
    #[serde(default)]
    reasoning_content: Option<Value>,
    #[serde(default)]
    reasoning: Option<Value>,
    /// A list of calls, or of call deltas in a stream.
    #[serde(default)]
    tool_calls: Option<Value>,
}

/// A message's content read: its text, reasoning and refusal, and the parts
/// of kinds this client does not read.
#[derive(Default)]
struct Content {
    text: String,
    reasoning: String,
    refusal: String,
    unread: Vec<Value>,
}

impl Answer {
    /// Its content, reasoning and refusal, apart. Content may be a string or
    /// a list of parts (`text`, `thinking` or `reasoning`, `refusal`; a
    /// `thinking` part may itself be a list, as Mistral's reasoning models
    /// send it); reasoning is `reasoning_content`, else `reasoning`, never
    /// both (some servers send the same text under both names).
    fn read(&mut self) -> Result<Content, String> {
        let mut content = Content::default();
        match self.content.take() {
            None | Some(Value::Null) => {}
            Some(Value::String(text)) => content.text = text,
            Some(Value::Array(parts)) => {
                for part in parts {
                    content.part(part)?;
                }
            }
            Some(other) => {
                return Err(format!(
                    "`content` is {}, not text or a list of parts",
                    crate::schema::describe_value(&other)
                ))
            }
        }
        for reasoning in [self.reasoning_content.take(), self.reasoning.take()] {
            if let Some(Value::String(text)) = reasoning {
                if !text.is_empty() {
                    content.reasoning.push_str(&text);
                    break;
                }
            }
        }
        if let Some(refusal) = self.refusal.take() {
            content.refusal.push_str(&refusal);
        }
        Ok(content)
    }
}

impl Content {
    /// One part of a content list: an object with a `type`; one of a type
    /// this client does not read is kept unread.
    fn part(&mut self, part: Value) -> Result<(), String> {
        let Some(kind) = part.get("type").and_then(Value::as_str) else {
            return Err(format!(
                "a part of `content` is not an object with a `type`: found {}",
                crate::schema::describe_value(&part)
            ));
        };
        match kind {
            "text" | "output_text" => texts(&part["text"], &mut self.text),
            "thinking" | "reasoning" | "reasoning_text" => {
                for field in ["thinking", "reasoning", "text", "content"] {
                    texts(&part[field], &mut self.reasoning);
                }
            }
            "refusal" => texts(&part["refusal"], &mut self.refusal),
            _ => self.unread.push(part),
        }
        Ok(())
    }
}

/// The text of a value that holds text: a string, or parts each holding
/// text (`{"type": "text", "text": ...}`), appended to `into`.
fn texts(value: &Value, into: &mut String) {
    match value {
        Value::String(text) => into.push_str(text),
        Value::Array(parts) => {
            for part in parts {
                match part {
                    Value::String(text) => into.push_str(text),
                    part => texts(&part["text"], into),
                }
            }
        }
        _ => {}
    }
}

/// A whole Chat Completions response: the first choice's text (or refusal)
/// and reasoning, its `tool_calls` read by [`reader`](crate::reader), the
/// usage and the finish reason.
fn parse(body: &[u8]) -> Result<Response, ModelError> {
    let malformed = |message: String| malformed(message, body);
    let (completion, calls) =
        read_answer::<Completion>(body, "a chat completion", CallFormat::OpenAiChat)?;
    let Some(mut choice) = completion.choices.into_iter().next() else {
        return Err(malformed("a chat completion with no `choices`".into()));
    };
    if let Some(calls) = choice.message.tool_calls.take() {
        if !calls.is_null() && !calls.is_array() {
            return Err(malformed("`tool_calls` is not a list".into()));
        }
    }
    let content = choice.message.read().map_err(malformed)?;
    let refused = !content.refusal.is_empty();
    let stop = match refused {
        true => Some(StopReason::Refused),
        false => stop_reason(choice.finish_reason.as_deref()),
    };
    let answer = match content.text.is_empty() && refused {
        true => content.refusal,
        false => content.text,
    };
    let mut response = assemble::finished(answer, calls, completion.usage.map(Usage::from), stop);
    if !content.reasoning.is_empty() {
        response.reasoning = vec![Reasoning::new(content.reasoning)];
    }
    response.unread = content.unread;
    Ok(response)
}

#[derive(Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Vec<ChunkChoice>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    x_groq: Option<Groq>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct ChunkChoice {
    #[serde(default)]
    index: u64,
    #[serde(default)]
    delta: Option<Answer>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct CallDelta {
    #[serde(default)]
    index: u64,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<FunctionDelta>,
}

#[derive(Deserialize)]
struct FunctionDelta {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<String>,
}

/// One `chat.completion.chunk` (or `[DONE]`): the first choice's delta, and
/// the usage that comes last with `stream_options.include_usage`. An
/// `error` in a chunk (Groq, OpenRouter) ends the stream with the error it
/// stands for.
fn parse_event(event: &Event, assembly: &mut Assembly) -> Result<Flow, ModelError> {
    if event.data.trim() == "[DONE]" {
        return Ok(Flow::End);
    }
    let chunk: Chunk = assemble::json(event)?;
    if let Some(error) = chunk.error.filter(|error| !error.is_null()) {
        return Err(stream_error(&error, &event.data));
    }
    let usage = chunk
        .usage
        .or_else(|| chunk.x_groq.and_then(|groq| groq.usage));
    if let Some(usage) = usage {
        assembly.usage(Some(usage.prompt_tokens), Some(usage.completion_tokens));
    }
    for choice in chunk.choices.into_iter().filter(|choice| choice.index == 0) {
        if let Some(mut delta) = choice.delta {
            let malformed = |message: String| malformed(message, event.data.as_bytes());
            let calls = match delta.tool_calls.take() {
                None | Some(Value::Null) => Vec::new(),
                Some(calls) => Vec::<CallDelta>::deserialize(calls)
                    .map_err(|error| malformed(format!("`tool_calls` in a chunk: {error}")))?,
            };
            let content = delta.read().map_err(malformed)?;
            assembly.reasoning(None, &content.reasoning)?;
            assembly.text(&content.text)?;
            if !content.refusal.is_empty() {
                assembly.text(&content.refusal)?;
                assembly.stop(StopReason::Refused);
            }
            for call in calls {
                let function = call.function.unwrap_or(FunctionDelta {
                    name: None,
                    arguments: None,
                });
                assembly.call(call.index, call.id.as_deref(), function.name.as_deref())?;
                if let Some(fragment) = function.arguments {
                    assembly.arguments(call.index, &fragment)?;
                }
            }
        }
        if let Some(reason) = stop_reason(choice.finish_reason.as_deref()) {
            assembly.stop(reason);
        }
    }
    Ok(Flow::More)
}

#[cfg(test)]
mod tests {
    use super::super::mutations;
    use super::*;
    use crate::model::{Model, ToolResult};
    use crate::reader::ToolCall;

    fn vars(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(key, value)| (key.to_string(), value.to_string()))
            .collect();
        move |name| {
            pairs
                .iter()
                .find(|(key, _)| key == name)
                .map(|(_, value)| value.clone())
        }
    }

    #[test]
    fn the_environment_names_model_url_and_key() {
        let client = super::super::from_vars::<OpenAi>(vars(&[
            ("OPENAI_MODEL", "gpt-4o-mini"),
            ("OPENAI_API_KEY", "sk-test"),
        ]))
        .unwrap();
        assert_eq!(client.name(), "openai/gpt-4o-mini");
        assert_eq!(client.transport.base_url, OpenAi::DEFAULT_BASE_URL);

        let local = super::super::from_vars::<OpenAi>(vars(&[
            ("OPENAI_MODEL", "qwen2.5"),
            ("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1"),
        ]))
        .unwrap();
        assert!(local.transport.api_key.is_none());

        for (missing, pairs) in [
            ("OPENAI_MODEL", &[("OPENAI_API_KEY", "sk-test")][..]),
            ("OPENAI_API_KEY", &[("OPENAI_MODEL", "gpt-4o")][..]),
        ] {
            match super::super::from_vars::<OpenAi>(vars(pairs)) {
                Err(ModelError::Config { message }) => {
                    assert!(message.contains(&format!("set {missing}")), "{message}")
                }
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn the_conversation_is_sent_in_chat_completions_form() {
        let call = ToolCall {
            id: Some("call_1".into()),
            name: "weather".into(),
            arguments: r#"{"city":"Lima"}"#.into(),
        };
        let request = Request::new(vec![
            Message::system("Be brief."),
            Message::user("Weather in Lima?"),
            Message::assistant_calls("", vec![call.clone()]),
            Message::tool_result(ToolResult::ok(&call, r#""sunny""#)),
        ])
        .max_tokens(100);
        let client = OpenAi::new("llama3.2").base_url("http://localhost:11434/v1");
        let (url, _) = super::super::endpoint(&client).unwrap();
        let body: Value =
            serde_json::from_slice(&client.body(&request, &url, false).unwrap()).unwrap();
        assert_eq!(
            body,
            json!({
                "model": "llama3.2",
                "messages": [
                    {"role": "system", "content": "Be brief."},
                    {"role": "user", "content": "Weather in Lima?"},
                    {"role": "assistant", "content": "", "tool_calls": [
                        {"id": "call_1", "type": "function",
                         "function": {"name": "weather", "arguments": "{\"city\":\"Lima\"}"}}
                    ]},
                    {"role": "tool", "tool_call_id": "call_1", "content": "\"sunny\""}
                ],
                "max_tokens": 100
            })
        );
        let hosted = OpenAi::new("o3").api_key("sk-test");
        let (url, _) = super::super::endpoint(&hosted).unwrap();
        let body: Value =
            serde_json::from_slice(&hosted.body(&request, &url, true).unwrap()).unwrap();
        assert_eq!(body["max_completion_tokens"], 100);
        assert_eq!(body.get("max_tokens"), None);
        assert_eq!(body["stream"], true);
        assert_eq!(body["stream_options"], json!({"include_usage": true}));
    }

    #[test]
    fn tools_in_another_format_or_a_choice_without_tools_are_refused() {
        let client = OpenAi::new("m").base_url("http://localhost:1/v1");
        let (url, _) = super::super::endpoint(&client).unwrap();
        let anthropic = crate::catalog::render(CatalogFormat::Anthropic, &[]);
        let request = Request::new(vec![Message::user("hi")]).tools(anthropic);
        assert!(matches!(
            client.body(&request, &url, false),
            Err(ModelError::Config { .. })
        ));
        let request = Request::new(vec![Message::user("hi")]).tool_choice(ToolChoice::Required);
        assert!(matches!(
            client.body(&request, &url, false),
            Err(ModelError::Config { .. })
        ));
        // An empty catalog is no tools: no `tools`, no `tool_choice`.
        let empty = crate::catalog::render(CatalogFormat::OpenAiChat, &[]);
        let request = Request::new(vec![Message::user("hi")]).tools(empty);
        let body: Value =
            serde_json::from_slice(&client.body(&request, &url, false).unwrap()).unwrap();
        assert_eq!(body.get("tools"), None);
        assert_eq!(body.get("tool_choice"), None);
    }

    /// A stream of `chunks`, framed as Chat Completions streams are.
    fn stream(chunks: &[Value]) -> String {
        let mut body: String = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
        body.push_str("data: [DONE]\n\n");
        body
    }

    #[test]
    fn a_null_function_call_beside_text_is_no_call() {
        // A vLLM answer: the legacy field as `null`, `tool_calls` empty,
        // `stop_reason` an integer, token ids and other extras.
        let body = json!({"id": "chatcmpl-1", "object": "chat.completion", "model": "qwen",
            "choices": [{"index": 0, "logprobs": null, "finish_reason": "stop", "stop_reason": 151645,
                "token_ids": [9707, 0],
                "message": {"role": "assistant", "content": "Hello!", "refusal": null,
                    "annotations": null, "audio": null, "function_call": null, "tool_calls": [],
                    "reasoning_content": null}}],
            "usage": {"prompt_tokens": 9, "total_tokens": 12, "completion_tokens": 3, "prompt_tokens_details": null},
            "prompt_logprobs": null, "prompt_token_ids": null, "kv_transfer_params": null});
        let response = parse(body.to_string().as_bytes()).unwrap();
        assert_eq!(response.text, "Hello!");
        assert!(response.calls.is_empty());
        assert_eq!(response.stop, StopReason::EndTurn);
        // A legacy call that is an object is still one.
        let legacy = json!({"choices": [{"message": {"role": "assistant", "content": null,
            "function_call": {"name": "weather", "arguments": "{\"city\": \"Lima\"}"}},
            "finish_reason": "function_call"}]});
        let response = parse(legacy.to_string().as_bytes()).unwrap();
        assert_eq!(response.calls[0].name, "weather");
    }

    #[test]
    fn content_as_a_list_of_parts_keeps_reasoning_apart() {
        // Mistral's reasoning models: a thinking part holding text parts.
        let body = json!({"choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant",
        "content": [
            {"type": "thinking", "thinking": [{"type": "text", "text": "2 and 2 "}, {"type": "text", "text": "make 4."}]},
            {"type": "text", "text": "The answer "},
            {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
            {"type": "text", "text": "is 4."}
        ]}}]});
        let response = parse(body.to_string().as_bytes()).unwrap();
        assert_eq!(response.text, "The answer is 4.");
        assert_eq!(response.reasoning_text(), "2 and 2 make 4.");
        assert_eq!(response.unread[0]["type"], "image_url");
        // A refusal part is the text when there is no other.
        let body = json!({"choices": [{"message": {"role": "assistant",
            "content": [{"type": "refusal", "refusal": "I can't help with that."}]}}]});
        let response = parse(body.to_string().as_bytes()).unwrap();
        assert_eq!(response.text, "I can't help with that.");
        assert_eq!(response.stop, StopReason::Refused);
    }

    #[test]
    fn reasoning_fields_are_kept_apart_from_the_answer() {
        // DeepSeek, vLLM and llama.cpp: `reasoning_content`; OpenRouter,
        // Groq and Ollama: `reasoning`; never both counted.
        for field in ["reasoning_content", "reasoning"] {
            let body = json!({"choices": [{"finish_reason": "stop", "message": {"role": "assistant",
                "content": "9.11 is smaller.", field: "Compare the tenths: 1 < 9."}}]});
            let response = parse(body.to_string().as_bytes()).unwrap();
            assert_eq!(response.text, "9.11 is smaller.");
            assert_eq!(response.reasoning_text(), "Compare the tenths: 1 < 9.");
        }
        let both = json!({"choices": [{"message": {"content": "x",
            "reasoning_content": "why", "reasoning": "why"}}]});
        assert_eq!(
            parse(both.to_string().as_bytes()).unwrap().reasoning_text(),
            "why"
        );
        let streamed = stream(&[
            json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": null, "reasoning_content": "Compare "}}]}),
            json!({"choices": [{"index": 0, "delta": {"content": null, "reasoning_content": "the tenths."}}]}),
            json!({"choices": [{"index": 0, "delta": {"content": "9.11", "reasoning_content": null}}]}),
            json!({"choices": [{"index": 0, "delta": {"content": " is smaller."}, "finish_reason": "stop"}]}),
        ]);
        let response = assemble::replay(streamed.as_bytes(), parse_event).unwrap();
        assert_eq!(response.text, "9.11 is smaller.");
        assert_eq!(response.reasoning_text(), "Compare the tenths.");
    }

    #[test]
    fn an_empty_finish_reason_is_no_reason() {
        let body = json!({"choices": [{"message": {"content": "Hi."}, "finish_reason": ""}]});
        assert_eq!(
            parse(body.to_string().as_bytes()).unwrap().stop,
            StopReason::EndTurn
        );
        let body = json!({"choices": [{"finish_reason": "", "message": {"content": null, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}}]});
        assert_eq!(
            parse(body.to_string().as_bytes()).unwrap().stop,
            StopReason::ToolUse
        );
        let streamed = stream(&[
            json!({"choices": [{"index": 0, "delta": {"content": "Hi."}, "finish_reason": ""}]}),
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]}),
        ]);
        let response = assemble::replay(streamed.as_bytes(), parse_event).unwrap();
        assert_eq!(response.stop, StopReason::MaxTokens);
    }

    #[test]
    fn an_error_inside_a_stream_keeps_its_code_and_message() {
        let cases = [
            // Groq and OpenRouter: a numeric code.
            (
                json!({"error": {"code": 400, "message": "tool call validation failed"}}),
                Some(400),
            ),
            (
                json!({"error": {"message": "upstream timed out", "code": 502}}),
                Some(502),
            ),
            // OpenRouter's mid-stream error: a string code, beside a choice.
            (
                json!({"id": "gen-1", "error": {"code": "server_error", "message": "Provider disconnected unexpectedly"},
                "choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": "error"}]}),
                Some(500),
            ),
            (
                json!({"error": {"message": "Rate limit reached", "type": "tokens", "code": "rate_limit_exceeded"}}),
                Some(429),
            ),
            (json!({"error": {"message": "something odd"}}), None),
        ];
        for (chunk, status) in cases {
            let body = stream(&[
                json!({"choices": [{"index": 0, "delta": {"content": "Hel"}}]}),
                chunk.clone(),
            ]);
            let error = assemble::replay(body.as_bytes(), parse_event).unwrap_err();
            let message = chunk["error"]["message"].as_str().unwrap();
            match (status, &error) {
                (Some(429), ModelError::RateLimited { body, .. }) => {
                    assert!(body.contains(message))
                }
                (Some(code), ModelError::Status { status, body }) => {
                    assert_eq!(*status, code);
                    assert!(body.contains(message), "{body}");
                }
                (None, ModelError::Other { message: text }) => assert!(text.contains(message)),
                _ => panic!("{chunk}: {error:?}"),
            }
        }
    }

    #[test]
    fn groq_streams_its_usage_beside_the_chunk() {
        let body = stream(&[
            json!({"choices": [{"index": 0, "delta": {"content": "Hi"}}], "x_groq": {"id": "req_1"}}),
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                "x_groq": {"id": "req_1", "usage": {"prompt_tokens": 20, "completion_tokens": 2, "total_tokens": 22}}}),
        ]);
        let response = assemble::replay(body.as_bytes(), parse_event).unwrap();
        assert_eq!(response.usage, Usage::new(20, 2));
    }

    #[test]
    fn usage_not_reported_is_estimated_not_zero() {
        let body = stream(&[
            json!({"choices": [{"index": 0, "delta": {"content": "Twelve bytes"}, "finish_reason": "stop"}]}),
        ]);
        let mut response = assemble::replay(body.as_bytes(), parse_event).unwrap();
        assert!(response.usage.estimated);
        super::super::estimate_usage(&mut response, 100);
        assert_eq!(response.usage, Usage::estimate(100, 3));
        // Reported usage stays as it is.
        let mut reported = parse(ANSWER.as_bytes()).unwrap();
        let before = reported.usage;
        super::super::estimate_usage(&mut reported, 100);
        assert_eq!(reported.usage, before);
        assert!(!before.estimated);
    }

    #[test]
    fn an_output_schema_goes_as_a_strict_response_format_when_it_can() {
        let client = OpenAi::new("m").base_url("http://localhost:1/v1");
        let (url, _) = super::super::endpoint(&client).unwrap();
        let report = json!({"$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {"items": {"type": "array", "items": {"type": "integer"}},
                           "note": {"type": ["string", "null"]}},
            "required": ["items"]});
        let request = Request::new(vec![Message::user("hi")])
            .output(crate::model::OutputSchema::new("restock_report", report));
        let body: Value =
            serde_json::from_slice(&client.body(&request, &url, false).unwrap()).unwrap();
        let format = &body["response_format"];
        assert_eq!(format["type"], "json_schema");
        assert_eq!(format["json_schema"]["name"], "restock_report");
        assert_eq!(format["json_schema"]["strict"], true);
        let schema = &format["json_schema"]["schema"];
        assert_eq!(schema["additionalProperties"], false);
        assert_eq!(schema["required"], json!(["items", "note"]));
        assert_eq!(schema.get("$schema"), None);
        // A map has no strict form: sent as it is, not strict.
        let map = json!({"type": "object", "additionalProperties": {"type": "integer"}});
        let request = Request::new(vec![Message::user("hi")])
            .output(crate::model::OutputSchema::new("counts", map.clone()));
        let body: Value =
            serde_json::from_slice(&client.body(&request, &url, false).unwrap()).unwrap();
        assert_eq!(body["response_format"]["json_schema"]["strict"], false);
        assert_eq!(body["response_format"]["json_schema"]["schema"], map);
    }

    #[test]
    fn a_refusal_is_the_text_and_the_stop_reason() {
        let body = br#"{"choices": [{"index": 0, "message": {"role": "assistant", "content": null,
            "refusal": "I can't help with that."}, "finish_reason": "stop"}]}"#;
        let response = parse(body).unwrap();
        assert_eq!(response.text, "I can't help with that.");
        assert_eq!(response.stop, StopReason::Refused);
    }

    const TOOL_CALL: &str = include_str!("testdata/openai_tool_call.json");
    const PARALLEL_CALLS: &str = include_str!("testdata/openai_parallel_calls.json");
    const ANSWER: &str = include_str!("testdata/openai_answer.json");
    const STREAM_CALLS: &str = include_str!("testdata/openai_stream_calls.sse");
    const STREAM_ANSWER: &str = include_str!("testdata/openai_stream_answer.sse");

    #[test]
    fn a_whole_answer_and_its_stream_read_alike() {
        for (whole, streamed) in [(PARALLEL_CALLS, STREAM_CALLS), (ANSWER, STREAM_ANSWER)] {
            mutations::read_alike::<OpenAi>(whole, streamed);
        }
        assert_eq!(parse(TOOL_CALL.as_bytes()).unwrap().calls.len(), 1);
    }

    #[test]
    fn mutations_of_the_replay_corpus_never_panic() {
        mutations::corpus_never_panics::<OpenAi>("openai");
    }

    #[test]
    fn mutations_of_real_answers_are_read_or_malformed_never_a_panic() {
        mutations::never_panic::<OpenAi>(
            &[TOOL_CALL, PARALLEL_CALLS, ANSWER],
            &[STREAM_CALLS, STREAM_ANSWER],
            "\"finish_reason\":\"",
        );
    }
}
