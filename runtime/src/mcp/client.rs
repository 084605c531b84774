//! [`McpClient`]: a connection to an MCP server, whose tools can join a toolbox.

use std::fmt;
use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use futures::future::BoxFuture;
use futures::FutureExt;
use rmcp::model::{CallToolRequestParams, CallToolResult, PaginatedRequestParams, Tool as McpTool};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::IntoTransport;
use rmcp::{Peer, ServiceExt};
use serde_json::Value;

use super::import::{self, Import, ImportError};
use super::{ListLimit, McpError};
use crate::tool::DynamicTool;

type Running = RunningService<RoleClient, ()>;
type Start = Box<dyn FnOnce(String) -> BoxFuture<'static, Result<Running, McpError>> + Send>;

/// A connection to an MCP server: a child process over stdio
/// ([`stdio`](Self::stdio)), a URL ([`http`](Self::http), feature `mcp-http`),
/// or any rmcp transport ([`connect`](Self::connect)).
///
/// [`import`](Self::import) turns the server's tools into [`DynamicTool`]s for
/// a toolbox, with the effects you declare ([`Import`]); from then on they
/// are tools like any other: listed in every catalog format, their arguments
/// checked against their schemas before a call leaves the process, their
/// calls recovered by the toolbox's policies, and used in type-checked plans.
///
/// Every request waits at most the client's timeout (60 s unless
/// [`Connect::timeout`] says otherwise); a server that dies, hangs or sends
/// what is not MCP gives an [`McpError`], never a panic. Cloning is cheap and
/// shares the connection, which stays open while a clone or an imported tool
/// holds it, or until [`close`](Self::close).
///
/// Needs a tokio runtime to connect; the imported tools then run their
/// requests on that runtime, so a toolbox holding them can be called from any
/// executor.
///
/// # Limits
///
/// What a server sends cannot grow the client without bound. Each limit,
/// its default, and what happens at it:
///
/// | what | limit (default) | at the limit |
/// |---|---|---|
/// | waiting for an answer (the handshake, a call, a whole listing) | [`Connect::timeout`] (60 s) | [`McpError::Timeout`]; a call is cancelled on the server (`notifications/cancelled`) |
/// | pages of one listing of tools | [`Connect::max_pages`] (100) | [`McpError::LimitExceeded`] with [`ListLimit::Pages`](super::ListLimit::Pages); nothing imported |
/// | tools in one listing | [`Connect::max_tools`] (10,000) | [`McpError::LimitExceeded`] with [`ListLimit::Tools`](super::ListLimit::Tools); nothing imported |
/// | a message over stdio | rmcp's line limit (16 MiB) | the line is dropped; the request waiting for it ends in [`McpError::Timeout`] |
/// | an answer over HTTP | rmcp's 16 MiB (a JSON body or one SSE event) | the request fails with an [`McpError`] |
/// | requests at once over HTTP | rmcp's 16 | the others wait their turn, within their timeout |
///
/// So one listing holds at most `max_pages` messages (each within the
/// message limit) and `max_tools` tools.
///
/// ```no_run
/// use std::process::Command;
/// use typed_tools::effect::EffectSet;
/// use typed_tools::mcp::{Import, McpClient};
/// use typed_tools::Toolbox;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let mut command = Command::new("python3");
/// command.arg("weather_server.py");
/// let client = McpClient::stdio(command).await?;
/// let tools = client
///     .import(&Import::declared().tool("forecast", EffectSet::NETWORK))
///     .await?;
/// let mut toolbox = Toolbox::builder();
/// for tool in tools {
///     toolbox = toolbox.dynamic(tool);
/// }
/// let toolbox = toolbox.build()?;
/// let output = toolbox.call("forecast", r#"{"city": "Lima"}"#).await?;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct McpClient {
    inner: Arc<Inner>,
}

struct Inner {
    server: String,
    peer: Peer<RoleClient>,
    running: Mutex<Option<Running>>,
    runtime: tokio::runtime::Handle,
    timeout: Duration,
    max_pages: usize,
    max_tools: usize,
}

