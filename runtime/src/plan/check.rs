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
//! # No false refusals
//!
//! A plan that could run without a type error must pass. The checker refuses
//! an expression only when *every* value its parts can have at run time makes
//! it fail; when it cannot tell, it accepts, and the interpreter still checks
//! at run time. So its types have an unknown element, [`Ty::Any`] (schemas
//! λ-Tool cannot express: `anyOf` of several shapes, maps, free-form JSON,
//! tuples, and output numbers that may be Int or Float), and a nullable one,
//! [`Ty::Nullable`] (`Option<T>`: a `T` or `()`, accepted wherever either
//! is). Branches of different types (`Ok(r) => "done", Err(e) => e`, which
//! runs) make a value of type `Any` rather than an error. Schemas that put
//! fields beside `$ref`/`anyOf`/`oneOf`/`allOf` (a flattened enum, a tagged
//! newtype variant) are `Any` too.
//!
//! Three refusals of plans that could run are deliberate, as in any static
//! checker: code a run may not reach is checked (`if false then "a" + 1 else
//! 0`, and the right side of `and`/`or`: `false and 1`), since it fails
//! whenever it runs; a callback's annotation is taken at its word (`fn x: Int
//! => x ++ "!"` is refused even over a list of unknown type), since it is the
//! plan's own claim; and argument names are the ones the schema shows, not
//! `#[serde(alias)]`es, which the catalog never shows a model.
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

use std::fmt;

use crate::effect::Effects;
use crate::tool::ToolSpec;
use crate::toolbox::Toolbox;

use super::error::{PlanError, RunError};
use super::ir::{BinaryOp, Child, Expr, Lambda2, Param, Plan, Step, MAX_DEPTH};

mod types;

