//! Clients for real models, each behind a cargo feature: [`OpenAi`] for
//! OpenAI-compatible Chat Completions (OpenAI, and servers on your machine:
//! Ollama, vLLM, llama.cpp; feature `openai`), [`Anthropic`] for Anthropic
//! Messages (feature `anthropic`). Both implement [`Model`](crate::model::Model).
//!
//! ```toml
//! [dependencies]
//! typed-tools = { version = "0.1", features = ["openai", "anthropic"] }
//! tokio = { version = "1", features = ["macros", "rt-multi-thread"] }
//! ```
//!
//! **They need a tokio runtime**: they are built on reqwest, which runs on
//! tokio (and so do their timeouts and retry waits). Call them from
//! `#[tokio::main]` or a task of a tokio runtime; the rest of the crate
//! names no runtime.
//!
//! Each client:
//! - takes its base URL, model and API key from arguments, or from the
//!   environment with `from_env` (`OPENAI_BASE_URL`, `OPENAI_MODEL`,
//!   `OPENAI_API_KEY`; `ANTHROPIC_BASE_URL`, `ANTHROPIC_MODEL`,
//!   `ANTHROPIC_API_KEY`). A missing key is a [`ModelError::Config`] saying
//!   what to set, except for a server on this machine (`localhost`,
//!   `127.0.0.1`, `[::1]`), which may need none;
//! - sends [`Request::tools`](crate::model::Request::tools) as the provider's
//!   `tools`, rendered in the format [`Model::tool_format`](crate::model::Model::tool_format)
//!   names, with `tool_choice`, and maps the conversation (assistant calls
//!   with their ids, tool results answering them);
//! - reads the answer's text, tool calls (with [`reader`](crate::reader)),
//!   usage and stop reason;
//! - streams with [`Model::stream`](crate::model::Model::stream) (server-sent
//!   events; tool-call argument fragments put together into whole calls,
//!   however the network and the provider cut them), and streams under
//!   [`complete`](crate::model::Model::complete) too with `streaming(true)`;
//! - retries a rate limit (429, waiting what `retry-after` says), a server
//!   error (5xx), a timeout or a broken connection with
//!   [`Backoff`](crate::recover::Backoff), three attempts by default
//!   (`retry`), and gives up at once when the server asks for a wait longer
//!   than `max_retry_wait` (60 s), so that the caller decides;
//! - gives every failure as a [`ModelError`]: the status with the provider's
//!   error body (its first 4 KiB), the rate limit with its wait, the timeout
//!   (`timeout`, 600 s by default, for each HTTP request), a body that is not
//!   what the provider documents or is longer than `max_response_bytes`
//!   (32 MiB) as [`ModelError::Malformed`];
//! - never prints its API key: `Debug` shows `[redacted]`, and text a server
//!   echoes it in has it blanked out.
//!
//! Every limit, its default, and what happens when it is reached:
//!
//! | setter | default | reached |
//! |---|---|---|
//! | `timeout` | 600 s | each HTTP request, from sending it to the end of its answer, checked between the body's chunks too (a body whose chunks are always ready cannot read past it): [`ModelError::Timeout`] |
//! | `retry` | 3 attempts, 0.5 s doubling to 8 s, with jitter | the last error is returned; only a rate limit, a 5xx (unless its body says the request is invalid), a timeout or a broken connection is retried; an error in the middle of a stream never is |
//! | `max_retry_wait` | 60 s | a `retry-after` longer than it returns the error at once |
//! | `max_response_bytes` | 32 MiB | one answer's body, or its stream's bytes and the text and arguments put together from them: [`ModelError::Malformed`] naming the limit |
//! | `max_calls_per_answer` | 1,024 | the tool calls of one answer, streamed or not: [`ModelError::Malformed`] naming the limit |
//! | error bodies | 64 KiB read, 4 KiB kept | the rest is cut, and said so |
//!
//! Reading a body gives way to other tasks every 64 KiB, so a deadline
//! around a request (an agent's wall time) holds within the work of one
//! such piece, whatever the server sends.
//!
//! TLS is rustls with the `ring` provider and the platform's root
//! certificates: building needs a C compiler, and no OpenSSL or cmake.

