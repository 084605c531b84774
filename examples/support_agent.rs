//! The support agent of λ-Tool, with typed tools.
//!
//! Three tools over an in-memory store: `lookup_account` (Read),
//! `issue_refund` (Write) and `send_reply` (Write), and one pure function,
//! `format_cents`, that a plan calls to write the amount. The example prints the
//! catalog a model would be shown, then dispatches calls as a model writes
//! them, good and bad, and prints what the model would be told each time.
//! Last, it builds λ-Tool's plan (lookup, refund the last charge, notify)
//! with the typed plan builder, prints its text and preview, and runs it
//! with an approval hook that sees each Write call before it happens; then
//! a plan as a model writes it, with mistakes, refused before anything runs.
//! Last, the model path: a (scripted) model is given the plan prompt and a
//! task, writes the plan with `account.plan`, gets the checker's errors
//! back, sends the corrected plan, which is previewed and run.
//! No network, no API key.
//!
//! Run it with `cargo run --example support_agent`.

use std::collections::HashMap;
use std::sync::Mutex;

use futures::executor::block_on;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use typed_tools::effect::{EffectSet, ReadWrite};
use typed_tools::model::{estimate_tokens, ScriptedModel};
use typed_tools::plan::typed::{lit, TypedPlan};
use typed_tools::plan::{Author, CallResult, Decision, Interpreter, Plan, Run};
use typed_tools::{call, exec, field, on, tool, CatalogFormat, Toolbox};

/// A customer account.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
struct Account {
    /// The account id, like `cust_12345`.
    id: String,
    /// `free`, `pro` or `enterprise`.
    subscription_tier: String,
    /// Where replies go.
    email: String,
    /// The last charge, in cents.
    last_charge_cents: i64,
}

/// A refund that went through.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct Refund {
    /// The payment provider's transaction id.
    tx_id: String,
}

/// The shop's state: what the tools read and change.
#[derive(Default)]
struct Store {
    accounts: HashMap<String, Account>,
    refunds: Mutex<Vec<(String, i64)>>,
    outbox: Mutex<Vec<(String, String)>>,
}

/// Why a refund was refused.
#[derive(Debug)]
enum RefundError {
    UnknownAccount(String),
    TooMuch { asked: i64, last_charge: i64 },
}

impl std::fmt::Display for RefundError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RefundError::UnknownAccount(id) => write!(f, "no account with id {id}"),
            RefundError::TooMuch { asked, last_charge } => write!(
                f,
                "cannot refund {asked} cents: the last charge was {last_charge} cents"
            ),
        }
    }
}

/// Look up a customer account by its id.
///
/// # Arguments
/// * `id` - The account id, like `cust_12345`.
#[tool(effects = Read)]
async fn lookup_account(#[state] store: &Store, id: String) -> Result<Account, String> {
    store
        .accounts
        .get(&id)
        .cloned()
        .ok_or_else(|| format!("no account with id {id}"))
}

/// Refund an amount to an account, at most its last charge.
///
/// # Arguments
/// * `account_id` - The account to refund.
/// * `amount` - In cents.
#[tool(effects = Write)]
fn issue_refund(
    #[state] store: &Store,
    account_id: String,
    amount: i64,
) -> Result<Refund, RefundError> {
    let account = store
        .accounts
        .get(&account_id)
        .ok_or_else(|| RefundError::UnknownAccount(account_id.clone()))?;
    if amount > account.last_charge_cents {
        return Err(RefundError::TooMuch {
            asked: amount,
            last_charge: account.last_charge_cents,
        });
    }
    let mut refunds = store.refunds.lock().unwrap();
    refunds.push((account_id, amount));
    Ok(Refund {
        tx_id: format!("tx_{:04}", refunds.len()),
    })
}

/// Send a reply to a customer.
///
/// # Arguments
/// * `to` - The customer's email address.
/// * `body` - The text of the reply.
#[tool(effects = Write)]
fn send_reply(#[state] store: &Store, to: String, body: String) {
    store.outbox.lock().unwrap().push((to, body));
}

/// Write an amount in cents as dollars, like `$49.00`.
///
/// # Arguments
/// * `cents` - The amount, in cents.
#[tool(effects = Pure)]
fn format_cents(cents: i64) -> String {
    let sign = if cents < 0 { "-" } else { "" };
    let cents = cents.unsigned_abs();
    format!("{sign}${}.{:02}", cents / 100, cents % 100)
}

