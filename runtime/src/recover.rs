//! Recovery from failed calls: per-tool [`Policy`]s with toolbox-wide defaults.
//!
//! A policy says what the dispatcher does when a call fails, by failure:
//!
//! | failure | steps, in order | what they do |
//! |---|---|---|
//! | the arguments are not JSON ([`ToolError::InvalidArgs`](crate::ToolError::InvalidArgs)) | [`Policy::fix`] | the built-in [`repair`](crate::repair), your function, or a [`Model`] asked to fix them (a bounded number of attempts) |
//! | JSON of the wrong shape ([`ToolError::Deserialization`](crate::ToolError::Deserialization)) | [`Policy::sanitize`], then the model fix if any | schema-guided [`coerce`](crate::coerce)ion |
//! | the tool failed ([`ToolError::Execution`](crate::ToolError::Execution)) | [`Policy::retry`] | call again, with exponential backoff and jitter; only for tools that may be retried |
//!
//! When the steps run out, the policy gives up: with the error itself
//! ([`GiveUp::Fail`], the default) or with [`ToolError::Escalation`](crate::ToolError::Escalation) carrying
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
use std::sync::Arc;
use std::time::Duration;

use crate::coerce::{Coercion, CoercionKind};
use crate::error::Severity;
use crate::model::Model;
use crate::repair::{Repair, RepairKind, RepairOptions};

/// What to do when a call fails; see the [module docs](self).
///
/// The default does nothing: every failure is returned as it is. Start from
/// [`Policy::recover`] (repair, then coerce) or [`Policy::none`] and add
/// steps; give it to [`ToolboxBuilder::policy`](crate::ToolboxBuilder::policy)
/// for every tool, or [`policy_for`](crate::ToolboxBuilder::policy_for) one.
///
/// ```
/// use typed_tools::error::Severity;
/// use typed_tools::recover::{Policy, Retry};
///
/// let policy = Policy::recover()
///     .fix_with(|text| text.strip_prefix("ARGS:").map(str::to_owned))
///     .retry(Retry::exponential(3))
///     .escalate(Severity::High);
/// assert!(format!("{policy:?}").contains("sanitize: true"));
/// ```
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
    /// Return [`ToolError::Escalation`](crate::ToolError::Escalation)(crate::ToolError::Escalation) with this severity.
    Escalate(Severity),
}

