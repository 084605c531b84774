use typed_tools::effect::Read;
use typed_tools::{tool, Toolbox};

/// Delete a file.
#[tool(effects = Write)]
fn delete_file(path: String) {
    let _ = path;
}

fn read_only_toolbox() {
    let _ = Toolbox::allowing::<Read>().tool(DeleteFile).build();
}

fn main() {}
