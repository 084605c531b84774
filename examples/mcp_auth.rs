//! A per-request context over MCP: each HTTP request's bearer token becomes
//! the caller's identity, which the tools and the approval see.
//!
//! The server makes a `User` from the `Authorization: Bearer <token>` header
//! of each request (`McpServer::with_context`); `my_notes` lists the notes
//! of the user asking, and deleting a note is approved for admins only. The
//! example serves on 127.0.0.1, then talks to itself with rmcp's HTTP client
//! as three clients (ana, an admin; bob; and one without a token), prints
//! what each is answered, and stops. Offline, no key:
//!
//! ```text
//! cargo run --features mcp-http --example mcp_auth
//! ```

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use typed_tools::mcp::rmcp::model::CallToolRequestParams;
use typed_tools::mcp::rmcp::service::{RoleClient, RunningService};
use typed_tools::mcp::rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use typed_tools::mcp::rmcp::transport::StreamableHttpClientTransport;
use typed_tools::mcp::rmcp::ServiceExt;
use typed_tools::mcp::{McpRequest, McpServer};
use typed_tools::toolbox::{Approval, Decision};
use typed_tools::{tool, Toolbox};

/// Who is calling: made from the request's token, per request.
struct User {
    name: String,
    admin: bool,
}

/// The notes, by author.
#[derive(Default)]
struct Notes(Mutex<HashMap<String, Vec<String>>>);

/// List the notes of the user asking.
#[tool(effects = Read)]
fn my_notes(#[state] notes: &Notes, #[context] user: &User) -> Vec<String> {
    let notes = notes.0.lock().unwrap_or_else(|e| e.into_inner());
    notes.get(&user.name).cloned().unwrap_or_default()
}

/// Delete every note of an author.
#[tool(effects = Write)]
fn delete_notes(#[state] notes: &Notes, #[context] user: &User, author: String) -> String {
    let mut notes = notes.0.lock().unwrap_or_else(|e| e.into_inner());
    let gone = notes.remove(&author).map_or(0, |list| list.len());
    format!("{} deleted {gone} notes of {author}", user.name)
}

/// The user a request's bearer token stands for. A real server checks a
/// signed token or asks its identity provider; here, a table.
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

type Client = RunningService<RoleClient, ()>;

async fn connect(url: &str, token: Option<&str>) -> Result<Client, Box<dyn std::error::Error>> {
    let config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
    let config = match token {
        Some(token) => config.auth_header(token),
        None => config,
    };
    Ok(
        ().serve(StreamableHttpClientTransport::from_config(config))
            .await?,
    )
}

/// Calls a tool and says what came back: a tool result, or a protocol error.
async fn call(client: &Client, who: &str, name: &str, arguments: Value) {
    let Value::Object(arguments) = arguments else {
        return;
    };
    let params = CallToolRequestParams::new(name.to_owned()).with_arguments(arguments);
    match client.call_tool(params).await {
        Ok(result) => {
            let text = result.content[0].as_text().map_or("", |t| t.text.as_str());
            let error = if result.is_error == Some(true) {
                " (error)"
            } else {
                ""
            };
            println!("{who:>9} {name}: {text}{error}");
        }
        Err(error) => println!("{who:>9} {name}: refused: {error}"),
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // rmcp's HTTP client finds no TLS provider of its own: name one.
    let _ = rustls::crypto::ring::default_provider().install_default();

    let notes = Arc::new(Notes::default());
    notes.0.lock().unwrap().extend([
        ("ana".to_owned(), vec!["buy milk".to_owned()]),
        (
            "bob".to_owned(),
            vec!["call carl".to_owned(), "fix the bike".to_owned()],
        ),
    ]);
    let toolbox = Toolbox::builder()
        .context::<User>()
        .tool(MyNotes::new(Arc::clone(&notes)))
        .tool(DeleteNotes::new(Arc::clone(&notes)))
        .approval(Approval::with_context(|request, user: &User| {
            match user.admin {
                true => Decision::Approve,
                false => Decision::Refuse(format!("{} may not call `{}`", user.name, request.tool)),
            }
        }))
        .build()?;
    let server = McpServer::with_context(toolbox, user_of).name("notes", "1.0.0");

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}/mcp", listener.local_addr()?);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(server.serve_http(listener, async {
        let _ = stopped.await;
    }));
    println!("serving on {url}");

    let ana = connect(&url, Some("token-ana")).await?;
    let bob = connect(&url, Some("token-bob")).await?;
    let anonymous = connect(&url, None).await?;
    // At once: each request is given its own user.
    tokio::join!(
        call(&ana, "ana", "my_notes", json!({})),
        call(&bob, "bob", "my_notes", json!({})),
    );
    call(&bob, "bob", "delete_notes", json!({"author": "ana"})).await;
    call(&ana, "ana", "delete_notes", json!({"author": "bob"})).await;
    call(&anonymous, "anonymous", "my_notes", json!({})).await;

    for client in [ana, bob, anonymous] {
        client.cancel().await?;
    }
    let _ = stop.send(());
    serving.await??;
    Ok(())
}
