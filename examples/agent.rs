//! The support agent of λ-Tool as a loop: a model proposes, the program
//! decides what runs.
//!
//! Three tools over an in-memory shop: `lookup_account` (Read),
//! `issue_refund` (Write) and `send_reply` (Write). An `Agent` runs a model
//! over them within limits, with an approval hook that sees each Write call
//! exactly as it will run (after the toolbox's repair and coercion) and
//! refuses refunds over $100. Three tasks:
//!
//! 1. a refund: the model looks the account up, calls a tool that does not
//!    exist (rejected unrun, with the nearest names), refunds with the amount
//!    written as a string (coerced before approval), and replies;
//! 2. the same request to a read-only agent: the refund is never run;
//! 3. a refund too large for the approval hook, as a plan.
//!
//! Each run is shown live, as `Agent::run_stream` tells it: the model's
//! text as it comes, each call as it is proposed (a spinner while it runs),
//! approved or refused, and what came back, then what the run used.
//!
//! Offline by default: the model is a `ScriptedModel` replaying answers
//! written in advance. With a provider feature built in and its environment
//! set, the same program talks to that provider (`pick_model`), whose
//! answers are its own:
//!
//! ```text
//! cargo run --example agent
//! OPENAI_API_KEY=sk-... OPENAI_MODEL=gpt-4o-mini cargo run --example agent --features openai
//! OPENAI_BASE_URL=http://localhost:11434/v1 OPENAI_MODEL=llama3.2 cargo run --example agent --features openai
//! ANTHROPIC_API_KEY=sk-ant-... ANTHROPIC_MODEL=claude-sonnet-4-5 cargo run --example agent --features anthropic
//! ```

use std::collections::HashMap;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;

use schemars::JsonSchema;
use serde::Serialize;
use typed_tools::agent::{Agent, CallOutcome, Event, Limits, Run};
use typed_tools::effect::EffectSet;
use typed_tools::model::{Model, ScriptedModel};
use typed_tools::plan::CallResult;
use typed_tools::recover::Policy;
use typed_tools::toolbox::{Approval, Decision};
use typed_tools::{tool, Toolbox};

/// A customer account.
#[derive(Clone, Serialize, JsonSchema)]
struct Account {
    id: String,
    email: String,
    /// The last charge, in cents.
    last_charge_cents: i64,
}

/// The shop's state: what the tools read and change.
#[derive(Default)]
struct Shop {
    accounts: HashMap<String, Account>,
    refunds: Mutex<Vec<(String, i64)>>,
    outbox: Mutex<Vec<(String, String)>>,
}

/// Look up a customer account by its id, like `cust_12345`.
#[tool(effects = Read)]
fn lookup_account(#[state] shop: &Shop, id: String) -> Result<Account, String> {
    shop.accounts
        .get(&id)
        .cloned()
        .ok_or_else(|| format!("no account with id {id}"))
}

/// Refund an amount in cents to an account, at most its last charge.
#[tool(effects = Write)]
fn issue_refund(#[state] shop: &Shop, account_id: String, amount: i64) -> Result<String, String> {
    let account = shop
        .accounts
        .get(&account_id)
        .ok_or_else(|| format!("no account with id {account_id}"))?;
    if amount > account.last_charge_cents {
        return Err(format!(
            "cannot refund {amount} cents: the last charge was {} cents",
            account.last_charge_cents
        ));
    }
    let mut refunds = shop.refunds.lock().unwrap();
    refunds.push((account_id, amount));
    Ok(format!("tx_{:04}", refunds.len()))
}

/// Send a reply to a customer's email address.
#[tool(effects = Write)]
fn send_reply(#[state] shop: &Shop, to: String, body: String) {
    shop.outbox.lock().unwrap().push((to, body));
}

/// The model: a real provider's client when one is built in and its
/// environment is set, else answers replayed from `script`, offline.
fn pick_model(script: ScriptedModel) -> Arc<dyn Model> {
    static TOLD: std::sync::Once = std::sync::Once::new();
    let real = real_model();
    TOLD.call_once(|| match &real {
        Some(model) => println!("(talking to {}: its answers are its own)\n", model.name()),
        None => tell_how_to_connect(),
    });
    real.unwrap_or_else(|| Arc::new(script))
}

/// A provider's client, when its feature is built in and its environment
/// set: `OPENAI_API_KEY` (or `OPENAI_BASE_URL` for a local server such as
/// Ollama) with `OPENAI_MODEL`, or `ANTHROPIC_API_KEY` with `ANTHROPIC_MODEL`.
fn real_model() -> Option<Arc<dyn Model>> {
    #[cfg(feature = "openai")]
    if std::env::var_os("OPENAI_API_KEY").is_some() || std::env::var_os("OPENAI_BASE_URL").is_some()
    {
        match typed_tools::provider::OpenAi::from_env() {
            Ok(model) => return Some(Arc::new(model)),
            Err(error) => println!("(OpenAI-compatible client not set up: {error})"),
        }
    }
    #[cfg(feature = "anthropic")]
    if std::env::var_os("ANTHROPIC_API_KEY").is_some() {
        match typed_tools::provider::Anthropic::from_env() {
            Ok(model) => return Some(Arc::new(model)),
            Err(error) => println!("(Anthropic client not set up: {error})"),
        }
    }
    None
}

