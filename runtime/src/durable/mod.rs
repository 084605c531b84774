//! Durable runs: a crash loses no progress and never repeats a write.
//!
//! An agent run ([`Durable::run_agent`]), a plan run
//! ([`Durable::run_plan`]), or a sequence of toolbox calls made under a run
//! id ([`Durable::calls`]) can be given a [`Journal`] and a run id. As it
//! goes, the journal records, in order and durably: the run's inputs and
//! the tools it may use (each with a [`schema_stamp`]), each answer of the
//! model before anything acts on it, each call's arguments *before* it
//! runs, its result *after*, and the run's end (the [format](record) is
//! versioned and documented).
//!
//! Running again with the same run id, in the same process or another,
//! **resumes**: each recorded answer and result is replayed (the model is
//! not asked again, the tool does not run again), and the run goes on from
//! the first answer or call without one. A resumed run's outcome and trace
//! (a plan's), or its exit, transcript and tokens (an agent's), are those
//! of an uninterrupted run. A request to the model the crash cut off is
//! asked again: a model's answer changes nothing in the world until a call
//! runs, and every call is journaled.
//!
//! The journal is a trait: [`MemoryJournal`] for tests, `SqliteJournal`
//! (feature `sqlite`) for one process and a file, `PostgresJournal`
//! (feature `postgres`) for a fleet of workers that lease runs from one
//! database. Another engine implements [`Journal`]'s two methods.
//!
//! A call whose start was recorded but not its result (the process died
//! during it) is **in doubt**. What happens to it follows from the tool's
//! declared effects:
//!
//! - a tool that neither writes nor reaches the open world (`Pure`,
//!   `Read`) is run again;
//! - a `Write` or `Network` tool marked `idempotent` is run again;
//! - any other is **not** run again: the run stops with
//!   [`DurableError::InDoubt`], naming the tool, its arguments and when it
//!   started. A person (or a program) decides with
//!   [`Durable::resolve`] — the call took effect with this output, it
//!   failed, or retry it — and the next resume goes on from there. Nothing
//!   is ever repeated silently.
//!
//! A call an approval asks about is recorded as approved, after its
//! approvals approved and before it runs: one started and not approved
//! (the process died while it waited) did not run, and is asked about
//! again on resume, not left in doubt.
//!
//! A journal that cannot record a call's start stops the run before the
//! call ([`DurableError::Journal`]): a call never runs unrecorded (nor one
//! whose approval could not be recorded). One that
//! cannot record a result stops the run after the call, which is then in
//! doubt on resume. A run resumed against a toolbox whose tool has changed
//! its schemas, effects or idempotence, or lost a tool, stops before
//! anything runs ([`DurableError::ToolChanged`]).
//!
//! ```
//! # futures::executor::block_on(async {
//! use typed_tools::durable::{Durable, DurableError, MemoryJournal, Resolution, Source};
//! use typed_tools::plan::{Interpreter, Plan, Value};
//! use typed_tools::{tool, Toolbox};
//!
//! /// Charge a card.
//! #[tool(effects = Write)]
//! fn charge_card(card: String, amount: u32) -> String { format!("ch_{card}_{amount}") }
//!
//! let toolbox = Toolbox::builder().tool(ChargeCard).build().unwrap();
//! let interpreter = Interpreter::new(&toolbox);
//! let plan = Plan::parse(r#"match exec tool charge_card {card = "4242", amount = 20} {
//!   Ok(charge) => charge,
//!   Err(e) => e.message
//! }"#).unwrap();
//! let durable = Durable::new(MemoryJournal::new());
//! let first = durable.run_plan(&interpreter, "order-17", &plan).await.unwrap();
//! assert_eq!(first.run.outcome, Ok(Value::String("ch_4242_20".into())));
//! assert_eq!(first.sources, [Source::Ran]);
//!
//! // Run again with the same id: the charge is replayed, not made again.
//! let again = durable.run_plan(&interpreter, "order-17", &plan).await.unwrap();
//! assert_eq!(again.run, first.run);
//! assert_eq!(again.sources, [Source::Replayed]);
//! # });
//! ```

use std::borrow::Cow;
use std::fmt;

use futures::future::BoxFuture;
use serde_json::Value as Json;

use crate::agent::{self, Agent};
use crate::effect::Effects;
use crate::error::ToolError;
use crate::model::{Model, Response};
use crate::plan::{Interpreter, Plan, PlanError, Run};
use crate::toolbox::{
    AgentWithoutContext, ApprovalNote, PlanWithoutContext, Takes, ToolboxContext,
};

use crate::toolbox::{ToolOutput, Toolbox};
use session::{Session, State};

mod journal;
#[cfg(feature = "postgres")]
mod postgres;
pub mod record;
mod session;
#[cfg(feature = "sqlite")]
mod sqlite;

pub use journal::{Journal, JournalError, MemoryJournal};
#[cfg(feature = "postgres")]
pub use postgres::{Lease, PostgresJournal, RunStatus};
pub use record::{
    schema_stamp, Input, Record, RecordedError, RecordedResponse, RecordedResult, Resolution,
    ToolStamp, FORMAT_VERSION,
};
#[cfg(feature = "sqlite")]
pub use sqlite::{SqliteJournal, Synchronous};

/// The longest run id accepted, in bytes.
///
/// ```
/// assert_eq!(typed_tools::durable::MAX_RUN_ID_BYTES, 256);
/// ```
pub const MAX_RUN_ID_BYTES: usize = 256;

/// What a durable run's journal says about a call, before it is made.
pub(crate) enum Before {
    /// Run it: its start is recorded, as this call number.
    Run(u64),
    /// Do not run it: this is its result.
    Replay(Result<ToolOutput, ToolError>),
    /// Stop the run: the typed reason is kept by the journal's session.
    Stop(String),
}

