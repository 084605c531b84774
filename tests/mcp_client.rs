//! Our MCP client against servers we did not write with our own code: an
//! inventory server written here with rmcp's server API (served in process
//! over a pipe), and our example server as a child process over stdio and
//! HTTP. Imported tools are called, their bad calls refused before they
//! reach the server (which sees no call), they get catalogs, recovery and
//! type-checked plans; a server that will not start, dies, hangs or sends
//! what is not MCP gives a typed error.

use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use typed_tools::effect::EffectSet;
use typed_tools::mcp::rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool as McpTool,
};
use typed_tools::mcp::rmcp::service::{RequestContext, RoleServer};
use typed_tools::mcp::rmcp::{ErrorData, ServerHandler, ServiceExt};
use typed_tools::mcp::{Import, ImportError, McpClient, McpError, Unannotated};
use typed_tools::plan::{Interpreter, Plan, PlanError, Value as PlanValue};
use typed_tools::recover::Policy;
use typed_tools::{CatalogFormat, ToolError};

mod mcp_shared;

use mcp_shared::{toolbox_of, toolbox_with};

/// An inventory service written with rmcp's server API. It records every
/// call it receives.
#[derive(Clone, Default)]
struct Inventory {
    calls: Arc<Mutex<Vec<(String, Value)>>>,
    cancelled: Arc<AtomicBool>,
}

impl Inventory {
    fn calls(&self) -> Vec<(String, Value)> {
        self.calls.lock().unwrap().clone()
    }

    /// The tools as the server lists them on the wire.
    fn tools() -> Vec<McpTool> {
        serde_json::from_value(json!([
            {
                "name": "get_stock",
                "description": "How many of an item a warehouse holds.",
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "sku": {"type": "string"},
                        "warehouse": {"type": "string"}
                    },
                    "required": ["sku"],
                    "additionalProperties": false
                },
                "outputSchema": {
                    "type": "object",
                    "properties": {"sku": {"type": "string"}, "count": {"type": "integer"}},
                    "required": ["sku", "count"]
                },
                "annotations": {"readOnlyHint": true, "openWorldHint": false}
            },
            {
                "name": "reserve",
                "description": "Reserve items for an order.",
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "sku": {"type": "string"},
                        "quantity": {"type": "integer", "minimum": 1}
                    },
                    "required": ["sku", "quantity"]
                },
                "outputSchema": {
                    "type": "object",
                    "properties": {"reservation": {"type": "string"}},
                    "required": ["reservation"]
                },
                "annotations": {"readOnlyHint": false, "destructiveHint": false, "openWorldHint": false}
            },
            {
                "name": "ask_supplier",
                "description": "Ask the supplier when an item comes back.",
                "inputSchema": {
                    "type": "object",
                    "properties": {"sku": {"type": "string"}},
                    "required": ["sku"]
                }
            },
            {
                "name": "broken_count",
                "description": "Answers with the wrong shape.",
                "inputSchema": {"type": "object"},
                "outputSchema": {
                    "type": "object",
                    "properties": {"count": {"type": "integer"}},
                    "required": ["count"]
                },
                "annotations": {"readOnlyHint": true, "openWorldHint": false}
            },
            {
                "name": "slow",
                "description": "Takes a minute.",
                "inputSchema": {"type": "object"},
                "annotations": {"readOnlyHint": true, "openWorldHint": false}
            }
        ]))
        .unwrap()
    }

    fn answer(name: &str, arguments: &Value) -> CallToolResult {
        match name {
            "get_stock" => CallToolResult::structured(json!({
                "sku": arguments["sku"], "count": 7
            })),
            "reserve" if arguments["sku"] == "GONE" => {
                CallToolResult::error(vec![ContentBlock::text("no stock left for GONE")])
            }
            "reserve" => CallToolResult::structured(json!({
                "reservation": format!("r-{}-{}", arguments["sku"].as_str().unwrap_or(""), arguments["quantity"])
            })),
            "ask_supplier" => CallToolResult::success(vec![ContentBlock::text("back next week")]),
            "broken_count" => CallToolResult::structured(json!({"count": "many"})),
            _ => CallToolResult::error(vec![ContentBlock::text(format!("no tool {name}"))]),
        }
    }
}

