//! Errors are values: every failure a model can cause or meet is a [`ToolError`].
//!
//! Each error has a `Display` for people and [`ToolError::for_model`], a short
//! message written for a model to act on. [`ToolError::next_step`] keeps apart
//! the three things a caller does next:
//!
//! | [`NextStep`] | errors | what it means |
//! |---|---|---|
//! | [`FixCall`](NextStep::FixCall) | unknown tool, arguments too large, invalid args, deserialization | the model should fix its call and send it again; counts against a repair budget |
//! | [`Adapt`](NextStep::Adapt) | execution, effect denied, refused by approval, timed out | the call was fine but the tool failed, is not allowed or took too long; the model should change course, not resend the same call |
//! | [`Abort`](NextStep::Abort) | escalation | stop: recovery gave up |
//!
//! ```
//! # futures::executor::block_on(async {
//! use typed_tools::{tool, NextStep, ToolError, Toolbox};
//!
//! /// Add two numbers.
//! #[tool(effects = Pure)]
//! fn add(a: i64, b: i64) -> i64 { a + b }
//!
//! let toolbox = Toolbox::builder().tool(Add).build().unwrap();
//! let error = toolbox.call("add", r#"{"a": "2"}"#).await.unwrap_err();
//! assert!(matches!(error, ToolError::Deserialization { .. }));
//! assert_eq!(error.next_step(), NextStep::FixCall);
//! assert_eq!(
//!     error.for_model(),
//!     "Invalid arguments for `add`:\n\
//!      - $.a: expected Int, found string \"2\"\n\
//!      - $.b: missing required field of type Int\n\
//!      Send the call again with arguments of type {a: Int, b: Int}."
//! );
//! # });
//! ```

use std::fmt;
use std::time::Duration;

use crate::cut::{cut, Echo, LINE};
use crate::effect::EffectSet;
use crate::schema::Problem;