/// A journal's view of one run's calls, asked by the plan interpreter
/// about each call before it is made, told when its approvals approved it
/// (`gated`: an approval asks about it), and told its result after.
pub(crate) trait CallHook: ApprovalNote {
    fn before<'a>(&'a self, tool: &'a str, args: &'a str, gated: bool) -> BoxFuture<'a, Before>;
    /// Records the result of call number `call` (from [`Before::Run`]):
    /// calls run at once are told in any order.
    fn after<'a>(
        &'a self,
        call: u64,
        tool: &'a str,
        result: &'a Result<ToolOutput, ToolError>,
    ) -> BoxFuture<'a, Result<(), String>>;
}

/// What a durable agent run's journal says about the model's next answer.
pub(crate) enum Asked {
    /// Ask the model, then record its answer.
    Ask,
    /// Do not ask: this is the answer it gave.
    Replay(Response),
    /// Stop the run: the typed reason is kept by the journal's session.
    Stop(String),
}

/// A journal's view of an agent run: its calls (a plan's included), and
/// the model's answers, asked for before each request and told each answer.
pub(crate) trait AnswerHook: CallHook {
    fn answer(&self) -> Asked;
    fn answered<'a>(
        &'a self,
        step: u32,
        response: &'a Response,
    ) -> BoxFuture<'a, Result<(), String>>;
}

/// Runs plans and toolbox calls durably over a [`Journal`]; see the
/// [module docs](self).
///
/// ```
/// use typed_tools::durable::{Durable, MemoryJournal};
///
/// let durable = Durable::new(MemoryJournal::new());
/// assert!(durable.journal().lines("run-1").is_empty());
/// ```
#[derive(Debug)]
pub struct Durable<J> {
    journal: J,
}

/// Where each call of a durable run's result came from, in call order.
///
/// ```
/// use typed_tools::durable::Source;
///
/// assert_eq!(Source::Replayed.to_string(), "replayed");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Source {
    /// The call ran, for the first time.
    Ran,
    /// The call was in doubt and ran again: a `Pure` or `Read` tool, an
    /// idempotent one, or one a person allowed to retry.
    Rerun,
    /// The result was recorded: the call did not run.
    Replayed,
    /// The call was in doubt and a person gave its result: it did not run.
    Resolved,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Source::Ran => "ran",
            Source::Rerun => "ran again",
            Source::Replayed => "replayed",
            Source::Resolved => "resolved",
        })
    }
}

/// A durable plan run that reached its end: the run, as an uninterrupted
/// one would be, and where each call's result came from.
///
/// ```
/// # futures::executor::block_on(async {
/// use typed_tools::durable::{Durable, MemoryJournal, Source};
/// use typed_tools::plan::{Interpreter, Plan};
/// use typed_tools::{tool, Toolbox};
///
/// /// Get one note by its id.
/// #[tool(effects = Read)]
/// fn get_note(id: u32) -> String { format!("note {id}") }
///
/// let toolbox = Toolbox::builder().tool(GetNote).build().unwrap();
/// let plan = Plan::parse("match exec tool get_note {id = 7} { Ok(text) => text, Err(e) => e.message }").unwrap();
/// let durable = Durable::new(MemoryJournal::new());
/// let done = durable.run_plan(&Interpreter::new(&toolbox), "r", &plan).await.unwrap();
/// assert_eq!((done.ran(), done.replayed()), (1, 0));
/// # });
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct DurableRun {
    /// The run: its outcome and trace.
    pub run: Run,
    /// Where each call's result came from, in the trace's order.
    pub sources: Vec<Source>,
}

impl DurableRun {
    /// How many calls ran in this process (for the first time or again).
    ///
    /// ```
    /// use typed_tools::durable::{DurableRun, Source};
    /// use typed_tools::plan::{Run, Value};
    ///
    /// let done = DurableRun {
    ///     run: Run { outcome: Ok(Value::Unit), trace: vec![] },
    ///     sources: vec![Source::Replayed, Source::Rerun, Source::Ran],
    /// };
    /// assert_eq!(done.ran(), 2);
    /// ```
    pub fn ran(&self) -> usize {
        ran(&self.sources)
    }

    /// How many calls were replayed from the journal or resolved by a person.
    ///
    /// ```
    /// use typed_tools::durable::{DurableRun, Source};
    /// use typed_tools::plan::{Run, Value};
    ///
    /// let done = DurableRun {
    ///     run: Run { outcome: Ok(Value::Unit), trace: vec![] },
    ///     sources: vec![Source::Replayed, Source::Resolved, Source::Ran],
    /// };
    /// assert_eq!(done.replayed(), 2);
    /// ```
    pub fn replayed(&self) -> usize {
        self.sources.len() - self.ran()
    }
}

/// A durable agent run that ended: the run, as an uninterrupted one would
/// be, where each call's result came from, and how many of the model's
/// answers were replayed rather than asked for.
///
/// ```
/// # futures::executor::block_on(async {
/// use typed_tools::agent::Agent;
/// use typed_tools::durable::{Durable, MemoryJournal};
/// use typed_tools::model::ScriptedModel;
/// use typed_tools::Toolbox;
///
/// let toolbox = Toolbox::builder().build().unwrap();
/// let agent = Agent::new(&toolbox, ScriptedModel::by_turn(["Hello."]));
/// let done = Durable::new(MemoryJournal::new()).run_agent(&agent, "r", "Hi.").await.unwrap();
/// assert_eq!((done.answers_asked, done.answers_replayed, done.ran()), (1, 0, 0));
/// # });
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct DurableAgentRun<O = String> {
    /// The run: its exit, output, transcript and records.
    pub run: agent::Run<O>,
    /// Where each call's result came from, in the order the calls were
    /// made (a plan's calls included).
    pub sources: Vec<Source>,
    /// The model's answers replayed from the journal.
    pub answers_replayed: usize,
    /// The model's answers asked for in this process.
    pub answers_asked: usize,
}

