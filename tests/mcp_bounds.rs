//! Our MCP server under attack, each attack against the limit that holds it:
//!
//! - over stdio (here an in-memory pipe of 64 KiB, as bounded as an OS
//!   pipe), a peer that writes 20,000 `tools/list` requests and reads no
//!   answer: the server stops reading at `max_in_flight`, holds a bounded
//!   amount of memory however many requests wait, and answers every one
//!   once the peer reads.
//!
//! Memory is counted by a wrapping global allocator (`peak_alloc`, as in
//! `tests/bounds.rs`), which keeps the most bytes held at once; it counts
//! the whole process, the peer included. The tests take one lock, so that
//! each counts only its own.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use peak_alloc::PeakAlloc;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use typed_tools::mcp::McpServer;
use typed_tools::{tool, Toolbox};

#[global_allocator]
static PEAK: PeakAlloc = PeakAlloc;

/// One test at a time, so that the allocation counts are each test's own.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

const MIB: usize = 1 << 20;

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Look up a customer account by its id, like `cust_12345`.
#[tool(effects = Read)]
fn lookup_account(id: String) -> String {
    format!("account {id}: pro, ana@example.com")
}

/// Write a reply to a customer.
#[tool(effects = Write)]
fn send_reply(account_id: String, text: String) -> String {
    format!("sent to {account_id}: {} bytes", text.len())
}

/// Waits for what never comes.
#[tool(effects = Read)]
async fn wait_forever() -> String {
    std::future::pending::<String>().await
}

/// How many calls run at once, and the most that ever did.
#[derive(Default)]
struct Gauge {
    now: AtomicUsize,
    most: AtomicUsize,
}

/// Look an account up slowly.
#[tool(effects = Read)]
async fn slow_lookup(#[state] gauge: &Arc<Gauge>, id: String, ms: u64) -> String {
    let now = gauge.now.fetch_add(1, Ordering::SeqCst) + 1;
    gauge.most.fetch_max(now, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(ms)).await;
    gauge.now.fetch_sub(1, Ordering::SeqCst);
    format!("account {id}")
}

/// A long text.
#[tool(effects = Read)]
fn long_text(bytes: usize) -> String {
    "x".repeat(bytes)
}

fn toolbox() -> Toolbox {
    toolbox_with(Arc::default())
}

fn toolbox_with(gauge: Arc<Gauge>) -> Toolbox {
    Toolbox::builder()
        .tool(LookupAccount)
        .tool(SendReply)
        .tool(WaitForever)
        .tool(SlowLookup::new(gauge))
        .tool(LongText)
        .build()
        .unwrap()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// A peer over an in-memory pipe, by hand: what it writes, and the lines
/// it reads, after the handshake.
async fn stdio_peer(
    server: McpServer,
) -> (
    tokio::io::WriteHalf<tokio::io::DuplexStream>,
    tokio::io::Lines<BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
    tokio::task::JoinHandle<Result<(), typed_tools::mcp::ServeError>>,
) {
    let (peer, served) = tokio::io::duplex(64 << 10);
    let (read, write) = tokio::io::split(served);
    let serving = tokio::spawn(server.serve_io(read, write));
    let (from_server, mut to_server) = tokio::io::split(peer);
    let mut answers = BufReader::new(from_server).lines();
    let initialize = json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "by-hand", "version": "0"}}
    });
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    to_server
        .write_all(format!("{initialize}\n").as_bytes())
        .await
        .unwrap();
    let answer: Value = serde_json::from_str(&answers.next_line().await.unwrap().unwrap()).unwrap();
    assert_eq!(answer["id"], 0, "{answer}");
    to_server
        .write_all(format!("{initialized}\n").as_bytes())
        .await
        .unwrap();
    (to_server, answers, serving)
}

/// Waits until `count` has not moved for half a second; its value then.
async fn settled(count: &AtomicUsize) -> usize {
    let mut last = count.load(Ordering::SeqCst);
    let mut still = 0;
    while still < 5 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let now = count.load(Ordering::SeqCst);
        if now == last {
            still += 1;
        } else {
            (last, still) = (now, 0);
        }
    }
    last
}

