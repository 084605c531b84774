use typed_tools::tool;

/// Look up a customer account.
#[tool]
fn lookup_account(id: String) -> String {
    id
}

fn main() {}
