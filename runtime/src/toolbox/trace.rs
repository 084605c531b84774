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
//!
//! Each also carries the attributes of OpenTelemetry's semantic conventions
//! for generative AI, so that an OpenTelemetry backend (through
//! `tracing-opentelemetry`) shows them without a mapping: `otel.name` (the
//! span's name there: `execute_tool {tool}`, `chat {model}`), `otel.kind`,
//! `gen_ai.operation.name` (`execute_tool`, `chat`), `gen_ai.tool.name`,
//! `gen_ai.tool.call.id` (when an agent made the call), `gen_ai.tool.type`,
//! `gen_ai.provider.name` and `gen_ai.request.model` (from [`Model::name`],
//! `provider/model`), `gen_ai.request.max_tokens`,
//! `gen_ai.response.finish_reasons`, `gen_ai.usage.input_tokens`,
//! `gen_ai.usage.output_tokens`, and `error.type` on a failure.

use std::cell::RefCell;
use std::future::Future;
use std::mem::ManuallyDrop;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use tracing::field::Empty;
use tracing::level_filters::{LevelFilter, STATIC_MAX_LEVEL};
use tracing::span::EnteredSpan;
use tracing::{Level, Span};

use super::output::ToolOutput;
use crate::effect::EffectSet;
use crate::error::ToolError;
use crate::model::{Model, ModelError, Request, Response, StopReason};

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
            otel.name = format!("execute_tool {tool}"),
            otel.kind = "internal",
            gen_ai.operation.name = "execute_tool",
            gen_ai.tool.name = tool,
            gen_ai.tool.type = "function",
            gen_ai.tool.call.id = Empty,
            error.r#type = Empty,
        );
        if span.is_disabled() {
            return None;
        }
        CALL_ID.with(|id| {
            if let Some(id) = &*id.borrow() {
                span.record("gen_ai.tool.call.id", &**id);
            }
        });
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
                span.record("error.type", error.kind());
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

/// The provider and the model, as OpenTelemetry names them, from
/// [`Model::name`] (`provider/model`; a name with no `/` is the model's).
fn provider_and_model(name: &str) -> (&str, &str) {
    name.split_once('/').unwrap_or(("unknown", name))
}

/// A `model_request` span for `request` to `model`.
pub(crate) fn model_span<M: Model + ?Sized>(model: &M, request: &Request) -> Span {
    let (provider, model_name) = provider_and_model(model.name());
    tracing::info_span!(
        "model_request",
        model = model.name(),
        messages = request.messages.len(),
        input_tokens = Empty,
        output_tokens = Empty,
        stop = Empty,
        calls = Empty,
        error = Empty,
        otel.name = format!("chat {model_name}"),
        otel.kind = "client",
        gen_ai.operation.name = "chat",
        gen_ai.provider.name = provider,
        gen_ai.request.model = model_name,
        gen_ai.request.max_tokens = request.max_tokens,
        gen_ai.response.finish_reasons = Empty,
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        error.r#type = Empty,
    )
}

/// Records on a `model_request` span what the request came to.
pub(crate) fn record_answer(span: &Span, answer: &Result<Response, ModelError>) {
    if span.is_disabled() {
        return;
    }
    match answer {
        Ok(response) => {
            span.record("input_tokens", response.usage.input_tokens);
            span.record("output_tokens", response.usage.output_tokens);
            span.record("gen_ai.usage.input_tokens", response.usage.input_tokens);
            span.record("gen_ai.usage.output_tokens", response.usage.output_tokens);
            span.record("stop", tracing::field::debug(&response.stop));
            span.record(
                "gen_ai.response.finish_reasons",
                format!("[\"{}\"]", finish_reason(&response.stop)),
            );
            span.record("calls", response.calls.len());
        }
        Err(error) => {
            span.record("error", tracing::field::display(error));
            span.record("error.type", error_type(error));
        }
    }
}

/// A stop reason in OpenTelemetry's words (OpenAI's finish reasons).
fn finish_reason(stop: &StopReason) -> &str {
    match stop {
        StopReason::EndTurn => "stop",
        StopReason::ToolUse => "tool_calls",
        StopReason::MaxTokens => "length",
        StopReason::StopSequence => "stop",
        StopReason::Refused => "content_filter",
        StopReason::Other(other) => other,
    }
}

fn error_type(error: &ModelError) -> &'static str {
    match error {
        ModelError::Status { .. } => "status",
        ModelError::RateLimited { .. } => "rate_limited",
        ModelError::Timeout { .. } => "timeout",
        ModelError::Connection { .. } => "connection",
        ModelError::Malformed { .. } => "malformed",
        ModelError::Config { .. } => "config",
        _ => "other",
    }
}

/// Asks `model`, in a `model_request` span that records what it cost.
pub(crate) async fn complete<M: Model + ?Sized>(
    model: &M,
    request: Request,
) -> Result<Response, ModelError> {
    let span = model_span(model, &request);
    let answer = tracing::Instrument::instrument(model.complete(request), span.clone()).await;
    record_answer(&span, &answer);
    answer
}

thread_local! {
    /// The provider's id of the call being polled, for its span: set by
    /// [`WithCallId`] around each poll, read when the span is made.
    static CALL_ID: RefCell<Option<Arc<str>>> = const { RefCell::new(None) };
}

/// A call polled with its provider's id at hand, so that its `tool_call`
/// span records it (`gen_ai.tool.call.id`). Only when spans are recorded is
/// anything set.
pub(crate) struct WithCallId<F> {
    id: Option<Arc<str>>,
    inner: Pin<Box<F>>,
}

impl<F> WithCallId<F> {
    pub(crate) fn new(id: Option<&str>, inner: F) -> WithCallId<F> {
        let recorded = Level::INFO <= STATIC_MAX_LEVEL && Level::INFO <= LevelFilter::current();
        WithCallId {
            id: id.filter(|_| recorded).map(Arc::from),
            inner: Box::pin(inner),
        }
    }
}

impl<F: Future> Future for WithCallId<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let Some(id) = self.id.clone() else {
            return self.inner.as_mut().poll(cx);
        };
        let previous = CALL_ID.with(|slot| slot.replace(Some(id)));
        let polled = self.inner.as_mut().poll(cx);
        CALL_ID.with(|slot| *slot.borrow_mut() = previous);
        polled
    }
}