impl ServerHandler for Inventory {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(Inventory::tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        self.calls
            .lock()
            .unwrap()
            .push((request.name.to_string(), arguments.clone()));
        if request.name == "slow" {
            tokio::select! {
                () = context.ct.cancelled() => self.cancelled.store(true, Ordering::SeqCst),
                () = tokio::time::sleep(Duration::from_secs(60)) => {}
            }
        }
        Ok(Inventory::answer(&request.name, &arguments).into())
    }
}

/// The inventory served in process over a pipe, and our client connected to it.
async fn inventory(timeout: Duration) -> (Inventory, McpClient, tokio::task::JoinHandle<()>) {
    let server = Inventory::default();
    let (ours, theirs) = tokio::io::duplex(1 << 16);
    let handler = server.clone();
    let task = tokio::spawn(async move {
        if let Ok(running) = handler.serve(theirs).await {
            let _ = running.waiting().await;
        }
    });
    let client = McpClient::connect("inventory", ours)
        .timeout(timeout)
        .await
        .expect("connects");
    (server, client, task)
}

fn declared() -> Import {
    Import::declared()
        .tool("get_stock", EffectSet::READ)
        .tool("reserve", EffectSet::WRITE)
        .tool("broken_count", EffectSet::READ)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn imported_tools_are_called_and_bad_calls_never_reach_the_server() {
    let (server, client, _task) = inventory(Duration::from_secs(10)).await;
    let toolbox = toolbox_of(client.import(&declared()).await.unwrap());
    assert_eq!(
        toolbox.names().collect::<Vec<_>>(),
        ["get_stock", "reserve", "broken_count"]
    );

    // Catalogs in every format, from the server's schemas.
    for format in CatalogFormat::ALL {
        let catalog = toolbox.catalog(format).to_string();
        assert!(
            catalog.contains("get_stock") && catalog.contains("reserve"),
            "{format:?}"
        );
    }
    let text = toolbox.catalog(CatalogFormat::Text).to_string();
    assert!(
        text.contains("tool get_stock: {sku: String, warehouse?: String} -{Read}-> {sku: String, count: Int}  -- How many of an item a warehouse holds."),
        "{text}"
    );
    assert!(
        text.contains("tool reserve: {sku: String, quantity: Int} -{Write}->"),
        "{text}"
    );
    let mcp = toolbox.catalog(CatalogFormat::Mcp).to_json();
    assert_eq!(mcp["tools"][1]["annotations"]["readOnlyHint"], false);

    // A good call.
    let output = toolbox.call("get_stock", r#"{"sku": "A1"}"#).await.unwrap();
    assert_eq!(output.to_value(), json!({"sku": "A1", "count": 7}));
    assert_eq!(
        server.calls(),
        [("get_stock".to_owned(), json!({"sku": "A1"}))]
    );

    // Bad calls, refused here: the server sees none of them.
    let wrong_type = toolbox
        .call("get_stock", r#"{"sku": 5}"#)
        .await
        .unwrap_err();
    assert!(matches!(wrong_type, ToolError::Deserialization { .. }));
    assert!(wrong_type
        .for_model()
        .contains("$.sku: expected String, found integer 5"));
    let unknown_field = toolbox
        .call("get_stock", r#"{"sku": "A1", "colour": "red"}"#)
        .await
        .unwrap_err();
    assert!(
        unknown_field
            .for_model()
            .contains("$.colour: unknown field"),
        "{unknown_field}"
    );
    let below_minimum = toolbox
        .call("reserve", r#"{"sku": "A1", "quantity": 0}"#)
        .await
        .unwrap_err();
    assert!(
        below_minimum.for_model().contains("$.quantity"),
        "{below_minimum}"
    );
    let missing = toolbox
        .call("reserve", r#"{"sku": "A1"}"#)
        .await
        .unwrap_err();
    assert!(missing
        .for_model()
        .contains("$.quantity: missing required field of type Int"));
    let not_json = toolbox
        .call("reserve", r#"{"sku": "A1""#)
        .await
        .unwrap_err();
    assert!(matches!(not_json, ToolError::InvalidArgs { .. }));
    let unknown = toolbox
        .call("ask_supplier", r#"{"sku": "A1"}"#)
        .await
        .unwrap_err();
    assert!(
        matches!(unknown, ToolError::UnknownTool { .. }),
        "not imported: {unknown}"
    );
    let read_only = toolbox.restrict(EffectSet::READ);
    let denied = read_only
        .call("reserve", r#"{"sku": "A1", "quantity": 2}"#)
        .await
        .unwrap_err();
    assert!(matches!(denied, ToolError::EffectDenied { .. }));
    assert_eq!(server.calls().len(), 1, "{:?}", server.calls());

    // The tool's own error, and a result that breaks the tool's own output
    // schema: both are the tool failing.
    let failed = toolbox
        .call("reserve", r#"{"sku": "GONE", "quantity": 1}"#)
        .await
        .unwrap_err();
    assert_eq!(
        failed,
        ToolError::Execution {
            tool: "reserve".into(),
            message: "no stock left for GONE".into(),
            panicked: false
        }
    );
    let broken = toolbox.call("broken_count", "{}").await.unwrap_err();
    assert!(
        broken.to_string().contains(
            "the MCP server's result for `broken_count` does not match its outputSchema: $.count: expected Int"
        ),
        "{broken}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recovery_repairs_a_call_before_it_is_sent() {
    let (server, client, _task) = inventory(Duration::from_secs(10)).await;
    let toolbox = toolbox_with(client.import(&declared()).await.unwrap(), Policy::recover());
    let output = toolbox
        .call("reserve", "{'sku': 'A1', 'quantity': '3',}")
        .await
        .unwrap();
    assert_eq!(output.to_value(), json!({"reservation": "r-A1-3"}));
    let note = output.note_for_model().unwrap();
    assert!(
        note.contains("replaced single quotes with double quotes"),
        "{note}"
    );
    // The server saw only the repaired call.
    assert_eq!(
        server.calls(),
        [("reserve".to_owned(), json!({"sku": "A1", "quantity": 3}))]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plans_over_imported_tools_are_type_checked_against_their_schemas() {
    let (server, client, _task) = inventory(Duration::from_secs(10)).await;
    let toolbox = toolbox_of(client.import(&declared()).await.unwrap());
    let interpreter = Interpreter::new(&toolbox);

    // Two mistakes a model makes: a field the output does not have, and a
    // string where the server's schema takes an integer. Refused, nothing sent.
    let wrong = Plan::parse(
        r#"match exec tool get_stock {sku = "A1"} {
  Ok(stock) =>
    match exec tool reserve {sku = stock.sku, quantity = stock.sku} {
      Ok(r) => r.reservation ++ stock.warehouse,
      Err(e) => e.message
    },
  Err(e) => e.message
}"#,
    )
    .unwrap();
    let refused = interpreter.run(&wrong).await.unwrap_err();
    let PlanError::TypeErrors(errors) = &refused else {
        panic!("a type error: {refused}")
    };
    assert_eq!(errors.len(), 2, "{refused}");
    let message = refused.to_string();
    assert!(message.contains("quantity"), "{message}");
    assert!(message.contains("warehouse"), "{message}");
    assert!(server.calls().is_empty(), "{:?}", server.calls());

    // The right plan runs, each call once.
    let right = Plan::parse(
        r#"match exec tool get_stock {sku = "A1"} {
  Ok(stock) =>
    match exec tool reserve {sku = stock.sku, quantity = stock.count} {
      Ok(r) => r.reservation,
      Err(e) => e.message
    },
  Err(e) => e.message
}"#,
    )
    .unwrap();
    let run = interpreter.run(&right).await.unwrap();
    assert_eq!(run.outcome.unwrap(), PlanValue::String("r-A1-7".into()));
    assert_eq!(
        server.calls(),
        [
            ("get_stock".to_owned(), json!({"sku": "A1"})),
            ("reserve".to_owned(), json!({"sku": "A1", "quantity": 7})),
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn effects_are_declared_or_derived_from_annotations_never_assumed_pure() {
    let (_server, client, _task) = inventory(Duration::from_secs(10)).await;
    let derived = client.import(&Import::from_annotations()).await.unwrap();
    let effects: Vec<(String, EffectSet, bool)> = derived
        .iter()
        .map(|tool| {
            let spec = tool.spec();
            (spec.name().to_owned(), spec.effects(), spec.is_idempotent())
        })
        .collect();
    assert_eq!(
        effects,
        [
            ("get_stock".to_owned(), EffectSet::READ, true),
            (
                "reserve".to_owned(),
                EffectSet::READ | EffectSet::WRITE,
                false
            ),
            // No annotations: MCP's defaults, a writer in the open world.
            ("ask_supplier".to_owned(), EffectSet::ALL, false),
            ("broken_count".to_owned(), EffectSet::READ, true),
            ("slow".to_owned(), EffectSet::READ, true),
        ]
    );
    let refuse = Import::from_annotations().unannotated(Unannotated::Refuse);
    assert_eq!(
        client.import(&refuse).await.unwrap_err(),
        ImportError::Unannotated {
            name: "ask_supplier".into()
        }
    );
    // Stating a tool's effects overrides the server's word.
    let stated = client
        .import(&refuse.tool("ask_supplier", EffectSet::NETWORK))
        .await
        .unwrap();
    assert_eq!(stated[2].spec().effects(), EffectSet::NETWORK);
    let missing = client
        .import(&Import::declared().tool("get_stok", EffectSet::READ))
        .await
        .unwrap_err();
    assert!(
        missing
            .to_string()
            .starts_with("the MCP server has no tool `get_stok`; it offers: get_stock, reserve"),
        "{missing}"
    );

    // A tool without output schema returns its text.
    let toolbox = toolbox_of(stated);
    let output = toolbox
        .call("ask_supplier", r#"{"sku": "A1"}"#)
        .await
        .unwrap();
    assert_eq!(output.to_value(), json!("back next week"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_that_times_out_is_cancelled_on_the_server() {
    let (server, client, _task) = inventory(Duration::from_millis(300)).await;
    let toolbox = toolbox_of(
        client
            .import(&Import::declared().tool("slow", EffectSet::READ))
            .await
            .unwrap(),
    );
    let error = toolbox.call("slow", "{}").await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "tool `slow` failed: MCP server `inventory` did not answer tools/call within 300ms"
    );
    let started = Instant::now();
    while !server.cancelled.load(Ordering::SeqCst) {
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "the server was not told"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // The connection is still good.
    assert_eq!(client.tools().await.unwrap().len(), 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_dies_gives_typed_errors() {
    let (_server, client, task) = inventory(Duration::from_secs(10)).await;
    let toolbox = toolbox_of(client.import(&declared()).await.unwrap());
    task.abort();
    let _ = task.await;
    let error = toolbox
        .call("get_stock", r#"{"sku": "A1"}"#)
        .await
        .unwrap_err();
    let ToolError::Execution { message, .. } = &error else {
        panic!("an execution error: {error:?}")
    };
    assert_eq!(
        message,
        "MCP server `inventory` closed the connection during tools/call"
    );
    assert_eq!(
        client.tools().await.unwrap_err(),
        McpError::Closed {
            server: "inventory".into(),
            waiting_for: "tools/list"
        }
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn servers_that_do_not_start_hang_or_exit_give_typed_errors() {
    let missing = McpClient::stdio(Command::new("/nonexistent/mcp-server")).await;
    assert!(
        matches!(missing, Err(McpError::Connect { .. })),
        "{missing:?}"
    );

    // Nothing listens on port 1.
    let refused = McpClient::http("http://127.0.0.1:1/mcp").await.unwrap_err();
    assert!(matches!(refused, McpError::Connect { .. }), "{refused:?}");
    assert!(
        refused
            .to_string()
            .starts_with("could not reach MCP server `http://127.0.0.1:1/mcp`"),
        "{refused}"
    );

    let mut exits = Command::new("sh");
    exits.args(["-c", "exit 3"]);
    let exited = McpClient::stdio(exits).await.unwrap_err();
    assert_eq!(
        exited,
        McpError::Closed {
            server: "sh -c exit 3".into(),
            waiting_for: "initialize"
        }
    );

    let mut hangs = Command::new("sleep");
    hangs.arg("30");
    let started = Instant::now();
    let hung = McpClient::stdio(hangs)
        .timeout(Duration::from_millis(500))
        .await
        .unwrap_err();
    assert!(
        matches!(
            hung,
            McpError::Timeout {
                waiting_for: "initialize",
                ..
            }
        ),
        "{hung:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));

    // Not JSON at all: the lines are skipped, and nothing that is MCP comes.
    let mut babbles = Command::new("sh");
    babbles.args([
        "-c",
        "while true; do echo 'hello, I am not JSON-RPC'; sleep 0.05; done",
    ]);
    let babbled = McpClient::stdio(babbles)
        .timeout(Duration::from_millis(500))
        .await
        .unwrap_err();
    assert!(matches!(babbled, McpError::Timeout { .. }), "{babbled:?}");
}

/// A fake server over a pipe that answers `initialize` with `init` and every
/// later request with `result`, both written by hand.
async fn scripted(init: Value, result: Value) -> Result<McpClient, McpError> {
    let (ours, theirs) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        let (read, mut write) = tokio::io::split(theirs);
        let mut lines = BufReader::new(read).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            let message: Value = serde_json::from_str(&line).unwrap_or_default();
            let Some(id) = message.get("id") else {
                continue;
            };
            let answer = match message["method"].as_str() {
                Some("initialize") => json!({"jsonrpc": "2.0", "id": id, "result": init}),
                _ => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            };
            let _ = write.write_all(format!("{answer}\n").as_bytes()).await;
        }
    });
    McpClient::connect("scripted", ours)
        .timeout(Duration::from_secs(2))
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_messages_give_typed_errors() {
    let good_init = json!({
        "protocolVersion": "2025-06-18",
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "scripted", "version": "0"}
    });
    // An `initialize` answer that is not one.
    let bad_init = scripted(json!({"hello": "world"}), json!({}))
        .await
        .unwrap_err();
    assert!(
        matches!(bad_init, McpError::Malformed { .. }),
        "{bad_init:?}"
    );

    // A `tools/list` answer whose tools are not tools.
    let client = scripted(good_init.clone(), json!({"tools": "none"}))
        .await
        .unwrap();
    let listed = client.tools().await.unwrap_err();
    assert!(matches!(listed, McpError::Malformed { .. }), "{listed:?}");
    let imported = client
        .import(&Import::from_annotations())
        .await
        .unwrap_err();
    assert!(matches!(
        imported,
        ImportError::Connection(McpError::Malformed { .. })
    ));

    // A `tools/call` answer that is not a tool result.
    let tool = json!({"tools": [{"name": "t", "inputSchema": {"type": "object"}}]});
    let client = scripted(good_init, tool).await.unwrap();
    let toolbox = toolbox_of(
        client
            .import(&Import::declared().tool("t", EffectSet::READ))
            .await
            .unwrap(),
    );
    let error = toolbox.call("t", "{}").await.unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("tool `t` failed: MCP server `scripted` sent a malformed message"),
        "{error}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_client_imports_our_example_server_over_stdio_and_http() {
    let stdio = McpClient::stdio(mcp_shared::server_command(&[]))
        .await
        .unwrap();
    let (_process, url) = mcp_shared::http_server(&[]);
    let http = McpClient::http(url.clone()).await.unwrap();
    assert_eq!(http.server(), url);

    for client in [stdio, http] {
        let tools = client.import(&Import::from_annotations()).await.unwrap();
        let toolbox = toolbox_of(tools);
        // Typed tools, served, imported: the effects come back (a pure tool
        // comes back as Read: nothing on the wire says it reads nothing).
        let effects: Vec<(&str, EffectSet)> = toolbox
            .specs()
            .map(|spec| (spec.name(), spec.effects()))
            .collect();
        let write = EffectSet::READ | EffectSet::WRITE;
        assert_eq!(
            effects,
            [
                ("lookup_account", EffectSet::READ),
                ("issue_refund", write),
                ("send_reply", write),
                ("charge", write),
                ("format_cents", EffectSet::READ),
            ]
        );
        // λ-Tool's support agent over the imported tools: type-checked
        // against the schemas that crossed the wire, and run.
        let plan = Plan::parse(
            r#"match exec tool lookup_account {id = "cust_12345"} {
  Ok(account) =>
    match exec tool issue_refund {account_id = account.id, amount = account.last_charge_cents} {
      Ok(refund) => refund.tx_id,
      Err(e) => "refund failed"
    },
  Err(e) => "account lookup failed"
}"#,
        )
        .unwrap();
        let run = Interpreter::new(&toolbox).run(&plan).await.unwrap();
        assert_eq!(
            run.outcome.unwrap(),
            PlanValue::String("tx_cust_12345_1299".into())
        );
        client.close().await;
        let closed = toolbox
            .call("format_cents", r#"{"cents": 5}"#)
            .await
            .unwrap_err();
        assert!(
            closed.to_string().contains("closed the connection"),
            "{closed}"
        );
    }
}

/// A server written with rmcp's API that lists its tools `per_page` at a
/// time, over `pages` pages, or without end; it counts the pages asked for.
#[derive(Clone)]
struct Paged {
    per_page: usize,
    pages: Option<usize>,
    asked: Arc<Mutex<Vec<Option<String>>>>,
}

impl ServerHandler for Paged {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let cursor = request.and_then(|request| request.cursor);
        let page: usize = cursor
            .as_deref()
            .map_or(0, |cursor| cursor.parse().unwrap());
        self.asked.lock().unwrap().push(cursor);
        let tools = (0..self.per_page)
            .map(|i| {
                serde_json::from_value(json!({
                    "name": format!("tool_{page}_{i}"),
                    "inputSchema": {"type": "object"}
                }))
                .unwrap()
            })
            .collect();
        let mut result = ListToolsResult::with_all_items(tools);
        if self.pages.is_none_or(|pages| page + 1 < pages) {
            result.next_cursor = Some((page + 1).to_string());
        }
        Ok(result)
    }
}

async fn paged(per_page: usize, pages: Option<usize>) -> (Paged, typed_tools::mcp::Connect) {
    let server = Paged {
        per_page,
        pages,
        asked: Arc::default(),
    };
    let (ours, theirs) = tokio::io::duplex(1 << 16);
    let handler = server.clone();
    tokio::spawn(async move {
        if let Ok(running) = handler.serve(theirs).await {
            let _ = running.waiting().await;
        }
    });
    (server, McpClient::connect("paged", ours))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listing_that_never_ends_stops_at_the_page_limit() {
    // Pages are followed while the server gives a cursor.
    let (server, connect) = paged(3, Some(4)).await;
    let tools = connect.await.unwrap().tools().await.unwrap();
    assert_eq!(tools.len(), 12);
    assert_eq!(tools[11].name, "tool_3_2");
    assert_eq!(
        *server.asked.lock().unwrap(),
        [None, Some("1".into()), Some("2".into()), Some("3".into())]
    );

    // A server that always has another page: 100 pages by default, then a
    // typed error naming the limit, listing or importing.
    let (server, connect) = paged(1, None).await;
    let client = connect.await.unwrap();
    let started = Instant::now();
    let error = client.tools().await.unwrap_err();
    assert_eq!(
        error,
        McpError::LimitExceeded {
            server: "paged".into(),
            limit: typed_tools::mcp::ListLimit::Pages(100)
        }
    );
    assert_eq!(
        error.to_string(),
        "MCP server `paged` listed its tools in more than 100 pages (limit `max_pages`)"
    );
    assert_eq!(server.asked.lock().unwrap().len(), 100);
    assert!(started.elapsed() < Duration::from_secs(10));
    let imported = client
        .import(&Import::from_annotations())
        .await
        .unwrap_err();
    assert_eq!(imported, ImportError::Connection(error));

    let (server, connect) = paged(1, None).await;
    let error = connect
        .max_pages(5)
        .await
        .unwrap()
        .tools()
        .await
        .unwrap_err();
    assert!(
        error
            .to_string()
            .ends_with("in more than 5 pages (limit `max_pages`)"),
        "{error}"
    );
    assert_eq!(server.asked.lock().unwrap().len(), 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listing_of_too_many_tools_stops_at_the_tool_limit() {
    // 1,000 tools a page without end: the 11th page would pass 10,000.
    let (server, connect) = paged(1_000, None).await;
    let error = connect.await.unwrap().tools().await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "MCP server `paged` listed more than 10000 tools (limit `max_tools`)"
    );
    assert_eq!(server.asked.lock().unwrap().len(), 11);

    // Exactly at the limit is within it.
    let (_server, connect) = paged(1_000, Some(3)).await;
    let client = connect.max_tools(3_000).await.unwrap();
    assert_eq!(client.tools().await.unwrap().len(), 3_000);
    let (_server, connect) = paged(1_000, Some(3)).await;
    let error = connect
        .max_tools(2_999)
        .await
        .unwrap()
        .tools()
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            McpError::LimitExceeded {
                limit: typed_tools::mcp::ListLimit::Tools(2_999),
                ..
            }
        ),
        "{error:?}"
    );
}
