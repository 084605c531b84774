// A literal is checked against the type of the argument it is given for, and
// the message names that type: text is no `u32`, a float no `Option<u8>`, a
// `Vec<u32>` no `Vec<String>`, one struct no other.
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use typed_tools::plan::typed::lit;
use typed_tools::{exec, tool};

#[derive(Serialize, Deserialize, JsonSchema)]
struct Reminder {
    day: u8,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Alarm {
    hour: u8,
}

/// Remind of a note.
#[tool(effects = Write)]
fn remind(id: u32, days: Option<u8>, tags: Vec<String>, reminder: Reminder) -> Result<(), String> {
    let _ = (id, days, tags, reminder);
    Ok(())
}

fn plan() {
    let _ = exec!(Remind {
        id: lit("7"),
        days: lit(2.5),
        tags: lit(vec![1u32]),
        reminder: lit(Alarm { hour: 7 }),
    });
}

fn main() {}
