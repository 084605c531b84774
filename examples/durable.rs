//! A durable plan run over a SQLite file, killed partway and resumed.
//!
//! The plan bills four customers: for each, `charge_card` (a Write, not
//! idempotent: a second call would charge twice) then, once all are
//! charged, `post_ledger` (a Write marked idempotent: it sets a line by key)
//! and `send_receipt` (a Write). Each tool appends what it did to
//! `effects.log`, a file outside the journal, as the outside world would
//! see it. The journal is `runs.db`, a SQLite file.
//!
//! With no argument, the example runs the whole story: it starts itself
//! again as a child process with `--crash-at 3`, which aborts (a crash: no
//! cleanup, no destructors) in the middle of the third call, after the
//! card was charged and before the result was recorded. Then it resumes
//! the run: the two finished charges are replayed, the third is *in
//! doubt* and the run stops and says so; the example looks at the
//! outside world (`effects.log`) as a person would, marks the call done
//! with what it finds, and resumes again to the end. Last, it counts the
//! lines of `effects.log`: each write happened once.
//!
//! With `--agent`, the same story is an agent run: a model (scripted, by
//! the conversation's turn, as a real one answers) charges the four cards
//! in one answer, then posts the ledger, sends the receipt and answers.
//! The resume replays the model's recorded answers too: it is asked only
//! for the turns the crashed process did not get to.
//!
//! Run it with `cargo run --example durable --features sqlite` (or
//! `-- --agent`), offline. Other modes: `-- --crash-at N` (run or resume,
//! aborting inside call N), `-- --resume` (resume as far as it goes),
//! `-- --dir DIR` (where the files go; `target/durable-example` by
//! default).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use futures::executor::block_on;
use typed_tools::agent::Agent;
use typed_tools::durable::{Durable, DurableError, Resolution, SqliteJournal};
use typed_tools::model::ScriptedModel;
use typed_tools::plan::{Interpreter, Plan};
use typed_tools::{tool, Toolbox};

const RUN: &str = "billing-2026-11";

const PLAN: &str = r#"match traverse (fn c => exec tool charge_card {customer = c, cents = 1200}) ["ana", "ben", "cy", "dee"] {
  Ok(charges) => match exec tool post_ledger {key = "2026-11", charges = charges} {
    Ok(posted) => match exec tool send_receipt {to = "finance", text = posted} {
      Ok(sent) => sent,
      Err(e) => "receipt failed: " ++ e.message
    },
    Err(e) => "ledger failed: " ++ e.message
  },
  Err(e) => "billing failed: " ++ e.message
}"#;

/// The agent's task, and its model's answers by turn.
const TASK: &str = "Bill ana, ben, cy and dee 1200 cents each for 2026-11, post the ledger and send finance a receipt.";
const SCRIPT: [&str; 4] = [
    r#"[{"name": "charge_card", "arguments": {"customer": "ana", "cents": 1200}},
        {"name": "charge_card", "arguments": {"customer": "ben", "cents": 1200}},
        {"name": "charge_card", "arguments": {"customer": "cy", "cents": 1200}},
        {"name": "charge_card", "arguments": {"customer": "dee", "cents": 1200}}]"#,
    r#"{"name": "post_ledger", "arguments": {"key": "2026-11", "charges": ["ch_ana", "ch_ben", "ch_cy", "ch_dee"]}}"#,
    r#"{"name": "send_receipt", "arguments": {"to": "finance", "text": "2026-11: 4 charges"}}"#,
    "Billed four customers; the ledger is posted and finance has its receipt.",
];

/// Where the side effects go, at which call to crash, and whether the run
/// is the agent's.
struct World {
    effects: PathBuf,
    crash_at: Option<usize>,
    agent: bool,
}

static WORLD: OnceLock<World> = OnceLock::new();
static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Does a side effect: one line appended to the effects file, synced. When
/// this is the call to crash in, aborts right after it.
fn effect(line: &str) -> Result<(), String> {
    let world = WORLD.get().ok_or("no world")?;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&world.effects)
        .map_err(|e| e.to_string())?;
    writeln!(file, "{line}").map_err(|e| e.to_string())?;
    file.sync_all().map_err(|e| e.to_string())?;
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
    if world.crash_at == Some(call) {
        println!("  !! crashing (abort) inside this process's call {call}, after: {line}");
        let _ = std::io::stdout().flush();
        std::process::abort();
    }
    Ok(())
}

/// Charge a customer's card.
#[tool(effects = Write)]
fn charge_card(customer: String, cents: u32) -> Result<String, String> {
    effect(&format!("charge {customer} {cents}"))?;
    Ok(format!("ch_{customer}"))
}

/// Post the month's charges to the ledger, by key: posting the same key
/// again sets the same line.
#[tool(effects = Write, idempotent)]
fn post_ledger(key: String, charges: Vec<String>) -> Result<String, String> {
    effect(&format!("ledger {key} {}", charges.join(",")))?;
    Ok(format!("{key}: {} charges", charges.len()))
}