/// Every failure of a tool call, as a value: match on it in code, show
/// [`for_model`](Self::for_model) to the model, and let
/// [`next_step`](Self::next_step) say what to do.
///
/// ```
/// # futures::executor::block_on(async {
/// use typed_tools::{tool, NextStep, ToolError, Toolbox};
///
/// /// Get one note by its id.
/// #[tool(effects = Read)]
/// fn get_note(id: u32) -> Result<String, String> { Err(format!("there is no note {id}")) }
///
/// let toolbox = Toolbox::builder().tool(GetNote).build().unwrap();
/// match toolbox.call("get_nte", r#"{"id": 1}"#).await {
///     Err(ToolError::UnknownTool { suggestions, .. }) => assert_eq!(suggestions, ["get_note"]),
///     other => panic!("{other:?}"),
/// }
/// # });
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ToolError {
    /// The model called a tool the toolbox does not have (a hallucinated or
    /// injected name). Nothing ran.
    UnknownTool {
        /// The name the model used.
        name: String,
        /// The toolbox's names closest to it, best first.
        suggestions: Vec<String>,
        /// Every name the model may call.
        available: Vec<String>,
    },
    /// The tool exists but its effects are not allowed here. Nothing ran.
    EffectDenied {
        /// The tool.
        tool: String,
        /// Its declared effects.
        effects: EffectSet,
        /// The effects allowed here.
        allowed: EffectSet,
    },
    /// The argument text is longer than the toolbox reads
    /// ([`ToolboxBuilder::max_argument_bytes`](crate::ToolboxBuilder::max_argument_bytes),
    /// 1 MiB by default). Refused before any of it was read: nothing was
    /// parsed, nothing ran, and no recovery policy is tried.
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::{tool, NextStep, ToolError, Toolbox};
    ///
    /// /// Count words.
    /// #[tool(effects = Pure)]
    /// fn count(words: Vec<String>) -> usize { words.len() }
    ///
    /// let toolbox = Toolbox::builder().tool(Count).max_argument_bytes(64).build()?;
    /// let args = format!(r#"{{"words": [{}"a"]}}"#, r#""a", "#.repeat(20));
    /// let error = toolbox.call("count", &args).await.unwrap_err();
    /// assert_eq!(error, ToolError::ArgsTooLarge { tool: "count".into(), bytes: 116, max: 64 });
    /// assert_eq!(error.next_step(), NextStep::FixCall);
    /// assert_eq!(
    ///     error.for_model(),
    ///     "The arguments for `count` are 116 bytes long, more than the 64 allowed. \
    ///      Send shorter arguments: fewer or smaller values."
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    ArgsTooLarge {
        /// The tool.
        tool: String,
        /// The length of the argument text, in bytes.
        bytes: usize,
        /// The limit, in bytes.
        max: usize,
    },
    /// The arguments are not JSON (or not the JSON object a tool takes).
    /// Nothing ran.
    InvalidArgs {
        /// The tool.
        tool: String,
        /// What the parser said, with line and column.
        message: String,
        /// The start of the argument text, for the model to see what it sent.
        excerpt: String,
        /// The JSON type of the tool's arguments, in λ-Tool notation.
        expected: String,
    },
    /// The arguments are JSON but do not fit the tool's input type. Nothing ran.
    Deserialization {
        /// The tool.
        tool: String,
        /// Every problem found, each with its JSON path.
        problems: Vec<Problem>,
        /// What the deserializer said, when it saw something the schema did not.
        message: Option<String>,
        /// The JSON type of the tool's arguments, in λ-Tool notation.
        expected: String,
    },
    /// The tool ran and failed: its own error, or a panic caught.
    Execution {
        /// The tool.
        tool: String,
        /// The tool's error, as its `Display` writes it, or the panic message.
        message: String,
        /// Whether the tool panicked rather than returned an error.
        panicked: bool,
    },
    /// Recovery gave up and passed the problem up.
    Escalation(Box<Escalation>),
    /// An approval ([`Toolbox::approve`](crate::Toolbox::approve)) refused
    /// the call, shown exactly the arguments it would have run with. Nothing
    /// ran.
    Refused {
        /// The tool.
        tool: String,
        /// The reason the approval gave.
        reason: String,
    },
    /// The call did not finish within its time limit (the
    /// [`per_call`](crate::plan::Limits::per_call) limit of a plan's run,
    /// or of an [`agent`](crate::agent::Limits::per_call)'s, whose own
    /// calls report it as a
    /// [`CallOutcome::TimedOut`](crate::agent::CallOutcome::TimedOut)), the
    /// wait for its approvals included, and was stopped where it waited. A
    /// tool that had started may or may not have taken effect.
    ///
    /// ```
    /// use std::time::Duration;
    /// use typed_tools::{NextStep, ToolError};
    ///
    /// let error = ToolError::TimedOut { tool: "refund".into(), after: Duration::from_secs(1) };
    /// assert_eq!(error.kind(), "timed_out");
    /// assert_eq!(error.next_step(), NextStep::Adapt);
    /// assert_eq!(
    ///     error.for_model(),
    ///     "The call to `refund` did not finish within 1s and was stopped; it may or may not have taken effect."
    /// );
    /// ```
    TimedOut {
        /// The tool.
        tool: String,
        /// The time it was given: its limit, or what was left of the run's
        /// wall time if less.
        after: Duration,
    },
}

/// What a caller should do after a [`ToolError`]; see the [module docs](self).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NextStep {
    /// The model should fix its call and send it again.
    FixCall,
    /// The call was well-formed; the tool failed or is not allowed. Change course.
    Adapt,
    /// Stop.
    Abort,
}

/// How bad an escalated problem is, for whoever handles it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// Can be ignored or worked around.
    Low,
    /// Needs a different approach.
    Medium,
    /// The task cannot be completed as asked.
    High,
    /// Stop everything.
    Critical,
}

