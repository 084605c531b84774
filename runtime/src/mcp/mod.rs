//! The Model Context Protocol, both ways (feature `mcp`; HTTP with `mcp-http`).
//!
//! - **Serve** a toolbox to MCP clients (desktop assistants, IDEs, agent
//!   frameworks in any language) with [`McpServer`]: over stdio
//!   ([`McpServer::serve_stdio`]) or streamable HTTP
//!   ([`McpServer::serve_http`], feature `mcp-http`). `tools/list` is the
//!   toolbox's [MCP catalog](crate::CatalogFormat::Mcp); `tools/call` is
//!   [`Toolbox::call`](crate::Toolbox::call), so the allow-list, the effect
//!   gate, validation and recovery apply to MCP calls exactly as to any
//!   other.
//! - **Import** an MCP server's tools with [`McpClient`]: a child process over
//!   stdio, or a URL. [`McpClient::import`] gives [`DynamicTool`](crate::DynamicTool)s with
//!   the effects you declare ([`Import`]), which then get what every tool
//!   gets: catalogs in every format, their arguments checked against their
//!   schemas before a call leaves the process, recovery, and type-checked
//!   plans.
//!
//! Built on [rmcp](https://docs.rs/rmcp), the official Rust SDK, re-exported
//! as [`rmcp`] so that its types match ours. Both need a tokio runtime.
//!
//! # Growing past one machine
//!
//! The HTTP server keeps no state between requests that a call needs (rmcp's
//! stateless mode: no session id, each POST answered on its own), and a
//! toolbox holds no per-client state. So any number of instances can run
//! behind an ordinary load balancer, round robin, with no sticky sessions;
//! tools that share state (a database) share it through their `#[state]`.
//!
//! ```
//! use typed_tools::effect::EffectSet;
//! use typed_tools::mcp::{Import, McpClient, McpServer};
//! use typed_tools::plan::{Interpreter, Plan};
//! use typed_tools::{tool, Toolbox};
//!
//! /// Add two numbers.
//! #[tool(effects = Pure)]
//! fn add(a: i64, b: i64) -> i64 { a + b }
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! // A server, here in the same process over an in-memory pipe.
//! let (ours, theirs) = tokio::io::duplex(4096);
//! let (read, write) = tokio::io::split(theirs);
//! tokio::spawn(McpServer::new(Toolbox::builder().tool(Add).build()?).serve_io(read, write));
//!
//! // Its tools, imported with the effects we state.
//! let client = McpClient::connect("calculator", ours).await?;
//! let tools = client.import(&Import::declared().tool("add", EffectSet::PURE)).await?;
//! let mut toolbox = Toolbox::builder();
//! for tool in tools {
//!     toolbox = toolbox.dynamic(tool);
//! }
//! let toolbox = toolbox.build()?;
//!
//! // Checked here before anything is sent.
//! let error = toolbox.call("add", r#"{"a": "two", "b": 3}"#).await.unwrap_err();
//! assert!(error.for_model().contains("$.a: expected Int"));
//! assert_eq!(toolbox.call("add", r#"{"a": 2, "b": 3}"#).await?.json(), r#""5""#);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```

mod client;
#[cfg(feature = "mcp-http")]
mod connection;
mod error;
#[cfg(feature = "mcp-http")]
mod http;
mod import;
mod in_flight;
mod server;

pub use rmcp;

pub use client::{Connect, McpClient};
pub use error::{ListLimit, McpError, ServeError};
pub use import::{Import, ImportError, Unannotated};
pub use server::{McpRequest, McpServer};
