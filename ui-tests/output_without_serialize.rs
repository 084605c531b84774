use typed_tools::tool;

#[derive(schemars::JsonSchema)]
struct Note {
    text: String,
}

/// Read a note.
#[tool(effects = Read)]
fn read_note(id: u32) -> Note {
    Note { text: id.to_string() }
}

fn main() {}
