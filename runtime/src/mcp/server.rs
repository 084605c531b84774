//! [`McpServer`]: a toolbox served to MCP clients.

use std::fmt;
use std::sync::Arc;

use futures::future::{select, Either};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool as McpTool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite};

use crate::catalog::CatalogFormat;
use crate::effect::{Effects, ReadWriteNetwork};
use crate::error::ToolError;
use crate::toolbox::{
    NoContext, ServeWithoutContext, ToolOutput, Toolbox, ToolboxContext, WithContext,
};

use super::in_flight::Capped;
use super::ServeError;

/// A [`Toolbox`] served over MCP: `tools/list` is the toolbox's
/// [MCP catalog](CatalogFormat::Mcp), `tools/call` is
/// [`Toolbox::call`](crate::Toolbox::call).
///
/// Every call goes through the toolbox's one door, so its allow-list, effect
/// gate (serve a [`restrict`](crate::Toolbox::restrict)ed view to serve less),
/// argument validation and recovery policies all apply. What the model
/// caused — an unknown tool, bad arguments, the tool's own error — comes
/// back as a tool result with `isError: true` and
/// [`ToolError::for_model`](crate::ToolError::for_model)'s text, so that the
/// model can read it and fix its call; only what is wrong with the protocol
/// itself is a JSON-RPC error. (MCP's specification lists an unknown tool
/// among protocol errors; a model that hallucinated a name is better served
/// by the list of names it may use.)
///
/// A successful result carries the output as text (a string output as the
/// string, anything else as its JSON) and, when the output is a JSON object,
/// as `structuredContent` (the tools whose output schema is an object
/// advertise it as their `outputSchema`). When recovery repaired the call,
/// a second text block tells the model what it should send next time.
///
/// A call in flight is dropped when the client cancels it
/// (`notifications/cancelled`, or an HTTP client that disconnects): the tool's
/// future is not polled again.
///
/// ```no_run
/// use typed_tools::mcp::McpServer;
/// use typed_tools::{tool, Toolbox};
///
/// /// Add two numbers.
/// #[tool(effects = Pure)]
/// fn add(a: i64, b: i64) -> i64 { a + b }
///
/// #[tokio::main(flavor = "current_thread")]
/// async fn main() -> Result<(), Box<dyn std::error::Error>> {
///     let toolbox = Toolbox::builder().tool(Add).build()?;
///     // Until the client closes the server's standard input.
///     McpServer::new(toolbox).name("calculator", "1.0.0").serve_stdio().await?;
///     Ok(())
/// }
/// ```
///
/// A tool the view does not allow is not listed, and a call of it is
/// answered as a call of a name the toolbox does not have, with the listed
/// tools as the names to use: a client cannot tell it exists. (Called in
/// process, the view refuses it for its effects, which tells the developer
/// what the tool does.)
///
/// ```
/// use typed_tools::effect::EffectSet;
/// use typed_tools::mcp::{McpClient, McpServer};
/// use typed_tools::{tool, Toolbox};
///
/// /// Read a note.
/// #[tool(effects = Read)]
/// fn read_note(id: u32) -> String { format!("note {id}") }
/// /// Delete a note.
/// #[tool(effects = Write)]
/// fn delete_note(id: u32) {}
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let toolbox = Toolbox::builder().tool(ReadNote).tool(DeleteNote).build()?;
/// let read_only = toolbox.restrict(EffectSet::READ);
/// let (ours, theirs) = tokio::io::duplex(4096);
/// let (read, write) = tokio::io::split(theirs);
/// tokio::spawn(McpServer::new(read_only.clone()).serve_io(read, write));
/// let client = McpClient::connect("notes", ours).await?;
///
/// let hidden = client.call("delete_note", serde_json::json!({"id": 1})).await?;
/// assert_eq!(hidden.is_error, Some(true));
/// assert_eq!(
///     hidden.content[0].as_text().unwrap().text,
///     "There is no tool named `delete_note`. Available tools: `read_note`."
/// );
/// // In process, the same view says why.
/// let denied = read_only.call("delete_note", r#"{"id": 1}"#).await.unwrap_err();
/// assert!(denied.to_string().starts_with("effect violation: tool `delete_note` has effects {Write}"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
///
/// # Limits
///
/// What a client sends cannot grow the server without bound. Each limit,
/// its default, and what happens at it:
///
/// | what | limit (default) | at the limit |
/// |---|---|---|
/// | a call's arguments | the toolbox's [`max_argument_bytes`](crate::ToolboxBuilder::max_argument_bytes) (1 MiB) | the call is answered `isError: true` with [`ToolError::ArgsTooLarge`](crate::ToolError::ArgsTooLarge), the tool not run |
/// | a message over stdio | rmcp's line limit (16 MiB) | the line is dropped unread (rmcp logs it); a request in it is never answered |
/// | a request over HTTP | the larger of 4 MiB and the argument limit + 64 KiB | `413 Payload Too Large` |
/// | requests unanswered, one stdio client | [`max_in_flight`](Self::max_in_flight) (64, and as many waiting) | nothing more is read from that client until an answer is written |
/// | HTTP connections at once | [`max_connections`](Self::max_connections) (256) | new connections wait in the listen backlog to be accepted; none is refused or dropped for it, and answers close their connections (`Connection: close`) so that the waiting take turns |
/// | an HTTP request's line and headers | [`header_timeout`](Self::header_timeout) (10 s) | the connection is closed |
/// | an HTTP request's body | [`body_timeout`](Self::body_timeout) (30 s) | what was read is dropped; `408 Request Timeout` naming the limit, and the connection closed |
/// | an HTTP connection moving no byte, no request being answered | [`idle_timeout`](Self::idle_timeout) (60 s) | the connection is closed |
///
/// The HTTP limits are [`serve_http`](Self::serve_http)'s (feature
/// `mcp-http`); [`http_router`](Self::http_router) has the body limit
/// alone. Over stdio one process serves one client, so its limits are that
/// client's. A call itself has no time limit here: the client decides how
/// long to wait, and cancelling (or, over HTTP, hanging up) drops the call.
/// So at most `max_connections` request bodies (each within the body
/// limit: 1 GiB at the defaults, were every connection to send the largest)
/// and `max_connections` calls are held at once over HTTP, and
/// `max_in_flight` answers and as many waiting requests over stdio.
///
/// # A context per request
///
/// A toolbox whose tools take a [context](crate::toolbox::context) is
/// served with [`with_context`](Self::with_context): a function of the
/// request (over HTTP, its headers) makes each call's context, so that a
/// bearer token becomes the caller's identity, and the tools and approvals
/// see who is asking.
pub struct McpServer<A: Effects = ReadWriteNetwork, C: ToolboxContext = NoContext> {
    toolbox: Toolbox<A, C>,
    /// Makes each call's context from its request.
    context: Arc<MakeContext<C::Value>>,
    /// The MCP catalog, read once into rmcp's types.
    tools: Arc<Result<Vec<McpTool>, String>>,
    info: Arc<ServerConfig>,
    max_in_flight: usize,
    #[cfg(feature = "mcp-http")]
    pub(super) allowed_hosts: Option<Vec<String>>,
    #[cfg(feature = "mcp-http")]
    pub(super) http_limits: super::connection::Limits,
}

