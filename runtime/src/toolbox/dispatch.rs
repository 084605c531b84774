//! Dispatch: one call from a name and argument text to a [`ToolOutput`] or a
//! [`ToolError`](crate::ToolError). The fast path (look up, gate, deserialize, run) allocates
//! nothing for a sync tool; only a failure reaches [`Entry::explain`] and, when
//! the tool has a policy, the recovery loop. A tool some approval asks about
//! takes the gated path instead ([`gated_call`]): read, ask, run what was
//! read, with recovery's rewrites read and asked about in turn.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::hash::BuildHasherDefault;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Mutex;
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use serde_json::Value;
use tracing::Span;

use super::approval::Gates;
use super::erased::{Erased, ErasedTool, Failure, Input};
use super::lookup::Fnv;
use super::output::ToolOutput;
use super::recovery::recover;
use super::trace::CallTrace;
use crate::catalog::{Catalog, CatalogFormat};
use crate::effect::EffectSet;
use crate::error::ToolError;
use crate::recover::Policy;
use crate::tool::ToolSpec;

/// What every view of a toolbox shares: the tools, the name map, the catalog cache.
pub(crate) struct Shared {
    /// The longest argument text read, in bytes.
    pub(crate) max_argument_bytes: usize,
    pub(crate) entries: Vec<Entry>,
    pub(crate) by_name: HashMap<String, usize, BuildHasherDefault<Fnv>>,
    pub(crate) catalogs: Mutex<HashMap<(CatalogFormat, EffectSet), Catalog>>,
}

pub(crate) struct Entry {
    pub(crate) spec: ToolSpec,
    /// The arguments' type in λ-Tool notation, for error messages.
    pub(crate) args_type: String,
    pub(crate) tool: Box<dyn ErasedTool>,
    /// The tool's own policy, or the toolbox's default.
    pub(crate) policy: Policy,
}

