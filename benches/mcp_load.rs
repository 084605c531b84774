//! Honest load on our MCP HTTP server, against rmcp's own server serving the
//! same tool in the same run.
//!
//! `cargo bench --features mcp-http --bench mcp_load` (`MCP_LOAD_SECONDS`,
//! 5 by default, is how long each run lasts; `MCP_LOAD_CLIENTS`, `1,10,100,500`
//! by default, the numbers of clients).
//!
//! For each number of clients N and each server, a fresh child process (this
//! bench binary, started with `TYPED_TOOLS_MCP_LOAD_SERVE`) serves
//! `lookup_account` (Read, an object output, so the answer carries
//! `structuredContent` and the same JSON as text) on 127.0.0.1; N clients
//! in this process call it without a pause for the run's duration, and
//! the table gives the calls answered a second, the median and 99th
//! percentile latency of a call, the server process's peak resident memory
//! (`VmHWM` of `/proc/<pid>/status`, read by the child itself when told to
//! stop), the calls that failed, and the connections the clients opened.
//!
//! - `ours`: `McpServer::serve_http` with its defaults (256 connections at
//!   most, the timeouts), the call through `Toolbox::call`; past 256
//!   clients also `ours-1k`, the same with `max_connections(1_000)`, to
//!   show what taking turns at the cap costs.
//! - `rmcp`: rmcp's `StreamableHttpService` served by `axum::serve`, as
//!   rmcp's examples serve it, over a `ServerHandler` written by hand whose
//!   `tools/list` is the same tool definition and whose `tools/call` builds
//!   the same account (no toolbox: no validation, no effect gate). Both in
//!   the same mode: stateless, JSON answers, the same body limit.
//!
//! Each client keeps its connection alive (as reqwest's and httpx's pools
//! do) and connects again when an answer says `Connection: close`; a call's
//! latency runs from its start (a connection included, when one is made)
//! to the last byte of its answer. Past our server's connection cap, new
//! connections wait to be accepted and every answer closes its connection,
//! so the clients take turns: the `connections` column shows it.
//!
//! Not criterion: criterion times one routine at a time, and this needs
//! many concurrent clients, percentiles over all their calls, and the
//! memory of another process. Both servers and the clients share the
//! machine's cores (2 on the shared CI machine), so throughput is the
//! machine's, not the server's alone; compare the two within one run.

use std::io::{BufRead, BufReader as StdBufReader, Write};
use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use typed_tools::mcp::rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool as McpTool,
};
use typed_tools::mcp::rmcp::service::{RequestContext, RoleServer};
use typed_tools::mcp::rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use typed_tools::mcp::rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use typed_tools::mcp::rmcp::{ErrorData, ServerHandler};
use typed_tools::mcp::McpServer;
use typed_tools::{tool, Toolbox};

/// Set in the child: serve (`ours` or `rmcp`) instead of measuring.
const SERVE: &str = "TYPED_TOOLS_MCP_LOAD_SERVE";

/// A customer account.
#[derive(Serialize, Deserialize, JsonSchema)]
struct Account {
    id: String,
    subscription_tier: String,
    email: String,
    last_charge_cents: i64,
}

fn account(id: String) -> Account {
    Account {
        id,
        subscription_tier: "pro".into(),
        email: "ana@example.com".into(),
        last_charge_cents: 1299,
    }
}

/// Look up a customer account.
#[tool(effects = Read)]
fn lookup_account(id: String) -> Account {
    account(id)
}

fn toolbox() -> Toolbox {
    Toolbox::builder().tool(LookupAccount).build().unwrap()
}

/// The same tool, served by rmcp with no toolbox.
#[derive(Clone)]
struct ByHand {
    tools: Arc<Vec<McpTool>>,
}

#[derive(Deserialize)]
struct LookupArgs {
    id: String,
}

impl ServerHandler for ByHand {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items((*self.tools).clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let args: LookupArgs = serde_json::from_value(arguments)
            .map_err(|error| ErrorData::invalid_params(error.to_string(), None))?;
        let account = serde_json::to_value(account(args.id)).unwrap();
        Ok(CallToolResult::structured(account).into())
    }
}

