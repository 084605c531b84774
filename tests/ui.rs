//! What `#[tool]` and the effect bounds say when misused, and what they accept.
//! The `.stderr` files were blessed by the toolchain in `rust-toolchain.toml`:
//! `TRYBUILD=overwrite cargo test --test ui`.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("ui-tests/*.rs");
    t.pass("ui-tests/pass/*.rs");
}
