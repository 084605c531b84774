//! Repair's cost on the inputs of `benches/repair.rs` as instruction
//! counts: each input repaired `runs` times by ours and by jsonrepair-rs,
//! each arm in its own never-inlined function, so that callgrind's
//! inclusive cost of each, divided by the runs, is a number the machine's
//! load does not change. `small` is one iteration of its bench (its ten
//! calls in turn), repeated `100 * runs` times, so that its count is not
//! the first call's setup.
//!
//! ```text
//! cargo build --release --example repair_overhead
//! valgrind --tool=callgrind --callgrind-out-file=repair.out \
//!     target/release/examples/repair_overhead 10
//! callgrind_annotate --inclusive=yes repair.out | grep -E 'repair_overhead::'
//! ```
//!
//! With a second argument (`small`, `records`, `file`, `html`, `document` or
//! `valid`), only that input, for a profile of one bench.

use std::hint::black_box;

#[path = "../benches/corpus/repair.rs"]
mod corpus;

macro_rules! arms {
    ($($ours:ident, $peer:ident;)*) => {$(
        /// `runs` times, ours.
        #[inline(never)]
        fn $ours(texts: &[&str], runs: usize) {
            // A constant of its own, so that the compiler does not merge
            // the arms, whose code is otherwise the same.
            black_box(stringify!($ours));
            for _ in 0..runs {
                for text in texts {
                    black_box(typed_tools::repair::repair(black_box(text)).map(|r| r.json().len()).ok());
                }
            }
        }

        /// `runs` times, jsonrepair-rs.
        #[inline(never)]
        fn $peer(texts: &[&str], runs: usize) {
            black_box(stringify!($peer));
            for _ in 0..runs {
                for text in texts {
                    black_box(jsonrepair_rs::jsonrepair(black_box(text)).map(|json| json.len()).ok());
                }
            }
        }
    )*};
}

arms! {
    small_ours, small_jsonrepair_rs;
    records_ours, records_jsonrepair_rs;
    file_ours, file_jsonrepair_rs;
    html_ours, html_jsonrepair_rs;
    document_ours, document_jsonrepair_rs;
    valid_ours, valid_jsonrepair_rs;
}

fn main() {
    let mut args = std::env::args().skip(1);
    let runs: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(10);
    let only = args.next();
    let wanted = |name: &str| only.as_deref().is_none_or(|only| only == name);
    type Arm = fn(&[&str], usize);
    let small = corpus::small_calls();
    let records = corpus::large_records(100_000).0;
    let file = corpus::large_file(100_000).0;
    let html = corpus::large_html(100_000).0;
    let document = corpus::large_document(100_000).0;
    let valid = corpus::large_valid(100_000);
    let inputs: [(&str, Vec<&str>, Arm, Arm); 6] = [
        ("small", small, small_ours, small_jsonrepair_rs),
        (
            "records",
            vec![&records],
            records_ours,
            records_jsonrepair_rs,
        ),
        ("file", vec![&file], file_ours, file_jsonrepair_rs),
        ("html", vec![&html], html_ours, html_jsonrepair_rs),
        (
            "document",
            vec![&document],
            document_ours,
            document_jsonrepair_rs,
        ),
        ("valid", vec![&valid], valid_ours, valid_jsonrepair_rs),
    ];
    for (name, texts, ours, peer) in inputs {
        if wanted(name) {
            let runs = if name == "small" { 100 * runs } else { runs };
            ours(&texts, runs);
            peer(&texts, runs);
        }
    }
}