impl<O> DurableAgentRun<O> {
    /// How many calls ran in this process (for the first time or again).
    pub fn ran(&self) -> usize {
        ran(&self.sources)
    }

    /// How many calls were replayed from the journal or resolved by a person.
    pub fn replayed(&self) -> usize {
        self.sources.len() - self.ran()
    }
}

/// How many of `sources` ran in this process.
fn ran(sources: &[Source]) -> usize {
    sources
        .iter()
        .filter(|s| matches!(s, Source::Ran | Source::Rerun))
        .count()
}

/// A call that started and has no result: the process died during it, and
/// its tool may not be run again without a decision.
///
/// ```
/// use typed_tools::durable::InDoubt;
///
/// let call = InDoubt {
///     run: "order-17".into(),
///     call: 0,
///     tool: "charge_card".into(),
///     args: serde_json::json!({"card": "4242", "amount": 20}),
///     started_at_ms: 1_764_275_172_123,
/// };
/// assert_eq!(
///     call.to_string(),
///     r#"in doubt: `charge_card` {"card":"4242","amount":20} started at 2025-11-27T20:26:12.123Z and has no result (run `order-17`, call 0); resolve it: mark it done with its result, failed, or allow a retry"#
/// );
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct InDoubt {
    /// The run.
    pub run: String,
    /// The call's number in the run, from 0.
    pub call: u64,
    /// The tool.
    pub tool: String,
    /// The arguments it was given.
    pub args: Json,
    /// When it started, in milliseconds since the Unix epoch.
    pub started_at_ms: u64,
}

impl fmt::Display for InDoubt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "in doubt: `{}` {} started at {} and has no result (run `{}`, call {}); \
             resolve it: mark it done with its result, failed, or allow a retry",
            self.tool,
            crate::cut::cut(&crate::json::to_text(&self.args), 400),
            record::utc(self.started_at_ms),
            self.run,
            self.call
        )
    }
}

/// What the journal was doing when it failed.
///
/// ```
/// use typed_tools::durable::Stage;
///
/// let stage = Stage::CallStart { call: 3, tool: "charge_card".into() };
/// assert_eq!(stage.to_string(), "recording the start of call 3 (`charge_card`); the call did not run");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Stage {
    /// Reading the run's journal; nothing ran.
    Load,
    /// Recording the run's start; nothing ran.
    Start,
    /// Recording the model's answer to a step of an agent run; nothing
    /// acted on it, and a resume asks the model again.
    Answer {
        /// The step, from 1.
        step: u32,
    },
    /// Recording that a call's approvals approved it; the call did not
    /// run, and a resume asks them again.
    Approval {
        /// The call's number.
        call: u64,
        /// The tool.
        tool: String,
    },
    /// Recording a call's start; the call did not run.
    CallStart {
        /// The call's number.
        call: u64,
        /// The tool.
        tool: String,
    },
    /// Recording a call's result; the call ran, and a resume finds it in doubt.
    CallResult {
        /// The call's number.
        call: u64,
        /// The tool.
        tool: String,
    },
    /// Recording a decision on a call in doubt; nothing was recorded.
    Resolve,
    /// Recording the run's end; every call is recorded, and a resume
    /// replays them all.
    Finish,
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Stage::Load => f.write_str("reading the run's journal; nothing ran"),
            Stage::Start => f.write_str("recording the run's start; nothing ran"),
            Stage::Answer { step } => write!(
                f,
                "recording the model's answer to step {step}; nothing acted on it, and a resume asks again"
            ),
            Stage::Approval { call, tool } => write!(
                f,
                "recording the approval of call {call} (`{tool}`); the call did not run, and a resume asks again"
            ),
            Stage::CallStart { call, tool } => write!(
                f,
                "recording the start of call {call} (`{tool}`); the call did not run"
            ),
            Stage::CallResult { call, tool } => write!(
                f,
                "recording the result of call {call} (`{tool}`); the call ran, and a resume will find it in doubt"
            ),
            Stage::Resolve => f.write_str("recording a decision; nothing was recorded"),
            Stage::Finish => f.write_str(
                "recording the run's end; every call is recorded, and a resume replays them",
            ),
        }
    }
}

/// Why a durable run stopped, or was not started.
///
/// ```
/// use typed_tools::durable::{DurableError, JournalError, Stage};
///
/// let error = DurableError::Journal {
///     run: "order-17".into(),
///     stage: Stage::CallStart { call: 0, tool: "charge_card".into() },
///     error: JournalError::Unavailable { message: "disk full".into() },
/// };
/// assert_eq!(
///     error.to_string(),
///     "run `order-17` stopped: the journal failed recording the start of call 0 (`charge_card`); \
///      the call did not run: the journal's store is unavailable: disk full"
/// );
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum DurableError {
    /// The journal failed; [`Stage`] says what ran.
    Journal {
        /// The run.
        run: String,
        /// What the journal was recording.
        stage: Stage,
        /// The store's error.
        error: JournalError,
    },
    /// A call is in doubt: resolve it with [`Durable::resolve`], then resume.
    InDoubt(Box<InDoubt>),
    /// A tool the run used has changed (its schemas, effects or
    /// idempotence), or is gone: the recorded results may not fit it.
    ToolChanged {
        /// The run.
        run: String,
        /// The tool.
        tool: String,
        /// Its stamp as recorded.
        recorded: String,
        /// Its stamp now, or `None` when the toolbox no longer has it.
        current: Option<String>,
    },
    /// The run asks for a call other than the one the journal recorded at
    /// its place: it is not the run that was journaled (another plan, or
    /// tools whose outputs the plan depends on behave differently).
    Diverged {
        /// The run.
        run: String,
        /// The call's number.
        call: u64,
        /// The recorded call: tool and arguments.
        recorded: String,
        /// The call the run asks for.
        found: String,
    },
    /// The run id names a run started with other inputs (another plan).
    InputChanged {
        /// The run.
        run: String,
    },
    /// The plan was refused by its check; nothing ran or was recorded.
    Plan(PlanError),
    /// There is no run with this id to resume.
    NotFound {
        /// The run.
        run: String,
    },
    /// [`Durable::resolve`] found no call in doubt.
    NothingInDoubt {
        /// The run.
        run: String,
    },
    /// The run id is empty, longer than [`MAX_RUN_ID_BYTES`], or holds a
    /// control character.
    BadRunId {
        /// The id, cut to a readable length.
        run: String,
    },
    /// The journal holds records this version cannot use: a newer format,
    /// or records out of order.
    Unreadable {
        /// The run.
        run: String,
        /// What is wrong.
        message: String,
    },
}

