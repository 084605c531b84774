//! A run, live: the events of a scripted run are exactly what happened (a
//! call refused by approval, one repaired and approved, an exit by limit),
//! a streamed and a plain run of the same script end alike, a model that
//! streams has its text handed out as it comes, and dropping the stream in
//! the middle of a write cancels the run with nothing half-recorded.

mod support;

use std::sync::{Arc, Mutex};

use futures::executor::block_on;
use futures::future::BoxFuture;
use futures::stream::BoxStream;
use futures::{FutureExt, StreamExt};
use serde_json::json;
use support::{IssueRefund, LookupAccount, Shop};
use typed_tools::agent::{Agent, CallOutcome, Event, Exit, Limits, Run};
use typed_tools::model::{Model, ModelError, Request, Response, ScriptedModel, StreamEvent};
use typed_tools::recover::Policy;
use typed_tools::toolbox::{Approval, Decision};
use typed_tools::{tool, ToolError, Toolbox};

fn shop_toolbox(shop: &Arc<Shop>) -> Toolbox {
    Toolbox::builder()
        .tool(LookupAccount::new(Arc::clone(shop)))
        .tool(IssueRefund::new(Arc::clone(shop)))
        .policy(Policy::recover())
        .build()
        .unwrap()
        .approve(Approval::new(|request| {
            match request.args["amount"].as_i64() {
                Some(cents) if cents > 10_000 => {
                    Decision::Refuse("over $100 needs a manager".into())
                }
                _ => Decision::Approve,
            }
        }))
}

/// A lookup, a refund too large (refused), a refund with its amount as a
/// string (coerced, then approved), and a call past the limit of three.
fn script() -> ScriptedModel {
    let call = |name: &str, arguments: serde_json::Value| {
        json!([{"name": name, "arguments": arguments}]).to_string()
    };
    ScriptedModel::new([
        call("lookup_account", json!({"id": "cust_1"})),
        call(
            "issue_refund",
            json!({"account_id": "cust_1", "amount": 90_000}),
        ),
        call(
            "issue_refund",
            json!({"account_id": "cust_1", "amount": "4900"}),
        ),
        call("lookup_account", json!({"id": "cust_2"})),
        "Refunded.".to_owned(),
    ])
}

fn collect(agent: &Agent<ScriptedModel>) -> Vec<Event> {
    block_on(agent.run_stream("Refund cust_1.").collect())
}