/// Send a receipt.
#[tool(effects = Write)]
fn send_receipt(to: String, text: String) -> Result<String, String> {
    effect(&format!("receipt {to} {text}"))?;
    Ok(format!("receipt sent to {to}"))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut dir = PathBuf::from("target/durable-example");
    let mut crash_at = None;
    let mut resume = false;
    let mut agent = false;
    let mut words = args.iter();
    while let Some(word) = words.next() {
        match word.as_str() {
            "--dir" => dir = words.next().map(PathBuf::from).unwrap_or(dir),
            "--crash-at" => crash_at = words.next().and_then(|n| n.parse().ok()),
            "--resume" => resume = true,
            "--agent" => agent = true,
            other => {
                eprintln!(
                    "unknown argument {other:?}; use --agent, --crash-at N, --resume, --dir DIR"
                );
                std::process::exit(2);
            }
        }
    }
    if let Err(error) = std::fs::create_dir_all(&dir) {
        eprintln!("cannot make {}: {error}", dir.display());
        std::process::exit(1);
    }
    let effects = dir.join("effects.log");
    let _ = WORLD.set(World {
        effects: effects.clone(),
        crash_at,
        agent,
    });
    if crash_at.is_some() || resume {
        let finished = run(&dir).is_ok();
        std::process::exit(if finished { 0 } else { 3 });
    }
    story(&dir, &effects);
}

/// The whole story: crash a child, resume, resolve, resume.
fn story(dir: &Path, effects: &Path) {
    for file in ["runs.db", "runs.db-wal", "runs.db-shm", "effects.log"] {
        let _ = std::fs::remove_file(dir.join(file));
    }
    println!("journal: {}", dir.join("runs.db").display());
    println!("side effects: {}\n", effects.display());
    let agent = WORLD.get().is_some_and(|world| world.agent);
    let what = if agent { "an agent run" } else { "the plan" };
    println!("1. a process runs {what} and crashes inside call 3:");
    let exe = std::env::current_exe().expect("the example's own path");
    let mut child = Command::new(exe);
    child.args(["--dir", &dir.display().to_string(), "--crash-at", "3"]);
    if agent {
        child.arg("--agent");
    }
    let status = child.status().expect("start the child");
    println!("   the process ended: {status}\n");

    println!("2. another process (this one) resumes run {RUN}:");
    match run(dir) {
        Err(DurableError::InDoubt(doubt)) => {
            // A person looks at the outside world: did the charge happen?
            let seen = std::fs::read_to_string(effects).unwrap_or_default();
            let customer = doubt.args["customer"].as_str().unwrap_or_default();
            let resolution = if seen.lines().any(|l| l == format!("charge {customer} 1200")) {
                println!(
                    "   {customer}'s card was charged (effects.log says so): marking the call done"
                );
                Resolution::Done {
                    output: serde_json::json!(format!("ch_{customer}")),
                }
            } else {
                println!("   {customer}'s card was not charged: allowing a retry");
                Resolution::Retry
            };
            let durable = Durable::new(SqliteJournal::open(dir.join("runs.db")).expect("open"));
            block_on(durable.resolve(RUN, resolution)).expect("resolve");
        }
        other => println!("   (expected the charge in doubt, got {other:?})"),
    }

    println!("\n3. resume again:");
    let finished = run(dir).is_ok();

    println!("\n4. the outside world, {}:", effects.display());
    let seen = std::fs::read_to_string(effects).unwrap_or_default();
    let mut once = true;
    for line in seen.lines() {
        let times = seen.lines().filter(|l| *l == line).count();
        println!(
            "   {line}{}",
            if times > 1 { "   <-- REPEATED" } else { "" }
        );
        once &= times == 1;
    }
    println!(
        "\n{}",
        if finished && once {
            "each write happened once."
        } else {
            "SOMETHING WENT WRONG: see above."
        }
    );
    if !(finished && once) {
        std::process::exit(1);
    }
}

/// Runs or resumes the plan (or the agent), printing where each call's
/// result came from.
fn run(dir: &Path) -> Result<(), DurableError> {
    let toolbox = Toolbox::builder()
        .tool(ChargeCard)
        .tool(PostLedger)
        .tool(SendReceipt)
        .build()
        .expect("the tools");
    let interpreter = Interpreter::new(&toolbox);
    let plan = Plan::parse(PLAN).expect("the plan");
    let journal = SqliteJournal::open(dir.join("runs.db")).map_err(|error| {
        println!("   cannot open the journal: {error}");
        DurableError::Journal {
            run: RUN.into(),
            stage: typed_tools::durable::Stage::Load,
            error,
        }
    })?;
    let durable = Durable::new(journal);
    if WORLD.get().is_some_and(|world| world.agent) {
        let agent = Agent::new(&toolbox, ScriptedModel::by_turn(SCRIPT));
        return match block_on(durable.run_agent(&agent, RUN, TASK)) {
            Ok(done) => {
                for (call, source) in done.run.calls.iter().zip(&done.sources) {
                    println!(
                        "   {:<12} {} {}",
                        source.to_string(),
                        call.call.name,
                        serde_json::from_str::<serde_json::Value>(&call.call.arguments)
                            .map_or_else(|_| call.call.arguments.clone(), |v| v.to_string())
                    );
                }
                println!("   answer: {}", done.run.exit);
                println!(
                    "   {} calls replayed, {} ran; {} answers of the model replayed, {} asked for",
                    done.replayed(),
                    done.ran(),
                    done.answers_replayed,
                    done.answers_asked
                );
                Ok(())
            }
            Err(error) => {
                println!("   stopped: {error}");
                Err(error)
            }
        };
    }
    match block_on(durable.run_plan(&interpreter, RUN, &plan)) {
        Ok(done) => {
            for (call, source) in done.run.trace.iter().zip(&done.sources) {
                println!(
                    "   {:<12} {} {}",
                    source.to_string(),
                    call.tool(),
                    call.args()
                );
            }
            println!("   outcome: {:?}", done.run.outcome);
            println!("   {} replayed, {} ran", done.replayed(), done.ran());
            Ok(())
        }
        Err(error) => {
            println!("   stopped: {error}");
            Err(error)
        }
    }
}
