#![deny(warnings)]

mod reexport {
    pub use typed_tools as tools;
}

use typed_tools::tool;

/// Add two numbers.
#[tool(effects = Pure, crate = reexport::tools)]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Subtract two numbers.
#[tool(effects = Pure, crate = ::typed_tools)]
fn sub(a: i64, b: i64) -> i64 {
    a - b
}

fn main() {
    let _ = typed_tools::Toolbox::builder()
        .tool(Add)
        .tool(Sub)
        .build()
        .unwrap();
}
