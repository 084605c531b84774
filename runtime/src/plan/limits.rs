//! What a run of a plan may consume: [`Limits`], set on the
//! [`Interpreter`](super::Interpreter), and [`Limit`], the one a stopped run
//! reached ([`RunError::LimitExceeded`](super::RunError::LimitExceeded)).
//!
//! A plan that type-checks can still ask for too much: a string doubled at
//! each `let`, lists multiplied through nested `map`s, a `fold` that wraps
//! its accumulator once per element when the checker does not know the
//! accumulator's type (a tool's free-form JSON; of a known type, the
//! checker refuses it). The interpreter counts as it goes and checks
//! each limit before the work that would pass it (a string's length before
//! it is copied, a list's before it is allocated), so a plan is stopped with
//! the limit named, the calls made so far in its trace, and nothing after it
//! run.
//!
//! The limits on one call (its time: [`Limits::per_call`]) are one
//! crate-private struct, `CallLimits`, which an agent's direct calls and an
//! interpreter's calls both hold and apply the same way.

use std::fmt;
use std::future::Future;
use std::time::{Duration, Instant};

use crate::error::ToolError;
use crate::toolbox::timer::{within_for, TimedOut, WithinFor};
use crate::toolbox::ToolOutput;

use super::ir::MAX_DEPTH;
use super::value::{FIELD, HEADER, SLOT};

/// The most a run of a plan may consume. [`Limits::new`] (also `default()`)
/// gives limits safe for a server; each setter changes one.
///
/// | limit | default | what it counts |
/// |---|---|---|
/// | [`steps`](Self::steps) | 1,000,000 | expressions evaluated, each callback's once per element |
/// | [`calls`](Self::calls) | 1,000 | tool calls, `exec` and `call` |
/// | [`wall_time`](Self::wall_time) | 30 s | time since the run started, tool calls included; a call in progress is stopped when it passes |
/// | [`per_call`](Self::per_call) | 60 s | one tool call (`exec` or `call`), the wait for its approvals included: stopped when it passes |
/// | [`depth`](Self::depth) | 64 ([`MAX_DEPTH`]) | how deeply lists and records nest in one value |
/// | [`value_bytes`](Self::value_bytes) | 8 MiB | the [size](super::Value::size) of one value |
/// | [`list_length`](Self::list_length) | 100,000 | the elements of one list |
/// | [`record_fields`](Self::record_fields) | 1,000 | the fields of one record |
/// | [`memory`](Self::memory) | 32 MiB | bytes of the strings, lists and records the run builds, in all |
///
/// Values a tool returns count as values the run builds. The wall time is
/// checked between steps and after each call. A call past its time (its
/// `per_call` limit, or the run's wall time, whichever comes first) is
/// stopped where it waits: an async tool, or an approval that has not
/// answered (a sync tool runs to its end inside its first poll and cannot
/// be stopped). An `exec` stopped at its `per_call` limit takes the plan's
/// `Err` branch with the kind `timed_out` ([`ToolError::TimedOut`]:
/// a `Write` tool that had started may or may not have taken effect); a
/// `call` stopped so stops the plan, as any failure of a `call` does; a
/// call stopped by the wall time stops the run
/// ([`Limit::WallTime`]). An [agent](crate::agent) runs each plan within
/// the limits it was given for plans ([`agent::Limits::plans`](crate::agent::Limits::plans)),
/// its tool calls, wall time and time per call capped by its own.
///
/// ```
/// # futures::executor::block_on(async {
/// use std::time::Duration;
/// use typed_tools::Toolbox;
/// use typed_tools::plan::{Interpreter, Limit, Limits, Plan, RunError};
///
/// let toolbox = Toolbox::builder().build().unwrap();
/// let interpreter = Interpreter::new(&toolbox)
///     .limits(Limits::new().value_bytes(1024).wall_time(Duration::from_secs(1)));
/// // Each `let` doubles the string: the fifth would pass 1024 bytes.
/// let plan = Plan::parse(r#"let a = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef" in
///   let b = a ++ a in let c = b ++ b in let d = c ++ c in let e = d ++ d in e ++ e"#).unwrap();
/// let run = interpreter.run(&plan).await.unwrap();
/// assert_eq!(run.outcome, Err(RunError::LimitExceeded { limit: Limit::ValueBytes(1024) }));
/// assert_eq!(
///     run.outcome.unwrap_err().to_string(),
///     "the plan was stopped: a value would be larger than 1024 bytes (limit `value_bytes`); \
///      build smaller strings, lists and records"
/// );
/// # });
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    steps: u64,
    calls: u64,
    wall_time: Duration,
    call: CallLimits,
    depth: usize,
    value_bytes: usize,
    list_length: usize,
    record_fields: usize,
    memory: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits::new()
    }
}

