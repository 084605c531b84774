//! The never-lossy sweep over folders of JSON documents: every single
//! damage the repair fuzz target chooses from (delete, duplicate or swap a
//! character, truncate, insert prose, a fence, a comment or a character:
//! each kind, each insert and character, at every byte) applied to each
//! document, each damaged text repaired and held to the never-lossy check
//! of `tests/repair_corpus/lossless.rs` (shared with `tests/repair_props.rs`
//! and the fuzz target). Prints every lossy reading, with the text and the
//! output around the damage, and the counts; exits 1 when it found one.
//!
//! ```text
//! scripts/repair_sweep.sh FOLDER... [--max-bytes N] [--min-bytes N] [--show N]
//! cargo run --release --example repair_sweep -- fuzz/corpus/repair --max-bytes 4096
//! ```
//!
//! A document is a file (found in the folders and below) that is valid
//! JSON as it is, or without its last 8 bytes (a fuzz input: the document
//! and the 8 bytes that choose a damage to it); the same document twice is
//! swept once. `--max-bytes` (default 4096) and `--min-bytes` (default 1)
//! bound a document's size; `--show` (default 50) how many lossy readings
//! are printed in full (all are counted). The documents are shared among
//! as many threads as the machine has cores.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use serde::de::IgnoredAny;

#[path = "../tests/repair_corpus/lossless.rs"]
mod lossless;

struct Args {
    folders: Vec<PathBuf>,
    max_bytes: usize,
    min_bytes: usize,
    show: usize,
}

fn args() -> Result<Args, String> {
    let mut args = Args {
        folders: Vec::new(),
        max_bytes: 4096,
        min_bytes: 1,
        show: 50,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut number = |name: &str| {
            it.next()
                .and_then(|n| n.replace('_', "").parse().ok())
                .ok_or(format!("{name} needs a number"))
        };
        match arg.as_str() {
            "--max-bytes" => args.max_bytes = number("--max-bytes")?,
            "--min-bytes" => args.min_bytes = number("--min-bytes")?,
            "--show" => args.show = number("--show")?,
            flag if flag.starts_with("--") => return Err(format!("unknown flag {flag}")),
            _ => args.folders.push(arg.into()),
        }
    }
    if args.folders.is_empty() {
        return Err("no folder given".into());
    }
    Ok(args)
}

/// Every file in `dir` and below.
fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        out.push(dir.to_path_buf());
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            files(&path, out);
        } else {
            out.push(path);
        }
    }
}

/// The JSON document a file holds, as it is or without the 8 bytes a fuzz
/// input ends with, if its size is within the bounds.
fn document(bytes: &[u8], args: &Args) -> Option<String> {
    [0, 8].into_iter().find_map(|cut| {
        let doc = std::str::from_utf8(&bytes[..bytes.len().checked_sub(cut)?]).ok()?;
        let sized = (args.min_bytes..=args.max_bytes).contains(&doc.len());
        (sized && serde_json::from_str::<IgnoredAny>(doc).is_ok()).then(|| doc.to_owned())
    })
}

fn main() {
    let args = match args() {
        Ok(args) => args,
        Err(error) => {
            eprintln!(
                "{error}\nusage: repair_sweep FOLDER... [--max-bytes N] [--min-bytes N] [--show N]"
            );
            std::process::exit(2);
        }
    };
    let mut docs = BTreeSet::new();
    for folder in &args.folders {
        let mut paths = Vec::new();
        files(folder, &mut paths);
        let before = docs.len();
        for path in &paths {
            if let Some(doc) = std::fs::read(path).ok().and_then(|b| document(&b, &args)) {
                docs.insert(doc);
            }
        }
        println!(
            "{}: {} files, {} new documents of {}..={} bytes",
            folder.display(),
            paths.len(),
            docs.len() - before,
            args.min_bytes,
            args.max_bytes
        );
    }
    let docs: Vec<String> = docs.into_iter().collect();
    let next = AtomicUsize::new(0);
    let totals = Mutex::new((0usize, 0usize, 0usize));
    let shown = AtomicUsize::new(0);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(doc) = docs.get(i) else { break };
                let swept = lossless::sweep(doc);
                for lossy in &swept.lossy {
                    if shown.fetch_add(1, Ordering::Relaxed) < args.show {
                        println!(
                            "LOSSY document {i} ({} bytes), {:?}: {}\n  near   {:?}\n  output {:?}",
                            doc.len(),
                            lossy.damage,
                            lossy.lost,
                            lossy.near(60, 60),
                            lossy.output_near(100, 100)
                        );
                    }
                }
                let mut totals = totals.lock().expect("no thread panics");
                totals.0 += swept.repaired;
                totals.1 += swept.refused;
                totals.2 += swept.lossy.len();
            });
        }
    });
    let (repaired, refused, lossy) = totals.into_inner().expect("no thread panics");
    println!(
        "{} documents, {} damaged texts: {repaired} repaired, {refused} refused, {lossy} lossy",
        docs.len(),
        repaired + refused
    );
    if lossy > 0 {
        std::process::exit(1);
    }
}