/// What makes a call's context from its request.
type MakeContext<X> = dyn Fn(&McpRequest<'_>) -> Result<X, String> + Send + Sync;

impl<A: Effects, C: ToolboxContext> Clone for McpServer<A, C> {
    fn clone(&self) -> Self {
        McpServer {
            toolbox: self.toolbox.clone(),
            context: Arc::clone(&self.context),
            tools: Arc::clone(&self.tools),
            info: Arc::clone(&self.info),
            max_in_flight: self.max_in_flight,
            #[cfg(feature = "mcp-http")]
            allowed_hosts: self.allowed_hosts.clone(),
            #[cfg(feature = "mcp-http")]
            http_limits: self.http_limits,
        }
    }
}

impl<A: Effects, C: ToolboxContext> fmt::Debug for McpServer<A, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpServer")
            .field("toolbox", &self.toolbox)
            .field("server_info", &self.info.server_info)
            .field("max_in_flight", &self.max_in_flight)
            .finish_non_exhaustive()
    }
}

impl<A: Effects, C: ToolboxContext> McpServer<A, C> {
    /// How many requests a client over stdio (or any byte stream) may have
    /// unanswered at once unless [`max_in_flight`](Self::max_in_flight)
    /// says otherwise: 64.
    pub const DEFAULT_MAX_IN_FLIGHT: usize = 64;

