use std::borrow::Cow;

use typed_tools::tool;

/// Greet someone.
#[tool(effects = Pure)]
fn greet(name: Cow<'_, str>) -> String {
    name.into_owned()
}

fn main() {}
