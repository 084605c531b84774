//! Crash tests with real process death: a child process (this test binary,
//! started again with `TT_DURABLE_CHILD` set) runs a journaled run over a
//! SQLite file (or Postgres), with the side effects appended to a file
//! outside the journal:
//!
//! - a plan of 15 calls — 5 `Read`s, 5 `Write`s that are not idempotent
//!   (`charge`), 5 idempotent `Write`s (`put`);
//! - an agent run over a [`ScriptedModel`] that answers by turn: 5
//!   answers, 10 calls (4 reads at once in the first answer, then charges
//!   and puts, two of them in one answer), the model's answer last; each
//!   charge waits for an approval (which approves), so that a kill while
//!   it waits leaves the charge not run, and a kill after its approval is
//!   recorded leaves it in doubt.
//!
//! The child stops at each of its kill points and waits for the harness:
//! after each record the journal keeps (the call boundaries: a call's
//! start recorded and the tool not yet entered, its result recorded and the
//! next call not started; a model's answer recorded and nothing done with
//! it), inside each call before and after its side effect, and inside each
//! request to the model. For each kill point in turn the harness kills a
//! fresh child there with SIGKILL, then resumes the run in new processes,
//! resolving a call in doubt as a person would (done, with the output the
//! side effect shows, or retry when it did not happen), and checks:
//!
//! - a `charge` happened at most once after every step, and exactly once
//!   when the run finished;
//! - a resume stops in doubt exactly when the kill left a `charge` started
//!   without a result, and never for another tool;
//! - the finished run's outcome and trace (a plan's), or its exit,
//!   transcript and tokens (an agent's), equal an uninterrupted run's;
//! - (an agent's) the model was asked for each turn once, and twice only
//!   for the turn whose request the kill cut off.

use std::io::{BufRead, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Arc;

use futures::executor::block_on;
use futures::future::BoxFuture;
use serde_json::{json, Value as Json};
use typed_tools::durable::{
    Durable, DurableError, Journal, JournalError, Record, Resolution, SqliteJournal,
};

mod durable_support;
use typed_tools::agent::Agent;
use typed_tools::catalog::CatalogFormat;
use typed_tools::model::{Model, ModelError, Request, Response, ScriptedModel};
use typed_tools::plan::{Interpreter, Plan};
use typed_tools::toolbox::{Approval, Decision};
use typed_tools::Toolbox;

const CHILD: &str = "TT_DURABLE_CHILD";
/// `agent` for a child that runs the agent, else it runs the plan.
const MODE: &str = "TT_DURABLE_MODE";
/// Set (to anything) for a child that stops at each kill point.
const PAUSE: &str = "TT_DURABLE_PAUSE";
/// The database URL, in a child whose journal is in Postgres.
const PG: &str = "TT_DURABLE_PG";

const PLAN: &str = r#"match traverse (fn i => exec tool read {n = i}) [1, 2, 3, 4, 5] {
  Ok(xs) => match traverse (fn x => exec tool charge {n = x}) xs {
    Ok(ys) => match traverse (fn y => exec tool put {n = y}) ys {
      Ok(zs) => zs,
      Err(e) => []
    },
    Err(e) => []
  },
  Err(e) => []
}"#;

/// The agent's task, and its model's answers by turn.
const TASK: &str = "Read the balances, then charge and record them.";
const SCRIPT: [&str; 5] = [
    r#"[{"name": "read", "arguments": {"n": 1}}, {"name": "read", "arguments": {"n": 2}}, {"name": "read", "arguments": {"n": 3}}, {"name": "read", "arguments": {"n": 4}}]"#,
    r#"{"name": "charge", "arguments": {"n": 10}}"#,
    r#"[{"name": "put", "arguments": {"n": 11}}, {"name": "charge", "arguments": {"n": 20}}]"#,
    r#"[{"name": "charge", "arguments": {"n": 30}}, {"name": "put", "arguments": {"n": 21}}, {"name": "put", "arguments": {"n": 31}}]"#,
    "Charged 10, 20 and 30.",
];

