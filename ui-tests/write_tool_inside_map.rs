use typed_tools::plan::typed::{list, lit, map};
use typed_tools::{exec, on, tool};

/// Charge an order.
#[tool(effects = Write)]
fn charge(id: i64) -> Result<String, String> {
    Ok(format!("tx_{id}"))
}

fn plan() {
    let _ = map(list([lit(1), lit(2)]), "o", |o| {
        on!(exec!(Charge { id: o }),
            Ok(tx) => tx,
            Err(e) => lit("failed"),
        )
    });
}

fn main() {}