use std::borrow::Cow;

use futures::future::BoxFuture;
use futures::stream::BoxStream;
use futures::FutureExt;
use reqwest::header::HeaderMap;

use self::assemble::Parse;
use self::http::{malformed, Answer, ApiKey, Env, Transport};
use crate::catalog::{Catalog, CatalogFormat};
use crate::model::{
    answer_tokens, request_tokens, Message, ModelError, Request, Response, StreamEvent, ToolChoice,
    Usage,
};
use crate::reader::{read_parsed, CallFormat, ToolCall};

mod assemble;
mod http;
mod sse;

#[cfg(feature = "anthropic")]
mod anthropic;
#[cfg(feature = "openai")]
mod openai;

#[cfg(feature = "anthropic")]
pub use anthropic::Anthropic;
#[cfg(feature = "openai")]
pub use openai::OpenAi;

/// A client's hold on the [`Transport`] it shares with the others
/// (implemented by [`client_api`]).
pub(crate) trait Client: Sized + Sync {
    /// A client for `model`, every other setting at its default.
    fn for_model(model: String) -> Self;
    fn transport(&self) -> &Transport;
    fn transport_mut(&mut self) -> &mut Transport;
}

/// What a client adds to the [`Transport`] both share: where it posts, its
/// headers and body, and how it reads an answer and a stream's events. The
/// rest of a request's way (retries, limits, streaming) is written once,
/// below.
pub(crate) trait Wire: Client {
    /// Its environment variables.
    const ENV: Env;
    /// The path under the base URL it posts to.
    const PATH: &'static str;
    /// Reads a whole answer.
    const PARSE: fn(&[u8]) -> Result<Response, ModelError>;
    /// Reads one server-sent event of a streamed answer.
    const PARSE_EVENT: Parse;
    /// The headers of every request: authentication, version.
    fn headers(&self, key: Option<&ApiKey>) -> Result<HeaderMap, ModelError>;
    /// The request body, to be sent as JSON.
    fn body(
        &self,
        request: &Request,
        url: &reqwest::Url,
        stream: bool,
    ) -> Result<Vec<u8>, ModelError>;
}

/// A request body as JSON.
pub(crate) fn to_json(body: &impl serde::Serialize) -> Result<Vec<u8>, ModelError> {
    serde_json::to_vec(body).map_err(|error| ModelError::other(error.to_string()))
}

/// A whole answer's JSON, parsed once: read as `T` (`what` names it in the
/// error) and its calls read by the reader of `format`; what does not read
/// is [`ModelError::Malformed`] with the body's start.
pub(crate) fn read_answer<T: serde::de::DeserializeOwned>(
    body: &[u8],
    what: &str,
    format: CallFormat,
) -> Result<(T, Vec<ToolCall>), ModelError> {
    let not = |error: serde_json::Error| malformed(format!("not {what}: {error}"), body);
    let value: serde_json::Value = serde_json::from_slice(body).map_err(not)?;
    let answer = T::deserialize(&value).map_err(not)?;
    let calls = read_parsed(format, &value).map_err(|error| malformed(error.to_string(), body))?;
    Ok((answer, calls))
}

/// A client from the environment's variables, read by `var`: the model is
/// required, the base URL and the key are taken when set, and the result
/// is checked as a request would check it.
pub(crate) fn from_vars<W: Wire>(var: impl Fn(&str) -> Option<String>) -> Result<W, ModelError> {
    let env = W::ENV;
    let model = var(env.model).ok_or_else(|| ModelError::Config {
        message: format!(
            "no model named: set {} (such as {}), or build the client with `new(model)`",
            env.model, env.example
        ),
    })?;
    let mut client = W::for_model(model);
    if let Some(url) = var(env.url) {
        client.transport_mut().base_url = url;
    }
    client.transport_mut().api_key = var(env.key).and_then(|key| ApiKey::new(&key));
    endpoint(&client)?;
    Ok(client)
}

