//! `tracing` spans for tool calls and model requests.
//!
//! With no subscriber (or one that does not want `INFO` spans of this
//! crate) a span is `Span::none()`: the macro reads one atomic and
//! branches, and nothing below, not even the clock, is touched.
//!
//! | span | fields |
//! |---|---|
//! | `tool_call` | `tool`, `effects`, `outcome` (`ok` or the error's [kind](crate::ToolError::kind)), `duration_us`, `recovered` (what recovery changed, counted), `approval` (`approved`, `refused`, or empty when none was asked) |
//! | `model_request` | `model` ([`Model::name`]), `messages`, `input_tokens`, `output_tokens`, `stop`, `calls`, `error` |

use std::mem::ManuallyDrop;
use std::time::Instant;

use tracing::field::Empty;
use tracing::level_filters::{LevelFilter, STATIC_MAX_LEVEL};
use tracing::span::EnteredSpan;
use tracing::{Level, Span};

use super::output::ToolOutput;
use crate::effect::EffectSet;
use crate::error::ToolError;
use crate::model::{Model, ModelError, Request, Response};

/// The span of one tool call, and when it started: only when a subscriber
/// records it (a call holds `None` otherwise, and pays no more).
pub(crate) struct CallTrace {
    span: Span,
    started: Instant,
}

impl CallTrace {
    /// A call of `tool` starts: its span, if it is recorded. With no
    /// subscriber that wants `INFO`, a load and a branch, and the span's
    /// code stays out of the caller.
    #[inline]
    pub(crate) fn start(tool: &str) -> Option<Box<CallTrace>> {
        if Level::INFO <= STATIC_MAX_LEVEL && Level::INFO <= LevelFilter::current() {
            CallTrace::recorded(tool)
        } else {
            None
        }
    }

    #[cold]
    #[inline(never)]
    fn recorded(tool: &str) -> Option<Box<CallTrace>> {
        let span = tracing::info_span!(
            "tool_call",
            tool,
            effects = Empty,
            outcome = Empty,
            duration_us = Empty,
            recovered = Empty,
            approval = Empty,
        );
        if span.is_disabled() {
            return None;
        }
        Some(Box::new(CallTrace {
            span,
            started: Instant::now(),
        }))
    }

    /// Enters the span of `trace`, if any, while a call is polled: the
    /// spans of what the call does (a model asked by recovery, an approval
    /// hook) nest in it.
    #[inline]
    pub(crate) fn enter(trace: &Option<Box<CallTrace>>) -> Entered {
        Entered(ManuallyDrop::new(trace.as_deref().map(CallTrace::entered)))
    }

    #[cold]
    #[inline(never)]
    fn entered(&self) -> EnteredSpan {
        self.span.clone().entered()
    }

    /// The span, to enter while the call is polled.
    #[inline]
    pub(crate) fn span(&self) -> &Span {
        &self.span
    }

    /// The tool was found, with these effects.
    pub(crate) fn found(&self, effects: EffectSet) {
        self.span
            .record("effects", tracing::field::display(effects));
    }

    /// The call ended with `result`.
    #[cold]
    #[inline(never)]
    pub(crate) fn finish(&self, result: &Result<ToolOutput, ToolError>) {
        let span = &self.span;
        span.record("duration_us", self.started.elapsed().as_micros() as u64);
        match result {
            Ok(output) => {
                span.record("outcome", "ok");
                if !output.recovery().is_empty() {
                    span.record("recovered", output.recovery().len() as u64);
                }
            }
            Err(error) => {
                span.record("outcome", error.kind());
            }
        }
    }

    /// The approvals' answer, recorded on the call's span.
    pub(crate) fn approval(span: &Span, approved: bool) {
        let answer = if approved { "approved" } else { "refused" };
        span.record("approval", answer);
    }
}

/// A span entered while a call is polled ([`CallTrace::enter`]); exited
/// when dropped. With no span, its drop is a branch, not a call.
pub(crate) struct Entered(ManuallyDrop<Option<EnteredSpan>>);

impl Drop for Entered {
    #[inline]
    fn drop(&mut self) {
        if let Some(entered) = self.0.take() {
            exit(entered);
        }
    }
}

#[cold]
#[inline(never)]
fn exit(entered: EnteredSpan) {
    drop(entered);
}

/// Asks `model`, in a `model_request` span that records what it cost.
pub(crate) async fn complete<M: Model + ?Sized>(
    model: &M,
    request: Request,
) -> Result<Response, ModelError> {
    let span = tracing::info_span!(
        "model_request",
        model = model.name(),
        messages = request.messages.len(),
        input_tokens = Empty,
        output_tokens = Empty,
        stop = Empty,
        calls = Empty,
        error = Empty,
    );
    let answer = tracing::Instrument::instrument(model.complete(request), span.clone()).await;
    if !span.is_disabled() {
        match &answer {
            Ok(response) => {
                span.record("input_tokens", response.usage.input_tokens);
                span.record("output_tokens", response.usage.output_tokens);
                span.record("stop", tracing::field::debug(&response.stop));
                span.record("calls", response.calls.len());
            }
            Err(error) => {
                span.record("error", tracing::field::display(error));
            }
        }
    }
    answer
}
