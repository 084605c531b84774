//! Repair's cost on the large inputs of `benches/repair.rs` as instruction
//! counts: each input repaired `runs` times by ours and by jsonrepair-rs,
//! each arm in its own never-inlined function, so that callgrind's
//! inclusive cost of each, divided by the runs, is a number the machine's
//! load does not change.
//!
//! ```text
//! cargo build --release --example repair_overhead
//! valgrind --tool=callgrind --callgrind-out-file=repair.out \
//!     target/release/examples/repair_overhead 10
//! callgrind_annotate --inclusive=yes repair.out | grep -E 'repair_overhead::'
//! ```
//!
//! With a second argument (`records`, `file`, `html`, `document` or `valid`), only
//! that input, for a profile of one bench.

use std::hint::black_box;

#[path = "../benches/corpus/repair.rs"]
mod corpus;

macro_rules! arms {
    ($($ours:ident, $peer:ident;)*) => {$(
        /// `runs` times, ours.
        #[inline(never)]
        fn $ours(text: &str, runs: usize) {
            // A constant of its own, so that the compiler does not merge
            // the arms, whose code is otherwise the same.
            black_box(stringify!($ours));
            for _ in 0..runs {
                black_box(typed_tools::repair::repair(black_box(text)).map(|r| r.json().len()).ok());
            }
        }

        /// `runs` times, jsonrepair-rs.
        #[inline(never)]
        fn $peer(text: &str, runs: usize) {
            black_box(stringify!($peer));
            for _ in 0..runs {
                black_box(jsonrepair_rs::jsonrepair(black_box(text)).map(|json| json.len()).ok());
            }
        }
    )*};
}

arms! {
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
    type Arm = fn(&str, usize);
    let inputs: [(&str, String, Arm, Arm); 5] = [
        (
            "records",
            corpus::large_records(100_000).0,
            records_ours,
            records_jsonrepair_rs,
        ),
        (
            "file",
            corpus::large_file(100_000).0,
            file_ours,
            file_jsonrepair_rs,
        ),
        (
            "html",
            corpus::large_html(100_000).0,
            html_ours,
            html_jsonrepair_rs,
        ),
        (
            "document",
            corpus::large_document(100_000).0,
            document_ours,
            document_jsonrepair_rs,
        ),
        (
            "valid",
            corpus::large_valid(100_000),
            valid_ours,
            valid_jsonrepair_rs,
        ),
    ];
    for (name, text, ours, peer) in inputs {
        if wanted(name) {
            ours(&text, runs);
            peer(&text, runs);
        }
    }
}
