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
//! runs) make a value of type `Any` rather than an error. Like any static
//! checker, it reads code a run may not reach: `if false then "a" + 1 else 0`
//! is refused, because `"a" + 1` fails whenever it runs.
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

use serde_json::Value as Json;

use crate::effect::Effects;
use crate::schema;
use crate::tool::ToolSpec;
use crate::toolbox::Toolbox;

use super::error::PlanError;
use super::ir::{BinaryOp, Expr, Lambda2, Param, Plan, Step, Type, MAX_DEPTH};
use super::text::write_field_name;

/// At most this many errors are reported, in the order met; a plan with more
/// has more to fix than a model reads at once.
pub const MAX_TYPE_ERRORS: usize = 50;

/// How many schema nodes one tool's schema may become, and how deep: past
/// either, the rest is [`Ty::Any`]. Bounds the work on large or recursive
/// schemas.
const SCHEMA_BUDGET: usize = 1_000;
const SCHEMA_DEPTH: usize = 32;

/// A record or list type the plan builds with more nodes than this is
/// [`Ty::Any`]: `let b = {x = a, y = a} in let c = {x = b, y = b} in ...`
/// doubles at each `let`, and joining records compares their fields pairwise.
const TYPE_NODES: usize = 1_000;

/// `ty`, or `Any` when it has more than [`TYPE_NODES`] nodes.
fn bounded(ty: Ty) -> Ty {
    fn count(ty: &Ty, left: &mut usize) -> bool {
        if *left == 0 {
            return false;
        }
        *left -= 1;
        match ty {
            Ty::List(of) | Ty::Nullable(of) => count(of, left),
            Ty::Record(record) => record.fields.iter().all(|f| count(&f.ty, left)),
            _ => true,
        }
    }
    let mut left = TYPE_NODES;
    if count(&ty, &mut left) {
        ty
    } else {
        Ty::Any
    }
}

/// A type as the checker knows it: λ-Tool's types, plus [`Any`](Ty::Any)
/// (not known: anything may be there) and [`Nullable`](Ty::Nullable) (`T` or
/// `()`). `Display` writes λ-Tool notation.
///
/// ```
/// use typed_tools::plan::check::{FieldTy, RecordTy, Ty};
///
/// let account = Ty::Record(RecordTy {
///     fields: vec![
///         FieldTy { name: "id".into(), ty: Ty::String, required: true },
///         FieldTy { name: "note".into(), ty: Ty::Nullable(Box::new(Ty::String)), required: false },
///     ],
///     open: false,
/// });
/// assert_eq!(account.to_string(), "{id: String, note?: String?}");
/// assert_eq!(Ty::List(Box::new(Ty::Any)).to_string(), "[Any]");
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum Ty {
    /// Not known: any value may be here, so nothing about it is refused.
    Any,
    /// `Unit`.
    Unit,
    /// `Bool`.
    Bool,
    /// `Int`.
    Int,
    /// `Float`.
    Float,
    /// `String`.
    String,
    /// `[T]`.
    List(Box<Ty>),
    /// `{name: T, ...}`.
    Record(RecordTy),
    /// `T?`: a `T` or `()` (an `Option`).
    Nullable(Box<Ty>),
}

/// A record type: its fields, and whether it may have others.
///
/// ```
/// use typed_tools::plan::check::{FieldTy, RecordTy, Ty};
///
/// let open = RecordTy {
///     fields: vec![FieldTy { name: "id".into(), ty: Ty::Int, required: true }],
///     open: true,
/// };
/// assert_eq!(open.field("id").map(|f| &f.ty), Some(&Ty::Int));
/// assert_eq!(Ty::Record(open).to_string(), "{id: Int, ..}");
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct RecordTy {
    /// The fields, in order.
    pub fields: Vec<FieldTy>,
    /// Whether the record may have fields not listed (a tool input that does
    /// not deny unknown fields, a parameter annotation): reading one is not
    /// refused.
    pub open: bool,
}

