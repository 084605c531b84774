//! What journaling costs: a plan of 100 Write calls of a trivial tool run
//! without a journal, and run durably over the in-memory journal and over a
//! SQLite file with `synchronous = FULL` (the default: an fsync per
//! record, two records per call) and `NORMAL`; and the time to resume a run
//! of 1,000 recorded calls from a SQLite file (all replayed, none run).
//! `cargo bench --bench durable --features sqlite`; with `--features
//! sqlite,postgres` and `TYPED_TOOLS_PG_URL` set (`eval "$(scripts/postgres/start.sh)"`),
//! over Postgres on the loopback too (its defaults: `synchronous_commit =
//! on`, an fsync per commit, one commit per record).
//!
//! An agent run of 20 steps, each answer one Write call, and the final
//! answer (21 answers, 20 calls: 61 records), over a scripted model, the
//! same way: without a journal, over memory, SQLite `NORMAL` and `FULL`
//! (and Postgres); and its resume from SQLite, every answer and result
//! replayed.
//!
//! Each durable iteration is a new run id, so that every call is journaled
//! (the same id would be replayed). Divide a time by 100 for the cost per
//! call; the ratios to `no_journal` are the overhead.

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};

use criterion::{criterion_group, criterion_main, Criterion};
use futures::executor::block_on;
use typed_tools::agent::{Agent, Limits};
use typed_tools::durable::{Durable, Journal, MemoryJournal, SqliteJournal, Synchronous};
use typed_tools::model::ScriptedModel;
use typed_tools::plan::{Interpreter, Plan};
use typed_tools::{tool, Toolbox};

/// Record a number.
#[tool(effects = Write)]
fn record(n: i64) -> i64 {
    n + 1
}

fn plan(calls: usize) -> Plan {
    let list: Vec<String> = (0..calls).map(|n| n.to_string()).collect();
    Plan::parse(&format!(
        "match traverse (fn x => exec tool record {{n = x}}) [{}] {{ Ok(all) => all, Err(e) => [] }}",
        list.join(", ")
    ))
    .unwrap()
}

fn journaled<J: Journal>(
    c: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    durable: &Durable<J>,
    interpreter: &Interpreter<'_>,
    plan: &Plan,
) {
    static RUN: AtomicU64 = AtomicU64::new(0);
    c.bench_function(name, |b| {
        b.iter(|| {
            let run = format!(
                "bench-{}-{}",
                std::process::id(),
                RUN.fetch_add(1, Ordering::Relaxed)
            );
            let done = block_on(durable.run_plan(interpreter, &run, plan)).unwrap();
            assert_eq!(done.ran(), 100);
            black_box(done)
        })
    });
}

