// A field of a tool's output has the type the output struct gives it: the
// email (a String) is no amount (an Int).
use schemars::JsonSchema;
use serde::Serialize;
use typed_tools::plan::typed::{lit, TypedPlan};
use typed_tools::{exec, field, on, tool};

#[derive(Serialize, JsonSchema)]
struct Account {
    id: String,
    email: String,
    last_charge_cents: i64,
}

/// Look up a customer account.
#[tool(effects = Read)]
fn lookup_account(id: String) -> Result<Account, String> {
    Err(id)
}

/// Refund an amount to an account.
#[tool(effects = Write)]
fn issue_refund(account_id: String, amount: i64) -> Result<String, String> {
    Ok(format!("{account_id}{amount}"))
}

fn plan() {
    let _ = TypedPlan::new(on!(exec!(LookupAccount { id: lit("cust_1") }),
        Ok(account) => on!(exec!(IssueRefund {
                account_id: field!(account.id),
                amount: field!(account.email),
            }),
            Ok(tx) => tx,
            Err(e) => lit("refund failed"),
        ),
        Err(e) => lit("lookup failed"),
    ));
    // Nor is it a number to compare.
    let _ = TypedPlan::new(on!(exec!(LookupAccount { id: lit("cust_1") }),
        Ok(account) => field!(account.email).gt(lit(100)),
        Err(e) => lit(false),
    ));
}

fn main() {}
