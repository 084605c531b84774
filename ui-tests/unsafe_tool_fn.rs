use typed_tools::tool;

/// Read a byte at an address.
#[tool(effects = Read)]
unsafe fn peek(address: usize) -> u8 {
    address as u8
}

fn main() {}
