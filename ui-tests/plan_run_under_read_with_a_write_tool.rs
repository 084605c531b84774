use typed_tools::plan::typed::{lit, TypedPlan};
use typed_tools::effect::Read;
use typed_tools::{exec, on};
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

/// Send a reply to a customer.
#[tool(effects = Write)]
fn send_reply(to: String) -> Result<(), String> {
    Err(to)
}

fn plan() {
    let _ = TypedPlan::new(on!(exec!(SendReply { to: lit("ana@example.com") }),
        Ok(u) => lit("sent"),
        Err(e) => lit("not sent"),
    ))
    .allowing::<Read>();
}

fn main() {}