/// A problem passed up by recovery that could not solve it: who, why, how bad,
/// the original error and how many attempts were made.
#[derive(Clone, Debug, PartialEq)]
pub struct Escalation {
    /// Who escalated: a tool, a repair step, an agent.
    pub source: String,
    /// Why they gave up.
    pub reason: String,
    /// How bad it is.
    pub severity: Severity,
    /// The error recovery started from.
    pub original: ToolError,
    /// How many attempts were made before giving up.
    pub attempts: u32,
}

impl ToolError {
    /// What the caller should do next.
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::{tool, NextStep, ToolError, Toolbox};
    ///
    /// /// Get one note by its id.
    /// #[tool(effects = Read)]
    /// fn get_note(id: u32) -> Result<String, String> { Err(format!("there is no note {id}")) }
    ///
    /// let toolbox = Toolbox::builder().tool(GetNote).build().unwrap();
    /// let failed = toolbox.call("get_note", r#"{"id": 1}"#).await.unwrap_err();
    /// assert_eq!(failed.next_step(), NextStep::Adapt);
    /// let malformed = toolbox.call("get_note", r#"{"id": "#).await.unwrap_err();
    /// assert_eq!(malformed.next_step(), NextStep::FixCall);
    /// # });
    /// ```
    pub fn next_step(&self) -> NextStep {
        match self {
            ToolError::UnknownTool { .. }
            | ToolError::ArgsTooLarge { .. }
            | ToolError::InvalidArgs { .. }
            | ToolError::Deserialization { .. } => NextStep::FixCall,
            ToolError::EffectDenied { .. }
            | ToolError::Execution { .. }
            | ToolError::Refused { .. }
            | ToolError::TimedOut { .. } => NextStep::Adapt,
            ToolError::Escalation(_) => NextStep::Abort,
        }
    }

    /// Whether the tool's own code ran before this error: it returned its
    /// own error or panicked ([`Execution`](Self::Execution)), or recovery
    /// escalated from such a failure; or may have, when the call was
    /// stopped at its time limit ([`TimedOut`](Self::TimedOut)). Every
    /// other error was raised before the tool was called, and nothing ran.
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::{tool, Toolbox};
    ///
    /// /// Get one note by its id.
    /// #[tool(effects = Read)]
    /// fn get_note(id: u32) -> Result<String, String> { Err(format!("there is no note {id}")) }
    ///
    /// let toolbox = Toolbox::builder().tool(GetNote).build().unwrap();
    /// assert!(toolbox.call("get_note", r#"{"id": 1}"#).await.unwrap_err().ran());
    /// assert!(!toolbox.call("get_note", r#"{"id": "one"}"#).await.unwrap_err().ran());
    /// assert!(!toolbox.call("get_notes", "{}").await.unwrap_err().ran());
    /// # });
    /// ```
    pub fn ran(&self) -> bool {
        match self {
            ToolError::Execution { .. } | ToolError::TimedOut { .. } => true,
            ToolError::Escalation(escalation) => escalation.original.ran(),
            ToolError::UnknownTool { .. }
            | ToolError::EffectDenied { .. }
            | ToolError::ArgsTooLarge { .. }
            | ToolError::InvalidArgs { .. }
            | ToolError::Deserialization { .. }
            | ToolError::Refused { .. } => false,
        }
    }

    /// The tool the error is about, when there is one: the name the model
    /// used, for an unknown tool.
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::{tool, NextStep, ToolError, Toolbox};
    ///
    /// /// Get one note by its id.
    /// #[tool(effects = Read)]
    /// fn get_note(id: u32) -> Result<String, String> { Err(format!("there is no note {id}")) }
    ///
    /// let toolbox = Toolbox::builder().tool(GetNote).build().unwrap();
    /// let error = toolbox.call("get_note", r#"{"id": 1}"#).await.unwrap_err();
    /// assert_eq!(error.tool(), Some("get_note"));
    /// # });
    /// ```
    pub fn tool(&self) -> Option<&str> {
        match self {
            ToolError::UnknownTool { name: tool, .. }
            | ToolError::EffectDenied { tool, .. }
            | ToolError::ArgsTooLarge { tool, .. }
            | ToolError::InvalidArgs { tool, .. }
            | ToolError::Deserialization { tool, .. }
            | ToolError::Execution { tool, .. }
            | ToolError::Refused { tool, .. }
            | ToolError::TimedOut { tool, .. } => Some(tool),
            ToolError::Escalation(escalation) => escalation.original.tool(),
        }
    }

