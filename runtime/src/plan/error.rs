//! Why a plan did not give a value: [`PlanError`], refused before anything
//! ran, and [`RunError`], stopped while running.

use std::fmt;

use crate::cut::{cut, Echo, LINE};
use crate::effect::EffectSet;
use crate::error::ToolError;

use super::check::TypeError;
use super::ir::BinaryOp;
use super::limits::Limit;

/// Why a plan was refused: found before anything ran, so nothing did. Each
/// message is written for a model to fix its plan and send it again.
///
/// ```
/// use typed_tools::plan::PlanError;
///
/// let error = PlanError::TooDeep { limit: 64 };
/// assert_eq!(error.to_string(), "the plan nests deeper than 64 levels; name parts with `let`");
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum PlanError {
    /// The plan names a tool the toolbox does not have. Nothing ran.
    UnknownTool {
        /// The name in the plan.
        name: String,
        /// The tools the plan may call.
        available: Vec<String>,
    },
    /// A tool's effects are not within the allowed set: the toolbox's (a
    /// [`restrict`](crate::Toolbox::restrict)ed view) or the interpreter's.
    /// Said as a direct call's [`ToolError::EffectDenied`] says it. Nothing
    /// ran.
    EffectViolation {
        /// The tool.
        tool: String,
        /// Its effects.
        effects: EffectSet,
        /// What is allowed.
        allowed: EffectSet,
    },
    /// A tool call inside the callback of `map`, `filter` or `fold`, which
    /// must be pure. Nothing ran.
    EffectInPureCallback {
        /// `map`, `filter` or `fold`.
        combinator: &'static str,
        /// The tool called.
        tool: String,
    },
    /// `call tool NAME` of a tool that has effects or can fail: only a pure,
    /// infallible tool is a function; any other must be `exec`uted and its
    /// Result matched. Nothing ran.
    NotAFunction {
        /// The tool.
        tool: String,
        /// Its effects.
        effects: EffectSet,
        /// Whether it can fail.
        fallible: bool,
    },
    /// The plan nests deeper than [`MAX_DEPTH`](super::MAX_DEPTH). Nothing ran.
    TooDeep {
        /// The limit.
        limit: usize,
    },
    /// The plan does not type-check against its tools' types (see
    /// [`check`](super::check())): every error found, each saying where and
    /// what to write instead. Nothing ran.
    ///
    /// ```
    /// use typed_tools::{tool, Toolbox};
    /// use typed_tools::plan::{check, Plan};
    ///
    /// /// Look up a customer's email.
    /// #[tool(effects = Read)]
    /// fn lookup_email(id: String) -> String { format!("{id}@example.com") }
    ///
    /// let toolbox = Toolbox::builder().tool(LookupEmail).build().unwrap();
    /// let plan = Plan::parse(r#"match exec tool lookup_email {id = "c1"} {
    ///   Ok(email) => email.domain,
    ///   Err(e) => "none"
    /// }"#).unwrap();
    /// let error = check(&plan, &toolbox).unwrap_err();
    /// assert_eq!(error.to_string(), "the plan does not type-check, nothing ran; fix it and resubmit:
    /// - `email.domain`: `.domain` reads a field of a record, found String");
    /// ```
    TypeErrors(Vec<TypeError>),
}

/// Why a plan stopped while running: an error of the plan itself, not of its
/// tools (a tool's failure is a value for the plan's `Err` branch). The calls
/// made before it are in the run's trace; nothing after it ran.
///
/// ```
/// use typed_tools::plan::RunError;
///
/// let error = RunError::MissingField { field: "plan".into(), found: "{id: String}".into() };
/// assert_eq!(error.to_string(), "field `plan` not found in record type {id: String}");
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum RunError {
    /// A variable used where it is not bound (an `Ok` binder in the `Err`
    /// branch, for instance).
    Unbound {
        /// The name.
        name: String,
    },
    /// A field read from a record that does not have it.
    MissingField {
        /// The field.
        field: String,
        /// The record's type.
        found: String,
    },
    /// A value of the wrong type for an operation.
    TypeMismatch {
        /// Where: `if`, `+`, `map`, a field access, ...
        context: String,
        /// What was needed.
        expected: &'static str,
        /// The value's type.
        found: String,
    },
    /// `/` or `%` by zero.
    DivisionByZero,
    /// Integer arithmetic overflowed.
    Overflow {
        /// The operation.
        op: BinaryOp,
    },
    /// A tool's arguments could not be written as JSON (a Float that is not finite).
    NotJson {
        /// The tool.
        tool: String,
    },
    /// A `call` of a pure tool failed: its arguments do not fit its input
    /// (the plan's mistake), or it panicked. A pure tool has no `Err` branch
    /// to go to, so the plan stops.
    CallFailed {
        /// The tool.
        tool: String,
        /// What the toolbox reported.
        error: Box<ToolError>,
    },
    /// The run reached one of its [`Limits`](super::Limits): it was stopped
    /// before the work that would pass it.
    ///
    /// ```
    /// use typed_tools::plan::{Limit, RunError};
    ///
    /// let error = RunError::LimitExceeded { limit: Limit::Depth(64) };
    /// assert_eq!(
    ///     error.to_string(),
    ///     "the plan was stopped: a value would nest deeper than 64 levels (limit `depth`); \
    ///      keep values flatter (a `fold` whose callback wraps its accumulator nests one level per element)"
    /// );
    /// ```
    LimitExceeded {
        /// The limit, with its value.
        limit: Limit,
    },
    /// The plan's value does not fit the Rust type it is read into
    /// ([`Interpreter::run_as`](super::Interpreter::run_as),
    /// [`TypedPlan::run`](super::typed::TypedPlan::run)): a number out of
    /// the type's range, a string that is none of an enum's, a part whose
    /// type the check could not know. Every call had run.
    ///
    /// ```
    /// use typed_tools::plan::{RunError, Value};
    ///
    /// let error = RunError::OutcomeType {
    ///     expected: "u8".into(),
    ///     error: "invalid value: integer `300`, expected u8".into(),
    ///     value: Value::Int(300),
    /// };
    /// assert_eq!(error.to_string(), "the plan's value does not fit u8: invalid value: integer `300`, expected u8; the value: 300");
    /// ```
    OutcomeType {
        /// The type it was read into (a record by its Rust name, `[String]`).
        expected: String,
        /// Why it does not fit, as serde says.
        error: String,
        /// The value, as the plan gave it.
        value: super::Value,
    },
    /// A [durable](crate::durable) run's journal stopped the run before a
    /// call: it could not record the call, or the call is in doubt. The
    /// durable run reports the typed reason; nothing after it ran.
    Journal {
        /// What the journal said.
        message: String,
    },
}

