//! Dispatch: one call from a name and argument text to a [`ToolOutput`] or a
//! [`ToolError`](crate::ToolError). The fast path (look up, gate, deserialize, run) allocates
//! nothing for a sync tool; only a failure reaches [`Entry::explain`] and, when
//! the tool has a policy, the recovery loop. A tool some approval asks about
//! takes the gated path instead ([`gated_call`]): read, ask, run what was
//! read, with recovery's rewrites read and asked about in turn.

use std::any::Any;
use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::hash::BuildHasherDefault;
use std::mem::ManuallyDrop;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Mutex;
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use tracing::Span;

use super::approval::Gates;
use super::context::{NoContext, ToolboxContext};
use super::erased::{Erased, ErasedTool, Failure, Input};
use super::lookup::Fnv;
use super::output::ToolOutput;
use super::recovery::recover;
use super::trace::CallTrace;
use crate::catalog::{Catalog, CatalogFormat};
use crate::effect::EffectSet;
use crate::error::ToolError;
use crate::json::Unread;
use crate::recover::Policy;
use crate::schema::Problem;
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
    pub(crate) tool: Box<dyn ErasedTool>,
    /// The tool's own policy, or the toolbox's default.
    pub(crate) policy: Policy,
}

impl Entry {
    /// Starts one call: done already, or a future to poll; `Err` is a
    /// panic, caught. (The caller matches on it where it lies: moving the
    /// result into an `Erased` first costs a copy of it.)
    #[inline(always)]
    fn start<'a>(
        &'a self,
        context: &'a (dyn Any + Send + Sync),
        args: &str,
    ) -> std::thread::Result<Erased<'a>> {
        std::panic::catch_unwind(AssertUnwindSafe(|| self.tool.call(context, args)))
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
    pub(crate) async fn run(
        &self,
        context: &(dyn Any + Send + Sync),
        args: &str,
    ) -> Result<String, Failure> {
        match self.start(context, args) {
            Ok(Erased::Done(result)) => result,
            Ok(Erased::Running(mut future)) => {
                futures::future::poll_fn(|cx| Entry::poll_running(&mut future, cx)).await
            }
            Err(panic) => Err(Failure::Panicked(panic_message(panic))),
        }
    }

    /// Reads argument text into the tool's input, running nothing. A panic
    /// is a failure.
    pub(crate) fn read(&self, args: &str) -> Result<Input, Failure> {
        std::panic::catch_unwind(AssertUnwindSafe(|| self.tool.read(args)))
            .unwrap_or_else(|panic| Err(Failure::Panicked(panic_message(panic))))
    }

    /// Runs the tool to the end with an input [`read`](Self::read) gave.
    pub(crate) async fn run_input(
        &self,
        context: &(dyn Any + Send + Sync),
        input: Input,
    ) -> Result<String, Failure> {
        let started = std::panic::catch_unwind(AssertUnwindSafe(|| self.tool.run(context, input)));
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
        let expected = self.spec.input_model().type_name();
        match failure {
            Failure::Args(error) => match crate::json::from_str_unique(args) {
                // A key given twice: a readable value, which may not be
                // the one the deserializer read. (The typed tools'
                // derives refuse it; the others are checked for it.)
                Err(Unread::Duplicate(path)) => ToolError::Deserialization {
                    tool,
                    problems: vec![Problem::Duplicate { path }],
                    message: None,
                    expected,
                },
                Err(Unread::Syntax(syntax)) => ToolError::InvalidArgs {
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
            Failure::Schema(error) => match *error {
                ToolError::Deserialization {
                    problems, message, ..
                } => ToolError::Deserialization {
                    tool,
                    problems,
                    message,
                    expected,
                },
                other => other,
            },
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
            Failure::Context(needed) => ToolError::Execution {
                tool,
                message: format!(
                    "it needs a context of type `{needed}`, and the call was given another; give the toolbox's calls the context it was built with"
                ),
                panicked: false,
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
///
/// `C` is the toolbox's [context](super::context); a call holds what it was
/// given (nothing for [`NoContext`]).
#[must_use = "a call does nothing unless it is awaited"]
pub struct Call<'a, C: ToolboxContext = NoContext> {
    /// The argument text, read in place; the slow path takes it.
    args: Cow<'a, str>,
    /// Dropped by `Call`'s own `Drop`, which looks at the state inline: a
    /// call that ended (the usual case) drops nothing more.
    state: ManuallyDrop<CallState<'a, C>>,
}

impl<C: ToolboxContext> Drop for Call<'_, C> {
    #[inline]
    fn drop(&mut self) {
        if matches!(*self.state, CallState::Running { .. } | CallState::Slow(..)) {
            drop(std::mem::replace(&mut *self.state, CallState::Done));
        }
    }
}

/// Where a call is. The first state's parts are all `Copy`, so the first
/// poll reads them where they are, and a sync tool's call ends without
/// moving the call's state or its arguments.
///
/// The two states that own something come first, so that `Call`'s drop
/// tells them from the others in one compare.
enum CallState<'a, C: ToolboxContext> {
    Running {
        entry: &'a Entry,
        max_argument_bytes: usize,
        future: BoxFuture<'a, Result<String, Failure>>,
        trace: Trace,
        /// For a recovery, which calls again.
        context: C::Given<'a>,
    },
    /// Off the fast path: a failure met the tool's policy (repair, coerce,
    /// retry, escalate), or an approval asks about the tool.
    Slow(BoxFuture<'a, Result<ToolOutput, ToolError>>, Trace),
    /// Not yet polled: what the call needs, all `Copy`, read where each
    /// part is used ([`Call::begun`]), so that the first poll holds in
    /// registers only what it is working on. (Fields of the variant, not a
    /// struct of its own, so that the tag shares a word with `allowed`.)
    Start {
        shared: &'a Shared,
        allowed: EffectSet,
        gates: Gates<'a>,
        name: &'a str,
        context: C::Given<'a>,
    },
    Done,
}

/// The parts of [`CallState::Start`].
struct Start<'a, C: ToolboxContext> {
    shared: &'a Shared,
    allowed: EffectSet,
    gates: Gates<'a>,
    name: &'a str,
    context: C::Given<'a>,
}

/// A call's `tool_call` span, when a subscriber records it; carried from
/// state to state, so that a call that ends in its first poll holds none.
type Trace = Option<Box<CallTrace>>;

/// What a poll of a call gives.
type Polled = Poll<Result<ToolOutput, ToolError>>;

/// The call's result, its span told first.
#[inline(always)]
fn ready(trace: Trace, result: Result<ToolOutput, ToolError>) -> Polled {
    if let Some(trace) = trace {
        trace.finish(&result);
    }
    Poll::Ready(result)
}

/// A call of a tool that some approval asks about: which approvals, and the
/// tool's position in the toolbox.
pub(super) struct Gated<'a> {
    gates: Gates<'a>,
    index: usize,
    /// The call's span, where the approvals' answer is recorded.
    span: Span,
    /// The call's context, which the approvals and the tool are lent.
    pub(super) context: &'a (dyn Any + Send + Sync),
}

impl Gated<'_> {
    /// Asks the approvals about `args`, which were just read into the input
    /// the tool will run with: `Err` is the refusal. The text last approved
    /// (`approved`) is not asked about again, so that a retry of an
    /// idempotent tool with the same arguments waits for no one.
    pub(super) async fn approve(
        &self,
        entry: &Entry,
        args: &str,
        approved: &mut Option<String>,
    ) -> Result<(), ToolError> {
        if approved.as_deref() == Some(args) {
            return Ok(());
        }
        // The input was read from this text, so it parses; if it did not,
        // no one is asked and nothing runs.
        let shown = serde_json::from_str(args)
            .map_err(|error| entry.explain(args, Failure::Args(Some(error))))?;
        let decision = self
            .gates
            .decide(self.index, &entry.spec, shown, self.context)
            .await;
        CallTrace::approval(&self.span, decision.is_ok());
        match decision {
            Ok(()) => {
                *approved = Some(args.to_owned());
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
        self.approve(entry, text, approved).await?;
        Ok(entry.run_input(self.context, input).await)
    }
}

/// The gated path: read the arguments, ask, then run the tool with the input
/// read. A failure before or after goes to the tool's policy, whose every
/// rewrite is read and asked about in turn.
async fn gated_call<'a>(
    entry: &'a Entry,
    gated: Gated<'a>,
    max: usize,
    args: Cow<'a, str>,
) -> Result<ToolOutput, ToolError> {
    let mut approved = None;
    let outcome = match entry.read(&args) {
        Err(failure) => Err(failure),
        Ok(input) => {
            gated.approve(entry, &args, &mut approved).await?;
            entry.run_input(gated.context, input).await
        }
    };
    let failure = match outcome {
        Ok(json) => return Ok(ToolOutput::from_json(json)),
        Err(failure) => failure,
    };
    if entry.policy.is_none() {
        return Err(entry.explain(&args, failure));
    }
    let context = gated.context;
    recover(
        entry,
        Some((&gated, approved)),
        context,
        max,
        args.into_owned(),
        failure,
    )
    .await
}

impl<'a, C: ToolboxContext> Call<'a, C> {
    pub(super) fn new(
        shared: &'a Shared,
        allowed: EffectSet,
        gates: Gates<'a>,
        name: &'a str,
        args: Cow<'a, str>,
        context: C::Given<'a>,
    ) -> Call<'a, C> {
        Call {
            args,
            state: ManuallyDrop::new(CallState::Start {
                shared,
                allowed,
                gates,
                name,
                context,
            }),
        }
    }

    /// The first poll: looks the tool up, checks its effects and the
    /// argument text's size, then runs the tool (a sync tool to its end),
    /// or hands the call to the gated path when an approval asks about the
    /// tool.
    #[inline(always)]
    fn start(&mut self, cx: &mut Context<'_>, trace: Trace) -> Polled {
        let entered = CallTrace::enter(&trace);
        let shared = self.begun().shared;
        let Some((index, entry)) = shared.find(self.begun().name) else {
            drop(entered);
            let Start { name, allowed, .. } = self.begun();
            return self.refused(trace, shared.unknown(name, allowed));
        };
        if !entry.spec.effects().is_subset_of(self.begun().allowed) {
            drop(entered);
            let Start { name, allowed, .. } = self.begun();
            return self.refused(trace, Shared::denied(name, entry, allowed));
        }
        if let Some(trace) = &trace {
            trace.found(entry.spec.effects());
        }
        let max = shared.max_argument_bytes;
        if let Err(error) = entry.check_size(&self.args, max) {
            drop(entered);
            return self.refused(trace, error);
        }
        let gates = self.begun().gates;
        let context = self.begun().context;
        if gates.ask_about(index, &entry.spec) {
            drop(entered);
            return self.gated(cx, entry, gates, index, max, trace, context);
        }
        let started = entry.start(C::erase(context), &self.args);
        drop(entered);
        match started {
            Ok(Erased::Done(Ok(json))) => {
                self.end_start();
                ready(trace, Ok(ToolOutput::from_json(json)))
            }
            Ok(Erased::Done(Err(failure))) => self.failed(cx, entry, max, failure, trace, context),
            Err(panic) => {
                let failure = Failure::Panicked(panic_message(panic));
                self.failed(cx, entry, max, failure, trace, context)
            }
            Ok(Erased::Running(future)) => {
                *self.state = CallState::Running {
                    entry,
                    max_argument_bytes: max,
                    future,
                    trace,
                    context,
                };
                self.poll_later(cx)
            }
        }
    }

    /// Refused before the tool was reached (an unknown name, effects not
    /// allowed, arguments too long): the call ends in its first poll.
    #[cold]
    #[inline(never)]
    fn refused(&mut self, trace: Trace, error: ToolError) -> Polled {
        self.end_start();
        ready(trace, Err(error))
    }

    /// The parts of a call not yet polled.
    #[inline(always)]
    fn begun(&self) -> Start<'a, C> {
        match *self.state {
            CallState::Start {
                shared,
                allowed,
                gates,
                name,
                context,
            } => Start {
                shared,
                allowed,
                gates,
                name,
                context,
            },
            _ => unreachable!("a call is started once"),
        }
    }

    /// The call ended in its first poll: `Done`, over a `Start` state, which
    /// owns nothing to drop.
    #[inline(always)]
    fn end_start(&mut self) {
        debug_assert!(matches!(*self.state, CallState::Start { .. }));
        std::mem::forget(std::mem::replace(&mut *self.state, CallState::Done));
    }

    /// [`start`](Self::start) in a recorded span: out of the untraced path.
    #[inline(never)]
    fn start_traced(&mut self, cx: &mut Context<'_>, trace: Trace) -> Polled {
        self.start(cx, trace)
    }

    /// Polls a call past its first poll: an async tool running, or the slow
    /// path (recovery, approval).
    #[inline(never)]
    fn poll_later(&mut self, cx: &mut Context<'_>) -> Polled {
        match std::mem::replace(&mut *self.state, CallState::Done) {
            CallState::Running {
                entry,
                max_argument_bytes: max,
                mut future,
                trace,
                context,
            } => {
                let entered = CallTrace::enter(&trace);
                let poll = Entry::poll_running(&mut future, cx);
                drop(entered);
                match poll {
                    Poll::Pending => {
                        *self.state = CallState::Running {
                            entry,
                            max_argument_bytes: max,
                            future,
                            trace,
                            context,
                        };
                        Poll::Pending
                    }
                    Poll::Ready(Ok(json)) => ready(trace, Ok(ToolOutput::from_json(json))),
                    Poll::Ready(Err(failure)) => {
                        self.failed(cx, entry, max, failure, trace, context)
                    }
                }
            }
            CallState::Slow(mut future, trace) => {
                let entered = CallTrace::enter(&trace);
                let poll = future.as_mut().poll(cx);
                drop(entered);
                match poll {
                    Poll::Pending => {
                        *self.state = CallState::Slow(future, trace);
                        Poll::Pending
                    }
                    Poll::Ready(result) => ready(trace, result),
                }
            }
            CallState::Start { .. } => unreachable!("a call starts in its first poll"),
            CallState::Done => panic!("`Call` polled after it completed"),
        }
    }

    /// The fast path failed: explain, or hand over to the tool's policy.
    #[cold]
    #[inline(never)]
    fn failed(
        &mut self,
        cx: &mut Context<'_>,
        entry: &'a Entry,
        max: usize,
        failure: Failure,
        trace: Trace,
        context: C::Given<'a>,
    ) -> Polled {
        let args = std::mem::take(&mut self.args);
        if entry.policy.is_none() {
            *self.state = CallState::Done;
            return ready(trace, Err(entry.explain(&args, failure)));
        }
        let context = C::erase(context);
        let future = Box::pin(recover(
            entry,
            None,
            context,
            max,
            args.into_owned(),
            failure,
        ));
        *self.state = CallState::Slow(future, trace);
        self.poll_later(cx)
    }

    /// An approval asks about the tool: the gated path.
    #[inline(never)]
    #[allow(clippy::too_many_arguments)] // the parts of a call, each from its place
    fn gated(
        &mut self,
        cx: &mut Context<'_>,
        entry: &'a Entry,
        gates: Gates<'a>,
        index: usize,
        max: usize,
        trace: Trace,
        context: C::Given<'a>,
    ) -> Polled {
        let args = std::mem::take(&mut self.args);
        let span = trace.as_ref().map_or_else(Span::none, |t| t.span().clone());
        let gated = Gated {
            gates,
            index,
            span,
            context: C::erase(context),
        };
        *self.state = CallState::Slow(Box::pin(gated_call(entry, gated, max, args)), trace);
        self.poll_later(cx)
    }
}

impl<C: ToolboxContext> Future for Call<'_, C> {
    type Output = Result<ToolOutput, ToolError>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Polled {
        let call = self.get_mut();
        let CallState::Start { name, .. } = *call.state else {
            return call.poll_later(cx);
        };
        // With no subscriber, the span code is not reached: `start` is
        // inlined here with no trace, and the branches on it fold away.
        match CallTrace::start(name) {
            None => call.start(cx, None),
            trace => call.start_traced(cx, trace),
        }
    }
}

impl<C: ToolboxContext> fmt::Debug for Call<'_, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match &*self.state {
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