impl fmt::Display for DurableError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DurableError::Journal { run, stage, error } => {
                write!(f, "run `{run}` stopped: the journal failed {stage}: {error}")
            }
            DurableError::InDoubt(call) => call.fmt(f),
            DurableError::ToolChanged {
                run,
                tool,
                recorded,
                current: Some(current),
            } => write!(
                f,
                "run `{run}` cannot resume: tool `{tool}` has changed since the run was recorded \
                 (schema stamp {recorded}, now {current}); its recorded calls may not fit it"
            ),
            DurableError::ToolChanged {
                run,
                tool,
                current: None,
                ..
            } => write!(
                f,
                "run `{run}` cannot resume: tool `{tool}`, which the run used, is not in the toolbox"
            ),
            DurableError::Diverged {
                run,
                call,
                recorded,
                found,
            } => write!(
                f,
                "run `{run}` cannot resume: call {call} was recorded as {recorded}, and the run now asks for {found}"
            ),
            DurableError::InputChanged { run } => write!(
                f,
                "run `{run}` was started with another plan; use a new run id for this one"
            ),
            DurableError::Plan(error) => error.fmt(f),
            DurableError::NotFound { run } => write!(f, "there is no run `{run}` to resume"),
            DurableError::NothingInDoubt { run } => {
                write!(f, "run `{run}` has no call in doubt to resolve")
            }
            DurableError::BadRunId { run } => write!(
                f,
                "bad run id {run:?}: give 1 to {MAX_RUN_ID_BYTES} bytes without control characters"
            ),
            DurableError::Unreadable { run, message } => {
                write!(f, "the journal of run `{run}` cannot be used: {message}")
            }
        }
    }
}

impl std::error::Error for DurableError {}

impl<J: Journal> Durable<J> {
    /// Durable runs recorded in `journal`.
    ///
    /// ```
    /// use typed_tools::durable::{Durable, MemoryJournal};
    ///
    /// let durable = Durable::new(MemoryJournal::new());
    /// # let _ = durable;
    /// ```
    pub fn new(journal: J) -> Durable<J> {
        Durable { journal }
    }

    /// The journal.
    ///
    /// ```
    /// use typed_tools::durable::{Durable, MemoryJournal};
    ///
    /// let durable = Durable::new(MemoryJournal::new());
    /// assert!(durable.journal().lines("r").is_empty());
    /// ```
    pub fn journal(&self) -> &J {
        &self.journal
    }