    /// Serves `toolbox`: every tool it lets run, and no other. Named
    /// `typed-tools` with this crate's version until [`name`](Self::name)
    /// says otherwise.
    ///
    /// ```
    /// use typed_tools::effect::EffectSet;
    /// use typed_tools::mcp::McpServer;
    /// use typed_tools::{tool, Toolbox};
    ///
    /// /// Read a note.
    /// #[tool(effects = Read)]
    /// fn read_note(id: u32) -> String { format!("note {id}") }
    /// /// Delete a note.
    /// #[tool(effects = Write)]
    /// fn delete_note(id: u32) {}
    ///
    /// let toolbox = Toolbox::builder().tool(ReadNote).tool(DeleteNote).build().unwrap();
    /// // Clients of this server can list and call `read_note` only.
    /// let server = McpServer::new(toolbox.restrict(EffectSet::READ));
    /// assert_eq!(server.tools().len(), 1);
    /// ```
    ///
    /// A toolbox whose tools take a [context](crate::toolbox::context) is
    /// served with [`with_context`](Self::with_context); `new` does not
    /// compile there.
    pub fn new(toolbox: Toolbox<A, C>) -> McpServer<A, C>
    where
        C::Value: ServeWithoutContext,
    {
        McpServer::serving(
            toolbox,
            Arc::new(|_: &McpRequest<'_>| Ok(<C::Value as ServeWithoutContext>::nothing())),
        )
    }

    /// The server of `toolbox`, each call's context made by `context`.
    fn serving(toolbox: Toolbox<A, C>, context: Arc<MakeContext<C::Value>>) -> McpServer<A, C> {
        let catalog = toolbox.catalog(CatalogFormat::Mcp);
        let tools = catalog
            .as_json()
            .and_then(|catalog| catalog.get("tools"))
            .cloned()
            .ok_or_else(|| "the MCP catalog has no `tools`".to_owned())
            .and_then(|tools| {
                serde_json::from_value::<Vec<McpTool>>(tools).map_err(|error| error.to_string())
            });
        let info = ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                "typed-tools",
                env!("CARGO_PKG_VERSION"),
            ));
        McpServer {
            toolbox,
            context,
            tools: Arc::new(tools),
            info: Arc::new(info),
            max_in_flight: Self::DEFAULT_MAX_IN_FLIGHT,
            #[cfg(feature = "mcp-http")]
            allowed_hosts: None,
            #[cfg(feature = "mcp-http")]
            http_limits: super::connection::Limits::default(),
        }
    }

    /// The name and version the server gives clients in its `initialize` answer.
    ///
    /// ```
    /// use typed_tools::mcp::McpServer;
    /// use typed_tools::Toolbox;
    ///
    /// let server = McpServer::new(Toolbox::builder().build().unwrap()).name("shop", "2.1.0");
    /// assert!(format!("{server:?}").contains("\"shop\""));
    /// ```
    pub fn name(mut self, name: impl Into<String>, version: impl Into<String>) -> McpServer<A, C> {
        Arc::make_mut(&mut self.info).server_info = Implementation::new(name, version);
        self
    }

    /// Instructions for the client, sent in the `initialize` answer (clients
    /// may put them in the model's prompt).
    ///
    /// ```
    /// use typed_tools::mcp::McpServer;
    /// use typed_tools::Toolbox;
    ///
    /// let server = McpServer::new(Toolbox::builder().build().unwrap())
    ///     .instructions("Look an account up before refunding it.");
    /// ```
    pub fn instructions(mut self, instructions: impl Into<String>) -> McpServer<A, C> {
        Arc::make_mut(&mut self.info).instructions = Some(instructions.into());
        self
    }

    /// How many requests one client over stdio (or any byte stream given to
    /// [`serve_io`](Self::serve_io)) may have unanswered at once; 64 by
    /// default, at least 1. Past the cap, requests wait to be handled, as
    /// many again at most; then the server reads nothing more from that
    /// client until an answer has been written. So a client that sends
    /// requests and never reads the answers fills its own pipe and waits,
    /// and the server holds at most this many answers and this many waiting
    /// requests for it, however much is sent. Notifications are still read
    /// while requests wait, so a client can cancel a call that hangs
    /// (`notifications/cancelled`); a cancelled request no longer counts.
    ///
    /// Over HTTP each connection carries one request at a time, so there
    /// the cap on connections bounds the requests in flight.
    ///
    /// ```
    /// use typed_tools::mcp::McpServer;
    /// use typed_tools::Toolbox;
    ///
    /// let server = McpServer::new(Toolbox::builder().build().unwrap()).max_in_flight(8);
    /// assert!(format!("{server:?}").contains("max_in_flight: 8"));
    /// ```
    pub fn max_in_flight(mut self, requests: usize) -> McpServer<A, C> {
        self.max_in_flight = requests.max(1);
        self
    }

    /// The tools as `tools/list` lists them: the toolbox's MCP catalog, with
    /// the annotations derived from each tool's effects.
    ///
    /// ```
    /// use typed_tools::mcp::McpServer;
    /// use typed_tools::{tool, Toolbox};
    ///
    /// /// Delete a note.
    /// #[tool(effects = Write)]
    /// fn delete_note(id: u32) {}
    ///
    /// let server = McpServer::new(Toolbox::builder().tool(DeleteNote).build().unwrap());
    /// let annotations = server.tools()[0].annotations.as_ref().unwrap();
    /// assert_eq!(annotations.read_only_hint, Some(false));
    /// assert_eq!(annotations.destructive_hint, Some(true));
    /// ```
    pub fn tools(&self) -> &[McpTool] {
        match &*self.tools {
            Ok(tools) => tools,
            Err(_) => &[],
        }
    }

    /// The toolbox served.
    pub fn toolbox(&self) -> &Toolbox<A, C> {
        &self.toolbox
    }

    /// Serves one client over this process's standard input and output, the
    /// way MCP clients launch local servers, until the client closes the
    /// server's standard input (MCP's shutdown for stdio). Write nothing else
    /// to standard output while it runs: it carries the protocol. Needs a
    /// tokio runtime with I/O enabled.
    pub async fn serve_stdio(self) -> Result<(), ServeError> {
        let (read, write) = rmcp::transport::stdio_pipes();
        self.serve_io(read, write).await
    }

    /// Serves one client over a byte stream pair (newline-delimited JSON-RPC,
    /// as on stdio) until the stream ends: a pipe, a socket, or an in-memory
    /// [`tokio::io::duplex`] in tests.
    ///
    /// ```
    /// use typed_tools::mcp::{Import, McpClient, McpServer};
    /// use typed_tools::{tool, Toolbox};
    ///
    /// /// Add two numbers.
    /// #[tool(effects = Pure)]
    /// fn add(a: i64, b: i64) -> i64 { a + b }
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let (ours, theirs) = tokio::io::duplex(4096);
    /// let (read, write) = tokio::io::split(theirs);
    /// let server = McpServer::new(Toolbox::builder().tool(Add).build()?);
    /// tokio::spawn(server.serve_io(read, write));
    ///
    /// let client = McpClient::connect("calculator", ours).await?;
    /// let result = client.call("add", serde_json::json!({"a": 2, "b": 3})).await?;
    /// assert_eq!(result.is_error, Some(false));
    /// assert_eq!(result.content[0].as_text().unwrap().text, "5");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub async fn serve_io<R, W>(self, read: R, write: W) -> Result<(), ServeError>
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let transport = Capped::new(
            AsyncRwTransport::new_server(read, write),
            self.max_in_flight,
        );
        let running = Handler(self)
            .serve(transport)
            .await
            .map_err(|error| ServeError::new(error.to_string()))?;
        running
            .waiting()
            .await
            .map(drop)
            .map_err(|error| ServeError::new(error.to_string()))
    }

    #[cfg(feature = "mcp-http")]
    pub(super) fn handler(&self) -> Handler<A, C> {
        Handler(self.clone())
    }
}

