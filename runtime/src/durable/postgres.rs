//! [`PostgresJournal`]: durable runs in a Postgres database shared by a
//! fleet of workers (feature `postgres`).

use std::fmt;
use std::time::Duration;

use futures::channel::oneshot;
use futures::future::BoxFuture;
use tokio_postgres::error::SqlState;
use tokio_postgres::{Client, NoTls};

use super::journal::{read_lines, Journal, JournalError};
use super::record::Record;

/// A [`Journal`] in a Postgres database, and a queue of runs that workers
/// lease: any number of worker processes, on any number of machines, share
/// one database.
///
/// Records live in `typed_tools_journal (run, seq, record)`, keyed by run
/// and position; an append inserts only at the run's next position, in its
/// own transaction (committed, so durable, before the future completes),
/// and a position taken by another worker is [`JournalError::Conflict`]:
/// two workers can never both go on with one run.
///
/// Runs to do live in `typed_tools_runs`: [`submit`](Self::submit) adds
/// one with its input (a plan's text, an agent's task: the worker reads it), [`lease`](Self::lease) gives a
/// worker the oldest pending run no live lease holds (`SELECT ... FOR
/// UPDATE SKIP LOCKED`, so workers never wait on each other), for a time;
/// a worker that dies holds it only until the lease runs out, and another
/// worker then takes the run over and resumes it from its journal.
/// [`renew`](Self::renew) extends a lease for a long run, and
/// [`settle`](Self::settle) ends it with the run's status.
///
/// The client is tokio-postgres; its connection is driven by a thread of
/// its own (a one-thread tokio runtime), so that the journal's futures run
/// on any executor, or none.
///
/// ```no_run
/// # futures::executor::block_on(async {
/// use std::time::Duration;
/// use typed_tools::durable::{Durable, DurableError, PostgresJournal, RunStatus};
/// use typed_tools::plan::{Interpreter, Plan};
/// use typed_tools::{tool, Toolbox};
///
/// /// Charge a card.
/// #[tool(effects = Write)]
/// fn charge_card(card: String, amount: u32) -> String { format!("ch_{card}_{amount}") }
///
/// let toolbox = Toolbox::builder().tool(ChargeCard).build().unwrap();
/// let interpreter = Interpreter::new(&toolbox);
/// let journal = PostgresJournal::connect("postgres://postgres@127.0.0.1:5432/postgres").await.unwrap();
/// journal.submit("order-17", r#"match exec tool charge_card {card = "4242", amount = 20} { Ok(c) => c, Err(e) => e.message }"#).await.unwrap();
///
/// // A worker: take a run, run (or resume) it, settle it.
/// let durable = Durable::new(journal);
/// while let Some(lease) = durable.journal().lease("worker-1", Duration::from_secs(30)).await.unwrap() {
///     let plan = Plan::parse(&lease.input).unwrap();
///     let status = match durable.run_plan(&interpreter, &lease.run, &plan).await {
///         Ok(_) => RunStatus::Finished,
///         // The store failed: give it back for another try, up to 5.
///         Err(DurableError::Journal { .. }) if lease.attempt < 5 => RunStatus::Pending,
///         // A call in doubt, or too many tries: for a person.
///         Err(_) => RunStatus::Stopped,
///     };
///     durable.journal().settle(&lease.run, "worker-1", status).await.unwrap();
/// }
/// # });
/// ```
pub struct PostgresJournal {
    client: Client,
}

impl fmt::Debug for PostgresJournal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PostgresJournal")
            .field("closed", &self.client.is_closed())
            .finish_non_exhaustive()
    }
}

/// A run a worker leased: see [`PostgresJournal::lease`].
///
/// ```
/// use typed_tools::durable::Lease;
///
/// let lease = Lease { run: "order-17".into(), input: "1 + 1".into(), attempt: 1 };
/// assert_eq!(lease.attempt, 1);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lease {
    /// The run's id.
    pub run: String,
    /// Its input, as [`submit`](PostgresJournal::submit)ted.
    pub input: String,
    /// How many times it was leased, this time included.
    pub attempt: u32,
}

