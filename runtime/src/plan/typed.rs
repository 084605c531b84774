//! The typed plan builder: Rust code that builds the [plan IR](super::ir) so
//! that λ-Tool's rules are checked by rustc.
//!
//! - [`TypedExpr<T, E>`] is a plan value of Rust type `T` whose evaluation has the
//!   effects `E` (the union of the effects of the tool calls inside it).
//! - [`exec`] (or the [`exec!`](crate::exec) macro) calls a tool and yields an
//!   [`Exec`], which is not a value: its Result must be matched with
//!   [`Exec::on`] (or [`on!`](crate::on)), handling both `Ok` and `Err`. The
//!   `Ok` binder is a closure parameter, so it does not exist in the `Err`
//!   branch.
//! - Field access, [`field!`](crate::field), is checked against the Rust type
//!   of the tool's output: a wrong field is rustc's "no field" error.
//! - [`map`], [`filter`] and [`fold`] take pure callbacks; calling a tool per
//!   element is [`traverse`], whose Result must be matched like an `Exec`.
//! - [`TypedPlan::new`] makes a [`TypedPlan`]; [`TypedPlan::allowing`] checks
//!   its effects against an allowed set ("effect violation: allowed {Read}
//!   but got {Write}"), as does [`TypedPlan::run`] against the toolbox's; it
//!   converts into the IR [`Plan`] that the [`Interpreter`],
//!   the printer and the preview take.
//!
//! Names: each binder (match branch, `let`, callback parameter) is given a name
//! for the IR. Give it the name of the closure's parameter, as [`on!`](crate::on)
//! does, so that Rust's scoping and the plan's agree.
//!
//! The λ-Tool support agent:
//!
//! ```
//! use typed_tools::plan::typed::{lit, TypedPlan};
//! use typed_tools::plan::Plan;
//! use typed_tools::effect::{ReadWrite};
//! use typed_tools::{exec, field, on, tool};
//! # use schemars::JsonSchema;
//! # use serde::Serialize;
//! # #[derive(Serialize, JsonSchema)]
//! # struct Account { id: String, email: String, last_charge_cents: i64 }
//! # #[derive(Serialize, JsonSchema)]
//! # struct Refund { tx_id: String }
//! # /// Look up a customer account.
//! # #[tool(effects = Read)]
//! # fn lookup_account(id: String) -> Result<Account, String> { Err(id) }
//! # /// Refund an amount to an account.
//! # #[tool(effects = Write)]
//! # fn issue_refund(account_id: String, amount: i64) -> Result<Refund, String> { Err(account_id) }
//! # /// Send a reply to a customer.
//! # #[tool(effects = Write)]
//! # fn send_reply(to: String, body: String) -> Result<(), String> { Err(to + &body) }
//!
//! let plan = TypedPlan::new(on!(exec!(LookupAccount { id: lit("cust_12345") }),
//!     Ok(account) => on!(exec!(IssueRefund {
//!             account_id: field!(account.id),
//!             amount: field!(account.last_charge_cents),
//!         }),
//!         Ok(refund) => on!(exec!(SendReply {
//!                 to: field!(account.email),
//!                 body: field!(refund.tx_id),
//!             }),
//!             Ok(u) => lit("refund processed and customer notified"),
//!             Err(e) => lit("refund succeeded but notification failed"),
//!         ),
//!         Err(e) => lit("refund failed, customer not refunded"),
//!     ),
//!     Err(e) => lit("account lookup failed"),
//! ))
//! .allowing::<ReadWrite>();
//!
//! let text = r#"match exec tool lookup_account {id = "cust_12345"} {
//!   Ok(account) =>
//!     match exec tool issue_refund {account_id = account.id, amount = account.last_charge_cents} {
//!       Ok(refund) =>
//!         match exec tool send_reply {to = account.email, body = refund.tx_id} {
//!           Ok(u) => "refund processed and customer notified",
//!           Err(e) => "refund succeeded but notification failed"
//!         },
//!       Err(e) => "refund failed, customer not refunded"
//!     },
//!   Err(e) => "account lookup failed"
//! }"#;
//! let plan = Plan::from(plan);
//! assert_eq!(plan, Plan::parse(text).unwrap());
//! assert_eq!(plan.to_string(), Plan::parse(text).unwrap().to_string());
//! ```

use std::convert::Infallible;
use std::marker::PhantomData;
use std::ops::{Add, Div, Mul, Rem, Sub};

use futures::future::BoxFuture;
use futures::FutureExt;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::effect::{Effects, Pure, SubsetOf, Union};
use crate::tool::Tool;
use crate::toolbox::{PlanWithoutContext, Takes, Toolbox, ToolboxContext};

use super::{Interpreter, PlanError, Run};

use super::ir::{self, BinaryOp, Branch, Lambda, Lambda2, Param, Plan, Step};

mod literal;
mod macros;

pub use literal::LiteralError;

/// The union of two effect sets.
type Or<A, B> = <A as Union<B>>::Output;

/// What matching a step of effects `S` gives, with branches `K` and `R`.
type Matched<S, K, R> = TypedExpr<
    <K as IntoExpr>::Value,
    Or<Or<S, <K as IntoExpr>::Effects>, <R as IntoExpr>::Effects>,
>;

/// A plan value of Rust type `T` with effects `E`: a typed handle on an
/// [`ir::Expr`]. Made by [`lit`], [`field!`](crate::field), [`on!`](crate::on)
/// and the functions of this module; combined by its methods.
///
/// ```
/// use typed_tools::plan::typed::{lit, TypedExpr, TypedPlan};
///
/// let limit: TypedExpr<bool> = lit(3).lt(lit(10)).and(lit("a").ne(lit("b")));
/// assert_eq!(TypedPlan::new(limit).plan().to_string(), r#"3 < 10 and "a" != "b""#);
/// ```
pub struct TypedExpr<T, E: Effects = Pure> {
    ir: ir::Expr,
    _t: PhantomData<fn() -> (T, E)>,
}

impl<T, E: Effects> Clone for TypedExpr<T, E> {
    fn clone(&self) -> Self {
        typed(self.ir.clone())
    }
}

impl<T, E: Effects> std::fmt::Debug for TypedExpr<T, E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.ir.fmt(f)
    }
}

impl<I, E: Effects> std::fmt::Debug for Args<I, E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map()
            .entries(self.fields.iter().map(|(name, value)| (name, value)))
            .finish()
    }
}

impl<I, E: Effects, U> std::fmt::Debug for ArgField<I, E, U> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArgField")
            .field("args", &self.args)
            .field("name", &self.name)
            .finish()
    }
}

impl<T: Tool, A: Effects> std::fmt::Debug for Exec<T, A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.step.fmt(f)
    }
}