/// Says how to connect a real model.
fn tell_how_to_connect() {
    let keys = ["OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY"];
    let configured: Vec<&str> = keys
        .into_iter()
        .filter(|key| std::env::var_os(key).is_some())
        .collect();
    if configured.is_empty() {
        println!(
            "(offline: the model's answers are replayed from a script. To talk to a real \
             model, set OPENAI_API_KEY and OPENAI_MODEL (or OPENAI_BASE_URL for a local \
             OpenAI-compatible server such as Ollama), or ANTHROPIC_API_KEY and \
             ANTHROPIC_MODEL, and build with the matching feature: \
             `cargo run --example agent --features openai` or `--features anthropic`.)\n"
        );
    } else {
        println!(
            "({} is set, but this build has no client for it: build with `--features openai` \
             or `--features anthropic`; replaying the script meanwhile.)\n",
            configured.join(" and ")
        );
    }
}

/// Runs `future` to its end: on a tokio runtime when a provider client is
/// built in (they are built on reqwest, which needs one), else on the
/// `futures` executor: the rest of the crate names no runtime.
fn wait<F: std::future::Future>(future: F) -> F::Output {
    #[cfg(any(feature = "openai", feature = "anthropic"))]
    {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a tokio runtime")
            .block_on(future)
    }
    #[cfg(not(any(feature = "openai", feature = "anthropic")))]
    {
        futures::executor::block_on(future)
    }
}