/// What each kind of run does, and what the harness expects of it.
struct Shape {
    mode: &'static str,
    /// The kill points of an uninterrupted run.
    points: usize,
    /// The kills that leave a charge in doubt.
    in_doubt: usize,
    charges: &'static [i64],
    puts: &'static [i64],
    /// The model's turns (0 for a plan).
    turns: usize,
    /// Whether an approval asks about each charge.
    approvals: bool,
}

const PLAN_RUN: Shape = Shape {
    mode: "plan",
    // Per call: start kept, before and after the effect, result kept (4 x
    // 15), and the run's start and end.
    points: 62,
    // 3 kill points per charge leave it in doubt: its start kept, and
    // inside it before and after its effect.
    in_doubt: 15,
    charges: &[10, 20, 30, 40, 50],
    puts: &[11, 21, 31, 41, 51],
    turns: 0,
    approvals: false,
};

const AGENT_RUN: Shape = Shape {
    mode: "agent",
    // Per call 4 (x 10), per charge its approval kept (x 3), per answer
    // 2 (inside the request, its record kept; x 5), and the run's start
    // and end.
    points: 55,
    // Per charge 3: its approval kept, inside it before and after its
    // effect (its start kept is not: it waits for its approval).
    in_doubt: 9,
    charges: &[10, 20, 30],
    puts: &[11, 21, 31],
    turns: 5,
    approvals: true,
};

/// The agent's model: the script by turn, each request logged to
/// `asked.log` (outside the journal) and a kill point inside it.
struct Counting {
    inner: ScriptedModel,
    log: PathBuf,
    pause: bool,
}

impl Model for Counting {
    fn complete(&self, request: Request) -> BoxFuture<'_, Result<Response, ModelError>> {
        Box::pin(async move {
            let turn = request
                .messages
                .iter()
                .filter(|m| m.role() == typed_tools::model::Role::Assistant)
                .count()
                + 1;
            append(&self.log, &format!("asked {turn}"));
            point(self.pause, &format!("inside model turn {turn}"));
            self.inner.complete(request).await
        })
    }
    fn tool_format(&self) -> Option<CatalogFormat> {
        self.inner.tool_format()
    }
    fn name(&self) -> &str {
        "counting"
    }
}

fn append(path: &Path, line: &str) {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    file.write_all(format!("{line}\n").as_bytes()).unwrap();
}

/// Prints a kill-point marker and, in a pausing child, waits for the
/// harness's go (a line on stdin) or its SIGKILL.
fn point(pause: bool, marker: &str) {
    println!("@@ {marker}");
    if pause {
        let mut line = String::new();
        let _ = std::io::stdin().read_line(&mut line);
    }
}

/// The child's journal: SQLite, with a kill point after each kept record.
struct Pausing {
    inner: Box<dyn Journal>,
    pause: bool,
}

impl Journal for Pausing {
    fn append<'a>(
        &'a self,
        run: &'a str,
        seq: u64,
        record: &'a Record,
    ) -> BoxFuture<'a, Result<(), JournalError>> {
        Box::pin(async move {
            self.inner.append(run, seq, record).await?;
            let what = match record {
                Record::CallStarted { tool, call, .. } => format!("started {tool} {call}"),
                Record::CallFinished { call, .. } => format!("finished {call}"),
                Record::Started { .. } => "run started".into(),
                Record::ModelAnswered { step, .. } => format!("answered {step}"),
                Record::Approved { call, .. } => format!("approved {call}"),
                Record::Finished { .. } => "run finished".into(),
                _ => "other".into(),
            };
            point(self.pause, &format!("kept {seq}: {what}"));
            Ok(())
        })
    }
    fn load<'a>(&'a self, run: &'a str) -> BoxFuture<'a, Result<Vec<Record>, JournalError>> {
        self.inner.load(run)
    }
}

