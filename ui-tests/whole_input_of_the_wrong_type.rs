// `exec!(Tool(value))` passes one value as the tool's whole input: it must be
// of the tool's input type (build it with `input!(Tool { .. })`).
use typed_tools::plan::typed::{list, lit, traverse};
use typed_tools::{exec, tool};

/// Charge an order.
#[tool(effects = Write)]
fn charge(id: i64, amount: i64) -> Result<String, String> {
    Ok(format!("tx_{id}_{amount}"))
}

fn plan() {
    let _ = traverse(list([lit(1), lit(2)]), "o", |o| exec!(Charge(o)));
}

fn main() {}
