//! Durable runs over a real Postgres server: a run resumed by a new
//! connection; a connection the server cuts before and after a call; and a
//! fleet: 3 worker processes (this test binary, started again with
//! `TT_FLEET_WORKER` set) take 200 journaled runs (100 plans, 100 agent
//! runs) from one database, one of them is killed with SIGKILL inside a
//! charge, and every run finishes exactly once with no write repeated.
//!
//! The server: `TYPED_TOOLS_PG_URL` if set, else the one
//! `scripts/postgres/start.sh` starts (from the system's packages, under
//! target/pg). Each test makes a database of its own. A test skips, saying
//! why, only when no server can be started.

mod durable_support;

use std::io::{BufRead, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use durable_support::pg::{admin, database, drop_database};
use durable_support::{expected, plan, toolbox, World};
use futures::executor::block_on;
use serde_json::json;
use typed_tools::agent::Agent;
use typed_tools::durable::{
    Durable, DurableError, Journal, JournalError, PostgresJournal, Record, Resolution, RunStatus,
    Source, Stage,
};
use typed_tools::model::ScriptedModel;
use typed_tools::plan::{Interpreter, Plan};
use typed_tools::Toolbox;

const WORKER: &str = "TT_FLEET_WORKER";

#[test]
fn a_run_in_postgres_is_resumed_by_a_new_connection() {
    let Some(url) = database("resume") else {
        return;
    };
    let world = World::default();
    let toolbox = toolbox(&world);
    let interpreter = Interpreter::new(&toolbox);
    let first = {
        let durable = Durable::new(block_on(PostgresJournal::connect(&url)).unwrap());
        block_on(durable.run_plan(&interpreter, "r", &plan())).unwrap()
    };
    assert_eq!(first.run.outcome, Ok(expected()));
    let durable = Durable::new(block_on(PostgresJournal::connect(&url)).unwrap());
    let again = block_on(durable.resume_plan(&interpreter, "r")).unwrap();
    assert_eq!(again.run, first.run);
    assert_eq!(again.sources, [Source::Replayed; 3]);
    assert_eq!(world.log(), ["read_balance 1", "charge 10", "put 3"]);
    // Two connections racing for one position: one wins.
    let other = block_on(PostgresJournal::connect(&url)).unwrap();
    let end = Record::from_json(r#"{"record":"finished","outcome":null,"at_ms":0}"#).unwrap();
    assert!(matches!(
        block_on(other.append("r", 3, &end)),
        Err(JournalError::Conflict { seq: 3, .. })
    ));
    drop((durable, other));
    drop_database(&url);
}

/// A journal whose connection the server cuts just before position `at`.
struct Cut {
    journal: PostgresJournal,
    url: String,
    at: u64,
}

impl Journal for Cut {
    fn append<'a>(
        &'a self,
        run: &'a str,
        seq: u64,
        record: &'a Record,
    ) -> futures::future::BoxFuture<'a, Result<(), JournalError>> {
        if seq == self.at {
            // Every other connection to this database: the journal's.
            let db = self.url.rsplit('/').next().unwrap_or_default();
            let base = self.url.rsplit_once('/').map_or("", |(b, _)| b);
            admin(
                &format!("{base}/postgres"),
                &format!(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                     WHERE datname = '{db}' AND pid <> pg_backend_pid()"
                ),
            );
        }
        self.journal.append(run, seq, record)
    }
    fn load<'a>(
        &'a self,
        run: &'a str,
    ) -> futures::future::BoxFuture<'a, Result<Vec<Record>, JournalError>> {
        self.journal.load(run)
    }
}

