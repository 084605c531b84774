//! [`SqliteJournal`]: durable runs in one SQLite file (feature `sqlite`).

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use futures::future::{self, BoxFuture};
use rusqlite::{params, Connection, ErrorCode, OpenFlags, OptionalExtension};

use super::journal::{read_lines, Journal, JournalError};
use super::record::Record;

/// How hard SQLite works to keep each commit through a crash of the machine
/// (`PRAGMA synchronous`, in WAL mode).
///
/// ```
/// use typed_tools::durable::Synchronous;
///
/// assert_eq!(Synchronous::default(), Synchronous::Full);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Synchronous {
    /// Each commit is synced to the disk (an `fsync` of the write-ahead log)
    /// before it returns: a record the journal said it kept survives a
    /// crash of the process, of the OS and a power cut. The default: a
    /// call's start that were lost in a power cut would let a resume run a
    /// `Write` again, the one thing a durable run must not do.
    #[default]
    Full,
    /// Commits are written to the write-ahead log but synced only at
    /// checkpoints: safe against a crash of the process (the OS has the
    /// data), not against a crash of the machine, which can lose the last
    /// commits. Faster (no `fsync` per record); for runs whose writes can
    /// be repeated, or machines with battery-backed storage.
    Normal,
}

/// A [`Journal`] in one SQLite file, with SQLite compiled in (no server,
/// no system library).
///
/// The file is opened in WAL mode (readers do not block the writer, and
/// a commit is one append to the log) with `synchronous = FULL` by default
/// (see [`Synchronous`] for why); several processes may share a file, each
/// waiting up to five seconds for another's write. Records live in one
/// table, `typed_tools_journal (run, seq, record)`, keyed by run and
/// position, so that a position is written once: a second process that
/// resumes a run another is running gets [`JournalError::Conflict`].
///
/// The methods do their I/O before they return the future (SQLite's API
/// is blocking): on an async runtime, an append holds its thread for the
/// time of one commit.
///
/// ```
/// # futures::executor::block_on(async {
/// use typed_tools::durable::{Durable, SqliteJournal, Source};
/// use typed_tools::plan::{Interpreter, Plan, Value};
/// use typed_tools::{tool, Toolbox};
///
/// /// Charge a card.
/// #[tool(effects = Write)]
/// fn charge_card(card: String, amount: u32) -> String { format!("ch_{card}_{amount}") }
///
/// let dir = std::env::temp_dir().join(format!("typed-tools-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let path = dir.join("runs.db");
/// # let _ = std::fs::remove_file(&path);
/// let toolbox = Toolbox::builder().tool(ChargeCard).build().unwrap();
/// let interpreter = Interpreter::new(&toolbox);
/// let plan = Plan::parse(r#"match exec tool charge_card {card = "4242", amount = 20} { Ok(c) => c, Err(e) => e.message }"#).unwrap();
///
/// let durable = Durable::new(SqliteJournal::open(&path).unwrap());
/// durable.run_plan(&interpreter, "order-17", &plan).await.unwrap();
/// drop(durable);
///
/// // Another process, later: the file has the run.
/// let durable = Durable::new(SqliteJournal::open(&path).unwrap());
/// let again = durable.run_plan(&interpreter, "order-17", &plan).await.unwrap();
/// assert_eq!(again.sources, [Source::Replayed]);
/// assert_eq!(again.run.outcome, Ok(Value::String("ch_4242_20".into())));
/// # std::fs::remove_dir_all(&dir).unwrap();
/// # });
/// ```
pub struct SqliteJournal {
    /// `None` once [`close`](SqliteJournal::close)d.
    connection: Mutex<Option<Connection>>,
    path: PathBuf,
}

impl fmt::Debug for SqliteJournal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SqliteJournal")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS typed_tools_journal (
    run TEXT NOT NULL,
    seq INTEGER NOT NULL,
    record TEXT NOT NULL,
    PRIMARY KEY (run, seq)
) WITHOUT ROWID";

/// Inserts the record only at the run's next position.
const APPEND: &str = "INSERT INTO typed_tools_journal (run, seq, record)
    SELECT ?1, ?2, ?3
    WHERE (SELECT COALESCE(MAX(seq) + 1, 0) FROM typed_tools_journal WHERE run = ?1) = ?2";

const LOAD: &str = "SELECT record FROM typed_tools_journal WHERE run = ?1 ORDER BY seq";

fn unavailable(error: impl fmt::Display) -> JournalError {
    JournalError::Unavailable {
        message: error.to_string(),
    }
}

