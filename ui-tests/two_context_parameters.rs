use typed_tools::tool;

struct Caller;
struct Tenant;

/// Look up a customer account.
#[tool(effects = Read)]
fn lookup_account(#[context] caller: &Caller, #[context] tenant: &Tenant, id: String) -> String {
    let _ = (caller, tenant);
    id
}

fn main() {}
