use typed_tools::tool;

/// List every note.
#[tool(effects = Read, title = ListNotes)]
fn list_notes() -> Vec<String> {
    vec![]
}

/// Delete a note.
#[tool(effects = Write, title = "  ")]
fn delete_note(id: u32) -> bool {
    id > 0
}

/// Add a note.
#[tool(effects = Write, title)]
fn add_note(text: String) -> u32 {
    text.len() as u32
}

fn main() {}