    /// The kind of error, one word: `unknown_tool`, `effect_denied`,
    /// `args_too_large`, `invalid_args`, `deserialization`, `execution`,
    /// `escalation`, `refused`, `timed_out`. A plan's `Err` branch reads it
    /// as `e.kind`.
    ///
    /// ```
    /// use typed_tools::ToolError;
    ///
    /// let error = ToolError::Refused { tool: "wipe".into(), reason: "never".into() };
    /// assert_eq!(error.kind(), "refused");
    /// ```
    pub fn kind(&self) -> &'static str {
        match self {
            ToolError::UnknownTool { .. } => "unknown_tool",
            ToolError::EffectDenied { .. } => "effect_denied",
            ToolError::ArgsTooLarge { .. } => "args_too_large",
            ToolError::InvalidArgs { .. } => "invalid_args",
            ToolError::Deserialization { .. } => "deserialization",
            ToolError::Execution { .. } => "execution",
            ToolError::Escalation(_) => "escalation",
            ToolError::Refused { .. } => "refused",
            ToolError::TimedOut { .. } => "timed_out",
        }
    }

    /// A short message for the model: what was wrong and what to send instead.
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::{tool, NextStep, ToolError, Toolbox};
    ///
    /// /// Get one note by its id.
    /// #[tool(effects = Read)]
    /// fn get_note(id: u32) -> Result<String, String> { Err(format!("there is no note {id}")) }
    ///
    /// let toolbox = Toolbox::builder().tool(GetNote).build().unwrap();
    /// let error = toolbox.call("get_note", r#"{"id": -1}"#).await.unwrap_err();
    /// assert_eq!(
    ///     error.for_model(),
    ///     "Invalid arguments for `get_note`:\n\
    ///      - $.id: expected Int >= 0, found integer -1\n\
    ///      Send the call again with arguments of type {id: Int}."
    /// );
    /// # });
    /// ```
    pub fn for_model(&self) -> String {
        ForModel(self).to_string()
    }

    pub(crate) fn deserialization(
        tool: &str,
        problems: Vec<Problem>,
        message: Option<String>,
    ) -> ToolError {
        ToolError::Deserialization {
            tool: tool.to_owned(),
            problems,
            message,
            expected: String::new(),
        }
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ToolError::UnknownTool {
                name, suggestions, ..
            } => {
                write!(f, "unknown tool `{}`", Echo(name))?;
                if !suggestions.is_empty() {
                    f.write_str("; did you mean ")?;
                    crate::schema::write_list(f, suggestions)?;
                    f.write_str("?")?;
                }
                Ok(())
            }
            ToolError::EffectDenied {
                tool,
                effects,
                allowed,
            } => write_effect_denied(f, tool, *effects, *allowed),
            ToolError::ArgsTooLarge { tool, bytes, max } => write!(
                f,
                "arguments for `{tool}` are {bytes} bytes long, more than the {max} allowed"
            ),
            ToolError::InvalidArgs { tool, message, .. } => {
                let message = cut(message, LINE);
                write!(f, "arguments for `{tool}` are not valid JSON: {message}")
            }
            ToolError::Deserialization {
                tool,
                problems,
                message,
                ..
            } => {
                write!(f, "arguments for `{tool}` do not fit its input")?;
                for problem in problems.iter().take(MAX_PROBLEMS_SHOWN) {
                    write!(f, "; {problem}")?;
                }
                if problems.len() > MAX_PROBLEMS_SHOWN {
                    write!(f, "; and {} more", problems.len() - MAX_PROBLEMS_SHOWN)?;
                }
                if let (Some(message), true) = (message, problems.is_empty()) {
                    write!(f, ": {}", cut(message, LINE))?;
                }
                Ok(())
            }
            ToolError::Execution {
                tool,
                message,
                panicked: false,
            } => {
                write!(f, "tool `{tool}` failed: {}", cut(message, LINE))
            }
            ToolError::Execution {
                tool,
                message,
                panicked: true,
            } => {
                write!(f, "tool `{tool}` panicked: {}", cut(message, LINE))
            }
            ToolError::Refused { tool, reason } => {
                write!(f, "the call to `{tool}` was refused: {reason}")
            }
            ToolError::TimedOut { tool, after } => write!(
                f,
                "the call to `{tool}` did not finish within {after:?} and was stopped; \
                 it may or may not have taken effect"
            ),
            ToolError::Escalation(escalation) => write!(
                f,
                "escalated by {} ({:?}) after {} attempt(s): {}; original error: {}",
                escalation.source,
                escalation.severity,
                escalation.attempts,
                escalation.reason,
                escalation.original
            ),
        }
    }
}