use types::{
    annotation, bounded, contradicts, element, error_record, fit, join, kinds, read, record,
    refine, Misfit, Side, BOOL, FLOAT, INT, LIST, RECORD, STRING,
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
pub fn check<A: Effects>(plan: &Plan, toolbox: &Toolbox<A>) -> Result<Ty, PlanError> {
    let mut tools = Vec::new();
    let within_depth = Child::Expr(&plan.body).visit_tools(&mut |tool, _| {
        if !tools.contains(&tool) {
            tools.push(tool);
        }
    });
    if !within_depth {
        return Err(PlanError::TooDeep { limit: MAX_DEPTH });
    }
    check_within_depth(plan, &tools, toolbox)
}

/// [`check`] of a plan already found within [`MAX_DEPTH`], naming `tools`.
pub(super) fn check_within_depth<A: Effects>(
    plan: &Plan,
    tools: &[&str],
    toolbox: &Toolbox<A>,
) -> Result<Ty, PlanError> {
    let tools = tools
        .iter()
        .map(|&name| {
            let types = toolbox.spec(name).map(ToolTypes::of).unwrap_or(ToolTypes {
                input: Ty::Any,
                output: Ty::Any,
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
        Ok(ty)
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
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

struct Checker<'p> {
    tools: Vec<(&'p str, ToolTypes)>,
    /// Bound variables, innermost last.
    env: Vec<(&'p str, Ty)>,
    /// The `Ok` binders of the matches whose `Err` branch is being checked.
    gone: Vec<&'p str>,
    errors: Vec<TypeError>,
    /// Inside a pass that only finds a `fold`'s accumulator type.
    speculative: usize,
}

impl<'p> Checker<'p> {
    fn error(&mut self, kind: TypeErrorKind, at: String, message: String) {
        if self.errors.len() < MAX_TYPE_ERRORS {
            self.errors.push(TypeError { kind, at, message });
        }
    }

    fn tool(&self, name: &str) -> Option<&ToolTypes> {
        self.tools
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, types)| types)
    }

    fn bound(&mut self, name: &'p str, ty: Ty, body: &'p Expr) -> Ty {
        self.env.push((name, ty));
        let ty = self.expr(body);
        self.env.pop();
        ty
    }

    /// Reports `what` unless `ty` may be one of `wanted`.
    fn require(&mut self, ty: &Ty, wanted: u8, at: impl FnOnce() -> String, what: &str) -> bool {
        if kinds(ty) & wanted != 0 {
            return true;
        }
        let message = format!("{what}, found {ty}");
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
                // Elements of one type (the usual list) are joined for free.
                let mut of: Option<Ty> = None;
                for item in items {
                    let ty = self.expr(item);
                    of = Some(match of {
                        None => ty,
                        Some(acc) if acc == ty => acc,
                        Some(acc) => bounded(join(&acc, &ty)),
                    });
                }
                Ty::List(Box::new(of.unwrap_or(Ty::Any)))
            }
            Expr::Var { name } => self.var(name),
            Expr::Get { of, field } => {
                let ty = self.expr(of);
                self.get(expr, &ty, field)
            }
            Expr::Match { on, ok, err } => {
                let value = self.step(on);
                let ok_ty = self.bound(&ok.bind, value, &ok.body);
                self.gone.push(&ok.bind);
                let err_ty = self.bound(&err.bind, error_record(), &err.body);
                self.gone.pop();
                bounded(join(&ok_ty, &err_ty))
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
                let a = self.expr(then);
                let b = self.expr(otherwise);
                bounded(join(&a, &b))
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
                let list_ty = self.expr(list);
                self.require(
                    &list_ty,
                    LIST,
                    || format!("the list of `filter` {}", short(list)),
                    "`filter` goes over a list",
                );
                let items = element(&list_ty);
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

    /// The type of a list's elements, reporting a value that is no list.
    fn list(&mut self, list: &'p Expr, combinator: &str) -> Ty {
        let ty = self.expr(list);
        self.require(
            &ty,
            LIST,
            || format!("the list of `{combinator}` {}", short(list)),
            &format!("`{combinator}` goes over a list"),
        );
        element(&ty)
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
        let mut message = format!("variable `{name}` is not bound here");
        if self.gone.contains(&name) {
            message.push_str(&format!(
                "; `{name}` is the `Ok` binder of a `match` and exists only in its `Ok` branch: move what uses it there, or in the `Err` branch use the error (`{{tool, kind, message}}`)"
            ));
        }
        if in_scope.is_empty() {
            message.push_str("; no variable is bound here");
        } else {
            message.push_str(&format!("; in scope: {}", names(&in_scope)));
        }
        self.error(TypeErrorKind::Unbound, format!("`{name}`"), message);
        Ty::Any
    }

    fn get(&mut self, expr: &'p Expr, ty: &Ty, field: &str) -> Ty {
        if !self.require(
            ty,
            RECORD,
            || short(expr),
            &format!("`.{field}` reads a field of a record"),
        ) {
            return Ty::Any;
        }
        let Some(record) = record(ty) else {
            return Ty::Any;
        };
        match record.field(field) {
            Some(f) => f.ty.clone(),
            None if record.open => Ty::Any,
            None => {
                // λ-Tool's message, with the record type naming the fields there are.
                let message = RunError::MissingField {
                    field: field.to_owned(),
                    found: Ty::Record(record.clone()).to_string(),
                }
                .to_string();
                self.error(TypeErrorKind::MissingField, short(expr), message);
                Ty::Any
            }
        }
    }

    fn binary(&mut self, expr: &'p Expr, op: BinaryOp, l: &Ty, r: &Ty) -> Ty {
        let symbol = op.symbol();
        let (wanted, result, what, hint) = match op {
            BinaryOp::Eq | BinaryOp::Ne => return Ty::Bool,
            BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge => {
                if kinds(l) & kinds(r) & (INT | FLOAT | STRING) != 0 {
                    return Ty::Bool;
                }
                let hint = if kinds(l) | kinds(r) == INT | FLOAT {
                    "; write both sides as Int, or both as Float (`1.0`)"
                } else {
                    ""
                };
                let message = format!(
                    "`{symbol}` compares two Ints, two Floats or two Strings, found {l} {symbol} {r}{hint}"
                );
                self.error(TypeErrorKind::Mismatch, short(expr), message);
                return Ty::Bool;
            }
            BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div | BinaryOp::Rem => {
                let hint = if op == BinaryOp::Add && (kinds(l) | kinds(r)) & STRING != 0 {
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
                "; to write a number as text, `call` a pure tool that formats it",
            ),
            BinaryOp::And | BinaryOp::Or => (BOOL, Ty::Bool, "a Bool", ""),
        };
        if kinds(l) & wanted == 0 || kinds(r) & wanted == 0 {
            let message =
                format!("`{symbol}` needs {what} on both sides, found {l} {symbol} {r}{hint}");
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
        refine(items, &annotated)
    }

    /// A `fold`: the accumulator's type is found by checking the callback
    /// until it stops changing (at most twice, then `Any`), errors dropped;
    /// then once more, keeping errors.
    fn fold(&mut self, func: &'p Lambda2, init: Ty, items: &Ty) -> Ty {
        let item = self.param(&func.item, items, "fold");
        let mut acc = self.param(&func.acc, &init, "fold");
        let mut settled = false;
        if self.speculative == 0 {
            for _ in 0..2 {
                let mark = self.errors.len();
                self.speculative += 1;
                let next = self.fold_body(func, acc.clone(), item.clone());
                self.speculative -= 1;
                self.errors.truncate(mark);
                let next = bounded(join(&acc, &next));
                if next == acc {
                    settled = true;
                    break;
                }
                acc = next;
            }
        }
        if !settled {
            acc = Ty::Any;
        }
        let next = self.fold_body(func, acc.clone(), item);
        bounded(join(&acc, &next))
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
            return Ty::Any;
        };
        let output = types.output.clone();
        let input = types.input.clone();
        let call = format!("`{how} tool {tool}`");
        if matches!(input, Ty::Record(_)) && kinds(actual) & RECORD == 0 {
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
        fit(actual, &input, "", &mut misfits);
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
