use typed_tools::tool;

/// Look up a customer account.
#[tool(effects = Read, name = "lookup account")]
fn lookup_account(id: String) -> String {
    id
}

/// Look up an invoice.
#[tool(effects = Read, name = "")]
fn lookup_invoice(id: String) -> String {
    id
}

/// Look up an order.
#[tool(effects = Read, name = "2nd_lookup")]
fn lookup_order(id: String) -> String {
    id
}

/// Look up a parcel.
#[tool(
    effects = Read,
    name = "look_up_a_parcel_by_its_tracking_number_as_printed_on_the_shipping_label"
)]
fn lookup_parcel(id: String) -> String {
    id
}

fn main() {}
