//! MCP over streamable HTTP (feature `mcp-http`): a stateless server, and a client.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::{
    streamable_http_client::StreamableHttpClientTransportConfig, StreamableHttpClientTransport,
    StreamableHttpServerConfig, StreamableHttpService,
};
use rmcp::ServiceExt;

use super::{connection, Connect, McpClient, McpError, McpServer};
use crate::effect::Effects;
use crate::toolbox::ToolboxContext;

impl<A: Effects, C: ToolboxContext> McpServer<A, C> {
    /// The `Host` header values the HTTP server accepts, each a host name or
    /// `host:port`. The default is loopback only (`localhost`, `127.0.0.1`,
    /// `::1`), which stops DNS rebinding attacks on a server running on a
    /// user's machine; list the names clients use to reach a deployed server
    /// (the load balancer's host name).
    ///
    /// ```
    /// use typed_tools::mcp::McpServer;
    /// use typed_tools::Toolbox;
    ///
    /// let server = McpServer::new(Toolbox::builder().build().unwrap())
    ///     .allowed_hosts(["tools.example.com"]);
    /// ```
    pub fn allowed_hosts<I, S>(mut self, hosts: I) -> McpServer<A, C>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allowed_hosts = Some(hosts.into_iter().map(Into::into).collect());
        self
    }

    /// How many HTTP connections [`serve_http`](Self::serve_http) serves at
    /// once; 256 by default, at least 1. Past it new connections are not
    /// refused but queued: they are not accepted, and wait in the
    /// listener's backlog (the operating system's queue) until a served
    /// connection closes, then are served in order. A connection being
    /// served is never closed to make room, and no request on it fails for
    /// the cap; but while every slot is taken, each answer is sent with
    /// `Connection: close`, so that clients which keep their connections
    /// alive take turns with those waiting rather than hold the slots for
    /// as long as they keep calling. Each connection carries one
    /// request at a time, so this also caps the requests in flight, and
    /// the request bodies held at once (each at most the body limit, see
    /// the [limits](McpServer#limits)).
    ///
    /// ```
    /// use std::time::Duration;
    /// use typed_tools::mcp::McpServer;
    /// use typed_tools::Toolbox;
    ///
    /// let server = McpServer::new(Toolbox::builder().build().unwrap())
    ///     .max_connections(1_000)
    ///     .header_timeout(Duration::from_secs(5))
    ///     .body_timeout(Duration::from_secs(60))
    ///     .idle_timeout(Duration::from_secs(30));
    /// ```
    pub fn max_connections(mut self, connections: usize) -> McpServer<A, C> {
        self.http_limits.max_connections = connections.max(1);
        self
    }

    /// How long [`serve_http`](Self::serve_http) waits for a request's
    /// line and headers, counted from when it starts waiting for them (a
    /// new connection, or the end of the previous answer on a connection
    /// kept alive); 10 s by default. Past it the connection is closed,
    /// with no answer (hyper's `header_read_timeout`): a client that sends
    /// half a header, or nothing, holds a connection no longer than this,
    /// and a kept-alive connection with no next request is closed after it.
    pub fn header_timeout(mut self, timeout: Duration) -> McpServer<A, C> {
        self.http_limits.header_timeout = timeout;
        self
    }

    /// How long [`serve_http`](Self::serve_http) waits for a request's
    /// whole body, counted from the end of its headers; 30 s by default.
    /// Past it the part read is dropped, the request is answered `408
    /// Request Timeout` with a message naming the limit, and the
    /// connection is closed. (A tool's call runs after its body is read;
    /// this does not limit the call.)
    pub fn body_timeout(mut self, timeout: Duration) -> McpServer<A, C> {
        self.http_limits.body_timeout = timeout;
        self
    }

    /// How long a connection of [`serve_http`](Self::serve_http) may move
    /// no byte either way while none of its requests is being answered;
    /// 60 s by default. Past it the connection is closed: a client that
    /// stops reading its answer frees what the answer held. A call that
    /// takes long is not idle.
    pub fn idle_timeout(mut self, timeout: Duration) -> McpServer<A, C> {
        self.http_limits.idle_timeout = timeout;
        self
    }

    /// The server as an axum [`Router`](axum::Router) answering MCP's
    /// streamable HTTP at `/mcp`, to mount beside routes of your own.
    /// Stateless: no session is kept between requests, every POST is
    /// answered on its own (with `application/json`), so instances behind a
    /// load balancer are interchangeable.
    ///
    /// The router has the body limit; the cap on connections and the
    /// timeouts are [`serve_http`](Self::serve_http)'s, so the server that
    /// serves this router must bring its own (hyper needs a timer for its
    /// `header_read_timeout`, which `axum::serve` does not give it).
    pub fn http_router(self) -> axum::Router {
        let config = self.http_config();
        self.router_with(config)
    }

    /// Serves MCP's streamable HTTP (HTTP/1.1) at `/mcp` on `listener`
    /// until `shutdown` completes; then stops accepting connections and
    /// returns once the calls in flight have been answered and their
    /// connections closed.
    ///
    /// Its connections are bounded by [`max_connections`](Self::max_connections)
    /// (256; more wait to be accepted), [`header_timeout`](Self::header_timeout)
    /// (10 s), [`body_timeout`](Self::body_timeout) (30 s) and
    /// [`idle_timeout`](Self::idle_timeout) (60 s).
    ///
    /// ```no_run
    /// use typed_tools::mcp::McpServer;
    /// use typed_tools::{tool, Toolbox};
    ///
    /// /// Add two numbers.
    /// #[tool(effects = Pure)]
    /// fn add(a: i64, b: i64) -> i64 { a + b }
    ///
    /// #[tokio::main]
    /// async fn main() -> Result<(), Box<dyn std::error::Error>> {
    ///     let server = McpServer::new(Toolbox::builder().tool(Add).build()?);
    ///     let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
    ///     let shutdown = async { tokio::signal::ctrl_c().await.unwrap_or(()) };
    ///     server.serve_http(listener, shutdown).await?;
    ///     Ok(())
    /// }
    /// ```
    pub async fn serve_http<F>(
        self,
        listener: tokio::net::TcpListener,
        shutdown: F,
    ) -> std::io::Result<()>
    where
        F: Future<Output = ()> + Send + 'static,
    {
        let config = self.http_config();
        let stop = config.cancellation_token.clone();
        let limits = self.http_limits;
        let router = self.router_with(config);
        // Ends the streams rmcp may hold open, so that the connections'
        // graceful shutdown does not wait on them.
        connection::serve(listener, router, limits, shutdown, move || stop.cancel()).await
    }

    fn http_config(&self) -> StreamableHttpServerConfig {
        let defaults = StreamableHttpServerConfig::default();
        // A call whose arguments are somewhat past the toolbox's limit still
        // reaches it, to be answered with `ArgsTooLarge` for the model;
        // rmcp answers a longer body with 413.
        let max_body = defaults
            .max_request_body_bytes
            .max(self.toolbox().max_argument_bytes().saturating_add(64 << 10));
        let config = defaults
            .with_legacy_session_mode(false)
            .with_json_response(true)
            .with_max_request_body_bytes(max_body);
        match &self.allowed_hosts {
            Some(hosts) => config.with_allowed_hosts(hosts.iter().cloned()),
            None => config,
        }
    }

    fn router_with(self, config: StreamableHttpServerConfig) -> axum::Router {
        let handler = self.handler();
        let service = StreamableHttpService::new(
            move || Ok(handler.clone()),
            Arc::new(NeverSessionManager::default()),
            config,
        );
        axum::Router::new().nest_service("/mcp", service)
    }
}

