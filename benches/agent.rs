//! The agent loop's overhead, measured in the same run as the calls it
//! makes, made directly.
//!
//! `cargo bench --bench agent`. Each pair does the same tool calls: four
//! lookups of a sync `Read` tool. `direct` makes them through
//! `Toolbox::call`, one after the other; `agent_native` has an agent make
//! them, a step each, from a `ScriptedModel` that answers with native calls
//! (as a provider's client does), then a fifth step with the final answer;
//! `agent_text` does the same from answers written as text (the compact
//! catalog in the prompt, calls read back with `CallFormat::Auto`). The
//! agent's side thus includes, per step: building the request (the whole
//! conversation so far, and the catalog), the scripted model's answer (it
//! keeps a copy of each request), reading the calls, the limits, the
//! records and the results handed back. The model is set up outside the
//! measurement. `agent_native_streamed` and `agent_text_streamed` are the
//! same runs through `Agent::run_stream`, every event collected: the
//! streaming run's cost over the plain run's, per step (the events made and
//! queued, the model asked through `Model::stream`, approvals observed).

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use futures::executor::block_on;
use futures::StreamExt;
use typed_tools::agent::{Agent, Event, Exit};
use typed_tools::model::{Response, ScriptedModel};
use typed_tools::{tool, CatalogFormat, ToolCall, Toolbox};

/// Look up a customer's email by id.
#[tool(effects = Read)]
fn lookup_email(id: u32) -> String {
    format!("customer{id}@example.com")
}

const STEPS: u32 = 4;

fn arguments(id: u32) -> String {
    format!(r#"{{"id": {id}}}"#)
}

/// Answers with one native call a step, then the final answer.
fn native_model() -> ScriptedModel {
    let steps = (1..=STEPS).map(|id| {
        Response::new("").calls(vec![ToolCall {
            id: Some(format!("call_{id}")),
            name: "lookup_email".into(),
            arguments: arguments(id),
        }])
    });
    ScriptedModel::new(steps)
        .then("Done.")
        .native(CatalogFormat::OpenAiChat)
}

/// Answers with one call written as text a step, then the final answer.
fn text_model() -> ScriptedModel {
    let steps = (1..=STEPS).map(|id| {
        format!(
            r#"[{{"name": "lookup_email", "arguments": {}}}]"#,
            arguments(id)
        )
    });
    ScriptedModel::new(steps).then("Done.")
}

fn agent(c: &mut Criterion) {
    let toolbox = Toolbox::builder().tool(LookupEmail).build().unwrap();
    // The same calls both ways, or the comparison means nothing.
    for model in [native_model(), text_model()] {
        let run = block_on(Agent::new(&toolbox, model).run("Look them up."));
        assert_eq!(run.exit, Exit::Answer("Done.".into()));
        assert_eq!(run.tool_calls(), STEPS as usize);
    }

    let mut group = c.benchmark_group("four_calls");
    group.bench_function("direct", |b| {
        b.iter(|| {
            block_on(async {
                for id in 1..=STEPS {
                    let args = arguments(id);
                    let output = toolbox.call(black_box("lookup_email"), &args).await;
                    black_box(output.unwrap());
                }
            })
        })
    });
    group.bench_function("agent_native", |b| {
        b.iter_batched(
            || Agent::new(&toolbox, native_model()),
            |agent| black_box(block_on(agent.run("Look them up."))),
            BatchSize::SmallInput,
        )
    });
    group.bench_function("agent_text", |b| {
        b.iter_batched(
            || Agent::new(&toolbox, text_model()),
            |agent| black_box(block_on(agent.run("Look them up."))),
            BatchSize::SmallInput,
        )
    });
    for (name, model) in [
        (
            "agent_native_streamed",
            native_model as fn() -> ScriptedModel,
        ),
        ("agent_text_streamed", text_model),
    ] {
        group.bench_function(name, |b| {
            b.iter_batched(
                || Agent::new(&toolbox, model()),
                |agent| {
                    let events: Vec<Event> = block_on(agent.run_stream("Look them up.").collect());
                    black_box(events)
                },
                BatchSize::SmallInput,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, agent);
criterion_main!(benches);