impl fmt::Debug for McpClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpClient")
            .field("server", &self.inner.server)
            .field("timeout", &self.inner.timeout)
            .field("max_pages", &self.inner.max_pages)
            .field("max_tools", &self.inner.max_tools)
            .finish_non_exhaustive()
    }
}

impl McpClient {
    /// How long a request waits for its answer unless [`Connect::timeout`]
    /// says otherwise: 60 s.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

    /// How many pages of `tools/list` the client reads unless
    /// [`Connect::max_pages`] says otherwise: 100.
    pub const DEFAULT_MAX_PAGES: usize = 100;

    /// How many tools the client accepts from one listing unless
    /// [`Connect::max_tools`] says otherwise: 10,000.
    pub const DEFAULT_MAX_TOOLS: usize = 10_000;

    /// Starts `command` as a child process and speaks MCP over its standard
    /// input and output; its standard error goes to ours. The child is
    /// stopped when the connection closes. Await the returned [`Connect`].
    pub fn stdio(command: std::process::Command) -> Connect {
        let server = std::iter::once(command.get_program())
            .chain(command.get_args())
            .map(|part| part.to_string_lossy())
            .collect::<Vec<_>>()
            .join(" ");
        let mut command = tokio::process::Command::from(command);
        command.kill_on_drop(true);
        Connect::new(
            server,
            Box::new(move |server| {
                async move {
                    let transport =
                        rmcp::transport::TokioChildProcess::new(command).map_err(|error| {
                            McpError::Connect {
                                server: server.clone(),
                                message: error.to_string(),
                            }
                        })?;
                    ().serve(transport)
                        .await
                        .map_err(|error| McpError::from_initialize(&server, error))
                }
                .boxed()
            }),
        )
    }

    /// Speaks MCP over `transport`, any transport rmcp accepts (a pair of
    /// byte streams, a sink and a stream, a [`Transport`](rmcp::transport::Transport));
    /// `server` names it in errors. Await the returned [`Connect`].
    pub fn connect<T, E, A>(server: impl Into<String>, transport: T) -> Connect
    where
        T: IntoTransport<RoleClient, E, A> + Send + 'static,
        E: std::error::Error + Send + Sync + 'static,
        A: 'static,
    {
        Connect::new(
            server.into(),
            Box::new(move |server| {
                async move {
                    ().serve(transport)
                        .await
                        .map_err(|error| McpError::from_initialize(&server, error))
                }
                .boxed()
            }),
        )
    }

    /// The server: its command line, URL, or the name given to [`connect`](Self::connect).
    pub fn server(&self) -> &str {
        &self.inner.server
    }

    /// The rmcp peer, for what this type does not wrap (resources, prompts).
    pub fn peer(&self) -> &Peer<RoleClient> {
        &self.inner.peer
    }

