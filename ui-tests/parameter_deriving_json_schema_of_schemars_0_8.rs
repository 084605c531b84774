// A type deriving `JsonSchema` from schemars 0.8 (what many tutorials show)
// implements another trait than schemars 1's, which typed-tools uses: the
// message says so, rather than only "add `#[derive(JsonSchema)]`".
use typed_tools::tool;

#[derive(serde::Deserialize, serde::Serialize, schemars_08::JsonSchema)]
#[schemars(crate = "schemars_08")]
struct Note {
    text: String,
}

/// Add a note.
#[tool(effects = Write)]
fn add_note(note: Note) -> Note {
    note
}

fn main() {}
