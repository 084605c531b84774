//! Dispatch overhead against a hand-written serde baseline, measured in the same run.
//!
//! `cargo bench --bench dispatch`. Each pair does the same work: argument text
//! in, output text out. The baseline is what a careful user writes by hand:
//! `serde_json::from_str` into an args struct, call the fn, `serde_json::to_string`.
//! The toolbox does that plus the name lookup, the effect gate, panic capture and
//! a boxed future. Its tools are sync, so the future is ready on the first poll:
//! `now_or_never` polls it once, as an executor would.
//!
//! Each call is a `tool_call` span (`tracing`): `toolbox_call` runs with no
//! subscriber installed, as most programs do; `toolbox_call_recorded`, the
//! last arm of all (a subscriber once installed leaves tracing's level
//! check raised), runs the same calls with a subscriber that wants every
//! span and counts them.
//!
//! Also: the catalog of 100 tools in each JSON format, first render (fresh
//! toolbox) and repeated (cached).

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use futures::FutureExt;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use typed_tools::effect::EffectSet;
use typed_tools::{tool, CatalogFormat, DynamicTool, ToolSpec, Toolbox};

#[path = "support/spans.rs"]
mod spans;

/// Add two numbers.
#[tool(effects = Pure)]
fn add(a: i64, b: i64) -> i64 {
    a.wrapping_add(b)
}

/// How urgent a ticket is.
#[derive(Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Priority {
    /// Whenever.
    Low,
    /// Soon.
    Normal,
    /// Now.
    High,
}

/// What `open_ticket` returns.
#[derive(Serialize, JsonSchema)]
struct Ticket {
    id: u64,
    title_len: usize,
    tags: usize,
    priority: Priority,
}

/// Open a support ticket.
#[tool(effects = Write)]
fn open_ticket(
    title: String,
    customer_id: i64,
    assignee: Option<String>,
    tags: Vec<String>,
    priority: Priority,
) -> Ticket {
    Ticket {
        id: customer_id as u64 + assignee.map_or(0, |a| a.len() as u64),
        title_len: title.len(),
        tags: tags.len(),
        priority,
    }
}

#[derive(Deserialize)]
struct AddArgs {
    a: i64,
    b: i64,
}

#[derive(Deserialize)]
struct OpenTicketArgs {
    title: String,
    customer_id: i64,
    assignee: Option<String>,
    tags: Vec<String>,
    priority: Priority,
}

fn baseline_add(args: &str) -> String {
    let args: AddArgs = serde_json::from_str(args).unwrap();
    serde_json::to_string(&add(args.a, args.b)).unwrap()
}

fn baseline_open_ticket(args: &str) -> String {
    let a: OpenTicketArgs = serde_json::from_str(args).unwrap();
    serde_json::to_string(&open_ticket(
        a.title,
        a.customer_id,
        a.assignee,
        a.tags,
        a.priority,
    ))
    .unwrap()
}

const ADD_ARGS: &str = r#"{"a": 40, "b": 2}"#;
const TICKET_ARGS: &str = r#"{"title": "Refund not received", "customer_id": 12345, "assignee": "ada", "tags": ["billing", "refund", "urgent"], "priority": "high"}"#;

fn dispatch(c: &mut Criterion) {
    let toolbox = Toolbox::builder()
        .tool(Add)
        .tool(OpenTicket)
        .build()
        .unwrap();
    // Same output both ways, or the comparison means nothing.
    let call = |name: &str, args: &str| {
        toolbox
            .call(name, args)
            .now_or_never()
            .unwrap()
            .unwrap()
            .into_json()
    };
    assert_eq!(call("add", ADD_ARGS), baseline_add(ADD_ARGS));
    assert_eq!(
        call("open_ticket", TICKET_ARGS),
        baseline_open_ticket(TICKET_ARGS)
    );

    let mut group = c.benchmark_group("five_fields");
    group.bench_function("baseline_serde", |b| {
        b.iter(|| baseline_open_ticket(black_box(TICKET_ARGS)))
    });
    group.bench_function("toolbox_call", |b| {
        b.iter(|| call(black_box("open_ticket"), black_box(TICKET_ARGS)))
    });
    group.finish();

    let mut group = c.benchmark_group("two_params");
    group.bench_function("baseline_serde", |b| {
        b.iter(|| baseline_add(black_box(ADD_ARGS)))
    });
    group.bench_function("toolbox_call", |b| {
        b.iter(|| call(black_box("add"), black_box(ADD_ARGS)))
    });
    let subscriber = spans::Counting::default();
    group.bench_function("toolbox_call_recorded", |b| {
        tracing::subscriber::with_default(subscriber.clone(), || {
            b.iter(|| call(black_box("add"), black_box(ADD_ARGS)))
        })
    });
    assert!(subscriber.spans() > 0, "the spans were recorded");
    group.finish();
}

/// 100 tools with the five-field schema and different names.
fn hundred_tools() -> Toolbox {
    let spec = ToolSpec::of::<OpenTicket>();
    (0..100)
        .fold(Toolbox::builder(), |builder, i| {
            builder.dynamic(
                DynamicTool::new(format!("open_ticket_{i}"))
                    .description(spec.description())
                    .input_schema(spec.input_schema().clone())
                    .output_schema(spec.output_schema().clone())
                    .effects(EffectSet::WRITE),
            )
        })
        .build()
        .unwrap()
}

fn catalog(c: &mut Criterion) {
    let mut group = c.benchmark_group("catalog_100_tools");
    for format in [
        CatalogFormat::OpenAiChat,
        CatalogFormat::OpenAiChatStrict,
        CatalogFormat::Mcp,
        CatalogFormat::Gemini,
        CatalogFormat::Text,
    ] {
        group.bench_function(format!("{format:?}/first"), |b| {
            // `_ref`: the fresh toolbox is dropped outside the measurement.
            b.iter_batched_ref(
                hundred_tools,
                |toolbox| toolbox.catalog(format),
                BatchSize::LargeInput,
            )
        });
        let toolbox = hundred_tools();
        toolbox.catalog(format);
        group.bench_function(format!("{format:?}/repeated"), |b| {
            b.iter(|| toolbox.catalog(black_box(format)))
        });
    }
    group.finish();
}

criterion_group!(benches, catalog, dispatch);
criterion_main!(benches);
