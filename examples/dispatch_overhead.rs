//! Dispatch overhead as instruction counts: the smallest tool of
//! `benches/dispatch.rs` (`add(i64, i64)`) called through a toolbox, against
//! the same work written by hand with serde (argument text in, output text
//! out), each arm in its own never-inlined function, so that callgrind's
//! inclusive cost of each, divided by the calls, is a number the machine's
//! load does not change. The third arm makes the same calls with a
//! `tracing` subscriber that records every span (`toolbox_traced`); the
//! second has none installed, the usual case.
//!
//! ```text
//! cargo build --release --example dispatch_overhead
//! valgrind --tool=callgrind --callgrind-out-file=dispatch.out \
//!     target/release/examples/dispatch_overhead 100000
//! callgrind_annotate --inclusive=yes dispatch.out | grep -E 'dispatch_overhead::(baseline|toolbox)'
//! ```

use std::hint::black_box;

use futures::FutureExt;
use serde::Deserialize;
use typed_tools::{tool, Toolbox};

#[path = "../benches/support/spans.rs"]
mod spans;

/// Add two numbers.
#[tool(effects = Pure)]
fn add(a: i64, b: i64) -> i64 {
    a.wrapping_add(b)
}

/// What a careful user writes by hand: parse, call, serialize.
fn baseline_add(args: &str) -> String {
    #[derive(Deserialize)]
    struct Args {
        a: i64,
        b: i64,
    }
    let args: Args = serde_json::from_str(args).expect("the arguments fit");
    serde_json::to_string(&add(args.a, args.b)).expect("an integer serializes")
}

const ARGS: &str = r#"{"a": 2, "b": 3}"#;

/// `calls` times, the hand-written baseline.
#[inline(never)]
fn baseline(calls: usize) {
    for _ in 0..calls {
        black_box(baseline_add(black_box(ARGS)));
    }
}

/// `calls` times, the same call through the toolbox (a sync tool: ready on
/// the first poll, as an executor would find it).
#[inline(never)]
fn toolbox(toolbox: &Toolbox, calls: usize) {
    for _ in 0..calls {
        let output = toolbox
            .call(black_box("add"), black_box(ARGS))
            .now_or_never()
            .expect("a sync tool is ready at once");
        let _ = black_box(output);
    }
}

/// `calls` times, the same call through the toolbox, each in a recorded
/// `tool_call` span.
#[inline(never)]
fn toolbox_traced(tools: &Toolbox, calls: usize) {
    let subscriber = spans::Counting::default();
    tracing::subscriber::with_default(subscriber.clone(), || {
        for _ in 0..calls {
            let output = tools
                .call(black_box("add"), black_box(ARGS))
                .now_or_never()
                .expect("a sync tool is ready at once");
            let _ = black_box(output);
        }
    });
    assert_eq!(subscriber.spans(), calls as u64, "a span a call");
}

fn main() {
    let calls = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(100_000);
    let tools = Toolbox::builder()
        .tool(Add)
        .build()
        .expect("one well-named tool");
    baseline(calls);
    // Before any subscriber exists, as in a program that installs none.
    toolbox(&tools, calls);
    toolbox_traced(&tools, calls);
    println!("{calls} calls of each arm");
}