/// A field of a [`RecordTy`].
///
/// ```
/// use typed_tools::plan::check::{FieldTy, Ty};
///
/// let field = FieldTy { name: "amount".into(), ty: Ty::Int, required: true };
/// assert!(field.required);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct FieldTy {
    /// The name, as in JSON.
    pub name: String,
    /// Its type.
    pub ty: Ty,
    /// Whether it is always there (in an input: whether it must be given).
    pub required: bool,
}

impl RecordTy {
    /// The field `name`.
    ///
    /// ```
    /// use typed_tools::plan::check::{RecordTy, Ty};
    ///
    /// let empty = RecordTy { fields: vec![], open: false };
    /// assert!(empty.field("id").is_none());
    /// ```
    pub fn field(&self, name: &str) -> Option<&FieldTy> {
        self.fields.iter().find(|f| f.name == name)
    }
}

impl fmt::Display for Ty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ty::Any => f.write_str("Any"),
            Ty::Unit => f.write_str("Unit"),
            Ty::Bool => f.write_str("Bool"),
            Ty::Int => f.write_str("Int"),
            Ty::Float => f.write_str("Float"),
            Ty::String => f.write_str("String"),
            Ty::List(of) => write!(f, "[{of}]"),
            Ty::Nullable(of) => write!(f, "{of}?"),
            Ty::Record(record) => {
                f.write_str("{")?;
                for (i, field) in record.fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write_field_name(f, &field.name)?;
                    if field.required {
                        write!(f, ": {}", field.ty)?;
                    } else {
                        write!(f, "?: {}", field.ty)?;
                    }
                }
                if record.open {
                    f.write_str(if record.fields.is_empty() {
                        ".."
                    } else {
                        ", .."
                    })?;
                }
                f.write_str("}")
            }
        }
    }
}

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
    if !plan.body.visit_tools(0, &mut |_| {}) {
        return Err(PlanError::TooDeep { limit: MAX_DEPTH });
    }
    let tools = plan
        .tools()
        .into_iter()
        .map(|name| {
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
        let input = spec.input_schema();
        let output = spec.output_schema();
        ToolTypes {
            input: Reader::new(input, Side::Input).ty(input),
            output: Reader::new(output, Side::Output).ty(output),
        }
    }
}

/// Which way a schema is read: what a tool accepts, or what it gives.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    /// An input record without `additionalProperties: false` ignores unknown
    /// fields; a JSON number may be given an Int.
    Input,
    /// A typed tool's output record has exactly its properties (schemars
    /// writes `additionalProperties` only for maps and flattened maps); a
    /// `number` may come back as an integer (a run-time tool's JSON), so it
    /// is `Any`.
    Output,
}

/// Reads a JSON Schema as a [`Ty`]; `$ref` cycles become `Any` where they recur.
struct Reader<'s> {
    root: &'s Json,
    side: Side,
    refs: Vec<&'s str>,
    budget: usize,
}