/// How a leased run ended, for [`PostgresJournal::settle`].
///
/// ```
/// use typed_tools::durable::RunStatus;
///
/// assert_eq!(RunStatus::Finished.as_str(), "finished");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RunStatus {
    /// It reached its end: no worker takes it again.
    Finished,
    /// It stopped for a person (a call in doubt) or a failure: no worker
    /// takes it until it is [`requeue`](PostgresJournal::requeue)d.
    Stopped,
    /// Give it back now, for any worker (this one is shutting down).
    Pending,
}

impl RunStatus {
    /// The status as stored.
    ///
    /// ```
    /// use typed_tools::durable::RunStatus;
    ///
    /// assert_eq!(RunStatus::Stopped.as_str(), "stopped");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Finished => "finished",
            RunStatus::Stopped => "stopped",
            RunStatus::Pending => "pending",
        }
    }
}

const SCHEMA: &str = "BEGIN;
SELECT pg_advisory_xact_lock(7402951);
CREATE TABLE IF NOT EXISTS typed_tools_journal (
    run TEXT NOT NULL,
    seq BIGINT NOT NULL,
    record TEXT NOT NULL,
    PRIMARY KEY (run, seq)
);
CREATE TABLE IF NOT EXISTS typed_tools_runs (
    run TEXT PRIMARY KEY,
    input TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'pending',
    owner TEXT,
    lease_until TIMESTAMPTZ,
    attempts INTEGER NOT NULL DEFAULT 0,
    submitted TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp()
);
COMMIT;";

const APPEND: &str = "INSERT INTO typed_tools_journal (run, seq, record)
    SELECT $1, $2, $3
    WHERE (SELECT COALESCE(MAX(seq) + 1, 0) FROM typed_tools_journal WHERE run = $1) = $2";

const LEASE: &str = "UPDATE typed_tools_runs
    SET owner = $1, lease_until = now() + make_interval(secs => $2), attempts = attempts + 1
    WHERE run = (
        SELECT run FROM typed_tools_runs
        WHERE status = 'pending' AND (lease_until IS NULL OR lease_until < now())
        ORDER BY submitted, run
        LIMIT 1
        FOR UPDATE SKIP LOCKED
    )
    RETURNING run, input, attempts";

fn unavailable(error: impl fmt::Display) -> JournalError {
    JournalError::Unavailable {
        message: error.to_string(),
    }
}

