use typed_tools::tool;

/// List the notes.
#[tool(effects = Read)]
fn list_notes() -> impl Iterator<Item = String> {
    vec![String::new()].into_iter()
}

fn main() {}
