//! The generated items pass lints stricter than `warnings`.
#![deny(
    warnings,
    missing_docs,
    missing_debug_implementations,
    unreachable_pub,
    unused_lifetimes,
    single_use_lifetimes,
    unused_qualifications,
    unused_results
)]

use std::sync::Mutex;

/// A counter.
#[derive(Debug, Default)]
pub struct Counter(Mutex<u64>);

/// Add two numbers.
#[typed_tools::tool(effects = Pure)]
pub fn add(a: i64, b: i64) -> std::io::Result<i64> {
    Ok(a + b)
}

/// Count one more.
#[typed_tools::tool(effects = Write)]
pub async fn count(#[state] counter: &Counter, by: Option<u64>) -> Result<u64, String> {
    let mut count = counter.0.lock().map_err(|e| e.to_string())?;
    *count += by.unwrap_or(1);
    Ok(*count)
}

/// Who is calling.
#[derive(Debug)]
pub struct Caller {
    /// Their name.
    pub name: String,
}

/// Greet the caller.
#[typed_tools::tool(effects = Pure)]
pub fn greet(#[context] caller: &Caller, greeting: String) -> String {
    format!("{greeting}, {}", caller.name)
}

/// Count one more for the caller.
#[typed_tools::tool(effects = Write)]
pub async fn count_for(
    #[state] counter: &Counter,
    #[context] caller: &Caller,
) -> Result<String, String> {
    let mut count = counter.0.lock().map_err(|e| e.to_string())?;
    *count += 1;
    Ok(format!("{}: {count}", caller.name))
}

fn main() {
    let _ = (
        Add,
        Count::new(Counter::default()),
        Greet,
        CountFor::new(Counter::default()),
    );
}