impl Entry {
    /// Starts one call: done already, or a future to poll. A panic is a failure.
    #[inline]
    fn start<'a>(&'a self, args: &str) -> Erased<'a> {
        match std::panic::catch_unwind(AssertUnwindSafe(|| self.tool.call(&self.spec, args))) {
            Ok(erased) => erased,
            Err(panic) => Erased::Done(Err(Failure::Panicked(panic_message(panic)))),
        }
    }

    /// Starts one call with parsed arguments: from the value itself, unless
    /// the tool refuses them before running (then from their text, so that
    /// the error, and any recovery, is the text path's) or they nest deeper
    /// than the text parser reads (then the text path refuses them).
    fn start_json<'a>(
        &'a self,
        args: &'a Value,
        max: usize,
    ) -> Result<(Erased<'a>, Args<'a>), ToolError> {
        if nests_within(args, JSON_NESTING) {
            let call = AssertUnwindSafe(|| self.tool.call_json(&self.spec, args));
            match std::panic::catch_unwind(call) {
                Ok(Erased::Done(Err(Failure::Args(_) | Failure::Schema(_)))) => {}
                Ok(erased) => return Ok((erased, Args::Json(args))),
                Err(panic) => {
                    let failure = Failure::Panicked(panic_message(panic));
                    return Ok((Erased::Done(Err(failure)), Args::Json(args)));
                }
            }
        }
        let text = args.to_string();
        self.check_size(&text, max)?;
        Ok((self.start(&text), Args::Text(Cow::Owned(text))))
    }

    fn poll_running(
        future: &mut BoxFuture<'_, Result<String, Failure>>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<String, Failure>> {
        match std::panic::catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(cx))) {
            Ok(poll) => poll,
            Err(panic) => Poll::Ready(Err(Failure::Panicked(panic_message(panic)))),
        }
    }

    /// One call to the end, for recovery, which calls again.
    pub(crate) async fn run(&self, args: &str) -> Result<String, Failure> {
        match self.start(args) {
            Erased::Done(result) => result,
            Erased::Running(mut future) => {
                futures::future::poll_fn(|cx| Entry::poll_running(&mut future, cx)).await
            }
        }
    }

    /// Reads argument text into the tool's input, running nothing. A panic
    /// is a failure.
    pub(crate) fn read(&self, args: &str) -> Result<Input, Failure> {
        std::panic::catch_unwind(AssertUnwindSafe(|| self.tool.read(&self.spec, args)))
            .unwrap_or_else(|panic| Err(Failure::Panicked(panic_message(panic))))
    }

    /// Reads parsed arguments into the tool's input, as
    /// [`start_json`](Self::start_json) would call with them: from the value
    /// itself, unless the tool refuses it or it nests too deep (then from its
    /// text, which is also what the approval is shown).
    fn read_json<'a>(
        &self,
        args: &'a Value,
        max: usize,
    ) -> Result<(Result<Input, Failure>, Args<'a>), ToolError> {
        if nests_within(args, JSON_NESTING) {
            let read = AssertUnwindSafe(|| self.tool.read_json(&self.spec, args));
            match std::panic::catch_unwind(read) {
                Ok(Err(Failure::Args(_) | Failure::Schema(_))) => {}
                Ok(read) => return Ok((read, Args::Json(args))),
                Err(panic) => {
                    let failure = Failure::Panicked(panic_message(panic));
                    return Ok((Err(failure), Args::Json(args)));
                }
            }
        }
        let text = args.to_string();
        self.check_size(&text, max)?;
        Ok((self.read(&text), Args::Text(Cow::Owned(text))))
    }

    /// Runs the tool to the end with an input [`read`](Self::read) gave.
    pub(crate) async fn run_input(&self, input: Input) -> Result<String, Failure> {
        let started = std::panic::catch_unwind(AssertUnwindSafe(|| self.tool.run(input)));
        match started {
            Ok(Erased::Done(result)) => result,
            Ok(Erased::Running(mut future)) => {
                futures::future::poll_fn(|cx| Entry::poll_running(&mut future, cx)).await
            }
            Err(panic) => Err(Failure::Panicked(panic_message(panic))),
        }
    }

    /// Refuses argument text longer than `max` bytes, before it is read.
    #[inline]
    pub(crate) fn check_size(&self, args: &str, max: usize) -> Result<(), ToolError> {
        if args.len() > max {
            return Err(self.too_large(args.len(), max));
        }
        Ok(())
    }

    #[cold]
    #[inline(never)]
    fn too_large(&self, bytes: usize, max: usize) -> ToolError {
        ToolError::ArgsTooLarge {
            tool: self.spec.name().to_owned(),
            bytes,
            max,
        }
    }

    /// The slow path: the fast deserializer said no; say precisely why.
    pub(crate) fn explain(&self, args: &str, failure: Failure) -> ToolError {
        let tool = self.spec.name().to_owned();
        let expected = self.args_type.clone();
        match failure {
            Failure::Args(error) => match serde_json::from_str::<Value>(args) {
                Err(syntax) => ToolError::InvalidArgs {
                    tool,
                    // serde_json stops at 128 levels: say so in words a model can act on.
                    message: if syntax.to_string().starts_with("recursion limit exceeded") {
                        format!(
                            "nested more than 128 levels deep at line {} column {}; send flatter arguments",
                            syntax.line(),
                            syntax.column()
                        )
                    } else {
                        syntax.to_string()
                    },
                    excerpt: excerpt(args),
                    expected,
                },
                Ok(value) => {
                    let problems = self.spec.input_model().check(&value);
                    // Only when the schema saw nothing wrong does the
                    // deserializer's own message add something.
                    let message = problems.is_empty().then(|| {
                        error.map_or_else(|| "expected a JSON object".to_owned(), |e| e.to_string())
                    });
                    ToolError::Deserialization {
                        tool,
                        problems,
                        message,
                        expected,
                    }
                }
            },
            Failure::Schema(ToolError::Deserialization {
                problems, message, ..
            }) => ToolError::Deserialization {
                tool,
                problems,
                message,
                expected,
            },
            Failure::Schema(other) => other,
            Failure::Tool(message) => ToolError::Execution {
                tool,
                message,
                panicked: false,
            },
            Failure::Panicked(message) => ToolError::Execution {
                tool,
                message,
                panicked: true,
            },
            Failure::Output(error) => ToolError::Execution {
                tool,
                message: format!("its output could not be serialized: {error}"),
                panicked: false,
            },
        }
    }
}

/// The future of [`Toolbox::call`](crate::Toolbox::call): one call of one tool.
///
/// On its first poll it looks the tool up, checks its effects, deserializes the
/// arguments and, for a sync tool, runs it; an async tool's future is polled
/// from then on. A panic in the tool is caught and returned as
/// [`ToolError::Execution`](crate::ToolError::Execution). `Unpin` and `Send`.
#[must_use = "a call does nothing unless it is awaited"]
pub struct Call<'a> {
    state: CallState<'a>,
}

enum CallState<'a> {
    Start {
        shared: &'a Shared,
        allowed: EffectSet,
        gates: Gates<'a>,
        name: &'a str,
        args: Args<'a>,
    },
    Running {
        entry: &'a Entry,
        max_argument_bytes: usize,
        args: Args<'a>,
        future: BoxFuture<'a, Result<String, Failure>>,
        trace: Trace,
    },
    /// Off the fast path: a failure met the tool's policy (repair, coerce,
    /// retry, escalate), or an approval asks about the tool.
    Slow(BoxFuture<'a, Result<ToolOutput, ToolError>>, Trace),
    Done,
}

