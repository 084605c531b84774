//! The OpenAI-compatible client against an HTTP server on 127.0.0.1 that
//! replays Chat Completions in its wire format (the response, chunk and
//! error objects of OpenAI's API reference): a tool call, parallel calls and
//! the results that answer them, a streamed answer whose call fragments are
//! interleaved and cut mid-string, mid-escape and mid-character, a final
//! answer, a rate limit, server errors, a timeout and bodies that are not
//! what the API documents. What the client sent is checked too.

use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::{json, Value};
use typed_tools::model::{Message, Model, ModelError, Request, StopReason, StreamEvent, Usage};
use typed_tools::provider::OpenAi;
use typed_tools::recover::Retry;
use typed_tools::{tool, ToolCall, Toolbox};

#[path = "support/providers.rs"]
mod support;

use support::{fragments, ids, quick_retry, results, Reply, Server};

const TOOL_CALL: &str = include_str!("../runtime/src/provider/testdata/openai_tool_call.json");
const PARALLEL_CALLS: &str =
    include_str!("../runtime/src/provider/testdata/openai_parallel_calls.json");
const ANSWER: &str = include_str!("../runtime/src/provider/testdata/openai_answer.json");
const STREAM_CALLS: &str = include_str!("../runtime/src/provider/testdata/openai_stream_calls.sse");
const STREAM_ANSWER: &str =
    include_str!("../runtime/src/provider/testdata/openai_stream_answer.sse");

/// OpenAI's error object, as its API sends it with a 429.
const RATE_LIMITED: &str = r#"{"error": {"message": "Rate limit reached for gpt-4o in organization org-abc on tokens per min (TPM): Limit 30000, Used 29843, Requested 1200. Please try again in 2.086s.", "type": "tokens", "param": null, "code": "rate_limit_exceeded"}}"#;
const SERVER_ERROR: &str = r#"{"error": {"message": "The server had an error while processing your request. Sorry about that!", "type": "server_error", "param": null, "code": null}}"#;

/// Look up the weather in a city.
#[tool(effects = Read)]
fn get_weather(city: String) -> String {
    format!("sunny in {city}")
}

/// Refund an order, in cents.
#[tool(effects = Write)]
fn refund(order: String, cents: u32) -> String {
    format!("refunded {cents} on {order}")
}

fn toolbox() -> Toolbox {
    Toolbox::builder()
        .tool(GetWeather)
        .tool(Refund)
        .build()
        .unwrap()
}

fn client(server: &Server) -> OpenAi {
    OpenAi::new("gpt-4o")
        .base_url(format!("{}/v1", server.url))
        .api_key("sk-test-key-0123")
        .retry(quick_retry())
}

fn ask(text: &str, toolbox: &Toolbox, model: &OpenAi) -> Request {
    Request::new(vec![Message::user(text)]).tools(toolbox.catalog(model.tool_format().unwrap()))
}

