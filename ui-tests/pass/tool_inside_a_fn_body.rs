#![deny(warnings)]

use typed_tools::{tool, Toolbox};

fn main() {
    /// Add two numbers.
    #[tool(effects = Pure)]
    fn add(a: i64, b: i64) -> i64 {
        a + b
    }

    let toolbox = Toolbox::builder().tool(Add).build().unwrap();
    assert_eq!(toolbox.names().collect::<Vec<_>>(), ["add"]);
}
