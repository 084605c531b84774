//! What reading a typed agent output costs, against deserializing the same
//! JSON by hand with serde, in the same run.
//!
//! `cargo bench --bench typed_output`. The output is a `RestockReport` of
//! 20 items. Each agent arm is a whole one-step run of one agent, built
//! outside the measurement, whose model gives the same answer each time:
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
//! - `native`: the report as the answer's text, as a provider's structured
//!   output gives it;
//! - `prompted`: the report found in the answer's text, fenced amid prose;
//! - `output_tool_fresh_agent`: `output_tool` with a new agent each run,
//!   so that the one-time cost (the schema compiled on the first call) is
//!   in.
//!
//! The typed output's own cost is `output_tool` minus `text_answer`; the
//! ratio to the baseline is that difference over `serde_from_str`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use futures::executor::block_on;
use futures::future::BoxFuture;
use futures::FutureExt;
use schemars::JsonSchema;
use serde::Deserialize;
use typed_tools::agent::{Agent, OutputMode};
use typed_tools::model::{Model, ModelError, Request, Response};
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

/// A model that gives the same answer to every request, so that one agent
/// runs again and again and its one-time costs (the output tool's schema
/// compiled on its first call) stay out of the per-run figure.
struct Repeat {
    answer: Response,
    format: Option<CatalogFormat>,
}

impl Repeat {
    fn text(text: String) -> Repeat {
        Repeat {
            answer: Response::new(text),
            format: None,
        }
    }

    fn native(answer: Response) -> Repeat {
        Repeat {
            answer,
            format: Some(CatalogFormat::OpenAiChat),
        }
    }

    fn output_call(arguments: String) -> Repeat {
        Repeat::native(Response::new("").calls(vec![ToolCall {
            id: Some("call_1".into()),
            name: "final_result".into(),
            arguments,
        }]))
    }
}

impl Model for Repeat {
    fn complete(&self, _: Request) -> BoxFuture<'_, Result<Response, ModelError>> {
        futures::future::ready(Ok(self.answer.clone())).boxed()
    }

    fn tool_format(&self) -> Option<CatalogFormat> {
        self.format
    }
}

fn bench(c: &mut Criterion) {
    let toolbox = Toolbox::builder().tool(Stock).build().unwrap();
    let json = report(false);
    let prose = format!("Here is the report:\n```json\n{json}\n```\nOrder before Friday.");
    let mut group = c.benchmark_group("typed_output");

    group.bench_function("serde_from_str", |b| {
        b.iter(|| serde_json::from_str::<RestockReport>(black_box(&json)).unwrap())
    });

    let agent = Agent::new(&toolbox, Repeat::native(Response::new(json.clone())));
    group.bench_function("text_answer", |b| {
        b.iter(|| {
            let run = block_on(agent.run("What should we restock?"));
            assert!(run.exit.is_answer());
            run
        })
    });

    let runs = [
        (
            "output_tool",
            OutputMode::Tool,
            Repeat::output_call(report(false)),
        ),
        (
            "output_tool_coerced",
            OutputMode::Tool,
            Repeat::output_call(report(true)),
        ),
        (
            "native",
            OutputMode::Native,
            Repeat::native(Response::new(json.clone())),
        ),
        ("prompted", OutputMode::Prompted, Repeat::text(prose)),
    ];
    for (name, mode, model) in runs {
        let agent = Agent::new(&toolbox, model)
            .output::<RestockReport>()
            .output_mode(mode);
        group.bench_function(name, |b| {
            b.iter(|| {
                let run = block_on(agent.run("What should we restock?"));
                assert!(run.output.is_some(), "{:?}", run.exit);
                run
            })
        });
    }

    // A new agent each time: the first run's one-time costs included.
    group.bench_function("output_tool_fresh_agent", |b| {
        b.iter_batched(
            || Agent::new(&toolbox, Repeat::output_call(report(false))).output::<RestockReport>(),
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
