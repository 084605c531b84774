//! Parse + check of a model's plan against a 50-tool catalog, at 50 and
//! 1,000 nodes: what the fix-and-resubmit loop pays per answer before
//! anything runs. `cargo bench --bench plan_check`.
//!
//! The baseline, in the same run, is `serde_json::from_str` of the same
//! plan's JSON form into a `serde_json::Value`: reading the same amount of
//! structure with no checking at all. Each size reports parse alone, parse +
//! check (`Preview::check`: depth, tools, effects, counts, types), and the
//! baseline; growth from 50 to 1,000 nodes should be linear (20x the nodes).
//!
//! Measured (medians, `-- --warm-up-time 1 --measurement-time 3`, 2 cores
//! at a load average of 10): 61 nodes, parse 22.9 µs, parse + check 45.7
//! µs, baseline 46.8 µs (0.98x); 1,009 nodes, parse 406 µs, parse + check
//! 841 µs, baseline 1,072 µs (0.78x). 16.5x the nodes cost 18.4x the time.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use typed_tools::effect::EffectSet;
use typed_tools::plan::{json, Plan, Preview};

#[path = "support/catalog50.rs"]
mod catalog50;

fn parse_and_check(c: &mut Criterion) {
    let toolbox = catalog50::toolbox(50);
    assert_eq!(toolbox.names().count(), 50);
    let mut group = c.benchmark_group("plan_check");
    for nodes in [50, 1_000] {
        let text = catalog50::plan_text(nodes);
        let plan = Plan::parse(&text).unwrap();
        let counted = catalog50::count_nodes(&plan);
        let json_text = json::to_value(&plan).to_string();
        Preview::check(&plan, &toolbox, EffectSet::ALL).unwrap();
        eprintln!(
            "{nodes}: {counted} nodes, {} bytes of text, {} bytes of JSON",
            text.len(),
            json_text.len()
        );
        group.bench_with_input(BenchmarkId::new("parse", counted), &text, |b, text| {
            b.iter(|| Plan::parse(black_box(text)).unwrap())
        });
        group.bench_with_input(
            BenchmarkId::new("parse_and_check", counted),
            &text,
            |b, text| {
                b.iter(|| {
                    let plan = Plan::parse(black_box(text)).unwrap();
                    Preview::check(&plan, &toolbox, EffectSet::ALL).unwrap()
                })
            },
        );
        group.bench_with_input(
            BenchmarkId::new("baseline_serde_json_value", counted),
            &json_text,
            |b, json_text| {
                b.iter(|| serde_json::from_str::<serde_json::Value>(black_box(json_text)).unwrap())
            },
        );
    }
    group.finish();
}

criterion_group!(benches, parse_and_check);
criterion_main!(benches);