/// Prints a run's trace, each call with its arguments and result, and its outcome.
fn print_run(run: &Run) {
    println!("-- trace");
    for call in &run.trace {
        let result = match call.result() {
            CallResult::Ok(value) => format!("Ok({value})"),
            other => format!("{other:?}"),
        };
        println!("   {} {} -> {result}", call.tool(), call.args());
    }
    println!("-- outcome: {:?}\n", run.outcome);
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut store = Store::default();
    store.accounts.insert(
        "cust_12345".into(),
        Account {
            id: "cust_12345".into(),
            subscription_tier: "pro".into(),
            email: "ada@example.com".into(),
            last_charge_cents: 4900,
        },
    );
    store.accounts.insert(
        "cust_67890".into(),
        Account {
            id: "cust_67890".into(),
            subscription_tier: "free".into(),
            email: "grace@example.com".into(),
            last_charge_cents: 1250,
        },
    );
    let store = std::sync::Arc::new(store);

    // The allow-list: these four tools and nothing else can ever run.
    let toolbox = Toolbox::builder()
        .tool(LookupAccount::new(store.clone()))
        .tool(IssueRefund::new(store.clone()))
        .tool(SendReply::new(store.clone()))
        .tool(FormatCents)
        .build()?;

    println!("== The catalog, as a system prompt (compact text)\n");
    println!("{}\n", toolbox.catalog(CatalogFormat::Text));
    println!("== The catalog, as Anthropic's `tools`\n");
    println!("{}\n", toolbox.catalog(CatalogFormat::Anthropic));

    // Calls as a model writes them: a name and the argument text.
    let calls = [
        ("a good lookup", "lookup_account", r#"{"id": "cust_12345"}"#),
        (
            "a good refund",
            "issue_refund",
            r#"{"account_id": "cust_12345", "amount": 4900}"#,
        ),
        (
            "a good reply",
            "send_reply",
            r#"{"to": "ada@example.com", "body": "Your refund tx_0001 is on its way."}"#,
        ),
        (
            "a hallucinated tool",
            "refund_customer",
            r#"{"id": "cust_12345"}"#,
        ),
        (
            "a wrong type",
            "issue_refund",
            r#"{"account_id": "cust_12345", "amount": "49.00"}"#,
        ),
        (
            "a missing field",
            "send_reply",
            r#"{"to": "ada@example.com"}"#,
        ),
        ("not JSON", "lookup_account", r#"{"id": "cust_12345""#),
        (
            "the tool's own error",
            "issue_refund",
            r#"{"account_id": "cust_12345", "amount": 100000}"#,
        ),
        (
            "an unknown account",
            "lookup_account",
            r#"{"id": "cust_99999"}"#,
        ),
    ];
    println!("== Dispatching a model's calls\n");
    for (what, name, args) in calls {
        println!("-- {what}: {name}({args})");
        match block_on(toolbox.call(name, args)) {
            Ok(output) => println!("   ok: {output}"),
            Err(error) => {
                println!("   error ({:?}): {error}", error.next_step());
                println!(
                    "   the model is told: {}",
                    error.for_model().replace('\n', "\n   ")
                );
            }
        }
        println!();
    }

    println!("== Least privilege: a read-only view of the same toolbox\n");
    let read_only = toolbox.restrict(EffectSet::READ);
    println!("{}\n", read_only.catalog(CatalogFormat::Text));
    let denied = block_on(read_only.call(
        "issue_refund",
        r#"{"account_id": "cust_12345", "amount": 1}"#,
    ));
    println!(
        "-- issue_refund through the read-only view\n   {}\n",
        denied.unwrap_err()
    );

    println!("== λ-Tool's plan, built with the typed builder\n");
    // Every tool call's Result is matched on both branches; a field the
    // output does not have, an unmatched Result or an effect outside
    // `ReadWrite` would not compile (see ui-tests/). `format_cents` is pure
    // and cannot fail: `call!` uses it as a plain value.
    let plan = TypedPlan::new(on!(exec!(LookupAccount { id: lit("cust_12345") }),
        Ok(account) => on!(exec!(IssueRefund {
                account_id: field!(account.id),
                amount: field!(account.last_charge_cents),
            }),
            Ok(refund) => on!(exec!(SendReply {
                    to: field!(account.email),
                    body: lit("We refunded ")
                        .concat(call!(FormatCents { cents: field!(account.last_charge_cents) }))
                        .concat(lit(", transaction "))
                        .concat(field!(refund.tx_id)),
                }),
                Ok(sent) => lit("refund processed and customer notified"),
                Err(e) => lit("refund succeeded but notification failed"),
            ),
            Err(e) => lit("refund failed, customer not refunded"),
        ),
        Err(e) => lit("account lookup failed"),
    ))
    .allowing::<ReadWrite>();
    let plan = Plan::from(plan);
    println!("{plan}\n");
    // A human (here, a rule) sees every Write call before it runs; a
    // refusal would go to the plan's own Err branch.
    let interpreter = Interpreter::new(&toolbox).approve_writes(|request| {
        println!("   approve? {} {}", request.tool, request.args);
        if request.tool == "issue_refund" && request.args["amount"].as_i64() > Some(10_000) {
            Decision::Refuse("refunds over $100 need a manager".into())
        } else {
            Decision::Approve
        }
    });
    println!(
        "-- preview (nothing has run yet)\n{}",
        interpreter.preview(&plan)?
    );
    println!("-- run");
    let run = block_on(interpreter.run(&plan))?;
    print_run(&run);

    println!("== A plan as a model writes it, with two mistakes\n");
    // Models write the same plans as text; each is type-checked against the
    // tools' schemas before any tool runs, and every error goes back at once.
    let written = r#"match exec tool lookup_account {id = "cust_12345"} {
  Ok(account) =>
    match exec tool issue_refund {account_id = account.id, amount = account.plan} {
      Ok(refund) => "refunded " ++ refund.tx_id,
      Err(e) => "refund failed: " ++ e.message
    },
  Err(e) => "no account: " ++ account.email
}"#;
    println!("{written}\n");
    let refused = block_on(interpreter.run(&Plan::parse(written)?)).unwrap_err();
    println!("-- the model is told:\n{refused}\n");

    println!("== The model path: a model writes the plan, the checker answers\n");
    // The model is given the plan prompt (generated from the toolbox) and a
    // task. Here it is scripted: first it writes λ-Tool's plan with
    // `account.plan`, a field the account does not have; then, told so, the
    // corrected plan. Any `Model` (a provider's client) goes the same way.
    let slip = r#"match exec tool lookup_account {id = "cust_67890"} {
  Ok(account) =>
    match exec tool issue_refund {account_id = account.id, amount = account.plan} {
      Ok(refund) =>
        match exec tool send_reply {to = account.email, body = "Your refund " ++ refund.tx_id ++ " is on its way."} {
          Ok(sent) => "refund processed and customer notified",
          Err(e) => "refund succeeded but notification failed"
        },
      Err(e) => "refund failed, customer not refunded: " ++ e.message
    },
  Err(e) => "account lookup failed"
}"#;
    let fixed = slip.replace("account.plan", "account.last_charge_cents");
    let model = ScriptedModel::new([
        format!("I'll look the account up, refund its last charge and tell the customer.\n\n```lambda-tool\n{slip}\n```"),
        format!("`plan` is not a field of the account; the amount is `last_charge_cents`.\n\n```lambda-tool\n{fixed}\n```"),
    ]);
    let author = Author::new(&toolbox).attempts(3).token_budget(20_000);
    let prompt = author.prompt(false).to_string();
    println!(
        "-- the prompt: {} bytes, about {} tokens (the tools' catalog, the syntax, the rules, three examples)\n",
        prompt.len(),
        estimate_tokens(&prompt)
    );
    let authored = block_on(author.write(
        &model,
        "Refund customer cust_67890's last charge and tell them.",
    ))?;
    for (i, attempt) in authored.attempts.iter().enumerate() {
        println!("-- attempt {}: the model wrote", i + 1);
        println!(
            "   {}",
            attempt.response.text.trim_end().replace('\n', "\n   ")
        );
        match &attempt.error {
            Some(error) => println!(
                "-- the model is told (nothing ran):\n   {}\n",
                error.for_model().replace('\n', "\n   ")
            ),
            None => println!(
                "-- it checks ({} tokens spent in all)\n",
                authored.usage.total()
            ),
        }
    }
    println!("-- preview (nothing has run yet)\n{}", authored.preview);
    println!("-- run");
    let run = block_on(interpreter.run(&authored.plan))?;
    print_run(&run);

    println!("== What happened to the store");
    println!("   refunds: {:?}", store.refunds.lock().unwrap());
    println!("   outbox:  {:?}", store.outbox.lock().unwrap());
    Ok(())
}