impl McpClient {
    /// Speaks MCP's streamable HTTP to the server at `url` (its MCP endpoint,
    /// like `https://tools.example.com/mcp`); `https` is supported (rustls
    /// with the `ring` provider, the platform's certificates; redirects are
    /// not followed). Await the returned [`Connect`].
    ///
    /// rmcp's own client (`StreamableHttpClientTransport::from_uri`), if you
    /// use it beside this one, finds no TLS provider in this build: install
    /// one for the process first,
    /// `rustls::crypto::ring::default_provider().install_default()`.
    pub fn http(url: impl Into<String>) -> Connect {
        let url: String = url.into();
        Connect::new(
            url.clone(),
            Box::new(move |server| {
                async move {
                    let client = http_client().map_err(|message| McpError::Connect {
                        server: server.clone(),
                        message,
                    })?;
                    let config = StreamableHttpClientTransportConfig::with_uri(url);
                    let transport = StreamableHttpClientTransport::with_client(client, config);
                    ().serve(transport)
                        .await
                        .map_err(|error| McpError::from_initialize(&server, error))
                }
                .boxed()
            }),
        )
    }
}

/// reqwest over the crate's rustls (`ring`, the platform's roots). No idle
/// connections are kept (as rmcp's own client: a reused connection can stall
/// on delayed ACKs), and redirects are not followed: a redirect of a POST
/// would lose its body or replay the session to another host, so it is an
/// error.
fn http_client() -> Result<reqwest::Client, String> {
    reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .redirect(reqwest::redirect::Policy::none())
        .tls_backend_preconfigured(crate::tls::client_config()?)
        .user_agent(concat!("typed-tools/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|error| error.to_string())
}
