use typed_tools::plan::typed::{list, lit, traverse, TypedPlan};
use typed_tools::{exec, tool};

/// Charge an order.
#[tool(effects = Write)]
fn charge(id: i64) -> Result<String, String> {
    Ok(format!("tx_{id}"))
}

fn plan() {
    let _ = TypedPlan::new(traverse(list([lit(1), lit(2)]), "o", |o| exec!(Charge { id: o })));
}

fn main() {}
