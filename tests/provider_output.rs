//! Typed agent output through the provider clients, against servers on
//! 127.0.0.1 that answer as OpenAI and Anthropic do: the request carries the
//! output's schema (OpenAI's strict `response_format`, Anthropic's
//! `output_config`, or the output tool among the tools), and the reply is
//! read into the type.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use typed_tools::agent::{Agent, OutputMode};
use typed_tools::provider::{Anthropic, OpenAi};
use typed_tools::recover::Retry;
use typed_tools::{tool, Toolbox};

#[path = "support/providers.rs"]
mod support;

use support::{Reply, Server};

/// What to restock, and what it costs.
#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
struct RestockReport {
    /// The items to order, by id.
    items: Vec<u32>,
    /// What they cost in all, in dollars.
    total_cost: f64,
    /// Why, if there is more to say.
    note: Option<String>,
}

/// The stock of an item.
#[tool(effects = Read)]
fn stock(item: u32) -> u32 {
    item % 3
}

fn toolbox() -> Toolbox {
    Toolbox::builder().tool(Stock).build().unwrap()
}

fn report() -> RestockReport {
    RestockReport {
        items: vec![2, 3],
        total_cost: 62.5,
        note: None,
    }
}

fn openai_text(text: &str) -> String {
    json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 50, "completion_tokens": 20}})
    .to_string()
}

#[tokio::test]
async fn openai_native_output_sends_a_strict_schema_and_reads_the_reply() {
    let server = Server::start([
        // Not the type: told, and fixed.
        Reply::json(&openai_text(r#"{"items": [2, 3]}"#)),
        Reply::json(&openai_text(
            r#"{"items": [2, 3], "total_cost": 62.5, "note": null}"#,
        )),
    ])
    .await;
    let model = OpenAi::new("gpt-4o-mini")
        .base_url(format!("{}/v1", server.url))
        .retry(Retry::exponential(1));
    let agent = Agent::new(&toolbox(), model)
        .output::<RestockReport>()
        .output_mode(OutputMode::Native);
    let run = agent.run("What should we restock?").await;
    assert_eq!(run.output, Some(report()), "{:?}", run.exit);
    let received = server.received();
    let format = &received[0].body["response_format"];
    assert_eq!(format["type"], "json_schema");
    assert_eq!(format["json_schema"]["name"], "final_result");
    assert_eq!(format["json_schema"]["strict"], true);
    let schema = &format["json_schema"]["schema"];
    assert_eq!(schema["additionalProperties"], false);
    assert_eq!(schema["required"], json!(["items", "total_cost", "note"]));
    // The second request told the model what was wrong.
    let messages = received[1].body["messages"].as_array().unwrap();
    let told = messages.last().unwrap()["content"].as_str().unwrap();
    assert!(told.contains("$.total_cost"), "{told}");
}

#[tokio::test]
async fn anthropic_native_output_sends_output_config_and_reads_the_reply() {
    let reply = json!({"id": "msg_1", "type": "message", "role": "assistant",
        "content": [{"type": "text", "text": "{\"items\": [2, 3], \"total_cost\": 62.5, \"note\": null}"}],
        "stop_reason": "end_turn", "usage": {"input_tokens": 40, "output_tokens": 18}});
    let server = Server::start([Reply::json(&reply.to_string())]).await;
    let model = Anthropic::new("claude-sonnet-4-5")
        .base_url(&server.url)
        .retry(Retry::exponential(1));
    let agent = Agent::new(&toolbox(), model)
        .output::<RestockReport>()
        .output_mode(OutputMode::Native);
    let run = agent.run("What should we restock?").await;
    assert_eq!(run.output, Some(report()), "{:?}", run.exit);
    let body = &server.received()[0].body;
    assert_eq!(body["output_config"]["format"]["type"], "json_schema");
    let schema = &body["output_config"]["format"]["schema"];
    assert_eq!(schema["additionalProperties"], false);
    // No bounds Anthropic does not hold: u32's `minimum` is gone.
    assert!(!schema.to_string().contains("minimum"), "{schema}");
}

#[tokio::test]
async fn the_output_tool_goes_with_the_tools_and_its_call_is_the_answer() {
    let call = json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": null,
        "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "final_result",
            "arguments": "{\"items\": [2, 3], \"total_cost\": 62.5}"}}]},
        "finish_reason": "tool_calls"}]});
    let server = Server::start([Reply::json(&call.to_string())]).await;
    let model = OpenAi::new("gpt-4o-mini")
        .base_url(format!("{}/v1", server.url))
        .retry(Retry::exponential(1));
    let agent = Agent::new(&toolbox(), model).output::<RestockReport>();
    let run = agent.run("What should we restock?").await;
    assert_eq!(run.output, Some(report()), "{:?}", run.exit);
    let tools = server.received()[0].body["tools"].clone();
    let names: Vec<&str> = tools
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["stock", "final_result"]);
    assert_eq!(server.received().len(), 1, "no turn after the answer");
}