#[test]
fn a_stdio_peer_that_never_reads_is_not_read_past_max_in_flight() {
    let _one = one_at_a_time();
    const REQUESTS: usize = 20_000;
    const MAX_IN_FLIGHT: usize = 16;
    runtime().block_on(async {
        let server = McpServer::new(toolbox()).max_in_flight(MAX_IN_FLIGHT);
        let (mut to_server, mut answers, serving) = stdio_peer(server).await;
        // One answer, to know its size.
        to_server
            .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}\n")
            .await
            .unwrap();
        let one = answers.next_line().await.unwrap().unwrap();
        assert!(one.contains("lookup_account"), "{one}");

        let held_before = PEAK.current_usage();
        PEAK.reset_peak_usage();
        // The flood: requests written one by one, none of the answers read.
        let written = Arc::new(AtomicUsize::new(0));
        let count = Arc::clone(&written);
        let flood = tokio::spawn(async move {
            for id in 2..REQUESTS + 2 {
                let line = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/list\"}}\n");
                to_server.write_all(line.as_bytes()).await.unwrap();
                count.fetch_add(1, Ordering::SeqCst);
            }
            to_server
        });
        let stalled_at = settled(&written).await;
        let held = PEAK.peak_usage().saturating_sub(held_before);
        eprintln!(
            "the peer stalled after {stalled_at} requests; the process held at most {held} bytes more \
             ({} bytes an answer)",
            one.len()
        );
        assert!(
            stalled_at < REQUESTS,
            "the server read all {REQUESTS} requests while no answer was read"
        );
        // What waits is in the pipe (64 KiB, about 1,400 requests), not in
        // the server: it holds at most 16 answers, and its buffers.
        assert!(held < 2 * MIB, "{held} bytes held");

        // The peer reads: every request is answered, in full.
        let started = Instant::now();
        let mut ids = vec![false; REQUESTS + 2];
        for _ in 0..REQUESTS {
            let line = answers.next_line().await.unwrap().expect("an answer");
            let answer: Value = serde_json::from_str(&line).unwrap();
            assert!(answer["result"]["tools"].is_array(), "{answer}");
            ids[answer["id"].as_u64().unwrap() as usize] = true;
        }
        assert!(ids[2..].iter().all(|answered| *answered));
        let mut to_server = flood.await.unwrap();
        eprintln!(
            "{REQUESTS} answered in {:?} once read",
            started.elapsed()
        );
        let held = PEAK.peak_usage().saturating_sub(held_before);
        assert!(held < 2 * MIB, "{held} bytes held");

        // And the session ends when the peer closes its side.
        to_server.shutdown().await.unwrap();
        let outcome = tokio::time::timeout(Duration::from_secs(5), serving).await;
        assert!(matches!(outcome, Ok(Ok(Ok(())))), "{outcome:?}");
    });
}

#[test]
fn a_cancellation_is_read_at_the_cap_and_frees_a_slot() {
    let _one = one_at_a_time();
    runtime().block_on(async {
        // Two slots, both taken by calls that never end.
        let server = McpServer::new(toolbox()).max_in_flight(2);
        let (mut to_server, mut answers, _serving) = stdio_peer(server).await;
        let call = |id: u32| {
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "wait_forever", "arguments": {}}})
        };
        let list = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"});
        for message in [call(1), call(2), list] {
            to_server
                .write_all(format!("{message}\n").as_bytes())
                .await
                .unwrap();
        }
        // The list waits for a slot.
        let waiting = tokio::time::timeout(Duration::from_millis(500), answers.next_line()).await;
        assert!(waiting.is_err(), "answered past the cap: {waiting:?}");
        // The cancellation behind it is still read; the cancelled call gives
        // its slot to the list (rmcp writes no answer to a cancelled call).
        let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}});
        to_server
            .write_all(format!("{cancel}\n").as_bytes())
            .await
            .unwrap();
        let line = tokio::time::timeout(Duration::from_secs(5), answers.next_line())
            .await
            .expect("the list is answered once a call is cancelled")
            .unwrap()
            .unwrap();
        let answer: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(answer["id"], 3, "{answer}");
    });
}

/// `server` over HTTP on a free loopback port, until the sender is dropped.
async fn serve_http(
    server: McpServer,
) -> (
    SocketAddr,
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<std::io::Result<()>>,
) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(server.serve_http(listener, async move {
        let _ = stopped.await;
    }));
    (address, stop, serving)
}

/// A POST of `body` to `/mcp` as an MCP client sends it, with `length` as
/// its `Content-Length`, the body not written.
fn post_head(address: SocketAddr, length: usize) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-06-18\r\n\
         Content-Length: {length}\r\nConnection: close\r\n\r\n"
    )
}

