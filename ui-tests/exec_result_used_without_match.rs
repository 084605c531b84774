use typed_tools::plan::typed::{lit, TypedPlan};
use typed_tools::exec;
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
    let _ = TypedPlan::new(exec!(LookupAccount { id: lit("cust_1") }));
}

fn main() {}
