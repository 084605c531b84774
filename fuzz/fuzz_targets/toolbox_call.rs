//! `Toolbox::call` with any name and argument bytes, recovery on. The bytes
//! before the first 0 are the name, the rest the argument text. The
//! toolbox holds typed tools with recovery policies (repair and coercion
//! for all; a function fix, escalation, and retries of an idempotent tool
//! that fails on demand). The oracle: nothing panics; a name the toolbox
//! does not have runs no tool and is `ToolError::UnknownTool`; a `Write`
//! tool not declared idempotent runs at most once per call; a view
//! restricted to `Read` runs no `Write` tool.
#![no_main]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

use futures::executor::block_on;
use libfuzzer_sys::fuzz_target;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use typed_tools::effect::EffectSet;
use typed_tools::error::Severity;
use typed_tools::recover::{Backoff, Policy, Retry};
use typed_tools::{tool, ToolError, Toolbox};

static LOOKUPS: AtomicUsize = AtomicUsize::new(0);
static REFUNDS: AtomicUsize = AtomicUsize::new(0);
static SEARCHES: AtomicUsize = AtomicUsize::new(0);
static SUMS: AtomicUsize = AtomicUsize::new(0);

#[derive(Deserialize, JsonSchema)]
struct Filter {
    field: String,
    values: Vec<String>,
    exact: Option<bool>,
}

#[derive(Serialize, JsonSchema)]
struct Account {
    id: String,
    plan: String,
}

/// Look up an account.
#[tool(effects = Read)]
fn lookup(id: String) -> Account {
    LOOKUPS.fetch_add(1, Ordering::SeqCst);
    Account {
        id,
        plan: "pro".into(),
    }
}

/// Refund an amount, in cents.
#[tool(effects = Write)]
fn refund(account: String, cents: u32, reason: Option<String>) -> Result<String, String> {
    REFUNDS.fetch_add(1, Ordering::SeqCst);
    if cents == 0 {
        return Err("nothing to refund".into());
    }
    Ok(format!("refunded {cents} to {account} ({reason:?})"))
}

/// Search with filters; fails for an empty query, which a retry may fix.
#[tool(effects = Network, idempotent)]
fn search(query: String, filters: Vec<Filter>, limit: Option<u8>) -> Result<Vec<String>, String> {
    SEARCHES.fetch_add(1, Ordering::SeqCst);
    if query.is_empty() {
        return Err("empty query".into());
    }
    Ok(filters
        .iter()
        .map(|f| format!("{query}:{}={:?}/{:?}", f.field, f.values, f.exact))
        .take(limit.unwrap_or(8) as usize)
        .collect())
}

/// Add up numbers.
#[tool(effects = Pure)]
fn sum(items: Vec<f64>) -> f64 {
    SUMS.fetch_add(1, Ordering::SeqCst);
    items.iter().sum()
}

const NAMES: [&str; 4] = ["lookup", "refund", "search", "sum"];

fn toolbox() -> &'static Toolbox {
    static TOOLBOX: OnceLock<Toolbox> = OnceLock::new();
    TOOLBOX.get_or_init(|| {
        let no_wait = Retry {
            max_attempts: 3,
            backoff: Backoff {
                initial: Duration::ZERO,
                factor: 1.0,
                max: Duration::ZERO,
                jitter: false,
            },
        };
        Toolbox::builder()
            .tool(Lookup)
            .tool(Refund)
            .tool(Search)
            .tool(Sum)
            .policy(Policy::recover())
            .policy_for(
                "refund",
                Policy::recover()
                    .fix_with(|text| text.strip_prefix("ARGS:").map(str::to_owned))
                    .escalate(Severity::High),
            )
            .retry::<Search>(no_wait)
            .build()
            .expect("well-named tools")
    })
}

fn runs() -> [usize; 4] {
    [&LOOKUPS, &REFUNDS, &SEARCHES, &SUMS].map(|c| c.load(Ordering::SeqCst))
}

fuzz_target!(|data: &[u8]| {
    let split = data.iter().position(|&b| b == 0).unwrap_or(data.len());
    let name = String::from_utf8_lossy(&data[..split]);
    let args = String::from_utf8_lossy(data.get(split + 1..).unwrap_or_default());
    let toolbox = toolbox();
    let known = NAMES.contains(&name.as_ref());

    let before = runs();
    let result = block_on(toolbox.call(&name, &args));
    let after = runs();
    if !known {
        assert!(
            matches!(result, Err(ToolError::UnknownTool { .. })),
            "{name:?}: {result:?}"
        );
        assert_eq!(before, after, "{name:?} ran a tool");
    }
    assert!(
        after[1] - before[1] <= 1,
        "refund ran {} times in one call",
        after[1] - before[1]
    );
    for (i, (b, a)) in before.iter().zip(after).enumerate() {
        if i != NAMES.iter().position(|n| *n == name).unwrap_or(usize::MAX) {
            assert_eq!(*b, a, "calling {name:?} ran {}", NAMES[i]);
        }
    }

    let before = runs();
    let _ = block_on(toolbox.restrict(EffectSet::READ).call(&name, &args));
    assert_eq!(runs()[1], before[1], "a Read view ran refund");
});
