//! The facade of typed-tools: the `#[tool]` attribute and the runtime, re-exported.
//! It holds no logic of its own.
#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

pub use typed_tools_macros::tool;
pub use typed_tools_runtime::*;
