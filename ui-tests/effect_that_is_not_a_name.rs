use typed_tools::tool;

/// Move a file.
#[tool(effects = [Read, "Write"])]
fn move_file(from: String, to: String) {
    let _ = (from, to);
}

fn main() {}
