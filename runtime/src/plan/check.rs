//! The static type checker: a plan against its tools' types, before anything
//! runs ([`check`]).
//!
//! The tools' types come from the toolbox: each tool's input and output JSON
//! Schemas ([`ToolSpec`]) are read as checker types ([`Ty`]).
//! Then every expression is given a type, bottom up, and each rule the
//! interpreter enforces at run time is checked statically: variables in
//! scope, field access, the operands of the pure operations, `if` and
//! `filter` conditions, the lists of `map`/`filter`/`fold`/`traverse`,
//! callback annotations, and the arguments of `exec` and `call` (unknown,
//! missing and mistyped fields: the toolbox would refuse them). Every error
//! is collected, each saying where it is and what to write instead.
//!
//! # Sound
//!
//! A plan that passes never stops with a type error at run time: each value
//! used as one kind (an operand, a condition, a list, a record whose field is
//! read, a `call`'s arguments) is that kind for every run. What can still
//! stop it is what no type rules out (division by zero, overflow, a pure
//! tool that panics, a resource limit), and a tool's own error, which is the
//! plan's `Err` branch. A property test in `tests/plan_check.rs` holds the
//! checker to this over random plans; another shows that plans built well
//! typed all pass.
//!
//! The rules that make it so:
//! - A list's elements have one type, and so do a `fold`'s accumulator, its
//!   initial value and its step's result (found by joining what the step
//!   gives until it stops changing; a step that wraps its accumulator,
//!   `[acc]`, has no finite type and is refused, unless the accumulator's
//!   type is [`Ty::Any`], which wrapped is `Any` still: then the run's
//!   depth limit stops it). `[]`'s elements are [`Ty::Nothing`]: no value,
//!   so they join any type.
//! - The two branches of a `match` (and of an `if`) give one type: the
//!   same, or one that covers both without losing what they are, as a
//!   list's elements (`()` and `Int`: `Int?`; `[]` and `[Int]`: `[Int]`;
//!   records: a field only one has is optional). Branches that only
//!   [`Ty::Any`] would cover (Int and String, a record and a String, Int and
//!   Float, anywhere inside them) are refused, with what to write, as the
//!   typed builder refuses them at compile time (`on!`, `if_`): λ-Tool's
//!   `Ok(r) => "done", Err(e) => e` is refused, and `Err(e) => e.message`
//!   checks. A plan's type is never made unknown by its own branches.
//! - [`Ty::Any`] is what is not known: schemas λ-Tool cannot express
//!   (`anyOf` of several shapes, maps, free-form JSON, tuples, a run-time
//!   tool's `number`). An `Any` can be returned, compared with `==`, put in
//!   a record and passed to `exec` (the tool checks it: a misfit is its
//!   `Err` branch), but not used as one kind of value.
//! - [`Ty::Nullable`] (`Option<T>`) is a `T` or `()`: it is tested first,
//!   `if x == () then ... else ...`, and the branch where `x` is not `()`
//!   sees a `T`.
//! - A field is read only when every value has it: listed and required in a
//!   closed record. An output whose schema puts fields beside a combinator
//!   (a flattened enum, a tagged newtype variant) has the listed fields.
//! - A callback's annotation is checked against the list's elements, not
//!   trusted: the parameter has the elements' type (the interpreter does
//!   not check annotations).
//! - `call` arguments must fit for every value (a failed `call` stops the
//!   plan); `exec` arguments are refused only when they surely do not fit.
//! - A tool's output is trusted to have the type its schema says only
//!   because the interpreter holds it to that type when the tool returns:
//!   an output that does not fit (a `u64` past Int's range, a NaN that
//!   serde wrote as `null`, a run-time or MCP tool's JSON that breaks its
//!   schema) is that call's [`ToolError::Execution`](crate::ToolError),
//!   the plan's `Err` branch. An integer where a Float is due is read as
//!   that Float.
//!
//! Some refusals are of plans a run could survive, as with any static
//! checker: code a run may not reach is checked (`if false then "a" + 1
//! else 0`, the right side of `and`/`or`), branches of two types (`if c
//! then 1 else "a"`, whichever runs), and argument names are the ones the
//! schema shows, not `#[serde(alias)]`es, which the catalog never shows a
//! model.
//!
//! The other way round, integer ranges and string enums are not types
//! here, so `300` for a `u8` parameter (or `"gold"` for an enum of `"free"`
//! and `"pro"`) passes the check and meets the tool's deserializer when the
//! plan runs: in an `exec`, that is the call's error, so the plan takes the
//! `Err` branch (kind `deserialization`); in a `call`, whose pure tool has
//! no `Err` branch, it stops the plan (`RunError::CallFailed`), as any
//! failed `call` does.
//!
//! ```
//! # futures::executor::block_on(async {
//! use typed_tools::{tool, ToolError, Toolbox};
//! use typed_tools::plan::{check, Interpreter, Plan, RunError, Value};
//!
//! /// Set the volume, from 0 to 255.
//! #[tool(effects = Write)]
//! fn set_volume(level: u8) -> u8 { level }
//!
//! /// Double a level.
//! #[tool(effects = Pure)]
//! fn double(level: u8) -> u16 { u16::from(level) * 2 }
//!
//! let toolbox = Toolbox::builder().tool(SetVolume).tool(Double).build().unwrap();
//! let interpreter = Interpreter::new(&toolbox);
//!
//! let exec = Plan::parse(r#"match exec tool set_volume {level = 300} {
//!   Ok(level) => "set",
//!   Err(e) => e.kind
//! }"#).unwrap();
//! assert!(check(&exec, &toolbox).is_ok());
//! let run = interpreter.run(&exec).await.unwrap();
//! assert_eq!(run.outcome, Ok(Value::String("deserialization".into())));
//!
//! let call = Plan::parse("call tool double {level = 300}").unwrap();
//! assert!(check(&call, &toolbox).is_ok());
//! let run = interpreter.run(&call).await.unwrap();
//! let Err(RunError::CallFailed { tool, error }) = run.outcome else { panic!("{:?}", run.outcome) };
//! assert_eq!(tool, "double");
//! assert!(matches!(*error, ToolError::Deserialization { .. }));
//! # });
//! ```
//!
//! ```
//! use typed_tools::{tool, Toolbox};
//! use typed_tools::plan::{check, Plan, PlanError};
//!
//! /// Refund an amount.
//! #[tool(effects = Write)]
//! fn issue_refund(account_id: String, amount: i64) -> String { format!("tx_{amount}") }
//!
//! let toolbox = Toolbox::builder().tool(IssueRefund).build().unwrap();
//! let plan = Plan::parse(r#"match exec tool issue_refund {account_id = "a", amount = "12.99"} {
//!   Ok(tx) => tx ++ 1,
//!   Err(e) => e.reason
//! }"#).unwrap();
//! let Err(PlanError::TypeErrors(errors)) = check(&plan, &toolbox) else { panic!() };
//! let messages: Vec<String> = errors.iter().map(ToString::to_string).collect();
//! assert_eq!(messages, [
//!     "argument `amount` of `exec tool issue_refund`: expected Int, found String",
//!     "`tx ++ 1`: `++` needs a String on both sides, found String ++ Int; to write a number as text, `call` a pure tool that formats it",
//!     "`e.reason`: field `reason` not found in record type {tool: String, kind: String, message: String}",
//! ]);
//! ```

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::hash::BuildHasherDefault;

