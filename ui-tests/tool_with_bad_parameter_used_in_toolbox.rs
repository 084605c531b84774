use typed_tools::{tool, Toolbox};

struct Query {
    text: String,
}

/// Search the notes.
#[tool(effects = Read)]
fn search(query: Query) -> String {
    query.text
}

fn toolbox() {
    let _ = Toolbox::builder().tool(Search).build();
}

fn main() {}
