use typed_tools::tool;

/// Greet someone.
#[tool(effects = Pure)]
fn greet(name: impl Into<String>) -> String {
    name.into()
}

fn main() {}