impl<T, E: Effects> std::fmt::Debug for Traversal<T, E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.step.fmt(f)
    }
}

fn typed<T, E: Effects>(ir: ir::Expr) -> TypedExpr<T, E> {
    TypedExpr {
        ir,
        _t: PhantomData,
    }
}

thread_local! {
    /// The binders of the closures running now, outermost first. The builder
    /// runs every closure at once, on this thread, so this is the scope.
    static IN_SCOPE: std::cell::RefCell<Vec<String>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Runs `body` with a binder for `name`: `name` itself, unless an enclosing
/// binder already has it, then `name_2`, `name_3`, ... Handles are variables by
/// name, so an inner `x` must not capture a handle to an outer `x`.
fn bind<R>(name: &str, body: impl FnOnce(&str) -> R) -> (String, R) {
    struct Pop;
    impl Drop for Pop {
        fn drop(&mut self) {
            IN_SCOPE.with(|scope| scope.borrow_mut().pop());
        }
    }
    let fresh = IN_SCOPE.with(|scope| {
        let scope = scope.borrow();
        if !scope.iter().any(|n| n == name) {
            return name.to_owned();
        }
        (2..)
            .map(|i| format!("{name}_{i}"))
            .find(|candidate| !scope.contains(candidate))
            .unwrap_or_else(|| name.to_owned())
    });
    IN_SCOPE.with(|scope| scope.borrow_mut().push(fresh.clone()));
    let _pop = Pop;
    let result = body(&fresh);
    (fresh, result)
}

fn param(name: &str) -> Param {
    Param {
        name: name.to_owned(),
        ty: None,
    }
}

/// A field's name as `stringify!` writes a raw identifier, `r#type`, is `type`.
fn unraw(name: &str) -> &str {
    name.strip_prefix("r#").unwrap_or(name)
}

/// What a plan value is made of: a [`TypedExpr`]. A tool call ([`Exec`]) or a
/// [`Traversal`] is not: its Result must be matched first.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a plan value: a tool call's Result must be matched first",
    label = "match this with `on!(.., Ok(x) => .., Err(e) => ..)` to use it",
    note = "every tool call can fail: handle both branches, `on!(exec!(Tool {{ .. }}), Ok(x) => ..., Err(e) => ...)`"
)]
pub trait IntoExpr {
    /// The value's Rust type.
    type Value;
    /// The value's effects.
    type Effects: Effects;
    /// The typed expression.
    fn into_expr(self) -> TypedExpr<Self::Value, Self::Effects>;
}

/// The other branch of a match whose `Ok` branch gives a plan value of type
/// `T`: both branches give one type.
#[diagnostic::on_unimplemented(
    message = "the branches of this match give different types: the `Ok` branch gives `{T}`, the `Err` branch gives `{Self}`",
    label = "this branch must give a plan value of type `{T}`, as the `Ok` branch does",
    note = "both branches of `on!` give the match's value, so they must have one type: make the `Err` branch a `TypedExpr<{T}>` too (a `lit(..)`, a field, a `call!` of a pure tool that converts)"
)]
pub trait BranchOf<T> {}

#[diagnostic::do_not_recommend]
impl<T, U: Fits<T>, E: Effects> BranchOf<T> for TypedExpr<U, E> {}

// Not values at all: `IntoExpr` reports them, so this bound stays silent.
impl<T, U: Tool, A: Effects> BranchOf<T> for Exec<U, A> {}
impl<T, U, E: Effects> BranchOf<T> for Traversal<U, E> {}

impl<T, E: Effects> IntoExpr for TypedExpr<T, E> {
    type Value = T;
    type Effects = E;
    fn into_expr(self) -> TypedExpr<T, E> {
        self
    }
}

/// Effects a callback of `map`, `filter` or `fold` may have: none.
#[diagnostic::on_unimplemented(
    message = "effect violation: allowed {{}} but got {{{Self}}}",
    label = "this callback has effects {{{Self}}}",
    note = "`map`, `filter` and `fold` take pure callbacks; call tools per element with `traverse`"
)]
pub trait PureCallback: Effects {}

impl PureCallback for Pure {}

impl<T, E: Effects> TypedExpr<T, E> {
    /// The IR.
    pub fn into_ir(self) -> ir::Expr {
        self.ir
    }

    /// The IR, borrowed.
    pub fn ir(&self) -> &ir::Expr {
        &self.ir
    }

    /// `self.name`; `check` projects the field out of `T`, so that rustc checks
    /// the name and gives the field's type. Use [`field!`](crate::field).
    pub fn field<U>(&self, name: &str, check: impl FnOnce(&T) -> &U) -> TypedExpr<U, E> {
        let _ = check;
        typed(self.ir.clone().get(unraw(name)))
    }

    fn binary<U, F: Effects, R>(
        self,
        op: BinaryOp,
        right: TypedExpr<U, F>,
    ) -> TypedExpr<R, Or<E, F>>
    where
        E: Union<F>,
    {
        typed(ir::Expr::binary(op, self.ir, right.ir))
    }

    /// `self op other`, `other` a plan value of the same type.
    fn compare<V: ValueOf<T>>(self, op: BinaryOp, other: V) -> TypedExpr<bool, Or<E, V::Effects>>
    where
        E: Union<V::Effects>,
    {
        self.binary(op, other.into_value())
    }

    /// `self == other`.
    pub fn eq<V: ValueOf<T>>(self, other: V) -> TypedExpr<bool, Or<E, V::Effects>>
    where
        E: Union<V::Effects>,
    {
        self.compare(BinaryOp::Eq, other)
    }

    /// `self != other`.
    pub fn ne<V: ValueOf<T>>(self, other: V) -> TypedExpr<bool, Or<E, V::Effects>>
    where
        E: Union<V::Effects>,
    {
        self.compare(BinaryOp::Ne, other)
    }

    /// `self < other`.
    pub fn lt<V: ValueOf<T>>(self, other: V) -> TypedExpr<bool, Or<E, V::Effects>>
    where
        E: Union<V::Effects>,
        T: Ordered,
    {
        self.compare(BinaryOp::Lt, other)
    }

    /// `self <= other`.
    pub fn le<V: ValueOf<T>>(self, other: V) -> TypedExpr<bool, Or<E, V::Effects>>
    where
        E: Union<V::Effects>,
        T: Ordered,
    {
        self.compare(BinaryOp::Le, other)
    }

    /// `self > other`.
    pub fn gt<V: ValueOf<T>>(self, other: V) -> TypedExpr<bool, Or<E, V::Effects>>
    where
        E: Union<V::Effects>,
        T: Ordered,
    {
        self.compare(BinaryOp::Gt, other)
    }