impl Limits {
    /// The defaults, safe for a server (see the table above).
    pub const fn new() -> Limits {
        Limits {
            steps: 1_000_000,
            calls: 1_000,
            wall_time: Duration::from_secs(30),
            call: CallLimits::DEFAULT,
            depth: MAX_DEPTH,
            value_bytes: 8 << 20,
            list_length: 100_000,
            record_fields: 1_000,
            memory: 32 << 20,
        }
    }

    /// No limit at all: [`Value::from_json`](super::Value::from_json) reads within these.
    pub(crate) const fn unlimited() -> Limits {
        Limits {
            steps: u64::MAX,
            calls: u64::MAX,
            wall_time: Duration::MAX,
            call: CallLimits::UNLIMITED,
            depth: usize::MAX,
            value_bytes: usize::MAX,
            list_length: usize::MAX,
            record_fields: usize::MAX,
            memory: usize::MAX,
        }
    }

    /// At most `steps` evaluation steps: each expression evaluated counts
    /// one, a callback's body once per element.
    pub const fn steps(mut self, steps: u64) -> Limits {
        self.steps = steps;
        self
    }

    /// At most `calls` tool calls (`exec` and `call`); the one past it does
    /// not run. Where the plan shows how many calls it can make, so does
    /// [`Preview::calls_in_all`](super::Preview::calls_in_all).
    pub const fn calls(mut self, calls: u64) -> Limits {
        self.calls = calls;
        self
    }

    /// At most `wall_time` from the start of the run (after the checks),
    /// measured between steps and after each call; a call still waiting
    /// when it passes is stopped.
    pub const fn wall_time(mut self, wall_time: Duration) -> Limits {
        self.wall_time = wall_time;
        self
    }

    /// At most `per_call` for one tool call, the wait for its approvals
    /// included. A call past it is stopped where it waits and is the
    /// call's error ([`ToolError::TimedOut`]):
    /// an `exec` takes the plan's `Err` branch with the kind `timed_out`;
    /// a `call` stops the plan. A sync tool cannot be stopped.
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use std::time::Duration;
    /// use typed_tools::plan::{Interpreter, Limits, Plan, Value};
    /// use typed_tools::{tool, Toolbox};
    ///
    /// /// Wait for an answer that never comes.
    /// #[tool(effects = Read)]
    /// async fn wait_forever() -> String {
    ///     futures::future::pending::<String>().await
    /// }
    ///
    /// let toolbox = Toolbox::builder().tool(WaitForever).build().unwrap();
    /// let limits = Limits::new().per_call(Duration::from_millis(10));
    /// let plan = Plan::parse("match exec tool wait_forever {} { Ok(x) => x, Err(e) => e.kind }").unwrap();
    /// let run = Interpreter::new(&toolbox).limits(limits).run(&plan).await.unwrap();
    /// assert_eq!(run.outcome, Ok(Value::String("timed_out".into())));
    /// # });
    /// ```
    pub const fn per_call(mut self, per_call: Duration) -> Limits {
        self.call.time = per_call;
        self
    }

