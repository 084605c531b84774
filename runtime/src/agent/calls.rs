//! The calls of one answer: each admitted within the limits (or not run),
//! those that do not write run together, each `Write` call alone and in
//! order, and every result handed back to the model.

use std::borrow::Cow;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{Agent, CallOutcome, CallRecord, Event, Exit, OnRefusal, State};
use crate::durable::{AnswerHook, Before};
use crate::effect::{Effect, Effects};
use crate::model::{Message, Model, ToolResult};
use crate::reader::ToolCall;
use crate::toolbox::trace::WithCallId;
use crate::toolbox::{ApprovalNote, ToolOutput, Toolbox, ToolboxContext};
use crate::ToolError;

/// A call that failed: sent again unchanged, it is not run again.
pub(super) struct Failed {
    name: String,
    /// The arguments, parsed when they are JSON (so that spacing and key
    /// order do not make a call new), else as written.
    arguments: Arguments,
    error: String,
    /// Times it was sent again.
    repeats: u32,
}

#[derive(PartialEq)]
enum Arguments {
    Json(Value),
    Text(String),
}

impl Arguments {
    fn of(call: &ToolCall) -> Arguments {
        match serde_json::from_str(&call.arguments) {
            Ok(value) => Arguments::Json(value),
            Err(_) => Arguments::Text(call.arguments.clone()),
        }
    }
}

/// Whether a call may be dispatched now.
pub(super) enum Admit {
    Run,
    /// Not run; the model is told why, and the run goes on.
    Skip(String),
    /// Not run, nor any after it: the run stops.
    Stop(Exit, String),
}

impl<A: Effects, O, C: ToolboxContext> State<'_, A, O, C> {
    pub(super) fn admit(&mut self, call: &ToolCall, limits: &super::Limits) -> Admit {
        if self.dispatched >= limits.tool_calls {
            return Admit::Stop(
                Exit::OutOfToolCalls {
                    limit: limits.tool_calls,
                },
                format!(
                    "Not run: the limit of {} tool calls is reached.",
                    limits.tool_calls
                ),
            );
        }
        if self.out_of_time() {
            return Admit::Stop(
                Exit::Deadline {
                    limit: limits.wall_time,
                },
                "Not run: the time for this task is up.".to_owned(),
            );
        }
        if !self.failed.is_empty() {
            let arguments = Arguments::of(call);
            let failed = self
                .failed
                .iter_mut()
                .find(|f| f.name == call.name && f.arguments == arguments);
            if let Some(failed) = failed {
                failed.repeats += 1;
                if failed.repeats > 1 {
                    let reason = format!(
                        "Not run: this exact call failed before and was sent again unchanged: {}",
                        failed.error
                    );
                    let exit = Exit::Repeated {
                        call: call.clone(),
                        error: failed.error.clone(),
                    };
                    return Admit::Stop(exit, reason);
                }
                return Admit::Skip(format!(
                    "Not run: this exact call already failed ({}). Sending it again \
                     unchanged will not help: change the arguments, call another tool, or \
                     answer without it.",
                    failed.error
                ));
            }
        }
        self.dispatched += 1;
        Admit::Run
    }

    /// Records what became of a call and hands its result to the model.
    pub(super) fn record(
        &mut self,
        step: u32,
        call: &ToolCall,
        outcome: CallOutcome,
        duration: Duration,
    ) {
        let result = match &outcome {
            CallOutcome::Ok(output) => {
                let content = match output.note_for_model() {
                    Some(note) => format!("{}\n{note}", output.json()),
                    None => output.json().to_owned(),
                };
                ToolResult::ok(call, content)
            }
            CallOutcome::Err(error) => {
                self.fail(call, error.for_model());
                ToolResult::error(call, error)
            }
            CallOutcome::TimedOut { after } => {
                // Told as a plan's call stopped so is told.
                let message = ToolError::TimedOut {
                    tool: call.name.clone(),
                    after: *after,
                }
                .for_model();
                self.fail(call, message.clone());
                ToolResult::refused(call, message)
            }
            CallOutcome::NotRun { reason } => ToolResult::refused(call, reason.clone()),
        };
        self.messages.push(Message::tool_result(result));
        let record = CallRecord {
            step,
            call: call.clone(),
            outcome,
            duration,
        };
        self.emit(|_| Event::CallFinished(record.clone()));
        self.calls.push(record);
    }

    fn fail(&mut self, call: &ToolCall, error: String) {
        self.failed.push(Failed {
            name: call.name.clone(),
            arguments: Arguments::of(call),
            error,
            repeats: 0,
        });
    }

    /// Records the calls as not run, for `reason`.
    pub(super) fn not_run(&mut self, step: u32, calls: &[ToolCall], reason: &str) {
        for call in calls {
            let outcome = CallOutcome::NotRun {
                reason: reason.to_owned(),
            };
            self.record(step, call, outcome, Duration::ZERO);
        }
    }
}