#[tokio::test]
async fn a_tool_call_comes_back_with_its_id_and_the_catalog_went_in_tools() {
    let server = Server::start([Reply::json(TOOL_CALL)]).await;
    let toolbox = toolbox();
    let model = client(&server);
    let response = model
        .complete(ask("Weather in Paris?", &toolbox, &model))
        .await
        .unwrap();

    assert_eq!(
        response.calls,
        [ToolCall {
            id: Some("call_FezxjoWuDV1CL3dITVFOjUzK".into()),
            name: "get_weather".into(),
            arguments: r#"{"city":"Paris"}"#.into(),
        }]
    );
    assert_eq!(response.text, "");
    assert_eq!(response.stop, StopReason::ToolUse);
    assert_eq!(response.usage, Usage::new(65, 16));
    let output = toolbox
        .call(&response.calls[0].name, &response.calls[0].arguments)
        .await
        .unwrap();
    assert_eq!(output.json(), r#""sunny in Paris""#);

    let [sent] = &server.received()[..] else {
        panic!()
    };
    assert_eq!(sent.path, "/v1/chat/completions");
    assert_eq!(sent.headers["authorization"], "Bearer sk-test-key-0123");
    assert_eq!(sent.headers["content-type"], "application/json");
    assert_eq!(sent.body["model"], "gpt-4o");
    assert_eq!(
        sent.body["messages"],
        json!([{"role": "user", "content": "Weather in Paris?"}])
    );
    assert_eq!(
        sent.body["tools"],
        toolbox
            .catalog(typed_tools::CatalogFormat::OpenAiChat)
            .to_json()
    );
    assert_eq!(sent.body["tools"][1]["function"]["name"], "refund");
    assert_eq!(sent.body["tool_choice"], "auto");
    assert_eq!(sent.body.get("stream"), None);
    assert_eq!(sent.body.get("parallel_tool_calls"), None);
}

#[tokio::test]
async fn parallel_calls_and_the_results_that_answer_their_ids() {
    let server = Server::start([Reply::json(PARALLEL_CALLS), Reply::json(ANSWER)]).await;
    // The toolbox lacks `refund`: its call is answered with an error.
    let toolbox = Toolbox::builder().tool(GetWeather).build().unwrap();
    let model = client(&server).parallel_tool_calls(true);
    let request = ask("Weather in Medellín, and refund A-7.", &toolbox, &model);

    let first = model.complete(request.clone()).await.unwrap();
    assert_eq!(ids(&first), ["call_weather_01", "call_refund_02"]);
    let mut messages = request.messages.clone();
    messages.push(first.to_message());
    messages.extend(results(&toolbox, &first).await);
    let mut next = request;
    next.messages = messages;
    let last = model.complete(next).await.unwrap();
    assert_eq!(
        last.text,
        "It is sunny in Medellín, and order A-7 was refunded."
    );
    assert_eq!(last.stop, StopReason::EndTurn);
    assert_eq!(last.usage, Usage::new(180, 14));

    let received = server.received();
    assert_eq!(received[0].body["parallel_tool_calls"], true);
    let sent = &received[1].body["messages"];
    assert_eq!(
        sent[1],
        json!({"role": "assistant", "content": "", "tool_calls": [
            {"id": "call_weather_01", "type": "function",
             "function": {"name": "get_weather", "arguments": "{\"city\":\"Medellín\"}"}},
            {"id": "call_refund_02", "type": "function",
             "function": {"name": "refund", "arguments": "{\"order\":\"A-7\",\"cents\":250}"}}
        ]})
    );
    assert_eq!(
        sent[2],
        json!({"role": "tool", "tool_call_id": "call_weather_01", "content": "\"sunny in Medellín\""})
    );
    assert_eq!(sent[3]["role"], "tool");
    assert_eq!(sent[3]["tool_call_id"], "call_refund_02");
    let refused = sent[3]["content"].as_str().unwrap();
    assert!(
        refused.contains("refund") && refused.contains("get_weather"),
        "{refused}"
    );
}

#[tokio::test]
async fn a_streamed_answer_puts_interleaved_fragments_back_together() {
    let pieces = support::cut(STREAM_CALLS.as_bytes(), 29);
    assert!(
        pieces
            .iter()
            .any(|piece| std::str::from_utf8(piece).is_err()),
        "some network chunk ends inside a character"
    );
    let server = Server::start([Reply::events(STREAM_CALLS, 29)]).await;
    let toolbox = toolbox();
    let model = client(&server);
    let events: Vec<StreamEvent> = model
        .stream(ask(
            "Weather in Medellín, and refund A-7.",
            &toolbox,
            &model,
        ))
        .map(Result::unwrap)
        .collect()
        .await;

    assert_eq!(
        events[0],
        StreamEvent::CallStarted {
            index: 0,
            id: Some("call_weather_01".into()),
            name: "get_weather".into()
        }
    );
    // As the provider cut them: mid-string, mid-escape (`\` | `"hi\"`, `\u00` | `e9`).
    assert_eq!(
        fragments(&events, 0),
        [
            r#"{"city": "Medell"#,
            r#"ín", "note": "say \"#,
            r#""hi\" \u00"#,
            r#"e9"}"#
        ]
    );
    assert_eq!(
        fragments(&events, 1),
        [r#"{"order": "A-"#, r#"7", "cents": 25"#, "0}"]
    );
    let Some(StreamEvent::Done(response)) = events.last() else {
        panic!("{events:?}")
    };
    let arguments: Vec<Value> = response
        .calls
        .iter()
        .map(|call| serde_json::from_str(&call.arguments).unwrap())
        .collect();
    assert_eq!(
        arguments[0],
        json!({"city": "Medellín", "note": "say \"hi\" é"})
    );
    assert_eq!(arguments[1], json!({"order": "A-7", "cents": 250}));
    assert_eq!(response.calls[1].id.as_deref(), Some("call_refund_02"));
    assert_eq!(response.calls[1].name, "refund");
    assert_eq!(response.stop, StopReason::ToolUse);
    assert_eq!(response.usage, Usage::new(96, 41));
    let output = toolbox
        .call(&response.calls[1].name, &response.calls[1].arguments)
        .await
        .unwrap();
    assert_eq!(output.json(), r#""refunded 250 on A-7""#);

    let sent = &server.received()[0].body;
    assert_eq!(sent["stream"], true);
    assert_eq!(sent["stream_options"], json!({"include_usage": true}));
    assert_eq!(sent["tools"][0]["function"]["name"], "get_weather");
}

#[tokio::test]
async fn a_final_answer_whole_and_streamed_under_complete() {
    let server = Server::start([Reply::json(ANSWER), Reply::events(STREAM_ANSWER, 64)]).await;
    let whole = client(&server)
        .complete(Request::new(vec![Message::user("Done?")]))
        .await
        .unwrap();
    let streamed = client(&server)
        .streaming(true)
        .complete(Request::new(vec![Message::user("Done?")]))
        .await
        .unwrap();
    for response in [&whole, &streamed] {
        assert_eq!(
            response.text,
            "It is sunny in Medellín, and order A-7 was refunded."
        );
        assert_eq!(response.calls, []);
        assert_eq!(response.stop, StopReason::EndTurn);
    }
    assert_eq!(streamed.usage, Usage::new(180, 14));
    let received = server.received();
    assert_eq!(received[0].body.get("stream"), None);
    assert_eq!(received[1].body["stream"], true);
    // No tools offered: no `tools`, no `tool_choice`.
    assert_eq!(received[0].body.get("tools"), None);
    assert_eq!(received[0].body.get("tool_choice"), None);
}

#[tokio::test]
async fn a_rate_limit_waits_what_retry_after_says_then_retries() {
    let server = Server::start([
        Reply::status(429, RATE_LIMITED).header("retry-after", "1"),
        Reply::json(ANSWER),
    ])
    .await;
    let started = Instant::now();
    let response = client(&server)
        .complete(Request::new(vec![Message::user("Hi")]))
        .await
        .unwrap();
    assert_eq!(response.stop, StopReason::EndTurn);
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    let received = server.received();
    assert_eq!(received.len(), 2);
    let waited = received[1].at - received[0].at;
    assert!(waited >= Duration::from_secs(1), "retried after {waited:?}");
    assert_eq!(received[0].body, received[1].body, "the same request again");
}

#[tokio::test]
async fn a_rate_limit_past_the_longest_wait_or_past_the_attempts_is_returned() {
    let server =
        Server::start([Reply::status(429, RATE_LIMITED).header("retry-after", "120")]).await;
    let error = client(&server)
        .complete(Request::new(vec![Message::user("Hi")]))
        .await
        .unwrap_err();
    match &error {
        ModelError::RateLimited { retry_after, body } => {
            assert_eq!(*retry_after, Some(Duration::from_secs(120)));
            assert!(body.contains("rate_limit_exceeded"), "{body}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        server.received().len(),
        1,
        "not retried: the wait is longer than allowed"
    );

    let limited = || Reply::status(429, RATE_LIMITED).header("retry-after-ms", "20");
    let server = Server::start([limited(), limited(), limited(), Reply::json(ANSWER)]).await;
    let error = client(&server)
        .complete(Request::new(vec![Message::user("Hi")]))
        .await
        .unwrap_err();
    assert!(
        matches!(error, ModelError::RateLimited { retry_after: Some(wait), .. } if wait == Duration::from_millis(20))
    );
    assert_eq!(server.received().len(), 3, "three attempts in all");
    assert_eq!(server.left(), 1);
}

#[tokio::test]
async fn a_server_error_is_retried_and_a_client_error_is_not() {
    let server = Server::start([Reply::status(500, SERVER_ERROR), Reply::json(ANSWER)]).await;
    let response = client(&server)
        .complete(Request::new(vec![Message::user("Hi")]))
        .await
        .unwrap();
    assert_eq!(
        response.text,
        "It is sunny in Medellín, and order A-7 was refunded."
    );
    assert_eq!(server.received().len(), 2);

    let failing = || Reply::status(503, SERVER_ERROR);
    let server = Server::start([failing(), failing(), failing()]).await;
    let error = client(&server)
        .complete(Request::new(vec![Message::user("Hi")]))
        .await
        .unwrap_err();
    match &error {
        ModelError::Status { status: 503, body } => {
            assert!(body.contains("server_error"), "{body}")
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(server.received().len(), 3);

    // A 401 whose body echoes the key: not retried, and the key is blanked out.
    let denied = r#"{"error": {"message": "Incorrect API key provided: sk-test-key-0123.", "type": "invalid_request_error", "param": null, "code": "invalid_api_key"}}"#;
    let server = Server::start([Reply::status(401, denied)]).await;
    let error = client(&server)
        .complete(Request::new(vec![Message::user("Hi")]))
        .await
        .unwrap_err();
    let ModelError::Status { status: 401, body } = &error else {
        panic!("{error:?}")
    };
    assert!(
        body.contains("Incorrect API key provided: [redacted]."),
        "{body}"
    );
    assert!(!error.to_string().contains("sk-test-key-0123"));
    assert!(!format!("{error:?}").contains("sk-test-key-0123"));
    assert_eq!(server.received().len(), 1);
}

#[tokio::test]
async fn a_redirect_is_not_followed() {
    // Following it would carry the key to wherever it points.
    let elsewhere = Server::start([Reply::json(ANSWER)]).await;
    let moved = format!("{}/v1/chat/completions", elsewhere.url);
    let server = Server::start([Reply::status(307, "").header("location", &moved)]).await;
    let error = client(&server)
        .complete(Request::new(vec![Message::user("Hi")]))
        .await
        .unwrap_err();
    assert!(
        matches!(error, ModelError::Status { status: 307, .. }),
        "{error:?}"
    );
    assert_eq!(server.received().len(), 1);
    assert_eq!(elsewhere.received().len(), 0);
}

#[tokio::test]
async fn a_body_that_is_not_what_the_api_documents_is_malformed() {
    let half = &ANSWER[..ANSWER.len() / 2];
    let bodies = [
        "<html><body>502 Bad Gateway</body></html>",
        half,
        r#"{"choices": 7}"#,
        r#"{"choices": []}"#,
        r#"{"choices": [{"index": 0, "message": {"role": "assistant", "tool_calls": "call it"}}]}"#,
        r#"{"choices": [{"index": 0, "message": {"content": ["not", "a", "string"]}}]}"#,
    ];
    let server = Server::start(bodies.map(Reply::json)).await;
    let model = client(&server);
    for body in bodies {
        match model
            .complete(Request::new(vec![Message::user("Hi")]))
            .await
        {
            Err(ModelError::Malformed {
                message,
                body: kept,
            }) => {
                assert!(!message.is_empty());
                assert_eq!(kept, body, "the body is kept for the error");
            }
            other => panic!("{body}: {other:?}"),
        }
    }
    assert_eq!(
        server.received().len(),
        bodies.len(),
        "a malformed body is not retried"
    );
}

#[tokio::test]
async fn a_stream_that_breaks_off_or_sends_garbage_is_malformed() {
    let cut_short =
        &STREAM_CALLS[..STREAM_CALLS.find("finish_reason\":\"tool_calls").unwrap() - 200];
    let garbage = "data: {\"choices\": [{\"index\": 0, \"delta\": {\"content\": 5}}]}\n\n";
    let not_json = "data: {\"choices\": [\n\n";
    let server = Server::start([
        Reply::events(cut_short, 50),
        Reply::events(garbage, 50),
        Reply::events(not_json, 50),
    ])
    .await;
    let model = client(&server).streaming(true);
    for _ in 0..3 {
        let error = model
            .complete(Request::new(vec![Message::user("Hi")]))
            .await
            .unwrap_err();
        assert!(matches!(error, ModelError::Malformed { .. }), "{error:?}");
    }
    // A stream is refused past the most bytes the client reads.
    let server = Server::start([Reply::events(STREAM_CALLS, 64)]).await;
    let error = client(&server)
        .max_response_bytes(1000)
        .streaming(true)
        .complete(Request::new(vec![Message::user("Hi")]))
        .await
        .unwrap_err();
    let ModelError::Malformed { message, .. } = &error else {
        panic!("{error:?}")
    };
    assert!(message.contains("longer than 1000 bytes"), "{message}");
}

#[tokio::test]
async fn a_request_past_its_timeout_is_a_timeout() {
    let server = Server::start([Reply::Late {
        after: Duration::from_secs(5),
        body: ANSWER.into(),
    }])
    .await;
    let started = Instant::now();
    let error = client(&server)
        .timeout(Duration::from_millis(200))
        .retry(Retry::exponential(1))
        .complete(Request::new(vec![Message::user("Hi")]))
        .await
        .unwrap_err();
    assert_eq!(
        error,
        ModelError::Timeout {
            after: Duration::from_millis(200)
        }
    );
    assert!(error.is_retryable());
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn without_a_key_nothing_is_sent_and_the_error_says_what_to_set() {
    let model = OpenAi::new("gpt-4o");
    let request = Request::new(vec![Message::user("Hi")]);
    let Err(ModelError::Config { message }) = model.complete(request.clone()).await else {
        panic!()
    };
    assert!(message.contains("OPENAI_API_KEY"), "{message}");
    let events: Vec<_> = model.stream(request).collect().await;
    assert!(
        matches!(&events[..], [Err(ModelError::Config { .. })]),
        "{events:?}"
    );
    // A server on this machine needs no key: nothing listens on port 9, so
    // the request is made and fails to connect.
    let local = OpenAi::new("llama3.2")
        .base_url("http://127.0.0.1:9/v1")
        .retry(Retry::exponential(1));
    let error = local
        .complete(Request::new(vec![Message::user("Hi")]))
        .await
        .unwrap_err();
    assert!(matches!(error, ModelError::Connection { .. }), "{error:?}");
}