impl From<Limit> for RunError {
    fn from(limit: Limit) -> RunError {
        RunError::LimitExceeded { limit }
    }
}

impl RunError {
    pub(crate) fn mismatch(
        context: impl Into<String>,
        expected: &'static str,
        found: &super::Value,
    ) -> RunError {
        RunError::TypeMismatch {
            context: context.into(),
            expected,
            found: found.type_name(),
        }
    }
}

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlanError::UnknownTool { name, available } => {
                write!(f, "unknown tool `{}`; the plan may call: ", Echo(name))?;
                crate::schema::write_list(f, available)
            }
            PlanError::EffectViolation {
                tool,
                effects,
                allowed,
            } => crate::error::write_effect_denied(f, tool, *effects, *allowed),
            PlanError::EffectInPureCallback { combinator, tool } => write!(
                f,
                "effect violation: the callback of `{combinator}` must be pure but calls `{tool}`; use `traverse` for effectful iteration"
            ),
            PlanError::NotAFunction {
                tool,
                effects,
                fallible,
            } => {
                write!(f, "`call tool {tool}` is refused: `{tool}`")?;
                match (effects.is_pure(), fallible) {
                    (false, true) => write!(f, " has effects {effects} and can fail")?,
                    (false, false) => write!(f, " has effects {effects}")?,
                    _ => f.write_str(" can fail")?,
                }
                write!(
                    f,
                    "; only a pure tool that cannot fail is called with `call`: write `match exec tool {tool} ARGS {{ Ok(x) => ..., Err(e) => ... }}`"
                )
            }
            PlanError::TooDeep { limit } => write!(
                f,
                "the plan nests deeper than {limit} levels; name parts with `let`"
            ),
            PlanError::TypeErrors(errors) => {
                f.write_str("the plan does not type-check, nothing ran; fix it and resubmit:")?;
                for error in errors {
                    write!(f, "\n- {error}")?;
                }
                Ok(())
            }

        }
    }
}

impl std::error::Error for PlanError {}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Unbound { name } => {
                write!(f, "variable `{}` is not bound here", Echo(name))
            }
            RunError::MissingField { field, found } => write!(
                f,
                "field `{}` not found in record type {}",
                Echo(field),
                cut(found, LINE)
            ),
            RunError::TypeMismatch {
                context,
                expected,
                found,
            } => write!(
                f,
                "{}: expected {}, found {}",
                cut(context, LINE),
                cut(expected, LINE),
                cut(found, LINE)
            ),
            RunError::DivisionByZero => f.write_str("division by zero"),
            RunError::Overflow { op } => {
                write!(f, "integer overflow in `{}`", op.symbol())
            }
            RunError::NotJson { tool } => write!(
                f,
                "the arguments of `{tool}` cannot be written as JSON (a number that is not finite)"
            ),
            RunError::CallFailed { tool, error } => {
                write!(f, "`call tool {tool}` failed: {error}")
            }
            RunError::OutcomeType {
                expected,
                error,
                value,
            } => write!(
                f,
                "the plan's value does not fit {}: {}; the value: {}",
                cut(expected, LINE),
                cut(error, LINE),
                cut(&value.to_string(), LINE)
            ),
            RunError::LimitExceeded { limit } => write!(
                f,
                "the plan was stopped: {limit} (limit `{}`); {}",
                limit.name(),
                limit.advice()
            ),
            RunError::Journal { message } => {
                write!(f, "the plan was stopped by its journal: {message}")
            }
        }
    }
}

impl std::error::Error for RunError {}
