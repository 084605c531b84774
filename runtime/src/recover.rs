//! Recovery from failed calls: per-tool [`Policy`]s with toolbox-wide defaults,
//! after Agents.KT's `onError` (shared/seeds/004).
//!
//! A policy says what the dispatcher does when a call fails, by failure:
//!
//! | failure | steps, in order | what they do |
//! |---|---|---|
//! | the arguments are not JSON ([`ToolError::InvalidArgs`]) | [`Policy::fix`] | the built-in [`repair`](crate::repair), your function, or a [`Model`] asked to fix them (a bounded number of attempts) |
//! | JSON of the wrong shape ([`ToolError::Deserialization`]) | [`Policy::sanitize`], then the model fix if any | schema-guided [`coerce`](crate::coerce)ion |
//! | the tool failed ([`ToolError::Execution`]) | [`Policy::retry`] | call again, with exponential backoff and jitter; only for tools that may be retried |
//!
//! When the steps run out, the policy gives up: with the error itself
//! ([`GiveUp::Fail`], the default) or with [`ToolError::Escalation`] carrying
//! the source, reason, severity, original error and attempts
//! ([`GiveUp::Escalate`]). Unknown tools and denied effects are never
//! "recovered": nothing is guessed about what the model meant to call.
//!
//! Every change made on the way is recorded in the successful output
//! ([`ToolOutput::recovery`](crate::ToolOutput::recovery)), with a message for the model
//! ([`ToolOutput::note_for_model`](crate::ToolOutput::note_for_model)).
//!
//! The three outcomes stay apart: "fix your call" (the fix steps, which spend
//! the repair budget), "the tool failed, adapt" (retries, which do not), and
//! abort (escalation).
//!
//! A retry is never a silent second write: a `Write` tool may be retried only if
//! it is declared `idempotent`. [`ToolboxBuilder::retry`](crate::ToolboxBuilder::retry)
//! checks it at compile time; a [`Policy`] given by name is checked when the
//! toolbox is built.
//!
//! ```
//! # futures::executor::block_on(async {
//! use typed_tools::recover::{Policy, Retry};
//! use typed_tools::{tool, Toolbox};
//!
//! /// Add two numbers.
//! #[tool(effects = Pure)]
//! fn add(a: i64, b: i64) -> i64 { a + b }
//!
//! let toolbox = Toolbox::builder()
//!     .tool(Add)
//!     .policy(Policy::recover()) // repair, then coerce, for every tool
//!     .build()?;
//! let output = toolbox.call("add", "```json\n{\"a\": \"2\", \"b\": 3,}\n```").await?;
//! assert_eq!(output.json(), "5");
//! assert_eq!(
//!     output.note_for_model().unwrap(),
//!     "Your call was repaired before it ran: removed a markdown code fence at byte 0; \
//!      removed a trailing comma at byte 25; $.a: the string \"2\" was read as the number 2. \
//!      Send valid arguments of the right types next time."
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;

use crate::coerce::Coercion;
use crate::error::Severity;
use crate::model::Model;
use crate::repair::{Repair, RepairOptions};

/// What to do when a call fails; see the [module docs](self).
///
/// The default does nothing: every failure is returned as it is.
#[derive(Clone, Default)]
pub struct Policy {
    pub(crate) fix: Vec<Fix>,
    pub(crate) sanitize: bool,
    pub(crate) retry: Option<Retry>,
    pub(crate) give_up: GiveUp,
}

/// A user's fix: the broken text in, fixed text out, or `None` to pass.
pub type FixFn = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// One way to fix argument text that is not JSON.
#[derive(Clone)]
pub enum Fix {
    /// The built-in deterministic [`repair`](crate::repair), with these options
    /// (e.g. a strict list of allowed repairs).
    Repair(RepairOptions),
    /// Your function: the broken text in, fixed text out, or `None` to pass.
    Function(FixFn),
    /// Ask a model, at most `attempts` times. Each answer goes through the
    /// built-in repair (to strip fences and prose) before it is tried.
    Model {
        /// The model.
        model: Arc<dyn Model>,
        /// How many times to ask, at most.
        attempts: u32,
    },
}