impl<A: Effects, X: Send + Sync + 'static> McpServer<A, WithContext<X>> {
    /// Serves `toolbox`, whose tools take a [context](crate::toolbox::context)
    /// of type `X`, making each call's context with `context` from the call's
    /// request ([`McpRequest`]: over HTTP, its headers). The toolbox holds
    /// none: calls made at once by different clients each see their own.
    /// When `context` refuses the request (no token, a token it does not
    /// know), the call is not run and the client gets a JSON-RPC error
    /// (`-32600`, invalid request) with `the request was refused: ` and the
    /// reason; listing the tools needs no context.
    ///
    /// ```
    /// use typed_tools::mcp::{McpRequest, McpServer};
    /// use typed_tools::{tool, Toolbox};
    ///
    /// /// Who is calling.
    /// struct User { name: String }
    ///
    /// /// The name of the user calling.
    /// #[tool(effects = Read)]
    /// fn whoami(#[context] user: &User) -> String { user.name.clone() }
    ///
    /// let toolbox = Toolbox::builder().context::<User>().tool(Whoami).build().unwrap();
    /// let server = McpServer::with_context(toolbox, |request: &McpRequest<'_>| {
    ///     // A bearer token is the user's identity (a real server checks it).
    ///     match request.bearer_token() {
    ///         Some("token-of-ana") => Ok(User { name: "ana".into() }),
    ///         Some(_) => Err("unknown token".to_owned()),
    ///         None => Err("no bearer token: send `Authorization: Bearer <token>`".to_owned()),
    ///     }
    /// });
    /// assert_eq!(server.tools().len(), 1);
    /// ```
    pub fn with_context<F, E>(toolbox: Toolbox<A, WithContext<X>>, context: F) -> Self
    where
        F: Fn(&McpRequest<'_>) -> Result<X, E> + Send + Sync + 'static,
        E: fmt::Display,
    {
        let make = move |request: &McpRequest<'_>| context(request).map_err(|e| e.to_string());
        McpServer::serving(toolbox, Arc::new(make))
    }
}

