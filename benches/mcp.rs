//! A call's round trip through our MCP server against the same `toolbox.call`
//! made directly, measured in the same run.
//!
//! `cargo bench --features mcp --bench mcp`. Three arms, the same call
//! (`lookup_account`, an object output, so the MCP answer carries
//! `structuredContent` as well as text):
//! - `direct`: `toolbox.call(name, args)` polled to completion: the baseline;
//! - `in_process`: `McpClient::call` to an `McpServer` over an in-memory
//!   pipe: the protocol's cost (JSON-RPC framing, rmcp's tasks and channels,
//!   the result's content blocks) without the operating system's;
//! - `stdio`: `McpClient::call` to an `McpServer` in a child process over its
//!   standard input and output, as MCP clients run local servers: the whole
//!   round trip. The child is this bench binary itself, started with
//!   `TYPED_TOOLS_MCP_BENCH_SERVE=1`, so that it is built with the same
//!   profile and needs no other target.
//!
//! The client side is ours too (`McpClient`, on rmcp); one call is in flight
//! at a time. Client and server run on current-thread tokio runtimes, so a
//! call crosses no thread inside a process: on a multi-thread runtime (one
//! worker, the caller blocking on it) each of rmcp's hand-offs between tasks
//! is a thread wake-up, which cost 2x (in process) and 4x (stdio) more in
//! one run on the shared 2-core machine.

use std::hint::black_box;
use std::process::Command;

use criterion::{criterion_group, Criterion};
use futures::executor::block_on;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::json;
use typed_tools::mcp::{McpClient, McpServer};
use typed_tools::{tool, Toolbox};

/// Set in the child: serve over stdio instead of benchmarking.
const SERVE: &str = "TYPED_TOOLS_MCP_BENCH_SERVE";

/// A customer account.
#[derive(Serialize, JsonSchema)]
struct Account {
    id: String,
    subscription_tier: String,
    email: String,
    last_charge_cents: i64,
}

/// Look up a customer account.
#[tool(effects = Read)]
fn lookup_account(id: String) -> Account {
    Account {
        id,
        subscription_tier: "pro".into(),
        email: "ana@example.com".into(),
        last_charge_cents: 1299,
    }
}

fn toolbox() -> Toolbox {
    Toolbox::builder().tool(LookupAccount).build().unwrap()
}

const ARGS: &str = r#"{"id": "cust_12345"}"#;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn round_trip(c: &mut Criterion) {
    let mut group = c.benchmark_group("mcp_call");
    let toolbox = toolbox();
    group.bench_function("direct", |b| {
        b.iter(|| block_on(toolbox.call("lookup_account", black_box(ARGS))).unwrap())
    });

    let runtime = runtime();
    let args = json!({"id": "cust_12345"});
    let in_process = runtime.block_on(async {
        let (ours, theirs) = tokio::io::duplex(1 << 16);
        let (read, write) = tokio::io::split(theirs);
        tokio::spawn(McpServer::new(toolbox.clone()).serve_io(read, write));
        McpClient::connect("in-process", ours).await.unwrap()
    });
    group.bench_function("in_process", |b| {
        b.iter(|| {
            runtime
                .block_on(in_process.call("lookup_account", black_box(args.clone())))
                .unwrap()
        })
    });

    let mut child = Command::new(std::env::current_exe().unwrap());
    child.env(SERVE, "1");
    let stdio = runtime.block_on(async { McpClient::stdio(child).await.unwrap() });
    // The same answer both ways.
    let direct = block_on(toolbox.call("lookup_account", ARGS)).unwrap();
    let served = runtime
        .block_on(stdio.call("lookup_account", args.clone()))
        .unwrap();
    assert_eq!(served.structured_content, Some(direct.to_value()));
    group.bench_function("stdio", |b| {
        b.iter(|| {
            runtime
                .block_on(stdio.call("lookup_account", black_box(args.clone())))
                .unwrap()
        })
    });
    group.finish();
    runtime.block_on(async {
        stdio.close().await;
        in_process.close().await;
    });
}

criterion_group!(benches, round_trip);

fn main() {
    if std::env::var_os(SERVE).is_some() {
        let served = runtime().block_on(McpServer::new(toolbox()).serve_stdio());
        if let Err(error) = served {
            eprintln!("error: {error}");
            std::process::exit(1);
        }
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
