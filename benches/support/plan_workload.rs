//! The workload of the plan-interpreter bench, shared by `benches/plan.rs`
//! (wall clock) and `examples/plan_overhead.rs` (instruction counts): a
//! trivial tool, a plan of 100 `exec`s of it, and the same 100 calls made
//! directly through the toolbox.

use typed_tools::tool;
use typed_tools::Toolbox;

/// Add one.
#[tool(effects = Pure)]
pub(crate) fn inc(n: i64) -> i64 {
    n + 1
}

/// The plan: `traverse` of `exec tool inc` over `n` records. Plans nest at
/// most 64 deep, so a chain of 100 nested matches is not a plan.
pub(crate) fn plan_text(n: usize) -> String {
    let items: Vec<String> = (0..n).map(|i| format!("{{n = {i}}}")).collect();
    format!(
        "match traverse (fn x => exec tool inc x) [{}] {{\n  Ok(all) => all,\n  Err(e) => e.message\n}}",
        items.join(", ")
    )
}

/// The same `n` calls, made directly in async Rust.
pub(crate) async fn direct_calls(toolbox: &Toolbox, n: usize) -> Vec<String> {
    let mut outputs = Vec::with_capacity(n);
    for i in 0..n {
        let args = format!("{{\"n\":{i}}}");
        outputs.push(toolbox.call("inc", &args).await.unwrap().into_json());
    }
    outputs
}