/// The request a call came in, as [`McpServer::with_context`]'s function
/// sees it: over HTTP (feature `mcp-http`) its headers, and over any
/// transport rmcp's [`RequestContext`] (the request's id and `_meta`).
///
/// ```
/// use typed_tools::mcp::McpRequest;
///
/// /// Who is calling.
/// struct Tenant { id: String, request: String }
///
/// // A context from a header of the HTTP request, and the JSON-RPC id.
/// fn tenant_of(request: &McpRequest<'_>) -> Result<Tenant, String> {
///     let id = request.header("x-tenant").ok_or("no `X-Tenant` header")?;
///     Ok(Tenant { id: id.to_owned(), request: format!("{:?}", request.rmcp().id) })
/// }
/// # let _ = tenant_of;
/// ```
#[derive(Debug)]
pub struct McpRequest<'a> {
    context: &'a RequestContext<RoleServer>,
}

impl<'a> McpRequest<'a> {
    /// rmcp's context of the request: its id, `_meta`, and extensions.
    ///
    /// ```
    /// use typed_tools::mcp::McpRequest;
    ///
    /// // A request id for the logs, over any transport.
    /// fn request_id(request: &McpRequest<'_>) -> Result<String, String> {
    ///     Ok(format!("{:?}", request.rmcp().id))
    /// }
    /// # let _ = request_id;
    /// ```
    pub fn rmcp(&self) -> &'a RequestContext<RoleServer> {
        self.context
    }

    /// The HTTP request's line and headers, when it came over HTTP; `None`
    /// over stdio.
    ///
    /// ```
    /// use typed_tools::mcp::McpRequest;
    ///
    /// // Refuse what did not come over HTTP.
    /// fn path(request: &McpRequest<'_>) -> Result<String, String> {
    ///     let parts = request.http().ok_or("HTTP only")?;
    ///     Ok(parts.uri.path().to_owned())
    /// }
    /// # let _ = path;
    /// ```
    #[cfg(feature = "mcp-http")]
    pub fn http(&self) -> Option<&'a axum::http::request::Parts> {
        self.context.extensions.get::<axum::http::request::Parts>()
    }

    /// The HTTP request's header `name`, when it came over HTTP and has it
    /// as text.
    ///
    /// ```
    /// use typed_tools::mcp::McpRequest;
    ///
    /// fn tenant(request: &McpRequest<'_>) -> Result<String, String> {
    ///     request.header("x-tenant").map(str::to_owned).ok_or_else(|| "no `X-Tenant` header".to_owned())
    /// }
    /// # let _ = tenant;
    /// ```
    pub fn header(&self, name: &str) -> Option<&'a str> {
        #[cfg(feature = "mcp-http")]
        {
            self.http()?.headers.get(name)?.to_str().ok()
        }
        #[cfg(not(feature = "mcp-http"))]
        {
            let _ = name;
            None
        }
    }

    /// The token of an `Authorization: Bearer <token>` header, when the
    /// request came over HTTP with one (the scheme's case is not minded).
    /// See [`McpServer::with_context`] for a server that makes its user
    /// from it.
    ///
    /// ```
    /// use typed_tools::mcp::McpRequest;
    ///
    /// fn token(request: &McpRequest<'_>) -> Result<String, String> {
    ///     request.bearer_token().map(str::to_owned).ok_or_else(|| "no bearer token".to_owned())
    /// }
    /// # let _ = token;
    /// ```
    pub fn bearer_token(&self) -> Option<&'a str> {
        let value = self.header("authorization")?.trim_start();
        let (scheme, token) = value.split_once(' ')?;
        let token = token.trim();
        (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
    }
}