    /// `self >= other`.
    pub fn ge<V: ValueOf<T>>(self, other: V) -> TypedExpr<bool, Or<E, V::Effects>>
    where
        E: Union<V::Effects>,
        T: Ordered,
    {
        self.compare(BinaryOp::Ge, other)
    }
}

/// The types λ-Tool compares with `<`, `<=`, `>`, `>=`: Int (every integer
/// width), Float (`f32`, `f64`), String (`String`, `&str`).
pub trait Ordered {}

macro_rules! ordered {
    ($($t:ty),*) => {$(impl Ordered for $t {})*};
}

ordered!(i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize, f32, f64, String, &str);

impl<S: Fits<String>, E: Effects> TypedExpr<S, E> {
    /// `self ++ other`, both text.
    pub fn concat<V: ValueOf<String>>(self, other: V) -> TypedExpr<String, Or<E, V::Effects>>
    where
        E: Union<V::Effects>,
    {
        self.binary(BinaryOp::Concat, other.into_value())
    }
}

impl<E: Effects> TypedExpr<bool, E> {
    /// `self and other`, short-circuit.
    pub fn and<F: Effects>(self, other: TypedExpr<bool, F>) -> TypedExpr<bool, Or<E, F>>
    where
        E: Union<F>,
    {
        self.binary(BinaryOp::And, other)
    }

    /// `self or other`, short-circuit.
    pub fn or<F: Effects>(self, other: TypedExpr<bool, F>) -> TypedExpr<bool, Or<E, F>>
    where
        E: Union<F>,
    {
        self.binary(BinaryOp::Or, other)
    }

    /// `not self`.
    #[allow(clippy::should_implement_trait)]
    pub fn not(self) -> TypedExpr<bool, E> {
        typed(ir::Expr::Not {
            operand: Box::new(self.ir),
        })
    }
}

/// `+`, `-`, `*`, `/`, `%` of plan Ints, as `i64` (a plan computes in 64
/// bits and stops on overflow). Only `i64`: with one impl, `lit(1) + x`
/// and the methods called on its result infer without annotations.
macro_rules! int_ops {
    ($($trait:ident $method:ident $op:ident;)*) => {$(
        impl<E: Effects, V: ValueOf<i64>> $trait<V> for TypedExpr<i64, E>
        where
            E: Union<V::Effects>,
        {
            type Output = TypedExpr<i64, Or<E, V::Effects>>;
            fn $method(self, right: V) -> Self::Output {
                self.binary(BinaryOp::$op, right.into_value())
            }
        }
    )*};
}

int_ops! {
    Add add Add;
    Sub sub Sub;
    Mul mul Mul;
    Div div Div;
    Rem rem Rem;
}

/// A value a plan can write literally: any `Serialize + JsonSchema` value,
/// the types a tool takes. [`lit`] writes it as serde_json would write it,
/// so that the tool reading the plan's arguments reads that value:
///
/// | Rust (serde) | plan |
/// |---|---|
/// | `bool` | Bool |
/// | every integer width | Int (a `u64`, `u128` or `i128` past `i64` is a [`LiteralError`]) |
/// | `f32`, `f64` | Float (`NaN` and the infinities are a [`LiteralError`]) |
/// | `char`, `&str`, `String` | String |
/// | `()`, `None`, a unit struct | `()` |
/// | `Some(x)`, a newtype struct | `x` |
/// | a sequence, a tuple, bytes | a list |
/// | a struct, a map (text, `char` or integer keys) | a record |
/// | an enum's unit variant | its name, a String |
/// | any other variant | `{Variant = value}`, serde's external tagging |
///
/// A plan's list has one element type, so the plan check refuses a list of
/// several shapes: a tuple of several types, or a `Vec` of an externally
/// tagged enum mixing unit and data variants (an internally tagged enum,
/// `#[serde(tag = "kind")]`, is a record for every variant, and passes).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be written in a plan: a literal must implement `serde::Serialize` and `schemars::JsonSchema`",
    label = "not a plan literal",
    note = "derive both on the type: `#[derive(serde::Serialize, schemars::JsonSchema)]`, with schemars 1, the version typed-tools uses (`schemars = \"1\"`, or `typed_tools::schemars`)"
)]
pub trait Literal: Serialize + JsonSchema {}

#[diagnostic::do_not_recommend]
impl<T: Serialize + JsonSchema> Literal for T {}

/// A literal of Rust type `T`: `lit("Lima")`, `lit(42)`, `lit(Some(3))`,
/// `lit(vec![1, 2])`, `lit(note)` for a user's `Note`. Where a `u32` is
/// expected, `lit(42)` is a `u32`, as in Rust; text literals (`&str`) go
/// wherever a `String` is expected, and a `Vec<&str>` where a tool takes a
/// `Vec<String>`. The value is checked against the place it is used at
/// compile time, like every plan value. An empty `Vec` given for a
/// `Vec<String>` argument has two types to choose from: write its type,
/// `lit(Vec::<String>::new())`, or leave an optional argument out.
///
/// ```
/// use typed_tools::plan::typed::{lit, TypedPlan};
/// use typed_tools::{exec, field, on, tool};
///
/// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
/// struct Reminder { day: u8, text: String }
///
/// /// Schedule a reminder for a note.
/// #[tool(effects = Write)]
/// fn remind(note: u32, reminder: Reminder, repeat: Option<u16>, tags: Vec<String>) -> String {
///     format!("reminding of {note} on day {}", reminder.day)
/// }
///
/// let plan = TypedPlan::new(on!(exec!(Remind {
///         note: lit(7),
///         reminder: lit(Reminder { day: 3, text: "milk".into() }),
///         repeat: lit(None),
///         tags: lit(vec!["home"]),
///     }),
///     Ok(done) => done,
///     Err(e) => field!(e.message),
/// ));
/// assert_eq!(
///     plan.plan().to_string(),
///     r#"match exec tool remind {note = 7, reminder = {day = 3, text = "milk"}, repeat = (), tags = ["home"]} {
///   Ok(done) => done,
///   Err(e) => e.message
/// }"#
/// );
/// ```
///
/// # Panics
///
/// When the value has no plan literal: an integer outside `i64` (a plan's
/// Int), a float that is not finite, a map whose keys are not text (see
/// [`LiteralError`]). [`try_lit`] returns the error instead.
pub fn lit<T: Literal>(value: T) -> TypedExpr<T> {
    match try_lit(value) {
        Ok(literal) => literal,
        Err(error) => panic!("`lit(..)`: {error}; `try_lit` returns this error instead"),
    }
}

