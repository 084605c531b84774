#![deny(warnings)]

use typed_tools::{tool, ToolSpec};

/// Search the notes.
///
/// # Arguments
/// * `text` - What to look for.
#[tool(effects = Read)]
fn search(
    text: String,
    /// How many notes to return at most.
    limit: Option<u32>,
    #[serde(default)]
    #[schemars(range(max = 10))]
    page: u8,
) -> Vec<String> {
    vec![text; limit.unwrap_or(1) as usize + usize::from(page)]
}

fn main() {
    let spec = ToolSpec::of::<Search>();
    assert_eq!(spec.description(), "Search the notes.");
    let schema = spec.input_schema();
    assert_eq!(schema["properties"]["text"]["description"], "What to look for.");
    assert_eq!(
        schema["properties"]["limit"]["description"],
        "How many notes to return at most."
    );
    assert_eq!(schema["required"], serde_json::json!(["text"]));
}
