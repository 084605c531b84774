use typed_tools::tool;

/// A customer account.
#[tool(effects = Read)]
struct Account {
    id: String,
}

fn main() {}
