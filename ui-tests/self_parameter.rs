use typed_tools::tool;

struct Db;

impl Db {
    /// Look up a customer account.
    #[tool(effects = Read)]
    fn lookup_account(&self, id: String) -> String {
        id
    }
}

fn main() {}