    /// Runs `plan` as run `run`, or resumes it if the journal has it.
    ///
    /// The plan is checked first (a refused plan records nothing). A run
    /// the journal has must have been started with the same plan
    /// ([`DurableError::InputChanged`] if not), and with the same tools
    /// ([`DurableError::ToolChanged`]). `Ok` when the plan reached its end;
    /// its outcome may still be a run-time error of the plan itself, in
    /// [`Run::outcome`], as [`Interpreter::run`] gives it.
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::durable::{Durable, DurableError, MemoryJournal, Resolution, Source};
    /// use typed_tools::plan::{Interpreter, Plan, Value};
    /// use typed_tools::{tool, Toolbox};
    ///
    /// /// Send an email.
    /// #[tool(effects = Write)]
    /// fn send_email(to: String) -> String { format!("sent to {to}") }
    ///
    /// let toolbox = Toolbox::builder().tool(SendEmail).build().unwrap();
    /// let interpreter = Interpreter::new(&toolbox);
    /// let plan = Plan::parse(r#"match exec tool send_email {to = "ana"} { Ok(s) => s, Err(e) => e.message }"#).unwrap();
    /// let durable = Durable::new(MemoryJournal::new());
    /// // Another plan under a used id is refused.
    /// durable.run_plan(&interpreter, "mail-1", &plan).await.unwrap();
    /// let other = Plan::parse("1 + 1").unwrap();
    /// assert!(matches!(
    ///     durable.run_plan(&interpreter, "mail-1", &other).await,
    ///     Err(DurableError::InputChanged { .. })
    /// ));
    /// # });
    /// ```
    ///
    /// (`run_plan`, `resume_plan`, `run_agent` and `resume_agent` give a
    /// boxed future, not an `async fn`'s, so that a missing context is
    /// reported once.)
    pub fn run_plan<'a, A: Effects, C: ToolboxContext>(
        &'a self,
        interpreter: &'a Interpreter<'_, A, C>,
        run: &'a str,
        plan: &'a Plan,
    ) -> BoxFuture<'a, Result<DurableRun, DurableError>>
    where
        C::Value: PlanWithoutContext,
    {
        let context = <C::Value as PlanWithoutContext>::nothing();
        Box::pin(self.plan_run(interpreter, context, run, plan))
    }

    /// [`run_plan`](Self::run_plan), each call lent `context`: for a
    /// toolbox whose tools take a [context](crate::toolbox::context). The
    /// context is not recorded; give the one the run was started with.
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::durable::{Durable, MemoryJournal, Source};
    /// use typed_tools::plan::{Interpreter, Plan, Value};
    /// use typed_tools::{tool, Toolbox};
    ///
    /// /// Who is asking.
    /// struct User { name: String }
    ///
    /// /// Delete one of the user's notes.
    /// #[tool(effects = Write)]
    /// fn delete_note(#[context] user: &User, id: u32) -> String { format!("{} deleted {id}", user.name) }
    ///
    /// let toolbox = Toolbox::builder().context::<User>().tool(DeleteNote).build().unwrap();
    /// let interpreter = Interpreter::new(&toolbox);
    /// let plan = Plan::parse("match exec tool delete_note {id = 7} { Ok(s) => s, Err(e) => e.message }").unwrap();
    /// let durable = Durable::new(MemoryJournal::new());
    /// let ana = User { name: "ana".into() };
    /// let done = durable.run_plan_in(&interpreter, &ana, "d-7", &plan).await.unwrap();
    /// assert_eq!(done.run.outcome, Ok(Value::String("ana deleted 7".into())));
    /// let again = durable.resume_plan_in(&interpreter, &ana, "d-7").await.unwrap();
    /// assert_eq!(again.sources, [Source::Replayed]);
    /// # });
    /// ```
    pub async fn run_plan_in<A: Effects, C: ToolboxContext + Takes<X>, X>(
        &self,
        interpreter: &Interpreter<'_, A, C>,
        context: &X,
        run: &str,
        plan: &Plan,
    ) -> Result<DurableRun, DurableError> {
        self.plan_run(interpreter, C::value(context), run, plan)
            .await
    }

    /// A plan run, each call lent `context`.
    async fn plan_run<A: Effects, C: ToolboxContext>(
        &self,
        interpreter: &Interpreter<'_, A, C>,
        context: &C::Value,
        run: &str,
        plan: &Plan,
    ) -> Result<DurableRun, DurableError> {
        check_run_id(run)?;
        let prepared = interpreter.prepare(plan).map_err(DurableError::Plan)?;
        let toolbox = interpreter.toolbox();
        let tools = prepared
            .preview()
            .calls
            .iter()
            .filter_map(|planned| {
                Some(record::ToolStamp {
                    name: planned.tool.clone(),
                    schema: schema_stamp(toolbox.spec(&planned.tool)?),
                })
            })
            .collect();
        let input = Input::Plan {
            text: plan.to_string(),
        };
        let session = Session::open(&self.journal, toolbox, run, input, tools).await?;
        let done = prepared.run_hooked(context, Some(&session)).await;
        let outcome = match &done.outcome {
            Ok(value) => serde_json::json!({"ok": value.to_json()}),
            Err(error) => serde_json::json!({"err": error.to_string()}),
        };
        let sources = session.finish(outcome).await?;
        Ok(DurableRun { run: done, sources })
    }

    /// Resumes run `run` with the plan its journal recorded: for a process
    /// that does not have the plan at hand (a worker taking over a run).
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::durable::{Durable, DurableError, MemoryJournal, Source};
    /// use typed_tools::plan::{Interpreter, Plan};
    /// use typed_tools::{tool, Toolbox};
    ///
    /// /// Get one note by its id.
    /// #[tool(effects = Read)]
    /// fn get_note(id: u32) -> String { format!("note {id}") }
    ///
    /// let toolbox = Toolbox::builder().tool(GetNote).build().unwrap();
    /// let interpreter = Interpreter::new(&toolbox);
    /// let plan = Plan::parse("match exec tool get_note {id = 7} { Ok(text) => text, Err(e) => e.message }").unwrap();
    /// let durable = Durable::new(MemoryJournal::new());
    /// durable.run_plan(&interpreter, "r", &plan).await.unwrap();
    /// let resumed = durable.resume_plan(&interpreter, "r").await.unwrap();
    /// assert_eq!(resumed.sources, [Source::Replayed]);
    /// assert!(matches!(durable.resume_plan(&interpreter, "nope").await, Err(DurableError::NotFound { .. })));
    /// # });
    /// ```
    pub fn resume_plan<'a, A: Effects, C: ToolboxContext>(
        &'a self,
        interpreter: &'a Interpreter<'_, A, C>,
        run: &'a str,
    ) -> BoxFuture<'a, Result<DurableRun, DurableError>>
    where
        C::Value: PlanWithoutContext,
    {
        let context = <C::Value as PlanWithoutContext>::nothing();
        Box::pin(async move {
            let plan = self.recorded_plan(run).await?;
            self.plan_run(interpreter, context, run, &plan).await
        })
    }

    /// [`resume_plan`](Self::resume_plan), each call lent `context` (see
    /// [`run_plan_in`](Self::run_plan_in)).
    pub async fn resume_plan_in<A: Effects, C: ToolboxContext + Takes<X>, X>(
        &self,
        interpreter: &Interpreter<'_, A, C>,
        context: &X,
        run: &str,
    ) -> Result<DurableRun, DurableError> {
        let plan = self.recorded_plan(run).await?;
        self.run_plan_in(interpreter, context, run, &plan).await
    }

    /// The plan run `run` was started with.
    async fn recorded_plan(&self, run: &str) -> Result<Plan, DurableError> {
        check_run_id(run)?;
        let records = load(&self.journal, run).await?;
        let text = match records.first() {
            None => {
                return Err(DurableError::NotFound {
                    run: run.to_owned(),
                })
            }
            Some(Record::Started {
                input: Input::Plan { text },
                ..
            }) => text.clone(),
            Some(_) => {
                return Err(DurableError::Unreadable {
                    run: run.to_owned(),
                    message: "its first record is not a plan run's start".into(),
                })
            }
        };
        Plan::parse(&text).map_err(|error| DurableError::Unreadable {
            run: run.to_owned(),
            message: format!("its recorded plan does not parse: {error}"),
        })
    }

    /// Runs `agent` on `task` as run `run`, or resumes it if the journal
    /// has it: the model's recorded answers are replayed (it is not asked
    /// again, and no token is paid twice), and so are the recorded call
    /// results, a plan's the model wrote included; the run goes on from the
    /// first answer or call without a record. A resumed run's transcript
    /// is an uninterrupted one's. A call in doubt follows the
    /// [module docs](self)' rules; a request to the model that was cut off
    /// by the crash is simply asked again.
    ///
    /// A run the journal has must have been started with the same system
    /// prompt and task ([`DurableError::InputChanged`]) and the same tools
    /// ([`DurableError::ToolChanged`]). The model itself is not checked:
    /// resume with the one the run was started with. `Ok` when the run
    /// ended, whatever its [`Exit`](agent::Exit); a run that ended on the
    /// model's outage or a limit goes on from there when run again with
    /// the same id (raise the [limits](Agent::limits) to let it go
    /// further).
    ///
    /// An agent whose tools take a [context](crate::toolbox::context) is
    /// run with [`run_agent_in`](Self::run_agent_in).
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::agent::Agent;
    /// use typed_tools::durable::{Durable, MemoryJournal, Source};
    /// use typed_tools::model::ScriptedModel;
    /// use typed_tools::{tool, Toolbox};
    ///
    /// /// Charge a card.
    /// #[tool(effects = Write)]
    /// fn charge_card(card: String, amount: u32) -> String { format!("ch_{card}_{amount}") }
    ///
    /// let toolbox = Toolbox::builder().tool(ChargeCard).build().unwrap();
    /// let script = [r#"{"name": "charge_card", "arguments": {"card": "4242", "amount": 20}}"#, "Charged."];
    /// let durable = Durable::new(MemoryJournal::new());
    /// let agent = Agent::new(&toolbox, ScriptedModel::by_turn(script));
    /// let first = durable.run_agent(&agent, "order-17", "Charge 20 to card 4242.").await.unwrap();
    /// assert_eq!(first.run.answer(), Some("Charged."));
    /// assert_eq!((first.answers_asked, first.sources.as_slice()), (2, &[Source::Ran][..]));
    ///
    /// // Again with the same id: nothing is asked, nothing runs.
    /// let again = durable.run_agent(&agent, "order-17", "Charge 20 to card 4242.").await.unwrap();
    /// assert_eq!(again.run.transcript, first.run.transcript);
    /// assert_eq!((again.answers_asked, again.answers_replayed), (0, 2));
    /// assert_eq!(again.sources, [Source::Replayed]);
    /// assert_eq!(agent.model().requests().len(), 2);
    /// # });
    /// ```
    pub fn run_agent<'a, M: Model, A: Effects, O: Send + Sync + 'static, C: ToolboxContext>(
        &'a self,
        agent: &'a Agent<M, A, O, C>,
        run: &'a str,
        task: impl Into<String>,
    ) -> BoxFuture<'a, Result<DurableAgentRun<O>, DurableError>>
    where
        C::Value: AgentWithoutContext,
    {
        let context = <C::Value as AgentWithoutContext>::nothing();
        Box::pin(self.agent_run(agent, context, run, Some(task.into())))
    }

    /// [`run_agent`](Self::run_agent), each call lent `context`: for an
    /// agent whose tools take a [context](crate::toolbox::context). The
    /// context is not recorded; give the one the run was started with.
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::agent::Agent;
    /// use typed_tools::durable::{Durable, MemoryJournal};
    /// use typed_tools::model::ScriptedModel;
    /// use typed_tools::{tool, Toolbox};
    ///
    /// /// Who is asking.
    /// struct User { name: String }
    ///
    /// /// The notes of the user asking.
    /// #[tool(effects = Read)]
    /// fn my_notes(#[context] user: &User) -> Vec<String> { vec![format!("{}'s list", user.name)] }
    ///
    /// let toolbox = Toolbox::builder().context::<User>().tool(MyNotes).build().unwrap();
    /// let model = ScriptedModel::by_turn([r#"{"name": "my_notes", "arguments": {}}"#, "One note."]);
    /// let agent = Agent::new(&toolbox, model);
    /// let durable = Durable::new(MemoryJournal::new());
    /// let ana = User { name: "ana".into() };
    /// let done = durable.run_agent_in(&agent, &ana, "notes-1", "My notes?").await.unwrap();
    /// assert_eq!(done.run.transcript[3].text(), r#"["ana's list"]"#);
    /// # });
    /// ```
    pub async fn run_agent_in<M, A, O, C, X>(
        &self,
        agent: &Agent<M, A, O, C>,
        context: &X,
        run: &str,
        task: impl Into<String>,
    ) -> Result<DurableAgentRun<O>, DurableError>
    where
        M: Model,
        A: Effects,
        O: Send + Sync + 'static,
        C: ToolboxContext + Takes<X>,
    {
        self.agent_run(agent, C::value(context), run, Some(task.into()))
            .await
    }

    /// Resumes agent run `run` with the task its journal recorded: for a
    /// process that does not have the task at hand (a worker taking over a
    /// run). [`DurableError::NotFound`] when the journal has no such run.
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::agent::Agent;
    /// use typed_tools::durable::{Durable, DurableError, MemoryJournal};
    /// use typed_tools::model::ScriptedModel;
    /// use typed_tools::Toolbox;
    ///
    /// let toolbox = Toolbox::builder().build().unwrap();
    /// let agent = Agent::new(&toolbox, ScriptedModel::by_turn(["Hello."]));
    /// let durable = Durable::new(MemoryJournal::new());
    /// durable.run_agent(&agent, "hi", "Greet me.").await.unwrap();
    /// let resumed = durable.resume_agent(&agent, "hi").await.unwrap();
    /// assert_eq!((resumed.run.answer(), resumed.answers_replayed), (Some("Hello."), 1));
    /// assert!(matches!(durable.resume_agent(&agent, "nope").await, Err(DurableError::NotFound { .. })));
    /// # });
    /// ```
    pub fn resume_agent<'a, M: Model, A: Effects, O: Send + Sync + 'static, C: ToolboxContext>(
        &'a self,
        agent: &'a Agent<M, A, O, C>,
        run: &'a str,
    ) -> BoxFuture<'a, Result<DurableAgentRun<O>, DurableError>>
    where
        C::Value: AgentWithoutContext,
    {
        let context = <C::Value as AgentWithoutContext>::nothing();
        Box::pin(self.agent_run(agent, context, run, None))
    }

    /// [`resume_agent`](Self::resume_agent), each call lent `context`.
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::agent::Agent;
    /// use typed_tools::durable::{Durable, MemoryJournal};
    /// use typed_tools::model::ScriptedModel;
    /// use typed_tools::Toolbox;
    ///
    /// /// Who is asking.
    /// struct User;
    ///
    /// let toolbox = Toolbox::builder().context::<User>().build().unwrap();
    /// let agent = Agent::new(&toolbox, ScriptedModel::by_turn(["Hello."]));
    /// let durable = Durable::new(MemoryJournal::new());
    /// durable.run_agent_in(&agent, &User, "hi", "Greet me.").await.unwrap();
    /// assert!(durable.resume_agent_in(&agent, &User, "hi").await.is_ok());
    /// # });
    /// ```
    pub async fn resume_agent_in<M, A, O, C, X>(
        &self,
        agent: &Agent<M, A, O, C>,
        context: &X,
        run: &str,
    ) -> Result<DurableAgentRun<O>, DurableError>
    where
        M: Model,
        A: Effects,
        O: Send + Sync + 'static,
        C: ToolboxContext + Takes<X>,
    {
        self.agent_run(agent, C::value(context), run, None).await
    }

    /// An agent run on `task`, or on the task its journal recorded.
    async fn agent_run<M: Model, A: Effects, O: Send + Sync + 'static, C: ToolboxContext>(
        &self,
        agent: &Agent<M, A, O, C>,
        context: &C::Value,
        run: &str,
        task: Option<String>,
    ) -> Result<DurableAgentRun<O>, DurableError> {
        check_run_id(run)?;
        let task = match task {
            Some(task) => task,
            None => match load(&self.journal, run).await?.first() {
                None => {
                    return Err(DurableError::NotFound {
                        run: run.to_owned(),
                    })
                }
                Some(Record::Started {
                    input: Input::Agent { task, .. },
                    ..
                }) => task.clone(),
                Some(_) => {
                    return Err(DurableError::Unreadable {
                        run: run.to_owned(),
                        message: "its first record is not an agent run's start".into(),
                    })
                }
            },
        };
        let toolbox = agent.toolbox();
        let tools = toolbox
            .specs()
            .map(|spec| ToolStamp {
                name: spec.name().to_owned(),
                schema: schema_stamp(spec),
            })
            .collect();
        let input = Input::Agent {
            system: agent.system_prompt(),
            task: task.clone(),
        };
        let session = Session::open(&self.journal, toolbox, run, input, tools).await?;
        let done = agent.run_journaled(context, task, &session).await;
        let outcome = match done.answer() {
            Some(answer) => serde_json::json!({"ok": answer}),
            None => serde_json::json!({"exit": done.exit.name(), "message": done.exit.to_string()}),
        };
        let sources = session.finish(outcome).await?;
        let asked = session.lock().asked;
        Ok(DurableAgentRun {
            answers_replayed: done.answers.len().saturating_sub(asked),
            answers_asked: asked,
            run: done,
            sources,
        })
    }

    /// Decides a call in doubt in run `run` (see [`DurableError::InDoubt`]):
    /// the next resume replays the given result, or runs the call again
    /// for [`Resolution::Retry`]. Returns the call decided.
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::durable::{Durable, DurableError, MemoryJournal, Resolution};
    ///
    /// let durable = Durable::new(MemoryJournal::new());
    /// assert!(matches!(durable.resolve("r", Resolution::Retry).await, Err(DurableError::NotFound { .. })));
    /// # });
    /// ```
    pub async fn resolve(
        &self,
        run: &str,
        resolution: Resolution,
    ) -> Result<InDoubt, DurableError> {
        check_run_id(run)?;
        let records = load(&self.journal, run).await?;
        if records.is_empty() {
            return Err(DurableError::NotFound {
                run: run.to_owned(),
            });
        }
        let state = State::read(run, &records)?;
        let Some((index, call)) = state.calls.iter().enumerate().rev().find(|(_, call)| {
            call.result.is_none() && call.resolution.is_none() && call.may_have_run()
        }) else {
            return Err(DurableError::NothingInDoubt {
                run: run.to_owned(),
            });
        };
        let doubt = InDoubt {
            run: run.to_owned(),
            call: index as u64,
            tool: call.tool.clone(),
            args: call.args.clone(),
            started_at_ms: call.at_ms,
        };
        let record = Record::Resolved {
            call: index as u64,
            resolution,
            at_ms: record::now_ms(),
        };
        self.journal
            .append(run, records.len() as u64, &record)
            .await
            .map_err(|error| DurableError::Journal {
                run: run.to_owned(),
                stage: Stage::Resolve,
                error,
            })?;
        Ok(doubt)
    }

    /// Toolbox calls made one by one under run id `run`: each is recorded
    /// before it runs and its result after, and a process that makes the
    /// same calls again under the same id gets the recorded results back,
    /// with the in-doubt rules of the [module docs](self).
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::durable::{Durable, MemoryJournal, Source};
    /// use typed_tools::{tool, Toolbox};
    ///
    /// /// Charge a card.
    /// #[tool(effects = Write)]
    /// fn charge_card(card: String, amount: u32) -> String { format!("ch_{card}_{amount}") }
    ///
    /// let toolbox = Toolbox::builder().tool(ChargeCard).build().unwrap();
    /// let durable = Durable::new(MemoryJournal::new());
    /// let args = r#"{"card": "4242", "amount": 20}"#;
    /// let calls = durable.calls(&toolbox, "checkout-9").await.unwrap();
    /// let charge = calls.call("charge_card", args).await.unwrap().unwrap();
    /// assert_eq!(charge.json(), r#""ch_4242_20""#);
    ///
    /// // Another process, the same run: the call is replayed.
    /// let again = durable.calls(&toolbox, "checkout-9").await.unwrap();
    /// assert_eq!(again.call("charge_card", args).await.unwrap().unwrap().json(), charge.json());
    /// assert_eq!(again.sources(), [Source::Replayed]);
    /// # });
    /// ```
    pub async fn calls<'a, A: Effects>(
        &'a self,
        toolbox: &'a Toolbox<A>,
        run: &'a str,
    ) -> Result<Calls<'a, A>, DurableError> {
        check_run_id(run)?;
        let session = Session::open(&self.journal, toolbox, run, Input::Calls, Vec::new()).await?;
        Ok(Calls {
            session,
            one_at_a_time: futures::lock::Mutex::new(()),
        })
    }
}