    /// Lists and records nest at most `depth` levels in one value ([`Value::depth`](super::Value::depth)),
    /// a tool's output included. The walks over a value do not recurse, so
    /// any depth is safe for them; but the JSON a tool gets is walked by
    /// serde_json, recursively: keep this within a few hundred.
    pub const fn depth(mut self, depth: usize) -> Limits {
        self.depth = depth;
        self
    }

    /// One value is at most `bytes` in [size](super::Value::size), a string's bytes
    /// included; a part shared several times counts each time, as it is
    /// written that many times in JSON.
    pub const fn value_bytes(mut self, bytes: usize) -> Limits {
        self.value_bytes = bytes;
        self
    }

    /// One list has at most `length` elements.
    pub const fn list_length(mut self, length: usize) -> Limits {
        self.list_length = length;
        self
    }

    /// One record has at most `fields` fields.
    pub const fn record_fields(mut self, fields: usize) -> Limits {
        self.record_fields = fields;
        self
    }

    /// The run builds at most `bytes` of strings, lists and records in all,
    /// tools' outputs and the JSON of their arguments included, counted when
    /// built and never given back: with sharing, this bounds the run's
    /// memory, however many values it keeps alive at once.
    pub const fn memory(mut self, bytes: usize) -> Limits {
        self.memory = bytes;
        self
    }
}

impl Limits {
    /// These limits for a run that has at most `calls` calls and
    /// `wall_time` left and whose calls are each held to `call`: each of
    /// them the smaller of the two. How an agent runs a plan.
    pub(crate) fn within(self, calls: u64, wall_time: Duration, call: CallLimits) -> Limits {
        Limits {
            calls: self.calls.min(calls),
            wall_time: self.wall_time.min(wall_time),
            call: self.call.min(call),
            ..self
        }
    }

    /// The limits on each call.
    pub(crate) fn call(&self) -> CallLimits {
        self.call
    }
}

/// The limits on one tool call, wherever it is made: an agent's own call,
/// or a plan's `exec` or `call` (an agent's plan, or a plan run by an
/// [`Interpreter`](super::Interpreter) alone). Both paths hold them and
/// apply them through [`run`](Self::run), so that a limit added here holds
/// on each. (Each `Limits` type has a setter for each of them:
/// [`Limits::per_call`], [`agent::Limits::per_call`](crate::agent::Limits::per_call).)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CallLimits {
    /// How long one call may take, the wait for its approvals included.
    pub(crate) time: Duration,
}

impl CallLimits {
    /// A minute a call.
    pub(crate) const DEFAULT: CallLimits = CallLimits {
        time: Duration::from_secs(60),
    };

    const UNLIMITED: CallLimits = CallLimits {
        time: Duration::MAX,
    };

    /// Each limit the smaller of the two.
    pub(crate) fn min(self, other: CallLimits) -> CallLimits {
        // Every field named: one added cannot be left out.
        let CallLimits { time } = self;
        CallLimits {
            time: time.min(other.time),
        }
    }

    /// Runs `call` of `tool` (a toolbox's call, approvals and all) within
    /// these limits and the run's `deadline`: its result, or
    /// [`ToolError::TimedOut`] when it was stopped waiting. A call ready
    /// at its first poll (a sync tool's) costs no clock read and no timer.
    pub(crate) fn run<'t, F>(
        self,
        tool: &'t str,
        call: F,
        deadline: Option<Instant>,
    ) -> WithinFor<F, impl Fn(TimedOut) -> Result<ToolOutput, ToolError> + Unpin + 't>
    where
        F: Future<Output = Result<ToolOutput, ToolError>> + Unpin,
    {
        within_for(call, self.time, deadline, move |TimedOut { after }| {
            Err(ToolError::TimedOut {
                tool: tool.to_owned(),
                after,
            })
        })
    }
}

