//! Time per input byte of every surface a model's text reaches, at input
//! sizes from 1 KB to 10 MB: it should be flat (no surface does quadratic
//! work). Each input is the surface's worst shape known.
//!
//! `cargo bench --bench scaling` (criterion reports throughput; bytes per
//! second is the inverse of time per byte). `SCALING_MAX=1000000` stops at
//! 1 MB for a quicker run.
//!
//! The caps that keep a server safe (1 MiB of arguments, 1 MiB of plan
//! text, the plan's run limits) are raised here, so that the work past them
//! is measured too.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use futures::FutureExt;
use typed_tools::plan::{Interpreter, Limits, ParseOptions, Plan};
use typed_tools::recover::Policy;
use typed_tools::{tool, CallFormat, Toolbox};

/// Add up numbers.
#[tool(effects = Pure)]
fn sum(xs: Vec<i64>) -> i64 {
    xs.iter().fold(0i64, |a, b| a.wrapping_add(*b))
}

const SIZES: [usize; 5] = [1_000, 10_000, 100_000, 1_000_000, 10_000_000];

fn sizes() -> impl Iterator<Item = usize> {
    let max = std::env::var("SCALING_MAX")
        .ok()
        .and_then(|m| m.parse().ok())
        .unwrap_or(usize::MAX);
    SIZES.into_iter().filter(move |&n| n <= max)
}

/// `unit` repeated, with `open` and `close` around, to about `bytes` bytes.
fn repeated(open: &str, unit: &str, separator: &str, close: &str, bytes: usize) -> String {
    let count = (bytes / (unit.len() + separator.len())).max(1);
    let mut text = String::with_capacity(bytes + open.len() + close.len());
    text.push_str(open);
    for i in 0..count {
        if i > 0 {
            text.push_str(separator);
        }
        text.push_str(unit);
    }
    text.push_str(close);
    text
}

fn group<'c>(
    c: &'c mut Criterion,
    name: &str,
) -> criterion::BenchmarkGroup<'c, criterion::measurement::WallTime> {
    let mut group = c.benchmark_group(name);
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2));
    group
}

