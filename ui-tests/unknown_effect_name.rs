use typed_tools::tool;

/// Look up a customer account.
#[tool(effects = Raed)]
fn lookup_account(id: String) -> String {
    id
}

fn main() {}
