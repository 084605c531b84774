//! The agent over the OpenAI-compatible client, against a server as strict
//! as the small ones people run on their own machines (llama-cpp-python's,
//! which a real small model was tried behind): it refuses `"content": null`
//! with a 500, ignores `max_tokens` and `stream_options.include_usage`, and
//! reports no usage. The conversation of `examples/agent.rs` completes
//! against it, whole and streamed; a budget binds on estimated usage; an
//! answer cut off at the token limit is not taken as final; and the 500 it
//! sends for a request it calls invalid is not retried.

use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use typed_tools::agent::{Agent, Exit, Limits};
use typed_tools::model::{Message, Model, ModelError, Request};
use typed_tools::provider::OpenAi;
use typed_tools::recover::Policy;
use typed_tools::toolbox::{Approval, Decision};
use typed_tools::{tool, Toolbox};

#[path = "support/providers.rs"]
mod support;

use support::{quick_retry, Reply, Server};

/// What the shop's tools did, in order.
#[derive(Default)]
struct Shop {
    done: Mutex<Vec<String>>,
}

/// Look up a customer account by its id.
#[tool(effects = Read)]
fn lookup_account(#[state] shop: &Shop, id: String) -> Result<Value, String> {
    shop.done.lock().unwrap().push(format!("lookup {id}"));
    match id.as_str() {
        "cust_12345" => {
            Ok(json!({"id": id, "email": "ada@example.com", "last_charge_cents": 4900}))
        }
        _ => Err(format!("no account with id {id}")),
    }
}

/// Refund an amount in cents to an account.
#[tool(effects = Write)]
fn issue_refund(#[state] shop: &Shop, account_id: String, amount: i64) -> String {
    shop.done
        .lock()
        .unwrap()
        .push(format!("refund {account_id} {amount}"));
    "tx_0001".into()
}

/// Send a reply to a customer's email address.
#[tool(effects = Write)]
fn send_reply(#[state] shop: &Shop, to: String, body: String) {
    shop.done
        .lock()
        .unwrap()
        .push(format!("reply {to}: {body}"));
}

fn toolbox(shop: &Arc<Shop>) -> Toolbox {
    Toolbox::builder()
        .tool(LookupAccount::new(Arc::clone(shop)))
        .tool(IssueRefund::new(Arc::clone(shop)))
        .tool(SendReply::new(Arc::clone(shop)))
        .policy(Policy::recover())
        .build()
        .unwrap()
}

fn client(server: &Server) -> OpenAi {
    OpenAi::new("qwen2.5-0.5b-instruct")
        .base_url(format!("{}/v1", server.url))
        .retry(quick_retry())
}

/// A chat completion as llama-cpp-python writes one: no usage.
fn completion(message: Value, finish: &str) -> String {
    json!({"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "qwen",
        "choices": [{"index": 0, "message": message, "logprobs": null, "finish_reason": finish}]})
    .to_string()
}

/// One tool call, as a whole answer.
fn calling(id: &str, name: &str, arguments: Value) -> String {
    completion(
        json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": id, "type": "function", "function": {"name": name, "arguments": arguments.to_string()}}
        ]}),
        "tool_calls",
    )
}

/// The same answer streamed, as such a server streams it: no usage chunk,
/// whatever `include_usage` said.
fn streamed(answer: &str) -> Reply {
    let answer: Value = serde_json::from_str(answer).unwrap();
    let choice = &answer["choices"][0];
    let message = &choice["message"];
    let mut chunks =
        vec![json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]})];
    if let Some(text) = message["content"].as_str() {
        for piece in text.as_bytes().chunks(7) {
            let piece = String::from_utf8_lossy(piece);
            chunks.push(json!({"choices": [{"index": 0, "delta": {"content": piece}}]}));
        }
    }
    for (index, call) in message["tool_calls"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        chunks.push(json!({"choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": index, "id": call["id"], "type": "function",
             "function": {"name": call["function"]["name"], "arguments": ""}}]}}]}));
        chunks.push(json!({"choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": index, "function": {"arguments": call["function"]["arguments"]}}]}}]}));
    }
    chunks.push(
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]}),
    );
    let body: String = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
    Reply::events(&(body + "data: [DONE]\n\n"), 40)
}

/// The conversation of `examples/agent.rs`' first task, as native calls:
/// a lookup, a tool that does not exist, a refund with the amount as a
/// string (coerced), a reply, the final answer.
fn support_conversation() -> Vec<String> {
    vec![
        calling("call_1", "lookup_account", json!({"id": "cust_12345"})),
        calling("call_2", "refund_customer", json!({"id": "cust_12345"})),
        calling(
            "call_3",
            "issue_refund",
            json!({"account_id": "cust_12345", "amount": "4900"}),
        ),
        calling(
            "call_4",
            "send_reply",
            json!({"to": "ada@example.com", "body": "We refunded $49.00 (tx_0001)."}),
        ),
        completion(
            json!({"role": "assistant", "content": "Refunded $49.00 to cust_12345 and told the customer."}),
            "stop",
        ),
    ]
}

