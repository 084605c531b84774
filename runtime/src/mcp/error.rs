//! [`McpError`]: what can go wrong between us and an MCP peer, as values.

use std::fmt;
use std::time::Duration;

use rmcp::service::{ClientInitializeError, ServiceError};
use rmcp::transport::DynamicTransportError;

/// A failure of the connection to an MCP server, or of one request on it.
///
/// Never a panic: a server that will not start, dies, hangs, or sends what is
/// not MCP gives one of these. When an imported tool meets one during a call,
/// the toolbox reports it as [`ToolError::Execution`](crate::ToolError::Execution)
/// with this error's text (the call did not complete; the model should change
/// course).
///
/// ```
/// use std::time::Duration;
/// use typed_tools::mcp::McpError;
///
/// let error = McpError::Timeout { server: "shop".into(), waiting_for: "tools/call", after: Duration::from_secs(2) };
/// assert_eq!(error.to_string(), "MCP server `shop` did not answer tools/call within 2s");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum McpError {
    /// The server could not be started or reached: the command could not be
    /// spawned, or the HTTP connection was refused.
    Connect {
        /// The server: its command line or URL.
        server: String,
        /// What the system said.
        message: String,
    },
    /// The connection closed: the server exited, crashed, or hung up.
    Closed {
        /// The server.
        server: String,
        /// What was under way when it closed.
        waiting_for: &'static str,
    },
    /// The server did not answer within the client's timeout.
    Timeout {
        /// The server.
        server: String,
        /// The request that was not answered (`initialize`, `tools/list`, `tools/call`).
        waiting_for: &'static str,
        /// The timeout.
        after: Duration,
    },
    /// The server sent a message that is not what the protocol says: the
    /// wrong response, a result of the wrong shape, a handshake out of order.
    Malformed {
        /// The server.
        server: String,
        /// What was wrong.
        message: String,
    },
    /// The server answered a request with a JSON-RPC error.
    Protocol {
        /// The server.
        server: String,
        /// The JSON-RPC error code.
        code: i32,
        /// The error's message.
        message: String,
    },
    /// The server's listing of its tools went past a limit of the client
    /// ([`Connect::max_pages`](super::Connect::max_pages),
    /// [`Connect::max_tools`](super::Connect::max_tools)): a server that
    /// always answers with another page is not listed until memory runs
    /// out. Nothing of the listing is kept.
    ///
    /// ```
    /// use typed_tools::mcp::{ListLimit, McpError};
    ///
    /// let error = McpError::LimitExceeded { server: "shop".into(), limit: ListLimit::Pages(100) };
    /// assert_eq!(
    ///     error.to_string(),
    ///     "MCP server `shop` listed its tools in more than 100 pages (limit `max_pages`)"
    /// );
    /// ```
    LimitExceeded {
        /// The server.
        server: String,
        /// The limit, with its value.
        limit: ListLimit,
    },
}

/// A limit of [`McpClient`](super::McpClient) on one listing of a server's
/// tools, with its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ListLimit {
    /// [`Connect::max_pages`](super::Connect::max_pages): pages of
    /// `tools/list` read.
    Pages(usize),
    /// [`Connect::max_tools`](super::Connect::max_tools): tools accepted,
    /// over all the pages.
    Tools(usize),
}

impl ListLimit {
    /// The name of the setter of [`Connect`](super::Connect) that sets it:
    /// `max_pages`, `max_tools`.
    pub fn name(&self) -> &'static str {
        match self {
            ListLimit::Pages(_) => "max_pages",
            ListLimit::Tools(_) => "max_tools",
        }
    }
}

impl fmt::Display for ListLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ListLimit::Pages(pages) => write!(f, "in more than {pages} pages"),
            ListLimit::Tools(tools) => write!(f, "more than {tools} tools"),
        }
    }
}

impl McpError {
    /// The server the error is about: its command line or URL.
    ///
    /// ```
    /// use typed_tools::mcp::McpError;
    ///
    /// let error = McpError::Closed { server: "python3 server.py".into(), waiting_for: "tools/list" };
    /// assert_eq!(error.server(), "python3 server.py");
    /// ```
    pub fn server(&self) -> &str {
        match self {
            McpError::Connect { server, .. }
            | McpError::Closed { server, .. }
            | McpError::Timeout { server, .. }
            | McpError::Malformed { server, .. }
            | McpError::Protocol { server, .. }
            | McpError::LimitExceeded { server, .. } => server,
        }
    }

