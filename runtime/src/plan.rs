//! Plans: small programs of tool calls in the spirit of λ-Tool.
//!
//! A plan calls tools, and every call yields a Result that must be matched on
//! both branches; iteration is bounded (`map`, `filter`, `fold` take pure
//! callbacks, `traverse` is the effectful one and stops at the first error);
//! there are no loops, no recursion and no retries. A pure tool that cannot
//! fail is a function (`call`), usable anywhere, callbacks included.
//!
//! | module | what it holds |
//! |---|---|
//! | [`typed`] | the typed plan builder: misuse is a compile error |
//! | [`ir`] | the plan IR ([`Plan`], [`Expr`], [`Step`]), plain serde data |
//! | [`text`] | the λ-Tool text form: printer and grammar |
//! | [`parse`] | the parser of that text ([`Plan::parse`], [`Plan::parse_with`] and its [`ParseOptions`], [`ParseError`]) |
//! | [`value`] | [`Value`], what expressions evaluate to |
//! | [`check`](mod@check) | the static type checker: a plan against its tools' types ([`check()`]) |
//! | [`preview`] | the checks before a run, [`Preview`] (tools, effects, how often), the approval hook's types |
//! | [`interpret`] | the [`Interpreter`]: outcome and trace |
//! | [`limits`] | [`Limits`], what a run may consume, and [`Limit`], the one a stopped run reached |
//! | [`error`] | [`PlanError`] (refused, nothing ran), [`RunError`] (stopped while running) |
//! | [`json`] | the JSON form a model writes under a structured-output schema, the schema, the `submit_plan` tool |
//! | [`prompt`] | [`PlanPrompt`]: what a model reads to write a plan, generated from the code |
//! | [`author`] | plans written by a model: [`find_plan`](author::find_plan) in an answer, [`check_plan`](author::check_plan) with every error, the fix-and-resubmit loop [`Author`] |

pub mod author;
pub mod check;
pub mod error;
pub mod interpret;
pub mod ir;
pub mod json;
mod lex;
pub mod limits;
pub mod parse;
pub mod preview;
pub mod prompt;
pub mod text;
pub mod typed;
pub mod value;

pub use author::{Author, AuthorError, Authored};
pub use check::check;
pub use error::{PlanError, RunError};
pub use interpret::{CallResult, Interpreter, Prepared, Run, TracedCall};
pub use ir::{BinaryOp, Branch, Expr, Lambda, Lambda2, Param, Plan, Step, Type, MAX_DEPTH};
pub use limits::{Limit, Limits};
pub use parse::{ParseError, ParseLimit, ParseOptions};
pub use preview::{ApprovalRequest, Decision, PlannedCall, Preview, Runs};
pub use prompt::PlanPrompt;
pub use value::{List, Record, Value};
