use typed_tools::plan::typed::{lit, TypedPlan};
use typed_tools::{exec, field, on};
use schemars::JsonSchema;
use serde::Serialize;
use typed_tools::tool;

#[derive(Serialize, JsonSchema)]
struct Account {
    id: String,
    email: String,
}

/// Look up a customer account.
#[tool(effects = Read)]
fn lookup_account(id: String) -> Result<Account, String> {
    Err(id)
}

fn plan() {
    let _ = TypedPlan::new(on!(exec!(LookupAccount { id: lit("cust_1") }),
        Ok(account) => field!(account.plan),
        Err(e) => lit("lookup failed"),
    ));
}

fn main() {}
