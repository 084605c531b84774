//! The [`Journal`] trait, its errors, and [`MemoryJournal`].

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use futures::future::{self, BoxFuture};

use super::record::Record;

/// Where runs are recorded: an append-only log of [`Record`]s per run id.
///
/// A store writes each record durably before its future completes (a
/// call is recorded before it runs, and runs only once the record is
/// kept), and refuses a record at a position that is taken
/// ([`JournalError::Conflict`]): two processes resuming one run cannot
/// both go on. The methods return boxed futures so that a store may do
/// its I/O on any runtime, or none ([`MemoryJournal`] and the SQLite store
/// finish at once). Workflow engines plug in here.
///
/// ```
/// # futures::executor::block_on(async {
/// use typed_tools::durable::{Input, Journal, MemoryJournal, Record};
///
/// let journal = MemoryJournal::new();
/// let start = Record::Started { format: 1, at_ms: 0, input: Input::Calls, tools: vec![] };
/// journal.append("run-1", 0, &start).await.unwrap();
/// assert!(journal.append("run-1", 0, &start).await.is_err()); // position 0 is taken
/// assert_eq!(journal.load("run-1").await.unwrap(), vec![start]);
/// assert!(journal.load("run-2").await.unwrap().is_empty());
/// # });
/// ```
pub trait Journal: Send + Sync {
    /// Appends `record` at position `seq` of run `run`'s journal, durably.
    /// `seq` is the number of records the run has: a store refuses any
    /// other with [`JournalError::Conflict`].
    fn append<'a>(
        &'a self,
        run: &'a str,
        seq: u64,
        record: &'a Record,
    ) -> BoxFuture<'a, Result<(), JournalError>>;

    /// Every record of run `run`, in order; empty for a run never started.
    fn load<'a>(&'a self, run: &'a str) -> BoxFuture<'a, Result<Vec<Record>, JournalError>>;
}

/// A journal behind a reference or a smart pointer is that journal.
macro_rules! forward_journal {
    ($($ptr:ty),*) => {$(
        impl<J: Journal + ?Sized> Journal for $ptr {
            fn append<'a>(
                &'a self,
                run: &'a str,
                seq: u64,
                record: &'a Record,
            ) -> BoxFuture<'a, Result<(), JournalError>> {
                (**self).append(run, seq, record)
            }
            fn load<'a>(&'a self, run: &'a str) -> BoxFuture<'a, Result<Vec<Record>, JournalError>> {
                (**self).load(run)
            }
        }
    )*};
}

forward_journal!(&J, Arc<J>, Box<J>);

/// A journal's failure.
///
/// ```
/// use typed_tools::durable::JournalError;
///
/// let error = JournalError::Conflict { run: "run-1".into(), seq: 3 };
/// assert_eq!(error.to_string(), "position 3 of run `run-1` is already recorded: another process is running it");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum JournalError {
    /// The store could not be read or written: a file that cannot be
    /// written, a full disk, a database that is down or a closed connection.
    Unavailable {
        /// What the store said.
        message: String,
    },
    /// The position is taken: another process appended to the run first.
    Conflict {
        /// The run.
        run: String,
        /// The position.
        seq: u64,
    },
    /// A stored record could not be read: a newer format, or damage.
    Corrupt {
        /// The run.
        run: String,
        /// The record's position.
        seq: u64,
        /// What was wrong.
        message: String,
    },
}

impl fmt::Display for JournalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JournalError::Unavailable { message } => {
                write!(f, "the journal's store is unavailable: {message}")
            }
            JournalError::Conflict { run, seq } => write!(
                f,
                "position {seq} of run `{run}` is already recorded: another process is running it"
            ),
            JournalError::Corrupt { run, seq, message } => {
                write!(f, "record {seq} of run `{run}` cannot be read: {message}")
            }
        }
    }
}

impl std::error::Error for JournalError {}

/// A journal in memory, as JSON text: for tests, and for runs that need
/// replay within one process only. It can be made to fail
/// ([`set_failing`](Self::set_failing)), to test what a run does when its
/// store is down.
///
/// ```
/// # futures::executor::block_on(async {
/// use typed_tools::durable::{Input, Journal, JournalError, MemoryJournal, Record};
///
/// let journal = MemoryJournal::new();
/// journal.set_failing(true);
/// let start = Record::Started { format: 1, at_ms: 0, input: Input::Calls, tools: vec![] };
/// assert!(matches!(journal.append("r", 0, &start).await, Err(JournalError::Unavailable { .. })));
/// journal.set_failing(false);
/// assert!(journal.append("r", 0, &start).await.is_ok());
/// assert_eq!(journal.lines("r").len(), 1);
/// # });
/// ```
#[derive(Debug, Default)]
pub struct MemoryJournal {
    runs: Mutex<HashMap<String, Vec<String>>>,
    failing: AtomicBool,
}

impl MemoryJournal {
    /// An empty journal.
    ///
    /// ```
    /// let journal = typed_tools::durable::MemoryJournal::new();
    /// assert!(journal.lines("any").is_empty());
    /// ```
    pub fn new() -> MemoryJournal {
        MemoryJournal::default()
    }

    /// Makes every read and write fail with [`JournalError::Unavailable`]
    /// (`true`), or work again (`false`).
    ///
    /// ```
    /// let journal = typed_tools::durable::MemoryJournal::new();
    /// journal.set_failing(true);
    /// ```
    pub fn set_failing(&self, failing: bool) {
        self.failing.store(failing, Ordering::SeqCst);
    }

    /// The JSON lines of run `run`, as stored.
    ///
    /// ```
    /// let journal = typed_tools::durable::MemoryJournal::new();
    /// assert!(journal.lines("run-1").is_empty());
    /// ```
    pub fn lines(&self, run: &str) -> Vec<String> {
        self.lock().get(run).cloned().unwrap_or_default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Vec<String>>> {
        // A panic elsewhere while holding the lock leaves whole lines only.
        self.runs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn check(&self) -> Result<(), JournalError> {
        if self.failing.load(Ordering::SeqCst) {
            Err(JournalError::Unavailable {
                message: "the memory journal was set to fail".into(),
            })
        } else {
            Ok(())
        }
    }
}

impl Journal for MemoryJournal {
    fn append<'a>(
        &'a self,
        run: &'a str,
        seq: u64,
        record: &'a Record,
    ) -> BoxFuture<'a, Result<(), JournalError>> {
        let result = self.check().and_then(|()| {
            let mut runs = self.lock();
            let lines = runs.entry(run.to_owned()).or_default();
            if u64::try_from(lines.len()).ok() != Some(seq) {
                return Err(JournalError::Conflict {
                    run: run.to_owned(),
                    seq,
                });
            }
            lines.push(record.to_json());
            Ok(())
        });
        Box::pin(future::ready(result))
    }

    fn load<'a>(&'a self, run: &'a str) -> BoxFuture<'a, Result<Vec<Record>, JournalError>> {
        let result = self
            .check()
            .and_then(|()| read_lines(run, &self.lines(run)));
        Box::pin(future::ready(result))
    }
}

/// Reads a run's stored lines as records.
pub(crate) fn read_lines(run: &str, lines: &[String]) -> Result<Vec<Record>, JournalError> {
    lines
        .iter()
        .zip(0u64..)
        .map(|(line, seq)| {
            Record::from_json(line).map_err(|message| JournalError::Corrupt {
                run: run.to_owned(),
                seq,
                message,
            })
        })
        .collect()
}
