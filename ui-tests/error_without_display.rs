use typed_tools::tool;

#[derive(Debug)]
struct NotFound;

/// Read a note.
#[tool(effects = Read)]
fn read_note(id: u32) -> Result<String, NotFound> {
    if id == 0 {
        Err(NotFound)
    } else {
        Ok(id.to_string())
    }
}

fn main() {}
