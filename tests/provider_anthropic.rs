//! The Anthropic client against an HTTP server on 127.0.0.1 that replays
//! Messages in their wire format (the message, stream event and error
//! objects of Anthropic's API reference): a `tool_use`, parallel `tool_use`
//! blocks and the `tool_result` blocks that answer them, a streamed answer
//! whose `input_json_delta` fragments are interleaved and cut mid-string,
//! mid-escape and mid-character, a final answer, a rate limit, an overload,
//! an error event mid-stream and bodies that are not what the API
//! documents. What the client sent is checked too.

use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::{json, Value};
use typed_tools::model::{
    Message, Model, ModelError, Request, StopReason, StreamEvent, ToolChoice, Usage,
};
use typed_tools::provider::Anthropic;
use typed_tools::{tool, CatalogFormat, ToolCall, Toolbox};

#[path = "support/providers.rs"]
mod support;

use support::{fragments, ids, quick_retry, results, Reply, Server};

const TOOL_USE: &str = include_str!("../runtime/src/provider/testdata/anthropic_tool_use.json");
const PARALLEL: &str =
    include_str!("../runtime/src/provider/testdata/anthropic_parallel_tool_use.json");
const ANSWER: &str = include_str!("../runtime/src/provider/testdata/anthropic_answer.json");
const STREAM_TOOL_USE: &str =
    include_str!("../runtime/src/provider/testdata/anthropic_stream_tool_use.sse");
const STREAM_ANSWER: &str =
    include_str!("../runtime/src/provider/testdata/anthropic_stream_answer.sse");

/// Anthropic's error objects, as its API sends them.
const RATE_LIMITED: &str = r#"{"type": "error", "error": {"type": "rate_limit_error", "message": "Number of request tokens has exceeded your per-minute rate limit"}, "request_id": "req_011CSHoEeqs5C35K2UUqR7Fy"}"#;
const OVERLOADED: &str = r#"{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}, "request_id": "req_011CSHoEeqs5C35K2UUqR7Fz"}"#;

/// Look up the weather in a city.
#[tool(effects = Read)]
fn get_weather(city: String) -> String {
    format!("sunny in {city}")
}

/// Refund an order, in cents.
#[tool(effects = Write)]
fn refund(order: String, cents: u32) -> Result<String, String> {
    Err(format!(
        "order {order} was already refunded ({cents} cents)"
    ))
}

fn toolbox() -> Toolbox {
    Toolbox::builder()
        .tool(GetWeather)
        .tool(Refund)
        .build()
        .unwrap()
}

fn client(server: &Server) -> Anthropic {
    Anthropic::new("claude-sonnet-4-5")
        .base_url(&server.url)
        .api_key("sk-ant-test-0123")
        .retry(quick_retry())
}

fn ask(text: &str, toolbox: &Toolbox) -> Request {
    Request::new(vec![Message::system("Be brief."), Message::user(text)])
        .tools(toolbox.catalog(CatalogFormat::Anthropic))
}