use crate::cut::{cut_owned, Echo, LINE};
use crate::effect::Effects;
use crate::tool::ToolSpec;
use crate::toolbox::{Fnv, Toolbox, ToolboxContext};

use super::error::{PlanError, RunError};
use super::ir::{BinaryOp, Child, Expr, Lambda2, Param, Plan, Step, MAX_DEPTH};

mod returns;
mod types;

pub use returns::Returns;
use types::{
    annotation, bounded, contradicts, element, error_record, fit, holds, join, kinds, loses, lost,
    read, record, surely_fit, unknowns, unsure, unsure_of, Misfit, Side, BOOL, FLOAT, INT, LIST,
    RECORD, STRING,
};
pub use types::{FieldTy, RecordTy, Ty};

/// At most this many errors are reported, in the order met; a plan with more
/// has more to fix than a model reads at once.
pub const MAX_TYPE_ERRORS: usize = 50;

/// What kind of mistake a [`TypeError`] is.
///
/// ```
/// use typed_tools::plan::check::TypeErrorKind;
///
/// assert_ne!(TypeErrorKind::MissingField, TypeErrorKind::UnknownArgument);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TypeErrorKind {
    /// A variable used where it is not bound.
    Unbound,
    /// A field read from a record type that does not have it.
    MissingField,
    /// A field read from a value that is not a record.
    NotARecord,
    /// A value of the wrong type for an operation, a condition or a list.
    Mismatch,
    /// An argument the tool does not take.
    UnknownArgument,
    /// A required argument left out.
    MissingArgument,
    /// An argument of the wrong type.
    ArgumentMismatch,
    /// A parameter annotation that the list's elements cannot have.
    Annotation,
    /// The branches of a `match` or an `if` give different types.
    Branches,
    /// The plan's value is not of the type required of it ([`Returns`]).
    Returns,
}