fn toolbox(dir: &Path) -> Toolbox {
    let pause = std::env::var_os(PAUSE).is_some();
    let moment: durable_support::Moment = Arc::new(move |name, n, moment| {
        point(pause, &format!("inside {name} {n}: {moment} its effect"));
    });
    durable_support::file_toolbox(&dir.join("effects.log"), 10, moment)
}

/// The child: runs or resumes the plan, and prints how it ended.
#[test]
fn child() {
    // Only as a child of the harness below; a no-op in a normal test run.
    let Some(dir) = std::env::var_os(CHILD).map(PathBuf::from) else {
        return;
    };
    let pause = std::env::var_os(PAUSE).is_some();
    let toolbox = toolbox(&dir);
    let interpreter = Interpreter::new(&toolbox);
    let journal = Pausing {
        inner: open(&dir, std::env::var(PG).ok().as_deref()),
        pause,
    };
    let durable = Durable::new(journal);
    if std::env::var(MODE).as_deref() == Ok("agent") {
        let model = Counting {
            inner: ScriptedModel::by_turn(SCRIPT),
            log: dir.join("asked.log"),
            pause,
        };
        // Each charge waits for an approval, which says yes.
        let toolbox = toolbox.approve(Approval::new(|_| Decision::Approve).tools(["charge"]));
        let agent = Agent::new(&toolbox, model);
        match block_on(durable.run_agent(&agent, &run_id(&dir), TASK)) {
            Ok(done) => {
                let transcript: Vec<String> = done
                    .run
                    .transcript
                    .iter()
                    .map(|m| format!("{m:?}"))
                    .collect();
                println!(
                    "@@ RESULT {}",
                    json!({
                        "exit": done.run.exit.to_string(),
                        "transcript": transcript,
                        "usage": format!("{:?}", done.run.usage),
                        "steps": done.run.steps,
                    })
                );
            }
            Err(DurableError::InDoubt(doubt)) => println!(
                "@@ INDOUBT {}",
                json!({"tool": doubt.tool, "call": doubt.call, "args": doubt.args})
            ),
            Err(other) => println!("@@ ERROR {other}"),
        }
        return;
    }
    let plan = Plan::parse(PLAN).unwrap();
    match block_on(durable.run_plan(&interpreter, &run_id(&dir), &plan)) {
        Ok(done) => {
            let trace: Vec<String> = done
                .run
                .trace
                .iter()
                .map(|call| format!("{} {} {:?}", call.tool(), call.args(), call.result()))
                .collect();
            println!(
                "@@ RESULT {}",
                json!({"outcome": format!("{:?}", done.run.outcome), "trace": trace})
            );
        }
        Err(DurableError::InDoubt(doubt)) => println!(
            "@@ INDOUBT {}",
            json!({"tool": doubt.tool, "call": doubt.call, "args": doubt.args})
        ),
        Err(other) => println!("@@ ERROR {other}"),
    }
}

/// The run's journal: the SQLite file in `dir`, or the Postgres database
/// at `pg`.
fn open(dir: &Path, pg: Option<&str>) -> Box<dyn Journal> {
    match pg {
        #[cfg(feature = "postgres")]
        Some(url) => {
            Box::new(block_on(typed_tools::durable::PostgresJournal::connect(url)).unwrap())
        }
        _ => Box::new(SqliteJournal::open(dir.join("runs.db")).unwrap()),
    }
}

/// The run's id: its directory's name, one per kill point.
fn run_id(dir: &Path) -> String {
    dir.file_name().unwrap().to_string_lossy().into_owned()
}

/// A child process of this test binary.
struct Running {
    child: Child,
    stdin: ChildStdin,
    lines: std::io::Lines<BufReader<std::process::ChildStdout>>,
}

