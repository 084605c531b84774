use typed_tools::tool;

/// Add two numbers.
#[tool(effects = [])]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {}