/// One type error: where it is in the plan and what is wrong, written for a
/// model to fix its plan. `Display` writes `{at}: {message}`.
///
/// ```
/// use typed_tools::{tool, Toolbox};
/// use typed_tools::plan::{check, Plan, PlanError};
/// use typed_tools::plan::check::TypeErrorKind;
///
/// /// Look up a customer's email.
/// #[tool(effects = Read)]
/// fn lookup_email(id: String) -> String { format!("{id}@example.com") }
///
/// let toolbox = Toolbox::builder().tool(LookupEmail).build().unwrap();
/// let plan = Plan::parse(r#"match exec tool lookup_email {customer = "c1"} {
///   Ok(email) => email, Err(e) => e.message
/// }"#).unwrap();
/// let Err(PlanError::TypeErrors(errors)) = check(&plan, &toolbox) else { panic!() };
/// assert_eq!(errors[0].kind, TypeErrorKind::UnknownArgument);
/// assert_eq!(errors[0].at, "argument `customer` of `exec tool lookup_email`");
/// assert_eq!(errors[0].message, "`lookup_email` takes no argument `customer`; its arguments are: `id`");
/// assert_eq!(errors[1].kind, TypeErrorKind::MissingArgument);
/// assert_eq!(errors[1].to_string(), "`exec tool lookup_email`: missing argument `id` of type String; add `id = ...` to the arguments");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct TypeError {
    /// What kind of mistake.
    pub kind: TypeErrorKind,
    /// Where: the expression, printed short (`` `account.plan` ``), or the
    /// tool and argument (``argument `amount` of `exec tool issue_refund` ``).
    pub at: String,
    /// What is wrong, and what to write instead.
    pub message: String,
}

impl fmt::Display for TypeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.at, self.message)
    }
}

/// Type-checks a plan against the types of the toolbox's tools and gives the
/// type of its outcome; refuses it with [`PlanError::TypeErrors`] (every
/// error found, at most [`MAX_TYPE_ERRORS`]), or [`PlanError::TooDeep`].
///
/// [`Preview::check`](super::Preview::check), and so every
/// [`Interpreter::run`](super::Interpreter::run), calls it after its own
/// checks. A tool the toolbox lacks is not an error here (the preview
/// reports it): its types are [`Ty::Any`].
///
/// ```
/// use typed_tools::{tool, Toolbox};
/// use typed_tools::plan::{check, Plan};
/// use typed_tools::plan::check::Ty;
///
/// /// Charge an order.
/// #[tool(effects = Write)]
/// fn charge(id: i64, amount: i64) -> String { format!("tx_{id}") }
///
/// let toolbox = Toolbox::builder().tool(Charge).build().unwrap();
/// let plan = Plan::parse(r#"match traverse (fn o: {id: Int, amount: Int} => exec tool charge o)
///     [{id = 1, amount = 100}] {
///   Ok(receipts) => receipts,
///   Err(e) => [e.message]
/// }"#).unwrap();
/// assert_eq!(check(&plan, &toolbox).unwrap(), Ty::List(Box::new(Ty::String)));
/// ```
pub fn check<A: Effects, C: ToolboxContext>(
    plan: &Plan,
    toolbox: &Toolbox<A, C>,
) -> Result<Ty, PlanError> {
    let mut seen = HashSet::new();
    let mut tools = Vec::new();
    let within_depth = Child::Expr(&plan.body).visit_tools(&mut |tool, _| {
        if seen.insert(tool) {
            tools.push(tool);
        }
    });
    if !within_depth {
        return Err(PlanError::TooDeep { limit: MAX_DEPTH });
    }
    check_within_depth(plan, &tools, toolbox).map(|(ty, _)| ty)
}

/// The output type the check gave each tool a plan names: what the
/// interpreter holds each output to, so that a tool whose output does not
/// fit it (an integer beyond Int, a NaN serde wrote as `null`, a run-time
/// tool's JSON) fails as that tool's error, never as a type error later.
pub(super) type Outputs<'p> = HashMap<&'p str, Ty, BuildHasherDefault<Fnv>>;