/// [`lit`], with the error of a value that has no plan literal.
///
/// ```
/// use typed_tools::plan::ir::Expr;
/// use typed_tools::plan::typed::{try_lit, LiteralError};
///
/// assert_eq!(try_lit(i64::MAX as u64).unwrap().ir(), &Expr::int(i64::MAX));
/// let too_big = try_lit(i64::MAX as u64 + 1).unwrap_err();
/// assert_eq!(too_big, LiteralError::OutOfRange { value: "9223372036854775808".into() });
/// ```
pub fn try_lit<T: Literal>(value: T) -> Result<TypedExpr<T>, LiteralError> {
    literal::to_expr(&value).map(typed)
}

mod sealed {
    pub trait Sealed<T> {}
    impl<T> Sealed<T> for T {}
    impl Sealed<String> for &str {}
    impl Sealed<&str> for String {}
    impl<L: Sealed<T>, T, const N: usize> Sealed<Vec<T>> for [L; N] {}
}

/// A plan value of Rust type `Self` can stand where a `T` is expected: the
/// same type, text for text (`&str` and `String`), or an array for a `Vec`.
/// Both are the same plan type, so the plan checker sees no difference;
/// this lets `lit("Lima")` and `lit([1, 2])` be given where a `String` and a
/// `Vec<u32>` are expected, in a match's branches, comparisons, `if_` and
/// `fold`. (A tool argument also takes a `Vec<&str>` for a `Vec<String>`,
/// [`ValueOf`]; here that would leave `lit(vec![])` in an `Err` branch
/// two types to choose from.) Sealed.
#[diagnostic::on_unimplemented(
    message = "expected a plan value of type `{T}`, found one of type `{Self}`",
    label = "this needs a plan value of type `{T}`",
    note = "give a plan value of type `{T}`: `lit(..)` of a value of that type (an integer literal takes the width expected, and `\"text\"` stands for a `String`), a field of that type (`field!(x.f)`), or the output of a pure tool that converts to it (`call!`)"
)]
pub trait Fits<T>: sealed::Sealed<T> {}

impl<T> Fits<T> for T {}
impl Fits<String> for &str {}
impl Fits<&str> for String {}
impl<L: Fits<T>, T, const N: usize> Fits<Vec<T>> for [L; N] {}

/// `[a, b, c]`: the elements have one type and one set of effects.
///
/// ```
/// use typed_tools::plan::typed::{list, lit, TypedPlan};
///
/// assert_eq!(TypedPlan::new(list([lit(1), lit(2), lit(3)])).plan().to_string(), "[1, 2, 3]");
/// ```
pub fn list<T, E: Effects>(
    items: impl IntoIterator<Item = TypedExpr<T, E>>,
) -> TypedExpr<Vec<T>, E> {
    typed(ir::Expr::List {
        items: items.into_iter().map(|e| e.ir).collect(),
    })
}

/// `let name = value in body`; `body` gets the variable.
///
/// ```
/// use typed_tools::plan::typed::{let_, lit, TypedPlan};
///
/// let plan = TypedPlan::new(let_("limit", lit(100), |limit| limit.clone() * lit(2)));
/// assert_eq!(plan.plan().to_string(), "let limit = 100 in\nlimit * 2");
/// ```
pub fn let_<V: IntoExpr, B: IntoExpr>(
    name: &str,
    value: V,
    body: impl FnOnce(TypedExpr<V::Value>) -> B,
) -> TypedExpr<B::Value, Or<V::Effects, B::Effects>>
where
    V::Effects: Union<B::Effects>,
{
    let value = value.into_expr();
    let (name, body) = bind(name, |name| body(typed(ir::Expr::var(name))).into_expr());
    typed(ir::Expr::Let {
        name,
        value: Box::new(value.ir),
        body: Box::new(body.ir),
    })
}

/// `if cond then yes else no`: both branches have one type.
///
/// ```
/// use typed_tools::plan::typed::{if_, lit, TypedPlan};
///
/// let answer = if_(lit(3).gt(lit(2)), lit("more"), lit("less"));
/// assert_eq!(TypedPlan::new(answer).plan().to_string(), r#"if 3 > 2 then "more" else "less""#);
/// ```
pub fn if_<C, T, Y: Effects, N: ValueOf<T>>(
    cond: TypedExpr<bool, C>,
    yes: TypedExpr<T, Y>,
    no: N,
) -> TypedExpr<T, Or<Or<C, Y>, N::Effects>>
where
    C: Union<Y>,
    Or<C, Y>: Union<N::Effects>,
{
    typed(ir::Expr::If {
        cond: Box::new(cond.ir),
        then: Box::new(yes.ir),
        otherwise: Box::new(no.into_value().ir),
    })
}

/// `map (fn name => f(name)) list`; `f` is pure.
///
/// ```
/// use typed_tools::plan::typed::{list, lit, map, TypedPlan};
///
/// let doubled = map(list([lit(1), lit(2)]), "n", |n| n * lit(2));
/// assert_eq!(TypedPlan::new(doubled).plan().to_string(), "map (fn n => n * 2) [1, 2]");
/// ```
pub fn map<T, L: Effects, B: IntoExpr>(
    list: TypedExpr<Vec<T>, L>,
    name: &str,
    f: impl FnOnce(TypedExpr<T>) -> B,
) -> TypedExpr<Vec<B::Value>, L>
where
    B::Effects: PureCallback,
{
    let (name, body) = bind(name, |name| f(typed(ir::Expr::var(name))).into_expr());
    typed(ir::Expr::Map {
        func: Lambda {
            param: param(&name),
            body: Box::new(body.ir),
        },
        list: Box::new(list.ir),
    })
}

/// `filter (fn name => f(name)) list`; `f` is pure and gives a bool.
///
/// ```
/// use typed_tools::plan::typed::{filter, list, lit, TypedPlan};
///
/// let big = filter(list([lit(5), lit(50)]), "n", |n| n.gt(lit(10)));
/// assert_eq!(TypedPlan::new(big).plan().to_string(), "filter (fn n => n > 10) [5, 50]");
/// ```
pub fn filter<T, L: Effects, B: IntoExpr<Value = bool>>(
    list: TypedExpr<Vec<T>, L>,
    name: &str,
    f: impl FnOnce(TypedExpr<T>) -> B,
) -> TypedExpr<Vec<T>, L>
where
    B::Effects: PureCallback,
{
    let (name, body) = bind(name, |name| f(typed(ir::Expr::var(name))).into_expr());
    typed(ir::Expr::Filter {
        func: Lambda {
            param: param(&name),
            body: Box::new(body.ir),
        },
        list: Box::new(list.ir),
    })
}