/// A call's `tool_call` span, when a subscriber records it; carried from
/// state to state, so that a call that ends in its first poll holds none.
type Trace = Option<Box<CallTrace>>;

/// The call's result, its span told first.
#[inline(always)]
fn ready(
    trace: Trace,
    result: Result<ToolOutput, ToolError>,
) -> Poll<Result<ToolOutput, ToolError>> {
    if let Some(trace) = trace {
        trace.finish(&result);
    }
    Poll::Ready(result)
}

/// A call's arguments: the model's text, or JSON already parsed (a plan's).
pub(super) enum Args<'a> {
    Text(Cow<'a, str>),
    Json(&'a Value),
}

impl<'a> Args<'a> {
    /// The arguments as text, which error messages and recovery read.
    fn into_text(self) -> Cow<'a, str> {
        match self {
            Args::Text(text) => text,
            Args::Json(value) => Cow::Owned(value.to_string()),
        }
    }
}

/// A call of a tool that some approval asks about: which approvals, and the
/// tool's position in the toolbox.
pub(super) struct Gated<'a> {
    gates: Gates<'a>,
    index: usize,
    /// The call's span, where the approvals' answer is recorded.
    span: Span,
}

impl Gated<'_> {
    /// Asks the approvals about `args`, which were just read into the input
    /// the tool will run with: `Err` is the refusal. The text last approved
    /// (`approved`) is not asked about again, so that a retry of an
    /// idempotent tool with the same arguments waits for no one.
    pub(super) async fn approve(
        &self,
        entry: &Entry,
        args: &Args<'_>,
        approved: &mut Option<String>,
    ) -> Result<(), ToolError> {
        let shown = match args {
            Args::Json(value) => (*value).clone(),
            Args::Text(text) if approved.as_deref() == Some(&**text) => return Ok(()),
            // The input was read from this text, so it parses; if it did not,
            // no one is asked and nothing runs.
            Args::Text(text) => serde_json::from_str(text)
                .map_err(|error| entry.explain(text, Failure::Args(Some(error))))?,
        };
        let written = match args {
            Args::Json(value) => value.to_string(),
            Args::Text(text) => text.to_string(),
        };
        let decision = self.gates.decide(self.index, &entry.spec, shown).await;
        CallTrace::approval(&self.span, decision.is_ok());
        match decision {
            Ok(()) => {
                *approved = Some(written);
                Ok(())
            }
            Err(reason) => Err(ToolError::Refused {
                tool: entry.spec.name().to_owned(),
                reason,
            }),
        }
    }

    /// Reads `text`, asks about it, and runs the tool with what was read:
    /// the outcome of the run (or of the read), or the refusal.
    pub(super) async fn attempt(
        &self,
        entry: &Entry,
        text: &str,
        approved: &mut Option<String>,
    ) -> Result<Result<String, Failure>, ToolError> {
        let input = match entry.read(text) {
            Ok(input) => input,
            Err(failure) => return Ok(Err(failure)),
        };
        self.approve(entry, &Args::Text(Cow::Borrowed(text)), approved)
            .await?;
        Ok(entry.run_input(input).await)
    }
}

/// The gated path: read the arguments, ask, then run the tool with the input
/// read. A failure before or after goes to the tool's policy, whose every
/// rewrite is read and asked about in turn.
async fn gated_call<'a>(
    entry: &'a Entry,
    gated: Gated<'a>,
    max: usize,
    args: Args<'a>,
) -> Result<ToolOutput, ToolError> {
    let (read, args) = match args {
        Args::Json(value) => entry.read_json(value, max)?,
        // Its size was checked before.
        Args::Text(text) => (entry.read(&text), Args::Text(text)),
    };
    let mut approved = None;
    let outcome = match read {
        Err(failure) => Err(failure),
        Ok(input) => {
            gated.approve(entry, &args, &mut approved).await?;
            entry.run_input(input).await
        }
    };
    let failure = match outcome {
        Ok(json) => return Ok(ToolOutput::from_json(json)),
        Err(failure) => failure,
    };
    let text = args.into_text();
    if entry.policy.is_none() {
        return Err(entry.explain(&text, failure));
    }
    recover(
        entry,
        Some((&gated, approved)),
        max,
        text.into_owned(),
        failure,
    )
    .await
}

/// How deeply parsed arguments may nest to be read from the value: below
/// serde_json's parser's limit (128), where reading the text would fail.
const JSON_NESTING: usize = 100;

/// Whether `value` nests at most `limit` arrays and objects deep.
fn nests_within(value: &Value, limit: usize) -> bool {
    match value {
        Value::Array(items) => limit > 0 && items.iter().all(|v| nests_within(v, limit - 1)),
        Value::Object(fields) => limit > 0 && fields.values().all(|v| nests_within(v, limit - 1)),
        _ => true,
    }
}