/// The child: serves until a line (or the end) on standard input, then
/// prints its peak resident memory.
fn serve(which: &str) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        println!("listening {}", listener.local_addr().unwrap());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = std::io::stdin().read_line(&mut line);
            let _ = stop.send(());
        });
        let shutdown = async move {
            let _ = stopped.await;
        };
        match which {
            "ours" => {
                let server = McpServer::new(toolbox());
                server.serve_http(listener, shutdown).await.unwrap();
            }
            "ours-1k" => {
                let server = McpServer::new(toolbox()).max_connections(1_000);
                server.serve_http(listener, shutdown).await.unwrap();
            }
            "rmcp" => {
                let tools = Arc::new(McpServer::new(toolbox()).tools().to_vec());
                let config = StreamableHttpServerConfig::default()
                    .with_legacy_session_mode(false)
                    .with_json_response(true);
                let service = StreamableHttpService::new(
                    move || {
                        Ok(ByHand {
                            tools: Arc::clone(&tools),
                        })
                    },
                    Arc::new(NeverSessionManager::default()),
                    config,
                );
                let router = axum::Router::new().nest_service("/mcp", service);
                axum::serve(listener, router)
                    .with_graceful_shutdown(shutdown)
                    .await
                    .unwrap();
            }
            other => panic!("no server `{other}`"),
        }
    });
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let peak = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .map_or("0", |kb| kb.trim().trim_end_matches(" kB"));
    println!("peak {peak}");
}

/// A server child: its address, and a way to stop it and read its peak.
struct Server {
    child: std::process::Child,
    lines: std::io::Lines<StdBufReader<std::process::ChildStdout>>,
    address: SocketAddr,
}

impl Server {
    fn start(which: &str) -> Server {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .env(SERVE, which)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = StdBufReader::new(child.stdout.take().unwrap()).lines();
        let first = lines.next().unwrap().unwrap();
        let address = first.strip_prefix("listening ").unwrap().parse().unwrap();
        Server {
            child,
            lines,
            address,
        }
    }

    /// Stops it; its peak resident memory, in KiB.
    fn stop(mut self) -> u64 {
        let mut stdin = self.child.stdin.take().unwrap();
        let _ = writeln!(stdin, "stop");
        let peak = self
            .lines
            .find_map(|line| line.ok()?.strip_prefix("peak ")?.parse().ok())
            .unwrap_or(0);
        let _ = self.child.wait();
        peak
    }
}

/// What one client saw.
#[derive(Default)]
struct Seen {
    latencies: Vec<Duration>,
    errors: usize,
    connections: usize,
}

/// An answer: its status, whether it closes the connection, its body.
async fn read_answer(stream: &mut BufReader<TcpStream>) -> std::io::Result<(u16, bool, Vec<u8>)> {
    let mut line = String::new();
    if stream.read_line(&mut line).await? == 0 {
        return Err(std::io::ErrorKind::UnexpectedEof.into());
    }
    let status: u16 = line
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0);
    let (mut length, mut close, mut chunked) = (None, false, false);
    loop {
        line.clear();
        stream.read_line(&mut line).await?;
        let header = line.trim_end().to_ascii_lowercase();
        if header.is_empty() {
            break;
        }
        if let Some(value) = header.strip_prefix("content-length:") {
            length = value.trim().parse().ok();
        }
        close |= header == "connection: close";
        chunked |= header == "transfer-encoding: chunked";
    }
    let mut body = Vec::new();
    if let Some(length) = length {
        body.resize(length, 0);
        stream.read_exact(&mut body).await?;
    } else if chunked {
        loop {
            line.clear();
            stream.read_line(&mut line).await?;
            let size = usize::from_str_radix(line.trim(), 16)
                .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidData))?;
            let start = body.len();
            body.resize(start + size + 2, 0);
            stream.read_exact(&mut body[start..]).await?;
            body.truncate(start + size);
            if size == 0 {
                break;
            }
        }
    } else {
        stream.read_to_end(&mut body).await?;
        close = true;
    }
    Ok((status, close, body))
}

/// A client calling without a pause until `until`.
async fn client(address: SocketAddr, request: Arc<Vec<u8>>, until: Instant) -> Seen {
    let mut seen = Seen::default();
    let mut stream: Option<BufReader<TcpStream>> = None;
    while Instant::now() < until {
        let started = Instant::now();
        let call = async {
            if stream.is_none() {
                stream = Some(BufReader::new(TcpStream::connect(address).await?));
                seen.connections += 1;
            }
            let connection = stream.as_mut().expect("connected");
            connection.get_mut().write_all(&request).await?;
            read_answer(connection).await
        };
        match tokio::time::timeout(Duration::from_secs(30), call).await {
            Ok(Ok((200, close, body))) if contains(&body, br#""structuredContent":{"#) => {
                seen.latencies.push(started.elapsed());
                if close {
                    stream = None;
                }
            }
            _ => {
                seen.errors += 1;
                stream = None;
            }
        }
    }
    seen
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window == needle)
}