/// `fold (fn acc, item => f(acc, item)) init list`, from the left; `f` is pure.
///
/// ```
/// use typed_tools::plan::typed::{fold, list, lit, TypedPlan};
///
/// let sum = fold(lit(0), list([lit(1), lit(2)]), ("sum", "n"), |sum, n| sum + n);
/// assert_eq!(TypedPlan::new(sum).plan().to_string(), "fold (fn sum, n => sum + n) 0 [1, 2]");
/// ```
pub fn fold<T, A, I, L: Effects, B: IntoExpr>(
    init: TypedExpr<A, I>,
    list: TypedExpr<Vec<T>, L>,
    (acc, item): (&str, &str),
    f: impl FnOnce(TypedExpr<A>, TypedExpr<T>) -> B,
) -> TypedExpr<A, Or<I, L>>
where
    B::Effects: PureCallback,
    B::Value: Fits<A>,
    I: Union<L>,
{
    let (acc, (item, body)) = bind(acc, |acc| {
        bind(item, |item| {
            f(typed(ir::Expr::var(acc)), typed(ir::Expr::var(item))).into_expr()
        })
    });
    typed(ir::Expr::Fold {
        func: Lambda2 {
            acc: param(&acc),
            item: param(&item),
            body: Box::new(body.ir),
        },
        init: Box::new(init.ir),
        list: Box::new(list.ir),
    })
}

/// The arguments of a call to tool input `I`, built field by field; each
/// field's name and type are checked by a projection out of `I`. Use
/// [`exec!`](crate::exec).
pub struct Args<I, E: Effects = Pure> {
    fields: Vec<(String, ir::Expr)>,
    _t: PhantomData<fn() -> (I, E)>,
}

impl<I, E: Effects> Args<I, E> {
    /// The field `name`, whose type `check` gives; its value comes next,
    /// with [`ArgField::is`].
    pub fn field<U>(self, name: &str, check: impl FnOnce(&I) -> &U) -> ArgField<I, E, U> {
        let _ = check;
        ArgField {
            args: self,
            name: unraw(name).to_owned(),
            _t: PhantomData,
        }
    }
}

/// A field of [`Args`] waiting for its value, of type `U`.
pub struct ArgField<I, E: Effects, U> {
    args: Args<I, E>,
    name: String,
    _t: PhantomData<fn() -> U>,
}

/// A plan value of Rust type `T`: what a tool argument or a record field of
/// type `T` takes.
#[diagnostic::on_unimplemented(
    message = "expected a plan value of type `{T}`, found `{Self}`",
    label = "this needs a plan value of type `{T}`",
    note = "give a plan value of type `{T}`: `lit(..)` of a value of that type (an integer literal takes the width expected, and `\"text\"` stands for a `String`), a field of that type (`field!(x.f)`), or the output of a pure tool that converts to it (`call!`)",
    note = "a tool call (`exec!`) is no value until its Result is matched with `on!`"
)]
pub trait ValueOf<T> {
    /// The value's effects.
    type Effects: Effects;
    /// The typed expression.
    fn into_value(self) -> TypedExpr<T, Self::Effects>;
}

// One impl per case of `Fits` rather than one over `Fits`: when none
// applies, rustc then reports this trait's message, at the value.
macro_rules! value_of {
    ($($(#[$attr:meta])* [$($p:tt)*] $t:ty => $u:ty $(, where $w:ty: $b:path)?;)*) => {$(
        $(#[$attr])*
        impl<$($p)* E: Effects> ValueOf<$t> for TypedExpr<$u, E> $(where $w: $b)? {
            type Effects = E;
            fn into_value(self) -> TypedExpr<$t, E> {
                typed(self.ir)
            }
        }
    )*};
}

impl<T, E: Effects> ValueOf<T> for TypedExpr<T, E> {
    type Effects = E;
    fn into_value(self) -> TypedExpr<T, E> {
        self
    }
}

// Text for text, an array for a `Vec`: left out of rustc's list of other
// impls, which would bury the message.
value_of! {
    #[diagnostic::do_not_recommend] ['a,] String => &'a str;
    #[diagnostic::do_not_recommend] ['a,] &'a str => String;
    #[diagnostic::do_not_recommend] ['a,] Vec<String> => Vec<&'a str>;
    #[diagnostic::do_not_recommend] [T, L, const N: usize,] Vec<T> => [L; N], where L: Fits<T>;
}

impl<I, E: Effects, U> ArgField<I, E, U> {
    /// The field's value: a plan value of the field's type.
    pub fn is<V: ValueOf<U>>(self, value: V) -> Args<I, Or<E, V::Effects>>
    where
        E: Union<V::Effects>,
    {
        let mut fields = self.args.fields;
        fields.push((self.name, value.into_value().ir));
        Args {
            fields,
            _t: PhantomData,
        }
    }
}

/// A record of Rust type `R`, built field by field like a tool's arguments.
/// Use [`record!`](crate::record).
pub fn record<R, A: Effects>(fields: impl FnOnce(Args<R>) -> Args<R, A>) -> TypedExpr<R, A> {
    typed(arguments(fields))
}

/// A tool call: not a value. Its Result must be matched with [`Exec::on`].
///
/// `A` is the effects of evaluating the arguments.
#[must_use = "a tool call's Result must be matched with `on!(.., Ok(x) => .., Err(e) => ..)`"]
pub struct Exec<T: Tool, A: Effects = Pure> {
    step: Step,
    _t: PhantomData<fn() -> (T, A)>,
}

/// Calls tool `T` with the arguments `args` builds. Use [`exec!`](crate::exec).
pub fn exec<T: Tool, A: Effects>(
    args: impl FnOnce(Args<T::Input>) -> Args<T::Input, A>,
) -> Exec<T, A> {
    Exec {
        step: Step::Exec {
            tool: T::NAME.to_owned(),
            arg: Box::new(arguments(args)),
        },
        _t: PhantomData,
    }
}

/// A tool that is a function: no effects, and it cannot fail (its `Error` is
/// [`Infallible`]). [`call`] (or [`call!`](crate::call)) uses it as a plain
/// value, with no `match`, inside `map`, `filter` and `fold` callbacks too: it
/// is how a plan gets computation its built-in operations lack. Every tool
/// whose effects are `Pure` and whose fn returns a plain value (not a
/// `Result`) is one.
///
/// ```
/// use typed_tools::plan::typed::{lit, map, TypedPlan, list};
/// use typed_tools::{call, field, tool};
///
/// /// Format an amount in cents as dollars.
/// #[tool(effects = Pure)]
/// fn format_cents(cents: i64) -> String {
///     format!("${}.{:02}", cents / 100, cents % 100)
/// }
///
/// let plan = TypedPlan::new(map(list([lit(1250), lit(99)]), "c", |c| {
///     call!(FormatCents { cents: c })
/// }));
/// assert_eq!(plan.plan().to_string(), "map (fn c => call tool format_cents {cents = c}) [1250, 99]");
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a pure, infallible tool: `call!` cannot use it",
    label = "this tool has effects or can fail",
    note = "`call!` takes a tool with `effects = Pure` whose fn returns a plain value, not a `Result`",
    note = "call any other tool with `exec!` and handle both branches: `on!(exec!({Self} {{ .. }}), Ok(x) => ..., Err(e) => ...)`"
)]
pub trait PureTool: Tool<Effects = Pure, Error = Infallible> {}

