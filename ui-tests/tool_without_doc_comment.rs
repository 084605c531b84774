use typed_tools::tool;

#[tool(effects = Read)]
fn lookup_account(id: String) -> String {
    id
}

fn main() {}
