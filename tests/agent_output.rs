//! Typed agent output: a run asked for a `RestockReport` ends with one,
//! read, repaired, coerced and checked as a call's arguments are, in each
//! way a model can give it (an output tool, the provider's structured
//! output, JSON in its text); an answer that does not fit, or that a
//! validator refuses, goes back to the model, which fixes it, and one that
//! never fits ends the run with its own exit; a run resumed goes on
//! counting.

use std::sync::{Arc, Mutex};

use futures::executor::block_on;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use typed_tools::agent::{Agent, CallOutcome, Exit, Limits, OutputMode};
use typed_tools::model::{Message, Response, ScriptedModel};
use typed_tools::toolbox::{Approval, Decision};
use typed_tools::{tool, CatalogFormat, ToolCall, Toolbox};

/// What to restock, and what it costs.
#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
struct RestockReport {
    /// The items to order, by id.
    items: Vec<u32>,
    /// What they cost in all, in dollars.
    total_cost: f64,
}

/// What the tools did.
#[derive(Default)]
struct Log(Mutex<Vec<String>>);

/// The stock of an item.
#[tool(effects = Read)]
fn stock(#[state] log: &Log, item: u32) -> u32 {
    log.0.lock().unwrap().push(format!("stock {item}"));
    item % 3
}

/// Order an item.
#[tool(effects = Write)]
fn order(#[state] log: &Log, item: u32) -> String {
    log.0.lock().unwrap().push(format!("order {item}"));
    format!("ordered {item}")
}

fn toolbox() -> (Toolbox, Arc<Log>) {
    let log = Arc::new(Log::default());
    let toolbox = Toolbox::builder()
        .tool(Stock::new(Arc::clone(&log)))
        .tool(Order::new(Arc::clone(&log)))
        .build()
        .unwrap();
    (toolbox, log)
}

fn call(name: &str, arguments: serde_json::Value) -> String {
    json!([{"name": name, "arguments": arguments}]).to_string()
}

fn report() -> RestockReport {
    RestockReport {
        items: vec![2, 3],
        total_cost: 62.5,
    }
}

#[test]
fn through_the_output_tool_a_report_that_does_not_fit_is_fixed() {
    let (toolbox, log) = toolbox();
    let model = ScriptedModel::new([
        call("stock", json!({"item": 2})),
        // `total_cost` left out: told, and fixed.
        call("final_result", json!({"items": [2, 3]})),
        // A string for a number: coerced, recorded.
        call(
            "final_result",
            json!({"items": [2, 3], "total_cost": "62.5"}),
        ),
    ]);
    let agent = Agent::new(&toolbox, model).output::<RestockReport>();
    let run = block_on(agent.run("What should we restock?"));
    assert!(run.exit.is_answer(), "{:?}", run.exit);
    assert_eq!(run.output, Some(report()));
    assert_eq!(*log.0.lock().unwrap(), ["stock 2"]);
    // The model was told what was wrong, as a bad call is.
    let told = run.transcript[5].text();
    assert!(
        told.contains("must be a {items: [Int], total_cost: Float}"),
        "{told}"
    );
    assert!(told.contains("$.total_cost"), "{told}");
    assert!(told.contains("Call `final_result` again"), "{told}");
    // The output call is recorded as a call, with what recovery did.
    let CallOutcome::Ok(output) = &run.calls.last().unwrap().outcome else {
        panic!("{:?}", run.calls.last())
    };
    assert_eq!(
        output.recovery()[0].to_string(),
        "$.total_cost: the string \"62.5\" was read as the number 62.5"
    );
    // The system prompt listed the output tool with the others.
    let model = agent.model();
    let prompt = model.requests()[0].messages[0].text().to_owned();
    assert!(
        prompt.contains("tool final_result: {items: [Int], total_cost: Float}"),
        "{prompt}"
    );
    assert!(prompt.contains("call `final_result`"), "{prompt}");
}

