//! Crash tests with real process death: a child process (this test binary,
//! started again with `TT_DURABLE_CHILD` set) runs a journaled plan of 15
//! calls — 5 `Read`s, 5 `Write`s that are not idempotent (`charge`), 5
//! idempotent `Write`s (`put`) — over a SQLite file, with the side effects
//! appended to a file outside the journal. The child stops at each of its
//! kill points and waits for the harness: after each record the journal
//! keeps (the call boundaries: a call's start recorded and the tool not
//! yet entered, its result recorded and the next call not started), and
//! inside each call before and after its side effect. For each kill point
//! in turn the harness kills a fresh child there with SIGKILL, then
//! resumes the run in new processes, resolving a call in doubt as a person
//! would (done, with the output the side effect shows, or retry when it
//! did not happen), and checks:
//!
//! - a `charge` happened at most once after every step, and exactly once
//!   when the run finished;
//! - a resume stops in doubt exactly when the kill left a `charge` started
//!   without a result, and never for another tool;
//! - the finished run's outcome and trace equal an uninterrupted run's.

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
use typed_tools::effect::EffectSet;
use typed_tools::plan::{Interpreter, Plan};
use typed_tools::{DynamicTool, Toolbox};

const CHILD: &str = "TT_DURABLE_CHILD";
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

fn tool(name: &'static str, effects: EffectSet, idempotent: bool, dir: &Path) -> DynamicTool {
    let log = Arc::new(dir.join("effects.log"));
    let pause = std::env::var_os(PAUSE).is_some();
    DynamicTool::new(name)
        .input_schema(json!({
            "type": "object",
            "properties": {"n": {"type": "integer"}},
            "required": ["n"],
            "additionalProperties": false
        }))
        .output_schema(json!({"type": "integer"}))
        .effects(effects)
        .idempotent(idempotent)
        .handler(move |args: Json| {
            let log = Arc::clone(&log);
            async move {
                let n = args["n"].as_i64().unwrap_or(0);
                point(pause, &format!("inside {name} {n}: before its effect"));
                if name != "read" {
                    let mut file = std::fs::OpenOptions::new()
                        .create(true)
                        .append(true)
                        .open(&*log)
                        .map_err(|e| e.to_string())?;
                    file.write_all(format!("{name} {n}\n").as_bytes())
                        .map_err(|e| e.to_string())?;
                }
                point(pause, &format!("inside {name} {n}: after its effect"));
                Ok(json!(match name {
                    "read" => n * 10,
                    "charge" => n + 1,
                    _ => n,
                }))
            }
        })
}

fn toolbox(dir: &Path) -> Toolbox {
    Toolbox::builder()
        .dynamic(tool("read", EffectSet::READ, false, dir))
        .dynamic(tool("charge", EffectSet::WRITE, false, dir))
        .dynamic(tool("put", EffectSet::WRITE, true, dir))
        .build()
        .unwrap()
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

fn spawn(dir: &Path, pg: Option<&str>, pause: bool) -> Running {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args(["child", "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, dir)
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
fn run_to_end(dir: &Path, pg: Option<&str>) -> String {
    let mut running = spawn(dir, pg, false);
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
fn kill_at(dir: &Path, pg: Option<&str>, k: usize) -> Option<String> {
    let mut running = spawn(dir, pg, true);
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
    std::fs::read_to_string(dir.join("effects.log"))
        .unwrap_or_default()
        .lines()
        .filter(|l| *l == line)
        .count()
}

fn charges_at_most_once(dir: &Path, when: &str) {
    for n in [10, 20, 30, 40, 50] {
        let times = count(dir, &format!("charge {n}"));
        assert!(times <= 1, "charge {n} happened {times} times {when}");
    }
}

/// Whether a kill at `marker` leaves a `charge` started without a result.
fn leaves_a_charge_in_doubt(marker: &str) -> bool {
    (marker.starts_with("kept") && marker.contains("started charge"))
        || marker.starts_with("inside charge")
}

#[test]
fn a_run_killed_at_every_kill_point_resumes_without_repeating_a_write() {
    kill_at_every_point(None, "sqlite");
}

#[cfg(feature = "postgres")]
#[test]
fn a_run_in_postgres_killed_at_every_kill_point_resumes_without_repeating_a_write() {
    let Some(url) = durable_support::pg::database("crash") else {
        return;
    };
    kill_at_every_point(Some(&url), "postgres");
    durable_support::pg::drop_database(&url);
}

/// The harness, over SQLite (`pg` is `None`) or the Postgres database at `pg`.
fn kill_at_every_point(pg: Option<&str>, store: &str) {
    // A child that never reaches its next kill point would hang the test
    // for ever: end this process instead (its children then read the end
    // of their input, run on and exit).
    std::thread::spawn(|| {
        std::thread::sleep(std::time::Duration::from_secs(600));
        eprintln!("the crash test did not finish in 10 minutes: a child is stuck");
        std::process::exit(1);
    });
    let root =
        std::env::temp_dir().join(format!("typed-tools-crash-{store}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);

    // The uninterrupted run, and how many kill points it has.
    let baseline_dir = root.join("baseline");
    std::fs::create_dir_all(&baseline_dir).unwrap();
    let mut running = spawn(&baseline_dir, pg, true);
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
    // Per call: start kept, before and after the effect, result kept (4 x
    // 15), and the run's start and end.
    assert_eq!(points, 62);

    let mut in_doubt = 0;
    for k in 1..=points {
        let dir = root.join(format!("kill-{k}"));
        std::fs::create_dir_all(&dir).unwrap();
        let marker = kill_at(&dir, pg, k).expect("the child reached the kill point");
        let when = format!("after a kill at point {k} ({marker})");
        charges_at_most_once(&dir, &when);

        let mut end = run_to_end(&dir, pg);
        charges_at_most_once(&dir, &when);
        if leaves_a_charge_in_doubt(&marker) {
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
            end = run_to_end(&dir, pg);
        }
        assert!(
            end.starts_with("RESULT"),
            "{when}: the resumed run ended with {end}"
        );
        assert_eq!(end, baseline, "{when}");
        for n in [10, 20, 30, 40, 50] {
            assert_eq!(count(&dir, &format!("charge {n}")), 1, "{when}");
            assert!(count(&dir, &format!("put {}", n + 1)) >= 1, "{when}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
    // 3 kill points per charge leave it in doubt: its start kept, and
    // inside it before and after its effect.
    assert_eq!(in_doubt, 15);
    let _ = std::fs::remove_dir_all(&root);
}
