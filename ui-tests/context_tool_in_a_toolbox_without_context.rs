use typed_tools::{tool, Toolbox};

/// Who is calling.
struct Caller {
    admin: bool,
}

/// Delete a note.
#[tool(effects = Write)]
fn delete_note(#[context] caller: &Caller, id: u32) -> bool {
    caller.admin && id > 0
}

fn toolbox() {
    let _ = Toolbox::builder().tool(DeleteNote).build();
}

fn main() {}