/// Where a request goes and with which headers, or what is missing.
pub(crate) fn endpoint<W: Wire>(client: &W) -> Result<(reqwest::Url, HeaderMap), ModelError> {
    let (url, key) = client.transport().endpoint(W::PATH, &W::ENV)?;
    Ok((url, client.headers(key)?))
}

/// The request, ready to be sent (and retried) by the transport.
fn send<'a, W: Wire>(
    client: &'a W,
    request: &Request,
    stream: bool,
) -> Result<BoxFuture<'a, Result<Answer, ModelError>>, ModelError> {
    let (url, headers) = endpoint(client)?;
    let body = client.body(request, &url, stream)?;
    Ok(client.transport().post(url, headers, body).boxed())
}

/// [`Model::complete`](crate::model::Model::complete) for any client: the
/// whole answer, or the stream collected when the client streams.
pub(crate) fn complete<W: Wire>(
    client: &W,
    request: Request,
) -> BoxFuture<'_, Result<Response, ModelError>> {
    if client.transport().streaming {
        return assemble::collect(stream(client, request)).boxed();
    }
    let sent = send(client, &request, false);
    let request_tokens = request_tokens(&request);
    async move {
        let mut answer = sent?.await?;
        let transport = client.transport();
        let body = transport
            .read(&mut answer, transport.max_response_bytes)
            .await?;
        let mut response = W::PARSE(&body)?;
        if response.calls.len() > transport.max_calls {
            return Err(assemble::too_many_calls(transport.max_calls, &body));
        }
        estimate_usage(&mut response, request_tokens);
        Ok(response)
    }
    .boxed()
}

/// Usage the provider did not report (marked estimated at zero by
/// [`assemble::finished`]), estimated from the request (`request_tokens`)
/// and the answer: unknown is never zero, so that a token budget binds.
pub(crate) fn estimate_usage(response: &mut Response, request_tokens: u64) {
    if response.usage.estimated && response.usage.total() == 0 {
        response.usage = Usage::estimate(request_tokens, answer_tokens(response));
    }
}

/// [`Model::stream`](crate::model::Model::stream) for any client.
pub(crate) fn stream<W: Wire>(
    client: &W,
    request: Request,
) -> BoxStream<'_, Result<StreamEvent, ModelError>> {
    assemble::events(
        client.transport(),
        send(client, &request, true),
        W::PARSE_EVENT,
        request_tokens(&request),
    )
}