/// [`check`] of a plan already found within [`MAX_DEPTH`], naming `tools`;
/// with the plan's type, each tool's output type.
pub(super) fn check_within_depth<'p, A: Effects, C: ToolboxContext>(
    plan: &'p Plan,
    tools: &[&'p str],
    toolbox: &Toolbox<A, C>,
) -> Result<(Ty, Outputs<'p>), PlanError> {
    let tools = tools
        .iter()
        .map(|&name| {
            let types = toolbox.spec(name).map(ToolTypes::of).unwrap_or(ToolTypes {
                input: Ty::Any,
                output: Ty::Nothing,
            });
            (name, types)
        })
        .collect();
    let mut checker = Checker {
        tools,
        env: Vec::new(),
        gone: Vec::new(),
        errors: Vec::new(),
        speculative: 0,
    };
    let ty = checker.expr(&plan.body);
    if checker.errors.is_empty() {
        let outputs = checker
            .tools
            .into_iter()
            .map(|(name, types)| (name, types.output))
            .collect();
        Ok((ty, outputs))
    } else {
        Err(PlanError::TypeErrors(checker.errors))
    }
}

/// A tool's types, read from its schemas.
struct ToolTypes {
    input: Ty,
    output: Ty,
}

impl ToolTypes {
    fn of(spec: &ToolSpec) -> ToolTypes {
        ToolTypes {
            input: read(spec.input_model(), Side::Input),
            output: read(spec.output_model(), Side::Output),
        }
    }
}

/// What to add when one branch gives an Int and the other a String.
fn number_as_text(a: &Ty, b: &Ty) -> &'static str {
    if kinds(a) | kinds(b) == INT | STRING && kinds(a) != kinds(b) {
        "; to write a number as text, `call` a pure tool that formats it"
    } else {
        ""
    }
}

/// An expression printed on one line, cut short, in backticks.
fn short(expr: &Expr) -> String {
    const LIMIT: usize = 60;
    let text = Plan::new(expr.clone()).to_string();
    let mut line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() > LIMIT {
        line = line.chars().take(LIMIT - 1).collect();
        line.push('…');
    }
    format!("`{line}`")
}

fn names(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("`{}`", Echo(n)))
        .collect::<Vec<_>>()
        .join(", ")
}

struct Checker<'p> {
    tools: HashMap<&'p str, ToolTypes>,
    /// Bound variables, innermost last.
    env: Vec<(&'p str, Ty)>,
    /// The `Ok` binders of the matches whose `Err` branch is being checked.
    gone: Vec<&'p str>,
    errors: Vec<TypeError>,
    /// Inside a pass that only finds a `fold`'s accumulator type.
    speculative: usize,
}

impl<'p> Checker<'p> {
    fn error(&mut self, kind: TypeErrorKind, mut at: String, mut message: String) {
        if self.errors.len() < MAX_TYPE_ERRORS {
            // Names and types a model wrote may be long: each line bounded.
            cut_owned(&mut at, LINE);
            cut_owned(&mut message, LINE);
            self.errors.push(TypeError { kind, at, message });
        }
    }

    fn tool(&self, name: &str) -> Option<&ToolTypes> {
        self.tools.get(name)
    }

    fn bound(&mut self, name: &'p str, ty: Ty, body: &'p Expr) -> Ty {
        self.env.push((name, ty));
        let ty = self.expr(body);
        self.env.pop();
        ty
    }

    /// Reports `what` unless every value of type `ty` is one of `wanted`.
    fn require(&mut self, ty: &Ty, wanted: u8, at: impl FnOnce() -> String, what: &str) -> bool {
        if kinds(ty) & !wanted == 0 {
            return true;
        }
        let message = format!("{what}, found {ty}{}", unsure(ty));
        self.error(TypeErrorKind::Mismatch, at(), message);
        false
    }

