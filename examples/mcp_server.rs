//! The support tools served over MCP, to any MCP client (a desktop assistant,
//! an IDE, an agent framework in another language).
//!
//! The tools are the λ-Tool support agent's, over an in-memory shop
//! (`tests/support/`, shared with the tests): `lookup_account` (Read),
//! `issue_refund`, `send_reply` and `charge` (Write), `format_cents` (Pure).
//! Every call goes through the toolbox: a wrong argument type, a tool that
//! does not exist or an effect this server does not allow comes back to the
//! client as a tool result with `isError: true` and a message the model can
//! act on.
//!
//! ```text
//! cargo run --features mcp-http --example mcp_server                       # stdio
//! cargo run --features mcp-http --example mcp_server -- --read-only        # only the Read tools
//! cargo run --features mcp-http --example mcp_server -- --http 127.0.0.1:8080   # streamable HTTP at /mcp
//! ```
//!
//! Over HTTP it writes `listening on http://ADDR/mcp` to standard error (with
//! the port chosen when ADDR ends in `:0`) and stops cleanly on Ctrl-C or
//! SIGTERM, answering the calls in flight first. Over stdio it stops when the
//! client closes its standard input. The README shows how to add it to an MCP
//! client's configuration.

use std::process::ExitCode;

use typed_tools::effect::EffectSet;
use typed_tools::mcp::McpServer;

#[path = "../tests/support/mod.rs"]
mod support;

/// What the command line asks for.
struct Options {
    http: Option<String>,
    read_only: bool,
}

fn options() -> Result<Options, String> {
    let mut options = Options {
        http: None,
        read_only: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--http" => {
                let addr = args
                    .next()
                    .ok_or("`--http` takes an address, like `127.0.0.1:8080`")?;
                options.http = Some(addr);
            }
            "--read-only" => options.read_only = true,
            other => {
                return Err(format!(
                    "unknown argument `{other}`; expected `--http ADDR` or `--read-only`"
                ))
            }
        }
    }
    Ok(options)
}

/// Ctrl-C (SIGINT) or SIGTERM, whichever comes first. The handlers are
/// installed before this returns, so a signal sent once the server says it
/// listens is never missed.
fn shutdown_signal() -> std::io::Result<impl std::future::Future<Output = ()>> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut terminate = signal(SignalKind::terminate())?;
    Ok(async move {
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
        }
    })
}

async fn serve(options: Options) -> Result<(), Box<dyn std::error::Error>> {
    let (toolbox, _shop) = support::toolbox(None);
    let toolbox = if options.read_only {
        toolbox.restrict(EffectSet::READ)
    } else {
        toolbox
    };
    let server = McpServer::new(toolbox)
        .name("typed-tools-support", env!("CARGO_PKG_VERSION"))
        .instructions("Look an account up before refunding it; refund at most its last charge.");
    match options.http {
        None => server.serve_stdio().await?,
        Some(addr) => {
            let listener = tokio::net::TcpListener::bind(&addr).await?;
            let shutdown = shutdown_signal()?;
            eprintln!("listening on http://{}/mcp", listener.local_addr()?);
            server.serve_http(listener, shutdown).await?;
            eprintln!("stopped");
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let options = match options() {
        Ok(options) => options,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(serve(options)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}