/// The setters both clients share, each over the client's `Transport`, and
/// their `Model` implementation, over [`complete`] and [`stream`].
macro_rules! client_api {
    ($client:ident, $key_var:literal, $url_var:literal) => {
        impl $crate::provider::Client for $client {
            fn for_model(model: String) -> $client {
                $client::new(model)
            }

            fn transport(&self) -> &$crate::provider::http::Transport {
                &self.transport
            }

            fn transport_mut(&mut self) -> &mut $crate::provider::http::Transport {
                &mut self.transport
            }
        }

        impl $crate::model::Model for $client {
            fn complete(
                &self,
                request: $crate::model::Request,
            ) -> ::futures::future::BoxFuture<
                '_,
                Result<$crate::model::Response, $crate::model::ModelError>,
            > {
                $crate::provider::complete(self, request)
            }

            fn stream(
                &self,
                request: $crate::model::Request,
            ) -> ::futures::stream::BoxStream<
                '_,
                Result<$crate::model::StreamEvent, $crate::model::ModelError>,
            > {
                $crate::provider::stream(self, request)
            }

            fn tool_format(&self) -> Option<$crate::catalog::CatalogFormat> {
                Some(self.format())
            }

            fn name(&self) -> &str {
                &self.name
            }
        }

        impl $client {
            #[doc = concat!("Sends requests to `url` (the environment's `", $url_var, "`).")]
            pub fn base_url(mut self, url: impl Into<String>) -> $client {
                self.transport.base_url = url.into();
                self
            }

            #[doc = concat!("Authenticates with `key` (the environment's `", $key_var, "`).")]
            /// A blank key is no key.
            pub fn api_key(mut self, key: impl AsRef<str>) -> $client {
                self.transport.api_key = $crate::provider::http::ApiKey::new(key.as_ref());
                self
            }

            /// Gives each HTTP request at most `timeout`, from sending it to the
            /// end of its answer (streamed or not); 600 s by default.
            pub fn timeout(mut self, timeout: std::time::Duration) -> $client {
                self.transport.timeout = timeout;
                self
            }

            /// Retries a rate limit, a server error, a timeout or a broken
            /// connection as `retry` says: `Retry::exponential(1)` never
            /// retries. By default 3 attempts, waiting from 0.5 s doubling to
            /// 8 s, with jitter; a rate limit waits what `retry-after` says.
            pub fn retry(mut self, retry: $crate::recover::Retry) -> $client {
                self.transport.retry = retry;
                self
            }

            /// The longest wait before a retry: when the server asks for more
            /// (`retry-after`), the error is returned at once. 60 s by default.
            pub fn max_retry_wait(mut self, wait: std::time::Duration) -> $client {
                self.transport.max_retry_wait = wait;
                self
            }

            /// The most bytes read from one answer (its body, or its stream);
            /// more is [`ModelError::Malformed`](crate::model::ModelError::Malformed).
            /// 32 MiB by default.
            pub fn max_response_bytes(mut self, bytes: usize) -> $client {
                self.transport.max_response_bytes = bytes;
                self
            }

            /// The most tool calls one answer may make, 1,024 by default: an
            /// answer with more (streamed or not) is
            /// [`ModelError::Malformed`](crate::model::ModelError::Malformed),
            /// naming this limit, and none of its calls is handed out as a
            /// result.
            pub fn max_calls_per_answer(mut self, calls: usize) -> $client {
                self.transport.max_calls = calls;
                self
            }

            /// Whether [`complete`](crate::model::Model::complete) streams the
            /// answer under the hood (server-sent events) and returns it whole:
            /// long answers then keep the connection busy instead of idle.
            /// Off by default; [`stream`](crate::model::Model::stream) always streams.
            pub fn streaming(mut self, on: bool) -> $client {
                self.transport.streaming = on;
                self
            }
        }
    };
}
pub(crate) use client_api;

/// The conversation with an id on every assistant call and every tool
/// result: a call read from text has none, and both providers need one. A
/// call without an id gets `call_{message}_{call}`; a result without one
/// answers the first unanswered call of the same name in the assistant
/// message before it (or the first unanswered call).
pub(crate) fn with_ids(messages: &[Message]) -> Cow<'_, [Message]> {
    let complete = messages.iter().all(|message| match message {
        Message::Assistant { calls, .. } => calls.iter().all(|call| call.id.is_some()),
        Message::ToolResult(result) => result.call_id.is_some(),
        _ => true,
    });
    if complete {
        return Cow::Borrowed(messages);
    }
    let mut unanswered: Vec<(String, String)> = Vec::new();
    let mut filled = messages.to_vec();
    for (m, message) in filled.iter_mut().enumerate() {
        match message {
            Message::Assistant { calls, .. } => {
                unanswered.clear();
                for (k, call) in calls.iter_mut().enumerate() {
                    let id = call.id.get_or_insert_with(|| format!("call_{m}_{k}"));
                    unanswered.push((id.clone(), call.name.clone()));
                }
            }
            Message::ToolResult(result) => {
                let answered = match &result.call_id {
                    Some(id) => unanswered.iter().position(|(open, _)| open == id),
                    None => unanswered
                        .iter()
                        .position(|(_, name)| *name == result.name)
                        .or((!unanswered.is_empty()).then_some(0)),
                };
                match answered {
                    Some(at) => {
                        let (id, _) = unanswered.remove(at);
                        result.call_id.get_or_insert(id);
                    }
                    None => {
                        result.call_id.get_or_insert_with(|| format!("call_{m}"));
                    }
                }
            }
            _ => {}
        }
    }
    Cow::Owned(filled)
}