    fn expr(&mut self, expr: &'p Expr) -> Ty {
        match expr {
            Expr::Unit => Ty::Unit,
            Expr::Bool { .. } => Ty::Bool,
            Expr::Int { .. } => Ty::Int,
            Expr::Float { .. } => Ty::Float,
            Expr::String { .. } => Ty::String,
            Expr::Record { fields } => bounded(Ty::Record(RecordTy {
                fields: fields
                    .iter()
                    .map(|(name, e)| FieldTy {
                        name: name.clone(),
                        ty: self.expr(e),
                        required: true,
                    })
                    .collect(),
                open: false,
            })),
            Expr::List { items } => {
                // The elements have one type: the same, or one that covers
                // both without losing what they are (`()` and `Int`: `Int?`).
                let mut of = Ty::Nothing;
                for item in items {
                    let ty = self.expr(item);
                    if ty == of {
                        continue;
                    }
                    let joined = bounded(join(&of, &ty));
                    if lost(&of, &ty, &joined) {
                        self.error(
                            TypeErrorKind::Mismatch,
                            short(expr),
                            format!(
                                "the elements of a list have one type, found {of} and then {ty} ({}); make them one type, or use a record to hold values of different types",
                                short(item)
                            ),
                        );
                        return Ty::List(Box::new(Ty::Nothing));
                    }
                    of = joined;
                }
                Ty::List(Box::new(of))
            }
            Expr::Var { name } => self.var(name),
            Expr::Get { of, field } => {
                let ty = self.expr(of);
                self.get(expr, &ty, field)
            }
            Expr::Match { on, ok, err } => {
                let value = self.step(on);
                let mark = self.errors.len();
                let ok_ty = self.bound(&ok.bind, value, &ok.body);
                self.gone.push(&ok.bind);
                let err_ty = self.bound(&err.bind, error_record(), &err.body);
                self.gone.pop();
                // A branch with an error of its own has no type to compare.
                if !loses(&ok_ty, &err_ty) || self.errors.len() > mark {
                    return bounded(join(&ok_ty, &err_ty));
                }
                let hint = match &*err.body {
                    Expr::Var { name } if *name == err.bind && ok_ty == Ty::String => {
                        format!(
                            "; `{0}` is the error record: `{0}.message` is its text",
                            err.bind
                        )
                    }
                    _ => number_as_text(&ok_ty, &err_ty).to_owned(),
                };
                self.branches_differ(
                    expr,
                    "match",
                    [format!("Ok({})", ok.bind), format!("Err({})", err.bind)],
                    [&ok_ty, &err_ty],
                    &hint,
                );
                Ty::Nothing
            }
            Expr::Let { name, value, body } => {
                let value = self.expr(value);
                self.bound(name, value, body)
            }
            Expr::If {
                cond,
                then,
                otherwise,
            } => {
                let c = self.expr(cond);
                self.require(
                    &c,
                    BOOL,
                    || format!("the condition {}", short(cond)),
                    "`if` needs a Bool condition (compare with `==`, `<`, ...)",
                );
                // `x == ()` / `x != ()`: in the branch where `x` is not
                // `()`, an `Option`'s value is there.
                let mark = self.errors.len();
                let (a, b) = match self.null_test(cond) {
                    Some((name, ty, true)) => {
                        let a = self.expr(then);
                        (a, self.bound(name, ty, otherwise))
                    }
                    Some((name, ty, false)) => {
                        let a = self.bound(name, ty, then);
                        (a, self.expr(otherwise))
                    }
                    None => (self.expr(then), self.expr(otherwise)),
                };
                if !loses(&a, &b) || self.errors.len() > mark {
                    return bounded(join(&a, &b));
                }
                self.branches_differ(
                    expr,
                    "if",
                    ["then".to_owned(), "else".to_owned()],
                    [&a, &b],
                    number_as_text(&a, &b),
                );
                Ty::Nothing
            }
            Expr::Not { operand } => {
                let ty = self.expr(operand);
                self.require(&ty, BOOL, || short(expr), "`not` needs a Bool");
                Ty::Bool
            }
            Expr::Binary { op, left, right } => {
                let l = self.expr(left);
                let r = self.expr(right);
                self.binary(expr, *op, &l, &r)
            }
            Expr::Map { func, list } => {
                let items = self.list(list, "map");
                let param = self.param(&func.param, &items, "map");
                let ty = self.bound(&func.param.name, param, &func.body);
                Ty::List(Box::new(ty))
            }
            Expr::Filter { func, list } => {
                let items = self.list(list, "filter");
                let param = self.param(&func.param, &items, "filter");
                let keep = self.bound(&func.param.name, param, &func.body);
                self.require(
                    &keep,
                    BOOL,
                    || format!("the callback of `filter` {}", short(&func.body)),
                    "the callback of `filter` must give a Bool",
                );
                Ty::List(Box::new(items))
            }
            Expr::Fold { func, init, list } => {
                let init = self.expr(init);
                let items = self.list(list, "fold");
                self.fold(func, init, &items)
            }
            Expr::Call { tool, arg } => {
                let ty = self.expr(arg);
                self.arguments("call", tool, &ty)
            }
        }
    }

