//! A customer-support shop's tools served over MCP, to any MCP client (a
//! desktop assistant, an IDE, an agent framework in another language).
//!
//! The tools are written here, as a server of your own would write them:
//! `lookup_account` (Read), `issue_refund`, `send_reply` and `charge`
//! (Write), and `format_cents` (Pure), over one in-memory `Shop` that they
//! share as `#[state]`. Every call goes through the toolbox: a wrong argument
//! type, a tool that does not exist or an effect this server does not allow
//! comes back to the client as a tool result with `isError: true` and a
//! message the model can act on (`--read-only` serves the Read and Pure tools
//! alone, and to its clients the others do not exist).
//!
//! ```text
//! cargo run --features mcp-http --example mcp_server                       # stdio
//! cargo run --features mcp-http --example mcp_server -- --read-only        # only the Read (and Pure) tools
//! cargo run --features mcp-http --example mcp_server -- --http 127.0.0.1:8080   # streamable HTTP at /mcp
//! ```
//!
//! Over HTTP it writes `listening on http://ADDR/mcp` to standard error (with
//! the port chosen when ADDR ends in `:0`) and stops cleanly on Ctrl-C or
//! SIGTERM, answering the calls in flight first. Over stdio it stops when the
//! client closes its standard input. The README shows how to add it to an MCP
//! client's configuration.

use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use schemars::JsonSchema;
use serde::Serialize;
use typed_tools::effect::EffectSet;
use typed_tools::mcp::McpServer;
use typed_tools::{tool, Toolbox};

// ---------------------------------------------------------------- the tools

/// A customer account.
#[derive(Clone, Serialize, JsonSchema)]
struct Account {
    /// The account id, like `cust_12345`.
    id: String,
    /// `free` or `pro`.
    subscription_tier: String,
    /// Where replies go.
    email: String,
    /// The last amount charged, in cents.
    last_charge_cents: i64,
}

/// A refund issued.
#[derive(Serialize, JsonSchema)]
struct Refund {
    /// The refund's transaction id.
    tx_id: String,
}

/// What the tools work on: the accounts, and a record of what the Write
/// tools did. One `Shop`, shared by every tool through an `Arc`.
struct Shop {
    accounts: Vec<Account>,
    /// Refunds, replies and charges, in the order they were made.
    journal: Mutex<Vec<String>>,
}

impl Shop {
    fn new() -> Shop {
        Shop {
            accounts: vec![Account {
                id: "cust_12345".into(),
                subscription_tier: "pro".into(),
                email: "ana@example.com".into(),
                last_charge_cents: 1299,
            }],
            journal: Mutex::new(Vec::new()),
        }
    }

    fn account(&self, id: &str) -> Result<&Account, String> {
        self.accounts
            .iter()
            .find(|account| account.id == id)
            .ok_or_else(|| format!("there is no account `{id}`"))
    }

    fn record(&self, entry: String) {
        self.journal.lock().unwrap().push(entry);
    }
}

/// Look up a customer account.
///
/// # Arguments
/// * `id` - The account id, like `cust_12345`.
#[tool(effects = Read)]
fn lookup_account(#[state] shop: &Shop, id: String) -> Result<Account, String> {
    shop.account(&id).cloned()
}

/// Refund an amount to an account, at most its last charge.
///
/// # Arguments
/// * `account_id` - The account to refund.
/// * `amount` - In cents.
#[tool(effects = Write)]
fn issue_refund(#[state] shop: &Shop, account_id: String, amount: i64) -> Result<Refund, String> {
    let account = shop.account(&account_id)?;
    if amount <= 0 || amount > account.last_charge_cents {
        return Err(format!(
            "a refund to `{account_id}` is between 1 and {} cents, not {amount}",
            account.last_charge_cents
        ));
    }
    let tx_id = format!("tx_{account_id}_{amount}");
    shop.record(format!("refund {tx_id}"));
    Ok(Refund { tx_id })
}

/// Send a reply to a customer.
///
/// # Arguments
/// * `to` - The customer's email address.
/// * `body` - The text of the reply.
#[tool(effects = Write)]
fn send_reply(#[state] shop: &Shop, to: String, body: String) -> Result<(), String> {
    if !to.contains('@') {
        return Err(format!("`{to}` is not an email address"));
    }
    shop.record(format!("reply to {to}: {body}"));
    Ok(())
}

/// Charge an order; returns the transaction id.
///
/// # Arguments
/// * `id` - The order number.
/// * `amount` - In cents.
#[tool(effects = Write)]
fn charge(#[state] shop: &Shop, id: i64, amount: i64) -> Result<String, String> {
    if amount < 0 {
        return Err(format!("order {id}: negative amount"));
    }
    shop.record(format!("charge order {id}: {amount}"));
    Ok(format!("tx_{id}"))
}

/// Format an amount in cents as dollars, `$12.99`.
#[tool(effects = Pure)]
fn format_cents(cents: i64) -> String {
    let sign = if cents < 0 { "-" } else { "" };
    let cents = cents.unsigned_abs();
    format!("{sign}${}.{:02}", cents / 100, cents % 100)
}

/// The five tools over one shop.
fn toolbox() -> Toolbox {
    let shop = Arc::new(Shop::new());
    Toolbox::builder()
        .tool(LookupAccount::new(Arc::clone(&shop)))
        .tool(IssueRefund::new(Arc::clone(&shop)))
        .tool(SendReply::new(Arc::clone(&shop)))
        .tool(Charge::new(Arc::clone(&shop)))
        .tool(FormatCents)
        .build()
        .expect("the tools build")
}

// ---------------------------------------------------------------- the server

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
    let toolbox = toolbox();
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
