use std::cell::Cell;

use typed_tools::tool;

struct Caller {
    calls: Cell<u32>,
}

/// Count the caller's calls.
#[tool(effects = Read)]
fn count(#[context] caller: &Caller) -> u32 {
    caller.calls.set(caller.calls.get() + 1);
    caller.calls.get()
}

fn main() {}