#[diagnostic::do_not_recommend]
impl<T: Tool<Effects = Pure, Error = Infallible>> PureTool for T {}

/// Calls the pure, infallible tool `T` as a function: its output is a plain
/// value. Use [`call!`](crate::call).
pub fn call<T: PureTool, A: Effects>(
    args: impl FnOnce(Args<T::Input>) -> Args<T::Input, A>,
) -> TypedExpr<T::Output, A> {
    typed(ir::Expr::Call {
        tool: T::NAME.to_owned(),
        arg: Box::new(arguments(args)),
    })
}

fn arguments<I, A: Effects>(args: impl FnOnce(Args<I>) -> Args<I, A>) -> ir::Expr {
    let args = args(Args {
        fields: Vec::new(),
        _t: PhantomData,
    });
    ir::Expr::Record {
        fields: args.fields,
    }
}

/// The input of tool `T` as a plan value, its fields under their JSON names.
/// Use [`input!`](crate::input).
pub fn input<T: Tool, A: Effects>(
    args: impl FnOnce(Args<T::Input>) -> Args<T::Input, A>,
) -> TypedExpr<T::Input, A> {
    typed(arguments(args))
}

/// Calls tool `T` with one plan value as its whole input, as λ-Tool's
/// `exec tool charge o` does: the value's type must be the tool's input type.
/// Use `exec!(Tool(value))`.
pub fn exec_with<T: Tool, E: Effects>(input: TypedExpr<T::Input, E>) -> Exec<T, E> {
    Exec {
        step: Step::Exec {
            tool: T::NAME.to_owned(),
            arg: Box::new(input.ir),
        },
        _t: PhantomData,
    }
}

/// What an `Err` branch binds: the failed call's tool, the kind of failure and
/// the message. Read it with [`field!`](crate::field): `field!(e.message)`.
///
/// ```
/// # futures::executor::block_on(async {
/// use typed_tools::plan::typed::{lit, TypedPlan};
/// use typed_tools::{exec, field, on, tool, Toolbox};
///
/// #[derive(serde::Serialize, schemars::JsonSchema)]
/// struct Note { id: u32, text: String }
///
/// /// Get one note by its id.
/// #[tool(effects = Read)]
/// fn get_note(id: u32) -> Result<Note, String> { Err(format!("there is no note {id}")) }
///
/// let plan = TypedPlan::new(on!(exec!(GetNote { id: lit(7) }),
///     Ok(note) => field!(note.text),
///     Err(e) => field!(e.kind).concat(lit(": ")).concat(field!(e.message)),
/// ));
/// let toolbox = Toolbox::builder().tool(GetNote).build().unwrap();
/// let run = plan.run(&toolbox).await.unwrap();
/// assert_eq!(run.outcome.unwrap(), "execution: tool `get_note` failed: there is no note 7");
/// # });
/// ```
#[derive(Clone, Debug)]
pub struct CallError {
    /// The tool's name.
    pub tool: String,
    /// `"execution"`, `"refused"`, ...
    pub kind: String,
    /// What went wrong.
    pub message: String,
}

fn match_step<O, S, K: IntoExpr, R: IntoExpr + BranchOf<K::Value>>(
    step: Step,
    ok_name: &str,
    ok: impl FnOnce(TypedExpr<O>) -> K,
    err_name: &str,
    err: impl FnOnce(TypedExpr<CallError>) -> R,
) -> Matched<S, K, R>
where
    S: Union<K::Effects>,
    Or<S, K::Effects>: Union<R::Effects>,
{
    let (ok_name, then) = bind(ok_name, |name| ok(typed(ir::Expr::var(name))).into_expr());
    let (err_name, otherwise) = bind(err_name, |name| err(typed(ir::Expr::var(name))).into_expr());
    typed(ir::Expr::Match {
        on: Box::new(step),
        ok: Branch {
            bind: ok_name,
            body: Box::new(then.ir),
        },
        err: Branch {
            bind: err_name,
            body: Box::new(otherwise.ir),
        },
    })
}

impl<T: Tool, A: Effects> Exec<T, A>
where
    T::Effects: Union<A>,
{
    /// `match exec ... { Ok(ok_name) => ok, Err(err_name) => err }`: both
    /// branches give the same type. Name each binder after its closure's
    /// parameter, or use [`on!`](crate::on).
    pub fn on<K: IntoExpr, R: IntoExpr + BranchOf<K::Value>>(
        self,
        ok_name: &str,
        ok: impl FnOnce(TypedExpr<T::Output>) -> K,
        err_name: &str,
        err: impl FnOnce(TypedExpr<CallError>) -> R,
    ) -> Matched<Or<T::Effects, A>, K, R>
    where
        Or<T::Effects, A>: Union<K::Effects>,
        Or<Or<T::Effects, A>, K::Effects>: Union<R::Effects>,
    {
        match_step::<T::Output, Or<T::Effects, A>, K, R>(self.step, ok_name, ok, err_name, err)
    }
}

/// A step that yields a Result: an [`Exec`] or a [`Traversal`]; what
/// [`traverse`] runs per element.
pub trait IntoStep {
    /// The Ok value.
    type Ok;
    /// The effects of running the step.
    type Effects: Effects;
    /// The IR step.
    fn into_step(self) -> Step;
}

impl<T: Tool, A: Effects> IntoStep for Exec<T, A>
where
    T::Effects: Union<A>,
{
    type Ok = T::Output;
    type Effects = Or<T::Effects, A>;
    fn into_step(self) -> Step {
        self.step
    }
}

/// A `traverse`: not a value. Its Result, the list of Ok values or the first
/// error, must be matched with [`Traversal::on`].
#[must_use = "a traverse's Result must be matched with `on!(.., Ok(x) => .., Err(e) => ..)`"]
pub struct Traversal<T, E: Effects> {
    step: Step,
    _t: PhantomData<fn() -> (T, E)>,
}

impl<T, E: Effects> IntoStep for Traversal<T, E> {
    type Ok = T;
    type Effects = E;
    fn into_step(self) -> Step {
        self.step
    }
}

