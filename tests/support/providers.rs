//! What the provider tests share: an HTTP server on 127.0.0.1 that answers
//! each request with the next reply written in advance (a provider's body
//! as it sends it, an error status, a stream of events cut where the test
//! says) and records what it was sent; and what a test does with an answer.

#![allow(dead_code)] // Each provider test uses its own part of it.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, Uri};
use axum::response::IntoResponse;
use axum::Router;
use futures::StreamExt as _;
use typed_tools::model::{Message, Response, StreamEvent, ToolResult};
use typed_tools::recover::{Backoff, Retry};
use typed_tools::Toolbox;

/// Retries without jitter and with short waits, so that a test is quick.
pub(crate) fn quick_retry() -> Retry {
    Retry::exponential(3).with_backoff(Backoff {
        initial: Duration::from_millis(10),
        factor: 2.0,
        max: Duration::from_millis(40),
        jitter: false,
    })
}

/// The ids of an answer's calls.
pub(crate) fn ids(response: &Response) -> Vec<&str> {
    response
        .calls
        .iter()
        .map(|call| call.id.as_deref().unwrap_or_default())
        .collect()
}

/// The results of an answer's calls, run by `toolbox`, as messages: the
/// output, or the error told for the model.
pub(crate) async fn results(toolbox: &Toolbox, response: &Response) -> Vec<Message> {
    let mut results = Vec::new();
    for call in &response.calls {
        results.push(Message::tool_result(
            match toolbox.call(&call.name, &call.arguments).await {
                Ok(output) => ToolResult::ok(call, output.json()),
                Err(error) => ToolResult::error(call, &error),
            },
        ));
    }
    results
}

/// The argument fragments of call `index`, in the order they came.
pub(crate) fn fragments(events: &[StreamEvent], index: usize) -> Vec<String> {
    events
        .iter()
        .filter_map(|event| match event {
            StreamEvent::CallArguments { index: i, fragment } if *i == index => {
                Some(fragment.clone())
            }
            _ => None,
        })
        .collect()
}

/// One answer of the server.
#[derive(Clone, Debug)]
pub(crate) enum Reply {
    /// A whole body with a status.
    Whole {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
    /// `text/event-stream`, each piece written as its own HTTP chunk.
    Events { pieces: Vec<Vec<u8>> },
    /// A 200 that comes only after `after`.
    Late { after: Duration, body: String },
}

impl Reply {
    /// A 200 with a JSON body.
    pub(crate) fn json(body: &str) -> Reply {
        Reply::status(200, body)
    }

    /// `status` with `body`.
    pub(crate) fn status(status: u16, body: &str) -> Reply {
        Reply::Whole {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            body: body.into(),
        }
    }

    /// The same, with a header more.
    pub(crate) fn header(mut self, name: &'static str, value: &str) -> Reply {
        if let Reply::Whole { headers, .. } = &mut self {
            headers.push((name.into(), value.into()));
        }
        self
    }

    /// A stream of server-sent events, cut into network chunks inside every
    /// multi-byte character and every `every` bytes besides.
    pub(crate) fn events(body: &str, every: usize) -> Reply {
        Reply::Events {
            pieces: cut(body.as_bytes(), every),
        }
    }
}

/// `bytes` cut inside each multi-byte UTF-8 character (after its first
/// byte) and every `every` bytes.
pub(crate) fn cut(bytes: &[u8], every: usize) -> Vec<Vec<u8>> {
    let mut pieces = vec![Vec::new()];
    for (at, &byte) in bytes.iter().enumerate() {
        let inside_character = byte & 0b1100_0000 == 0b1000_0000;
        if at > 0 && (inside_character || at % every == 0) {
            pieces.push(Vec::new());
        }
        pieces.last_mut().unwrap().push(byte);
    }
    pieces
}

/// A request the server received.
#[derive(Clone, Debug)]
pub(crate) struct Received {
    pub(crate) path: String,
    pub(crate) headers: HeaderMap,
    pub(crate) body: serde_json::Value,
    pub(crate) at: Instant,
}

#[derive(Default)]
struct Script {
    replies: Mutex<VecDeque<Reply>>,
    received: Mutex<Vec<Received>>,
    /// Whether requests are validated as llama-cpp-python validates them.
    strict: bool,
}

/// The server, running on the test's tokio runtime until it ends.
pub(crate) struct Server {
    /// `http://127.0.0.1:PORT`.
    pub(crate) url: String,
    script: Arc<Script>,
}

impl Server {
    /// Serves `replies`, one per request, in order; a request past the last
    /// is answered 599, which no test expects.
    pub(crate) async fn start(replies: impl IntoIterator<Item = Reply>) -> Server {
        Server::serve(replies, false).await
    }

    /// A server as strict as small OpenAI-compatible servers are: a request
    /// whose messages llama-cpp-python's schema refuses (a `content` that is
    /// `null` where its pydantic model says a string) is answered with the
    /// 500 that server sends, and uses no reply. The replies themselves are
    /// what such a server sends: it ignores `max_tokens` and
    /// `stream_options.include_usage`, so they say what the test says.
    pub(crate) async fn strict(replies: impl IntoIterator<Item = Reply>) -> Server {
        Server::serve(replies, true).await
    }