fn per_call(c: &mut Criterion) {
    let toolbox = Toolbox::builder().tool(Record).build().unwrap();
    let interpreter = Interpreter::new(&toolbox);
    let plan = plan(100);
    let dir = std::env::temp_dir().join(format!("typed-tools-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();

    let mut group = c.benchmark_group("100_write_calls");
    group.sample_size(10);
    group.bench_function("no_journal", |b| {
        b.iter(|| black_box(block_on(interpreter.run(&plan)).unwrap()))
    });
    let memory = Durable::new(MemoryJournal::new());
    journaled(&mut group, "memory_journal", &memory, &interpreter, &plan);
    drop(memory);
    let normal =
        Durable::new(SqliteJournal::open_with(dir.join("normal.db"), Synchronous::Normal).unwrap());
    journaled(&mut group, "sqlite_normal", &normal, &interpreter, &plan);
    let full = Durable::new(SqliteJournal::open(dir.join("full.db")).unwrap());
    journaled(&mut group, "sqlite_full", &full, &interpreter, &plan);
    #[cfg(feature = "postgres")]
    postgres(&mut group, &interpreter, &plan);
    group.finish();

    // Resume: a run of 1,000 recorded calls, replayed.
    let plan = plan_1000();
    let durable = Durable::new(SqliteJournal::open(dir.join("resume.db")).unwrap());
    let first = block_on(durable.run_plan(&interpreter, "long", &plan)).unwrap();
    assert_eq!(first.ran(), 1000);
    let mut group = c.benchmark_group("resume");
    group.sample_size(10);
    group.bench_function("1000_recorded_calls_sqlite", |b| {
        b.iter(|| {
            let done = block_on(durable.resume_plan(&interpreter, "long")).unwrap();
            assert_eq!(done.replayed(), 1000);
            black_box(done)
        })
    });
    group.finish();
    drop((normal, full, durable));
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(feature = "postgres")]
fn postgres(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    interpreter: &Interpreter<'_>,
    plan: &Plan,
) {
    let Ok(url) = std::env::var("TYPED_TOOLS_PG_URL") else {
        eprintln!(
            "postgres skipped: set TYPED_TOOLS_PG_URL (eval \"$(scripts/postgres/start.sh)\")"
        );
        return;
    };
    let journal = block_on(typed_tools::durable::PostgresJournal::connect(&url)).unwrap();
    journaled(
        group,
        "postgres_loopback",
        &Durable::new(journal),
        interpreter,
        plan,
    );
}

fn plan_1000() -> Plan {
    plan(1000)
}

/// An agent over `toolbox` whose model answers with [`script`], its step
/// limit above the run's 21 steps.
fn agent(toolbox: &Toolbox) -> Agent<ScriptedModel> {
    Agent::new(toolbox, ScriptedModel::by_turn(script())).limits(Limits::new().steps(32))
}

/// The agent's answers: a call of `record` per step, then the answer.
fn script() -> Vec<String> {
    let mut answers: Vec<String> = (0..20)
        .map(|n| format!(r#"{{"name": "record", "arguments": {{"n": {n}}}}}"#))
        .collect();
    answers.push("Recorded twenty.".into());
    answers
}

fn agent_journaled<J: Journal>(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    durable: &Durable<J>,
    toolbox: &Toolbox,
) {
    static RUN: AtomicU64 = AtomicU64::new(0);
    group.bench_function(name, |b| {
        b.iter(|| {
            let run = format!(
                "agent-{}-{}",
                std::process::id(),
                RUN.fetch_add(1, Ordering::Relaxed)
            );
            let agent = agent(toolbox);
            let done = block_on(durable.run_agent(&agent, &run, "Record.")).unwrap();
            assert_eq!((done.ran(), done.answers_asked), (20, 21));
            black_box(done)
        })
    });
}

fn agent_runs(c: &mut Criterion) {
    let toolbox = Toolbox::builder().tool(Record).build().unwrap();
    let dir = std::env::temp_dir().join(format!("typed-tools-bench-agent-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut group = c.benchmark_group("agent_20_steps");
    group.sample_size(10);
    group.bench_function("no_journal", |b| {
        b.iter(|| {
            let agent = agent(&toolbox);
            let run = block_on(agent.run("Record."));
            assert_eq!(run.calls.len(), 20);
            black_box(run)
        })
    });
    agent_journaled(
        &mut group,
        "memory_journal",
        &Durable::new(MemoryJournal::new()),
        &toolbox,
    );
    let normal = Durable::new(
        SqliteJournal::open_with(dir.join("agent-normal.db"), Synchronous::Normal).unwrap(),
    );
    agent_journaled(&mut group, "sqlite_normal", &normal, &toolbox);
    let full = Durable::new(SqliteJournal::open(dir.join("agent-full.db")).unwrap());
    agent_journaled(&mut group, "sqlite_full", &full, &toolbox);
    #[cfg(feature = "postgres")]
    if let Ok(url) = std::env::var("TYPED_TOOLS_PG_URL") {
        let journal = block_on(typed_tools::durable::PostgresJournal::connect(&url)).unwrap();
        agent_journaled(
            &mut group,
            "postgres_loopback",
            &Durable::new(journal),
            &toolbox,
        );
    }
    // Resume: the whole run replayed, the model never asked.
    let agent = agent(&toolbox);
    block_on(full.run_agent(&agent, "long-agent", "Record.")).unwrap();
    group.bench_function("resume_sqlite_all_replayed", |b| {
        b.iter(|| {
            let done = block_on(full.resume_agent(&agent, "long-agent")).unwrap();
            assert_eq!((done.replayed(), done.answers_asked), (20, 0));
            black_box(done)
        })
    });
    group.finish();
    drop((normal, full));
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, per_call, agent_runs);
criterion_main!(benches);
