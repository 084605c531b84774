use typed_tools::tool;

struct Db {
    motd: String,
}

/// The message of the day.
#[tool(effects = Read)]
fn motd(#[state] db: &Db) -> &str {
    &db.motd
}

fn main() {}
