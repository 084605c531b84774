//! The interpreter's overhead: a plan of 100 execs of a trivial tool against
//! the same 100 calls made directly through the toolbox in async Rust, in the
//! same run. `cargo bench --bench plan`.
//!
//! The plan is `traverse` over 100 elements (plans nest at most 64 deep, so a
//! chain of 100 nested matches is not a plan). Both arms dispatch through
//! `Toolbox::call`; the difference is the interpreter: evaluating the list,
//! turning values into argument JSON and outputs back into values, the trace.
//! The third arm runs a plan checked once (`Interpreter::prepare`), so the
//! type check is out of each run.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use futures::executor::block_on;
use typed_tools::plan::{Interpreter, Plan};
use typed_tools::Toolbox;

#[path = "support/plan_workload.rs"]
mod workload;

use workload::{direct_calls, plan_text, Inc};

fn interpreter(c: &mut Criterion) {
    let toolbox = Toolbox::builder().tool(Inc).build().unwrap();
    let plan = Plan::parse(&plan_text(100)).unwrap();
    let interpreter = Interpreter::new(&toolbox);
    // Both arms do the same calls with the same results.
    let run = block_on(interpreter.run(&plan)).unwrap();
    assert_eq!(run.trace.len(), 100);
    let direct = || direct_calls(&toolbox, 100);
    assert_eq!(block_on(direct()).len(), 100);

    let mut group = c.benchmark_group("100_execs");
    group.bench_function("direct_toolbox_calls", |b| {
        b.iter(|| black_box(block_on(direct())))
    });
    group.bench_function("plan_interpreter", |b| {
        b.iter(|| black_box(block_on(interpreter.run(black_box(&plan))).unwrap()))
    });
    let prepared = interpreter.prepare(&plan).unwrap();
    assert_eq!(block_on(prepared.run()).outcome, run.outcome);
    group.bench_function("plan_prepared", |b| {
        b.iter(|| black_box(block_on(black_box(&prepared).run())))
    });
    group.finish();
}

criterion_group!(benches, interpreter);
criterion_main!(benches);
