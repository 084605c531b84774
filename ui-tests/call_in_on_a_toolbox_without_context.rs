use typed_tools::{tool, Toolbox};

/// Who is calling.
struct Caller;

/// Delete a note.
#[tool(effects = Write)]
fn delete_note(id: u32) -> bool {
    id > 0
}

async fn delete() {
    let toolbox = Toolbox::builder().tool(DeleteNote).build().unwrap();
    let _ = toolbox.call_in(&Caller, "delete_note", r#"{"id": 1}"#).await;
}

fn main() {}