#[test]
fn the_events_of_a_run_are_exactly_what_happened() {
    let shop = Arc::new(Shop::default());
    let toolbox = shop_toolbox(&shop);
    let agent = Agent::new(&toolbox, script()).limits(Limits::new().tool_calls(3));
    let events = collect(&agent);
    let names: Vec<&str> = events.iter().map(Event::name).collect();
    assert_eq!(
        names,
        [
            // The lookup.
            "step",
            "text",
            "answered",
            "call_proposed",
            "call_finished",
            "used",
            // The refund the approval refuses: no `approved`.
            "step",
            "text",
            "answered",
            "call_proposed",
            "call_finished",
            "used",
            // The refund coerced, approved, run.
            "step",
            "text",
            "answered",
            "call_proposed",
            "approved",
            "call_finished",
            "used",
            // The call past the limit: not run, and the run ends.
            "step",
            "text",
            "answered",
            "call_proposed",
            "call_finished",
            "used",
            "finished",
        ]
    );
    let steps: Vec<u32> = events
        .iter()
        .filter_map(|event| match event {
            Event::Step { step } => Some(*step),
            _ => None,
        })
        .collect();
    assert_eq!(steps, [1, 2, 3, 4]);
    let finished: Vec<&CallOutcome> = events
        .iter()
        .filter_map(|event| match event {
            Event::CallFinished(record) => Some(&record.outcome),
            _ => None,
        })
        .collect();
    assert!(matches!(finished[0], CallOutcome::Ok(_)));
    assert!(matches!(
        finished[1],
        CallOutcome::Err(ToolError::Refused { reason, .. }) if reason == "over $100 needs a manager"
    ));
    // The repair, and the approval of what it made: the amount as a number.
    let CallOutcome::Ok(refunded) = finished[2] else {
        panic!("{:?}", finished[2])
    };
    assert_eq!(
        refunded.recovery()[0].to_string(),
        "$.amount: the string \"4900\" was read as the number 4900"
    );
    let approved = events
        .iter()
        .find_map(|event| match event {
            Event::Approved { tool, args } => Some((tool.as_str(), args.clone())),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        approved,
        (
            "issue_refund",
            json!({"account_id": "cust_1", "amount": 4900})
        )
    );
    assert!(matches!(finished[3], CallOutcome::NotRun { .. }));
    // What was used, after each step.
    let used: Vec<u32> = events
        .iter()
        .filter_map(|event| match event {
            Event::Used { tool_calls, .. } => Some(*tool_calls),
            _ => None,
        })
        .collect();
    assert_eq!(used, [1, 2, 3, 3]);
    let Some(Event::Finished(run)) = events.last() else {
        panic!("{:?}", events.last())
    };
    assert_eq!(run.exit, Exit::OutOfToolCalls { limit: 3 });
    // The events are the run's own records, in its order.
    let records: Vec<_> = events
        .iter()
        .filter_map(|event| match event {
            Event::CallFinished(record) => Some(record.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(records, run.calls);
    // The shop saw the lookup and the one refund, nothing else.
    let seen: Vec<&str> = shop
        .calls
        .lock()
        .unwrap()
        .iter()
        .map(|(tool, _)| *tool)
        .collect();
    assert_eq!(seen, ["lookup_account", "issue_refund"]);
}

/// A run's record, without the times it took.
fn timeless(run: &Run) -> impl PartialEq + std::fmt::Debug + '_ {
    let calls: Vec<_> = run
        .calls
        .iter()
        .map(|c| (c.step, &c.call, &c.outcome))
        .collect();
    (
        &run.exit,
        &run.transcript,
        calls,
        &run.answers,
        run.steps,
        run.usage,
    )
}

#[test]
fn a_streamed_and_a_plain_run_of_the_same_script_end_alike() {
    let plain = {
        let shop = Arc::new(Shop::default());
        let toolbox = shop_toolbox(&shop);
        let agent = Agent::new(&toolbox, script()).limits(Limits::new().tool_calls(3));
        block_on(agent.run("Refund cust_1."))
    };
    let shop = Arc::new(Shop::default());
    let toolbox = shop_toolbox(&shop);
    let agent = Agent::new(&toolbox, script()).limits(Limits::new().tool_calls(3));
    let Some(Event::Finished(streamed)) = collect(&agent).pop() else {
        panic!("no run")
    };
    assert_eq!(timeless(&plain), timeless(&streamed));
    // And with plans, and a final answer.
    let plan = "```plan\nmatch exec tool lookup_account {id = \"cust_1\"} { Ok(a) => a.email, Err(e) => e.message }\n```";
    let runs: Vec<Run> = [false, true]
        .map(|streamed| {
            let shop = Arc::new(Shop::default());
            let tools = shop_toolbox(&shop);
            let agent = Agent::new(
                &tools,
                ScriptedModel::new([plan, "Her email is ana@example.com."]),
            )
            .plans(true);
            match streamed {
                false => block_on(agent.run("Email?")),
                true => match block_on(agent.run_stream("Email?").collect::<Vec<_>>()).pop() {
                    Some(Event::Finished(run)) => run,
                    other => panic!("{other:?}"),
                },
            }
        })
        .into_iter()
        .collect();
    assert_eq!(timeless(&runs[0]), timeless(&runs[1]));
    assert_eq!(
        runs[0].exit,
        Exit::Answer("Her email is ana@example.com.".into())
    );
}

#[test]
fn a_plan_is_told_checked_then_finished() {
    let shop = Arc::new(Shop::default());
    let toolbox = shop_toolbox(&shop);
    let plan = "```plan\nmatch exec tool lookup_account {id = \"cust_1\"} { Ok(a) => a.email, Err(e) => e.message }\n```";
    let broken = "```plan\nexec tool lookup_account {id = \"cust_1\"}\n```";
    let agent = Agent::new(&toolbox, ScriptedModel::new([broken, plan, "Done."])).plans(true);
    let events = collect_any(&agent);
    let names: Vec<&str> = events
        .iter()
        .map(Event::name)
        .filter(|name| name.starts_with("plan"))
        .collect();
    // The broken one is refused unchecked-through; the other is checked,
    // then run.
    assert_eq!(names, ["plan_finished", "plan_checked", "plan_finished"]);
    let checked = events.iter().find_map(|event| match event {
        Event::PlanChecked { preview, .. } => Some(preview.clone()),
        _ => None,
    });
    assert_eq!(
        checked.unwrap().to_string(),
        "lookup_account {Read}: at most once\n"
    );
}

fn collect_any<M: Model>(agent: &Agent<M>) -> Vec<Event> {
    block_on(agent.run_stream("Go.").collect())
}

/// A model that streams its answer in three pieces, reasoning first.
struct Streaming;

impl Model for Streaming {
    fn complete(&self, _: Request) -> BoxFuture<'_, Result<Response, ModelError>> {
        unreachable!("a streamed run asks with `stream`")
    }

    fn stream(&self, _: Request) -> BoxStream<'_, Result<StreamEvent, ModelError>> {
        let response = Response::new("It is sunny.")
            .reasoning(vec![typed_tools::model::Reasoning::new("Look outside.")]);
        futures::stream::iter([
            Ok(StreamEvent::Reasoning("Look outside.".into())),
            Ok(StreamEvent::Text("It is ".into())),
            Ok(StreamEvent::Text("sunny.".into())),
            Ok(StreamEvent::Done(response)),
        ])
        .boxed()
    }
}

#[test]
fn a_streaming_models_text_and_reasoning_come_as_written() {
    let toolbox = Toolbox::builder().build().unwrap();
    let agent = Agent::new(&toolbox, Streaming);
    let events = collect_any(&agent);
    let pieces: Vec<String> = events
        .iter()
        .filter_map(|event| match event {
            Event::Text(piece) => Some(format!("text {piece}")),
            Event::Reasoning(piece) => Some(format!("reasoning {piece}")),
            _ => None,
        })
        .collect();
    assert_eq!(
        pieces,
        ["reasoning Look outside.", "text It is ", "text sunny."]
    );
    let Some(Event::Finished(run)) = events.last() else {
        panic!()
    };
    assert_eq!(run.answer(), Some("It is sunny."));
}

/// What the slow write did, in order.
#[derive(Default)]
struct Log(Mutex<Vec<&'static str>>);

impl Log {
    fn push(&self, what: &'static str) {
        self.0.lock().unwrap().push(what);
    }
}

/// Records that it is dropped.
struct Dropped<'a>(&'a Log);

impl Drop for Dropped<'_> {
    fn drop(&mut self) {
        self.0.push("dropped");
    }
}

