use typed_tools::tool;

/// Add two numbers.
#[tool(effects = Pure)]
fn add(a: i64, b: i64) -> i64
where
    i64: Copy,
{
    a + b
}

fn main() {}
