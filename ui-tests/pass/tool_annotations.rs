#![deny(warnings)]
// `title`, `destructive` and `open_world` are stored in the spec and written
// into the MCP catalog's `title` and `annotations`.

use typed_tools::{tool, CatalogFormat, Tool, ToolSpec, Toolbox};

/// Add a note.
#[tool(effects = Write, destructive = false, title = "Add a note")]
fn add_note(text: String) -> u32 {
    text.len() as u32
}

/// Delete a note.
#[tool(effects = Write, destructive)]
fn delete_note(id: u32) -> bool {
    id > 0
}

/// Ask the company directory.
#[tool(effects = [Read, Network], open_world = false, idempotent)]
fn directory(name: String) -> String {
    name
}

fn main() {
    assert_eq!(AddNote::TITLE, Some("Add a note"));
    assert!(!ToolSpec::of::<AddNote>().is_destructive());
    assert!(ToolSpec::of::<DeleteNote>().is_destructive());
    assert!(!ToolSpec::of::<Directory>().is_open_world());
    let toolbox = Toolbox::builder().tool(AddNote).tool(DeleteNote).tool(Directory).build().unwrap();
    let mcp = toolbox.catalog(CatalogFormat::Mcp).to_json();
    assert_eq!(mcp["tools"][0]["title"], "Add a note");
    assert_eq!(mcp["tools"][0]["annotations"]["destructiveHint"], false);
    assert_eq!(mcp["tools"][1]["annotations"]["destructiveHint"], true);
    assert_eq!(mcp["tools"][2]["annotations"]["openWorldHint"], false);
}