fn request(address: SocketAddr) -> Vec<u8> {
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "lookup_account", "arguments": {"id": "cust_12345"}}
    })
    .to_string();
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-06-18\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// One row of the table.
struct Row {
    server: &'static str,
    clients: usize,
    per_second: f64,
    p50: Duration,
    p99: Duration,
    peak_kib: u64,
    errors: usize,
    connections: usize,
}

fn run(
    runtime: &tokio::runtime::Runtime,
    which: &'static str,
    clients: usize,
    length: Duration,
) -> Row {
    let server = Server::start(which);
    let address = server.address;
    let request = Arc::new(request(address));
    // The answer is what both servers must give.
    let (status, _, body) = runtime.block_on(async {
        let mut stream = BufReader::new(TcpStream::connect(address).await.unwrap());
        stream.get_mut().write_all(&request).await.unwrap();
        read_answer(&mut stream).await.unwrap()
    });
    let answer: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(status, 200);
    assert_eq!(
        answer["result"]["structuredContent"],
        serde_json::to_value(account("cust_12345".into())).unwrap(),
        "{which}: {answer}"
    );
    // Warm up: half a second of one client.
    runtime.block_on(client(
        address,
        Arc::clone(&request),
        Instant::now() + Duration::from_millis(500),
    ));

    let started = Instant::now();
    let until = started + length;
    let seen: Vec<Seen> = runtime.block_on(async {
        let tasks: Vec<_> = (0..clients)
            .map(|_| tokio::spawn(client(address, Arc::clone(&request), until)))
            .collect();
        let mut seen = Vec::new();
        for task in tasks {
            seen.push(task.await.unwrap());
        }
        seen
    });
    let elapsed = started.elapsed();
    let peak_kib = server.stop();
    let mut latencies: Vec<Duration> = seen
        .iter()
        .flat_map(|s| s.latencies.iter().copied())
        .collect();
    latencies.sort_unstable();
    let at = |q: f64| {
        latencies
            .get(((latencies.len() as f64 * q) as usize).min(latencies.len().saturating_sub(1)))
            .copied()
            .unwrap_or_default()
    };
    Row {
        server: which,
        clients,
        per_second: latencies.len() as f64 / elapsed.as_secs_f64(),
        p50: at(0.50),
        p99: at(0.99),
        peak_kib,
        errors: seen.iter().map(|s| s.errors).sum(),
        connections: seen.iter().map(|s| s.connections).sum(),
    }
}

fn main() {
    if let Ok(which) = std::env::var(SERVE) {
        serve(&which);
        return;
    }
    // `cargo bench` passes `--bench`; a filter is not supported.
    let seconds: u64 = std::env::var("MCP_LOAD_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);
    let counts: Vec<usize> = std::env::var("MCP_LOAD_CLIENTS")
        .unwrap_or_else(|_| "1,10,100,500".into())
        .split(',')
        .map(|n| n.trim().parse().expect("MCP_LOAD_CLIENTS: numbers"))
        .collect();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    println!(
        "{} s a run, {} cores; each server a fresh child process",
        seconds,
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    println!("| clients | server | calls/s | p50 | p99 | peak RSS | errors | connections |");
    println!("|---:|---|---:|---:|---:|---:|---:|---:|");
    for clients in counts {
        let servers: &[&'static str] = if clients > 256 {
            &["ours", "ours-1k", "rmcp"]
        } else {
            &["ours", "rmcp"]
        };
        for &which in servers {
            let row = run(&runtime, which, clients, Duration::from_secs(seconds));
            println!(
                "| {} | {} | {:.0} | {:.2} ms | {:.2} ms | {:.1} MiB | {} | {} |",
                row.clients,
                row.server,
                row.per_second,
                row.p50.as_secs_f64() * 1e3,
                row.p99.as_secs_f64() * 1e3,
                row.peak_kib as f64 / 1024.0,
                row.errors,
                row.connections,
            );
            std::io::stdout().flush().unwrap();
        }
    }
}
