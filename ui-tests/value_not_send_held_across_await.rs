use std::rc::Rc;

use typed_tools::tool;

async fn tick() {}

/// Count.
#[tool(effects = Pure)]
async fn count(n: u32) -> u32 {
    let rc = Rc::new(n);
    tick().await;
    *rc
}

fn main() {}
