//! OpenAI-compatible Chat Completions: `POST {base}/chat/completions`.

use reqwest::header::{HeaderMap, AUTHORIZATION};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::assemble::{self, Assembly, Flow};
use super::http::{cut, ApiKey, Env, Transport};
use super::sse::Event;
use super::{client_api, env_var, id_of, native_tools, with_ids, Wire};
use crate::catalog::{Catalog, CatalogFormat};
use crate::model::{Message, ModelError, Request, Response, StopReason, ToolChoice, Usage};
use crate::reader::{read_calls, CallFormat};

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

    fn for_model(model: String) -> OpenAi {
        OpenAi::new(model)
    }

    fn transport(&self) -> &Transport {
        &self.transport
    }

    fn transport_mut(&mut self) -> &mut Transport {
        &mut self.transport
    }

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
            max_tokens: request.max_tokens.filter(|_| !completion_tokens),
            max_completion_tokens: request.max_tokens.filter(|_| completion_tokens),
            stream,
            stream_options: stream.then(|| json!({ "include_usage": true })),
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
        /// `null` when the model only called tools.
        content: Option<&'a str>,
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
        Message::Assistant { text, calls } => ChatMessage::Assistant {
            content: (!text.is_empty() || calls.is_empty()).then_some(text.as_str()),
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

fn tool_choice(choice: &ToolChoice) -> Value {
    match choice {
        ToolChoice::Auto => json!("auto"),
        ToolChoice::None => json!("none"),
        ToolChoice::Required => json!("required"),
        ToolChoice::Only(name) => json!({ "type": "function", "function": { "name": name } }),
    }
}

fn stop_reason(reason: &str) -> StopReason {
    match reason {
        "stop" => StopReason::EndTurn,
        "length" => StopReason::MaxTokens,
        "tool_calls" | "function_call" => StopReason::ToolUse,
        "content_filter" => StopReason::Refused,
        other => StopReason::Other(other.to_owned()),
    }
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
        Usage {
            input_tokens: usage.prompt_tokens,
            output_tokens: usage.completion_tokens,
        }
    }
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

#[derive(Deserialize)]
struct Answer {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    refusal: Option<String>,
    /// Read by the reader; here only to check it is a list.
    #[serde(default)]
    #[allow(dead_code, reason = "deserialized to check its shape")]
    tool_calls: Option<Vec<Value>>,
}

/// A whole Chat Completions response: the first choice's text (or refusal),
/// its `tool_calls` read by [`reader`](crate::reader), the usage and the
/// finish reason.
fn parse(body: &[u8]) -> Result<Response, ModelError> {
    let malformed = |message: String| ModelError::Malformed {
        message,
        body: cut(&String::from_utf8_lossy(body)),
    };
    let text = std::str::from_utf8(body).map_err(|error| malformed(error.to_string()))?;
    let completion: Completion = serde_json::from_str(text)
        .map_err(|error| malformed(format!("not a chat completion: {error}")))?;
    let Some(choice) = completion.choices.into_iter().next() else {
        return Err(malformed("a chat completion with no `choices`".into()));
    };
    let calls =
        read_calls(CallFormat::OpenAiChat, text).map_err(|error| malformed(error.to_string()))?;
    let refused = choice.message.refusal.filter(|refusal| !refusal.is_empty());
    let stop = match &refused {
        Some(_) => Some(StopReason::Refused),
        None => choice.finish_reason.as_deref().map(stop_reason),
    };
    let answer = match (choice.message.content, refused) {
        (Some(content), _) if !content.is_empty() => content,
        (_, Some(refusal)) => refusal,
        _ => String::new(),
    };
    Ok(assemble::finished(
        answer,
        calls,
        completion.usage.map(Usage::from).unwrap_or_default(),
        stop,
    ))
}

#[derive(Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Vec<ChunkChoice>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct ChunkChoice {
    #[serde(default)]
    index: u64,
    #[serde(default)]
    delta: Option<Delta>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct Delta {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    refusal: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<CallDelta>>,
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
/// the usage that comes last with `stream_options.include_usage`.
fn parse_event(event: &Event, assembly: &mut Assembly) -> Result<Flow, ModelError> {
    if event.data.trim() == "[DONE]" {
        return Ok(Flow::End);
    }
    let chunk: Chunk = assemble::json(event)?;
    if let Some(error) = chunk.error {
        return Err(ModelError::other(format!(
            "the provider sent an error in the stream: {}",
            cut(&error.to_string())
        )));
    }
    if let Some(usage) = chunk.usage {
        assembly.usage(Some(usage.prompt_tokens), Some(usage.completion_tokens));
    }
    for choice in chunk.choices.into_iter().filter(|choice| choice.index == 0) {
        if let Some(delta) = choice.delta {
            if let Some(text) = delta.content {
                assembly.text(&text)?;
            }
            if let Some(refusal) = delta.refusal.filter(|refusal| !refusal.is_empty()) {
                assembly.text(&refusal)?;
                assembly.stop(StopReason::Refused);
            }
            for call in delta.tool_calls.unwrap_or_default() {
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
        if let Some(reason) = choice.finish_reason {
            assembly.stop(stop_reason(&reason));
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
            Message::Assistant {
                text: String::new(),
                calls: vec![call.clone()],
            },
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
                    {"role": "assistant", "content": null, "tool_calls": [
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
    fn mutations_of_real_answers_are_read_or_malformed_never_a_panic() {
        mutations::never_panic::<OpenAi>(
            &[TOOL_CALL, PARALLEL_CALLS, ANSWER],
            &[STREAM_CALLS, STREAM_ANSWER],
            "\"finish_reason\":\"",
        );
    }
}