impl fmt::Debug for Fix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fix::Repair(options) => f.debug_tuple("Repair").field(options).finish(),
            Fix::Function(_) => f.write_str("Function(..)"),
            Fix::Model { attempts, .. } => f
                .debug_struct("Model")
                .field("attempts", attempts)
                .finish_non_exhaustive(),
        }
    }
}

/// What the policy does when its steps run out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GiveUp {
    /// Return the last error as it is.
    #[default]
    Fail,
    /// Return [`ToolError::Escalation`](crate::ToolError::Escalation) with this severity.
    Escalate(Severity),
}

impl Policy {
    /// No recovery: every failure is returned as it is.
    pub fn none() -> Policy {
        Policy::default()
    }

    /// The usual recovery for a model's calls: the built-in repair, then
    /// schema-guided coercion. No retries, no model.
    pub fn recover() -> Policy {
        Policy::none()
            .fix(Fix::Repair(RepairOptions::default()))
            .sanitize(true)
    }

    /// Adds a fix step for argument text that is not JSON; steps run in order.
    pub fn fix(mut self, fix: Fix) -> Policy {
        self.fix.push(fix);
        self
    }

    /// Adds your function as a fix step.
    pub fn fix_with(
        self,
        function: impl Fn(&str) -> Option<String> + Send + Sync + 'static,
    ) -> Policy {
        self.fix(Fix::Function(Arc::new(function)))
    }

    /// Adds a model as a fix step, asked at most `attempts` times; it is also
    /// asked when the arguments are JSON of the wrong shape and coercion did
    /// not help.
    pub fn fix_by_model(self, model: Arc<dyn Model>, attempts: u32) -> Policy {
        self.fix(Fix::Model { model, attempts })
    }

    /// Whether to coerce arguments towards the tool's schema.
    pub fn sanitize(mut self, on: bool) -> Policy {
        self.sanitize = on;
        self
    }

    /// Retries execution errors. Only for tools that may be retried: the
    /// toolbox refuses a retry for a `Write` tool not declared `idempotent`.
    pub fn retry(mut self, retry: Retry) -> Policy {
        self.retry = Some(retry);
        self
    }

    /// Escalates instead of failing when the steps run out.
    pub fn escalate(mut self, severity: Severity) -> Policy {
        self.give_up = GiveUp::Escalate(severity);
        self
    }

    /// Whether the policy does anything at all.
    pub(crate) fn is_none(&self) -> bool {
        self.fix.is_empty()
            && !self.sanitize
            && self.retry.is_none()
            && self.give_up == GiveUp::Fail
    }
}

impl fmt::Debug for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Policy")
            .field("fix", &self.fix)
            .field("sanitize", &self.sanitize)
            .field("retry", &self.retry)
            .field("give_up", &self.give_up)
            .finish()
    }
}

/// Retrying a failed tool: how many attempts in all, and the waits between them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Retry {
    /// Attempts in all, the first included (at least 1).
    pub max_attempts: u32,
    /// The waits.
    pub backoff: Backoff,
}

impl Retry {
    /// `max_attempts` in all, with [`Backoff::default`]: 100 ms doubling to at
    /// most 10 s, with full jitter.
    pub fn exponential(max_attempts: u32) -> Retry {
        Retry {
            max_attempts: max_attempts.max(1),
            backoff: Backoff::default(),
        }
    }

    /// The same, with `backoff`.
    pub fn with_backoff(mut self, backoff: Backoff) -> Retry {
        self.backoff = backoff;
        self
    }
}

/// Exponential backoff: before retry `n` (from 1) the wait is
/// `min(max, initial * factor^(n-1))`, and with `jitter` a uniformly random
/// part of that ("full jitter"), so that many clients do not retry in step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Backoff {
    /// The first wait.
    pub initial: Duration,
    /// How much each wait grows.
    pub factor: f64,
    /// The longest wait.
    pub max: Duration,
    /// Whether to wait a random part of the wait.
    pub jitter: bool,
}

