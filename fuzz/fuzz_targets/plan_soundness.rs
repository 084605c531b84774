//! Plan text from the fuzzer, parsed, checked and run against a small
//! toolbox. The oracle: a plan that is refused ran nothing, and a plan that
//! checks never stops with a type error at run time (only with a value, a
//! division by zero or overflow, a tool's error in its `Err` branch, or a
//! resource limit).
#![no_main]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use futures::executor::block_on;
use libfuzzer_sys::fuzz_target;
use schemars::JsonSchema;
use serde::Serialize;
use typed_tools::plan::{Interpreter, Plan, RunError};
use typed_tools::{tool, ToolError, Toolbox};

/// Tool calls made, by every tool.
static CALLS: AtomicUsize = AtomicUsize::new(0);

#[derive(Serialize, JsonSchema)]
struct Receipt {
    tx_id: String,
    cents: i64,
    note: Option<String>,
}

/// Place an order.
#[tool(effects = Write)]
fn place(id: i64, amount: i64, note: Option<String>) -> Result<Receipt, String> {
    CALLS.fetch_add(1, Ordering::SeqCst);
    if amount < 0 {
        return Err(format!("cannot place {amount}"));
    }
    Ok(Receipt {
        tx_id: format!("tx_{id}"),
        cents: amount,
        note,
    })
}

/// Write cents as dollars.
#[tool(effects = Pure)]
fn format_cents(cents: i64) -> String {
    CALLS.fetch_add(1, Ordering::SeqCst);
    format!("${}.{:02}", cents / 100, (cents % 100).abs())
}

/// Give back the argument, of a type the checker does not know.
#[tool(effects = Pure)]
fn opaque(v: serde_json::Value) -> serde_json::Value {
    CALLS.fetch_add(1, Ordering::SeqCst);
    v
}

/// Look up a name; fails for an empty id.
#[tool(effects = Read)]
fn lookup(id: String) -> Result<String, String> {
    CALLS.fetch_add(1, Ordering::SeqCst);
    if id.is_empty() {
        Err("no id".into())
    } else {
        Ok(format!("name of {id}"))
    }
}

fn toolbox() -> &'static Toolbox {
    static TOOLBOX: OnceLock<Toolbox> = OnceLock::new();
    TOOLBOX.get_or_init(|| {
        Toolbox::builder()
            .tool(Place)
            .tool(FormatCents)
            .tool(Opaque)
            .tool(Lookup)
            .build()
            .expect("well-named tools")
    })
}

fn stopped_by_a_type_error(outcome: &Result<typed_tools::plan::Value, RunError>) -> bool {
    match outcome {
        Err(RunError::TypeMismatch { .. } | RunError::MissingField { .. } | RunError::Unbound { .. }) => {
            true
        }
        Err(RunError::CallFailed { error, .. }) => matches!(
            **error,
            ToolError::Deserialization { .. } | ToolError::InvalidArgs { .. }
        ),
        _ => false,
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(plan) = Plan::parse(text) else {
        return;
    };
    let before = CALLS.load(Ordering::SeqCst);
    match block_on(Interpreter::new(toolbox()).run(&plan)) {
        Err(_refused) => assert_eq!(
            CALLS.load(Ordering::SeqCst),
            before,
            "a refused plan ran a tool:\n{plan}"
        ),
        Ok(run) => assert!(
            !stopped_by_a_type_error(&run.outcome),
            "a plan that checks stopped with a type error:\n{plan}\n{:?}",
            run.outcome
        ),
    }
});