fn tool_call(name: &str, arguments: Value) -> Value {
    json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": name, "arguments": arguments}
    })
}

/// One whole POST and its answer: the status line and the JSON body.
async fn post(address: SocketAddr, body: &Value) -> (String, Value) {
    let mut stream = TcpStream::connect(address).await.unwrap();
    let body = body.to_string();
    let request = post_head(address, body.len()) + &body;
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap();
    let status = head.lines().next().unwrap().to_owned();
    (status, serde_json::from_str(body).unwrap_or(Value::Null))
}

/// Reads until the server closes the connection (end of stream or a
/// reset); what was read, and when it closed.
async fn until_closed(stream: &mut TcpStream, within: Duration) -> (Vec<u8>, Instant) {
    let mut read = Vec::new();
    let mut buffer = vec![0; 64 << 10];
    let deadline = Instant::now() + within;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, stream.read(&mut buffer)).await {
            Ok(Ok(0) | Err(_)) => return (read, Instant::now()),
            Ok(Ok(n)) => read.extend_from_slice(&buffer[..n]),
            Err(_) => panic!(
                "the connection is still open after {within:?}; read {:?}",
                String::from_utf8_lossy(&read[..read.len().min(200)])
            ),
        }
    }
}

#[test]
fn a_half_sent_header_is_closed_at_the_header_timeout() {
    let _one = one_at_a_time();
    runtime().block_on(async {
        let timeout = Duration::from_millis(500);
        let server = McpServer::new(toolbox()).header_timeout(timeout);
        let (address, _stop, _serving) = serve_http(server).await;

        let mut half = TcpStream::connect(address).await.unwrap();
        let mut silent = TcpStream::connect(address).await.unwrap();
        let started = Instant::now();
        half.write_all(format!("POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Ty").as_bytes())
            .await
            .unwrap();
        for stream in [&mut half, &mut silent] {
            let (read, closed) = until_closed(stream, Duration::from_secs(10)).await;
            let after = closed - started;
            assert!(
                after >= timeout - Duration::from_millis(50) && after < timeout * 6,
                "closed after {after:?}"
            );
            assert!(read.is_empty(), "{:?}", String::from_utf8_lossy(&read));
        }

        // A whole request is answered as ever.
        let (status, answer) = post(
            address,
            &tool_call("lookup_account", json!({"id": "cust_1"})),
        )
        .await;
        assert_eq!(status, "HTTP/1.1 200 OK");
        assert_eq!(
            answer["result"]["content"][0]["text"],
            "account cust_1: pro, ana@example.com"
        );
    });
}

