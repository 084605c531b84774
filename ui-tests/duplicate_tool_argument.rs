use typed_tools::tool;

/// Look up a customer account.
#[tool(effects = Read, name = "lookup", name = "find")]
fn lookup_account(id: String) -> String {
    id
}

fn main() {}