impl Default for Backoff {
    fn default() -> Backoff {
        Backoff {
            initial: Duration::from_millis(100),
            factor: 2.0,
            max: Duration::from_secs(10),
            jitter: true,
        }
    }
}

impl Backoff {
    /// The wait before retry `retry` (1 for the first), given a `sample` in
    /// `[0, 1)` for the jitter.
    ///
    /// ```
    /// use std::time::Duration;
    /// use typed_tools::recover::Backoff;
    ///
    /// let backoff = Backoff { initial: Duration::from_millis(100), factor: 2.0, max: Duration::from_secs(1), jitter: false };
    /// let waits: Vec<u128> = (1..=5).map(|n| backoff.delay(n, 0.5).as_millis()).collect();
    /// assert_eq!(waits, [100, 200, 400, 800, 1000]);
    /// let jittered = Backoff { jitter: true, ..backoff };
    /// assert_eq!(jittered.delay(3, 0.25).as_millis(), 100);
    /// ```
    pub fn delay(&self, retry: u32, sample: f64) -> Duration {
        let exponent = retry.saturating_sub(1).min(64) as i32;
        let ceiling = self.initial.as_secs_f64() * self.factor.max(1.0).powi(exponent);
        let ceiling = ceiling.min(self.max.as_secs_f64()).max(0.0);
        let wait = if self.jitter {
            ceiling * sample.clamp(0.0, 1.0)
        } else {
            ceiling
        };
        Duration::try_from_secs_f64(wait).unwrap_or(self.max)
    }
}

/// A tool that may be retried: calling it twice does no more harm than once.
///
/// `#[tool]` implements it for tools without the `Write` effect and for tools
/// declared `idempotent`. [`ToolboxBuilder::retry`](crate::ToolboxBuilder::retry)
/// requires it, so a retry of a plain `Write` tool does not compile.
#[diagnostic::on_unimplemented(
    message = "`{Self}` may not be retried: it has the `Write` effect and is not declared idempotent",
    label = "a retry could repeat this tool's write",
    note = "if calling it twice does no more than calling it once, declare it `#[tool(effects = Write, idempotent)]`; otherwise remove the retry"
)]
pub trait Retryable: crate::Tool {}

/// One thing recovery did on the way to a successful call.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Recovered {
    /// The built-in repair changed the argument text.
    Repaired(Repair),
    /// An argument value was coerced towards the schema.
    Coerced(Coercion),
    /// A fix step other than the built-in repair rewrote the arguments.
    Rewritten {
        /// Which: `"function"` or `"model"`.
        by: &'static str,
        /// Its attempt number, from 1.
        attempt: u32,
    },
    /// The tool failed and was called again.
    Retried {
        /// The attempt that failed, from 1.
        attempt: u32,
        /// Its error.
        error: String,
        /// How long recovery waited before the next attempt.
        waited: Duration,
    },
}

impl fmt::Display for Recovered {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Recovered::Repaired(repair) => write!(f, "{repair}"),
            Recovered::Coerced(coercion) => write!(f, "{coercion}"),
            Recovered::Rewritten { by, attempt } => write!(
                f,
                "the arguments were rewritten by the {by} fix (attempt {attempt})"
            ),
            Recovered::Retried { attempt, error, .. } => {
                write!(f, "attempt {attempt} failed ({error}) and was retried")
            }
        }
    }
}

