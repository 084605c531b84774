//! Our MCP server, driven by a client nobody here wrote: rmcp's. The server
//! is the `mcp_server` example (a shop's support tools, written in the
//! example) as a real child process, over stdio and over streamable HTTP on
//! 127.0.0.1. What a user of an MCP client checks: the tools listed with
//! annotations derived from their effects, a good call with
//! `structuredContent`, a wrong argument type, an unknown tool, the tools'
//! own errors, and a Write tool hidden by a read-only view (unknown to the
//! client), each as a tool result the model can read. Then statelessness
//! over HTTP, a clean shutdown on both transports, and cancellation of a
//! call in flight.

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use typed_tools::mcp::rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, ClientRequest,
};
use typed_tools::mcp::rmcp::service::{PeerRequestOptions, RoleClient, RunningService};
use typed_tools::mcp::rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use typed_tools::mcp::rmcp::ServiceExt;
use typed_tools::mcp::McpServer;
use typed_tools::{tool, Toolbox};

mod mcp_shared;

use mcp_shared::{http_server, server_command, wait_for_exit};

type Client = RunningService<RoleClient, ()>;

async fn stdio_client(args: &[&str]) -> Client {
    let mut command = server_command(args);
    command.stderr(Stdio::inherit());
    let transport = TokioChildProcess::new(tokio::process::Command::from(command))
        .expect("the example server starts");
    ().serve(transport).await.expect("the handshake succeeds")
}

async fn http_client(url: &str) -> Client {
    // rmcp's default client is reqwest over rustls, whose crypto provider
    // the crate leaves to the program (it gives its own clients `ring`).
    let _ = rustls::crypto::ring::default_provider().install_default();
    ().serve(StreamableHttpClientTransport::from_uri(url.to_owned()))
        .await
        .expect("the handshake succeeds")
}

async fn call(client: &Client, name: &str, arguments: Value) -> CallToolResult {
    let Value::Object(arguments) = arguments else {
        panic!("arguments are an object")
    };
    client
        .call_tool(CallToolRequestParams::new(name.to_owned()).with_arguments(arguments))
        .await
        .expect("a tool result, not a protocol error")
}