#[test]
fn a_connection_cut_before_or_after_a_call_stops_the_run_and_it_resumes_when_back() {
    let Some(url) = database("cut") else {
        return;
    };
    // 3: the charge's start (before it runs); 4: its result (after).
    for at in [3, 4] {
        let world = World::default();
        let toolbox = toolbox(&world);
        let interpreter = Interpreter::new(&toolbox);
        let run = format!("cut-{at}");
        let journal = block_on(PostgresJournal::connect(&url)).unwrap();
        let durable = Durable::new(Cut {
            journal,
            url: url.clone(),
            at,
        });
        let error = block_on(durable.run_plan(&interpreter, &run, &plan())).unwrap_err();
        let DurableError::Journal { stage, error, .. } = &error else {
            panic!("{error}")
        };
        assert!(matches!(error, JournalError::Unavailable { .. }), "{error}");
        match (at, stage) {
            (3, Stage::CallStart { .. }) => assert_eq!(world.log(), ["read_balance 1"]),
            (4, Stage::CallResult { .. }) => {
                assert_eq!(world.log(), ["read_balance 1", "charge 10"])
            }
            other => panic!("{other:?}"),
        }
        // The store is back: a new connection.
        let durable = Durable::new(block_on(PostgresJournal::connect(&url)).unwrap());
        let resumed = block_on(durable.run_plan(&interpreter, &run, &plan()));
        if at == 4 {
            assert!(
                matches!(resumed, Err(DurableError::InDoubt(_))),
                "{resumed:?}"
            );
            block_on(durable.resolve(
                &run,
                Resolution::Done {
                    output: json!("charge_10"),
                },
            ))
            .unwrap();
        }
        let done = block_on(durable.run_plan(&interpreter, &run, &plan())).unwrap();
        assert_eq!(done.run.outcome, Ok(expected()));
        assert_eq!(world.log(), ["read_balance 1", "charge 10", "put 3"]);
    }
    drop_database(&url);
}

// The fleet.

const RUNS: usize = 200;
const LEASE: Duration = Duration::from_secs(2);

/// Run `i`'s input: an agent's task for odd runs (`agent i`), else a plan.
fn fleet_input(i: usize) -> String {
    if i % 2 == 1 {
        return format!("agent {i}");
    }
    format!(
        r#"match exec tool read {{n = {i}}} {{
  Ok(x) => match exec tool charge {{n = x}} {{
    Ok(y) => match exec tool put {{n = y}} {{ Ok(z) => z, Err(e) => 0 }},
    Err(e) => 0
  }},
  Err(e) => 0
}}"#
    )
}

fn fleet_toolbox(log: &Path) -> Toolbox {
    let pause = std::env::var(WORKER).is_ok_and(|w| w == "0");
    let moment: durable_support::Moment = Arc::new(move |name, n, moment| {
        if pause && name == "charge" && moment == "after" {
            // The harness kills this worker here, once.
            println!("@@ charged {n}");
            let mut line = String::new();
            let _ = std::io::stdin().read_line(&mut line);
        }
    });
    durable_support::file_toolbox(log, 1000, moment)
}

/// A worker: takes runs until none is pending, runs each, settles it.
#[test]
fn worker() {
    // Only as a child of the fleet test; a no-op in a normal test run.
    let Ok(id) = std::env::var(WORKER) else {
        return;
    };
    let url = std::env::var("TT_FLEET_URL").unwrap();
    let log = PathBuf::from(std::env::var("TT_FLEET_LOG").unwrap());
    let toolbox = fleet_toolbox(&log);
    let interpreter = Interpreter::new(&toolbox);
    let durable = Durable::new(block_on(PostgresJournal::connect(&url)).unwrap());
    let name = format!("worker-{id}");
    loop {
        let lease = block_on(durable.journal().lease(&name, LEASE)).unwrap();
        let Some(lease) = lease else {
            if block_on(durable.journal().runs(RunStatus::Pending))
                .unwrap()
                .is_empty()
            {
                break;
            }
            // Pending runs under another worker's lease: wait for it to end.
            std::thread::sleep(Duration::from_millis(100));
            continue;
        };
        let done = match lease.input.strip_prefix("agent ") {
            // The model reads the balance, charges it, records the charge.
            Some(i) => {
                let n: i64 = i.parse().unwrap();
                let script = [
                    format!(r#"{{"name": "read", "arguments": {{"n": {n}}}}}"#),
                    format!(
                        r#"{{"name": "charge", "arguments": {{"n": {}}}}}"#,
                        n * 1000
                    ),
                    format!(
                        r#"{{"name": "put", "arguments": {{"n": {}}}}}"#,
                        n * 1000 + 1
                    ),
                    "Done.".to_owned(),
                ];
                let agent = Agent::new(&toolbox, ScriptedModel::by_turn(script));
                block_on(durable.run_agent(&agent, &lease.run, format!("Bill {n}."))).map(|_| ())
            }
            None => {
                let plan = Plan::parse(&lease.input).unwrap();
                block_on(durable.run_plan(&interpreter, &lease.run, &plan)).map(|_| ())
            }
        };
        let status = match done {
            Ok(()) => RunStatus::Finished,
            Err(DurableError::InDoubt(_)) => {
                println!("@@ in doubt {}", lease.run);
                RunStatus::Stopped
            }
            // A store that failed: another try, up to 5, then a person.
            Err(error) if lease.attempt < 5 => {
                println!("@@ error {} {error}", lease.run);
                RunStatus::Pending
            }
            Err(error) => {
                println!("@@ gave up {} {error}", lease.run);
                RunStatus::Stopped
            }
        };
        block_on(durable.journal().settle(&lease.run, &name, status)).unwrap();
    }
    println!("@@ done");
}

fn spawn_worker(id: usize, url: &str, log: &Path) -> std::process::Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["worker", "--exact", "--nocapture", "--test-threads=1"])
        .env(WORKER, id.to_string())
        .env("TT_FLEET_URL", url)
        .env("TT_FLEET_LOG", log)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

