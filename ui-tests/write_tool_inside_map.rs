use typed_tools::plan::typed::{filter, fold, list, lit, map};
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

// The same in `filter` and `fold`: their callbacks are pure too.
fn in_filter() {
    let _ = filter(list([lit(1), lit(2)]), "o", |o| {
        on!(exec!(Charge { id: o }),
            Ok(tx) => lit(true),
            Err(e) => lit(false),
        )
    });
}

fn in_fold() {
    let _ = fold(lit(0), list([lit(1), lit(2)]), ("total", "o"), |total, o| {
        on!(exec!(Charge { id: o }),
            Ok(tx) => total,
            Err(e) => lit(0),
        )
    });
}

fn main() {}
