use typed_tools::tool;

/// Look up a customer account.
#[tool(effects)]
fn lookup_account(id: String) -> String {
    id
}

/// Look up an invoice.
#[tool(effects = Read, name)]
fn lookup_invoice(id: String) -> String {
    id
}

/// Look up an order.
#[tool(effects = Read, crate)]
fn lookup_order(id: String) -> String {
    id
}

fn main() {}
