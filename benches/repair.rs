//! JSON repair throughput, next to two peers in the same run.
//!
//! `cargo bench --bench repair -- --warm-up-time 1 --measurement-time 3`
//!
//! Six inputs from `corpus/repair.rs`, each repaired by `typed_tools::repair`,
//! `jsonrepair_rs::jsonrepair` and `llm_json::repair_json`, reported in bytes
//! of input per second:
//! - `small`: ten small malformed calls (~130 B each), all in one iteration;
//! - `records`: ~100 KB of records with single quotes, unquoted keys, Python
//!   literals, comments and trailing commas, in a fence, cut off at the end;
//! - `file`: a ~100 KB file's content with raw newlines, tabs and unescaped
//!   quotes, in a fence;
//! - `html`: ~100 KB of HTML in a single-quoted string, each of its double
//!   quotes one that repair must judge (text, or the string's end?);
//! - `document`: ~100 KB of real JSON documents of other projects, with a
//!   key in single quotes and a trailing comma in each, cut off before the
//!   last two closing brackets;
//! - `valid`: the same documents undamaged (repair's check that valid JSON
//!   needs none).
//!
//! Each repairer returns an owned `String` (ours a `Cow`, borrowed for
//! `valid`). Before measuring, each output is checked against the value the
//! input means (numbers compared by value): a peer that returns an error or
//! another value is still measured, under its name with `(error)` or
//! `(wrong)` after it, so that a reader knows which numbers compare equal
//! work (on `file` both peers return an error, so their time there is the
//! time to give up). Ours must be right on every input. The per-case
//! verdicts on a larger corpus are `examples/repair_compare.rs`.

#[path = "corpus/repair.rs"]
mod corpus;

#[path = "../tests/repair_corpus/cases.rs"]
mod cases;

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use serde_json::Value;

/// A repairer under test: its output, or an error.
type Repairer = fn(&str) -> Result<String, String>;

fn ours(text: &str) -> Result<String, String> {
    typed_tools::repair::repair(text)
        .map(|r| r.into_json().into_owned())
        .map_err(|e| e.to_string())
}

fn jsonrepair_rs(text: &str) -> Result<String, String> {
    jsonrepair_rs::jsonrepair(text).map_err(|e| e.to_string())
}

fn llm_json(text: &str) -> Result<String, String> {
    llm_json::repair_json(text, &llm_json::RepairOptions::default()).map_err(|e| e.to_string())
}

/// The length of a repairer's output, 0 on error: what each iteration
/// keeps, so that no work is optimised away.
fn timed_ours(text: &str) -> usize {
    typed_tools::repair::repair(text).map_or(0, |r| r.json().len())
}

fn timed_jsonrepair_rs(text: &str) -> usize {
    jsonrepair_rs::jsonrepair(text).map_or(0, |json| json.len())
}

fn timed_llm_json(text: &str) -> usize {
    llm_json::repair_json(text, &llm_json::RepairOptions::default()).map_or(0, |json| json.len())
}

/// A repairer as timed: the length of its output, 0 on error.
type Timed = fn(&str) -> usize;

const REPAIRERS: [(&str, Repairer, Timed); 3] = [
    ("typed_tools", ours, timed_ours),
    ("jsonrepair_rs", jsonrepair_rs, timed_jsonrepair_rs),
    ("llm_json", llm_json, timed_llm_json),
];

/// What a repairer made of the inputs: `None` if every output means the
/// intended value, else why not (for the first input it got wrong).
fn verdict(repairer: Repairer, inputs: &[(&str, &str)]) -> Option<String> {
    inputs.iter().find_map(|(input, intended)| {
        let intended: Value = serde_json::from_str(intended).expect("intended JSON");
        match repairer(input) {
            Err(error) => Some(format!("error ({error})")),
            Ok(json) => match serde_json::from_str::<Value>(&json) {
                Ok(value) if cases::same(&value, &intended) => None,
                Ok(_) => Some("wrong (another value)".to_owned()),
                Err(_) => Some("wrong (not JSON)".to_owned()),
            },
        }
    })
}

fn bench_inputs(c: &mut Criterion, name_of_group: &str, inputs: &[(&str, &str)]) {
    let bytes: usize = inputs.iter().map(|(input, _)| input.len()).sum();
    let mut group = c.benchmark_group(format!("repair/{name_of_group}"));
    group.throughput(Throughput::Bytes(bytes as u64));
    for (name, repairer, timed) in REPAIRERS {
        let id = match verdict(repairer, inputs) {
            None => name.to_owned(),
            Some(why) => {
                assert!(
                    name != "typed_tools",
                    "repair/{name_of_group}: ours is {why}"
                );
                eprintln!("repair/{name_of_group}: {name} does not give the intended value: {why}");
                let short = why.split(' ').next().unwrap_or_default();
                format!("{name} ({short})")
            }
        };
        group.bench_function(id, |b| {
            b.iter(|| {
                let mut total = 0;
                for (input, _) in inputs {
                    total += timed(black_box(input));
                }
                black_box(total)
            });
        });
    }
    group.finish();
}

fn repair(c: &mut Criterion) {
    bench_inputs(c, "small", corpus::SMALL_CALLS);
    let (records, intended) = corpus::large_records(100_000);
    bench_inputs(c, "records", &[(&records, &intended)]);
    let (file, intended) = corpus::large_file(100_000);
    bench_inputs(c, "file", &[(&file, &intended)]);
    let (html, intended) = corpus::large_html(100_000);
    bench_inputs(c, "html", &[(&html, &intended)]);
    let (document, intended) = corpus::large_document(100_000);
    bench_inputs(c, "document", &[(&document, &intended)]);
    let valid = corpus::large_valid(100_000);
    bench_inputs(c, "valid", &[(&valid, &valid)]);
}

criterion_group!(benches, repair);
criterion_main!(benches);
