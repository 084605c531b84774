#![deny(warnings)]

use typed_tools::effect::{EffectSet, Effects, Pure, ReadWrite};
use typed_tools::{tool, Tool};

/// Move a file.
#[tool(effects = [Read, Write], name = "move-file", idempotent)]
fn move_file(from: String, to: String) {
    let _ = (from, to);
}

/// Send an email.
#[tool(effects = [Network, Write], idempotent = false)]
fn send_email(to: String) {
    let _ = to;
}

/// Add two numbers.
#[tool(effects = Pure, crate = ::typed_tools)]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// The type of a keyword-named tool.
#[tool(effects = Pure)]
fn r#type(value: String) -> String {
    value
}

fn main() {
    assert_eq!(MoveFile::NAME, "move-file");
    assert!(MoveFile::IDEMPOTENT);
    assert!(!SendEmail::IDEMPOTENT);
    let _: fn() -> <MoveFile as Tool>::Effects = || ReadWrite;
    assert_eq!(
        <<SendEmail as Tool>::Effects as Effects>::SET,
        EffectSet::WRITE | EffectSet::NETWORK
    );
    let _: fn() -> <Add as Tool>::Effects = || Pure;
    assert_eq!(Type::NAME, "type");
}
