//! What reading a typed agent output costs, against deserializing the same
//! JSON by hand with serde, in the same run.
//!
//! `cargo bench --bench typed_output`. The output is a `RestockReport` of
//! 20 items. Each arm is a whole one-step run from a `ScriptedModel` (set up
//! outside the measurement):
//!
//! - `serde_from_str`: `serde_json::from_str::<RestockReport>` on the
//!   report's JSON, the baseline: what a user who trusts the model writes;
//! - `text_answer`: an agent run whose one answer is the same JSON as text,
//!   for text: the agent's own cost for a step (the request, the catalog,
//!   the records), with no output read;
//! - `output_tool`: the same run asked for a `RestockReport`, the answer a
//!   call of `final_result` (native, as a provider's client gives it): the
//!   arguments read, held to the schema with `Policy::recover`,
//!   deserialized, validated;
//! - `output_tool_coerced`: the same with every item's id written as a
//!   string, so that recovery coerces 20 values and records each;
//! - `prompted`: the report found in the answer's text, fenced amid prose.
//!
//! The typed output's own cost is `output_tool` minus `text_answer`; the
//! ratio to the baseline is that difference over `serde_from_str`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use futures::executor::block_on;
use schemars::JsonSchema;
use serde::Deserialize;
use typed_tools::agent::{Agent, OutputMode};
use typed_tools::model::{Response, ScriptedModel};
use typed_tools::{tool, CatalogFormat, ToolCall, Toolbox};

/// What to restock, and what it costs.
#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)] // Read, then dropped.
struct RestockReport {
    /// The items to order.
    items: Vec<Item>,
    /// What they cost in all, in dollars.
    total_cost: f64,
    /// Who to order from.
    supplier: String,
}

/// One item to order.
#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Item {
    /// Its id.
    id: u32,
    /// How many.
    quantity: u32,
}

/// How many of an item are on the shelf.
#[tool(effects = Read)]
fn stock(item: u32) -> u32 {
    item % 3
}

fn report(quoted_ids: bool) -> String {
    let items: Vec<String> = (1..=20)
        .map(|id| match quoted_ids {
            true => format!(r#"{{"id": "{id}", "quantity": {}}}"#, id % 4 + 1),
            false => format!(r#"{{"id": {id}, "quantity": {}}}"#, id % 4 + 1),
        })
        .collect();
    format!(
        r#"{{"items": [{}], "total_cost": 612.5, "supplier": "Acme Wholesale"}}"#,
        items.join(", ")
    )
}

fn output_call(arguments: String) -> ScriptedModel {
    ScriptedModel::new([Response::new("").calls(vec![ToolCall {
        id: Some("call_1".into()),
        name: "final_result".into(),
        arguments,
    }])])
    .native(CatalogFormat::OpenAiChat)
}

fn bench(c: &mut Criterion) {
    let toolbox = Toolbox::builder().tool(Stock).build().unwrap();
    let json = report(false);
    let mut group = c.benchmark_group("typed_output");

    group.bench_function("serde_from_str", |b| {
        b.iter(|| serde_json::from_str::<RestockReport>(black_box(&json)).unwrap())
    });

    group.bench_function("text_answer", |b| {
        b.iter_batched(
            || {
                let model = ScriptedModel::new([json.clone()]).native(CatalogFormat::OpenAiChat);
                Agent::new(&toolbox, model)
            },
            |agent| {
                let run = block_on(agent.run("What should we restock?"));
                assert!(run.exit.is_answer());
                run
            },
            BatchSize::SmallInput,
        )
    });

    for (name, arguments) in [
        ("output_tool", report(false)),
        ("output_tool_coerced", report(true)),
    ] {
        group.bench_function(name, |b| {
            b.iter_batched(
                || Agent::new(&toolbox, output_call(arguments.clone())).output::<RestockReport>(),
                |agent| {
                    let run = block_on(agent.run("What should we restock?"));
                    assert!(run.output.is_some(), "{:?}", run.exit);
                    run
                },
                BatchSize::SmallInput,
            )
        });
    }

    let prose = format!("Here is the report:\n```json\n{json}\n```\nOrder before Friday.");
    group.bench_function("prompted", |b| {
        b.iter_batched(
            || {
                let model = ScriptedModel::new([prose.clone()]);
                Agent::new(&toolbox, model)
                    .output::<RestockReport>()
                    .output_mode(OutputMode::Prompted)
            },
            |agent| {
                let run = block_on(agent.run("What should we restock?"));
                assert!(run.output.is_some(), "{:?}", run.exit);
                run
            },
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
