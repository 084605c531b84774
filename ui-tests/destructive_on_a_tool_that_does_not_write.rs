use typed_tools::tool;

/// Read a note.
#[tool(effects = Read, destructive = false)]
fn get_note(id: u32) -> String {
    id.to_string()
}

/// Add a note.
#[tool(effects = Write, destructive = "no")]
fn add_note(text: String) -> u32 {
    text.len() as u32
}

fn main() {}
