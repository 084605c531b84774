//! Placeholder so the workspace builds; the dispatch benchmark replaces it.
fn main() {}