    /// Every tool the server lists (`tools/list`, all pages).
    ///
    /// ```
    /// use typed_tools::mcp::{McpClient, McpServer};
    /// use typed_tools::{tool, Toolbox};
    ///
    /// /// Add two numbers.
    /// #[tool(effects = Pure)]
    /// fn add(a: i64, b: i64) -> i64 { a + b }
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let (ours, theirs) = tokio::io::duplex(4096);
    /// let (read, write) = tokio::io::split(theirs);
    /// tokio::spawn(McpServer::new(Toolbox::builder().tool(Add).build()?).serve_io(read, write));
    /// let client = McpClient::connect("calculator", ours).await?;
    ///
    /// let tools = client.tools().await?;
    /// assert_eq!(tools[0].name, "add");
    /// assert_eq!(tools[0].input_schema["required"], serde_json::json!(["a", "b"]));
    ///
    /// // A call as it is, with no toolbox around it.
    /// let result = client.call("add", serde_json::json!({"a": "two"})).await?;
    /// assert_eq!(result.is_error, Some(true)); // our server checked it
    ///
    /// client.close().await;
    /// assert!(client.tools().await.is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub async fn tools(&self) -> Result<Vec<McpTool>, McpError> {
        let peer = self.inner.peer.clone();
        let server = self.inner.server.clone();
        let (max_pages, max_tools) = (self.inner.max_pages, self.inner.max_tools);
        self.request("tools/list", async move {
            // Page by page, as rmcp's `list_all_tools`, but within the
            // limits: a server that always answers with another page would
            // otherwise be listed until memory runs out.
            let mut tools = Vec::new();
            let mut cursor = None;
            for _ in 0..max_pages {
                let params = PaginatedRequestParams::default().with_cursor(cursor);
                let page = peer
                    .list_tools(Some(params))
                    .await
                    .map_err(|error| McpError::from_service(&server, "tools/list", error))?;
                if page.tools.len() > max_tools - tools.len() {
                    return Err(McpError::LimitExceeded {
                        server,
                        limit: ListLimit::Tools(max_tools),
                    });
                }
                tools.extend(page.tools);
                match page.next_cursor {
                    Some(next) => cursor = Some(next),
                    None => return Ok(tools),
                }
            }
            Err(McpError::LimitExceeded {
                server,
                limit: ListLimit::Pages(max_pages),
            })
        })
        .await
    }

    /// Calls tool `name` on the server as it is, with no toolbox around it:
    /// no schema check, no effect gate. A tool's own failure is a result with
    /// `is_error: Some(true)`; an [`McpError`] is a failure of the connection
    /// or the protocol.
    pub async fn call(&self, name: &str, arguments: Value) -> Result<CallToolResult, McpError> {
        let mut params = CallToolRequestParams::new(name.to_owned());
        if let Value::Object(arguments) = arguments {
            params = params.with_arguments(arguments);
        }
        let peer = self.inner.peer.clone();
        let server = self.inner.server.clone();
        // Dropping `call_tool`'s future before the answer sends the server
        // `notifications/cancelled`.
        self.request("tools/call", async move {
            peer.call_tool(params)
                .await
                .map_err(|error| McpError::from_service(&server, "tools/call", error))
        })
        .await
    }

    /// The server's tools as run-time tools for a toolbox, with effects as
    /// `import` declares them (see [`Import`]); each call of one is a
    /// `tools/call` on this connection. Names, descriptions and schemas are
    /// the server's; a name the toolbox does not accept (MCP allows `.` and
    /// 128 characters, not every provider does) is reported by
    /// [`ToolboxBuilder::build`](crate::ToolboxBuilder::build).
    pub async fn import(&self, import: &Import) -> Result<Vec<DynamicTool>, ImportError> {
        let offered = self.tools().await.map_err(ImportError::Connection)?;
        import::tools(self, import, offered)
    }

    /// Closes the connection: a child process has its standard input closed,
    /// is waited for, and is killed if it does not exit. Calls of imported
    /// tools fail from then on with [`McpError::Closed`].
    pub async fn close(&self) {
        let running = self
            .inner
            .running
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take();
        if let Some(mut running) = running {
            let _ = running.close().await;
        }
    }

    /// Runs one request on the client's runtime, within the timeout. The
    /// request is dropped (and so cancelled) if this future is.
    async fn request<T, F>(&self, waiting_for: &'static str, request: F) -> Result<T, McpError>
    where
        T: Send + 'static,
        F: Future<Output = Result<T, McpError>> + Send + 'static,
    {
        let inner = Arc::clone(&self.inner);
        let server = inner.server.clone();
        let timeout = inner.timeout;
        let task = inner.runtime.spawn(async move {
            match tokio::time::timeout(timeout, request).await {
                Ok(answer) => answer,
                Err(_) => Err(McpError::Timeout {
                    server,
                    waiting_for,
                    after: timeout,
                }),
            }
        });
        match AbortOnDrop(task).await {
            Ok(answer) => answer,
            // The runtime is shutting down.
            Err(_) => Err(McpError::Closed {
                server: self.inner.server.clone(),
                waiting_for,
            }),
        }
    }
}

/// Aborts the task if the awaiting future is dropped first.
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Future for AbortOnDrop<T> {
    type Output = Result<T, tokio::task::JoinError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        Pin::new(&mut self.0).poll(cx)
    }
}

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A connection being made: set the [`timeout`](Self::timeout), then
/// `.await` it for an [`McpClient`].
#[must_use = "a connection is made only when awaited"]
pub struct Connect {
    server: String,
    timeout: Duration,
    max_pages: usize,
    max_tools: usize,
    start: Start,
}

