//! Placeholder so the workspace builds; the repair benchmark replaces it.
fn main() {}