    /// Reports the branches of a `match` or an `if` (`what`), named
    /// `names`, whose types `tys` no one type covers: refused, as the typed
    /// builder refuses them (`on!`, `if_`), rather than given `Any`.
    fn branches_differ(
        &mut self,
        expr: &'p Expr,
        what: &str,
        names: [String; 2],
        tys: [&Ty; 2],
        hint: &str,
    ) {
        let [a, b] = names;
        let [x, y] = tys;
        let message = format!(
            "the branches of this `{what}` give different types: `{a}` gives {x}, `{b}` gives {y}; \
             both give the `{what}`'s value, so make them one type (the same type in both, or `()` \
             in one for no value){hint}"
        );
        self.error(TypeErrorKind::Branches, short(expr), message);
    }

    /// The type of a list's elements, reporting a value that is no list.
    fn list(&mut self, list: &'p Expr, combinator: &str) -> Ty {
        let ty = self.expr(list);
        if self.require(
            &ty,
            LIST,
            || format!("the list of `{combinator}` {}", short(list)),
            &format!("`{combinator}` goes over a list"),
        ) {
            element(&ty)
        } else {
            Ty::Nothing
        }
    }

    fn var(&mut self, name: &str) -> Ty {
        if let Some((_, ty)) = self.env.iter().rev().find(|(n, _)| *n == name) {
            return ty.clone();
        }
        let mut in_scope: Vec<&str> = Vec::new();
        for (n, _) in self.env.iter().rev() {
            if !in_scope.contains(n) {
                in_scope.push(n);
            }
        }
        let mut message = format!("variable `{}` is not bound here", Echo(name));
        if self.gone.contains(&name) {
            message.push_str(&format!(
                "; `{}` is the `Ok` binder of a `match` and exists only in its `Ok` branch: move what uses it there, or in the `Err` branch use the error (`{{tool, kind, message}}`)",
                Echo(name)
            ));
        }
        if in_scope.is_empty() {
            message.push_str("; no variable is bound here");
        } else {
            message.push_str(&format!("; in scope: {}", names(&in_scope)));
        }
        self.error(TypeErrorKind::Unbound, format!("`{}`", Echo(name)), message);
        Ty::Nothing
    }

    /// `x == ()` (`true`) or `x != ()` (`false`) of a variable `x` whose type
    /// is `T?`: its name and `T`, the type it has where it is not `()`.
    fn null_test(&self, cond: &'p Expr) -> Option<(&'p str, Ty, bool)> {
        let Expr::Binary { op, left, right } = cond else {
            return None;
        };
        let is_null = match op {
            BinaryOp::Eq => true,
            BinaryOp::Ne => false,
            _ => return None,
        };
        let name = match (&**left, &**right) {
            (Expr::Var { name }, Expr::Unit) | (Expr::Unit, Expr::Var { name }) => name,
            _ => return None,
        };
        let (_, ty) = self.env.iter().rev().find(|(n, _)| *n == name.as_str())?;
        match ty {
            Ty::Nullable(of) => Some((name.as_str(), (**of).clone(), is_null)),
            _ => None,
        }
    }

    fn get(&mut self, expr: &'p Expr, ty: &Ty, field: &str) -> Ty {
        if *ty == Ty::Nothing {
            return Ty::Nothing;
        }
        if !self.require(
            ty,
            RECORD,
            || short(expr),
            &format!("`.{field}` reads a field of a record"),
        ) {
            return Ty::Nothing;
        }
        let Some(record) = record(ty) else {
            return Ty::Nothing;
        };
        match record.field(field) {
            Some(f) if f.required => f.ty.clone(),
            Some(_) => {
                let message = format!(
                    "field `{field}` of {} may be absent (the tool leaves it out when it has no value), so a plan cannot read it",
                    Ty::Record(record.clone())
                );
                self.error(TypeErrorKind::MissingField, short(expr), message);
                Ty::Nothing
            }
            None if record.open => {
                let message = format!(
                    "field `{field}` is not one of the known fields of {}, so it may be absent; read only the fields listed",
                    Ty::Record(record.clone())
                );
                self.error(TypeErrorKind::MissingField, short(expr), message);
                Ty::Nothing
            }
            None => {
                // λ-Tool's message, with the record type naming the fields there are.
                let message = RunError::MissingField {
                    field: field.to_owned(),
                    found: Ty::Record(record.clone()).to_string(),
                }
                .to_string();
                self.error(TypeErrorKind::MissingField, short(expr), message);
                Ty::Nothing
            }
        }
    }