impl SqliteJournal {
    /// Opens (or creates) the journal in the SQLite file at `path`, with
    /// [`Synchronous::Full`].
    ///
    /// ```
    /// use typed_tools::durable::SqliteJournal;
    ///
    /// // A directory that does not exist: a typed error, no panic.
    /// assert!(SqliteJournal::open("/nonexistent-dir/runs.db").is_err());
    /// ```
    pub fn open(path: impl AsRef<Path>) -> Result<SqliteJournal, JournalError> {
        SqliteJournal::open_with(path, Synchronous::Full)
    }

    /// Opens (or creates) the journal at `path` with the given durability.
    ///
    /// ```
    /// use typed_tools::durable::{SqliteJournal, Synchronous};
    ///
    /// let path = std::env::temp_dir().join(format!("typed-tools-doc-normal-{}.db", std::process::id()));
    /// let journal = SqliteJournal::open_with(&path, Synchronous::Normal).unwrap();
    /// assert_eq!(journal.path(), path);
    /// # drop(journal);
    /// # for end in ["", "-wal", "-shm"] { let _ = std::fs::remove_file(format!("{}{end}", path.display())); }
    /// ```
    pub fn open_with(
        path: impl AsRef<Path>,
        synchronous: Synchronous,
    ) -> Result<SqliteJournal, JournalError> {
        let path = path.as_ref();
        let connection = Connection::open(path).map_err(unavailable)?;
        let sync = match synchronous {
            Synchronous::Full => "FULL",
            Synchronous::Normal => "NORMAL",
        };
        connection
            .busy_timeout(Duration::from_secs(5))
            .map_err(unavailable)?;
        // `journal_mode` answers with the mode it set: a row to read.
        let mode: String = connection
            .query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))
            .map_err(unavailable)?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(unavailable(format!(
                "SQLite kept journal mode {mode} for {}; WAL is needed",
                path.display()
            )));
        }
        connection
            .execute_batch(&format!("PRAGMA synchronous = {sync}; {SCHEMA};"))
            .map_err(unavailable)?;
        Ok(SqliteJournal {
            connection: Mutex::new(Some(connection)),
            path: path.to_owned(),
        })
    }

    /// Opens the journal at `path` read-only: runs can be inspected
    /// ([`load`](Journal::load)), and every append fails with
    /// [`JournalError::Unavailable`], so a run given it stops before its
    /// first call.
    ///
    /// ```
    /// use typed_tools::durable::SqliteJournal;
    ///
    /// assert!(SqliteJournal::open_read_only("/nonexistent-dir/runs.db").is_err());
    /// ```
    pub fn open_read_only(path: impl AsRef<Path>) -> Result<SqliteJournal, JournalError> {
        let path = path.as_ref();
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let connection = Connection::open_with_flags(path, flags).map_err(unavailable)?;
        connection
            .busy_timeout(Duration::from_secs(5))
            .map_err(unavailable)?;
        Ok(SqliteJournal {
            connection: Mutex::new(Some(connection)),
            path: path.to_owned(),
        })
    }

    /// The file's path.
    ///
    /// ```
    /// # let path = std::env::temp_dir().join(format!("typed-tools-doc-path-{}.db", std::process::id()));
    /// let journal = typed_tools::durable::SqliteJournal::open(&path).unwrap();
    /// assert_eq!(journal.path(), path);
    /// # drop(journal);
    /// # for end in ["", "-wal", "-shm"] { let _ = std::fs::remove_file(format!("{}{end}", path.display())); }
    /// ```
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Closes the connection: every later read and write fails with
    /// [`JournalError::Unavailable`]. What was committed stays in the file.
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::durable::{Journal, JournalError, SqliteJournal};
    ///
    /// # let path = std::env::temp_dir().join(format!("typed-tools-doc-close-{}.db", std::process::id()));
    /// let journal = SqliteJournal::open(&path).unwrap();
    /// journal.close();
    /// assert!(matches!(journal.load("r").await, Err(JournalError::Unavailable { .. })));
    /// # for end in ["", "-wal", "-shm"] { let _ = std::fs::remove_file(format!("{}{end}", path.display())); }
    /// # });
    /// ```
    pub fn close(&self) {
        if let Some(connection) = self.lock().take() {
            // A failed close (statements still open) is dropped as well.
            let _ = connection.close();
        }
    }

    /// The ids of the runs in the journal that have no `finished` record,
    /// in order of id: the runs to resume after a restart.
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::durable::{Input, Journal, Record, SqliteJournal};
    ///
    /// # let path = std::env::temp_dir().join(format!("typed-tools-doc-unfinished-{}.db", std::process::id()));
    /// let journal = SqliteJournal::open(&path).unwrap();
    /// let start = Record::Started { format: 1, at_ms: 0, input: Input::Calls, tools: vec![] };
    /// journal.append("r", 0, &start).await.unwrap();
    /// assert_eq!(journal.unfinished().unwrap(), ["r"]);
    /// # drop(journal);
    /// # for end in ["", "-wal", "-shm"] { let _ = std::fs::remove_file(format!("{}{end}", path.display())); }
    /// # });
    /// ```
    pub fn unfinished(&self) -> Result<Vec<String>, JournalError> {
        self.with(|connection| {
            let mut statement = connection.prepare_cached(
                "SELECT DISTINCT run FROM typed_tools_journal AS j WHERE NOT EXISTS (
                    SELECT 1 FROM typed_tools_journal AS f
                    WHERE f.run = j.run AND f.record LIKE '{\"record\":\"finished\"%'
                ) ORDER BY run",
            )?;
            let runs = statement.query_map([], |row| row.get(0))?;
            runs.collect()
        })
    }

    fn lock(&self) -> MutexGuard<'_, Option<Connection>> {
        // A panic while holding the lock leaves SQLite's own state whole.
        self.connection
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn with<T>(
        &self,
        work: impl FnOnce(&Connection) -> Result<T, rusqlite::Error>,
    ) -> Result<T, JournalError> {
        let guard = self.lock();
        let connection = guard.as_ref().ok_or_else(|| JournalError::Unavailable {
            message: format!("the connection to {} is closed", self.path.display()),
        })?;
        work(connection).map_err(unavailable)
    }

    fn append_now(&self, run: &str, seq: u64, record: &Record) -> Result<(), JournalError> {
        let guard = self.lock();
        let connection = guard.as_ref().ok_or_else(|| JournalError::Unavailable {
            message: format!("the connection to {} is closed", self.path.display()),
        })?;
        let position = i64::try_from(seq).map_err(unavailable)?;
        let text = record.to_json();
        let conflict = || JournalError::Conflict {
            run: run.to_owned(),
            seq,
        };
        let inserted = connection
            .prepare_cached(APPEND)
            .and_then(|mut statement| statement.execute(params![run, position, text]));
        match inserted {
            Ok(1) => Ok(()),
            Ok(_) => Err(conflict()),
            Err(rusqlite::Error::SqliteFailure(error, _))
                if error.code == ErrorCode::ConstraintViolation =>
            {
                Err(conflict())
            }
            Err(error) => Err(unavailable(error)),
        }
    }

    fn load_now(&self, run: &str) -> Result<Vec<Record>, JournalError> {
        let lines = self.with(|connection| {
            let mut statement = connection.prepare_cached(LOAD)?;
            let lines = statement.query_map(params![run], |row| row.get::<_, String>(0))?;
            lines.collect::<Result<Vec<String>, _>>()
        })?;
        read_lines(run, &lines)
    }

    /// The number of records of run `run`.
    ///
    /// ```
    /// # let path = std::env::temp_dir().join(format!("typed-tools-doc-len-{}.db", std::process::id()));
    /// let journal = typed_tools::durable::SqliteJournal::open(&path).unwrap();
    /// assert_eq!(journal.count("r").unwrap(), 0);
    /// # drop(journal);
    /// # for end in ["", "-wal", "-shm"] { let _ = std::fs::remove_file(format!("{}{end}", path.display())); }
    /// ```
    pub fn count(&self, run: &str) -> Result<u64, JournalError> {
        let count: Option<i64> = self.with(|connection| {
            connection
                .query_row(
                    "SELECT COUNT(*) FROM typed_tools_journal WHERE run = ?1",
                    params![run],
                    |row| row.get(0),
                )
                .optional()
        })?;
        Ok(count.and_then(|n| u64::try_from(n).ok()).unwrap_or(0))
    }
}

impl Journal for SqliteJournal {
    fn append<'a>(
        &'a self,
        run: &'a str,
        seq: u64,
        record: &'a Record,
    ) -> BoxFuture<'a, Result<(), JournalError>> {
        Box::pin(future::ready(self.append_now(run, seq, record)))
    }

    fn load<'a>(&'a self, run: &'a str) -> BoxFuture<'a, Result<Vec<Record>, JournalError>> {
        Box::pin(future::ready(self.load_now(run)))
    }
}