#[tokio::test]
async fn the_agent_examples_conversation_completes_whole_and_streamed() {
    for streaming in [false, true] {
        let replies = support_conversation();
        let replies: Vec<Reply> = match streaming {
            false => replies.iter().map(|r| Reply::json(r)).collect(),
            true => replies.iter().map(|r| streamed(r)).collect(),
        };
        let server = Server::strict(replies).await;
        let shop = Arc::new(Shop::default());
        let toolbox = toolbox(&shop);
        let approved = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&approved);
        let agent = Agent::new(&toolbox, client(&server).streaming(streaming))
            .limits(Limits::new().steps(8).tokens(20_000))
            .approval(Approval::new(move |request| {
                seen.lock().unwrap().push(request.args.clone());
                Decision::Approve
            }));
        let run = agent.run("cust_12345 asks for a refund.").await;
        assert_eq!(
            run.exit,
            Exit::Answer("Refunded $49.00 to cust_12345 and told the customer.".into()),
            "streaming: {streaming}"
        );
        assert_eq!(
            *shop.done.lock().unwrap(),
            [
                "lookup cust_12345",
                "refund cust_12345 4900",
                "reply ada@example.com: We refunded $49.00 (tx_0001)."
            ]
        );
        // The refund was approved with the amount as it ran: a number.
        assert_eq!(approved.lock().unwrap()[0]["amount"], 4900);
        let received = server.received();
        assert_eq!(received.len(), 5, "no request refused, none retried");
        for request in &received[1..] {
            for message in request.body["messages"].as_array().unwrap() {
                assert!(message["content"].is_string(), "{message}");
            }
        }
        // Each request said how much it may write: the answer cap, less
        // than the budget left here (the budget test sees the other case).
        for request in &received {
            assert_eq!(request.body["max_tokens"], 4096);
        }
        // The server reported no usage: the run counted an estimate.
        assert!(run.usage.estimated);
        assert!(run.usage.total() > 0);
        assert_eq!(run.answers.len(), 5);
    }
}

#[tokio::test]
async fn a_budget_binds_on_estimated_usage_when_the_server_reports_none() {
    // An answer of 6,700 bytes, about 1,675 tokens: the server ignored the
    // `max_tokens` it was sent.
    let long = "All is well. ".repeat(515);
    for streaming in [false, true] {
        let replies = [
            calling("call_1", "lookup_account", json!({"id": "cust_12345"})),
            completion(
                json!({"role": "assistant", "content": long.clone(), "tool_calls": [
                {"id": "call_2", "type": "function", "function": {"name": "send_reply",
                 "arguments": "{\"to\": \"ada@example.com\", \"body\": \"hi\"}"}}]}),
                "tool_calls",
            ),
        ];
        let replies: Vec<Reply> = match streaming {
            false => replies.iter().map(|r| Reply::json(r)).collect(),
            true => replies.iter().map(|r| streamed(r)).collect(),
        };
        let server = Server::strict(replies).await;
        let shop = Arc::new(Shop::default());
        let toolbox = toolbox(&shop);
        let agent = Agent::new(&toolbox, client(&server).streaming(streaming))
            .limits(Limits::new().tokens(1_000));
        let run = agent.run("cust_12345 asks for a refund.").await;
        let Exit::OutOfTokens { used, limit } = run.exit else {
            panic!("{:?}", run.exit)
        };
        assert_eq!(limit, 1_000);
        assert!(used > 1_600, "{used}");
        assert!(run.usage.estimated);
        // The reply the over-budget answer asked for did not run.
        assert_eq!(*shop.done.lock().unwrap(), ["lookup cust_12345"]);
        let received = server.received();
        let first = received[0].body["max_tokens"].as_u64().unwrap();
        assert!(first < 1_000, "the budget left was asked for: {first}");
        if streaming {
            // Asked for, and ignored.
            assert_eq!(received[0].body["stream_options"]["include_usage"], true);
        }
    }
}

#[tokio::test]
async fn an_answer_cut_off_at_the_token_limit_is_not_final_and_runs_no_call() {
    let cut = completion(
        json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "issue_refund",
             "arguments": "{\"account_id\": \"cust_12345\", \"amount\": 49"}}]}),
        "length",
    );
    let text = completion(
        json!({"role": "assistant", "content": "The refund policy says that"}),
        "length",
    );
    for reply in [cut, text] {
        let server = Server::strict([Reply::json(&reply)]).await;
        let shop = Arc::new(Shop::default());
        let toolbox = toolbox(&shop);
        let agent = Agent::new(&toolbox, client(&server)).limits(Limits::new().answer_tokens(64));
        let run = agent.run("cust_12345 asks for a refund.").await;
        let Exit::Truncated { max_tokens, .. } = &run.exit else {
            panic!("{:?}", run.exit)
        };
        assert_eq!(*max_tokens, Some(64));
        assert!(run.exit.to_string().contains("Limits::answer_tokens"));
        assert!(shop.done.lock().unwrap().is_empty(), "nothing ran");
        assert_eq!(server.received()[0].body["max_tokens"], 64);
        // A call it made is answered as not run, so the transcript can be
        // sent again.
        for record in &run.calls {
            assert!(!record.outcome.ran());
        }
    }
}

#[tokio::test]
async fn a_request_the_server_calls_invalid_is_not_retried() {
    let body = json!({"messages": [{"role": "assistant", "content": null}]});
    let refusal = support::llama_cpp_python_refusal(&body).unwrap();
    let server = Server::start([
        Reply::status(500, &refusal),
        Reply::status(500, &refusal),
        Reply::status(500, &refusal),
    ])
    .await;
    let error = client(&server)
        .complete(Request::new(vec![Message::user("Hi")]))
        .await
        .unwrap_err();
    let ModelError::Status { status: 500, body } = &error else {
        panic!("{error:?}")
    };
    assert!(body.contains("Input should be a valid string"), "{body}");
    assert!(!error.is_retryable());
    assert_eq!(
        server.received().len(),
        1,
        "the same request would fail the same way"
    );
}