    fn binary(&mut self, expr: &'p Expr, op: BinaryOp, l: &Ty, r: &Ty) -> Ty {
        let symbol = op.symbol();
        // A hint about the kinds found only when both are known for sure.
        let sure = unsure_of(l, r).is_empty();
        let (wanted, result, what, hint) = match op {
            BinaryOp::Eq | BinaryOp::Ne => return Ty::Bool,
            BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge => {
                let both = |kind: u8| kinds(l) & !kind == 0 && kinds(r) & !kind == 0;
                if both(INT) || both(FLOAT) || both(STRING) {
                    return Ty::Bool;
                }
                let hint = if sure && kinds(l) | kinds(r) == INT | FLOAT {
                    "; write both sides as Int, or both as Float (`1.0`)"
                } else {
                    ""
                };
                let message = format!(
                    "`{symbol}` compares two Ints, two Floats or two Strings, found {l} {symbol} {r}{hint}{}",
                    unsure_of(l, r)
                );
                self.error(TypeErrorKind::Mismatch, short(expr), message);
                return Ty::Bool;
            }
            BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div | BinaryOp::Rem => {
                let hint = if !sure {
                    ""
                } else if op == BinaryOp::Add && (kinds(l) | kinds(r)) & STRING != 0 {
                    "; join text with `++`"
                } else if (kinds(l) | kinds(r)) & FLOAT != 0 {
                    "; there is no Float arithmetic: compute in integer cents, or `call` a pure tool"
                } else {
                    ""
                };
                (INT, Ty::Int, "an Int", hint)
            }
            BinaryOp::Concat => (
                STRING,
                Ty::String,
                "a String",
                if sure {
                    "; to write a number as text, `call` a pure tool that formats it"
                } else {
                    ""
                },
            ),
            BinaryOp::And | BinaryOp::Or => (BOOL, Ty::Bool, "a Bool", ""),
        };
        if kinds(l) & !wanted != 0 || kinds(r) & !wanted != 0 {
            let message = format!(
                "`{symbol}` needs {what} on both sides, found {l} {symbol} {r}{hint}{}",
                unsure_of(l, r)
            );
            self.error(TypeErrorKind::Mismatch, short(expr), message);
        }
        result
    }

    /// A callback's parameter: its type, checking its annotation.
    fn param(&mut self, param: &'p Param, items: &Ty, combinator: &str) -> Ty {
        let Some(written) = &param.ty else {
            return items.clone();
        };
        let annotated = annotation(written, 0);
        if contradicts(items, &annotated) {
            self.error(
                TypeErrorKind::Annotation,
                format!("parameter `{}: {written}` of `{combinator}`", param.name),
                format!(
                    "the list's elements are {items}, not {written}; correct the annotation or leave it out"
                ),
            );
            return items.clone();
        }
        // The interpreter does not check annotations, so the parameter has
        // the type the list's elements have; the annotation is only checked.
        items.clone()
    }

    /// A `fold`: the accumulator, the initial value and the step's result
    /// have one type. It is found by checking the step with the initial
    /// value's type and joining in what the step gives, until it stops
    /// changing (errors dropped on the way); a step whose type loses what
    /// the accumulator is (`acc ++ "a"` on an Int), or grows at every step
    /// (`[acc]`, `{a = acc}`: no finite type), is refused. Then the step is
    /// checked once more, keeping its errors.
    fn fold(&mut self, func: &'p Lambda2, init: Ty, items: &Ty) -> Ty {
        const ROUNDS: usize = 3;
        let item = self.param(&func.item, items, "fold");
        let mut acc = self.param(&func.acc, &init, "fold");
        if self.speculative == 0 {
            let mut settled = false;
            for _ in 0..ROUNDS {
                let mark = self.errors.len();
                self.speculative += 1;
                let next = self.fold_body(func, acc.clone(), item.clone());
                self.speculative -= 1;
                self.errors.truncate(mark);
                let joined = bounded(join(&acc, &next));
                if joined == acc {
                    settled = true;
                    break;
                }
                // The accumulator may not become less known than it was
                // (`Int` joined with `String`, or with a list holding it).
                if unknowns(&joined) > unknowns(&acc) || holds(&next, &acc) {
                    self.fold_error(func, &acc, &next);
                    return Ty::Nothing;
                }
                acc = joined;
            }
            if !settled {
                let next = self.fold_body(func, acc.clone(), item.clone());
                self.fold_error(func, &acc, &next);
                return Ty::Nothing;
            }
        }
        let next = self.fold_body(func, acc.clone(), item);
        let joined = bounded(join(&acc, &next));
        if self.speculative == 0 && joined != acc {
            self.fold_error(func, &acc, &next);
            return Ty::Nothing;
        }
        joined
    }

