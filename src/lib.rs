//! Typed, effect-checked tools for language models.
//!
//! See the [README](https://example.invalid/typed-tools) for a tour.
#![warn(missing_docs)]
#![doc = include_str!("../README.md")]

pub use typed_tools_macros::tool;
pub use typed_tools_runtime::*;
