//! The recovery loop: a failed call, run through its tool's [`Policy`] (fix,
//! sanitize, retry, give up) until it succeeds or the steps run out. The
//! policy data lives in [`recover`](crate::recover); this is what runs it.

use std::any::Any;
use std::sync::atomic::{AtomicU64, Ordering};

use super::dispatch::{Entry, Gated};
use super::erased::Failure;
use super::output::ToolOutput;
use super::timer::Sleep;
use crate::error::{Escalation, NextStep, ToolError};
use crate::model::{Message, Request};
use crate::recover::{Fix, GiveUp, Policy, Recovered};
use crate::repair::{self, Repaired};

/// A sample in `[0, 1)` for jitter: xorshift over a shared counter seeded by the
/// clock. Not cryptographic; it only has to spread retries apart.
pub(crate) fn jitter_sample() -> f64 {
    static STATE: AtomicU64 = AtomicU64::new(0);
    let mut x = STATE.load(Ordering::Relaxed);
    if x == 0 {
        x = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0x9E37_79B9_7F4A_7C15, |d| d.as_nanos() as u64)
            | 1;
    }
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    STATE.store(x, Ordering::Relaxed);
    (x >> 11) as f64 / (1u64 << 53) as f64
}

/// The recovery of one failed call, by the tool's policy: each step, then the
/// call again, until it succeeds or the steps run out. A step whose rewrite
/// is longer than `max` bytes (the toolbox's limit on argument text) ends
/// recovery with [`ToolError::ArgsTooLarge`].
///
/// For a tool an approval asks about (`gated`, with the text approved so
/// far), each call again reads the rewritten text, asks about what it read,
/// and runs with that; a refusal ends recovery with
/// [`ToolError::Refused`], and the tool does not run. Each call again is
/// lent the call's `context`.
pub(crate) async fn recover(
    entry: &Entry,
    gated: Option<(&Gated<'_>, Option<String>)>,
    context: &(dyn Any + Send + Sync),
    max: usize,
    args: String,
    failure: Failure,
) -> Result<ToolOutput, ToolError> {
    let (gated, mut approved) = match gated {
        Some((gated, approved)) => (Some(gated), approved),
        None => (None, None),
    };
    let mut run = Run {
        entry,
        policy: &entry.policy,
        notes: Vec::new(),
        next_fix: 0,
        model_asked: vec![0; entry.policy.fix.len()],
        sanitized: false,
        executions: 1,
        fixes: 0,
    };
    let mut text = args;
    let mut failure = failure;
    // The first error is kept as the original, not cloned: its problems
    // may be thousands.
    let mut original: Option<ToolError> = None;
    let mut latest: Option<ToolError> = None;
    loop {
        let explained = entry.explain(&text, failure);
        if original.is_none() {
            original = Some(explained);
        } else {
            latest = Some(explained);
        }
        let error = latest.as_ref().or(original.as_ref()).expect("one is set");
        let next = match error {
            ToolError::InvalidArgs { .. } => run.fix(&text, error).await,
            ToolError::Deserialization { .. } => match run.sanitize(&text) {
                Some(coerced) => Some(coerced),
                None => run.ask_model(&text, error).await,
            },
            ToolError::Execution { .. } => run.retry(error).await.then(|| text.clone()),
            _ => None,
        };
        let Some(next) = next else {
            let original = original.clone().expect("set on the first pass");
            return Err(run.give_up(error.clone(), original));
        };
        entry.check_size(&next, max)?;
        text = next;
        let outcome = match gated {
            None => entry.run(context, &text).await,
            Some(gated) => gated.attempt(entry, &text, &mut approved).await?,
        };
        match outcome {
            Ok(json) => return Ok(ToolOutput::recovered(json, run.notes)),
            Err(again) => failure = again,
        }
    }
}

struct Run<'a> {
    entry: &'a Entry,
    policy: &'a Policy,
    notes: Vec<Recovered>,
    /// The fix step to try next.
    next_fix: usize,
    /// How many times each model fix step was asked, by its position in
    /// `policy.fix`; never reset, so a step is asked at most `attempts` times.
    model_asked: Vec<u32>,
    sanitized: bool,
    /// Calls of the tool so far.
    executions: u32,
    /// Fix attempts so far (the repair budget spent).
    fixes: u32,
}

