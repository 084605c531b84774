use typed_tools::tool;

#[derive(serde::Deserialize)]
struct Query {
    text: String,
}

/// Search the notes.
#[tool(effects = Read)]
fn search(query: Query) -> String {
    query.text
}

fn main() {}