/// The id of a call or result after [`with_ids`].
pub(crate) fn id_of(id: &Option<String>) -> &str {
    id.as_deref().unwrap_or_default()
}

/// The request's tools, when it offers any, checked to be in a format the
/// client sends (`formats`); `None` for no tools or an empty catalog. A
/// `tool_choice` that needs tools, with none offered, is a mistake.
pub(crate) fn native_tools<'r>(
    request: &'r Request,
    formats: &[CatalogFormat],
    client: &str,
) -> Result<Option<&'r Catalog>, ModelError> {
    let tools = match &request.tools {
        Some(catalog) if !formats.contains(&catalog.format()) => {
            return Err(ModelError::Config {
                message: format!(
                    "the tools are rendered as {:?}, which {client} does not send: render them with `toolbox.catalog(model.tool_format().unwrap())` ({:?})",
                    catalog.format(),
                    formats[0]
                ),
            })
        }
        Some(catalog)
            if catalog
                .as_json()
                .and_then(serde_json::Value::as_array)
                .is_some_and(|tools| tools.is_empty()) =>
        {
            None
        }
        tools => tools.as_ref(),
    };
    if tools.is_none()
        && matches!(
            request.tool_choice,
            ToolChoice::Required | ToolChoice::Only(_)
        )
    {
        return Err(ModelError::Config {
            message: format!(
                "`tool_choice` is {:?} but the request offers no tools: add them with `Request::tools`",
                request.tool_choice
            ),
        });
    }
    Ok(tools)
}

/// An error a provider sent inside a stream, after its 200 (Anthropic's
/// `error` event; OpenAI-compatible servers' `{"error": {...}}` chunk, as
/// Groq and OpenRouter send), as the HTTP error it stands for: its `code`
/// when that is a status (`502`, `"429"`), else its `type` or `code` by
/// the providers' tables of error types; `429` and rate-limit types are
/// [`ModelError::RateLimited`]. The body keeps the provider's code and
/// message; an error of no known kind is [`ModelError::Other`] holding it.
pub(crate) fn stream_error(error: &serde_json::Value, data: &str) -> ModelError {
    let body = http::cut(data);
    let status = |value: &serde_json::Value| {
        match value {
            serde_json::Value::Number(n) => n.as_u64(),
            serde_json::Value::String(s) => s.parse::<u64>().ok(),
            _ => None,
        }
        .and_then(|n| u16::try_from(n).ok())
        .filter(|n| (400..600).contains(n))
    };
    let named = |value: &serde_json::Value| {
        Some(match value.as_str()? {
            "invalid_request_error" | "invalid_request" | "bad_request" | "BadRequestError" => 400,
            "authentication_error" | "invalid_api_key" | "unauthorized" => 401,
            "permission_error" | "permission_denied" | "forbidden" => 403,
            "not_found_error" | "not_found" | "model_not_found" => 404,
            "request_too_large" => 413,
            "rate_limit_error" | "rate_limit_exceeded" | "rate_limited" => 429,
            "api_error" | "server_error" | "internal_server_error" | "internal_error" => 500,
            "service_unavailable" | "unavailable" => 503,
            "overloaded_error" | "overloaded" => 529,
            _ => return None,
        })
    };
    let (code, kind) = match error {
        serde_json::Value::Object(fields) => (
            fields.get("code").unwrap_or(&serde_json::Value::Null),
            fields.get("type").unwrap_or(&serde_json::Value::Null),
        ),
        other => (other, &serde_json::Value::Null),
    };
    match status(code).or_else(|| named(kind)).or_else(|| named(code)) {
        Some(429) => ModelError::RateLimited {
            retry_after: None,
            body,
        },
        Some(status) => ModelError::Status { status, body },
        None => ModelError::other(format!("the provider sent an error in the stream: {body}")),
    }
}

