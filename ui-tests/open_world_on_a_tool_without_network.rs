use typed_tools::tool;

/// Search the notes kept on this machine.
#[tool(effects = Read, open_world)]
fn search_notes(text: String) -> Vec<String> {
    vec![text]
}

fn main() {}