/// A sleep that needs no async runtime: a thread wakes the task when the time
/// is up. Retries are rare and short, so a thread each is cheap enough, and
/// it keeps the crate runtime-agnostic.
pub(crate) fn sleep(duration: Duration) -> BoxFuture<'static, ()> {
    use futures::FutureExt;
    if duration.is_zero() {
        return futures::future::ready(()).boxed();
    }
    let (sender, receiver) = futures::channel::oneshot::channel::<()>();
    std::thread::spawn(move || {
        std::thread::sleep(duration);
        let _ = sender.send(());
    });
    receiver.map(|_| ()).boxed()
}

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
/// call again, until it succeeds or the steps run out.
pub(crate) async fn recover(
    entry: &crate::toolbox::Entry,
    args: String,
    failure: crate::tool::Failure,
) -> Result<crate::ToolOutput, crate::ToolError> {
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
    let mut original = None;
    loop {
        let error = entry.explain(&text, failure);
        let original = original.get_or_insert_with(|| error.clone());
        let next = match &error {
            crate::ToolError::InvalidArgs { .. } => run.fix(&text, &error).await,
            crate::ToolError::Deserialization { .. } => match run.sanitize(&text) {
                Some(coerced) => Some(coerced),
                None => run.ask_model(&text, &error).await,
            },
            crate::ToolError::Execution { .. } => run.retry(&error).await.then(|| text.clone()),
            _ => None,
        };
        let Some(next) = next else {
            return Err(run.give_up(error, original.clone()));
        };
        text = next;
        match entry.run(&text).await {
            Ok(json) => return Ok(crate::ToolOutput::recovered(json, run.notes)),
            Err(again) => failure = again,
        }
    }
}

struct Run<'a> {
    entry: &'a crate::toolbox::Entry,
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
    async fn fix(&mut self, text: &str, error: &crate::ToolError) -> Option<String> {
        while let Some(step) = self.policy.fix.get(self.next_fix) {
            match step {
                Fix::Repair(options) => {
                    self.next_fix += 1;
                    let Ok(repaired) = crate::repair::repair_with(text, options) else {
                        continue;
                    };
                    if !repaired.is_unchanged() {
                        self.fixes += 1;
                        self.notes
                            .extend(repaired.repairs().iter().cloned().map(Recovered::Repaired));
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
        let mut value: serde_json::Value = serde_json::from_str(text).ok()?;
        let coercions = self.entry.spec.input_model().coerce(&mut value);
        if coercions.is_empty() {
            return None;
        }
        self.fixes += 1;
        self.notes
            .extend(coercions.into_iter().map(Recovered::Coerced));
        Some(value.to_string())
    }

    /// The model fix step at `next_fix` (or the first one, for wrong shapes),
    /// while it has attempts left.
    async fn ask_model(&mut self, text: &str, error: &crate::ToolError) -> Option<String> {
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
            let request = crate::model::Request::new(vec![
                crate::model::Message::system(
                    "You fix the arguments of a tool call. Answer with the corrected JSON object of arguments only: no prose, no code fence.",
                ),
                crate::model::Message::user(format!(
                    "Tool `{}`: {}\nArguments: {}\nJSON Schema of the arguments: {}\nThe arguments sent:\n{}\nWhat is wrong:\n{}",
                    self.entry.spec.name(),
                    self.entry.spec.description(),
                    self.entry.args_type,
                    self.entry.spec.input_schema(),
                    text,
                    error.for_model(),
                )),
            ]);
            let Ok(response) = model.complete(request).await else {
                continue;
            };
            // Strip the fences and prose models add even when told not to.
            let answer = match crate::repair::repair(&response.text) {
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
    async fn retry(&mut self, error: &crate::ToolError) -> bool {
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
        sleep(waited).await;
        self.executions += 1;
        true
    }

    fn give_up(&self, error: crate::ToolError, original: crate::ToolError) -> crate::ToolError {
        // The model is told about what it sent, not about a fixer's rewrite of
        // it; a tool that kept failing is reported by its last failure.
        let returned = match (&error, &original) {
            (crate::ToolError::Execution { .. }, _) => error.clone(),
            (_, original) if original.next_step() == crate::NextStep::FixCall => original.clone(),
            _ => error.clone(),
        };
        match self.policy.give_up {
            GiveUp::Fail => returned,
            GiveUp::Escalate(severity) => {
                let reason = match &error {
                    crate::ToolError::Execution { .. } => {
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
                crate::ToolError::Escalation(Box::new(crate::Escalation {
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