/// Reads a variable of the environment, blank as unset.
pub(crate) fn env_var(name: &str) -> Option<String> {
    std::env::var(name)
        .ok()
        .map(|value| value.trim().to_owned())
        .filter(|value| !value.is_empty())
}

/// Inputs no test wrote by hand: mutations of the providers' real bodies.
#[cfg(test)]
pub(crate) mod mutations {
    use serde_json::Value;

    use super::{assemble, Wire};
    use crate::model::{ModelError, Response};

    /// The answer, `None` for `Malformed`; any other error fails the test.
    fn read_or_malformed(result: Result<Response, ModelError>, input: &str) -> Option<Response> {
        match result {
            Ok(response) => Some(response),
            Err(ModelError::Malformed { .. }) => None,
            Err(other) => panic!("{other:?} for {input}"),
        }
    }

    /// A whole answer and the stream of the same answer read alike.
    pub(crate) fn read_alike<W: Wire>(whole: &str, streamed: &str) {
        let whole = (W::PARSE)(whole.as_bytes()).unwrap();
        let streamed = assemble::replay(streamed.as_bytes(), W::PARSE_EVENT).unwrap();
        assert_eq!(whole.calls.len(), streamed.calls.len());
        for (a, b) in whole.calls.iter().zip(&streamed.calls) {
            assert_eq!((&a.id, &a.name), (&b.id, &b.name));
        }
        assert_eq!((whole.text, whole.stop), (streamed.text, streamed.stop));
    }

    /// Every prefix and every value-kind mutation of each real answer
    /// (`wholes`) and stream (`streams`) is read or `Malformed`, never a
    /// panic or another error; a proper prefix of an answer is always
    /// `Malformed`, and a stream's prefix is read only once it holds
    /// `stopped`, the provider's stop reason.
    pub(crate) fn never_panic<W: Wire>(wholes: &[&str], streams: &[&str], stopped: &str) {
        for whole in wholes {
            for prefix in prefixes(whole.trim_end()) {
                assert!(read_or_malformed((W::PARSE)(prefix.as_bytes()), prefix).is_none());
            }
            let value: Value = serde_json::from_str(whole).unwrap();
            for mutated in replaced(&value) {
                let text = mutated.to_string();
                read_or_malformed((W::PARSE)(text.as_bytes()), &text);
            }
        }
        for stream in streams {
            for prefix in prefixes(stream) {
                let read = assemble::replay(prefix.as_bytes(), W::PARSE_EVENT);
                if read_or_malformed(read, prefix).is_some() {
                    assert!(prefix.contains(stopped), "{prefix}");
                }
            }
            for mutated in events(stream) {
                read_or_malformed(
                    assemble::replay(mutated.as_bytes(), W::PARSE_EVENT),
                    &mutated,
                );
            }
        }
    }

    /// Every value-kind mutation of each body recorded from real servers in
    /// the facade's replay corpus (`tests/provider_corpus/`, bodies that
    /// others published) is read or a typed error (the corpus holds error
    /// bodies and streams too), never a panic: the bodies `W`'s folder
    /// holds, whole (`.json`) and streamed (`.sse`).
    pub(crate) fn corpus_never_panics<W: Wire>(folder: &str) {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/provider_corpus")
            .join(folder);
        let mut read = 0;
        for entry in std::fs::read_dir(&root).unwrap() {
            let path = entry.unwrap().path();
            let body = std::fs::read_to_string(&path).unwrap();
            match path.extension().and_then(|e| e.to_str()) {
                Some("json") if !path.to_string_lossy().ends_with(".expect.json") => {
                    let value: Value = serde_json::from_str(&body).unwrap();
                    for mutated in replaced(&value) {
                        let _typed = (W::PARSE)(mutated.to_string().as_bytes());
                    }
                }
                Some("sse") => {
                    for mutated in events(&body) {
                        let _typed = assemble::replay(mutated.as_bytes(), W::PARSE_EVENT);
                    }
                }
                _ => continue,
            }
            read += 1;
        }
        assert!(read >= 20, "{read} bodies in {}", root.display());
    }