#[test]
fn a_native_call_of_the_output_tool_ends_the_run_with_no_turn_more() {
    let (toolbox, _) = toolbox();
    let final_call = ToolCall {
        id: Some("call_9".into()),
        name: "final_result".into(),
        arguments: json!({"items": [2, 3], "total_cost": 62.5}).to_string(),
    };
    let model = ScriptedModel::new([Response::new("").calls(vec![final_call])])
        .native(CatalogFormat::OpenAiChat);
    let agent = Agent::new(&toolbox, model).output::<RestockReport>();
    let run = block_on(agent.run("What should we restock?"));
    assert_eq!(run.output, Some(report()));
    assert_eq!(run.steps, 1);
    // Offered beside the agent's own tools.
    let request = &agent.model().requests()[0];
    let names: Vec<String> = request
        .tools
        .as_ref()
        .unwrap()
        .to_json()
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["function"]["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names, ["stock", "order", "final_result"]);
    // Its call is answered, so that the transcript can be sent again.
    assert!(matches!(
        run.transcript.last(),
        Some(Message::ToolResult(_))
    ));
}

#[test]
fn the_output_tool_with_other_calls_in_one_answer_ends_the_run_and_they_do_not_run() {
    let (toolbox, log) = toolbox();
    let answer = json!([
        {"name": "order", "arguments": {"item": 2}},
        {"name": "final_result", "arguments": {"items": [2, 3], "total_cost": 62.5}},
    ])
    .to_string();
    let agent = Agent::new(&toolbox, ScriptedModel::new([answer])).output::<RestockReport>();
    let run = block_on(agent.run("Restock."));
    assert_eq!(run.output, Some(report()));
    assert!(log.0.lock().unwrap().is_empty(), "the order did not run");
    let CallOutcome::NotRun { reason } = &run.calls[0].outcome else {
        panic!("{:?}", run.calls[0])
    };
    assert!(
        reason.contains("final answer was given in the same answer"),
        "{reason}"
    );
}

#[test]
fn native_structured_output_is_asked_for_and_read_from_the_text() {
    let (toolbox, _) = toolbox();
    let model = ScriptedModel::new([
        r#"{"items": [2, 3], "total_cost": "cheap"}"#,
        r#"{"items": [2, 3], "total_cost": 62.5}"#,
    ])
    .native(CatalogFormat::OpenAiChat);
    let agent = Agent::new(&toolbox, model)
        .output::<RestockReport>()
        .output_mode(OutputMode::Native);
    let run = block_on(agent.run("What should we restock?"));
    assert_eq!(run.output, Some(report()));
    let requests = agent.model().requests();
    let output = requests[0].output.as_ref().expect("the schema was sent");
    assert_eq!(output.name, "final_result");
    assert_eq!(output.schema["required"], json!(["items", "total_cost"]));
    // The output tool is not offered as a tool in this mode.
    let tools = requests[0].tools.as_ref().unwrap().to_json();
    assert_eq!(tools.as_array().unwrap().len(), 2);
    let told = requests[1].messages.last().unwrap().text().to_owned();
    assert!(told.contains("$.total_cost"), "{told}");
    assert!(
        told.contains("Answer again with only the JSON value"),
        "{told}"
    );
}

#[test]
fn prompted_output_is_found_in_the_answers_text() {
    let (toolbox, _) = toolbox();
    let model = ScriptedModel::new([
        "Here is the report:\n```json\n{\"items\": [2, 3], \"total_cost\": 62.5,}\n```\nOrder soon.",
    ]);
    let agent = Agent::new(&toolbox, model)
        .output::<RestockReport>()
        .output_mode(OutputMode::Prompted);
    let run = block_on(agent.run("What should we restock?"));
    assert_eq!(run.output, Some(report()), "{:?}", run.exit);
    let prompt = agent.model().requests()[0].messages[0].text().to_owned();
    assert!(prompt.contains("JSON Schema"), "{prompt}");
    // No output tool is listed when the answer is given in text.
    assert!(!prompt.contains("tool final_result"), "{prompt}");
}

#[test]
fn an_output_that_never_fits_ends_the_run_with_its_own_exit() {
    let (toolbox, _) = toolbox();
    let wrong = call("final_result", json!({"items": "two"}));
    let model = ScriptedModel::new([wrong.clone(), wrong.clone(), wrong]);
    let agent = Agent::new(&toolbox, model)
        .limits(Limits::new().output_retries(2))
        .output::<RestockReport>();
    let run = block_on(agent.run("Restock."));
    let Exit::OutputInvalid { error, attempts } = &run.exit else {
        panic!("{:?}", run.exit)
    };
    assert_eq!(*attempts, 3);
    assert!(error.contains("$.items"), "{error}");
    assert_eq!(run.output, None);
    assert_eq!(run.exit.name(), "output_invalid");
}

#[test]
fn a_validators_refusal_is_fixed_on_the_next_turn() {
    let (toolbox, _) = toolbox();
    let model = ScriptedModel::new([
        call("final_result", json!({"items": [], "total_cost": 0.0})),
        call("final_result", json!({"items": [2, 3], "total_cost": 62.5})),
    ]);
    let agent = Agent::new(&toolbox, model)
        .output::<RestockReport>()
        .validate(|report: &RestockReport| match report.items.is_empty() {
            true => Err("a restock report names at least one item".into()),
            false => Ok(()),
        })
        .validate_async(|report: &RestockReport| {
            let total = report.total_cost;
            async move {
                match total < 1_000.0 {
                    true => Ok(()),
                    false => Err("over the budget".to_owned()),
                }
            }
        });
    let run = block_on(agent.run("Restock."));
    assert_eq!(run.output, Some(report()));
    let told = &run.transcript[3];
    assert!(
        told.text()
            .contains("a restock report names at least one item"),
        "{told:?}"
    );
}

/// A type that is not an object is asked for as `{"result": ...}`.
#[test]
fn a_list_is_asked_for_under_result_and_taken_out() {
    let (toolbox, _) = toolbox();
    let model = ScriptedModel::new([call("final_result", json!({"result": [4, 5]}))]);
    let agent = Agent::new(&toolbox, model).output::<Vec<u32>>();
    let run = block_on(agent.run("Which items?"));
    assert_eq!(run.output, Some(vec![4, 5]));
    let prompt = agent.model().requests()[0].messages[0].text().to_owned();
    assert!(prompt.contains("{result: [Int]}"), "{prompt}");
}

#[test]
fn asked_for_a_call_a_model_that_answers_with_the_json_is_taken_at_its_word() {
    let (toolbox, _) = toolbox();
    // The answer is the report itself, not a call of the output tool; prose
    // first is told to call it.
    let model = ScriptedModel::new([
        "The items to restock are 2 and 3.".to_owned(),
        json!({"items": [2, 3], "total_cost": 62.5}).to_string(),
    ]);
    let agent = Agent::new(&toolbox, model).output::<RestockReport>();
    let run = block_on(agent.run("Restock."));
    assert_eq!(run.output, Some(report()));
    assert!(run.transcript[3]
        .text()
        .contains("by calling `final_result`"));
}

#[test]
fn the_output_tool_passes_the_agents_approvals() {
    let (toolbox, _) = toolbox();
    let model = ScriptedModel::new([
        call("final_result", json!({"items": [7], "total_cost": 5000.0})),
        call("final_result", json!({"items": [2, 3], "total_cost": 62.5})),
    ]);
    let agent = Agent::new(&toolbox, model)
        .approval(
            Approval::new(|request| match request.args["total_cost"].as_f64() {
                Some(cost) if cost > 1_000.0 => Decision::Refuse("a manager signs that".into()),
                _ => Decision::Approve,
            })
            .tools(["final_result"]),
        )
        .output::<RestockReport>();
    let run = block_on(agent.run("Restock."));
    assert_eq!(run.output, Some(report()));
    assert!(run.transcript[3].text().contains("a manager signs that"));
}

#[test]
fn a_run_resumed_counts_the_whole_run() {
    let (toolbox, _) = toolbox();
    let model = ScriptedModel::new([
        call("stock", json!({"item": 2})),
        "Which supplier?".to_owned(),
        call("stock", json!({"item": 3})),
        "Done.".to_owned(),
    ]);
    let agent = Agent::new(&toolbox, model);
    let first = block_on(agent.run("Check the stock."));
    assert_eq!((first.steps, first.tool_calls()), (2, 1));
    let usage = first.usage;
    let run = block_on(agent.resume(first.then(Message::user("Acme."))));
    assert_eq!(run.exit, Exit::Answer("Done.".into()));
    assert_eq!((run.steps, run.tool_calls(), run.calls.len()), (4, 2, 2));
    assert_eq!(run.answers.len(), 4);
    assert!(run.usage.total() > usage.total());
    // The limits count the whole run too.
    let model = ScriptedModel::new(["Which supplier?", "Done."]);
    let agent = Agent::new(&toolbox, model).limits(Limits::new().steps(1));
    let first = block_on(agent.run("Check."));
    let run = block_on(agent.resume(first.then(Message::user("Acme."))));
    assert_eq!(run.exit, Exit::OutOfSteps { limit: 1 });
}