/// What rmcp drives: the server behind a handle rmcp can clone per session.
pub(super) struct Handler<A: Effects, C: ToolboxContext>(McpServer<A, C>);

impl<A: Effects, C: ToolboxContext> Clone for Handler<A, C> {
    fn clone(&self) -> Self {
        Handler(self.0.clone())
    }
}

impl<A: Effects, C: ToolboxContext> ServerHandler for Handler<A, C> {
    fn get_info(&self) -> ServerConfig {
        (*self.0.info).clone()
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        match &*self.0.tools {
            Ok(tools) => Ok(ListToolsResult::with_all_items(tools.clone())),
            Err(error) => Err(ErrorData::internal_error(
                format!("the tool catalog could not be read: {error}"),
                None,
            )),
        }
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // The caller's context, from the request: refused, nothing runs, and
        // the client is told why (not the model: it did nothing wrong).
        let given = (self.0.context)(&McpRequest { context: &context }).map_err(|reason| {
            ErrorData::invalid_request(format!("the request was refused: {reason}"), None)
        })?;
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        // As text, exactly as a model's call: the toolbox's limit on argument
        // text applies, and every error and recovery is the text path's.
        let arguments = crate::json::to_text(&arguments);
        let call = self
            .0
            .toolbox
            .call_given(&given, &request.name, arguments.into());
        let cancelled = Box::pin(context.ct.cancelled());
        // Whichever finishes first; the other is dropped, so a cancelled
        // call's future is never polled again.
        let outcome = select(call, cancelled).await;
        match outcome {
            Either::Left((Ok(output), _)) => Ok(success(output).into()),
            // A tool this view does not allow is not listed, so to a client
            // it does not exist: the answer is the unknown name's, which
            // names only listed tools. (In process, the effect refusal tells
            // the developer what the tool does.)
            Either::Left((Err(ToolError::EffectDenied { .. }), _)) => {
                let error = self.0.toolbox.unknown(&request.name);
                Ok(CallToolResult::error(vec![ContentBlock::text(error.for_model())]).into())
            }
            Either::Left((Err(error), _)) => {
                Ok(CallToolResult::error(vec![ContentBlock::text(error.for_model())]).into())
            }
            Either::Right(((), _)) => Err(ErrorData::internal_error(
                "the call was cancelled by the client",
                None,
            )),
        }
    }
}

/// A successful call as MCP writes it.
fn success(output: ToolOutput) -> CallToolResult {
    let value = output.to_value();
    let text = match &value {
        Value::String(text) => text.clone(),
        _ => output.json().to_owned(),
    };
    let mut content = vec![ContentBlock::text(text)];
    if let Some(note) = output.note_for_model() {
        content.push(ContentBlock::text(note));
    }
    let mut result = CallToolResult::success(content);
    if value.is_object() {
        result.structured_content = Some(value);
    }
    result
}