#[tokio::test]
async fn a_tool_use_comes_back_with_its_id_and_the_catalog_went_in_tools() {
    let server = Server::start([Reply::json(TOOL_USE)]).await;
    let toolbox = toolbox();
    let model = client(&server);
    let request = ask("Weather in Paris?", &toolbox).tool_choice(ToolChoice::Required);
    let response = model.complete(request).await.unwrap();

    assert_eq!(
        response.text,
        "I'll check the current weather in Paris for you."
    );
    assert_eq!(
        response.calls,
        [ToolCall {
            id: Some("toolu_01A09q90qw90lq917835lq9".into()),
            name: "get_weather".into(),
            arguments: r#"{"city":"Paris"}"#.into(),
        }]
    );
    assert_eq!(response.stop, StopReason::ToolUse);
    assert_eq!(response.usage, Usage::new(472, 89));

    let [sent] = &server.received()[..] else {
        panic!()
    };
    assert_eq!(sent.path, "/v1/messages");
    assert_eq!(sent.headers["x-api-key"], "sk-ant-test-0123");
    assert_eq!(sent.headers["anthropic-version"], "2023-06-01");
    assert_eq!(sent.headers["content-type"], "application/json");
    assert_eq!(sent.headers.get("authorization"), None);
    assert_eq!(sent.body["model"], "claude-sonnet-4-5");
    assert_eq!(sent.body["system"], "Be brief.");
    assert_eq!(
        sent.body["messages"],
        json!([{"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]}])
    );
    assert_eq!(sent.body["max_tokens"], 4096, "Anthropic requires a limit");
    assert_eq!(
        sent.body["tools"],
        toolbox.catalog(CatalogFormat::Anthropic).to_json()
    );
    assert_eq!(
        sent.body["tools"][0]["input_schema"]["required"],
        json!(["city"])
    );
    assert_eq!(sent.body["tool_choice"], json!({"type": "any"}));
    assert_eq!(sent.body.get("stream"), None);
}

#[tokio::test]
async fn parallel_tool_use_answered_by_tool_results_in_one_user_message() {
    let server = Server::start([Reply::json(PARALLEL), Reply::json(ANSWER)]).await;
    let toolbox = toolbox();
    let model = client(&server)
        .parallel_tool_calls(false)
        .default_max_tokens(512);
    let request = ask("Weather in Medellín, and refund A-7.", &toolbox);

    let first = model.complete(request.clone()).await.unwrap();
    assert_eq!(first.text, "I'll do both.");
    assert_eq!(ids(&first), ["toolu_01Weather", "toolu_02Refund"]);
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
    assert_eq!(last.usage, Usage::new(700, 21));

    let received = server.received();
    assert_eq!(received[0].body["max_tokens"], 512);
    assert_eq!(
        received[0].body["tool_choice"],
        json!({"type": "auto", "disable_parallel_tool_use": true})
    );
    let sent = &received[1].body["messages"];
    assert_eq!(sent.as_array().unwrap().len(), 3, "{sent:#}");
    assert_eq!(
        sent[1],
        json!({"role": "assistant", "content": [
            {"type": "text", "text": "I'll do both."},
            {"type": "tool_use", "id": "toolu_01Weather", "name": "get_weather", "input": {"city": "Medellín"}},
            {"type": "tool_use", "id": "toolu_02Refund", "name": "refund", "input": {"order": "A-7", "cents": 250}}
        ]})
    );
    assert_eq!(sent[2]["role"], "user");
    let results = sent[2]["content"].as_array().unwrap();
    assert_eq!(
        results[0],
        json!({"type": "tool_result", "tool_use_id": "toolu_01Weather", "content": "\"sunny in Medellín\""})
    );
    assert_eq!(results[1]["type"], "tool_result");
    assert_eq!(results[1]["tool_use_id"], "toolu_02Refund");
    assert_eq!(results[1]["is_error"], true);
    assert!(results[1]["content"]
        .as_str()
        .unwrap()
        .contains("already refunded"));
}

#[tokio::test]
async fn a_streamed_answer_puts_interleaved_input_json_deltas_back_together() {
    assert!(support::cut(STREAM_TOOL_USE.as_bytes(), 31)
        .iter()
        .any(|piece| std::str::from_utf8(piece).is_err()));
    let server = Server::start([Reply::events(STREAM_TOOL_USE, 31)]).await;
    let toolbox = toolbox();
    let model = client(&server);
    let events: Vec<StreamEvent> = model
        .stream(ask("Weather in Medellín, and refund A-7.", &toolbox))
        .map(Result::unwrap)
        .collect()
        .await;

    assert_eq!(events[0], StreamEvent::Text("I'll do ".into()));
    assert_eq!(
        events[2],
        StreamEvent::CallStarted {
            index: 0,
            id: Some("toolu_01Weather".into()),
            name: "get_weather".into()
        }
    );
    assert_eq!(
        events[3],
        StreamEvent::CallStarted {
            index: 1,
            id: Some("toolu_02Refund".into()),
            name: "refund".into()
        }
    );
    let fragments = |index: usize| fragments(&events, index).concat();
    assert_eq!(
        fragments(0),
        r#"{"city": "Medellín", "note": "say \"hi\" \u00e9"}"#
    );
    assert_eq!(fragments(1), r#"{"order": "A-7", "cents": 250}"#);
    let Some(StreamEvent::Done(response)) = events.last() else {
        panic!("{events:?}")
    };
    assert_eq!(response.text, "I'll do both.");
    let weather: Value = serde_json::from_str(&response.calls[0].arguments).unwrap();
    assert_eq!(weather, json!({"city": "Medellín", "note": "say \"hi\" é"}));
    assert_eq!(response.calls[1].arguments, fragments(1));
    assert_eq!(response.stop, StopReason::ToolUse);
    // Input from `message_start`, output from `message_delta`'s running total.
    assert_eq!(response.usage, Usage::new(512, 120));
    assert_eq!(server.received()[0].body["stream"], true);
}

#[tokio::test]
async fn a_final_answer_whole_and_streamed_under_complete() {
    let server = Server::start([Reply::json(ANSWER), Reply::events(STREAM_ANSWER, 40)]).await;
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
        assert_eq!(response.stop, StopReason::EndTurn);
        assert_eq!(response.usage, Usage::new(700, 21));
    }
    let received = server.received();
    assert_eq!(received[1].body["stream"], true);
    assert_eq!(received[0].body.get("tools"), None);
    assert_eq!(received[0].body.get("system"), None);
}

#[tokio::test]
async fn a_rate_limit_waits_what_retry_after_says_and_an_overload_is_retried() {
    let server = Server::start([
        Reply::status(429, RATE_LIMITED).header("retry-after", "1"),
        Reply::status(529, OVERLOADED),
        Reply::json(ANSWER),
    ])
    .await;
    let started = Instant::now();
    let response = client(&server)
        .complete(Request::new(vec![Message::user("Hi")]))
        .await
        .unwrap();
    assert_eq!(response.stop, StopReason::EndTurn);
    let received = server.received();
    assert_eq!(received.len(), 3);
    assert!(received[1].at - received[0].at >= Duration::from_secs(1));
    assert!(started.elapsed() >= Duration::from_secs(1));

    let server = Server::start(vec![Reply::status(529, OVERLOADED); 3]).await;
    let error = client(&server)
        .complete(Request::new(vec![Message::user("Hi")]))
        .await
        .unwrap_err();
    match &error {
        ModelError::Status { status: 529, body } => {
            assert!(body.contains("overloaded_error"), "{body}")
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(server.received().len(), 3);
}

#[tokio::test]
async fn an_error_event_mid_stream_is_the_error_it_names() {
    let head = &STREAM_TOOL_USE[..STREAM_TOOL_USE.find("event: content_block_start").unwrap()];
    let stream = format!("{head}event: error\ndata: {OVERLOADED}\n\n");
    let server = Server::start([Reply::events(&stream, 64)]).await;
    let events: Vec<_> = client(&server)
        .stream(Request::new(vec![Message::user("Hi")]))
        .collect()
        .await;
    let Some(Err(error)) = events.last() else {
        panic!("{events:?}")
    };
    assert!(
        matches!(error, ModelError::Status { status: 529, body } if body.contains("Overloaded")),
        "{error:?}"
    );
    assert_eq!(
        server.received().len(),
        1,
        "a stream under way is not retried"
    );
}

#[tokio::test]
async fn a_body_that_is_not_what_the_api_documents_is_malformed() {
    let bodies = [
        "",
        "Bad Gateway",
        &ANSWER[..ANSWER.len() - 9],
        r#"{"type": "message", "content": "not blocks"}"#,
        r#"{"type": "message", "content": [{"type": "tool_use", "id": "toolu_1", "input": {}}]}"#,
        r#"{"type": "message", "content": [{"text": "a block without a type"}]}"#,
    ];
    let server = Server::start(bodies.map(Reply::json)).await;
    let model = client(&server);
    for body in bodies {
        match model
            .complete(Request::new(vec![Message::user("Hi")]))
            .await
        {
            Err(ModelError::Malformed { body: kept, .. }) => assert_eq!(kept, body),
            other => panic!("{body}: {other:?}"),
        }
    }
    // Streams: cut before `message_delta`, an unknown block type's delta for
    // a block that never started, a delta whose shape is wrong.
    let cut_short = &STREAM_TOOL_USE[..STREAM_TOOL_USE.find("event: message_delta").unwrap()];
    let orphan = "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":4,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{}\"}}\n\n";
    let wrong = "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":\"zero\",\"delta\":{}}\n\n";
    let server =
        Server::start([cut_short, orphan, wrong].map(|body| Reply::events(body, 64))).await;
    let model = client(&server).streaming(true);
    for _ in 0..3 {
        let error = model
            .complete(Request::new(vec![Message::user("Hi")]))
            .await
            .unwrap_err();
        assert!(matches!(error, ModelError::Malformed { .. }), "{error:?}");
    }
}

#[tokio::test]
async fn without_a_key_nothing_is_sent_and_the_error_says_what_to_set() {
    let error = Anthropic::new("claude-sonnet-4-5")
        .complete(Request::new(vec![Message::user("Hi")]))
        .await
        .unwrap_err();
    let ModelError::Config { message } = error else {
        panic!("{error:?}")
    };
    assert!(message.contains("ANTHROPIC_API_KEY"), "{message}");
}