impl std::error::Error for ToolError {}

/// The one wording of a call refused for its effects, wherever it is
/// refused: a direct call ([`ToolError::EffectDenied`]), a plan's check and
/// run ([`PlanError::EffectViolation`](crate::plan::PlanError::EffectViolation)),
/// an interpreter narrowed by `restrict`. The tool exists; its effects and
/// what is allowed are said, so that neither a model nor a person looks for
/// a tool that is not missing:
/// "effect violation: tool `delete_note` has effects {Write}, but only {Read}
/// are allowed here".
pub(crate) fn write_effect_denied(
    f: &mut fmt::Formatter<'_>,
    tool: &str,
    effects: EffectSet,
    allowed: EffectSet,
) -> fmt::Result {
    write!(
        f,
        "effect violation: tool `{tool}` has effects {effects}, but "
    )?;
    if allowed.is_pure() {
        f.write_str("no effects are allowed here")
    } else {
        write!(f, "only {allowed} are allowed here")
    }
}

/// Messages list this many problems, then say how many more there are: a
/// model's 100,000-element array of wrong values must not become a 5 MB message.
const MAX_PROBLEMS_SHOWN: usize = 20;

/// An unknown name with no near match is answered with this many of the
/// tools' names: a toolbox of 300 tools must not become the message.
const MAX_TOOLS_SHOWN: usize = 20;

struct ForModel<'e>(&'e ToolError);

