#![deny(warnings)]
// A user's types derived through the facade's re-exports of serde and
// schemars, the versions typed-tools uses, with no dependency on either.

use typed_tools::schemars::JsonSchema;
use typed_tools::serde::{Deserialize, Serialize};
use typed_tools::{tool, Toolbox};

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(crate = "typed_tools::serde")]
#[schemars(crate = "typed_tools::schemars")]
struct Note {
    id: u32,
    text: String,
}

/// Add a note.
#[tool(effects = Write, destructive = false)]
fn add_note(text: String) -> Note {
    Note { id: 1, text }
}

fn main() {
    let toolbox = Toolbox::builder().tool(AddNote).build().unwrap();
    let note = futures::executor::block_on(toolbox.call("add_note", r#"{"text": "milk"}"#)).unwrap();
    let value: typed_tools::serde_json::Value = note.to_value();
    assert_eq!(value, typed_tools::serde_json::json!({"id": 1, "text": "milk"}));
}