impl Policy {
    /// No recovery: every failure is returned as it is.
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::recover::Policy;
    /// use typed_tools::{tool, Toolbox};
    ///
    /// /// Get one note by its id.
    /// #[tool(effects = Read)]
    /// fn get_note(id: u32) -> String { format!("note {id}") }
    ///
    /// let toolbox = Toolbox::builder().tool(GetNote).policy(Policy::none()).build()?;
    /// assert!(toolbox.call("get_note", "{'id': 7}").await.is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn none() -> Policy {
        Policy::default()
    }

    /// The usual recovery for a model's calls: the built-in repair, then
    /// schema-guided coercion. No retries, no model.
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::recover::Policy;
    /// use typed_tools::{tool, Toolbox};
    ///
    /// /// Get one note by its id.
    /// #[tool(effects = Read)]
    /// fn get_note(id: u32) -> String { format!("note {id}") }
    ///
    /// let toolbox = Toolbox::builder().tool(GetNote).policy(Policy::recover()).build()?;
    /// assert_eq!(toolbox.call("get_note", "{'id': '7',}").await?.json(), r#""note 7""#);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn recover() -> Policy {
        Policy::none()
            .fix(Fix::Repair(RepairOptions::default()))
            .sanitize(true)
    }

    /// Adds a fix step for argument text that is not JSON; steps run in order.
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::recover::Policy;
    /// use typed_tools::{tool, Toolbox};
    ///
    /// /// Get one note by its id.
    /// #[tool(effects = Read)]
    /// fn get_note(id: u32) -> String { format!("note {id}") }
    ///
    /// use typed_tools::recover::Fix;
    /// use typed_tools::repair::RepairOptions;
    ///
    /// let policy = Policy::none().fix(Fix::Repair(RepairOptions::default()));
    /// let toolbox = Toolbox::builder().tool(GetNote).policy(policy).build()?;
    /// assert_eq!(toolbox.call("get_note", "{id: 7}").await?.json(), r#""note 7""#);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn fix(mut self, fix: Fix) -> Policy {
        self.fix.push(fix);
        self
    }

    /// Adds your function as a fix step.
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::recover::Policy;
    /// use typed_tools::{tool, Toolbox};
    ///
    /// /// Get one note by its id.
    /// #[tool(effects = Read)]
    /// fn get_note(id: u32) -> String { format!("note {id}") }
    ///
    /// // A model that writes `id=7` instead of JSON.
    /// let policy = Policy::none().fix_with(|text| {
    ///     let id = text.strip_prefix("id=")?;
    ///     Some(format!(r#"{{"id": {id}}}"#))
    /// });
    /// let toolbox = Toolbox::builder().tool(GetNote).policy(policy).build()?;
    /// assert_eq!(toolbox.call("get_note", "id=7").await?.json(), r#""note 7""#);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
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
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::recover::Policy;
    /// use typed_tools::{tool, Toolbox};
    ///
    /// /// Get one note by its id.
    /// #[tool(effects = Read)]
    /// fn get_note(id: u32) -> String { format!("note {id}") }
    ///
    /// let toolbox = Toolbox::builder().tool(GetNote).policy(Policy::none().sanitize(true)).build()?;
    /// // Valid JSON of the wrong shape: the string "7" is read as the number.
    /// assert_eq!(toolbox.call("get_note", r#"{"id": "7"}"#).await?.json(), r#""note 7""#);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn sanitize(mut self, on: bool) -> Policy {
        self.sanitize = on;
        self
    }

    /// Retries execution errors. Only for tools that may be retried: the
    /// toolbox refuses a retry for a `Write` tool not declared `idempotent`.
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use std::sync::atomic::{AtomicU32, Ordering};
    /// use std::time::Duration;
    /// use typed_tools::recover::{Backoff, Policy, Retry};
    /// use typed_tools::{tool, Toolbox};
    ///
    /// /// Fetch a page; fails on the first try.
    /// #[tool(effects = Network)]
    /// fn fetch(#[state] tries: &AtomicU32, url: String) -> Result<String, String> {
    ///     match tries.fetch_add(1, Ordering::SeqCst) {
    ///         0 => Err("timed out".into()),
    ///         _ => Ok(url),
    ///     }
    /// }
    ///
    /// let quick = Backoff { initial: Duration::from_millis(1), factor: 2.0, max: Duration::from_millis(5), jitter: false };
    /// let policy = Policy::none().retry(Retry::exponential(3).with_backoff(quick));
    /// let toolbox = Toolbox::builder().tool(Fetch::new(AtomicU32::new(0))).policy(policy).build()?;
    /// let output = toolbox.call("fetch", r#"{"url": "a.org"}"#).await?;
    /// assert_eq!(output.json(), r#""a.org""#);
    /// assert_eq!(output.recovery().len(), 1); // one retry
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn retry(mut self, retry: Retry) -> Policy {
        self.retry = Some(retry);
        self
    }

    /// Escalates instead of failing when the steps run out.
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::recover::Policy;
    /// use typed_tools::{tool, Toolbox};
    ///
    /// /// Get one note by its id.
    /// #[tool(effects = Read)]
    /// fn get_note(id: u32) -> String { format!("note {id}") }
    ///
    /// use typed_tools::error::Severity;
    /// use typed_tools::{NextStep, ToolError};
    ///
    /// let policy = Policy::recover().escalate(Severity::High);
    /// let toolbox = Toolbox::builder().tool(GetNote).policy(policy).build()?;
    /// let error = toolbox.call("get_note", r#"{"id": "seven"}"#).await.unwrap_err();
    /// assert!(matches!(error, ToolError::Escalation(_)));
    /// assert_eq!(error.next_step(), NextStep::Abort);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
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
    ///
    /// ```
    /// use typed_tools::recover::{Backoff, Retry};
    ///
    /// let retry = Retry::exponential(3);
    /// assert_eq!(retry.max_attempts, 3);
    /// assert_eq!(retry.backoff, Backoff::default());
    /// assert_eq!(Retry::exponential(0).max_attempts, 1); // the first attempt counts
    /// ```
    pub fn exponential(max_attempts: u32) -> Retry {
        Retry {
            max_attempts: max_attempts.max(1),
            backoff: Backoff::default(),
        }
    }

    /// The same, with `backoff`.
    ///
    /// ```
    /// use std::time::Duration;
    /// use typed_tools::recover::{Backoff, Retry};
    ///
    /// let steady = Backoff { initial: Duration::from_millis(50), factor: 1.0, max: Duration::from_millis(50), jitter: false };
    /// let retry = Retry::exponential(4).with_backoff(steady);
    /// assert_eq!(retry.backoff.delay(3, 0.0), Duration::from_millis(50));
    /// ```
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
    /// More repairs of one kind than are listed: recovery lists the first
    /// [`Repaired::KEPT_PER_KIND`](crate::repair::Repaired::KEPT_PER_KIND)
    /// of each kind as [`Recovered::Repaired`], then this, so that the note
    /// a model reads stays short whatever the input's size.
    ///
    /// ```
    /// use typed_tools::recover::Recovered;
    /// use typed_tools::repair::RepairKind;
    ///
    /// let more = Recovered::MoreRepairs { kind: RepairKind::UnescapedQuote, count: 1_048_571 };
    /// assert_eq!(more.to_string(), "… and 1,048,571 more (escaped a quote inside a string)");
    /// ```
    MoreRepairs {
        /// What kind of repair.
        kind: RepairKind,
        /// How many more of that kind were made.
        count: usize,
    },
    /// An argument value was coerced towards the schema.
    Coerced(Coercion),
    /// More coercions of one kind than are listed: recovery lists the first
    /// [`Repaired::KEPT_PER_KIND`](crate::repair::Repaired::KEPT_PER_KIND)
    /// of each kind as [`Recovered::Coerced`], then this.
    ///
    /// ```
    /// use typed_tools::coerce::CoercionKind;
    /// use typed_tools::recover::Recovered;
    ///
    /// let more = Recovered::MoreCoercions { kind: CoercionKind::StringToNumber, count: 999_995 };
    /// assert_eq!(more.to_string(), "… and 999,995 more (read a string as a number)");
    /// ```
    MoreCoercions {
        /// What kind of coercion.
        kind: CoercionKind,
        /// How many more of that kind were made.
        count: usize,
    },
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
    /// A repair, coercion or rewrite a [durable](crate::durable) run's
    /// journal recorded, replayed: what it did, as the model was told
    /// (retries are not recorded).
    Recorded(String),
}

impl fmt::Display for Recovered {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Recovered::Repaired(repair) => write!(f, "{repair}"),
            Recovered::Coerced(coercion) => write!(f, "{coercion}"),
            Recovered::MoreRepairs { kind, count } => {
                crate::repair::more(f, *count, kind.description())
            }
            Recovered::MoreCoercions { kind, count } => {
                crate::repair::more(f, *count, kind.description())
            }
            Recovered::Rewritten { by, attempt } => write!(
                f,
                "the arguments were rewritten by the {by} fix (attempt {attempt})"
            ),
            Recovered::Retried { attempt, error, .. } => {
                write!(f, "attempt {attempt} failed ({error}) and was retried")
            }
            Recovered::Recorded(text) => f.write_str(text),
        }
    }
}
