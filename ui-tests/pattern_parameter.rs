use typed_tools::tool;

/// Add two numbers.
#[tool(effects = Pure)]
fn add((a, b): (i64, i64)) -> i64 {
    a + b
}

fn main() {}