impl fmt::Debug for Connect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Connect")
            .field("server", &self.server)
            .field("timeout", &self.timeout)
            .field("max_pages", &self.max_pages)
            .field("max_tools", &self.max_tools)
            .finish_non_exhaustive()
    }
}

impl Connect {
    pub(super) fn new(server: String, start: Start) -> Connect {
        Connect {
            server,
            timeout: McpClient::DEFAULT_TIMEOUT,
            max_pages: McpClient::DEFAULT_MAX_PAGES,
            max_tools: McpClient::DEFAULT_MAX_TOOLS,
            start,
        }
    }

    /// How long the handshake and each later request wait for an answer
    /// before failing with [`McpError::Timeout`].
    ///
    /// ```
    /// use std::time::Duration;
    /// use typed_tools::mcp::{McpClient, McpError};
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// // A peer that never answers.
    /// let (ours, _silent) = tokio::io::duplex(4096);
    /// let error = McpClient::connect("silent", ours)
    ///     .timeout(Duration::from_millis(100))
    ///     .await
    ///     .unwrap_err();
    /// assert_eq!(error.to_string(), "MCP server `silent` did not answer initialize within 100ms");
    /// assert!(matches!(error, McpError::Timeout { waiting_for: "initialize", .. }));
    /// # });
    /// ```
    pub fn timeout(mut self, timeout: Duration) -> Connect {
        self.timeout = timeout;
        self
    }

    /// How many pages of `tools/list` one listing ([`McpClient::tools`],
    /// [`McpClient::import`]) reads at most; 100 by default. A server whose
    /// listing goes on past it fails the listing with
    /// [`McpError::LimitExceeded`] naming [`ListLimit::Pages`], and none of
    /// its tools are imported.
    ///
    /// ```
    /// use typed_tools::mcp::{McpClient, McpServer};
    /// use typed_tools::Toolbox;
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let (ours, theirs) = tokio::io::duplex(4096);
    /// let (read, write) = tokio::io::split(theirs);
    /// tokio::spawn(McpServer::new(Toolbox::builder().build()?).serve_io(read, write));
    /// let client = McpClient::connect("small", ours).max_pages(5).max_tools(200).await?;
    /// assert!(format!("{client:?}").contains("max_pages: 5, max_tools: 200"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn max_pages(mut self, pages: usize) -> Connect {
        self.max_pages = pages;
        self
    }

    /// How many tools one listing accepts at most, over all its pages;
    /// 10,000 by default. A page that would take the listing past it fails
    /// the listing with [`McpError::LimitExceeded`] naming
    /// [`ListLimit::Tools`].
    pub fn max_tools(mut self, tools: usize) -> Connect {
        self.max_tools = tools;
        self
    }
}

impl IntoFuture for Connect {
    type Output = Result<McpClient, McpError>;
    type IntoFuture = BoxFuture<'static, Result<McpClient, McpError>>;

    fn into_future(self) -> Self::IntoFuture {
        async move {
            let Connect {
                server,
                timeout,
                max_pages,
                max_tools,
                start,
            } = self;
            let Ok(runtime) = tokio::runtime::Handle::try_current() else {
                return Err(McpError::Connect {
                    server,
                    message: "no tokio runtime: connect from inside one".into(),
                });
            };
            let running = match tokio::time::timeout(timeout, start(server.clone())).await {
                Ok(running) => running?,
                Err(_) => {
                    return Err(McpError::Timeout {
                        server,
                        waiting_for: "initialize",
                        after: timeout,
                    })
                }
            };
            Ok(McpClient {
                inner: Arc::new(Inner {
                    server,
                    peer: running.peer().clone(),
                    running: Mutex::new(Some(running)),
                    runtime,
                    timeout,
                    max_pages,
                    max_tools,
                }),
            })
        }
        .boxed()
    }
}

impl McpClient {
    /// A `tools/call` of `name` for an imported tool: its arguments in, its
    /// output (or an error message for the model) out.
    pub(super) fn call_for_toolbox(
        &self,
        name: Arc<str>,
        arguments: Value,
    ) -> impl Future<Output = Result<CallToolResult, McpError>> + Send + 'static {
        let client = self.clone();
        async move { client.call(&name, arguments).await }
    }
}