/// The limit a run reached, with its value: which setter of [`Limits`] to
/// raise, if the plan is right.
///
/// ```
/// use typed_tools::plan::Limit;
///
/// assert_eq!(Limit::Steps(1000).name(), "steps");
/// assert_eq!(Limit::Steps(1000).to_string(), "it took more than 1000 evaluation steps");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Limit {
    /// [`Limits::steps`].
    Steps(u64),
    /// [`Limits::calls`].
    Calls(u64),
    /// [`Limits::wall_time`].
    WallTime(Duration),
    /// [`Limits::depth`].
    Depth(usize),
    /// [`Limits::value_bytes`].
    ValueBytes(usize),
    /// [`Limits::list_length`].
    ListLength(usize),
    /// [`Limits::record_fields`].
    RecordFields(usize),
    /// [`Limits::memory`].
    Memory(usize),
}

impl Limit {
    /// The name of the setter of [`Limits`] that sets it: `steps`, `calls`, ...
    pub fn name(&self) -> &'static str {
        match self {
            Limit::Steps(_) => "steps",
            Limit::Calls(_) => "calls",
            Limit::WallTime(_) => "wall_time",
            Limit::Depth(_) => "depth",
            Limit::ValueBytes(_) => "value_bytes",
            Limit::ListLength(_) => "list_length",
            Limit::RecordFields(_) => "record_fields",
            Limit::Memory(_) => "memory",
        }
    }

    /// What a model can change in its plan to stay within the limit.
    pub(crate) fn advice(&self) -> &'static str {
        match self {
            Limit::Steps(_) => "iterate over fewer elements, or do less in each callback",
            Limit::Calls(_) => "make fewer calls, or `traverse` a shorter list",
            Limit::WallTime(_) => "do less in one plan",
            Limit::Depth(_) => {
                "keep values flatter (a `fold` whose callback wraps its accumulator nests one level per element)"
            }
            Limit::ValueBytes(_) | Limit::Memory(_) => "build smaller strings, lists and records",
            Limit::ListLength(_) => "`filter` first, or work on fewer elements",
            Limit::RecordFields(_) => "build records with fewer fields",
        }
    }
}

/// What the run did that passes the limit.
impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Limit::Steps(n) => write!(f, "it took more than {n} evaluation steps"),
            Limit::Calls(n) => write!(f, "it would make more than {n} tool calls"),
            Limit::WallTime(d) => write!(f, "it ran for longer than {d:?}"),
            Limit::Depth(n) => write!(f, "a value would nest deeper than {n} levels"),
            Limit::ValueBytes(n) => write!(f, "a value would be larger than {n} bytes"),
            Limit::ListLength(n) => write!(f, "a list would have more than {n} elements"),
            Limit::RecordFields(n) => write!(f, "a record would have more than {n} fields"),
            Limit::Memory(n) => write!(f, "it would build more than {n} bytes of values in all"),
        }
    }
}

/// Counts what one run consumes against its [`Limits`].
#[derive(Debug)]
pub(crate) struct Meter {
    limits: Limits,
    steps: u64,
    calls: u64,
    memory: usize,
    /// `None`: no time limit (or one past the end of time).
    deadline: Option<Instant>,
}

/// Steps between two looks at the clock.
const CLOCK_EVERY: u64 = 1024;

impl Meter {
    /// A meter for a run starting now.
    pub(crate) fn new(limits: Limits) -> Meter {
        Meter {
            limits,
            steps: 0,
            calls: 0,
            memory: 0,
            deadline: Instant::now().checked_add(limits.wall_time),
        }
    }

    /// A meter with no limits.
    pub(crate) fn unlimited() -> Meter {
        Meter {
            limits: Limits::unlimited(),
            steps: 0,
            calls: 0,
            memory: 0,
            deadline: None,
        }
    }

    /// One evaluation step; now and then, a look at the clock.
    #[inline]
    pub(crate) fn step(&mut self) -> Result<(), Limit> {
        self.steps += 1;
        if self.steps > self.limits.steps {
            return Err(Limit::Steps(self.limits.steps));
        }
        if self.steps.is_multiple_of(CLOCK_EVERY) {
            self.clock()?;
        }
        Ok(())
    }

