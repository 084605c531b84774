use typed_tools::plan::typed::{lit, TypedPlan};
use typed_tools::{exec, on, tool};

/// Look up a customer's email.
#[tool(effects = Read)]
fn lookup_email(id: String) -> Result<String, String> {
    Err(id)
}

fn plan() {
    // The Ok branch gives a String, the Err branch an Int.
    let _ = TypedPlan::new(on!(exec!(LookupEmail { id: lit("cust_1") }),
        Ok(email) => email,
        Err(e) => lit(0),
    ));
}

fn main() {}