impl<M: Model, A: Effects, O, C: ToolboxContext> Agent<M, A, O, C> {
    /// Runs the calls of one answer: `Some` exit if the run stops.
    pub(super) async fn run_calls(
        &self,
        state: &mut State<'_, A, O, C>,
        step: u32,
        calls: &[ToolCall],
    ) -> Option<Exit> {
        let toolbox = state.toolbox.clone();
        let context = state.context;
        let mut next = 0;
        while next < calls.len() {
            let end = batch_end(&toolbox, calls, next);
            let batch = &calls[next..end];
            let mut outcomes: Vec<Option<(CallOutcome, Duration)>> = vec![None; batch.len()];
            let mut running = Vec::new();
            let mut stop = None;
            for (i, call) in batch.iter().enumerate() {
                match state.admit(call, &self.limits) {
                    Admit::Run => running.push(i),
                    Admit::Skip(reason) => {
                        outcomes[i] = Some((CallOutcome::NotRun { reason }, Duration::ZERO));
                    }
                    Admit::Stop(exit, reason) => {
                        stop = Some((next + i, exit, reason));
                        break;
                    }
                }
            }
            // A durable run's journal is asked about each call in order
            // (its number is its place in the run), before any runs: it
            // replays a recorded result, or records the call's start.
            let mut dispatched = Vec::with_capacity(running.len());
            let mut halt = None;
            for &i in &running {
                let Some(journal) = state.journal else {
                    dispatched.push((i, None));
                    continue;
                };
                let gated = toolbox.asks_approval(&batch[i].name, None);
                match journal
                    .before(&batch[i].name, &batch[i].arguments, gated)
                    .await
                {
                    Before::Run(number) => dispatched.push((i, Some(number))),
                    Before::Replay(result) => {
                        outcomes[i] = Some((CallOutcome::of(result), Duration::ZERO));
                    }
                    Before::Stop(message) => {
                        halt = Some(message);
                        break;
                    }
                }
            }
            let deadline = state.deadline;
            let results = futures::future::join_all(dispatched.iter().map(|&(i, _)| {
                self.dispatch(&toolbox, state.journal, context, &batch[i], deadline)
            }))
            .await;
            for (&(i, number), (result, duration)) in dispatched.iter().zip(results) {
                if let (Some(journal), Some(number)) = (state.journal, number) {
                    if let Err(message) = journal.after(number, &batch[i].name, &result).await {
                        halt.get_or_insert(message);
                    }
                }
                outcomes[i] = Some((CallOutcome::of(result), duration));
            }
            if let Some(message) = halt {
                return Some(super::halted(message));
            }
            let mut exit = None;
            let mut recorded = next;
            for (call, outcome) in batch.iter().zip(outcomes) {
                let Some((outcome, duration)) = outcome else {
                    break;
                };
                if exit.is_none() {
                    exit = self.stops(&outcome, state);
                }
                state.record(step, call, outcome, duration);
                recorded += 1;
            }
            if let Some(exit) = exit {
                state.not_run(
                    step,
                    &calls[recorded..],
                    "Not run: the run stopped before it.",
                );
                return Some(exit);
            }
            if let Some((first, exit, reason)) = stop {
                state.not_run(step, &calls[first..], &reason);
                return Some(exit);
            }
            next = end;
        }
        None
    }

    /// Whether this outcome ends the run.
    fn stops(&self, outcome: &CallOutcome, state: &State<'_, A, O, C>) -> Option<Exit> {
        match outcome {
            CallOutcome::Err(ToolError::Escalation(escalation)) => {
                Some(Exit::Escalation(escalation.clone()))
            }
            CallOutcome::Err(ToolError::Refused { tool, reason })
                if self.on_refusal == OnRefusal::Stop =>
            {
                Some(Exit::Refused {
                    tool: tool.clone(),
                    reason: reason.clone(),
                })
            }
            CallOutcome::TimedOut { .. } if state.out_of_time() => Some(Exit::Deadline {
                limit: self.limits.wall_time,
            }),
            _ => None,
        }
    }

    /// Dispatches one call within the limits on each call (as a plan's
    /// calls are) and the run's deadline.
    async fn dispatch(
        &self,
        toolbox: &Toolbox<A, C>,
        journal: Option<&dyn AnswerHook>,
        context: &C::Value,
        call: &ToolCall,
        deadline: Option<Instant>,
    ) -> (Result<ToolOutput, ToolError>, Duration) {
        let start = Instant::now();
        let noted = journal.map(|journal| journal as &dyn ApprovalNote);
        let dispatched = WithCallId::new(
            call.id.as_deref(),
            toolbox.call_noted(context, &call.name, Cow::Borrowed(&call.arguments), noted),
        );
        let result = self.limits.call.run(&call.name, dispatched, deadline).await;
        (result, start.elapsed())
    }
}

impl CallOutcome {
    /// What became of a dispatched call.
    fn of(result: Result<ToolOutput, ToolError>) -> CallOutcome {
        // Only the time limit makes a `TimedOut`: dispatch does not.
        match result {
            Ok(output) => CallOutcome::Ok(output),
            Err(ToolError::TimedOut { after, .. }) => CallOutcome::TimedOut { after },
            Err(error) => CallOutcome::Err(error),
        }
    }
}

/// The end of the batch starting at `start`: one `Write` call, or every
/// call up to the next `Write` one (an unknown name does not write: it is
/// refused unrun).
fn batch_end<A: Effects, C: ToolboxContext>(
    toolbox: &Toolbox<A, C>,
    calls: &[ToolCall],
    start: usize,
) -> usize {
    let writes = |call: &ToolCall| {
        toolbox
            .spec(&call.name)
            .is_some_and(|spec| spec.effects().contains(Effect::Write))
    };
    if writes(&calls[start]) {
        return start + 1;
    }
    start
        + calls[start..]
            .iter()
            .take_while(|call| !writes(call))
            .count()
}