/// Toolbox calls under a run id: see [`Durable::calls`].
///
/// ```
/// # futures::executor::block_on(async {
/// use typed_tools::durable::{Durable, MemoryJournal};
/// use typed_tools::Toolbox;
///
/// let toolbox = Toolbox::builder().build().unwrap();
/// let durable = Durable::new(MemoryJournal::new());
/// let calls = durable.calls(&toolbox, "empty").await.unwrap();
/// // An unknown tool is an error of the call, recorded and replayed like any.
/// assert!(calls.call("nothing", "{}").await.unwrap().is_err());
/// # });
/// ```
pub struct Calls<'a, A: Effects> {
    session: Session<'a, A>,
    /// Held for each call from its start to its result: calls made at
    /// once through one `Calls` are made one at a time, in the order they
    /// ask, so that each result is recorded against its own call.
    one_at_a_time: futures::lock::Mutex<()>,
}

impl<A: Effects> fmt::Debug for Calls<'_, A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Calls")
            .field("run", &self.session.run)
            .finish_non_exhaustive()
    }
}

impl<A: Effects> Calls<'_, A> {
    /// Calls tool `name` with argument text `args`, as
    /// [`Toolbox::call`] does, or replays its recorded result. `Err` when
    /// the journal stops the run (the call in doubt, a store that failed,
    /// a call other than the one recorded at this place); every later call
    /// gets the same error. Calls made at once through one `Calls` are
    /// made one at a time, in the order they were asked, each recorded as
    /// its own.
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::durable::{Durable, DurableError, MemoryJournal, Stage};
    /// use typed_tools::{tool, Toolbox};
    ///
    /// /// Charge a card.
    /// #[tool(effects = Write)]
    /// fn charge_card(card: String, amount: u32) -> String { format!("ch_{card}_{amount}") }
    ///
    /// let toolbox = Toolbox::builder().tool(ChargeCard).build().unwrap();
    /// let durable = Durable::new(MemoryJournal::new());
    /// let calls = durable.calls(&toolbox, "checkout-9").await.unwrap();
    /// durable.journal().set_failing(true);
    /// let stopped = calls.call("charge_card", r#"{"card": "4242", "amount": 20}"#).await.unwrap_err();
    /// assert!(matches!(stopped, DurableError::Journal { stage: Stage::CallStart { .. }, .. }));
    /// # });
    /// ```
    pub async fn call(
        &self,
        name: &str,
        args: &str,
    ) -> Result<Result<ToolOutput, ToolError>, DurableError> {
        let _turn = self.one_at_a_time.lock().await;
        let session = &self.session;
        let gated = session.toolbox.asks_approval(name, None);
        let call = match session.before(name, args, gated).await {
            Before::Run(call) => call,
            Before::Replay(result) => return Ok(result),
            Before::Stop(_) => return Err(session.stopped()),
        };
        let result = session
            .toolbox
            .call_noted(&(), name, Cow::Borrowed(args), Some(session))
            .await;
        match session.after(call, name, &result).await {
            Ok(()) => Ok(result),
            Err(_) => Err(session.stopped()),
        }
    }

    /// Where each call's result came from so far, in call order.
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::durable::{Durable, MemoryJournal, Source};
    /// use typed_tools::{tool, Toolbox};
    ///
    /// /// Get one note by its id.
    /// #[tool(effects = Read)]
    /// fn get_note(id: u32) -> String { format!("note {id}") }
    ///
    /// let toolbox = Toolbox::builder().tool(GetNote).build().unwrap();
    /// let durable = Durable::new(MemoryJournal::new());
    /// let calls = durable.calls(&toolbox, "notes").await.unwrap();
    /// calls.call("get_note", r#"{"id": 1}"#).await.unwrap().unwrap();
    /// assert_eq!(calls.sources(), [Source::Ran]);
    /// # });
    /// ```
    pub fn sources(&self) -> Vec<Source> {
        self.session.lock().sources.clone()
    }
}

fn check_run_id(run: &str) -> Result<(), DurableError> {
    if run.is_empty() || run.len() > MAX_RUN_ID_BYTES || run.chars().any(char::is_control) {
        return Err(DurableError::BadRunId {
            run: crate::cut::cut(run, 80).into_owned(),
        });
    }
    Ok(())
}

async fn load(journal: &dyn Journal, run: &str) -> Result<Vec<Record>, DurableError> {
    journal
        .load(run)
        .await
        .map_err(|error| DurableError::Journal {
            run: run.to_owned(),
            stage: Stage::Load,
            error,
        })
}
