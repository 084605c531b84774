use typed_tools::toolbox::{Approval, Decision};
use typed_tools::{tool, Toolbox};

/// Who is calling.
struct Caller {
    admin: bool,
}

/// Delete a note.
#[tool(effects = Write)]
fn delete_note(id: u32) -> bool {
    id > 0
}

fn toolbox() {
    let only_admins = Approval::with_context(|_, caller: &Caller| {
        if caller.admin {
            Decision::Approve
        } else {
            Decision::Refuse("only admins delete".into())
        }
    });
    let _ = Toolbox::builder().tool(DeleteNote).approval(only_admins).build();
}

fn main() {}
