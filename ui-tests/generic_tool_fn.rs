use typed_tools::tool;

/// Greet someone.
#[tool(effects = Pure)]
fn greet<T: Into<String>>(name: T) -> String {
    name.into()
}

fn main() {}
