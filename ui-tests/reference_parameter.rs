use typed_tools::tool;

/// Greet someone.
#[tool(effects = Pure)]
fn greet(name: &str) -> String {
    name.to_owned()
}

fn main() {}
