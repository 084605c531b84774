//! The runtime of [typed-tools](https://docs.rs/typed-tools): effects, tools,
//! toolboxes, catalogs and dispatch. Depend on the `typed-tools` crate, which
//! re-exports all of this together with the `#[tool]` attribute.
#![warn(missing_docs)]

pub mod agent;
pub mod catalog;
pub mod coerce;
mod cut;
pub mod doc;
pub mod durable;
pub mod effect;
pub mod error;
mod json;
mod markdown;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod model;
pub mod plan;
#[cfg(any(feature = "openai", feature = "anthropic"))]
pub mod provider;
pub mod reader;
pub mod recover;
pub mod repair;
pub mod schema;
#[cfg(any(feature = "_http", feature = "mcp-http"))]
mod tls;
pub mod tool;
pub mod toolbox;

pub use catalog::{Catalog, CatalogFormat};
pub use error::{Escalation, NextStep, Severity, ToolError};
pub use reader::{CallFormat, ReadError, ToolCall};
pub use tool::{DynamicTool, Tool, ToolSpec};
pub use toolbox::{BuildError, BuildProblem, Call, ToolOutput, Toolbox, ToolboxBuilder};

#[doc(hidden)]
pub mod __private;
