//! Typed, effect-checked tools for language models, in Rust.
//!
//! - Put `#[tool(effects = Write)]` on an ordinary fn and it becomes a tool: a name,
//!   a description from its doc comment, JSON Schemas for its input and output, and
//!   the effects it declares (`Read`, `Write`, `Network`, or `Pure`). The fn stays
//!   an ordinary fn.
//! - A `Toolbox` is an explicit allow-list. It renders the catalog a model is shown
//!   (OpenAI, Anthropic, MCP, Gemini, or compact λ-Tool text) and dispatches the
//!   model's calls: unknown names, effects that are not allowed, bad JSON and wrong
//!   shapes all come back as typed `ToolError` values with a message the model can
//!   act on. Nothing that should not run, runs.
//!
//! # Quick start
//!
//! ```rust
//! use typed_tools::{tool, CatalogFormat, ToolError, Toolbox};
//!
//! /// Look up the weather in a city.
//! ///
//! /// # Arguments
//! /// * `city` - The city, like `Lima`.
//! /// * `days` - How many days ahead; today if absent.
//! #[tool(effects = Network)]
//! async fn weather(city: String, days: Option<u8>) -> Result<String, String> {
//!     match city.as_str() {
//!         "" => Err("the city is empty".into()),
//!         _ => Ok(format!("sunny in {city} in {} day(s)", days.unwrap_or(0))),
//!     }
//! }
//!
//! # futures::executor::block_on(async {
//! let toolbox = Toolbox::builder().tool(Weather).build()?;
//!
//! // What the model is shown.
//! let catalog = toolbox.catalog(CatalogFormat::Text);
//! assert_eq!(
//!     catalog.to_string(),
//!     "tool weather: {city: String, days?: Int} -{Network}-> String  -- Look up the weather in a city."
//! );
//! let openai = toolbox.catalog(CatalogFormat::OpenAiChat).to_json();
//! assert_eq!(openai[0]["function"]["parameters"]["required"], serde_json::json!(["city"]));
//!
//! // What the model sends back, dispatched.
//! let output = toolbox.call("weather", r#"{"city": "Lima"}"#).await?;
//! assert_eq!(output.json(), r#""sunny in Lima in 0 day(s)""#);
//!
//! // A bad call is a value, with a message for the model.
//! let error = toolbox.call("weather", r#"{"city": 42}"#).await.unwrap_err();
//! assert!(matches!(error, ToolError::Deserialization { .. }));
//! assert_eq!(
//!     error.for_model(),
//!     "Invalid arguments for `weather`:\n\
//!      - $.city: expected String, found integer 42\n\
//!      Send the call again with arguments of type {city: String, days?: Int}."
//! );
//!
//! // The fn is still an ordinary fn.
//! assert_eq!(weather("Lima".into(), Some(1)).await, Ok("sunny in Lima in 1 day(s)".into()));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```
//!
//! # Where to go next
//!
//! - [`Toolbox`] dispatches calls and renders catalogs ([`CatalogFormat`]); every
//!   failure is a [`ToolError`] with a message for the model.
//! - [`tool`](macro@tool) lists the attribute's arguments, state shared by several
//!   tools, and what it generates.
//! - [`reader`] reads the calls out of a model's answer in each provider's format;
//!   [`recover`] says what to do with a malformed one.
//! - [`plan`] is programs of tool calls: the typed builder ([`plan::typed`]), the
//!   text form models write, the checker and the interpreter.
//! - [`effect`] is the effects at the type level and at run time.
//! - [`toolbox::Approval`] asks a person (or a rule) before a write runs, with
//!   the arguments exactly as they will run.
//! - [`model`] is what the crate sends a model and gets back; [`agent`] runs a
//!   model over a toolbox within limits; [`plan::author`] has a model write a
//!   plan until it checks.
//! - Behind cargo features: `provider` (`openai`, `anthropic`: clients for
//!   OpenAI-compatible servers and Anthropic) and `mcp` (`mcp`, `mcp-http`:
//!   serve a toolbox over MCP, import another server's tools).
#![warn(missing_docs)]

pub use typed_tools_macros::tool;
pub use typed_tools_runtime::*;

/// serde 1, which a tool's argument and output types derive `Deserialize`
/// and `Serialize` from. Depend on `serde` yourself (any 1.x), or derive
/// through this path with `#[serde(crate = "typed_tools::serde")]`.
pub use serde;

/// schemars 1, which a tool's argument and output types derive `JsonSchema`
/// from: another major version (0.8) is another trait, which a tool does
/// not accept. Depend on `schemars = "1"` yourself, or derive through this
/// path with `#[schemars(crate = "typed_tools::schemars")]`.
pub use schemars;

/// serde_json 1, whose `Value` run-time tools (`DynamicTool`) take and give.
pub use serde_json;

/// The README's examples, run as doc tests so that they cannot drift.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