impl Run<'_> {
    /// The next fix step that changes the text, in order.
    async fn fix(&mut self, text: &str, error: &ToolError) -> Option<String> {
        while let Some(step) = self.policy.fix.get(self.next_fix) {
            match step {
                Fix::Repair(options) => {
                    self.next_fix += 1;
                    let Ok(repaired) = repair::repair_with(text, options) else {
                        continue;
                    };
                    if !repaired.is_unchanged() {
                        self.fixes += 1;
                        // The first few of each kind, then how many more.
                        self.notes
                            .extend(repaired.repairs().iter().cloned().map(Recovered::Repaired));
                        self.notes.extend(
                            repaired
                                .omitted_by_kind()
                                .iter()
                                .map(|&(kind, count)| Recovered::MoreRepairs { kind, count }),
                        );
                        return Some(repaired.json().to_owned());
                    }
                }
                Fix::Function(function) => {
                    self.next_fix += 1;
                    if let Some(fixed) = function(text).filter(|fixed| fixed != text) {
                        self.fixes += 1;
                        self.notes.push(Recovered::Rewritten {
                            by: "function",
                            attempt: 1,
                        });
                        return Some(fixed);
                    }
                }
                Fix::Model { .. } => {
                    if let Some(fixed) = self.ask_model(text, error).await {
                        return Some(fixed);
                    }
                }
            }
        }
        None
    }

    /// Coercion towards the schema, once.
    fn sanitize(&mut self, text: &str) -> Option<String> {
        if !self.policy.sanitize || self.sanitized {
            return None;
        }
        self.sanitized = true;
        // Arguments that give a key twice are not coerced into giving it once.
        let mut value = crate::json::from_str_unique(text).ok()?;
        let coercions = self
            .entry
            .spec
            .input_model()
            .coerce(&mut value, Repaired::KEPT_PER_KIND);
        if coercions.is_empty() {
            return None;
        }
        self.fixes += 1;
        // The first few of each kind, then how many more.
        let more = coercions
            .omitted()
            .map(|(kind, count)| Recovered::MoreCoercions { kind, count });
        let more: Vec<Recovered> = more.collect();
        self.notes
            .extend(coercions.kept.into_iter().map(Recovered::Coerced));
        self.notes.extend(more);
        Some(value.to_string())
    }

    /// The model fix step at `next_fix` (or the first one, for wrong shapes),
    /// while it has attempts left.
    async fn ask_model(&mut self, text: &str, error: &ToolError) -> Option<String> {
        let is_model = |f: &Fix| matches!(f, Fix::Model { .. });
        let position = if self.policy.fix.get(self.next_fix).is_some_and(is_model) {
            self.next_fix
        } else {
            // A wrong shape, after coercion: the first model step with attempts left.
            (0..self.policy.fix.len()).find(|&i| match &self.policy.fix[i] {
                Fix::Model { attempts, .. } => self.model_asked[i] < *attempts,
                _ => false,
            })?
        };
        let Fix::Model { model, attempts } = &self.policy.fix[position] else {
            return None;
        };
        while self.model_asked[position] < *attempts {
            self.model_asked[position] += 1;
            let attempt = self.model_asked[position];
            self.fixes += 1;
            let request = Request::new(vec![
                Message::system(
                    "You fix the arguments of a tool call. Answer with the corrected JSON object of arguments only: no prose, no code fence.",
                ),
                Message::user(format!(
                    "Tool `{}`: {}\nArguments: {}\nJSON Schema of the arguments: {}\nThe arguments sent:\n{}\nWhat is wrong:\n{}",
                    self.entry.spec.name(),
                    self.entry.spec.description(),
                    self.entry.spec.input_model().type_name(),
                    self.entry.spec.input_schema(),
                    text,
                    error.for_model(),
                )),
            ]);
            let Ok(response) = super::trace::complete(&**model, request).await else {
                continue;
            };
            // Strip the fences and prose models add even when told not to.
            let answer = match repair::repair(&response.text) {
                Ok(repaired) => repaired.json().to_owned(),
                Err(_) => response.text,
            };
            if answer != text {
                self.notes.push(Recovered::Rewritten {
                    by: "model",
                    attempt,
                });
                return Some(answer);
            }
        }
        if position == self.next_fix {
            self.next_fix += 1;
        }
        None
    }

    /// Whether to call again after an execution error, having waited.
    async fn retry(&mut self, error: &ToolError) -> bool {
        let Some(retry) = self.policy.retry else {
            return false;
        };
        if self.executions >= retry.max_attempts {
            return false;
        }
        let waited = retry.backoff.delay(self.executions, jitter_sample());
        self.notes.push(Recovered::Retried {
            attempt: self.executions,
            error: error.to_string(),
            waited,
        });
        // No async runtime needed: the crate's timer thread wakes the task.
        Sleep::new(waited).await;
        self.executions += 1;
        true
    }

    fn give_up(&self, error: ToolError, original: ToolError) -> ToolError {
        // The model is told about what it sent, not about a fixer's rewrite of
        // it; a tool that kept failing is reported by its last failure.
        let returned = match (&error, &original) {
            (ToolError::Execution { .. }, _) => error.clone(),
            (_, original) if original.next_step() == NextStep::FixCall => original.clone(),
            _ => error.clone(),
        };
        match self.policy.give_up {
            GiveUp::Fail => returned,
            GiveUp::Escalate(severity) => {
                let reason = match &error {
                    ToolError::Execution { .. } => {
                        format!(
                            "the tool still failed after {} attempt(s): {error}",
                            self.executions
                        )
                    }
                    _ if self.fixes == 0 => format!("no fix applied to the call: {error}"),
                    _ => format!(
                        "the call could not be fixed in {} attempt(s): {error}",
                        self.fixes
                    ),
                };
                ToolError::Escalation(Box::new(Escalation {
                    source: format!("recovery of `{}`", self.entry.spec.name()),
                    reason,
                    severity,
                    original,
                    attempts: self.fixes + self.executions.saturating_sub(1),
                }))
            }
        }
    }
}
