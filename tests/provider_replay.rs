//! Both provider clients against bodies real servers sent, recorded by others
//! (`tests/provider_corpus/`, sources in its README): each is served as it
//! was sent, by a server on 127.0.0.1, and what the client reads is held to
//! what the case says must be read from it. A whole body is read with
//! `complete`; a stream with `Model::stream`, whose deltas must add up to
//! the same text and reasoning as the answer it ends with.

#[path = "support/providers.rs"]
mod support;

use std::path::{Path, PathBuf};

use futures::StreamExt;
use serde_json::{json, Value};
use support::{Reply, Server};
use typed_tools::durable::{Record, RecordedResponse};
use typed_tools::model::{Message, Model, ModelError, Request, Response, StopReason, StreamEvent};
use typed_tools::provider::{Anthropic, OpenAi};
use typed_tools::recover::Retry;

/// One case of the corpus.
struct Case {
    name: String,
    provider: &'static str,
    body: String,
    stream: bool,
    status: u16,
    headers: Vec<(String, String)>,
    expect: Value,
}

fn cases() -> Vec<Case> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/provider_corpus");
    let mut cases = Vec::new();
    for provider in ["openai", "anthropic"] {
        let mut expects: Vec<PathBuf> = std::fs::read_dir(root.join(provider))
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|path| path.to_string_lossy().ends_with(".expect.json"))
            .collect();
        expects.sort();
        for path in expects {
            let file = path.file_name().unwrap().to_string_lossy().into_owned();
            let name = file.trim_end_matches(".expect.json").to_owned();
            let case: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap())
                .unwrap_or_else(|error| panic!("{name}: {error}"));
            let (body, stream) = ["sse", "json", "txt"]
                .iter()
                .find_map(|ext| {
                    let body = path.with_file_name(format!("{name}.{ext}"));
                    std::fs::read_to_string(body)
                        .ok()
                        .map(|b| (b, *ext == "sse"))
                })
                .unwrap_or_else(|| panic!("{name}: no body"));
            let headers = case["headers"]
                .as_object()
                .into_iter()
                .flatten()
                .map(|(name, value)| (name.clone(), value.as_str().unwrap().to_owned()))
                .collect();
            cases.push(Case {
                name,
                provider,
                body,
                stream,
                status: case["status"].as_u64().unwrap_or(200) as u16,
                headers,
                expect: case["expect"].clone(),
            });
        }
    }
    cases
}

/// The answer as the client read it: through `complete` for a whole body,
/// through `stream` for a stream (its deltas checked against its answer);
/// and the text streamed before it.
async fn read(case: &Case, server: &Server) -> (Result<Response, ModelError>, String) {
    let request = Request::new(vec![Message::user("Hi")]);
    let model: Box<dyn Model> = match case.provider {
        "openai" => Box::new(
            OpenAi::new("m")
                .base_url(format!("{}/v1", server.url))
                .retry(Retry::exponential(1)),
        ),
        _ => Box::new(
            Anthropic::new("m")
                .base_url(&server.url)
                .retry(Retry::exponential(1)),
        ),
    };
    if !case.stream {
        return (model.complete(request).await, String::new());
    }
    let mut events = model.stream(request);
    let (mut text, mut reasoning) = (String::new(), String::new());
    while let Some(event) = events.next().await {
        let event = match event {
            Ok(event) => event,
            Err(error) => return (Err(error), text),
        };
        match event {
            StreamEvent::Text(piece) => text.push_str(&piece),
            StreamEvent::Reasoning(piece) => reasoning.push_str(&piece),
            StreamEvent::Done(response) => {
                assert_eq!(text, response.text, "{}: text deltas", case.name);
                assert_eq!(
                    reasoning,
                    response.reasoning_text(),
                    "{}: reasoning deltas",
                    case.name
                );
                return (Ok(response), text);
            }
            _ => {}
        }
    }
    panic!("{}: the stream ended without its answer", case.name)
}

