//! A run, live: [`Agent::run_stream`](super::Agent::run_stream) gives the
//! [`Event`]s of a run as they happen, its last item the whole [`Run`].
//!
//! The run is the same loop as [`Agent::run`](super::Agent::run)'s: the
//! stream polls it and hands out what it recorded since, so a streamed and
//! a plain run of the same model give the same [`Run`]. The model is asked
//! with [`Model::stream`](crate::model::Model::stream), so text and
//! reasoning come as the model writes them (a model that does not stream
//! gives its answer in one piece). Dropping the stream drops the run: the
//! call in progress is cancelled where it waits (a sync tool has finished
//! inside its poll), and nothing after it starts.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use futures::future::BoxFuture;
use futures::Stream;
use serde_json::Value;

use super::run::{CallRecord, PlanRecord, Run};
use crate::model::{StopReason, Usage};
use crate::plan::Preview;
use crate::reader::ToolCall;

/// One thing that happened in a run, in the order it happened.
///
/// ```
/// # futures::executor::block_on(async {
/// use futures::StreamExt;
/// use typed_tools::agent::{Agent, Event};
/// use typed_tools::model::ScriptedModel;
/// use typed_tools::{tool, Toolbox};
///
/// /// Look up the weather in a city.
/// #[tool(effects = Read)]
/// fn weather(city: String) -> String { format!("sunny in {city}") }
///
/// let toolbox = Toolbox::builder().tool(Weather).build().unwrap();
/// let model = ScriptedModel::new([
///     r#"[{"name": "weather", "arguments": {"city": "Lima"}}]"#,
///     "It is sunny in Lima.",
/// ]);
/// let agent = Agent::new(&toolbox, model);
/// let events: Vec<Event> = agent.run_stream("Weather in Lima?").collect().await;
/// let names: Vec<&str> = events.iter().map(Event::name).collect();
/// assert_eq!(
///     names,
///     ["step", "text", "answered", "call_proposed", "call_finished", "used",
///      "step", "text", "answered", "used", "finished"]
/// );
/// let Some(Event::Finished(run)) = events.last() else { unreachable!() };
/// assert_eq!(run.answer(), Some("It is sunny in Lima."));
/// # });
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Event<O = String> {
    /// A step starts: the model is asked (the first step is 1).
    Step {
        /// The step.
        step: u32,
    },
    /// More of the model's answer, as it writes it.
    Text(String),
    /// More of the model's reasoning, as it thinks: never part of the answer.
    Reasoning(String),
    /// The model's answer is complete.
    Answered {
        /// The step.
        step: u32,
        /// Why the model stopped.
        stop: StopReason,
        /// What the answer cost (estimated, when the provider said nothing).
        usage: Usage,
    },
    /// The model proposed a call, before anything is decided about it: it
    /// may still be refused, or not run for a limit.
    CallProposed {
        /// The step whose answer made it.
        step: u32,
        /// The call, as the model made it.
        call: ToolCall,
    },
    /// The approvals that ask about a call approved it, shown exactly these
    /// arguments (after any repair or coercion): it runs next. A refusal is
    /// a [`CallFinished`](Self::CallFinished) whose outcome is
    /// [`ToolError::Refused`](crate::ToolError::Refused), with the reason.
    Approved {
        /// The tool.
        tool: String,
        /// The arguments it runs with.
        args: Value,
    },
    /// What became of a call: its output (with what recovery repaired, in
    /// [`ToolOutput::recovery`](crate::toolbox::ToolOutput::recovery)), its
    /// error, a time-out, or why it did not run. The record the run keeps.
    CallFinished(CallRecord),
    /// A plan the model wrote passed the checks: what it may call, and with
    /// which effects, before it runs.
    PlanChecked {
        /// The step whose answer held it.
        step: u32,
        /// What it may do.
        preview: Preview,
    },
    /// A plan ran (its outcome and the trace of its calls) or was refused
    /// (why, as the model was told; nothing ran). The record the run keeps.
    PlanFinished(PlanRecord),
    /// What the run has used so far, after each step.
    Used {
        /// Requests made to the model.
        steps: u32,
        /// Tool calls dispatched, a plan's included.
        tool_calls: u32,
        /// Tokens spent (estimated where a provider reported none).
        usage: Usage,
        /// Time since the run started.
        elapsed: Duration,
    },
    /// The run ended: why, and everything it did. The last event.
    Finished(Run<O>),
}

impl<O> Event<O> {
    /// The event's name, one word: `step`, `text`, `call_proposed`, ...
    pub fn name(&self) -> &'static str {
        match self {
            Event::Step { .. } => "step",
            Event::Text(_) => "text",
            Event::Reasoning(_) => "reasoning",
            Event::Answered { .. } => "answered",
            Event::CallProposed { .. } => "call_proposed",
            Event::Approved { .. } => "approved",
            Event::CallFinished(_) => "call_finished",
            Event::PlanChecked { .. } => "plan_checked",
            Event::PlanFinished(_) => "plan_finished",
            Event::Used { .. } => "used",
            Event::Finished(_) => "finished",
        }
    }
}

/// Where a streamed run puts its events until the stream hands them out.
#[derive(Debug)]
pub(crate) struct Sink<O>(Mutex<VecDeque<Event<O>>>);

impl<O> Default for Sink<O> {
    fn default() -> Sink<O> {
        Sink(Mutex::new(VecDeque::new()))
    }
}

impl<O> Sink<O> {
    pub(crate) fn push(&self, event: Event<O>) {
        self.queue().push_back(event);
    }

    fn pop(&self) -> Option<Event<O>> {
        self.queue().pop_front()
    }

    fn queue(&self) -> std::sync::MutexGuard<'_, VecDeque<Event<O>>> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// The events of a run, live: see [`Agent::run_stream`](super::Agent::run_stream).
/// Dropping it cancels the run.
#[must_use = "a run stream does nothing unless polled"]
pub struct RunStream<'a, O = String> {
    run: Option<BoxFuture<'a, Run<O>>>,
    sink: Arc<Sink<O>>,
}

impl<O> std::fmt::Debug for RunStream<'_, O> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunStream")
            .field("running", &self.run.is_some())
            .finish_non_exhaustive()
    }
}

impl<'a, O> RunStream<'a, O> {
    pub(crate) fn new(run: BoxFuture<'a, Run<O>>, sink: Arc<Sink<O>>) -> RunStream<'a, O> {
        RunStream {
            run: Some(run),
            sink,
        }
    }
}

impl<O> Stream for RunStream<'_, O> {
    type Item = Event<O>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Event<O>>> {
        if let Some(event) = self.sink.pop() {
            return Poll::Ready(Some(event));
        }
        let Some(run) = self.run.as_mut() else {
            return Poll::Ready(None);
        };
        // The run records events as it goes: polled until it has one to
        // hand out, or waits.
        match run.as_mut().poll(cx) {
            Poll::Ready(run) => {
                self.run = None;
                self.sink.push(Event::Finished(run));
            }
            Poll::Pending => {}
        }
        match self.sink.pop() {
            Some(event) => Poll::Ready(Some(event)),
            None if self.run.is_none() => Poll::Ready(None),
            None => Poll::Pending,
        }
    }
}