/// `traverse (fn name => step) list`: runs the step `f` gives for each
/// element, in order, until the first error.
///
/// ```
/// use typed_tools::plan::typed::{lit, TypedPlan};
/// use typed_tools::{exec, field, on, tool, Toolbox};
///
/// #[derive(serde::Serialize, schemars::JsonSchema)]
/// struct Note { id: u32, text: String }
///
/// /// Get one note by its id.
/// #[tool(effects = Read)]
/// fn get_note(id: u32) -> Result<Note, String> { Ok(Note { id, text: format!("note {id}") }) }
///
/// use typed_tools::plan::typed::{list, traverse};
///
/// let texts = TypedPlan::new(on!(traverse(list([lit(1), lit(2)]), "id", |id| exec!(GetNote { id: id })),
///     Ok(notes) => lit("all found"),
///     Err(e) => field!(e.message),
/// ));
/// assert!(texts.plan().to_string().starts_with("match traverse (fn id => exec tool get_note {id = id}) [1, 2]"));
/// ```
pub fn traverse<T, L, S: IntoStep>(
    list: TypedExpr<Vec<T>, L>,
    name: &str,
    f: impl FnOnce(TypedExpr<T>) -> S,
) -> Traversal<Vec<S::Ok>, Or<L, S::Effects>>
where
    L: Union<S::Effects>,
{
    let (name, body) = bind(name, |name| f(typed(ir::Expr::var(name))).into_step());
    Traversal {
        step: Step::Traverse {
            param: param(&name),
            body: Box::new(body),
            list: Box::new(list.ir),
        },
        _t: PhantomData,
    }
}

impl<T, E: Effects> Traversal<T, E> {
    /// `match traverse ... { Ok(ok_name) => ok, Err(err_name) => err }`, like
    /// [`Exec::on`].
    pub fn on<K: IntoExpr, R: IntoExpr + BranchOf<K::Value>>(
        self,
        ok_name: &str,
        ok: impl FnOnce(TypedExpr<T>) -> K,
        err_name: &str,
        err: impl FnOnce(TypedExpr<CallError>) -> R,
    ) -> Matched<E, K, R>
    where
        E: Union<K::Effects>,
        Or<E, K::Effects>: Union<R::Effects>,
    {
        match_step::<T, E, K, R>(self.step, ok_name, ok, err_name, err)
    }
}

/// A plan built with this module: its value has type `T` (`&'static str`
/// for a text literal, which stands wherever a `String` does) and its tool
/// calls have effects `E`. [`run`](Self::run) gives a [`Run<T>`]: the
/// plan's value read into `T` by the library.
///
/// ```
/// # futures::executor::block_on(async {
/// use typed_tools::effect::Read;
/// use typed_tools::plan::typed::{lit, TypedPlan};
/// use typed_tools::{exec, field, on, tool, Toolbox};
///
/// #[derive(serde::Serialize, schemars::JsonSchema)]
/// struct Note { id: u32, text: String }
///
/// /// Get one note by its id.
/// #[tool(effects = Read)]
/// fn get_note(id: u32) -> Result<Note, String> { Ok(Note { id, text: format!("note {id}") }) }
///
/// let plan = TypedPlan::new(on!(exec!(GetNote { id: lit(7) }),
///     Ok(note) => field!(note.text),
///     Err(e) => field!(e.message),
/// ))
/// .allowing::<Read>();
/// let toolbox = Toolbox::builder().tool(GetNote).build().unwrap();
/// let run = plan.run(&toolbox).await.unwrap();
/// assert_eq!(run.outcome, Ok("note 7".to_owned()));
/// # });
/// ```
#[derive(Clone, Debug)]
pub struct TypedPlan<T, E: Effects> {
    plan: Plan,
    _t: PhantomData<fn() -> (T, E)>,
}

impl<T, E: Effects> TypedPlan<T, E> {
    /// The plan whose value is `body`.
    ///
    /// ```
    /// use typed_tools::plan::typed::{lit, TypedPlan};
    ///
    /// let plan = TypedPlan::new(lit("nothing to do"));
    /// assert_eq!(plan.plan().to_string(), r#""nothing to do""#);
    /// ```
    pub fn new<B: IntoExpr<Value = T, Effects = E>>(body: B) -> Self {
        TypedPlan {
            plan: Plan::new(body.into_expr().ir),
            _t: PhantomData,
        }
    }

    /// Checks that the plan's effects are all in `A`: "effect violation:
    /// allowed {Read} but got {Write}" otherwise, a compile error.
    ///
    /// ```compile_fail
    /// use typed_tools::effect::Read;
    /// use typed_tools::plan::typed::{lit, TypedPlan};
    /// use typed_tools::{exec, on, tool};
    ///
    /// /// Delete a note by its id.
    /// #[tool(effects = Write)]
    /// fn delete_note(id: u32) -> bool { id > 0 }
    ///
    /// // error: effect violation: allowed {Read} but got {Write}
    /// let plan = TypedPlan::new(on!(exec!(DeleteNote { id: lit(1) }), Ok(gone) => gone, Err(e) => lit(false)))
    ///     .allowing::<Read>();
    /// ```
    pub fn allowing<A: Effects>(self) -> Self
    where
        E: SubsetOf<A>,
    {
        self
    }

    /// The IR plan: print it for its text (what a model would write), give
    /// it to [`Preview::check`](super::Preview::check) or an [`Interpreter`].
    ///
    /// ```
    /// use typed_tools::plan::typed::{lit, TypedPlan};
    /// use typed_tools::{exec, field, on, tool, Toolbox};
    ///
    /// #[derive(serde::Serialize, schemars::JsonSchema)]
    /// struct Note { id: u32, text: String }
    ///
    ///     /// Get one note by its id.
    /// #[tool(effects = Read)]
    /// fn get_note(id: u32) -> Result<Note, String> { Ok(Note { id, text: format!("note {id}") }) }
    ///
    /// let plan = TypedPlan::new(on!(exec!(GetNote { id: lit(7) }),
    ///     Ok(note) => field!(note.text),
    ///     Err(e) => lit("no such note"),
    /// ));
    /// assert_eq!(plan.plan().tools(), ["get_note"]);
    /// assert!(plan.plan().to_string().starts_with("match exec tool get_note {id = 7}"));
    /// ```
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// The same plan, its value taken as a `U` where a `T` stands for one
    /// ([`ValueOf`]: text for text, an array for a `Vec`): for a plan whose
    /// value is a text literal (`&'static str`, which cannot be read into),
    /// `.returning::<String>()` runs to a `String`.
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::plan::typed::{lit, TypedPlan};
    /// use typed_tools::Toolbox;
    ///
    /// let toolbox = Toolbox::builder().build().unwrap();
    /// let plan = TypedPlan::new(lit("nothing to do")).returning::<String>();
    /// assert_eq!(plan.run(&toolbox).await.unwrap().outcome, Ok("nothing to do".to_owned()));
    /// let plan = TypedPlan::new(lit(["a", "b"])).returning::<Vec<String>>();
    /// assert_eq!(plan.run(&toolbox).await.unwrap().outcome.unwrap(), ["a", "b"]);
    /// # });
    /// ```
    pub fn returning<U>(self) -> TypedPlan<U, E>
    where
        TypedExpr<T, E>: ValueOf<U>,
    {
        TypedPlan {
            plan: self.plan,
            _t: PhantomData,
        }
    }

