//! Dispatch: one call from a name and argument text to a [`ToolOutput`] or a
//! [`ToolError`](crate::ToolError). The fast path (look up, gate, deserialize, run) allocates
//! nothing for a sync tool; only a failure reaches [`Entry::explain`] and, when
//! the tool has a policy, the recovery loop.

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

use super::erased::{Erased, ErasedTool, Failure};
use super::lookup::Fnv;
use super::output::ToolOutput;
use super::recovery::recover;
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
        name: &'a str,
        args: Args<'a>,
    },
    Running {
        entry: &'a Entry,
        max_argument_bytes: usize,
        args: Args<'a>,
        future: BoxFuture<'a, Result<String, Failure>>,
    },
    /// A failure met the tool's policy: repair, coerce, retry, escalate.
    Recovering(BoxFuture<'a, Result<ToolOutput, ToolError>>),
    Done,
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
        name: &'a str,
        args: Args<'a>,
    ) -> Call<'a> {
        Call {
            state: CallState::Start {
                shared,
                allowed,
                name,
                args,
            },
        }
    }
}

impl Future for Call<'_> {
    type Output = Result<ToolOutput, ToolError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        loop {
            let (entry, max, args, failure) =
                match std::mem::replace(&mut this.state, CallState::Done) {
                    CallState::Start {
                        shared,
                        allowed,
                        name,
                        args,
                    } => {
                        let entry = match shared.entry(name, allowed) {
                            Ok(entry) => entry,
                            Err(error) => return Poll::Ready(Err(error)),
                        };
                        let max = shared.max_argument_bytes;
                        let started = match args {
                            // One comparison on the fast path.
                            Args::Text(text) => entry
                                .check_size(&text, max)
                                .map(|()| (entry.start(&text), Args::Text(text))),
                            Args::Json(value) => entry.start_json(value, max),
                        };
                        let (erased, args) = match started {
                            Ok(started) => started,
                            Err(error) => return Poll::Ready(Err(error)),
                        };
                        match erased {
                            Erased::Done(Ok(json)) => {
                                return Poll::Ready(Ok(ToolOutput::from_json(json)))
                            }
                            Erased::Done(Err(failure)) => (entry, max, args, failure),
                            Erased::Running(future) => {
                                this.state = CallState::Running {
                                    entry,
                                    max_argument_bytes: max,
                                    args,
                                    future,
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
                    } => match Entry::poll_running(&mut future, cx) {
                        Poll::Pending => {
                            this.state = CallState::Running {
                                entry,
                                max_argument_bytes: max,
                                args,
                                future,
                            };
                            return Poll::Pending;
                        }
                        Poll::Ready(Ok(json)) => {
                            return Poll::Ready(Ok(ToolOutput::from_json(json)))
                        }
                        Poll::Ready(Err(failure)) => (entry, max, args, failure),
                    },
                    CallState::Recovering(mut future) => {
                        let poll = future.as_mut().poll(cx);
                        if poll.is_pending() {
                            this.state = CallState::Recovering(future);
                        }
                        return poll;
                    }
                    CallState::Done => panic!("`Call` polled after it completed"),
                };
            // The fast path failed: explain, or hand over to the tool's policy.
            let args = args.into_text();
            if entry.policy.is_none() {
                return Poll::Ready(Err(entry.explain(&args, failure)));
            }
            this.state =
                CallState::Recovering(Box::pin(recover(entry, max, args.into_owned(), failure)));
        }
    }
}

impl fmt::Debug for Call<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match &self.state {
            CallState::Start { name, .. } => format!("not started: {name}"),
            CallState::Running { entry, .. } => format!("running: {}", entry.spec.name()),
            CallState::Recovering(_) => "recovering".to_owned(),
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
