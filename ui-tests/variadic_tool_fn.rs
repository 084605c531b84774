use typed_tools::tool;

/// Add numbers.
#[tool(effects = Pure)]
fn add(first: i64, rest: ...) -> i64 {
    first
}

fn main() {}