    /// Runs the plan with the [`Interpreter`] against a toolbox whose
    /// allowed effects `A` include the plan's, checked by rustc, and reads
    /// its value into `T` ([`Interpreter::run_as`]): the run's outcome is a
    /// `T`, or the run-time error that stopped the plan, or
    /// [`RunError::OutcomeType`](super::RunError::OutcomeType) when the value
    /// does not fit `T` after all (a number past a `u8`'s range; the value
    /// as it came is in the error). `T` is [`Outcome`]: `Deserialize` (owning
    /// its data) and `JsonSchema`; for a plan whose value is a text literal,
    /// see [`returning`](Self::returning). The untyped run is
    /// [`Interpreter::run`] of [`plan`](Self::plan).
    ///
    /// The future is boxed, not an `async fn`'s: that one would carry the
    /// `E: SubsetOf<A>` bound into its type, and a plan outside `A` would be
    /// reported twice, here and again by whatever polls the future
    /// (`block_on`, `.await`).
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::effect::EffectSet;
    /// use typed_tools::plan::PlanError;
    /// use typed_tools::plan::typed::{lit, TypedPlan};
    /// use typed_tools::{exec, on, tool, Toolbox};
    ///
    /// /// Delete a note by its id.
    /// #[tool(effects = Write)]
    /// fn delete_note(id: u32) -> bool { id > 0 }
    ///
    /// let toolbox = Toolbox::builder().tool(DeleteNote).build().unwrap();
    /// let plan = TypedPlan::new(on!(exec!(DeleteNote { id: lit(3) }), Ok(gone) => gone, Err(e) => lit(false)));
    /// let run = plan.run(&toolbox).await.unwrap();
    /// assert_eq!(run.outcome, Ok(true));
    /// assert_eq!(run.trace.len(), 1);
    /// // A restricted view is checked when the plan runs, and refuses it.
    /// let refused = plan.run(&toolbox.restrict(EffectSet::READ)).await.unwrap_err();
    /// assert!(matches!(refused, PlanError::EffectViolation { .. }));
    /// # });
    /// ```
    ///
    /// A toolbox whose tools take a [context](crate::toolbox::context) runs
    /// the plan with [`run_in`](Self::run_in).
    pub fn run<'a, A: Effects, C: ToolboxContext>(
        &'a self,
        toolbox: &'a Toolbox<A, C>,
    ) -> BoxFuture<'a, Result<Run<T>, PlanError>>
    where
        E: SubsetOf<A>,
        T: Outcome,
        C::Value: PlanWithoutContext,
    {
        async move { Interpreter::new(toolbox).run_as::<T>(&self.plan).await }.boxed()
    }

    /// [`run`](Self::run), each call lent `context`, of the type the
    /// toolbox was built with (see [`Interpreter::run_in`]).
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::plan::typed::{lit, TypedPlan};
    /// use typed_tools::{exec, on, tool, Toolbox};
    ///
    /// /// Who is calling.
    /// struct Caller { name: String }
    ///
    /// /// Sign a text with the caller's name.
    /// #[tool(effects = Pure)]
    /// fn sign(#[context] caller: &Caller, text: String) -> String { format!("{text} -- {}", caller.name) }
    ///
    /// let toolbox = Toolbox::builder().context::<Caller>().tool(Sign).build().unwrap();
    /// let plan = TypedPlan::new(on!(exec!(Sign { text: lit("hi") }), Ok(signed) => signed, Err(e) => lit("")));
    /// let run = plan.run_in(&toolbox, &Caller { name: "ana".into() }).await.unwrap();
    /// assert_eq!(run.outcome, Ok("hi -- ana".to_owned()));
    /// # });
    /// ```
    pub fn run_in<'a, A: Effects, C: Takes<X>, X: Sync>(
        &'a self,
        toolbox: &'a Toolbox<A, C>,
        context: &'a X,
    ) -> BoxFuture<'a, Result<Run<T>, PlanError>>
    where
        E: SubsetOf<A>,
        T: Outcome,
    {
        async move {
            Interpreter::new(toolbox)
                .run_as_in::<T, X>(context, &self.plan)
                .await
        }
        .boxed()
    }
}

/// A Rust type a plan's value is read into when the plan runs
/// ([`TypedPlan::run`]): `serde::Deserialize`, owning its data (a `String`,
/// not a `&str`), and `schemars::JsonSchema`, whose schema the plan's type
/// is checked against before it runs. A tool's output type that derives
/// only `Serialize` needs `Deserialize` too, to be a plan's value.
///
/// A plan whose value is a text literal has type `&'static str`, which is
/// not one (rustc says "implementation of `Deserialize` is not general
/// enough"): write [`.returning::<String>()`](TypedPlan::returning).
///
/// ```compile_fail
/// # futures::executor::block_on(async {
/// use typed_tools::plan::typed::{lit, TypedPlan};
/// use typed_tools::Toolbox;
///
/// let toolbox = Toolbox::builder().build().unwrap();
/// // error: implementation of `Deserialize` is not general enough
/// let run = TypedPlan::new(lit("done")).run(&toolbox).await;
/// # });
/// ```
#[diagnostic::on_unimplemented(
    message = "a plan whose value is of type `{Self}` cannot be run to a Rust value: its value is read into `{Self}`, which must implement `serde::Deserialize` and `schemars::JsonSchema`",
    label = "the plan's value is read into `{Self}`",
    note = "derive both on the type, `#[derive(serde::Deserialize, schemars::JsonSchema)]` (a tool's output type derives `Serialize`; add `Deserialize`), or run the plan untyped: `Interpreter::run(plan.plan())`"
)]
pub trait Outcome: DeserializeOwned + JsonSchema {}

#[diagnostic::do_not_recommend]
impl<T: DeserializeOwned + JsonSchema> Outcome for T {}

impl<T, E: Effects> From<TypedPlan<T, E>> for Plan {
    fn from(plan: TypedPlan<T, E>) -> Plan {
        plan.plan
    }
}
