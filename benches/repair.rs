//! JSON repair throughput, next to two peers in the same run.
//!
//! `cargo bench --bench repair -- --warm-up-time 1 --measurement-time 3`
//!
//! Three inputs from `corpus/repair.rs`, each repaired by `typed_tools::repair`,
//! `jsonrepair_rs::jsonrepair` and `llm_json::repair_json`, reported in bytes
//! of input per second:
//! - `small`: ten small malformed calls (~130 B each), all in one iteration;
//! - `records`: ~100 KB of records with single quotes, unquoted keys, Python
//!   literals, comments and trailing commas, in a fence, cut off at the end;
//! - `file`: a ~100 KB file's content with raw newlines, tabs and unescaped
//!   quotes, in a fence.
//!
//! Each repairer returns an owned `String` (ours a `Cow`, owned for all of
//! these inputs since each needs repair). Which outputs are *correct* is
//! `examples/repair_compare.rs`: on `file` both peers return an error, so
//! their time there is the time to give up.

#[path = "corpus/repair.rs"]
mod corpus;

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

fn ours(text: &str) -> usize {
    typed_tools::repair::repair(text).map_or(0, |r| r.json().len())
}

fn jsonrepair_rs(text: &str) -> usize {
    jsonrepair_rs::jsonrepair(text).map_or(0, |json| json.len())
}

fn llm_json(text: &str) -> usize {
    llm_json::repair_json(text, &llm_json::RepairOptions::default()).map_or(0, |json| json.len())
}

/// A repairer under test: the length of its output, 0 on error.
type Repairer = fn(&str) -> usize;

const REPAIRERS: [(&str, Repairer); 3] = [
    ("typed_tools", ours),
    ("jsonrepair_rs", jsonrepair_rs),
    ("llm_json", llm_json),
];

fn bench_inputs(c: &mut Criterion, group: &str, inputs: &[&str]) {
    let bytes: usize = inputs.iter().map(|input| input.len()).sum();
    let mut group = c.benchmark_group(format!("repair/{group}"));
    group.throughput(Throughput::Bytes(bytes as u64));
    for (name, repairer) in REPAIRERS {
        group.bench_function(name, |b| {
            b.iter(|| {
                let mut total = 0;
                for input in inputs {
                    total += repairer(black_box(input));
                }
                black_box(total)
            });
        });
    }
    group.finish();
}

fn repair(c: &mut Criterion) {
    bench_inputs(c, "small", &corpus::small_calls());
    let (records, _) = corpus::large_records(100_000);
    bench_inputs(c, "records", &[&records]);
    let (file, _) = corpus::large_file(100_000);
    bench_inputs(c, "file", &[&file]);
}

criterion_group!(benches, repair);
criterion_main!(benches);