    pub(crate) fn from_service(
        server: &str,
        waiting_for: &'static str,
        error: ServiceError,
    ) -> McpError {
        let server = server.to_owned();
        match error {
            ServiceError::McpError(error) => McpError::Protocol {
                server,
                code: error.code.0,
                message: error.message.into_owned(),
            },
            ServiceError::Timeout { timeout } => McpError::Timeout {
                server,
                waiting_for,
                after: timeout,
            },
            ServiceError::TransportClosed | ServiceError::Cancelled { .. } => McpError::Closed {
                server,
                waiting_for,
            },
            ServiceError::TransportSend(error) => McpError::transport(server, waiting_for, error),
            other => McpError::Malformed {
                server,
                message: format!("{waiting_for}: {other}"),
            },
        }
    }

    pub(crate) fn from_initialize(server: &str, error: ClientInitializeError) -> McpError {
        let server = server.to_owned();
        match error {
            ClientInitializeError::ConnectionClosed(_) | ClientInitializeError::Cancelled => {
                McpError::Closed {
                    server,
                    waiting_for: "initialize",
                }
            }
            ClientInitializeError::TransportError { error, .. } => {
                McpError::transport(server, "initialize", error)
            }
            ClientInitializeError::JsonRpcError(error) => McpError::Protocol {
                server,
                code: error.code.0,
                message: error.message.into_owned(),
            },
            other => McpError::Malformed {
                server,
                message: other.to_string(),
            },
        }
    }
}

impl McpError {
    /// A message that could not be sent: the server hung up (a broken pipe,
    /// a reset connection) or could not be reached.
    fn transport(
        server: String,
        waiting_for: &'static str,
        error: DynamicTransportError,
    ) -> McpError {
        let hung_up = error
            .error
            .downcast_ref::<std::io::Error>()
            .is_some_and(|error| {
                matches!(
                    error.kind(),
                    std::io::ErrorKind::BrokenPipe
                        | std::io::ErrorKind::ConnectionReset
                        | std::io::ErrorKind::UnexpectedEof
                )
            });
        if hung_up {
            McpError::Closed {
                server,
                waiting_for,
            }
        } else {
            McpError::Connect {
                server,
                message: error.to_string(),
            }
        }
    }
}

impl fmt::Display for McpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            McpError::Connect { server, message } => {
                write!(f, "could not reach MCP server `{server}`: {message}")
            }
            McpError::Closed {
                server,
                waiting_for,
            } => write!(
                f,
                "MCP server `{server}` closed the connection during {waiting_for}"
            ),
            McpError::Timeout {
                server,
                waiting_for,
                after,
            } => write!(
                f,
                "MCP server `{server}` did not answer {waiting_for} within {after:?}"
            ),
            McpError::Malformed { server, message } => {
                write!(
                    f,
                    "MCP server `{server}` sent a malformed message: {message}"
                )
            }
            McpError::Protocol {
                server,
                code,
                message,
            } => write!(f, "MCP server `{server}` answered error {code}: {message}"),
            McpError::LimitExceeded { server, limit } => match limit {
                ListLimit::Pages(_) => write!(
                    f,
                    "MCP server `{server}` listed its tools {limit} (limit `{}`)",
                    limit.name()
                ),
                ListLimit::Tools(_) => write!(
                    f,
                    "MCP server `{server}` listed {limit} (limit `{}`)",
                    limit.name()
                ),
            },
        }
    }
}

impl std::error::Error for McpError {}

/// Why a server stopped serving other than by a clean shutdown: the
/// handshake failed, or the transport broke.
///
/// ```
/// use typed_tools::mcp::ServeError;
///
/// fn report(error: ServeError) -> String {
///     format!("the MCP server stopped: {error}")
/// }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServeError {
    message: String,
}

impl ServeError {
    pub(crate) fn new(message: String) -> ServeError {
        ServeError { message }
    }
}

impl fmt::Display for ServeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ServeError {}
