//! A context per MCP request: the server makes each call's context from
//! its HTTP request's headers, so that a bearer token is the caller's
//! identity. Driven by rmcp's own HTTP client over 127.0.0.1: two clients
//! with different tokens, at once, each see their own identity; a client
//! without a token, or with one the server does not know, gets a clear
//! error and nothing runs.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};
use typed_tools::mcp::rmcp::model::{CallToolRequestParams, CallToolResult};
use typed_tools::mcp::rmcp::service::{RoleClient, RunningService};
use typed_tools::mcp::rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use typed_tools::mcp::rmcp::transport::StreamableHttpClientTransport;
use typed_tools::mcp::rmcp::ServiceExt;
use typed_tools::mcp::{McpRequest, McpServer};
use typed_tools::toolbox::{Approval, Decision};
use typed_tools::{tool, Toolbox};

/// Who is calling: what the server made of the request's token.
struct User {
    name: String,
    admin: bool,
}

/// The name of the user calling.
#[tool(effects = Read)]
async fn whoami(#[context] user: &User) -> String {
    // Gives way, so that the other client's call runs meanwhile.
    tokio::task::yield_now().await;
    user.name.clone()
}

/// Delete a note; counted.
#[tool(effects = Write)]
fn delete_note(#[state] deleted: &AtomicUsize, #[context] user: &User, id: u32) -> String {
    deleted.fetch_add(1, Ordering::SeqCst);
    format!("{} deleted note {id}", user.name)
}

/// The user a bearer token stands for.
fn user_of(request: &McpRequest<'_>) -> Result<User, String> {
    match request.bearer_token() {
        Some("token-ana") => Ok(User {
            name: "ana".into(),
            admin: true,
        }),
        Some("token-bob") => Ok(User {
            name: "bob".into(),
            admin: false,
        }),
        Some(_) => Err("the bearer token is not known".into()),
        None => Err("no bearer token: send `Authorization: Bearer <token>`".into()),
    }
}

/// Serves the tools on 127.0.0.1 until the test ends; its URL.
async fn serve(deleted: &Arc<AtomicUsize>) -> String {
    let toolbox = Toolbox::builder()
        .context::<User>()
        .tool(Whoami)
        .tool(DeleteNote::new(Arc::clone(deleted)))
        .approval(Approval::with_context(|request, user: &User| {
            match user.admin {
                true => Decision::Approve,
                false => Decision::Refuse(format!("{} may not call `{}`", user.name, request.tool)),
            }
        }))
        .build()
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let server = McpServer::with_context(toolbox, user_of);
    tokio::spawn(server.serve_http(listener, std::future::pending()));
    url
}

type Client = RunningService<RoleClient, ()>;

async fn client(url: &str, token: Option<&str>) -> Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
    let config = match token {
        Some(token) => config.auth_header(token),
        None => config,
    };
    ().serve(StreamableHttpClientTransport::from_config(config))
        .await
        .expect("the handshake needs no context")
}

async fn call(client: &Client, name: &str, arguments: Value) -> Result<CallToolResult, String> {
    let Value::Object(arguments) = arguments else {
        panic!("arguments are an object")
    };
    client
        .call_tool(CallToolRequestParams::new(name.to_owned()).with_arguments(arguments))
        .await
        .map_err(|error| error.to_string())
}

fn text(result: &CallToolResult) -> &str {
    &result.content[0].as_text().unwrap().text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_request_is_given_the_identity_of_its_bearer_token() {
    let deleted = Arc::new(AtomicUsize::new(0));
    let url = serve(&deleted).await;
    let ana = client(&url, Some("token-ana")).await;
    let bob = client(&url, Some("token-bob")).await;

    // At once, many times over: each call sees its own client's user.
    for _ in 0..10 {
        let (for_ana, for_bob) = tokio::join!(
            call(&ana, "whoami", json!({})),
            call(&bob, "whoami", json!({}))
        );
        assert_eq!(text(&for_ana.unwrap()), "ana");
        assert_eq!(text(&for_bob.unwrap()), "bob");
    }

    // The approval sees who is asking too.
    let refused = call(&bob, "delete_note", json!({"id": 1})).await.unwrap();
    assert_eq!(refused.is_error, Some(true));
    assert!(
        text(&refused).contains("bob may not call `delete_note`"),
        "{refused:?}"
    );
    let done = call(&ana, "delete_note", json!({"id": 1})).await.unwrap();
    assert_eq!(text(&done), "ana deleted note 1");
    assert_eq!(deleted.load(Ordering::SeqCst), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_or_unknown_token_is_a_clear_error_and_nothing_runs() {
    let deleted = Arc::new(AtomicUsize::new(0));
    let url = serve(&deleted).await;

    let anonymous = client(&url, None).await;
    // Listing needs no context.
    assert_eq!(anonymous.list_all_tools().await.unwrap().len(), 2);
    let error = call(&anonymous, "delete_note", json!({"id": 1}))
        .await
        .unwrap_err();
    assert!(
        error.contains(
            "the request was refused: no bearer token: send `Authorization: Bearer <token>`"
        ),
        "{error}"
    );

    let stranger = client(&url, Some("token-eve")).await;
    let error = call(&stranger, "whoami", json!({})).await.unwrap_err();
    assert!(
        error.contains("the request was refused: the bearer token is not known"),
        "{error}"
    );
    assert_eq!(deleted.load(Ordering::SeqCst), 0);
}