    fn fold_error(&mut self, func: &'p Lambda2, acc: &Ty, next: &Ty) {
        let gives = if holds(next, acc) {
            match next {
                Ty::List(_) => "a List of the accumulator's type".to_owned(),
                _ => format!("a record holding the accumulator ({next})"),
            }
        } else {
            format!("{next}")
        };
        self.error(
            TypeErrorKind::Mismatch,
            short(&func.body),
            format!(
                "the step of `fold` gives {gives}; it must give the accumulator's type, {acc} (the initial value's type): the accumulator, the initial value and the step's result have one type"
            ),
        );
    }

    fn fold_body(&mut self, func: &'p Lambda2, acc: Ty, item: Ty) -> Ty {
        self.env.push((&func.acc.name, acc));
        let ty = self.bound(&func.item.name, item, &func.body);
        self.env.pop();
        ty
    }

    /// The Ok type of a step.
    fn step(&mut self, step: &'p Step) -> Ty {
        match step {
            Step::Exec { tool, arg } => {
                let ty = self.expr(arg);
                self.arguments("exec", tool, &ty)
            }
            Step::Traverse { param, body, list } => {
                let items = self.list(list, "traverse");
                let param_ty = self.param(param, &items, "traverse");
                self.env.push((&param.name, param_ty));
                let ty = self.step(body);
                self.env.pop();
                Ty::List(Box::new(ty))
            }
        }
    }

    /// Checks the arguments of `exec`/`call` of `tool`; gives its output type.
    fn arguments(&mut self, how: &str, tool: &str, actual: &Ty) -> Ty {
        let Some(types) = self.tool(tool) else {
            return Ty::Nothing;
        };
        let output = types.output.clone();
        let input = types.input.clone();
        let call = format!("`{how} tool {tool}`");
        // A failed `call` stops the plan, so its arguments must surely fit;
        // a failed `exec` is its `Err` branch, so only a certain misfit is refused.
        let surely = how == "call";
        let not_a_record = if surely {
            kinds(actual) & !RECORD != 0
        } else {
            kinds(actual) & RECORD == 0
        };
        if matches!(input, Ty::Record(_)) && not_a_record {
            self.error(
                TypeErrorKind::ArgumentMismatch,
                call,
                format!(
                    "the arguments are a record {input}, found {actual}; write `{how} tool {tool} {{name = value, ...}}`"
                ),
            );
            return output;
        }
        let mut misfits = Vec::new();
        if surely {
            surely_fit(actual, &input, "", &mut misfits);
        } else {
            fit(actual, &input, "", &mut misfits);
        }
        for misfit in misfits {
            match misfit {
                Misfit::Unknown { path, expected } => {
                    let expected: Vec<&str> = expected.iter().map(String::as_str).collect();
                    let message = match (path.rsplit_once('.'), expected.is_empty()) {
                        (None, true) => format!("`{tool}` takes no arguments; pass `{{}}`"),
                        (None, false) => format!(
                            "`{tool}` takes no argument `{path}`; its arguments are: {}",
                            names(&expected)
                        ),
                        (Some((parent, field)), _) => format!(
                            "`{parent}` has no field `{field}`; its fields are: {}",
                            names(&expected)
                        ),
                    };
                    self.error(
                        TypeErrorKind::UnknownArgument,
                        format!("argument `{path}` of {call}"),
                        message,
                    );
                }
                Misfit::Missing { path, ty } => {
                    let field = path.rsplit('.').next().unwrap_or(&path);
                    self.error(
                        TypeErrorKind::MissingArgument,
                        call.clone(),
                        format!("missing argument `{path}` of type {ty}; add `{field} = ...` to the arguments"),
                    );
                }
                Misfit::Mismatch {
                    path,
                    expected,
                    found,
                } => {
                    let at = if path.is_empty() {
                        format!("the argument of {call}")
                    } else {
                        format!("argument `{path}` of {call}")
                    };
                    self.error(
                        TypeErrorKind::ArgumentMismatch,
                        at,
                        format!("expected {expected}, found {found}"),
                    );
                }
            }
        }
        output
    }
}
