use std::cell::Cell;

use typed_tools::tool;

struct Counter {
    count: Cell<u32>,
}

/// Count one more.
#[tool(effects = Write)]
fn count(#[state] counter: &Counter) -> u32 {
    counter.count.set(counter.count.get() + 1);
    counter.count.get()
}

fn main() {}