fn main() {
    let mut shop = Shop::default();
    shop.accounts.insert(
        "cust_12345".into(),
        Account {
            id: "cust_12345".into(),
            email: "ada@example.com".into(),
            last_charge_cents: 4900,
        },
    );
    shop.accounts.insert(
        "cust_777".into(),
        Account {
            id: "cust_777".into(),
            email: "grace@example.com".into(),
            last_charge_cents: 25_000,
        },
    );
    let shop = Arc::new(shop);
    // The allow-list, with repair and coercion of malformed calls.
    let toolbox = Toolbox::builder()
        .tool(LookupAccount::new(Arc::clone(&shop)))
        .tool(IssueRefund::new(Arc::clone(&shop)))
        .tool(SendReply::new(Arc::clone(&shop)))
        .policy(Policy::recover())
        .build()
        .expect("three well-named tools");
    // A person (here, a rule) sees every Write call exactly as it will run.
    let approval = Approval::new(|request| match request.args["amount"].as_i64() {
        Some(cents) if cents > 10_000 => {
            Decision::Refuse("refunds over $100 need a manager".into())
        }
        _ => Decision::Approve,
    });
    let limits = Limits::new().steps(8).tool_calls(12).tokens(20_000);
    let instructions = "You are a support agent for a shop. Be brief.";

    println!("== 1. A refund, with mistakes along the way\n");
    let model = pick_model(ScriptedModel::new([
        r#"[{"name": "lookup_account", "arguments": {"id": "cust_12345"}}]"#,
        r#"[{"name": "refund_customer", "arguments": {"id": "cust_12345"}}]"#,
        r#"[{"name": "issue_refund", "arguments": {"account_id": "cust_12345", "amount": "4900"}}]"#,
        r#"[{"name": "send_reply", "arguments": {"to": "ada@example.com", "body": "We refunded $49.00 (tx_0001)."}}]"#,
        "Refunded $49.00 to cust_12345 (tx_0001) and told the customer.",
    ]));
    let agent = Agent::new(&toolbox, model)
        .system(instructions)
        .limits(limits)
        .approval(approval.clone());
    live(&agent, "cust_12345 asks for a refund of their last charge.");

    println!("== 2. The same request to a read-only agent\n");
    let model = pick_model(ScriptedModel::new([
        r#"[{"name": "issue_refund", "arguments": {"account_id": "cust_12345", "amount": 4900}}]"#,
        "I can only look accounts up; a colleague will handle the refund.",
    ]));
    let agent = Agent::new(&toolbox, model)
        .system(instructions)
        .limits(limits)
        .restrict(EffectSet::READ);
    live(&agent, "cust_12345 asks for a refund of their last charge.");

    println!("== 3. A plan, and a refund too large to approve\n");
    let model = pick_model(ScriptedModel::new([
        r#"```lambda-tool
match exec tool lookup_account {id = "cust_777"} {
  Ok(account) =>
    match exec tool issue_refund {account_id = account.id, amount = account.last_charge_cents} {
      Ok(tx) => "refunded: " ++ tx,
      Err(e) => "not refunded: " ++ e.message
    },
  Err(e) => "no account: " ++ e.message
}
```"#,
        "The refund of $250.00 needs a manager's approval; I have passed it on.",
    ]));
    let agent = Agent::new(&toolbox, model)
        .system(instructions)
        .limits(limits)
        .approval(approval)
        .plans(true);
    live(&agent, "cust_777 asks for a refund of their last charge.");

    println!("== What happened to the shop");
    println!("   refunds: {:?}", shop.refunds.lock().unwrap());
    println!("   outbox:  {:?}", shop.outbox.lock().unwrap());
}

/// Runs the agent on `task`, printing the run as it happens: the user's
/// task, the model's text as it comes, each call when it is proposed (with a
/// spinner while it runs), approved or refused, and its result; each plan
/// checked and run; then why the run stopped and what it used.
fn live<M: Model>(agent: &Agent<M>, task: &str) -> Run {
    println!("   user: {task}");
    wait(async {
        let mut events = agent.run_stream(task);
        let mut spinner: Option<Spinner> = None;
        let mut writing = false;
        while let Some(event) = events.next().await {
            match event {
                Event::Text(piece) => {
                    if !writing {
                        print!("   model: ");
                        writing = true;
                    }
                    print!("{}", piece.replace('\n', "\n          "));
                    let _ = std::io::stdout().flush();
                }
                Event::Answered { .. } if writing => {
                    println!();
                    writing = false;
                }
                Event::CallProposed { call, .. } => {
                    spinner = Some(Spinner::start(format!("{} {}", call.name, call.arguments)));
                }
                Event::Approved { tool, args } => {
                    if let Some(spinner) = spinner.take() {
                        spinner.stop();
                    }
                    println!("   approved: {tool} {args}");
                    spinner = Some(Spinner::start(format!("{tool} {args}")));
                }
                Event::CallFinished(record) => {
                    if let Some(spinner) = spinner.take() {
                        spinner.stop();
                    }
                    let name = &record.call.name;
                    match &record.outcome {
                        CallOutcome::Ok(output) => {
                            println!("   ✓ {name} -> {} ({:?})", output.json(), record.duration);
                            for change in output.recovery() {
                                println!("     repaired: {change}");
                            }
                        }
                        CallOutcome::Err(error) => {
                            println!(
                                "   ✗ {name}: {}",
                                error.for_model().replace('\n', "\n     ")
                            )
                        }
                        CallOutcome::TimedOut { after } => {
                            println!("   ✗ {name}: stopped after {after:?}")
                        }
                        CallOutcome::NotRun { reason } => println!("   – {name}: {reason}"),
                        _ => println!("   {name}: {:?}", record.outcome),
                    }
                }
                Event::PlanChecked { preview, .. } => {
                    println!("   plan checked, it may call:");
                    for line in preview.to_string().lines() {
                        println!("     {line}");
                    }
                }
                Event::PlanFinished(record) => match &record.outcome {
                    Ok(run) => {
                        for call in &run.trace {
                            let result = match call.result() {
                                CallResult::Ok(value) => format!("-> {value}"),
                                CallResult::Err(error) => format!("failed: {error}"),
                                CallResult::Refused(reason) => format!("refused: {reason}"),
                            };
                            println!("   plan: {} {} {result}", call.tool(), call.args());
                        }
                        match &run.outcome {
                            Ok(value) => println!("   plan's value: {value}"),
                            Err(error) => println!("   plan stopped: {error}"),
                        }
                    }
                    Err(refusal) => println!("   plan refused, nothing ran: {refusal}"),
                },
                Event::Finished(run) => {
                    println!(
                        "-- {} ({} steps; calls: {} proposed, {} ran, {} refused; {} tokens{})\n",
                        run.exit,
                        run.steps,
                        run.calls_proposed(),
                        run.calls_run(),
                        run.calls_refused(),
                        run.usage.total(),
                        if run.usage.estimated {
                            ", estimated"
                        } else {
                            ""
                        },
                    );
                    return run;
                }
                _ => {}
            }
        }
        unreachable!("a run stream ends with its run")
    })
}

/// A spinner on its own line while a call runs, drawn by a thread of its
/// own so that it turns whatever the executor is doing.
struct Spinner {
    done: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<()>,
}

impl Spinner {
    fn start(what: String) -> Spinner {
        let done = Arc::new(AtomicBool::new(false));
        let stop = Arc::clone(&done);
        let thread = std::thread::spawn(move || {
            let frames = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
            let mut frame = 0;
            while !stop.load(Ordering::Relaxed) {
                print!("\r   {} calling {what}", frames[frame % frames.len()]);
                let _ = std::io::stdout().flush();
                frame += 1;
                std::thread::sleep(Duration::from_millis(80));
            }
            // Clears the line for what comes next.
            print!("\r{}\r", " ".repeat(what.chars().count() + 14));
            let _ = std::io::stdout().flush();
        });
        Spinner { done, thread }
    }

    fn stop(self) {
        self.done.store(true, Ordering::Relaxed);
        let _ = self.thread.join();
    }
}
