//! JSON repair against a corpus of 900 damaged texts, most from other
//! projects' test suites (`tests/repair_corpus/cases.rs`), each with the value
//! it means or that it must be refused. Per case, the outcome is one of:
//! agree (the intended value, or the text byte for byte, or a refusal where
//! one is intended); refused where a value was meant (a miss, but safe); a
//! different value (wrong); or a value where none was meant (answered). The
//! test prints the count per class and holds the repairer to no wrong value,
//! no answer where a refusal is meant, and most cases agreeing.
//!
//! `cargo test --test repair_agreement -- --nocapture` prints the table;
//! with `SHOW_REFUSED=1` it lists the cases refused where a value was meant.

#[path = "repair_corpus/cases.rs"]
mod cases;

use std::collections::BTreeMap;

use cases::{Case, Class, Intended, CASES};
use serde_json::Value;
use typed_tools::repair::repair;

/// How the repair of one case compares with what it means.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    Agree,
    RefusedInstead,
    Wrong(String),
    Answered(String),
}

fn outcome(case: &Case) -> Outcome {
    let result = repair(case.input);
    match (case.intended, result) {
        (Intended::Refuse, Err(_)) => Outcome::Agree,
        (Intended::Refuse, Ok(repaired)) => Outcome::Answered(repaired.json().to_string()),
        (_, Err(_)) => Outcome::RefusedInstead,
        (Intended::Unchanged, Ok(repaired)) => {
            if repaired.is_unchanged() && repaired.json() == case.input {
                Outcome::Agree
            } else {
                Outcome::Wrong(repaired.json().to_string())
            }
        }
        (Intended::Value(intended), Ok(repaired)) => {
            let want: Value = serde_json::from_str(intended).expect("intended values are JSON");
            match serde_json::from_str::<Value>(repaired.json()) {
                Ok(got) if cases::same(&got, &want) => Outcome::Agree,
                _ => Outcome::Wrong(repaired.json().to_string()),
            }
        }
    }
}

#[test]
fn the_corpus_agrees_class_by_class() {
    assert!(CASES.len() >= 500, "{} cases", CASES.len());
    let mut table: BTreeMap<Class, [usize; 4]> = BTreeMap::new();
    let mut bad = Vec::new();
    for case in CASES {
        let outcome = outcome(case);
        let row = table.entry(case.class).or_default();
        let column = match &outcome {
            Outcome::Agree => 0,
            Outcome::RefusedInstead => 1,
            Outcome::Wrong(_) => 2,
            Outcome::Answered(_) => 3,
        };
        row[column] += 1;
        if column >= 2 || (column == 1 && std::env::var("SHOW_REFUSED").is_ok()) {
            bad.push(format!(
                "{:?} ({:?}) {:?}: {:?}, intended {:?}",
                case.class, case.source, case.input, outcome, case.intended
            ));
        }
    }
    println!(
        "{:<20} {:>6} {:>6} {:>8} {:>6} {:>9}",
        "class", "cases", "agree", "refused", "wrong", "answered"
    );
    let mut total = [0usize; 4];
    for class in Class::ALL {
        let row = table.get(&class).copied().unwrap_or_default();
        let cases: usize = row.iter().sum();
        println!(
            "{:<20} {:>6} {:>6} {:>8} {:>6} {:>9}",
            format!("{class:?}"),
            cases,
            row[0],
            row[1],
            row[2],
            row[3]
        );
        for (sum, n) in total.iter_mut().zip(row) {
            *sum += n;
        }
    }
    let cases: usize = total.iter().sum();
    println!(
        "{:<20} {:>6} {:>6} {:>8} {:>6} {:>9}",
        "all", cases, total[0], total[1], total[2], total[3]
    );
    assert!(
        bad.is_empty(),
        "{} cases read wrongly:\n{}",
        bad.len(),
        bad.join("\n")
    );
    // Refusing is safe, but most damage is repaired.
    assert!(total[0] * 10 >= cases * 9, "{} of {cases} agree", total[0]);
}