/// Write a record; waits for the store, which never answers.
#[tool(effects = Write)]
async fn slow_write(#[state] log: &Log) {
    log.push("started");
    let _guard = Dropped(log);
    futures::future::pending::<()>().await;
    log.push("written");
}

#[test]
fn dropping_the_stream_in_the_middle_of_a_write_cancels_the_run() {
    let log = Arc::new(Log::default());
    let toolbox = Toolbox::builder()
        .tool(SlowWrite::new(Arc::clone(&log)))
        .build()
        .unwrap();
    let model = ScriptedModel::new([r#"[{"name": "slow_write", "arguments": {}}]"#, "Written."]);
    let agent = Agent::new(&toolbox, model);
    let mut stream = agent.run_stream("Write it.");
    let mut events = Vec::new();
    // Every event ready before the write waits.
    while let Some(Some(event)) = stream.next().now_or_never() {
        events.push(event);
    }
    let names: Vec<&str> = events.iter().map(Event::name).collect();
    assert_eq!(names, ["step", "text", "answered", "call_proposed"]);
    assert_eq!(*log.0.lock().unwrap(), ["started"]);
    drop(stream);
    // The write was cancelled where it waited, and went no further; no
    // record says it finished.
    assert_eq!(*log.0.lock().unwrap(), ["started", "dropped"]);
    // The agent is whole: another run goes on.
    let agent = Agent::new(&toolbox, ScriptedModel::new(["Nothing to do."]));
    assert_eq!(
        block_on(agent.run("Rest.")).answer(),
        Some("Nothing to do.")
    );
}