    /// Whether the run is still within its wall time.
    pub(crate) fn clock(&self) -> Result<(), Limit> {
        match self.deadline {
            Some(_) => self.by(Instant::now()),
            None => Ok(()),
        }
    }

    /// One tool call, about to be made (the caller looks at the clock after
    /// the call: see [`by`](Self::by)).
    pub(crate) fn call(&mut self) -> Result<(), Limit> {
        self.calls += 1;
        if self.calls > self.limits.calls {
            return Err(Limit::Calls(self.limits.calls));
        }
        Ok(())
    }

    /// When the run's wall time ends, if it does.
    pub(crate) fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// Whether `now` is within the run's wall time.
    pub(crate) fn by(&self, now: Instant) -> Result<(), Limit> {
        match self.deadline {
            Some(deadline) if now > deadline => Err(Limit::WallTime(self.limits.wall_time)),
            _ => Ok(()),
        }
    }

    /// `bytes` more built.
    #[inline]
    pub(crate) fn charge(&mut self, bytes: usize) -> Result<(), Limit> {
        self.memory = self.memory.saturating_add(bytes);
        if self.memory > self.limits.memory {
            return Err(Limit::Memory(self.limits.memory));
        }
        Ok(())
    }

    /// A string of `len` bytes, about to be built.
    #[inline]
    pub(crate) fn string(&mut self, len: usize) -> Result<(), Limit> {
        let size = HEADER.saturating_add(len);
        self.size(size)?;
        self.charge(size)
    }

    /// A list of `len` elements, about to be allocated.
    #[inline]
    pub(crate) fn list(&mut self, len: usize) -> Result<(), Limit> {
        if len > self.limits.list_length {
            return Err(Limit::ListLength(self.limits.list_length));
        }
        self.charge(HEADER.saturating_add(SLOT.saturating_mul(len)))
    }

    /// A record of `fields` fields, about to be allocated.
    #[inline]
    pub(crate) fn record(&mut self, fields: usize) -> Result<(), Limit> {
        if fields > self.limits.record_fields {
            return Err(Limit::RecordFields(self.limits.record_fields));
        }
        self.charge(HEADER.saturating_add(FIELD.saturating_mul(fields)))
    }

    /// Element `len` of a list read one element at a time (a tool's
    /// output), about to be kept: [`list`](Self::list) piece by piece, after
    /// `list(0)` for the header.
    #[inline]
    pub(crate) fn element(&mut self, len: usize) -> Result<(), Limit> {
        if len > self.limits.list_length {
            return Err(Limit::ListLength(self.limits.list_length));
        }
        self.charge(SLOT)
    }

    /// Field `fields` of a record read one field at a time, about to be
    /// kept: [`record`](Self::record) piece by piece, after `record(0)`.
    #[inline]
    pub(crate) fn field(&mut self, fields: usize) -> Result<(), Limit> {
        if fields > self.limits.record_fields {
            return Err(Limit::RecordFields(self.limits.record_fields));
        }
        self.charge(FIELD)
    }

    /// A field name of `len` bytes, about to be copied.
    #[inline]
    pub(crate) fn name(&mut self, len: usize) -> Result<(), Limit> {
        self.charge(len)
    }

    /// A list or record at nesting level `depth` (1 for the outermost).
    #[inline]
    pub(crate) fn nest(&self, depth: usize) -> Result<(), Limit> {
        if depth > self.limits.depth {
            return Err(Limit::Depth(self.limits.depth));
        }
        Ok(())
    }

    /// A value of [size](super::Value::size) `size`, or a part of one.
    #[inline]
    pub(crate) fn size(&self, size: usize) -> Result<(), Limit> {
        if size > self.limits.value_bytes {
            return Err(Limit::ValueBytes(self.limits.value_bytes));
        }
        Ok(())
    }
}