/// What is wrong with `response` against the case's `answer`, if anything.
fn check_answer(response: &Response, answer: &Value) -> Vec<String> {
    let mut wrong = Vec::new();
    let mut same = |what: &str, got: Value, want: &Value| {
        if got != *want {
            wrong.push(format!("{what}: read {got}, expected {want}"));
        }
    };
    same("text", json!(response.text), &answer["text"]);
    same(
        "reasoning",
        json!(response.reasoning_text()),
        &answer["reasoning"],
    );
    let calls: Vec<Value> = response
        .calls
        .iter()
        .map(|call| {
            let arguments: Value = serde_json::from_str(&call.arguments)
                .unwrap_or_else(|_| Value::String(call.arguments.clone()));
            json!({"id": call.id, "name": call.name, "arguments": arguments})
        })
        .collect();
    same("calls", json!(calls), &answer["calls"]);
    let stop = match (&response.stop, answer["stop"].as_str()) {
        // No reason given: the end of a turn, or of one that called tools.
        (StopReason::EndTurn | StopReason::ToolUse, None) => json!(null),
        (StopReason::EndTurn, _) => json!("end_turn"),
        (StopReason::ToolUse, _) => json!("tool_use"),
        (StopReason::MaxTokens, _) => json!("max_tokens"),
        (StopReason::StopSequence, _) => json!("stop_sequence"),
        (StopReason::Refused, _) => json!("refused"),
        (StopReason::Other(raw), _) => json!(format!("other:{raw}")),
        (other, _) => json!(format!("{other:?}")),
    };
    same("stop", stop, &answer["stop"]);
    let usage = match response.usage.estimated {
        true => json!(null),
        false => json!({
            "input_tokens": response.usage.input_tokens,
            "output_tokens": response.usage.output_tokens,
        }),
    };
    same("usage", usage, &answer["usage"]);
    if response.usage.estimated && response.usage.total() == 0 {
        wrong.push("usage not reported, and not estimated either".into());
    }
    wrong
}

/// What is wrong with `error` against the case's `expected` error, and
/// with the text streamed before it.
fn check_error(error: &ModelError, streamed: &str, expected: &Value) -> Vec<String> {
    let (kind, status, text) = match error {
        ModelError::Status { status, body } => ("status", Some(*status), body.clone()),
        ModelError::RateLimited { body, .. } => ("rate_limited", Some(429), body.clone()),
        ModelError::Malformed { message, body } => ("malformed", None, format!("{message} {body}")),
        other => ("other", None, other.to_string()),
    };
    let mut wrong = Vec::new();
    if kind != expected["kind"] {
        wrong.push(format!("read as {kind}: {error:?}"));
    }
    if let Some(want) = expected["status"].as_u64() {
        if kind != "malformed" && status != Some(want as u16) && kind != "other" {
            wrong.push(format!("status {status:?}, expected {want}"));
        }
    }
    let contains = expected["message_contains"].as_str().unwrap_or_default();
    if !text.contains(contains) {
        wrong.push(format!("the error does not keep {contains:?}: {text}"));
    }
    if let Some(before) = expected["text_before_error"].as_str() {
        if streamed != before {
            wrong.push(format!(
                "streamed {streamed:?} before the error, expected {before:?}"
            ));
        }
    }
    wrong
}

/// A durable agent run records each answer (`model_answered`) and replays
/// it on resume: read back from its record, a real answer is the same
/// answer, its reasoning, signatures, call ids and unread blocks included.
fn journaled_again(response: &Response) -> Vec<String> {
    let record = Record::ModelAnswered {
        step: 1,
        response: RecordedResponse::of(response),
        at_ms: 0,
    };
    match Record::from_json(&record.to_json()) {
        Ok(Record::ModelAnswered { response: back, .. }) if back.to_response() == *response => {
            Vec::new()
        }
        other => vec![format!("journaled and read back as {other:?}")],
    }
}

#[tokio::test]
async fn every_recorded_answer_is_read_as_its_case_says() {
    let cases = cases();
    assert!(cases.len() >= 60, "{} cases", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        let reply = match case.stream {
            true => Reply::events(&case.body, 61),
            false => Reply::Whole {
                status: case.status,
                headers: match case.headers.is_empty() {
                    true => vec![("content-type".into(), "application/json".into())],
                    false => case.headers.clone(),
                },
                body: case.body.clone(),
            },
        };
        let server = Server::start([reply]).await;
        let (read, streamed) = read(case, &server).await;
        let wrong = match (&read, &case.expect) {
            (Ok(response), expect) if expect.get("answer").is_some() => {
                let mut wrong = check_answer(response, &expect["answer"]);
                wrong.extend(journaled_again(response));
                wrong
            }
            (Err(error), expect) if expect.get("error").is_some() => {
                check_error(error, &streamed, &expect["error"])
            }
            (read, _) => vec![format!("read {read:?}")],
        };
        if !wrong.is_empty() {
            failures.push(format!(
                "{}/{}:\n  {}",
                case.provider,
                case.name,
                wrong.join("\n  ")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases read wrong:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}
