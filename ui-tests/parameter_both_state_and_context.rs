use typed_tools::tool;

struct Db;

/// Look up a customer account.
#[tool(effects = Read)]
fn lookup_account(#[state] #[context] db: &Db, id: String) -> String {
    let _ = db;
    id
}

fn main() {}