impl fmt::Display for ForModel<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            ToolError::UnknownTool {
                name,
                suggestions,
                available,
            } => {
                write!(f, "There is no tool named `{}`.", Echo(name))?;
                match (suggestions.as_slice(), available.len()) {
                    ([best], _) => write!(f, " Did you mean `{best}`?"),
                    ([_, ..], _) => {
                        f.write_str(" The nearest tools: ")?;
                        crate::schema::write_list(f, suggestions)?;
                        f.write_str(".")
                    }
                    ([], 0) => f.write_str(" No tools are available."),
                    ([], count) => {
                        f.write_str(" Available tools: ")?;
                        let shown = count.min(MAX_TOOLS_SHOWN);
                        crate::schema::write_list(f, &available[..shown])?;
                        match count - shown {
                            0 => f.write_str("."),
                            more => write!(f, " and {more} more."),
                        }
                    }
                }
            }
            ToolError::EffectDenied {
                tool,
                effects,
                allowed,
            } => {
                write_effect_denied(f, tool, *effects, *allowed)?;
                f.write_str(". Do not call it again; use another tool or answer without it.")
            }
            ToolError::ArgsTooLarge { tool, bytes, max } => write!(
                f,
                "The arguments for `{tool}` are {bytes} bytes long, more than the {max} allowed. \
                 Send shorter arguments: fewer or smaller values."
            ),
            ToolError::InvalidArgs {
                tool,
                message,
                expected,
                ..
            } => {
                write!(
                    f,
                    "The arguments for `{tool}` are not valid JSON ({}).",
                    cut(message, LINE)
                )?;
                if !expected.is_empty() {
                    write!(f, " Send a JSON object of type {expected}.")?;
                }
                Ok(())
            }
            ToolError::Deserialization {
                tool,
                problems,
                message,
                expected,
            } => {
                write!(f, "Invalid arguments for `{tool}`:")?;
                for problem in problems.iter().take(MAX_PROBLEMS_SHOWN) {
                    write!(f, "\n- {problem}")?;
                }
                if problems.len() > MAX_PROBLEMS_SHOWN {
                    write!(
                        f,
                        "\n- and {} more like these",
                        problems.len() - MAX_PROBLEMS_SHOWN
                    )?;
                }
                if let (Some(message), true) = (message, problems.is_empty()) {
                    write!(f, "\n- {}", cut(message, LINE))?;
                }
                if !expected.is_empty() {
                    write!(
                        f,
                        "\nSend the call again with arguments of type {expected}."
                    )?;
                }
                Ok(())
            }
            ToolError::Execution {
                tool,
                message,
                panicked,
            } => {
                let what = if *panicked { "crashed" } else { "failed" };
                let message = cut(message, LINE);
                write!(
                    f,
                    "The tool `{tool}` {what}: {message}. The call was well-formed; \
                     do not resend it unchanged. Adapt: try other arguments or another approach."
                )
            }
            ToolError::Refused { tool, reason } => write!(
                f,
                "The call to `{tool}` was refused and did not run: {reason}. \
                 Do not send it again unchanged; change course: do something else, or answer without it."
            ),
            ToolError::TimedOut { tool, after } => write!(
                f,
                "The call to `{tool}` did not finish within {after:?} and was stopped; \
                 it may or may not have taken effect."
            ),
            ToolError::Escalation(escalation) => write!(
                f,
                "Giving up on this call after {} attempt(s): {}.",
                escalation.attempts,
                cut(&escalation.reason, LINE)
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_steps_keep_fix_and_adapt_apart() {
        let unknown = ToolError::UnknownTool {
            name: "x".into(),
            suggestions: vec![],
            available: vec![],
        };
        let failed = ToolError::Execution {
            tool: "t".into(),
            message: "boom".into(),
            panicked: false,
        };
        let escalated = ToolError::Escalation(Box::new(Escalation {
            source: "repair".into(),
            reason: "not a formatting problem".into(),
            severity: Severity::Medium,
            original: unknown.clone(),
            attempts: 3,
        }));
        assert_eq!(unknown.next_step(), NextStep::FixCall);
        assert_eq!(failed.next_step(), NextStep::Adapt);
        assert_eq!(escalated.next_step(), NextStep::Abort);
        assert_eq!(escalated.tool(), Some("x"));
        assert!(escalated.to_string().contains("after 3 attempt(s)"));
    }

    #[test]
    fn messages_for_the_model_say_what_to_do() {
        let denied = ToolError::EffectDenied {
            tool: "issue_refund".into(),
            effects: EffectSet::WRITE,
            allowed: EffectSet::READ,
        };
        assert_eq!(
            denied.to_string(),
            "effect violation: tool `issue_refund` has effects {Write}, but only {Read} are allowed here"
        );
        assert_eq!(
            denied.for_model(),
            "effect violation: tool `issue_refund` has effects {Write}, but only {Read} are allowed here. \
             Do not call it again; use another tool or answer without it."
        );
        let nothing = ToolError::EffectDenied {
            tool: "lookup".into(),
            effects: EffectSet::READ,
            allowed: EffectSet::PURE,
        };
        assert_eq!(
            nothing.to_string(),
            "effect violation: tool `lookup` has effects {Read}, but no effects are allowed here"
        );
    }
}
