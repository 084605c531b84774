//! Correctness of JSON repair next to two peers, on two corpora: the
//! 900 damaged texts of `tests/repair_corpus/cases.rs` (most from other
//! projects' test suites), counted per class of damage; and the malformed
//! model output of `benches/corpus/repair.rs`, case by case.
//!
//! `cargo run --example repair_compare [-- --verbose]`
//!
//! Verdicts: `ok` the intended value (numbers compared by value, key order
//! not compared), valid JSON byte for byte, or a refusal where one is
//! intended; `refused` an error where a value is intended (safe, but a
//! miss); `WRONG` JSON with another value (lost, changed or invented data),
//! output that is not JSON, or a value where the text has none.

#[path = "../benches/corpus/repair.rs"]
mod corpus;

#[path = "../tests/repair_corpus/cases.rs"]
mod cases;

use serde_json::Value;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Ok,
    Refused,
    Wrong,
}

/// What one repairer made of a text: JSON, or an error.
type Output = Result<String, String>;

/// Judges an output against the intended value (`None`: a refusal), or
/// against the text itself when `unchanged`.
fn judge(input: &str, output: &Output, intended: Option<&str>, unchanged: bool) -> Verdict {
    match (output, intended) {
        (Err(_), None) => Verdict::Ok,
        (Ok(_), None) => Verdict::Wrong,
        (Err(_), Some(_)) => Verdict::Refused,
        (Ok(json), _) if unchanged => {
            if json == input {
                Verdict::Ok
            } else {
                Verdict::Wrong
            }
        }
        (Ok(json), Some(intended)) => match serde_json::from_str::<Value>(json) {
            Ok(value) if cases::same(&value, &serde_json::from_str::<Value>(intended).unwrap()) => {
                Verdict::Ok
            }
            _ => Verdict::Wrong,
        },
    }
}

type Repairer = fn(&str) -> Output;

fn ours(text: &str) -> Output {
    typed_tools::repair::repair(text)
        .map(|r| r.into_json().into_owned())
        .map_err(|e| e.to_string())
}

fn jsonrepair_rs(text: &str) -> Output {
    jsonrepair_rs::jsonrepair(text).map_err(|e| e.to_string())
}

fn llm_json(text: &str) -> Output {
    llm_json::repair_json(text, &llm_json::RepairOptions::default()).map_err(|e| e.to_string())
}

const REPAIRERS: [(&str, Repairer); 3] = [
    ("typed-tools", ours),
    ("jsonrepair-rs", jsonrepair_rs),
    ("llm_json", llm_json),
];

/// Runs a repairer, counting a panic as an error.
fn run(repairer: Repairer, input: &str) -> Output {
    std::panic::catch_unwind(|| repairer(input)).unwrap_or_else(|_| Err("panicked".into()))
}

fn main() {
    std::panic::set_hook(Box::new(|_| {}));
    let verbose = std::env::args().any(|a| a == "--verbose");
    per_class(verbose);
    println!();
    case_by_case(verbose);
}

/// The damaged-text corpus, counted per class: ok / refused / wrong for each
/// repairer.
fn per_class(verbose: bool) {
    print!("{:<20} {:>6}", "class", "cases");
    for (name, _) in REPAIRERS {
        print!(" {name:>18}");
    }
    println!();
    print!("{:<20} {:>6}", "", "");
    for _ in REPAIRERS {
        print!(" {:>18}", "ok/refused/WRONG");
    }
    println!();
    let mut totals = [[0usize; 3]; 3];
    let mut all = 0;
    for class in cases::Class::ALL {
        let mut counts = [[0usize; 3]; 3];
        let mut n = 0;
        for case in cases::CASES.iter().filter(|c| c.class == class) {
            n += 1;
            let (intended, unchanged) = match case.intended {
                cases::Intended::Value(value) => (Some(value), false),
                cases::Intended::Unchanged => (Some(case.input), true),
                cases::Intended::Refuse => (None, false),
            };
            for (i, (name, repairer)) in REPAIRERS.iter().enumerate() {
                let output = run(*repairer, case.input);
                let verdict = judge(case.input, &output, intended, unchanged);
                counts[i][verdict as usize] += 1;
                if verbose && verdict != Verdict::Ok {
                    println!(
                        "    {name} {:?}: {}",
                        shorten(&format!("{:?}", case.input)),
                        shorten(&format!("{output:?}"))
                    );
                }
            }
        }
        print!("{:<20} {n:>6}", format!("{class:?}"));
        for (i, c) in counts.iter().enumerate() {
            print!(" {:>18}", format!("{}/{}/{}", c[0], c[1], c[2]));
            for (total, count) in totals[i].iter_mut().zip(c) {
                *total += count;
            }
        }
        println!();
        all += n;
    }
    print!("{:<20} {all:>6}", "all");
    for t in totals {
        print!(" {:>18}", format!("{}/{}/{}", t[0], t[1], t[2]));
    }
    println!();
}

/// The bench's corpus of malformed model output, case by case.
fn case_by_case(verbose: bool) {
    println!(
        "{:<52} {:>12} {:>14} {:>10}",
        "case", REPAIRERS[0].0, REPAIRERS[1].0, REPAIRERS[2].0
    );
    let mut correct = [0usize; 3];
    let mut cases: Vec<(String, String, Option<String>)> = corpus::CASES
        .iter()
        .map(|c| {
            (
                c.name.to_string(),
                c.input.to_string(),
                c.intended.map(str::to_string),
            )
        })
        .collect();
    for (i, (input, intended)) in corpus::SMALL_CALLS.iter().enumerate() {
        cases.push((
            format!("small call {}", i + 1),
            input.to_string(),
            Some(intended.to_string()),
        ));
    }
    let (text, intended) = corpus::large_records(100_000);
    cases.push(("large: 100 KB of records".into(), text, Some(intended)));
    let (text, intended) = corpus::large_file(100_000);
    cases.push(("large: 100 KB file content".into(), text, Some(intended)));
    let (text, intended) = corpus::large_html(100_000);
    cases.push((
        "large: 100 KB of HTML in single quotes".into(),
        text,
        Some(intended),
    ));
    let (text, intended) = corpus::large_document(100_000);
    cases.push((
        "large: 100 KB of real documents".into(),
        text,
        Some(intended),
    ));
    for (name, input, intended) in &cases {
        let mut row = format!("{name:<52}");
        let mut details = Vec::new();
        for (i, (peer, repairer)) in REPAIRERS.iter().enumerate() {
            let output = run(*repairer, input);
            let verdict = judge(input, &output, intended.as_deref(), false);
            correct[i] += usize::from(verdict == Verdict::Ok);
            let label = match verdict {
                Verdict::Ok => "ok",
                Verdict::Refused => "refused",
                Verdict::Wrong => "WRONG",
            };
            let width = [12, 14, 10][i];
            row.push_str(&format!(" {label:>width$}"));
            if verdict != Verdict::Ok {
                details.push(format!("    {peer}: {}", shorten(&format!("{output:?}"))));
            }
        }
        println!("{row}");
        if verbose {
            println!("    input: {}", shorten(&format!("{input:?}")));
            for line in details {
                println!("{line}");
            }
        }
    }
    println!(
        "{:<52} {:>12} {:>14} {:>10}",
        format!("correct of {}", cases.len()),
        correct[0],
        correct[1],
        correct[2]
    );
}

fn shorten(text: &str) -> String {
    if text.chars().count() <= 160 {
        return text.to_string();
    }
    let head: String = text.chars().take(160).collect();
    format!("{head}...")
}