#[test]
fn a_fleet_of_three_workers_finishes_200_runs_once_each_with_one_worker_killed() {
    let Some(url) = database("fleet") else {
        return;
    };
    std::thread::spawn(|| {
        std::thread::sleep(Duration::from_secs(600));
        eprintln!("the fleet test did not finish in 10 minutes");
        std::process::exit(1);
    });
    let dir = std::env::temp_dir().join(format!("typed-tools-fleet-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("effects.log");
    let journal = block_on(PostgresJournal::connect(&url)).unwrap();
    for i in 0..RUNS {
        assert!(block_on(journal.submit(&format!("run-{i:03}"), &fleet_input(i))).unwrap());
    }
    let started = Instant::now();
    // Worker 0 stops after each charge for the harness; the others run free.
    let mut victim = spawn_worker(0, &url, &log);
    let others: Vec<_> = (1..3).map(|id| spawn_worker(id, &url, &log)).collect();
    let mut stdin = victim.stdin.take().unwrap();
    let mut lines = BufReader::new(victim.stdout.take().unwrap()).lines();
    let mut charges = 0;
    let mut killed_after = None;
    while let Some(Ok(line)) = lines.next() {
        let Some(at) = line.find("@@ charged ") else {
            continue;
        };
        charges += 1;
        if charges == 3 {
            // Mid-run, inside a charge, after its effect: SIGKILL.
            victim.kill().unwrap();
            killed_after = Some(line[at + 11..].to_owned());
            break;
        }
        stdin.write_all(b"\n").unwrap();
    }
    drop(stdin);
    victim.wait().unwrap();
    let killed_in = killed_after.expect("worker 0 made 3 charges");
    for mut worker in others {
        assert!(worker.wait().unwrap().success());
    }

    // The killed worker's run: taken over after its lease ran out, found
    // in doubt (its charge has no result), not repeated, and stopped.
    let stopped = block_on(journal.runs(RunStatus::Stopped)).unwrap();
    assert_eq!(stopped.len(), 1, "{stopped:?}");
    let seen = std::fs::read_to_string(&log).unwrap();
    let n: i64 = killed_in.parse().unwrap();
    assert_eq!(
        seen.lines().filter(|l| *l == format!("charge {n}")).count(),
        1
    );
    // A person resolves it from the outside world, and a worker finishes it.
    let durable = Durable::new(journal);
    let doubt = block_on(durable.resolve(
        &stopped[0],
        Resolution::Done {
            output: json!(n + 1),
        },
    ))
    .unwrap();
    assert_eq!(
        (doubt.tool.as_str(), doubt.args["n"].as_i64()),
        ("charge", Some(n))
    );
    assert!(block_on(durable.journal().requeue(&stopped[0])).unwrap());
    assert!(spawn_worker(3, &url, &log).wait().unwrap().success());
    let elapsed = started.elapsed();

    // Every run finished, once; every charge made once.
    let finished = block_on(durable.journal().runs(RunStatus::Finished)).unwrap();
    assert_eq!(finished.len(), RUNS);
    let seen = std::fs::read_to_string(&log).unwrap();
    for i in 0..RUNS {
        let run = format!("run-{i:03}");
        let records = block_on(durable.journal().load(&run)).unwrap();
        let ends = records
            .iter()
            .filter(|r| matches!(r, Record::Finished { .. }))
            .count();
        assert_eq!(ends, 1, "{run}");
        let charge = format!("charge {}", i * 1000);
        assert_eq!(seen.lines().filter(|l| *l == charge).count(), 1, "{charge}");
        let put = format!("put {}", i * 1000 + 1);
        assert!(seen.lines().any(|l| l == put), "{put}");
    }
    eprintln!("fleet: {RUNS} runs, 3 workers, one killed: {elapsed:.1?}");
    let _ = std::fs::remove_dir_all(&dir);
    drop(durable);
    drop_database(&url);
}