impl<'s> Reader<'s> {
    fn new(root: &'s Json, side: Side) -> Reader<'s> {
        Reader {
            root,
            side,
            refs: Vec::new(),
            budget: SCHEMA_BUDGET,
        }
    }

    fn ty(&mut self, schema: &'s Json) -> Ty {
        self.at_depth(schema, 0)
    }

    fn at_depth(&mut self, schema: &'s Json, depth: usize) -> Ty {
        if depth >= SCHEMA_DEPTH || self.budget == 0 {
            return Ty::Any;
        }
        self.budget -= 1;
        let d = depth + 1;
        if let Some(reference) = schema.get("$ref").and_then(Json::as_str) {
            if self.refs.contains(&reference) {
                return Ty::Any;
            }
            let Some(target) = schema::resolve(self.root, reference) else {
                return Ty::Any;
            };
            self.refs.push(reference);
            let ty = self.at_depth(target, d);
            self.refs.pop();
            return ty;
        }
        let Json::Object(keywords) = schema else {
            return Ty::Any;
        };
        if let Some(constant) = keywords.get("const") {
            return literal_ty(constant);
        }
        if let Some(values) = keywords.get("enum").and_then(Json::as_array) {
            let tys: Vec<Ty> = values.iter().map(literal_ty).collect();
            return tys
                .into_iter()
                .reduce(|a, b| join(&a, &b))
                .unwrap_or(Ty::Any);
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(options) = keywords.get(key).and_then(Json::as_array) {
                let tys: Vec<Ty> = options.iter().map(|o| self.at_depth(o, d)).collect();
                return tys
                    .into_iter()
                    .reduce(|a, b| join(&a, &b))
                    .unwrap_or(Ty::Any);
            }
        }
        if let Some(all) = keywords.get("allOf").and_then(Json::as_array) {
            return match all.as_slice() {
                [only] => self.at_depth(only, d),
                _ => Ty::Any,
            };
        }
        let types: Vec<&str> = match keywords.get("type") {
            Some(Json::String(t)) => vec![t.as_str()],
            Some(Json::Array(ts)) => ts.iter().filter_map(Json::as_str).collect(),
            None if keywords.contains_key("properties") => vec!["object"],
            _ => return Ty::Any,
        };
        let tys: Vec<Ty> = types.iter().map(|t| self.of_type(t, keywords, d)).collect();
        tys.into_iter()
            .reduce(|a, b| join(&a, &b))
            .unwrap_or(Ty::Any)
    }

    fn of_type(&mut self, t: &str, keywords: &'s serde_json::Map<String, Json>, d: usize) -> Ty {
        match t {
            "string" => Ty::String,
            "integer" => Ty::Int,
            "number" if self.side == Side::Input => Ty::Float,
            "boolean" => Ty::Bool,
            "null" => Ty::Unit,
            "array" if !keywords.contains_key("prefixItems") => match keywords.get("items") {
                Some(items) => Ty::List(Box::new(self.at_depth(items, d))),
                None => Ty::List(Box::new(Ty::Any)),
            },
            "object" => {
                let Some(properties) = keywords.get("properties").and_then(Json::as_object) else {
                    return Ty::Any;
                };
                let required = |name: &str| {
                    keywords
                        .get("required")
                        .and_then(Json::as_array)
                        .is_some_and(|r| r.iter().any(|n| n == name))
                };
                let fields = properties
                    .iter()
                    .map(|(name, schema)| FieldTy {
                        name: name.clone(),
                        ty: self.at_depth(schema, d),
                        required: required(name),
                    })
                    .collect();
                let open = match (self.side, keywords.get("additionalProperties")) {
                    (_, Some(Json::Bool(false))) => false,
                    (Side::Input, _) | (Side::Output, Some(_)) => true,
                    (Side::Output, None) => false,
                };
                Ty::Record(RecordTy { fields, open })
            }
            _ => Ty::Any,
        }
    }
}

/// The type of a `const` or `enum` value.
fn literal_ty(value: &Json) -> Ty {
    match value {
        Json::Null => Ty::Unit,
        Json::Bool(_) => Ty::Bool,
        Json::String(_) => Ty::String,
        Json::Number(n) if n.is_i64() => Ty::Int,
        _ => Ty::Any,
    }
}

/// The kinds of value a type may be at run time, as bits.
const UNIT: u8 = 1;
const BOOL: u8 = 2;
const INT: u8 = 4;
const FLOAT: u8 = 8;
const STRING: u8 = 16;
const LIST: u8 = 32;
const RECORD: u8 = 64;
const ALL: u8 = 127;

fn kinds(ty: &Ty) -> u8 {
    match ty {
        Ty::Any => ALL,
        Ty::Unit => UNIT,
        Ty::Bool => BOOL,
        Ty::Int => INT,
        Ty::Float => FLOAT,
        Ty::String => STRING,
        Ty::List(_) => LIST,
        Ty::Record(_) => RECORD,
        Ty::Nullable(of) => kinds(of) | UNIT,
    }
}

/// `T?`, without nesting: `Any?` is `Any`, `Unit?` is `Unit`.
fn nullable(ty: Ty) -> Ty {
    match ty {
        Ty::Any | Ty::Unit | Ty::Nullable(_) => ty,
        other => Ty::Nullable(Box::new(other)),
    }
}

/// The type of a value that has type `a` or type `b` (branches, list
/// elements, options of a schema): the same type, or one that covers both.
fn join(a: &Ty, b: &Ty) -> Ty {
    if a == b {
        return a.clone();
    }
    match (a, b) {
        (Ty::Any, _) | (_, Ty::Any) => Ty::Any,
        (Ty::Unit, other) | (other, Ty::Unit) => nullable(other.clone()),
        (Ty::Nullable(x), Ty::Nullable(y)) => nullable(join(x, y)),
        (Ty::Nullable(x), other) | (other, Ty::Nullable(x)) => nullable(join(x, other)),
        (Ty::List(x), Ty::List(y)) => Ty::List(Box::new(join(x, y))),
        (Ty::Record(x), Ty::Record(y)) => {
            let mut fields: Vec<FieldTy> = x
                .fields
                .iter()
                .map(|f| match y.field(&f.name) {
                    Some(g) => FieldTy {
                        name: f.name.clone(),
                        ty: join(&f.ty, &g.ty),
                        required: f.required && g.required,
                    },
                    None => FieldTy {
                        name: f.name.clone(),
                        ty: if y.open { Ty::Any } else { f.ty.clone() },
                        required: false,
                    },
                })
                .collect();
            for g in &y.fields {
                if x.field(&g.name).is_none() {
                    fields.push(FieldTy {
                        name: g.name.clone(),
                        ty: if x.open { Ty::Any } else { g.ty.clone() },
                        required: false,
                    });
                }
            }
            Ty::Record(RecordTy {
                fields,
                open: x.open || y.open,
            })
        }
        _ => Ty::Any,
    }
}

/// The element type of a value used as a list.
fn element(ty: &Ty) -> Ty {
    match ty {
        Ty::List(of) => (**of).clone(),
        Ty::Nullable(of) => element(of),
        _ => Ty::Any,
    }
}

/// The record type of a value whose field is read, if known.
fn record(ty: &Ty) -> Option<&RecordTy> {
    match ty {
        Ty::Record(record) => Some(record),
        Ty::Nullable(of) => record(of),
        _ => None,
    }
}

/// The type of the value an `Err` branch binds.
fn error_record() -> Ty {
    let field = |name: &str| FieldTy {
        name: name.into(),
        ty: Ty::String,
        required: true,
    };
    Ty::Record(RecordTy {
        fields: vec![field("tool"), field("kind"), field("message")],
        open: false,
    })
}

/// An annotation as a checker type: its records are open (an annotation may
/// name only the fields the callback reads). Deeper than [`MAX_DEPTH`] is `Any`.
fn annotation(ty: &Type, depth: usize) -> Ty {
    if depth > MAX_DEPTH {
        return Ty::Any;
    }
    match ty {
        Type::Unit => Ty::Unit,
        Type::Bool => Ty::Bool,
        Type::Int => Ty::Int,
        Type::Float => Ty::Float,
        Type::String => Ty::String,
        Type::List { of } => Ty::List(Box::new(annotation(of, depth + 1))),
        Type::Record { fields } => Ty::Record(RecordTy {
            fields: fields
                .iter()
                .map(|(name, ty)| FieldTy {
                    name: name.clone(),
                    ty: annotation(ty, depth + 1),
                    required: true,
                })
                .collect(),
            open: true,
        }),
    }
}

/// Whether no value of type `actual` has the annotated type: a field it
/// names is certainly absent, or a part is certainly of another kind.
fn contradicts(actual: &Ty, annotated: &Ty) -> bool {
    match (actual, annotated) {
        (Ty::Any, _) | (_, Ty::Any) => false,
        (Ty::Nullable(of), _) => contradicts(of, annotated) && contradicts(&Ty::Unit, annotated),
        (Ty::List(a), Ty::List(b)) => contradicts(a, b),
        (Ty::Record(a), Ty::Record(b)) => b.fields.iter().any(|f| match a.field(&f.name) {
            Some(g) => g.required && contradicts(&g.ty, &f.ty),
            None => !a.open,
        }),
        (a, b) => kinds(a) & kinds(b) == 0,
    }
}

/// The type a parameter has: the elements' type, with what the annotation
/// says where the elements' type does not know.
fn refine(actual: &Ty, annotated: &Ty) -> Ty {
    match (actual, annotated) {
        (Ty::Any, _) => annotated.clone(),
        (Ty::List(a), Ty::List(b)) => Ty::List(Box::new(refine(a, b))),
        (Ty::Record(a), Ty::Record(b)) => {
            let mut fields: Vec<FieldTy> = a
                .fields
                .iter()
                .map(|f| match b.field(&f.name) {
                    Some(g) => FieldTy {
                        ty: refine(&f.ty, &g.ty),
                        ..f.clone()
                    },
                    None => f.clone(),
                })
                .collect();
            if a.open {
                fields.extend(
                    b.fields
                        .iter()
                        .filter(|g| a.field(&g.name).is_none())
                        .cloned(),
                );
            }
            Ty::Record(RecordTy {
                fields,
                open: a.open,
            })
        }
        _ => actual.clone(),
    }
}

/// How an argument fails to fit a tool's input.
enum Misfit {
    Unknown {
        path: String,
        expected: Vec<String>,
    },
    Missing {
        path: String,
        ty: String,
    },
    Mismatch {
        path: String,
        expected: String,
        found: String,
    },
}

/// `path.field`, or `field` at the top.
fn join_path(path: &str, field: &str) -> String {
    if path.is_empty() {
        field.to_owned()
    } else {
        format!("{path}.{field}")
    }
}

/// Every certain misfit of a value of type `actual` for the input type
/// `expected`, by the rules of serde's deserializers: an Int is accepted for
/// a Float, `()` for an `Option`.
fn fit(actual: &Ty, expected: &Ty, path: &str, out: &mut Vec<Misfit>) {
    match (actual, expected) {
        (Ty::Any, _) | (_, Ty::Any) | (Ty::Int, Ty::Float) => {}
        (Ty::Nullable(of), _) => {
            let mut some = Vec::new();
            fit(of, expected, path, &mut some);
            let mut none = Vec::new();
            fit(&Ty::Unit, expected, path, &mut none);
            if !some.is_empty() && !none.is_empty() {
                out.extend(some);
            }
        }
        (Ty::Unit, Ty::Nullable(_)) => {}
        (_, Ty::Nullable(of)) => fit(actual, of, path, out),
        (Ty::List(a), Ty::List(b)) => fit(a, b, &format!("{path}[]"), out),
        (Ty::Record(a), Ty::Record(b)) => {
            for f in &a.fields {
                if f.required && !b.open && b.field(&f.name).is_none() {
                    out.push(Misfit::Unknown {
                        path: join_path(path, &f.name),
                        expected: b.fields.iter().map(|g| g.name.clone()).collect(),
                    });
                }
            }
            for g in &b.fields {
                match a.field(&g.name) {
                    None if g.required && !a.open => out.push(Misfit::Missing {
                        path: join_path(path, &g.name),
                        ty: g.ty.to_string(),
                    }),
                    Some(f) if f.required || g.required => {
                        fit(&f.ty, &g.ty, &join_path(path, &g.name), out)
                    }
                    _ => {}
                }
            }
        }
        (a, b) if kinds(a) & kinds(b) == 0 || matches!((a, b), (Ty::Float, Ty::Int)) => {
            out.push(Misfit::Mismatch {
                path: path.to_owned(),
                expected: b.to_string(),
                found: a.to_string(),
            })
        }
        _ => {}
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
                let tys: Vec<Ty> = items.iter().map(|e| self.expr(e)).collect();
                let of = tys.into_iter().reduce(|a, b| bounded(join(&a, &b)));
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
                let message = PlanError::MissingField {
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(schema: Json, side: Side) -> String {
        Reader::new(&schema, side).ty(&schema).to_string()
    }

    #[test]
    fn schemas_become_types() {
        let account = json!({
            "type": "object",
            "properties": {
                "id": {"type": "string"},
                "tier": {"enum": ["free", "pro"]},
                "note": {"type": ["string", "null"]},
                "owner": {"anyOf": [{"$ref": "#/$defs/Owner"}, {"type": "null"}]},
                "tags": {"type": "array", "items": {"type": "string"}},
                "pair": {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}]},
                "extra": {"type": "object", "additionalProperties": {"type": "integer"}},
                "either": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
                "price": {"type": "number"}
            },
            "required": ["id", "tier", "tags"],
            "$defs": {"Owner": {"type": "object", "properties": {"email": {"type": "string"}}, "required": ["email"]}}
        });
        assert_eq!(
            read(account.clone(), Side::Output),
            "{id: String, tier: String, note?: String?, owner?: {email: String}?, tags: [String], pair?: Any, extra?: Any, either?: Any, price?: Any}"
        );
        assert!(read(account, Side::Input).ends_with("price?: Float, ..}"));
    }

    #[test]
    fn recursive_and_huge_schemas_end() {
        let schema = json!({
            "$ref": "#/$defs/Node",
            "$defs": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}, "required": ["next"]}}
        });
        assert_eq!(read(schema, Side::Output), "{next: Any}");
        // Each level names the next twice: 2^40 nodes if inlined.
        let mut defs = serde_json::Map::new();
        for i in 0..40 {
            let next = json!({"$ref": format!("#/$defs/T{}", i + 1)});
            defs.insert(
                format!("T{i}"),
                json!({"type": "object", "properties": {"a": next, "b": next}}),
            );
        }
        let schema = json!({"$ref": "#/$defs/T0", "$defs": defs});
        let ty = Reader::new(&schema, Side::Output).ty(&schema);
        assert!(ty.to_string().contains("Any"));
    }

    #[test]
    fn joins_cover_both_sides() {
        assert_eq!(join(&Ty::Int, &Ty::Unit), Ty::Nullable(Box::new(Ty::Int)));
        assert_eq!(join(&Ty::Int, &Ty::String), Ty::Any);
        let a = Ty::Record(RecordTy {
            fields: vec![FieldTy {
                name: "a".into(),
                ty: Ty::Int,
                required: true,
            }],
            open: false,
        });
        let b = Ty::Record(RecordTy {
            fields: vec![],
            open: false,
        });
        assert_eq!(join(&a, &b).to_string(), "{a?: Int}");
    }

    #[test]
    fn fit_follows_serde() {
        let misfits = |a: Ty, e: Ty| {
            let mut out = Vec::new();
            fit(&a, &e, "x", &mut out);
            out.len()
        };
        assert_eq!(misfits(Ty::Int, Ty::Float), 0);
        assert_eq!(misfits(Ty::Float, Ty::Int), 1);
        assert_eq!(misfits(Ty::Unit, Ty::Nullable(Box::new(Ty::Int))), 0);
        assert_eq!(misfits(Ty::Nullable(Box::new(Ty::Int)), Ty::Int), 0);
        assert_eq!(misfits(Ty::Nullable(Box::new(Ty::Int)), Ty::String), 1);
        assert_eq!(misfits(Ty::String, Ty::Any), 0);
    }
}
