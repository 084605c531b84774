use typed_tools::{tool, Toolbox};

/// Who is calling.
struct Caller {
    admin: bool,
}

/// Whose data a call is about.
struct Tenant;

/// Delete a note.
#[tool(effects = Write)]
fn delete_note(#[context] caller: &Caller, id: u32) -> bool {
    caller.admin && id > 0
}

async fn delete() {
    let toolbox = Toolbox::builder().context::<Caller>().tool(DeleteNote).build().unwrap();
    let _ = toolbox.call_in(&Tenant, "delete_note", r#"{"id": 1}"#).await;
}

fn main() {}
