// Running a plan that writes on a toolbox that admits only reads is one
// error, reported once, where `run` is called: not again by `block_on` or
// `.await`, which poll the future.
use futures::executor::block_on;
use typed_tools::effect::Read;
use typed_tools::plan::typed::{lit, TypedPlan};
use typed_tools::{exec, on, tool, Toolbox};

/// Add a note.
#[tool(effects = Write)]
fn add_note(text: String) -> u32 {
    text.len() as u32
}

/// List the notes.
#[tool(effects = Read)]
fn list_notes() -> Vec<String> {
    vec![]
}

fn main() {
    let toolbox = Toolbox::allowing::<Read>().tool(ListNotes).build().unwrap();
    let plan = TypedPlan::new(on!(exec!(AddNote { text: lit("milk") }),
        Ok(id) => id,
        Err(e) => lit(0),
    ));
    let _ = block_on(plan.run(&toolbox));
    let _ = block_on(async { plan.run(&toolbox).await });
}