/// The result's text blocks, joined.
fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|block| block.as_text().map(|text| text.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// What every transport must show.
async fn check_full_server(client: &Client) {
    let tools = client.list_all_tools().await.expect("tools/list answers");
    let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
    assert_eq!(
        names,
        [
            "lookup_account",
            "issue_refund",
            "send_reply",
            "charge",
            "format_cents"
        ]
    );
    let annotations = |name: &str| {
        let tool = tools.iter().find(|tool| tool.name == name).unwrap();
        serde_json::to_value(tool.annotations.as_ref().expect("annotations")).unwrap()
    };
    // Read: read-only, hence not destructive and safe to repeat; a closed world.
    let lookup = annotations("lookup_account");
    assert_eq!(lookup["readOnlyHint"], true, "{lookup}");
    assert_eq!(lookup["destructiveHint"], false, "{lookup}");
    assert_eq!(lookup["idempotentHint"], true, "{lookup}");
    assert_eq!(lookup["openWorldHint"], false, "{lookup}");
    // Write, not declared idempotent.
    let refund = annotations("issue_refund");
    assert_eq!(refund["readOnlyHint"], false, "{refund}");
    assert_eq!(refund["destructiveHint"], true, "{refund}");
    assert_eq!(refund["idempotentHint"], false, "{refund}");
    // An object output is advertised; a string output is not (MCP's
    // `outputSchema` must be an object schema).
    let lookup_tool = tools
        .iter()
        .find(|tool| tool.name == "lookup_account")
        .unwrap();
    let output_schema = lookup_tool
        .output_schema
        .as_ref()
        .expect("an output schema");
    assert_eq!(output_schema["type"], "object");
    assert!(output_schema["properties"]["last_charge_cents"].is_object());
    let format_tool = tools
        .iter()
        .find(|tool| tool.name == "format_cents")
        .unwrap();
    assert!(format_tool.output_schema.is_none());

    // A good call: structured content, and the same JSON as text.
    let good = call(client, "lookup_account", json!({"id": "cust_12345"})).await;
    assert_eq!(good.is_error, Some(false));
    let expected = json!({
        "id": "cust_12345",
        "subscription_tier": "pro",
        "email": "ana@example.com",
        "last_charge_cents": 1299,
    });
    assert_eq!(good.structured_content, Some(expected.clone()));
    assert_eq!(
        serde_json::from_str::<Value>(&text(&good)).unwrap(),
        expected
    );

    // A string output is text, and has no structured content.
    let cents = call(client, "format_cents", json!({"cents": 1299})).await;
    assert_eq!(cents.is_error, Some(false));
    assert_eq!(text(&cents), "$12.99");
    assert_eq!(cents.structured_content, None);

    // A wrong argument type: a tool result marked as an error, naming the field.
    let wrong = call(
        client,
        "issue_refund",
        json!({"account_id": "cust_12345", "amount": "ten dollars"}),
    )
    .await;
    assert_eq!(wrong.is_error, Some(true));
    let message = text(&wrong);
    assert!(
        message.contains("$.amount: expected Int, found string \"ten dollars\""),
        "{message}"
    );

    // An unknown tool: a tool result too, with the names the model may use.
    let unknown = call(client, "refund_customer", json!({"id": "cust_12345"})).await;
    assert_eq!(unknown.is_error, Some(true));
    let message = text(&unknown);
    assert!(
        message.contains("There is no tool named `refund_customer`"),
        "{message}"
    );
    assert!(message.contains("issue_refund"), "{message}");

    // A missing argument.
    let missing = call(client, "lookup_account", json!({})).await;
    assert_eq!(missing.is_error, Some(true));
    let message = text(&missing);
    assert!(
        message.contains("$.id: missing required field of type String"),
        "{message}"
    );

    // Arguments past the toolbox's limit (1 MiB): refused unread, with the
    // limit, as a result the model can act on.
    let long = "x".repeat(1_200_000);
    let too_large = call(client, "lookup_account", json!({ "id": long })).await;
    assert_eq!(too_large.is_error, Some(true));
    let message = text(&too_large);
    assert!(
        message.contains("more than the 1048576 allowed"),
        "{message}"
    );

    // The tool's own error.
    let own = call(client, "charge", json!({"id": 7, "amount": -5})).await;
    assert_eq!(own.is_error, Some(true));
    let message = text(&own);
    assert!(
        message.contains("The tool `charge` failed: order 7: negative amount"),
        "{message}"
    );

    // The example's shop: an account it does not have, and a refund past
    // the account's last charge, are the tools' own errors.
    let nobody = call(client, "lookup_account", json!({"id": "cust_0"})).await;
    assert_eq!(nobody.is_error, Some(true));
    let message = text(&nobody);
    assert!(
        message.contains("The tool `lookup_account` failed: there is no account `cust_0`"),
        "{message}"
    );
    let too_much = call(
        client,
        "issue_refund",
        json!({"account_id": "cust_12345", "amount": 5000}),
    )
    .await;
    assert_eq!(too_much.is_error, Some(true));
    let message = text(&too_much);
    assert!(
        message.contains("a refund to `cust_12345` is between 1 and 1299 cents, not 5000"),
        "{message}"
    );
}

/// A read-only view: the Write tools are neither listed nor run, and to a
/// client they do not exist: a call of one is answered as a call of a name
/// the server does not have, suggesting only listed tools.
async fn check_read_only_server(client: &Client) {
    let tools = client.list_all_tools().await.expect("tools/list answers");
    let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
    assert_eq!(names, ["lookup_account", "format_cents"]);
    let hidden = call(
        client,
        "issue_refund",
        json!({"account_id": "cust_12345", "amount": 100}),
    )
    .await;
    assert_eq!(hidden.is_error, Some(true));
    assert_eq!(
        text(&hidden),
        "There is no tool named `issue_refund`. Available tools: `lookup_account`, `format_cents`."
    );
    // The same words as for a name that was never there.
    let never = call(client, "refund_customer", json!({"id": "cust_12345"})).await;
    assert_eq!(
        text(&never),
        text(&hidden).replace("issue_refund", "refund_customer")
    );
    // A slip of a hidden tool's name is not pointed at it; a slip of a
    // listed one is.
    let slip = call(client, "charges", json!({"id": 7, "amount": 5})).await;
    assert_eq!(
        text(&slip),
        "There is no tool named `charges`. Available tools: `lookup_account`, `format_cents`."
    );
    let listed_slip = call(client, "format_cent", json!({"cents": 5})).await;
    assert_eq!(
        text(&listed_slip),
        "There is no tool named `format_cent`. Did you mean `format_cents`?"
    );
}

/// The example is what a reader copies to serve tools of their own, so it
/// writes the tools it serves: no module from elsewhere, a `#[tool]` fn for
/// each tool listed.
#[test]
fn the_example_defines_the_tools_it_serves() {
    let source = include_str!("../examples/mcp_server.rs");
    for borrowed in ["#[path", "mod support", "tests/"] {
        assert!(!source.contains(borrowed), "the example uses `{borrowed}`");
    }
    for name in [
        "lookup_account",
        "issue_refund",
        "send_reply",
        "charge",
        "format_cents",
    ] {
        let at = source
            .find(&format!("\nfn {name}("))
            .unwrap_or_else(|| panic!("the example has no `fn {name}`"));
        let attribute = source[..at].rfind("#[tool(").expect("a #[tool]");
        assert!(
            !source[attribute..at].contains("\nfn "),
            "`{name}` is a #[tool] fn"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rmcp_client_drives_the_example_server_over_stdio() {
    let client = stdio_client(&[]).await;
    let info = client.peer_info().expect("the server introduced itself");
    assert_eq!(
        info.server_info.as_ref().unwrap().name,
        "typed-tools-support"
    );
    assert!(info
        .instructions
        .as_ref()
        .unwrap()
        .contains("refund at most its last charge"));
    assert!(info.capabilities.tools.is_some());
    check_full_server(&client).await;
    client.cancel().await.unwrap();

    let read_only = stdio_client(&["--read-only"]).await;
    check_read_only_server(&read_only).await;
    read_only.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rmcp_client_drives_the_example_server_over_http() {
    let (_server, url) = http_server(&[]);
    assert!(
        url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"),
        "{url}"
    );
    let client = http_client(&url).await;
    check_full_server(&client).await;
    client.cancel().await.unwrap();

    let (_read_only_server, url) = http_server(&["--read-only"]);
    let read_only = http_client(&url).await;
    check_read_only_server(&read_only).await;
    read_only.cancel().await.unwrap();
}

/// One HTTP/1.1 POST of a JSON-RPC message, written by hand so that nothing
/// (no session id, no handshake) is sent but the request itself.
async fn post(url: &str, body: &Value) -> (String, Value) {
    let address = url
        .strip_prefix("http://")
        .and_then(|rest| rest.strip_suffix("/mcp"))
        .unwrap();
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    let body = body.to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-06-18\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap();
    let body = serde_json::from_str(body).unwrap_or(Value::Null);
    (head.to_owned(), body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_instances_are_interchangeable_behind_a_load_balancer() {
    // Two instances, as behind a load balancer: the handshake goes to one,
    // the call to the other, which never saw this client.
    let (_first, first_url) = http_server(&[]);
    let (_second, second_url) = http_server(&[]);
    let initialize = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "by-hand", "version": "0"}
        }
    });
    let (head, answer) = post(&first_url, &initialize).await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert_eq!(
        answer["result"]["serverInfo"]["name"], "typed-tools-support",
        "{answer}"
    );
    // No session: nothing for a client to carry to the next instance.
    assert!(
        !head.to_ascii_lowercase().contains("mcp-session-id"),
        "{head}"
    );

    let call = json!({
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "issue_refund", "arguments": {"account_id": "cust_12345", "amount": 100}}
    });
    let (head, answer) = post(&second_url, &call).await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    assert_eq!(
        answer["result"]["structuredContent"],
        json!({"tx_id": "tx_cust_12345_100"})
    );
}

#[test]
fn stdio_server_exits_cleanly_when_the_client_closes_its_input() {
    let mut child = server_command(&[])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let initialize = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "by-hand", "version": "0"}}
    });
    writeln!(stdin, "{initialize}").unwrap();
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let answer: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(answer["id"], 1);
    assert_eq!(
        answer["result"]["serverInfo"]["name"],
        "typed-tools-support"
    );

    // MCP's stdio shutdown: the client closes the server's input.
    drop(stdin);
    let status = wait_for_exit(&mut child);
    assert!(status.success(), "{status}");
    // Nothing but protocol messages on standard output.
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
    assert_eq!(rest, "");
}

