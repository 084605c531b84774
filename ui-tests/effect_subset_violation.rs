use typed_tools::effect::ReadWrite;
use typed_tools::{tool, Toolbox};

/// Fetch a web page and keep a copy.
#[tool(effects = [Read, Network])]
fn fetch_page(url: String) -> String {
    url
}

fn offline_toolbox() {
    let _ = Toolbox::allowing::<ReadWrite>().tool(FetchPage).build();
}

fn main() {}