fn spawn(shape: &Shape, dir: &Path, pg: Option<&str>, pause: bool) -> Running {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args(["child", "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, dir)
        .env(MODE, shape.mode)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    match pg {
        Some(url) => command.env(PG, url),
        None => command.env_remove(PG),
    };
    if pause {
        command.env(PAUSE, "1");
    } else {
        command.env_remove(PAUSE);
    }
    let mut child = command.spawn().unwrap();
    let stdin = child.stdin.take().unwrap();
    let lines = BufReader::new(child.stdout.take().unwrap()).lines();
    Running {
        child,
        stdin,
        lines,
    }
}

/// The next marker the child prints; `None` when its output ends.
fn next_marker(running: &mut Running) -> Option<String> {
    for line in running.lines.by_ref() {
        // A marker can follow libtest's `test child ... ` on its line.
        let line = line.ok()?;
        if let Some(at) = line.find("@@ ") {
            return Some(line[at + 3..].to_owned());
        }
    }
    None
}

/// Runs a child without pauses to its end: its last marker (RESULT,
/// INDOUBT or ERROR).
fn run_to_end(shape: &Shape, dir: &Path, pg: Option<&str>) -> String {
    let mut running = spawn(shape, dir, pg, false);
    let mut last = String::new();
    while let Some(marker) = next_marker(&mut running) {
        last = marker;
    }
    let status = running.child.wait().unwrap();
    assert!(status.success(), "child failed: {status}; last: {last}");
    last
}

/// Runs a pausing child and kills it with SIGKILL at kill point `k` (from
/// 1). Returns the marker it was killed at, or `None` if it finished first.
fn kill_at(shape: &Shape, dir: &Path, pg: Option<&str>, k: usize) -> Option<String> {
    let mut running = spawn(shape, dir, pg, true);
    let mut seen = 0;
    while let Some(marker) = next_marker(&mut running) {
        if marker.starts_with("RESULT") || marker.starts_with("INDOUBT") {
            break;
        }
        seen += 1;
        if seen == k {
            running.child.kill().unwrap();
            running.child.wait().unwrap();
            return Some(marker);
        }
        running.stdin.write_all(b"\n").unwrap();
    }
    drop(running.stdin);
    running.child.wait().unwrap();
    None
}

fn count(dir: &Path, line: &str) -> usize {
    count_in(dir, "effects.log", line)
}

fn count_in(dir: &Path, file: &str, line: &str) -> usize {
    std::fs::read_to_string(dir.join(file))
        .unwrap_or_default()
        .lines()
        .filter(|l| *l == line)
        .count()
}

fn charges_at_most_once(shape: &Shape, dir: &Path, when: &str) {
    for &n in shape.charges {
        let times = count(dir, &format!("charge {n}"));
        assert!(times <= 1, "charge {n} happened {times} times {when}");
    }
}

/// Whether a kill at `marker` leaves a `charge` started without a result,
/// and approved when an approval asks about it.
fn leaves_a_charge_in_doubt(shape: &Shape, marker: &str) -> bool {
    let recorded = match shape.approvals {
        // Only charges are approved.
        true => marker.contains(": approved"),
        false => marker.contains("started charge"),
    };
    (marker.starts_with("kept") && recorded) || marker.starts_with("inside charge")
}

#[test]
fn a_run_killed_at_every_kill_point_resumes_without_repeating_a_write() {
    kill_at_every_point(&PLAN_RUN, None, "sqlite");
}

#[test]
fn an_agent_run_killed_at_every_kill_point_resumes_without_repeating_a_write_or_an_answer() {
    kill_at_every_point(&AGENT_RUN, None, "sqlite");
}

#[cfg(feature = "postgres")]
#[test]
fn a_run_in_postgres_killed_at_every_kill_point_resumes_without_repeating_a_write() {
    let Some(url) = durable_support::pg::database("crash") else {
        return;
    };
    kill_at_every_point(&PLAN_RUN, Some(&url), "postgres");
    durable_support::pg::drop_database(&url);
}

#[cfg(feature = "postgres")]
#[test]
fn an_agent_run_in_postgres_killed_at_every_kill_point_resumes_without_repeating_a_write() {
    let Some(url) = durable_support::pg::database("crash_agent") else {
        return;
    };
    kill_at_every_point(&AGENT_RUN, Some(&url), "postgres");
    durable_support::pg::drop_database(&url);
}

/// The harness, over SQLite (`pg` is `None`) or the Postgres database at `pg`.
fn kill_at_every_point(shape: &Shape, pg: Option<&str>, store: &str) {
    // A child that never reaches its next kill point would hang the test
    // for ever: end this process instead (its children then read the end
    // of their input, run on and exit).
    std::thread::spawn(|| {
        std::thread::sleep(std::time::Duration::from_secs(600));
        eprintln!("the crash test did not finish in 10 minutes: a child is stuck");
        std::process::exit(1);
    });
    let root = std::env::temp_dir().join(format!(
        "typed-tools-crash-{}-{store}-{}",
        shape.mode,
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&root);

    // The uninterrupted run, and how many kill points it has.
    let baseline_dir = root.join("baseline");
    std::fs::create_dir_all(&baseline_dir).unwrap();
    let mut running = spawn(shape, &baseline_dir, pg, true);
    let mut points = 0;
    let mut baseline = String::new();
    while let Some(marker) = next_marker(&mut running) {
        if marker.starts_with("RESULT") {
            baseline = marker;
            break;
        }
        points += 1;
        running.stdin.write_all(b"\n").unwrap();
    }
    drop(running.stdin);
    assert!(running.child.wait().unwrap().success());
    assert!(baseline.starts_with("RESULT"), "{baseline}");
    assert_eq!(points, shape.points);

    let mut in_doubt = 0;
    for k in 1..=points {
        let dir = root.join(format!("kill-{k}"));
        std::fs::create_dir_all(&dir).unwrap();
        let marker = kill_at(shape, &dir, pg, k).expect("the child reached the kill point");
        let when = format!("after a kill at point {k} ({marker})");
        charges_at_most_once(shape, &dir, &when);

        let mut end = run_to_end(shape, &dir, pg);
        charges_at_most_once(shape, &dir, &when);
        if leaves_a_charge_in_doubt(shape, &marker) {
            let doubt = end
                .strip_prefix("INDOUBT ")
                .unwrap_or_else(|| panic!("{when}: expected a charge in doubt, got {end}"));
            let doubt: Json = serde_json::from_str(doubt).unwrap();
            assert_eq!(doubt["tool"], "charge", "{when}");
            in_doubt += 1;
            // Resolve as a person would, from the outside world.
            let n = doubt["args"]["n"].as_i64().unwrap();
            let resolution = if count(&dir, &format!("charge {n}")) == 1 {
                Resolution::Done {
                    output: json!(n + 1),
                }
            } else {
                Resolution::Retry
            };
            let durable = Durable::new(open(&dir, pg));
            block_on(durable.resolve(&run_id(&dir), resolution)).unwrap();
            drop(durable);
            end = run_to_end(shape, &dir, pg);
        }
        assert!(
            end.starts_with("RESULT"),
            "{when}: the resumed run ended with {end}"
        );
        assert_eq!(end, baseline, "{when}");
        for &n in shape.charges {
            assert_eq!(count(&dir, &format!("charge {n}")), 1, "{when}");
        }
        for &n in shape.puts {
            assert!(count(&dir, &format!("put {n}")) >= 1, "{when}");
        }
        // No answer asked for twice, but the one the kill cut off.
        for turn in 1..=shape.turns {
            let cut = usize::from(marker == format!("inside model turn {turn}"));
            let asked = count_in(&dir, "asked.log", &format!("asked {turn}"));
            assert_eq!(
                asked,
                1 + cut,
                "{when}: turn {turn} was asked {asked} times"
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
    assert_eq!(in_doubt, shape.in_doubt);
    let _ = std::fs::remove_dir_all(&root);
}
