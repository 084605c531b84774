use typed_tools::tool;

struct Db;
struct Cache;

/// Look up a customer account.
#[tool(effects = Read)]
fn lookup_account(#[state] db: &Db, #[state] cache: &Cache, id: String) -> String {
    let _ = (db, cache);
    id
}

fn main() {}
