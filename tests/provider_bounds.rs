//! The provider clients hold their limits against hostile servers: an
//! answer of more tool calls than the client reads is refused with the
//! limit named (streamed or whole); putting a stream's calls together takes
//! time linear in them; and a deadline (the client's `timeout`, an agent's
//! wall time) holds while a stream's chunks are always ready, so the work
//! never waits.

use std::time::{Duration, Instant};

use serde_json::json;
use typed_tools::agent::{Agent, Exit, Limits};
use typed_tools::model::{Message, Model, ModelError, Request};
use typed_tools::provider::{Anthropic, OpenAi};
use typed_tools::recover::Retry;
use typed_tools::Toolbox;

#[path = "support/providers.rs"]
mod support;

use support::{anthropic_calls, openai_calls, Reply, Server};

fn openai(server: &Server) -> OpenAi {
    OpenAi::new("m")
        .base_url(format!("{}/v1", server.url))
        .retry(Retry::exponential(1))
        .streaming(true)
}

fn anthropic(server: &Server) -> Anthropic {
    Anthropic::new("m")
        .base_url(&server.url)
        .retry(Retry::exponential(1))
        .streaming(true)
}

fn request() -> Request {
    Request::new(vec![Message::user("Hi")])
}

#[tokio::test]
async fn an_answer_of_more_calls_than_the_client_reads_is_refused_naming_the_limit() {
    let over = 1_025;
    let server = Server::start([
        Reply::events(&openai_calls(over), 64 * 1024),
        Reply::events(&anthropic_calls(over), 64 * 1024),
    ])
    .await;
    for error in [
        openai(&server).complete(request()).await.unwrap_err(),
        anthropic(&server).complete(request()).await.unwrap_err(),
    ] {
        let ModelError::Malformed { message, .. } = &error else {
            panic!("{error:?}")
        };
        assert!(message.contains("more than 1024 tool calls"), "{message}");
        assert!(message.contains("max_calls_per_answer"), "{message}");
    }
    // Whole, too; and the limit can be set.
    let calls: Vec<_> = (0..over)
        .map(|i| json!({"id": format!("c{i}"), "type": "function", "function": {"name": "f", "arguments": "{}"}}))
        .collect();
    let whole = json!({"choices": [{"message": {"role": "assistant", "content": null, "tool_calls": calls}, "finish_reason": "tool_calls"}]}).to_string();
    let server = Server::start([Reply::json(&whole), Reply::json(&whole)]).await;
    let client = openai(&server).streaming(false);
    assert!(matches!(
        client.complete(request()).await,
        Err(ModelError::Malformed { message, .. }) if message.contains("max_calls_per_answer")
    ));
    let read = client.max_calls_per_answer(2_000).complete(request()).await;
    assert_eq!(read.unwrap().calls.len(), over);
}

/// The time the OpenAI-compatible client (`openai`) or Anthropic's takes
/// to read `body`, streamed, reading any number of calls.
async fn time_to_read(openai_wire: bool, body: &str) -> Duration {
    let server = Server::start([Reply::events(body, 64 * 1024)]).await;
    let client: Box<dyn Model> = match openai_wire {
        true => Box::new(openai(&server).max_calls_per_answer(usize::MAX)),
        false => Box::new(anthropic(&server).max_calls_per_answer(usize::MAX)),
    };
    let start = Instant::now();
    let response = client.complete(request()).await.unwrap();
    assert!(!response.calls.is_empty());
    start.elapsed()
}

#[tokio::test]
async fn putting_a_streams_calls_together_takes_time_linear_in_them() {
    // The shapes that were quadratic: 160,000 calls took 8 to 16 s of CPU
    // in one poll. Ten times the calls may take at most 32 times as long:
    // linear is 10, quadratic 100, and 32 is halfway between on a log
    // scale, so a shared machine's noise does not fail it and a quadratic
    // step still does. A stall only adds time: the fastest of up to five
    // reads of each size counts.
    for (openai_wire, body) in [
        (true, openai_calls as fn(usize) -> String),
        (false, anthropic_calls),
    ] {
        let (small, large) = (body(8_000), body(80_000));
        let (mut a, mut b) = (Duration::MAX, Duration::MAX);
        let mut ratio = f64::INFINITY;
        for _ in 0..5 {
            a = a.min(time_to_read(openai_wire, &small).await);
            b = b.min(time_to_read(openai_wire, &large).await);
            ratio = b.as_secs_f64() / a.as_secs_f64().max(0.001);
            if ratio <= 20.0 {
                break;
            }
        }
        assert!(
            ratio <= 32.0,
            "openai: {openai_wire}: 10x the calls took {ratio:.1}x the time ({b:?} against {a:?}, the fastest of five)"
        );
    }
}

/// A stream of text deltas, `bytes` long: every chunk of it is ready as
/// soon as the one before is read.
fn long_text(bytes: usize) -> String {
    let delta = format!(
        "data: {}\n\n",
        json!({"choices": [{"index": 0, "delta": {"content": "All is well. ".repeat(20)}}]})
    );
    let mut body = delta.repeat(bytes / delta.len());
    body.push_str("data: {\"choices\": [{\"index\": 0, \"delta\": {}, \"finish_reason\": \"stop\"}]}\n\ndata: [DONE]\n\n");
    body
}

#[tokio::test]
async fn deadlines_hold_while_a_stream_is_always_ready() {
    let body = long_text(30_000_000);
    // The client's own timeout.
    let server = Server::start([Reply::events(&body, 64 * 1024)]).await;
    let start = Instant::now();
    let error = openai(&server)
        .timeout(Duration::from_millis(300))
        .complete(request())
        .await
        .unwrap_err();
    assert!(matches!(error, ModelError::Timeout { .. }), "{error:?}");
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "{:?}",
        start.elapsed()
    );
    // An agent's wall time.
    let server = Server::start([Reply::events(&body, 64 * 1024)]).await;
    let toolbox = Toolbox::builder().build().unwrap();
    let agent = Agent::new(&toolbox, openai(&server))
        .limits(Limits::new().wall_time(Duration::from_millis(300)));
    let start = Instant::now();
    let run = agent.run("Hi").await;
    assert!(matches!(run.exit, Exit::Deadline { .. }), "{:?}", run.exit);
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "{:?}",
        start.elapsed()
    );
}
