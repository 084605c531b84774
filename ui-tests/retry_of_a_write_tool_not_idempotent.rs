use typed_tools::recover::Retry;
use typed_tools::{tool, Toolbox};

/// Charge a card.
#[tool(effects = Write)]
fn charge(cents: u32) -> String {
    format!("charged {cents}")
}

fn main() {
    let _ = Toolbox::builder().tool(Charge).retry::<Charge>(Retry::exponential(3)).build();
}
