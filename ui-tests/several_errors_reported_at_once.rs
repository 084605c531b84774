use typed_tools::tool;

#[tool(efects = Read, idempotent = 3)]
async fn lookup_account(#[state] db: String, id: &str, (a, b): (u8, u8)) -> String {
    let _ = (db, a, b);
    id.to_owned()
}

fn main() {}
