//! The plan interpreter's overhead as instruction counts: the workload of
//! `benches/plan.rs` (a plan of 100 `exec`s of a trivial tool, against the
//! same 100 calls made directly), each arm in its own never-inlined function,
//! so that callgrind's inclusive cost of each, divided by the runs, is a
//! number the machine's load does not change.
//!
//! ```text
//! cargo build --release --example plan_overhead
//! valgrind --tool=callgrind --callgrind-out-file=plan.out \
//!     target/release/examples/plan_overhead 1000
//! callgrind_annotate --inclusive=yes plan.out | grep -E 'plan_overhead::(direct|interpreted|prepared)'
//! ```

use std::hint::black_box;

use futures::executor::block_on;
use typed_tools::plan::{Interpreter, Plan};
use typed_tools::Toolbox;

#[path = "../benches/support/plan_workload.rs"]
mod workload;

use workload::{direct_calls, plan_text, Inc};

/// `runs` times, the 100 calls made directly.
#[inline(never)]
fn direct(toolbox: &Toolbox, runs: usize) {
    for _ in 0..runs {
        let outputs = block_on(direct_calls(toolbox, 100));
        black_box(outputs);
    }
}

/// `runs` times, the plan.
#[inline(never)]
fn interpreted(interpreter: &Interpreter<'_>, plan: &Plan, runs: usize) {
    for _ in 0..runs {
        let _ = black_box(block_on(interpreter.run(black_box(plan))));
    }
}

/// `runs` times, the plan checked once before ([`Interpreter::prepare`]).
#[inline(never)]
fn prepared(interpreter: &Interpreter<'_>, plan: &Plan, runs: usize) {
    let prepared = interpreter.prepare(plan).expect("the plan checks");
    for _ in 0..runs {
        let _ = black_box(block_on(black_box(&prepared).run()));
    }
}

fn main() {
    let runs = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(1000);
    let toolbox = Toolbox::builder()
        .tool(Inc)
        .build()
        .expect("one well-named tool");
    let plan = Plan::parse(&plan_text(100)).expect("the plan parses");
    let interpreter = Interpreter::new(&toolbox);
    direct(&toolbox, runs);
    interpreted(&interpreter, &plan, runs);
    prepared(&interpreter, &plan, runs);
    println!("{runs} runs of each arm");
}
