// `call!` is for pure, infallible tools; a tool with effects must be `exec!`ed
// and its Result matched.
use typed_tools::plan::typed::{list, lit, map};
use typed_tools::{call, tool};

/// Charge an order.
#[tool(effects = Write)]
fn charge(id: i64) -> Result<String, String> {
    Ok(format!("tx_{id}"))
}

fn plan() {
    let _ = map(list([lit(1), lit(2)]), "o", |o| call!(Charge { id: o }));
}

fn main() {}