impl<'a> Call<'a> {
    pub(super) fn new(
        shared: &'a Shared,
        allowed: EffectSet,
        gates: Gates<'a>,
        name: &'a str,
        args: Args<'a>,
    ) -> Call<'a> {
        Call {
            state: CallState::Start {
                shared,
                allowed,
                gates,
                name,
                args,
            },
        }
    }
}

impl Future for Call<'_> {
    type Output = Result<ToolOutput, ToolError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut self.state;
        loop {
            let (entry, max, args, failure, trace) = match std::mem::replace(this, CallState::Done)
            {
                CallState::Start {
                    shared,
                    allowed,
                    gates,
                    name,
                    args,
                } => {
                    let trace = CallTrace::start(name);
                    let _entered = CallTrace::enter(&trace);
                    let (index, entry) = match shared.lookup(name, allowed) {
                        Ok(found) => found,
                        Err(error) => return ready(trace, Err(error)),
                    };
                    if let Some(trace) = &trace {
                        trace.found(entry.spec.effects());
                    }
                    let max = shared.max_argument_bytes;
                    if gates.ask_about(index, &entry.spec) {
                        if let Args::Text(text) = &args {
                            if let Err(error) = entry.check_size(text, max) {
                                return ready(trace, Err(error));
                            }
                        }
                        let span = trace.as_ref().map_or_else(Span::none, |t| t.span().clone());
                        let gated = Gated { gates, index, span };
                        let future = Box::pin(gated_call(entry, gated, max, args));
                        *this = CallState::Slow(future, trace);
                        continue;
                    }
                    let started = match args {
                        // One comparison on the fast path.
                        Args::Text(text) => entry
                            .check_size(&text, max)
                            .map(|()| (entry.start(&text), Args::Text(text))),
                        Args::Json(value) => entry.start_json(value, max),
                    };
                    let (erased, args) = match started {
                        Ok(started) => started,
                        Err(error) => return ready(trace, Err(error)),
                    };
                    match erased {
                        Erased::Done(Ok(json)) => {
                            return ready(trace, Ok(ToolOutput::from_json(json)))
                        }
                        Erased::Done(Err(failure)) => (entry, max, args, failure, trace),
                        Erased::Running(future) => {
                            *this = CallState::Running {
                                entry,
                                max_argument_bytes: max,
                                args,
                                future,
                                trace,
                            };
                            continue;
                        }
                    }
                }
                CallState::Running {
                    entry,
                    max_argument_bytes: max,
                    args,
                    mut future,
                    trace,
                } => {
                    let entered = CallTrace::enter(&trace);
                    let poll = Entry::poll_running(&mut future, cx);
                    drop(entered);
                    match poll {
                        Poll::Pending => {
                            *this = CallState::Running {
                                entry,
                                max_argument_bytes: max,
                                args,
                                future,
                                trace,
                            };
                            return Poll::Pending;
                        }
                        Poll::Ready(Ok(json)) => {
                            return ready(trace, Ok(ToolOutput::from_json(json)))
                        }
                        Poll::Ready(Err(failure)) => (entry, max, args, failure, trace),
                    }
                }
                CallState::Slow(mut future, trace) => {
                    let entered = CallTrace::enter(&trace);
                    let poll = future.as_mut().poll(cx);
                    drop(entered);
                    return match poll {
                        Poll::Pending => {
                            *this = CallState::Slow(future, trace);
                            Poll::Pending
                        }
                        Poll::Ready(result) => ready(trace, result),
                    };
                }
                CallState::Done => panic!("`Call` polled after it completed"),
            };
            // The fast path failed: explain, or hand over to the tool's policy.
            let args = args.into_text();
            if entry.policy.is_none() {
                return ready(trace, Err(entry.explain(&args, failure)));
            }
            let future = Box::pin(recover(entry, None, max, args.into_owned(), failure));
            *this = CallState::Slow(future, trace);
        }
    }
}

impl fmt::Debug for Call<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match &self.state {
            CallState::Start { name, .. } => format!("not started: {name}"),
            CallState::Running { entry, .. } => format!("running: {}", entry.spec.name()),
            CallState::Slow(..) => "recovering or waiting for approval".to_owned(),
            CallState::Done => "done".to_owned(),
        };
        f.debug_tuple("Call").field(&state).finish()
    }
}

pub(crate) fn panic_message(panic: Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_owned())
}

fn excerpt(args: &str) -> String {
    let mut short: String = args.chars().take(200).collect();
    if short.len() < args.len() {
        short.push('…');
    }
    short
}