impl PostgresJournal {
    /// Connects to the database at `url` (`postgres://user@host:port/db`,
    /// or the key-value form), without TLS, and makes the tables if they
    /// are missing.
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::durable::PostgresJournal;
    ///
    /// // Nothing listens on port 1: a typed error, no panic.
    /// assert!(PostgresJournal::connect("postgres://postgres@127.0.0.1:1/postgres").await.is_err());
    /// assert!(PostgresJournal::connect("not a url ::").await.is_err());
    /// # });
    /// ```
    pub async fn connect(url: &str) -> Result<PostgresJournal, JournalError> {
        let (send, receive) = oneshot::channel();
        let url = url.to_owned();
        std::thread::Builder::new()
            .name("typed-tools-postgres".into())
            .spawn(move || {
                let runtime = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(runtime) => runtime,
                    Err(error) => {
                        let _ = send.send(Err(unavailable(error)));
                        return;
                    }
                };
                runtime.block_on(async move {
                    match tokio_postgres::connect(&url, NoTls).await {
                        Ok((client, connection)) => {
                            let _ = send.send(Ok(client));
                            // Until the client is dropped or the server goes.
                            let _ = connection.await;
                        }
                        Err(error) => {
                            let _ = send.send(Err(unavailable(error)));
                        }
                    }
                });
            })
            .map_err(unavailable)?;
        let client = receive
            .await
            .map_err(|_| unavailable("the connection thread ended"))??;
        client.batch_execute(SCHEMA).await.map_err(unavailable)?;
        Ok(PostgresJournal { client })
    }

    /// Adds run `run` to the queue with its `input` (a plan's text).
    /// `false` when a run with this id was submitted already (nothing
    /// changes).
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use std::time::Duration;
    /// use typed_tools::durable::{PostgresJournal, RunStatus};
    ///
    /// let journal = PostgresJournal::connect("postgres://postgres@127.0.0.1:5432/postgres").await.unwrap();
    /// assert!(journal.submit("order-17", "1 + 1").await.unwrap());
    /// assert!(!journal.submit("order-17", "1 + 1").await.unwrap()); // already there
    /// # });
    /// ```
    pub async fn submit(&self, run: &str, input: &str) -> Result<bool, JournalError> {
        let added = self
            .client
            .execute(
                "INSERT INTO typed_tools_runs (run, input) VALUES ($1, $2) ON CONFLICT DO NOTHING",
                &[&run, &input],
            )
            .await
            .map_err(unavailable)?;
        Ok(added == 1)
    }

    /// Leases the oldest pending run that no live lease holds to `worker`
    /// for `lease`; `None` when there is none now. The worker should
    /// [`renew`](Self::renew) the lease before it runs out if the run may
    /// take longer, and [`settle`](Self::settle) it at the end.
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use std::time::Duration;
    /// use typed_tools::durable::{PostgresJournal, RunStatus};
    ///
    /// let journal = PostgresJournal::connect("postgres://postgres@127.0.0.1:5432/postgres").await.unwrap();
    /// if let Some(lease) = journal.lease("worker-1", Duration::from_secs(30)).await.unwrap() {
    ///     println!("run {} (attempt {}): {}", lease.run, lease.attempt, lease.input);
    ///     journal.settle(&lease.run, "worker-1", RunStatus::Finished).await.unwrap();
    /// }
    /// # });
    /// ```
    pub async fn lease(
        &self,
        worker: &str,
        lease: Duration,
    ) -> Result<Option<Lease>, JournalError> {
        let row = self
            .client
            .query_opt(LEASE, &[&worker, &lease.as_secs_f64()])
            .await
            .map_err(unavailable)?;
        Ok(row.map(|row| Lease {
            run: row.get(0),
            input: row.get(1),
            attempt: u32::try_from(row.get::<_, i32>(2)).unwrap_or(0),
        }))
    }

    /// Extends `worker`'s lease of run `run` by `lease` from now; `false`
    /// when the worker no longer holds it (it ran out and another worker
    /// took the run: stop working on it).
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use std::time::Duration;
    /// use typed_tools::durable::{PostgresJournal, RunStatus};
    ///
    /// let journal = PostgresJournal::connect("postgres://postgres@127.0.0.1:5432/postgres").await.unwrap();
    /// if !journal.renew("order-17", "worker-1", Duration::from_secs(30)).await.unwrap() {
    ///     println!("another worker has order-17 now");
    /// }
    /// # });
    /// ```
    pub async fn renew(
        &self,
        run: &str,
        worker: &str,
        lease: Duration,
    ) -> Result<bool, JournalError> {
        let renewed = self
            .client
            .execute(
                "UPDATE typed_tools_runs SET lease_until = now() + make_interval(secs => $3)
                 WHERE run = $1 AND owner = $2 AND status = 'pending'",
                &[&run, &worker, &lease.as_secs_f64()],
            )
            .await
            .map_err(unavailable)?;
        Ok(renewed == 1)
    }

    /// Ends `worker`'s lease of run `run` with `status`; `false` when the
    /// worker no longer held it.
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use std::time::Duration;
    /// use typed_tools::durable::{PostgresJournal, RunStatus};
    ///
    /// let journal = PostgresJournal::connect("postgres://postgres@127.0.0.1:5432/postgres").await.unwrap();
    /// journal.settle("order-17", "worker-1", RunStatus::Stopped).await.unwrap();
    /// # });
    /// ```
    pub async fn settle(
        &self,
        run: &str,
        worker: &str,
        status: RunStatus,
    ) -> Result<bool, JournalError> {
        let settled = self
            .client
            .execute(
                "UPDATE typed_tools_runs SET status = $3, owner = NULL, lease_until = NULL
                 WHERE run = $1 AND owner = $2",
                &[&run, &worker, &status.as_str()],
            )
            .await
            .map_err(unavailable)?;
        Ok(settled == 1)
    }

    /// Puts a stopped run back in the queue (after a person resolved its
    /// call in doubt); `false` when there is no such run.
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use std::time::Duration;
    /// use typed_tools::durable::{PostgresJournal, RunStatus};
    ///
    /// let journal = PostgresJournal::connect("postgres://postgres@127.0.0.1:5432/postgres").await.unwrap();
    /// for run in journal.runs(RunStatus::Stopped).await.unwrap() {
    ///     // ... resolve its call in doubt with `Durable::resolve`, then:
    ///     journal.requeue(&run).await.unwrap();
    /// }
    /// # });
    /// ```
    pub async fn requeue(&self, run: &str) -> Result<bool, JournalError> {
        let requeued = self
            .client
            .execute(
                "UPDATE typed_tools_runs SET status = 'pending', owner = NULL, lease_until = NULL
                 WHERE run = $1",
                &[&run],
            )
            .await
            .map_err(unavailable)?;
        Ok(requeued == 1)
    }

    /// The ids of the runs with `status`, in order of id.
    ///
    /// ```no_run
    /// # futures::executor::block_on(async {
    /// use std::time::Duration;
    /// use typed_tools::durable::{PostgresJournal, RunStatus};
    ///
    /// let journal = PostgresJournal::connect("postgres://postgres@127.0.0.1:5432/postgres").await.unwrap();
    /// let left = journal.runs(RunStatus::Pending).await.unwrap();
    /// println!("{} runs to do", left.len());
    /// # });
    /// ```
    pub async fn runs(&self, status: RunStatus) -> Result<Vec<String>, JournalError> {
        let rows = self
            .client
            .query(
                "SELECT run FROM typed_tools_runs WHERE status = $1 ORDER BY run",
                &[&status.as_str()],
            )
            .await
            .map_err(unavailable)?;
        Ok(rows.iter().map(|row| row.get(0)).collect())
    }

    async fn append_now(&self, run: &str, seq: u64, record: &Record) -> Result<(), JournalError> {
        let position = i64::try_from(seq).map_err(unavailable)?;
        let text = record.to_json();
        let conflict = || JournalError::Conflict {
            run: run.to_owned(),
            seq,
        };
        match self.client.execute(APPEND, &[&run, &position, &text]).await {
            Ok(1) => Ok(()),
            Ok(_) => Err(conflict()),
            Err(error) if error.code() == Some(&SqlState::UNIQUE_VIOLATION) => Err(conflict()),
            Err(error) => Err(unavailable(error)),
        }
    }

    async fn load_now(&self, run: &str) -> Result<Vec<Record>, JournalError> {
        let rows = self
            .client
            .query(
                "SELECT record FROM typed_tools_journal WHERE run = $1 ORDER BY seq",
                &[&run],
            )
            .await
            .map_err(unavailable)?;
        let lines: Vec<String> = rows.iter().map(|row| row.get(0)).collect();
        read_lines(run, &lines)
    }
}

impl Journal for PostgresJournal {
    fn append<'a>(
        &'a self,
        run: &'a str,
        seq: u64,
        record: &'a Record,
    ) -> BoxFuture<'a, Result<(), JournalError>> {
        Box::pin(self.append_now(run, seq, record))
    }

    fn load<'a>(&'a self, run: &'a str) -> BoxFuture<'a, Result<Vec<Record>, JournalError>> {
        Box::pin(self.load_now(run))
    }
}
