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

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use peak_alloc::PeakAlloc;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
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

fn toolbox() -> Toolbox {
    Toolbox::builder()
        .tool(LookupAccount)
        .tool(SendReply)
        .tool(WaitForever)
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
