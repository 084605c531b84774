// A typed plan runs to its value's Rust type, read back with serde: a tool
// output that derives only `Serialize` cannot be a plan's value.
use futures::executor::block_on;
use typed_tools::plan::typed::{lit, TypedPlan};
use typed_tools::{exec, on, tool, Toolbox};

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Note {
    id: u32,
}

/// Get a note.
#[tool(effects = Read)]
fn get_note(id: u32) -> Note {
    Note { id }
}

fn main() {
    let toolbox = Toolbox::builder().tool(GetNote).build().unwrap();
    let plan = TypedPlan::new(on!(exec!(GetNote { id: lit(1) }),
        Ok(note) => note,
        Err(e) => lit(Note { id: 0 }),
    ));
    let _ = block_on(plan.run(&toolbox));
}