    /// Every value made from `value` by putting, in place of one of its
    /// parts (the whole included), a value of each kind.
    pub(crate) fn replaced(value: &Value) -> Vec<Value> {
        let others = [
            Value::Null,
            Value::Bool(false),
            serde_json::json!(0),
            serde_json::json!(-1),
            serde_json::json!(1.5),
            serde_json::json!(18446744073709551615u64),
            serde_json::json!(""),
            serde_json::json!("x"),
            serde_json::json!([]),
            serde_json::json!({}),
        ];
        let mut pointers = Vec::new();
        walk(value, String::new(), &mut pointers);
        let mut mutated = Vec::new();
        for pointer in &pointers {
            for other in &others {
                let mut copy = value.clone();
                if let Some(part) = copy.pointer_mut(pointer) {
                    *part = other.clone();
                    mutated.push(copy);
                }
            }
        }
        mutated
    }

    fn walk(value: &Value, at: String, pointers: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                for (key, part) in map {
                    let key = key.replace('~', "~0").replace('/', "~1");
                    walk(part, format!("{at}/{key}"), pointers);
                }
            }
            Value::Array(items) => {
                for (index, part) in items.iter().enumerate() {
                    walk(part, format!("{at}/{index}"), pointers);
                }
            }
            _ => {}
        }
        pointers.push(at);
    }

    /// Every proper prefix of `text`, cut at a character boundary.
    pub(crate) fn prefixes(text: &str) -> impl Iterator<Item = &str> {
        (0..text.len())
            .filter(|&end| text.is_char_boundary(end))
            .map(|end| &text[..end])
    }

    /// `body`, a stream of server-sent events, with one event's data
    /// replaced by each mutation of it, one at a time.
    pub(crate) fn events(body: &str) -> Vec<String> {
        let lines: Vec<&str> = body.split('\n').collect();
        let mut mutated = Vec::new();
        for (at, line) in lines.iter().enumerate() {
            let Some(data) = line.strip_prefix("data: ") else {
                continue;
            };
            let Ok(value) = serde_json::from_str::<Value>(data) else {
                continue;
            };
            for other in replaced(&value) {
                let mut copy = lines.clone();
                let replaced = format!("data: {other}");
                copy[at] = &replaced;
                mutated.push(copy.join("\n"));
            }
        }
        mutated
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ToolResult;
    use crate::reader::ToolCall;

    fn call(id: Option<&str>, name: &str) -> ToolCall {
        ToolCall {
            id: id.map(Into::into),
            name: name.into(),
            arguments: "{}".into(),
        }
    }

    #[test]
    fn ids_are_given_to_calls_read_from_text_and_to_the_results_that_answer_them() {
        let a = call(None, "search");
        let b = call(None, "refund");
        let messages = vec![
            Message::user("hi"),
            Message::assistant_calls("", vec![a.clone(), b.clone()]),
            // Answered out of order: each result finds its call by name.
            Message::tool_result(ToolResult::ok(&b, "1")),
            Message::tool_result(ToolResult::ok(&a, "2")),
        ];
        let filled = with_ids(&messages);
        assert!(matches!(filled, Cow::Owned(_)));
        let ids: Vec<_> = filled[1]
            .calls()
            .iter()
            .map(|c| c.id.clone().unwrap())
            .collect();
        assert_eq!(ids, ["call_1_0", "call_1_1"]);
        let answered = |m: usize| match &filled[m] {
            Message::ToolResult(result) => result.call_id.clone().unwrap(),
            _ => unreachable!(),
        };
        assert_eq!(answered(2), "call_1_1");
        assert_eq!(answered(3), "call_1_0");
    }

    #[test]
    fn a_conversation_with_every_id_is_not_copied() {
        let a = call(Some("call_9"), "search");
        let messages = vec![
            Message::assistant_calls("", vec![a.clone()]),
            Message::tool_result(ToolResult::ok(&a, "1")),
        ];
        assert!(matches!(with_ids(&messages), Cow::Borrowed(_)));
    }
}
