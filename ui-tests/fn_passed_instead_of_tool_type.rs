use typed_tools::{tool, Toolbox};

/// Add two numbers.
#[tool(effects = Pure)]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn toolbox() {
    let _ = Toolbox::builder().tool(add).build();
}

fn main() {}