#[test]
fn past_max_connections_clients_wait_and_the_admitted_never_fail() {
    let _one = one_at_a_time();
    runtime().block_on(async {
        let gauge = Arc::new(Gauge::default());
        let server = McpServer::new(toolbox_with(Arc::clone(&gauge)))
            .max_connections(2)
            .header_timeout(Duration::from_secs(1));
        let (address, _stop, _serving) = serve_http(server).await;

        // Two connections that send half a header hold both slots...
        let mut stalled = Vec::new();
        for _ in 0..2 {
            let mut stream = TcpStream::connect(address).await.unwrap();
            stream
                .write_all(b"POST /mcp HTTP/1.1\r\nHost: 127")
                .await
                .unwrap();
            stalled.push(stream);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        // ... so a client's request waits to be accepted, and is served once
        // the header timeout frees a slot.
        let started = Instant::now();
        let (status, answer) = post(
            address,
            &tool_call("lookup_account", json!({"id": "cust_2"})),
        )
        .await;
        let waited = started.elapsed();
        assert_eq!(status, "HTTP/1.1 200 OK");
        assert_eq!(answer["result"]["isError"], false, "{answer}");
        assert!(
            waited >= Duration::from_millis(700),
            "served after {waited:?}, before a slot was free"
        );

        // Twelve clients at once, each call 300 ms: two are served at a
        // time, the others wait, and every one is answered.
        let clients = (0..12).map(|i| {
            let call = tool_call("slow_lookup", json!({"id": format!("cust_{i}"), "ms": 300}));
            tokio::spawn(async move { post(address, &call).await })
        });
        let started = Instant::now();
        for (i, client) in clients.collect::<Vec<_>>().into_iter().enumerate() {
            let (status, answer) = client.await.unwrap();
            assert_eq!(status, "HTTP/1.1 200 OK");
            assert_eq!(
                answer["result"]["content"][0]["text"],
                format!("account cust_{i}")
            );
        }
        assert_eq!(gauge.most.load(Ordering::SeqCst), 2);
        // Six rounds of two.
        assert!(
            started.elapsed() >= Duration::from_millis(1_700),
            "{:?}",
            started.elapsed()
        );
    });
}

#[test]
fn a_stalled_body_is_dropped_at_the_body_timeout_and_its_memory_freed() {
    let _one = one_at_a_time();
    const PEERS: usize = 20;
    const SENT: usize = 3_900_000;
    runtime().block_on(async {
        let timeout = Duration::from_secs(5);
        let server = McpServer::new(toolbox()).body_timeout(timeout);
        let (address, _stop, _serving) = serve_http(server).await;
        // What each peer sends of a 4,000,000-byte body (within the 4 MiB
        // body limit) before it stops: the start of a call with a long id.
        let prefix = tool_call("lookup_account", json!({"id": ""})).to_string();
        let prefix = &prefix[..prefix.find(r#""id":""#).unwrap() + 6];
        let mut partial = prefix.as_bytes().to_vec();
        partial.resize(SENT, b'x');
        let partial: Arc<[u8]> = partial.into();

        let held_before = PEAK.current_usage();
        PEAK.reset_peak_usage();
        let started = Instant::now();
        let mut peers = Vec::new();
        for _ in 0..PEERS {
            let mut stream = TcpStream::connect(address).await.unwrap();
            stream
                .write_all(post_head(address, 4_000_000).as_bytes())
                .await
                .unwrap();
            stream.write_all(&partial).await.unwrap();
            peers.push(stream);
        }
        // The server has read them: it holds the bodies.
        while PEAK.current_usage().saturating_sub(held_before) < PEERS * SENT {
            assert!(started.elapsed() < timeout, "the bodies were not read");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let held = PEAK.current_usage().saturating_sub(held_before);
        eprintln!(
            "{PEERS} stalled bodies of {SENT} bytes: {held} bytes held after {:?}",
            started.elapsed()
        );

        // At the timeout, each is answered 408 and closed.
        for stream in &mut peers {
            let (read, closed) = until_closed(stream, timeout * 4).await;
            let answer = String::from_utf8_lossy(&read);
            assert!(
                answer.starts_with("HTTP/1.1 408 Request Timeout\r\n"),
                "{answer}"
            );
            assert!(
                answer
                    .ends_with("the request body did not arrive within 5s (limit `body_timeout`)"),
                "{answer}"
            );
            assert!(closed - started >= timeout - Duration::from_millis(50));
        }
        // And what they held is freed, with the peers still connected.
        tokio::time::sleep(Duration::from_millis(200)).await;
        let left = PEAK.current_usage().saturating_sub(held_before);
        eprintln!("after the timeout: {left} bytes held");
        assert!(left < 4 * MIB, "{left} bytes still held");
        drop(peers);
    });
}

#[test]
fn a_client_that_does_not_read_its_answer_is_closed_at_the_idle_timeout() {
    let _one = one_at_a_time();
    const ANSWER: usize = 16 << 20;
    runtime().block_on(async {
        let timeout = Duration::from_secs(1);
        let server = McpServer::new(toolbox()).idle_timeout(timeout);
        let (address, _stop, _serving) = serve_http(server).await;

        let held_before = PEAK.current_usage();
        let mut stream = TcpStream::connect(address).await.unwrap();
        let body = tool_call("long_text", json!({"bytes": ANSWER})).to_string();
        stream
            .write_all((post_head(address, body.len()) + &body).as_bytes())
            .await
            .unwrap();
        // The answer is made and written until the socket is full; nothing
        // is read.
        let started = Instant::now();
        while PEAK.current_usage().saturating_sub(held_before) < ANSWER {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "no answer made"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        // Freed once the idle timeout has passed since the last byte moved.
        // The answer's serialization and writing come first, and take
        // seconds on a loaded machine (a debug build), so this waits for
        // the memory to go rather than a fixed time; without the idle
        // timeout it never goes, as the peer stays connected.
        let waited = Instant::now();
        let mut left = usize::MAX;
        while waited.elapsed() < timeout * 3 + Duration::from_secs(20) {
            tokio::time::sleep(timeout).await;
            left = PEAK.current_usage().saturating_sub(held_before);
            if left < 4 * MIB {
                break;
            }
        }
        eprintln!(
            "after the idle timeout: {left} bytes held, {:?} after the answer was made",
            waited.elapsed()
        );
        assert!(left < 4 * MIB, "{left} bytes still held");
        // What was in the socket's buffers, then the end: not the whole answer.
        let (read, _) = until_closed(&mut stream, Duration::from_secs(5)).await;
        assert!(read.len() < ANSWER, "{} bytes read", read.len());
    });
}

/// A client that keeps its connection alive and calls `lookup_account`
/// until `stop`, connecting again when an answer closes its connection:
/// how many answers it had, over how many connections.
async fn keep_alive_client(address: SocketAddr, stop: Arc<AtomicBool>) -> (usize, usize) {
    let body = tool_call("lookup_account", json!({"id": "cust_3"})).to_string();
    let request = post_head(address, body.len()).replace("Connection: close\r\n", "") + &body;
    let (mut answers, mut connections) = (0, 0);
    'connect: while !stop.load(Ordering::SeqCst) {
        let mut stream = BufReader::new(TcpStream::connect(address).await.unwrap());
        connections += 1;
        while !stop.load(Ordering::SeqCst) {
            stream
                .get_mut()
                .write_all(request.as_bytes())
                .await
                .unwrap();
            let mut status = String::new();
            stream.read_line(&mut status).await.unwrap();
            assert_eq!(status, "HTTP/1.1 200 OK\r\n");
            let (mut length, mut close) = (0, false);
            loop {
                let mut line = String::new();
                stream.read_line(&mut line).await.unwrap();
                let line = line.trim_end().to_ascii_lowercase();
                if line.is_empty() {
                    break;
                }
                if let Some(value) = line.strip_prefix("content-length: ") {
                    length = value.parse().unwrap();
                }
                close |= line == "connection: close";
            }
            let mut answer = vec![0; length];
            stream.read_exact(&mut answer).await.unwrap();
            let answer: Value = serde_json::from_slice(&answer).unwrap();
            assert_eq!(answer["result"]["isError"], false, "{answer}");
            answers += 1;
            if close {
                continue 'connect;
            }
        }
    }
    (answers, connections)
}

#[test]
fn at_max_connections_kept_alive_connections_take_turns() {
    let _one = one_at_a_time();
    runtime().block_on(async {
        let server = McpServer::new(toolbox()).max_connections(2);
        let (address, _stop, _serving) = serve_http(server).await;
        // Two clients keep both slots busy, calling without a pause...
        let stop = Arc::new(AtomicBool::new(false));
        let busy: Vec<_> = (0..2)
            .map(|_| tokio::spawn(keep_alive_client(address, Arc::clone(&stop))))
            .collect();
        tokio::time::sleep(Duration::from_millis(300)).await;
        // ... and a third is served all the same: at the cap each answer
        // closes its connection, and the one waiting gets a turn.
        let call = tool_call("lookup_account", json!({"id": "cust_4"}));
        let (status, answer) = tokio::time::timeout(Duration::from_secs(5), post(address, &call))
            .await
            .expect("served while the others keep calling");
        assert_eq!(status, "HTTP/1.1 200 OK");
        assert_eq!(answer["result"]["isError"], false, "{answer}");
        // The two were answered every time, over new connections.
        stop.store(true, Ordering::SeqCst);
        for client in busy {
            let (answers, connections) = client.await.unwrap();
            assert!(
                answers > 2 && connections > 1,
                "{answers} answers over {connections} connections"
            );
        }

        // Below the cap a connection is kept alive, once the server has seen
        // the busy clients' connections close (it counts a connection until
        // its task ends, a moment after the peer goes): tried a few times.
        let mut seen = Vec::new();
        for _ in 0..10 {
            let stop = Arc::new(AtomicBool::new(false));
            let alone = tokio::spawn(keep_alive_client(address, Arc::clone(&stop)));
            tokio::time::sleep(Duration::from_millis(300)).await;
            stop.store(true, Ordering::SeqCst);
            let (answers, connections) = alone.await.unwrap();
            assert!(answers > 2, "{answers}");
            seen.push(connections);
            if connections == 1 {
                break;
            }
        }
        assert_eq!(seen.last(), Some(&1), "connections each try: {seen:?}");
    });
}
