// A pure tool that returns a `Result` can fail: `call!` has no `Err` branch
// for it, so it must be `exec!`ed and matched.
use typed_tools::plan::typed::lit;
use typed_tools::{call, tool};

/// Parse an amount like `12.99` into cents.
#[tool(effects = Pure)]
fn parse_cents(text: String) -> Result<i64, String> {
    text.replace('.', "").parse().map_err(|_| text)
}

fn plan() {
    let _ = call!(ParseCents { text: lit("12.99") });
}

fn main() {}
