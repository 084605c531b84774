//! Correctness of JSON repair next to two peers, on the corpus of malformed
//! model output in `benches/corpus/repair.rs`: for each case, does each library
//! produce JSON equal to the value the text means?
//!
//! `cargo run --example repair_compare`
//!
//! Verdicts: `ok` the intended value (numbers compared by value, key order
//! not compared); `refused` an error where one is intended
//! (hopeless or ambiguous text); `WRONG` JSON with another value (lost, changed
//! or invented data); `NOT JSON` output that does not parse; `error` an error
//! where a value is intended; `ANSWERED` a value where the text has no clear one.

#[path = "../benches/corpus/repair.rs"]
mod corpus;

use serde_json::Value;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Ok,
    Refused,
    Wrong,
    NotJson,
    Error,
    Answered,
}

impl Verdict {
    fn label(self) -> &'static str {
        match self {
            Verdict::Ok => "ok",
            Verdict::Refused => "refused",
            Verdict::Wrong => "WRONG",
            Verdict::NotJson => "NOT JSON",
            Verdict::Error => "error",
            Verdict::Answered => "ANSWERED",
        }
    }

    fn correct(self) -> bool {
        matches!(self, Verdict::Ok | Verdict::Refused)
    }
}

fn judge(output: Result<String, String>, intended: Option<&str>) -> (Verdict, String) {
    let shown = match &output {
        Ok(json) => json.clone(),
        Err(error) => format!("error: {error}"),
    };
    let verdict = match (output, intended) {
        (Err(_), None) => Verdict::Refused,
        (Err(_), Some(_)) => Verdict::Error,
        (Ok(_), None) => Verdict::Answered,
        (Ok(json), Some(intended)) => match serde_json::from_str::<Value>(&json) {
            Err(_) => Verdict::NotJson,
            Ok(value) if same(&value, &serde_json::from_str::<Value>(intended).unwrap()) => {
                Verdict::Ok
            }
            Ok(_) => Verdict::Wrong,
        },
    };
    (verdict, shown)
}

/// Equal as JSON values, numbers compared by value (`2.0` is `2`).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x == y || x.as_f64() == y.as_f64(),
        (Value::Array(xs), Value::Array(ys)) => {
            xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| same(x, y))
        }
        (Value::Object(xs), Value::Object(ys)) => {
            xs.len() == ys.len()
                && xs
                    .iter()
                    .all(|(k, x)| ys.get(k).is_some_and(|y| same(x, y)))
        }
        _ => a == b,
    }
}

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

fn main() {
    let repairers: [(&str, Repairer); 3] = [
        ("typed-tools", ours),
        ("jsonrepair-rs", jsonrepair_rs),
        ("llm_json", llm_json),
    ];
    let verbose = std::env::args().any(|a| a == "--verbose");
    println!(
        "{:<52} {:>12} {:>14} {:>10}",
        "case", repairers[0].0, repairers[1].0, repairers[2].0
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
    for (name, input, intended) in &cases {
        let mut row = format!("{name:<52}");
        let mut details = Vec::new();
        for (i, (peer, repairer)) in repairers.iter().enumerate() {
            // A peer that panics is counted as an error.
            let output = std::panic::catch_unwind(|| repairer(input))
                .unwrap_or_else(|_| Err("panicked".into()));
            let (verdict, shown) = judge(output, intended.as_deref());
            correct[i] += usize::from(verdict.correct());
            let width = [12, 14, 10][i];
            row.push_str(&format!(" {:>width$}", verdict.label()));
            if !verdict.correct() {
                details.push(format!("    {peer}: {}", shorten(&shown)));
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