fn surfaces(c: &mut Criterion) {
    // Repair: a string of quotes (each one a repair), and records in single
    // quotes with trailing commas.
    let mut g = group(c, "scaling/repair_quotes");
    for n in sizes() {
        let text = "\"".repeat(n);
        g.throughput(Throughput::Bytes(text.len() as u64));
        g.bench_with_input(BenchmarkId::from_parameter(n), &text, |b, text| {
            b.iter(|| black_box(typed_tools::repair::repair(black_box(text)).is_ok()))
        });
    }
    g.finish();
    let mut g = group(c, "scaling/repair_records");
    for n in sizes() {
        let text = repeated("[", "{'id': 1, 'ok': True,}", ", ", "]", n);
        assert!(typed_tools::repair::repair(&text).is_ok(), "records repair");
        g.throughput(Throughput::Bytes(text.len() as u64));
        g.bench_with_input(BenchmarkId::from_parameter(n), &text, |b, text| {
            b.iter(|| black_box(typed_tools::repair::repair(black_box(text)).is_ok()))
        });
    }
    g.finish();

    // Call readers: many pythonic calls, and many Hermes tags.
    let toolbox = Toolbox::builder()
        .tool(Sum)
        .max_argument_bytes(usize::MAX)
        .build()
        .expect("one tool");
    let mut g = group(c, "scaling/read_pythonic");
    for n in sizes() {
        let text = repeated("[", "sum(xs=[1, 2, 3])", ", ", "]", n);
        assert!(
            toolbox.read_calls(CallFormat::Auto, &text).is_ok(),
            "pythonic calls read"
        );
        g.throughput(Throughput::Bytes(text.len() as u64));
        g.bench_with_input(BenchmarkId::from_parameter(n), &text, |b, text| {
            b.iter(|| {
                black_box(
                    toolbox
                        .read_calls(CallFormat::Auto, black_box(text))
                        .is_ok(),
                )
            })
        });
    }
    g.finish();
    let mut g = group(c, "scaling/read_hermes");
    for n in sizes() {
        let text = repeated(
            "",
            r#"<tool_call>{"name": "sum", "arguments": {"xs": [1, 2]}}</tool_call>"#,
            "\n",
            "",
            n,
        );
        assert!(
            toolbox.read_calls(CallFormat::Auto, &text).is_ok(),
            "tags read"
        );
        g.throughput(Throughput::Bytes(text.len() as u64));
        g.bench_with_input(BenchmarkId::from_parameter(n), &text, |b, text| {
            b.iter(|| {
                black_box(
                    toolbox
                        .read_calls(CallFormat::Auto, black_box(text))
                        .is_ok(),
                )
            })
        });
    }
    g.finish();

    // Dispatch: a long list, as it is and with every item a string that
    // recovery coerces.
    let recovering = Toolbox::builder()
        .tool(Sum)
        .policy(Policy::recover())
        .max_argument_bytes(usize::MAX)
        .build()
        .expect("one tool");
    let mut g = group(c, "scaling/dispatch_list");
    for n in sizes() {
        let text = repeated(r#"{"xs": ["#, "7", ", ", "]}", n);
        assert!(matches!(
            toolbox.call("sum", &text).now_or_never(),
            Some(Ok(_))
        ));
        g.throughput(Throughput::Bytes(text.len() as u64));
        g.bench_with_input(BenchmarkId::from_parameter(n), &text, |b, text| {
            b.iter(|| black_box(toolbox.call("sum", black_box(text)).now_or_never()))
        });
    }
    g.finish();
    let mut g = group(c, "scaling/dispatch_coerced_list");
    for n in sizes() {
        let text = repeated(r#"{"xs": ["#, r#""7""#, ", ", "]}", n);
        assert!(futures::executor::block_on(recovering.call("sum", &text)).is_ok());
        g.throughput(Throughput::Bytes(text.len() as u64));
        g.bench_with_input(BenchmarkId::from_parameter(n), &text, |b, text| {
            b.iter(|| {
                black_box(futures::executor::block_on(
                    recovering.call("sum", black_box(text)),
                ))
            })
        });
    }
    g.finish();

    // Plans: parse a record of many fields; parse, check and run a fold
    // over a long list literal.
    let options = ParseOptions::default().max_bytes(usize::MAX);
    let mut g = group(c, "scaling/plan_parse_record");
    for n in sizes() {
        let count = n / 12;
        let text = format!(
            "{{{}}}",
            (0..count)
                .map(|i| format!("f{i} = 1"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        g.throughput(Throughput::Bytes(text.len() as u64));
        g.bench_with_input(BenchmarkId::from_parameter(n), &text, |b, text| {
            b.iter(|| black_box(Plan::parse_with(black_box(text), &options).is_ok()))
        });
    }
    g.finish();
    let plans = Toolbox::builder().tool(Sum).build().expect("one tool");
    let interpreter = Interpreter::new(&plans).limits(
        Limits::new()
            .steps(u64::MAX)
            .list_length(usize::MAX)
            .value_bytes(usize::MAX)
            .memory(usize::MAX)
            .wall_time(Duration::from_secs(600)),
    );
    let mut g = group(c, "scaling/plan_parse_check_run_fold");
    for n in sizes() {
        let text = repeated("fold (fn acc, x => acc + x) 0 [", "7", ", ", "]", n);
        let plan = Plan::parse_with(&text, &options).expect("a plan");
        let run = futures::executor::block_on(interpreter.run(&plan)).expect("it checks");
        assert!(run.outcome.is_ok(), "{:?}", run.outcome);
        g.throughput(Throughput::Bytes(text.len() as u64));
        g.bench_with_input(BenchmarkId::from_parameter(n), &text, |b, text| {
            b.iter(|| {
                let plan = Plan::parse_with(black_box(text), &options).expect("a plan");
                black_box(futures::executor::block_on(interpreter.run(&plan)).is_ok())
            })
        });
    }
    g.finish();
}

criterion_group!(benches, surfaces);
criterion_main!(benches);
