//! Durable runs over a SQLite file: a run resumed from the file by a new
//! journal (as another process would), a store that fails for real before
//! and after a call (a read-only connection, a closed one) and comes back,
//! and two journals that race for one run.

mod durable_support;

use std::path::PathBuf;

use durable_support::{expected, plan, toolbox, World};
use futures::executor::block_on;
use futures::future::BoxFuture;
use typed_tools::durable::{
    Durable, DurableError, Journal, JournalError, Record, Source, SqliteJournal, Stage, Synchronous,
};
use typed_tools::plan::Interpreter;

/// A fresh directory for one test's files, removed when dropped.
struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let dir =
            std::env::temp_dir().join(format!("typed-tools-durable-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Dir(dir)
    }
    fn db(&self) -> PathBuf {
        self.0.join("runs.db")
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn a_run_in_a_file_is_resumed_by_a_new_journal_on_it() {
    let dir = Dir::new("reopen");
    let world = World::default();
    let toolbox = toolbox(&world);
    let interpreter = Interpreter::new(&toolbox);
    let first = {
        let durable = Durable::new(SqliteJournal::open(dir.db()).unwrap());
        block_on(durable.run_plan(&interpreter, "r", &plan())).unwrap()
    };
    assert_eq!(first.run.outcome, Ok(expected()));
    for synchronous in [Synchronous::Full, Synchronous::Normal] {
        let durable = Durable::new(SqliteJournal::open_with(dir.db(), synchronous).unwrap());
        let again = block_on(durable.resume_plan(&interpreter, "r")).unwrap();
        assert_eq!(again.run, first.run);
        assert_eq!(again.sources, [Source::Replayed; 3]);
        assert_eq!(durable.journal().count("r").unwrap(), 8);
        assert!(durable.journal().unfinished().unwrap().is_empty());
    }
    assert_eq!(world.log(), ["read_balance 1", "charge 10", "put 3"]);
}

/// How the store fails at one position of the run's journal.
#[derive(Clone, Copy, Debug)]
enum Failure {
    /// The record goes to a read-only connection to the same file.
    ReadOnly,
    /// The connection is closed just before the record.
    Closed,
}

/// A SQLite journal whose store fails for real at position `at`.
struct Failing {
    journal: SqliteJournal,
    read_only: SqliteJournal,
    at: u64,
    failure: Failure,
}

impl Journal for Failing {
    fn append<'a>(
        &'a self,
        run: &'a str,
        seq: u64,
        record: &'a Record,
    ) -> BoxFuture<'a, Result<(), JournalError>> {
        match (seq == self.at, self.failure) {
            (true, Failure::ReadOnly) => self.read_only.append(run, seq, record),
            (true, Failure::Closed) => {
                self.journal.close();
                self.journal.append(run, seq, record)
            }
            (false, _) => self.journal.append(run, seq, record),
        }
    }
    fn load<'a>(&'a self, run: &'a str) -> BoxFuture<'a, Result<Vec<Record>, JournalError>> {
        self.journal.load(run)
    }
}

#[test]
fn a_store_that_fails_before_or_after_a_call_stops_the_run_and_resumes_when_back() {
    // Position 3 is the charge's start (before the call), 4 its result
    // (after it), 6 the idempotent put's result.
    for failure in [Failure::ReadOnly, Failure::Closed] {
        for at in [1, 3, 4, 5, 6, 7] {
            let dir = Dir::new(&format!("fail-{failure:?}-{at}"));
            let world = World::default();
            let toolbox = toolbox(&world);
            let interpreter = Interpreter::new(&toolbox);
            let journal = SqliteJournal::open(dir.db()).unwrap();
            let read_only = SqliteJournal::open_read_only(dir.db()).unwrap();
            let durable = Durable::new(Failing {
                journal,
                read_only,
                at,
                failure,
            });
            let error = block_on(durable.run_plan(&interpreter, "r", &plan())).unwrap_err();
            let DurableError::Journal { stage, error, .. } = &error else {
                panic!("{failure:?} at {at}: {error}")
            };
            assert!(matches!(error, JournalError::Unavailable { .. }), "{error}");
            let calls_before = match (at, stage) {
                (1 | 3 | 5, Stage::CallStart { call, .. }) => *call as usize,
                (4 | 6, Stage::CallResult { call, .. }) => *call as usize + 1,
                (7, Stage::Finish) => 3,
                _ => panic!("{failure:?} at {at}: {stage:?}"),
            };
            assert_eq!(world.log().len(), calls_before, "{failure:?} at {at}");
            drop(durable);

            // The store is back (a new connection to the same file).
            let durable = Durable::new(SqliteJournal::open(dir.db()).unwrap());
            let resumed = block_on(durable.run_plan(&interpreter, "r", &plan()));
            if at == 4 {
                // The charge ran and its result was lost: in doubt, not repeated.
                let Err(DurableError::InDoubt(doubt)) = resumed else {
                    panic!("{failure:?} at {at}: {resumed:?}")
                };
                assert_eq!(doubt.tool, "charge");
                assert_eq!(world.log(), ["read_balance 1", "charge 10"]);
                continue;
            }
            let done = resumed.unwrap();
            assert_eq!(done.run.outcome, Ok(expected()), "{failure:?} at {at}");
            // Each write once; the idempotent put twice when its result was lost.
            assert_eq!(world.count("charge"), 1, "{failure:?} at {at}");
            assert_eq!(world.count("put"), if at == 6 { 2 } else { 1 });
        }
    }
}

#[test]
fn a_read_only_journal_runs_nothing() {
    let dir = Dir::new("read-only");
    drop(SqliteJournal::open(dir.db()).unwrap());
    let world = World::default();
    let toolbox = toolbox(&world);
    let durable = Durable::new(SqliteJournal::open_read_only(dir.db()).unwrap());
    let error = block_on(durable.run_plan(&Interpreter::new(&toolbox), "r", &plan())).unwrap_err();
    assert!(
        matches!(
            error,
            DurableError::Journal {
                stage: Stage::Start,
                ..
            }
        ),
        "{error}"
    );
    assert!(error.to_string().contains("readonly"), "{error}");
    assert!(world.log().is_empty());
}

#[test]
fn two_journals_on_one_file_cannot_both_go_on_with_a_run() {
    let dir = Dir::new("race");
    let one = SqliteJournal::open(dir.db()).unwrap();
    let two = SqliteJournal::open(dir.db()).unwrap();
    let start = Record::Started {
        format: 1,
        at_ms: 0,
        input: typed_tools::durable::Input::Calls,
        tools: vec![],
    };
    block_on(one.append("r", 0, &start)).unwrap();
    assert_eq!(
        block_on(two.append("r", 0, &start)),
        Err(JournalError::Conflict {
            run: "r".into(),
            seq: 0
        })
    );
    // A position past the end is refused too: no gap.
    assert!(matches!(
        block_on(two.append("r", 2, &start)),
        Err(JournalError::Conflict { .. })
    ));
    block_on(two.append("r", 1, &start)).unwrap();
    assert_eq!(block_on(one.load("r")).unwrap().len(), 2);
}