    async fn serve(replies: impl IntoIterator<Item = Reply>, strict: bool) -> Server {
        let script = Arc::new(Script {
            replies: Mutex::new(replies.into_iter().collect()),
            received: Mutex::default(),
            strict,
        });
        let app = Router::new().fallback(answer).with_state(script.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Server { url, script }
    }

    /// The requests received so far.
    pub(crate) fn received(&self) -> Vec<Received> {
        self.script.received.lock().unwrap().clone()
    }

    /// The replies not used.
    pub(crate) fn left(&self) -> usize {
        self.script.replies.lock().unwrap().len()
    }
}

async fn answer(
    State(script): State<Arc<Script>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> axum::response::Response {
    let body: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
    let refusal = script
        .strict
        .then(|| llama_cpp_python_refusal(&body))
        .flatten();
    script.received.lock().unwrap().push(Received {
        path: uri.path().to_owned(),
        headers,
        body,
        at: Instant::now(),
    });
    if let Some(refusal) = refusal {
        let mut map = HeaderMap::new();
        map.insert("content-type", HeaderValue::from_static("application/json"));
        return (StatusCode::INTERNAL_SERVER_ERROR, map, refusal).into_response();
    }
    let reply = script.replies.lock().unwrap().pop_front();
    match reply {
        Some(Reply::Whole {
            status,
            headers,
            body,
        }) => {
            let mut map = HeaderMap::new();
            for (name, value) in headers {
                map.insert(
                    HeaderName::from_bytes(name.as_bytes()).unwrap(),
                    HeaderValue::from_str(&value).unwrap(),
                );
            }
            (StatusCode::from_u16(status).unwrap(), map, body).into_response()
        }
        Some(Reply::Events { pieces }) => {
            let chunks = futures::stream::iter(pieces).then(|piece| async move {
                // A pause between pieces, so that each reaches the client
                // on its own.
                tokio::task::yield_now().await;
                Ok::<_, Infallible>(Bytes::from(piece))
            });
            let mut map = HeaderMap::new();
            map.insert(
                "content-type",
                HeaderValue::from_static("text/event-stream"),
            );
            (StatusCode::OK, map, Body::from_stream(chunks)).into_response()
        }
        Some(Reply::Late { after, body }) => {
            tokio::time::sleep(after).await;
            (StatusCode::OK, body).into_response()
        }
        None => (StatusCode::from_u16(599).unwrap(), "no reply left").into_response(),
    }
}

/// The 500 llama-cpp-python's server answers a chat request with when a
/// message breaks its schema (`llama_cpp/llama_types.py`: a system, user,
/// tool or assistant message's `content` is a string, and may be left out
/// of an assistant message that calls tools, but is never `null`); its
/// `RouteErrorHandler` turns the pydantic `ValidationError` into an
/// `internal_server_error`. `None` for a request it takes.
pub(crate) fn llama_cpp_python_refusal(body: &serde_json::Value) -> Option<String> {
    let messages = body["messages"].as_array()?;
    for message in messages {
        let role = message["role"].as_str().unwrap_or_default();
        let class = match role {
            "system" => "ChatCompletionRequestSystemMessage",
            "user" => "ChatCompletionRequestUserMessage",
            "assistant" => "ChatCompletionRequestAssistantMessage",
            "tool" => "ChatCompletionRequestToolMessage",
            _ => "ChatCompletionRequestMessage",
        };
        if matches!(message.get("content"), Some(serde_json::Value::Null)) {
            let text = format!(
                "1 validation error for {class}\ncontent\n  Input should be a valid string [type=string_type, input_value=None, input_type=NoneType]\n    For further information visit https://errors.pydantic.dev/2.9/v/string_type"
            );
            return Some(
                serde_json::json!({"error": {"message": text, "type": "internal_server_error", "param": null, "code": null}})
                    .to_string(),
            );
        }
    }
    None
}

/// An OpenAI-compatible stream of one chunk opening `calls` tool calls, a
/// new index each (the shape that made assembly quadratic), then its end.
pub(crate) fn openai_calls(calls: usize) -> String {
    let deltas: Vec<_> = (0..calls)
        .map(|i| serde_json::json!({"index": i, "id": format!("c{i}"), "function": {"name": "f", "arguments": "{}"}}))
        .collect();
    let chunk = serde_json::json!({"choices": [{"index": 0, "delta": {"tool_calls": deltas}}]});
    let end =
        serde_json::json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]});
    format!("data: {chunk}\n\ndata: {end}\n\ndata: [DONE]\n\n")
}

/// An Anthropic stream opening `calls` `tool_use` blocks, an event each.
pub(crate) fn anthropic_calls(calls: usize) -> String {
    let mut body = String::from(
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":1}}}\n\n",
    );
    for i in 0..calls {
        body.push_str(&format!(
            "event: content_block_start\ndata: {{\"type\":\"content_block_start\",\"index\":{i},\"content_block\":{{\"type\":\"tool_use\",\"id\":\"t{i}\",\"name\":\"f\",\"input\":{{}}}}}}\n\n"
        ));
    }
    body.push_str("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":1}}\n\n");
    body.push_str("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
    body
}
