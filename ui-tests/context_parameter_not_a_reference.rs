use typed_tools::tool;

struct Caller;

/// Look up a customer account.
#[tool(effects = Read)]
fn lookup_account(#[context] caller: Caller, id: String) -> String {
    let _ = caller;
    id
}

/// Close a customer account.
#[tool(effects = Write)]
fn close_account(#[context] caller: &mut Caller, id: String) -> String {
    let _ = caller;
    id
}

fn main() {}