#[test]
fn http_server_stops_cleanly_on_sigterm() {
    let (mut server, _url) = http_server(&[]);
    let status = std::process::Command::new("kill")
        .args(["-TERM", &server.child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let status = wait_for_exit(&mut server.child);
    assert!(status.success(), "{status}");
    assert_eq!(server.stderr_after_exit(), ["stopped"]);
}

/// Set when the tool's future is dropped.
struct DropFlag(Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// Waits for a sign that never comes.
#[tool(effects = Read)]
async fn wait_forever(#[state] dropped: &Arc<AtomicBool>) -> String {
    let _flag = DropFlag(Arc::clone(dropped));
    std::future::pending::<String>().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_call_is_dropped_and_the_server_goes_on() {
    let dropped = Arc::new(AtomicBool::new(false));
    let toolbox = Toolbox::builder()
        .tool(WaitForever::new(Arc::clone(&dropped)))
        .build()
        .unwrap();
    let (ours, theirs) = tokio::io::duplex(1 << 16);
    let (read, write) = tokio::io::split(theirs);
    let served = tokio::spawn(McpServer::new(toolbox).serve_io(read, write));
    let client = ().serve(ours).await.unwrap();

    let request = ClientRequest::CallToolRequest(CallToolRequest::new(
        CallToolRequestParams::new("wait_forever").with_arguments(Default::default()),
    ));
    let handle = client
        .send_cancellable_request(request, PeerRequestOptions::no_options())
        .await
        .unwrap();
    // Let the call start, then cancel it.
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!dropped.load(Ordering::SeqCst));
    handle
        .cancel(Some("the user gave up".into()))
        .await
        .unwrap();
    let started = Instant::now();
    while !dropped.load(Ordering::SeqCst) {
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "the call was not dropped"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // The server still answers.
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(tools[0].name, "wait_forever");

    // And stops cleanly when the client goes away.
    client.cancel().await.unwrap();
    let outcome = tokio::time::timeout(Duration::from_secs(5), served).await;
    assert!(matches!(outcome, Ok(Ok(Ok(())))), "{outcome:?}");
}
