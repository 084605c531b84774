use typed_tools::plan::typed::lit;
use typed_tools::{exec, tool};

/// Refund an amount to an account.
#[tool(effects = Write)]
fn issue_refund(account_id: String, amount: i64) -> Result<String, String> {
    Ok(format!("{account_id}{amount}"))
}

fn plan() {
    let _ = exec!(IssueRefund {
        account_id: lit("cust_1"),
        amount: lit("12.99"),
    });
}

fn main() {}
