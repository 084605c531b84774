//! The plan IR: plain data, serializable to JSON that a model could write too.
//!
//! The shape of the IR carries λ-Tool's rules as far as data can:
//!
//! - a tool call is not an expression: [`Step::Exec`] appears only as what an
//!   [`Expr::Match`] matches on, so its Result can only be used by a `match`
//!   with both an `Ok` and an `Err` branch, and the `Ok` binder is in scope in
//!   the `Ok` branch only;
//! - [`Step::Traverse`], the effectful iteration, is a [`Step`] as well: its
//!   Result must be matched too;
//! - functions are not values: a [`Lambda`] appears only as the callback of
//!   `map`, `filter`, `fold` or `traverse`, so nothing can call itself, and
//!   there is no loop construct: every list a plan iterates over is finite.
//!
//! - the one exception is [`Expr::Call`]: a *pure, infallible* tool (no
//!   effects, returns a plain value) is a function, usable anywhere, inside
//!   `map`, `filter` and `fold` callbacks too. It is how a Rust developer adds
//!   computation the built-in operations lack (formatting an amount, parsing a
//!   date).
//!
//! What data cannot say (a tool call inside a `map` callback, a `call` of a
//! tool that has effects or can fail, a tool the toolbox lacks, effects
//! outside the allowed set) is refused before anything runs; see
//! [`Interpreter`](super::Interpreter).
//!
//! # The pure operations, and why each is here
//!
//! | operation | text | why a plan needs it |
//! |---|---|---|
//! | equality [`Eq`](BinaryOp::Eq), [`Ne`](BinaryOp::Ne) | `==` `!=` | branch on a tool's data: `account.subscription_tier == "pro"` |
//! | comparison [`Lt`](BinaryOp::Lt), [`Le`](BinaryOp::Le), [`Gt`](BinaryOp::Gt), [`Ge`](BinaryOp::Ge) (Int, Float or String on both sides) | `<` `<=` `>` `>=` | thresholds and limits: refund only below an amount, `filter` by a bound |
//! | integer arithmetic [`Add`](BinaryOp::Add), [`Sub`](BinaryOp::Sub), [`Mul`](BinaryOp::Mul), [`Div`](BinaryOp::Div), [`Rem`](BinaryOp::Rem) (checked) | `+` `-` `*` `/` `%` | amounts and counts: a partial refund, a sum in a `fold` |
//! | string concatenation [`Concat`](BinaryOp::Concat) | `++` | build a message or a body from a tool's data |
//! | boolean logic [`And`](BinaryOp::And), [`Or`](BinaryOp::Or) (short-circuit), [`Not`](Expr::Not) | `and` `or` `not` | combine conditions |
//! | [`If`](Expr::If) | `if c then a else b` | choose between two pure results, or between two calls |
//! | [`Let`](Expr::Let) | `let x = e in body` | name a value once instead of repeating it |
//! | field access [`Get`](Expr::Get) | `account.id` | read a tool's output |
//! | [`Call`](Expr::Call) of a pure, infallible tool | `call tool format_cents {cents = x}` | everything else: the plan's author brings the function, typed and tested in Rust |
//!
//! Negation is `0 - x`; there is no floating-point arithmetic (money is in
//! integer cents), no string formatting of numbers and no list indexing: a
//! plan that needs them calls a pure tool that does it (`call`).
//!
//! ```
//! use typed_tools::plan::{Expr, Plan};
//!
//! let plan: Plan = serde_json::from_value(serde_json::json!({
//!     "kind": "match",
//!     "on": {"kind": "exec", "tool": "lookup_account",
//!            "arg": {"kind": "record", "fields": {"id": {"kind": "string", "value": "cust_12345"}}}},
//!     "ok": {"bind": "account", "body": {"kind": "get", "of": {"kind": "var", "name": "account"}, "field": "email"}},
//!     "err": {"bind": "e", "body": {"kind": "string", "value": "account lookup failed"}}
//! })).unwrap();
//! assert_eq!(plan.tools(), ["lookup_account"]);
//! assert!(matches!(plan.body, Expr::Match { .. }));
//! ```

use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// How deeply expressions may nest: in parsed text, in the interpreter and in
/// the checks before a run. Real plans nest a few levels; the bound keeps
/// hostile input from exhausting the stack.
pub const MAX_DEPTH: usize = 64;

/// A plan: one expression, whose value is the plan's outcome.
///
/// Its JSON form is the expression's. Its text form is λ-Tool (see
/// [`text`](super::text)): `plan.to_string()` prints it, [`Plan::parse`] reads it.
///
/// ```
/// use typed_tools::plan::Plan;
///
/// let plan = Plan::parse(r#"match exec tool lookup_account {id = "cust_1"} {
///   Ok(account) => account.email,
///   Err(e) => "account lookup failed"
/// }"#).unwrap();
/// assert_eq!(plan.tools(), ["lookup_account"]);
/// assert_eq!(Plan::parse(&plan.to_string()).unwrap(), plan);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Plan {
    /// The expression.
    pub body: Expr,
}

impl Plan {
    /// A plan of one expression.
    ///
    /// ```
    /// use typed_tools::plan::{Expr, Plan};
    ///
    /// let plan = Plan::new(Expr::string("done"));
    /// assert_eq!(plan.to_string(), r#""done""#);
    /// ```
    pub fn new(body: Expr) -> Plan {
        Plan { body }
    }

    /// The tools the plan names (by `exec` or `call`), each once, in the
    /// order they first appear.
    ///
    /// ```
    /// use typed_tools::plan::Plan;
    ///
    /// let plan = Plan::parse(r#"match exec tool add_note {text = "milk"} {
    ///   Ok(id) => match exec tool get_note {id = id} { Ok(n) => n.text, Err(e) => e.message },
    ///   Err(e) => match exec tool add_note {text = "again"} { Ok(i) => "retried", Err(e2) => e2.message }
    /// }"#).unwrap();
    /// assert_eq!(plan.tools(), ["add_note", "get_note"]);
    /// ```
    pub fn tools(&self) -> Vec<&str> {
        let mut tools = Vec::new();
        Child::Expr(&self.body).visit_tools(&mut |tool, _| {
            if !tools.contains(&tool) {
                tools.push(tool);
            }
        });
        tools
    }
}

/// An expression. Its JSON form is tagged by `"kind"`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Expr {
    /// `()`.
    Unit,
    /// `true`, `false`.
    Bool {
        /// The value.
        value: bool,
    },
    /// `42`, `-7`.
    Int {
        /// The value.
        value: i64,
    },
    /// `1.5`, `2e-3`. Finite.
    Float {
        /// The value.
        value: f64,
    },
    /// `"text"`.
    String {
        /// The value.
        value: String,
    },
    /// `{id = "cust_1", amount = 100}`; in JSON, `"fields"` is an object.
    Record {
        /// The fields, in order; names are unique.
        #[serde(with = "fields")]
        fields: Vec<(String, Expr)>,
    },
    /// `[1, 2, 3]`.
    List {
        /// The elements.
        items: Vec<Expr>,
    },
    /// A variable bound by `let`, a match branch or a lambda.
    Var {
        /// Its name.
        name: String,
    },
    /// `of.field`.
    Get {
        /// The record.
        of: Box<Expr>,
        /// The field.
        field: String,
    },
    /// `match on { Ok(x) => ..., Err(e) => ... }`: the only use of a Result.
    Match {
        /// The tool call or traverse whose Result is matched.
        on: Box<Step>,
        /// Runs with the Ok value bound.
        ok: Branch,
        /// Runs with the error bound; the Ok binder does not exist here.
        err: Branch,
    },
    /// `let name = value in body`.
    Let {
        /// The variable.
        name: String,
        /// Its value.
        value: Box<Expr>,
        /// Where it is in scope.
        body: Box<Expr>,
    },
    /// `if cond then yes else no`.
    If {
        /// A Bool.
        cond: Box<Expr>,
        /// When true.
        then: Box<Expr>,
        /// When false.
        #[serde(rename = "else")]
        otherwise: Box<Expr>,
    },
    /// `not operand`.
    Not {
        /// A Bool.
        operand: Box<Expr>,
    },
    /// `left op right`.
    Binary {
        /// The operation.
        op: BinaryOp,
        /// Evaluated first.
        left: Box<Expr>,
        /// Evaluated second (not at all when `and`/`or` short-circuit).
        right: Box<Expr>,
    },
    /// `map (fn x => body) list`: a pure callback on each element.
    Map {
        /// Pure.
        func: Lambda,
        /// The list.
        list: Box<Expr>,
    },
    /// `filter (fn x => body) list`: keeps the elements whose callback gives `true`.
    Filter {
        /// Pure, gives a Bool.
        func: Lambda,
        /// The list.
        list: Box<Expr>,
    },
    /// `fold (fn acc, x => body) init list`: from the left.
    Fold {
        /// Pure.
        func: Lambda2,
        /// The first accumulator.
        init: Box<Expr>,
        /// The list.
        list: Box<Expr>,
    },
    /// `call tool name arg`: calls a pure, infallible tool (no effects, it
    /// returns a plain value) as a function; the value is its output. Unlike
    /// `exec`, it needs no `match` and may stand in a `map`, `filter` or
    /// `fold` callback. A tool with effects or one that can fail is refused
    /// before the plan runs.
    Call {
        /// The tool's name.
        tool: String,
        /// The arguments (a record, one field per parameter).
        arg: Box<Expr>,
    },
}

/// What a `match` matches on: something that yields a Result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Step {
    /// `exec tool name arg`: calls the tool once, with `arg` as its arguments
    /// (a record, one field per parameter).
    Exec {
        /// The tool's name.
        tool: String,
        /// The arguments.
        arg: Box<Expr>,
    },
    /// `traverse (fn x => step) list`: runs the step for each element in
    /// order; Ok with the list of Ok values, or the first Err (later elements
    /// do not run).
    Traverse {
        /// The element's binder.
        param: Param,
        /// The step run per element.
        body: Box<Step>,
        /// The list.
        list: Box<Expr>,
    },
}

/// A branch of a `match`: a binder and a body.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Branch {
    /// The variable the Ok value (or the error) is bound to.
    pub bind: String,
    /// The branch.
    pub body: Box<Expr>,
}

/// A callback of one parameter: `fn x => body` or `fn x: Int => body`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lambda {
    /// The parameter.
    pub param: Param,
    /// The body.
    pub body: Box<Expr>,
}

/// A callback of two parameters, for `fold`: `fn acc, x => body`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lambda2 {
    /// The accumulator.
    pub acc: Param,
    /// The element.
    pub item: Param,
    /// The body: the next accumulator.
    pub body: Box<Expr>,
}

/// A parameter, with the type annotation a model may write (kept for the
/// checker; the interpreter does not need it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Param {
    /// The name.
    pub name: String,
    /// `fn o: {id: Int} => ...`.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub ty: Option<Type>,
}

/// A λ-Tool type, as written in annotations and by
/// [`schema::type_name`](crate::schema::type_name): `Int`, `[String]`,
/// `{id: String, amount: Int}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Type {
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
    List {
        /// The element type.
        of: Box<Type>,
    },
    /// `{name: T, ...}`.
    Record {
        /// The fields, in order.
        #[serde(with = "fields")]
        fields: Vec<(String, Type)>,
    },
}

/// A binary operation; see the [module docs](self) for why each exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BinaryOp {
    /// `==`, on any two values.
    Eq,
    /// `!=`.
    Ne,
    /// `<`.
    Lt,
    /// `<=`.
    Le,
    /// `>`.
    Gt,
    /// `>=`.
    Ge,
    /// `+`, Int, checked.
    Add,
    /// `-`, Int, checked.
    Sub,
    /// `*`, Int, checked.
    Mul,
    /// `/`, Int, truncating; division by zero is an error.
    Div,
    /// `%`, Int; by zero is an error.
    Rem,
    /// `++`, String.
    Concat,
    /// `and`, short-circuit.
    And,
    /// `or`, short-circuit.
    Or,
}

impl BinaryOp {
    /// Every operation.
    pub const ALL: [BinaryOp; 14] = [
        BinaryOp::Eq,
        BinaryOp::Ne,
        BinaryOp::Lt,
        BinaryOp::Le,
        BinaryOp::Gt,
        BinaryOp::Ge,
        BinaryOp::Add,
        BinaryOp::Sub,
        BinaryOp::Mul,
        BinaryOp::Div,
        BinaryOp::Rem,
        BinaryOp::Concat,
        BinaryOp::And,
        BinaryOp::Or,
    ];

    /// The operator as written in text.
    pub const fn symbol(self) -> &'static str {
        match self {
            BinaryOp::Eq => "==",
            BinaryOp::Ne => "!=",
            BinaryOp::Lt => "<",
            BinaryOp::Le => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::Ge => ">=",
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Rem => "%",
            BinaryOp::Concat => "++",
            BinaryOp::And => "and",
            BinaryOp::Or => "or",
        }
    }

    /// Binding strength in text: higher binds tighter.
    pub(crate) const fn precedence(self) -> u8 {
        match self {
            BinaryOp::Or => 1,
            BinaryOp::And => 2,
            BinaryOp::Eq
            | BinaryOp::Ne
            | BinaryOp::Lt
            | BinaryOp::Le
            | BinaryOp::Gt
            | BinaryOp::Ge => 3,
            BinaryOp::Concat => 4,
            BinaryOp::Add | BinaryOp::Sub => 5,
            BinaryOp::Mul | BinaryOp::Div | BinaryOp::Rem => 6,
        }
    }
}

impl Expr {
    /// A string literal.
    pub fn string(value: impl Into<String>) -> Expr {
        Expr::String {
            value: value.into(),
        }
    }

    /// An Int literal.
    pub fn int(value: i64) -> Expr {
        Expr::Int { value }
    }

    /// A variable.
    pub fn var(name: impl Into<String>) -> Expr {
        Expr::Var { name: name.into() }
    }

    /// `self.field`.
    pub fn get(self, field: impl Into<String>) -> Expr {
        Expr::Get {
            of: Box::new(self),
            field: field.into(),
        }
    }

    /// A record of the given fields.
    pub fn record<N: Into<String>>(fields: impl IntoIterator<Item = (N, Expr)>) -> Expr {
        Expr::Record {
            fields: fields.into_iter().map(|(n, e)| (n.into(), e)).collect(),
        }
    }

    /// `left op right`.
    pub fn binary(op: BinaryOp, left: Expr, right: Expr) -> Expr {
        Expr::Binary {
            op,
            left: Box::new(left),
            right: Box::new(right),
        }
    }

    /// `call tool name arg`.
    pub fn call(tool: impl Into<String>, arg: Expr) -> Expr {
        Expr::Call {
            tool: tool.into(),
            arg: Box::new(arg),
        }
    }

    /// `match on { Ok(ok) => then, Err(err) => otherwise }`.
    pub fn match_(on: Step, ok: &str, then: Expr, err: &str, otherwise: Expr) -> Expr {
        Expr::Match {
            on: Box::new(on),
            ok: Branch {
                bind: ok.to_owned(),
                body: Box::new(then),
            },
            err: Branch {
                bind: err.to_owned(),
                body: Box::new(otherwise),
            },
        }
    }

    /// Child `i` of the expression, in text order (see [`Child`]): the one
    /// description of the IR's shape that the walks over it (the checks
    /// before a run, [`Plan::tools`], the interpreter's node ids) are built
    /// on. A lambda is not a node: its body is ([`Child::Callback`]).
    #[inline]
    pub(crate) fn child(&self, i: usize) -> Option<Child<'_>> {
        use Child::{Callback, Expr as Sub, Step as Run};
        match self {
            Expr::Unit
            | Expr::Bool { .. }
            | Expr::Int { .. }
            | Expr::Float { .. }
            | Expr::String { .. }
            | Expr::Var { .. } => None,
            Expr::Record { fields } => fields.get(i).map(|(_, e)| Sub(e)),
            Expr::List { items } => items.get(i).map(Sub),
            Expr::Get { of: e, .. } | Expr::Not { operand: e } | Expr::Call { arg: e, .. } => {
                nth(i, &[Sub(e)])
            }
            Expr::Match { on, ok, err } => nth(i, &[Run(on), Sub(&ok.body), Sub(&err.body)]),
            Expr::Let { value, body, .. } => nth(i, &[Sub(value), Sub(body)]),
            Expr::If {
                cond,
                then,
                otherwise,
            } => nth(i, &[Sub(cond), Sub(then), Sub(otherwise)]),
            Expr::Binary { left, right, .. } => nth(i, &[Sub(left), Sub(right)]),
            Expr::Map { func, list } => nth(i, &[Callback("map", &func.body), Sub(list)]),
            Expr::Filter { func, list } => nth(i, &[Callback("filter", &func.body), Sub(list)]),
            Expr::Fold { func, init, list } => {
                nth(i, &[Callback("fold", &func.body), Sub(init), Sub(list)])
            }
        }
    }

    /// The expression's children, in text order: see [`child`](Self::child).
    pub(crate) fn children(&self) -> Children<'_> {
        Child::Expr(self).children()
    }
}

impl Step {
    /// Child `i` of the step, in text order: an `exec`'s argument; a
    /// `traverse`'s step, then its list.
    #[inline]
    pub(crate) fn child(&self, i: usize) -> Option<Child<'_>> {
        match self {
            Step::Exec { arg, .. } => nth(i, &[Child::Expr(arg)]),
            Step::Traverse { body, list, .. } => nth(i, &[Child::Step(body), Child::Expr(list)]),
        }
    }
}

#[inline]
fn nth<'e>(i: usize, children: &[Child<'e>]) -> Option<Child<'e>> {
    children.get(i).copied()
}

/// A node of the plan's tree, as [`Expr::child`] gives it.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Child<'e> {
    /// A sub-expression evaluated where its parent is: an operand, a field, a
    /// branch, a list, an argument.
    Expr(&'e Expr),
    /// The body of a pure callback, run per element, with its combinator's
    /// name (`"map"`, `"filter"`, `"fold"`).
    Callback(&'static str, &'e Expr),
    /// A step: what a `match` matches on, or the body of a `traverse`.
    Step(&'e Step),
}

/// Where [`Child::walk`] is: before node `id`'s children, or after them. A
/// node's id is its position in the walk: the root is 0, a node's first
/// child follows it, and each next child follows the previous one's subtree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Visit {
    Enter(usize),
    Leave(usize),
}

impl<'e> Child<'e> {
    /// Child `i` of this node, in text order.
    #[inline]
    pub(crate) fn child(self, i: usize) -> Option<Child<'e>> {
        match self {
            Child::Expr(e) | Child::Callback(_, e) => e.child(i),
            Child::Step(s) => s.child(i),
        }
    }

    /// This node's children, in text order. Allocation-free.
    #[inline]
    pub(crate) fn children(self) -> Children<'e> {
        Children {
            node: self,
            next: 0,
        }
    }

    /// The expression this node is, unless it is a step.
    #[inline]
    pub(crate) fn expr(self) -> Option<&'e Expr> {
        match self {
            Child::Expr(e) | Child::Callback(_, e) => Some(e),
            Child::Step(_) => None,
        }
    }

    /// The tool an `exec` or a `call` names, and whether it is a `call`.
    pub(crate) fn tool(self) -> Option<(&'e str, bool)> {
        match self {
            Child::Expr(Expr::Call { tool, .. }) | Child::Callback(_, Expr::Call { tool, .. }) => {
                Some((tool, true))
            }
            Child::Step(Step::Exec { tool, .. }) => Some((tool, false)),
            _ => None,
        }
    }

    /// Walks this node (the root, id 0) and every node under it, depth
    /// first in text order: `visit` sees each node before its children and
    /// after them. Does not go past [`MAX_DEPTH`]: stops at the first node
    /// deeper and returns `false`.
    pub(crate) fn walk(self, visit: &mut impl FnMut(Child<'e>, Visit)) -> bool {
        self.walk_at(0, &mut 0, visit)
    }

    fn walk_at(
        self,
        depth: usize,
        next_id: &mut usize,
        visit: &mut impl FnMut(Child<'e>, Visit),
    ) -> bool {
        if depth > MAX_DEPTH {
            return false;
        }
        let id = *next_id;
        *next_id += 1;
        visit(self, Visit::Enter(id));
        for child in self.children() {
            if !child.walk_at(depth + 1, next_id, visit) {
                return false;
            }
        }
        visit(self, Visit::Leave(id));
        true
    }

    /// Calls `visit` with the tool of every `exec` and `call` under this node
    /// (itself included), and whether it is a `call`, outermost first, not
    /// descending past [`MAX_DEPTH`]; returns whether everything was visited.
    pub(crate) fn visit_tools(self, visit: &mut impl FnMut(&'e str, bool)) -> bool {
        self.walk(&mut |node, at| {
            if let (Some((tool, call)), Visit::Enter(_)) = (node.tool(), at) {
                visit(tool, call);
            }
        })
    }
}

/// The children of a node, in text order: see [`Expr::child`].
#[derive(Clone, Debug)]
pub(crate) struct Children<'e> {
    node: Child<'e>,
    next: usize,
}

impl<'e> Iterator for Children<'e> {
    type Item = Child<'e>;

    #[inline]
    fn next(&mut self) -> Option<Child<'e>> {
        let child = self.node.child(self.next)?;
        self.next += 1;
        Some(child)
    }
}

/// What a run needs to know of each node of a plan, by id (see [`Visit`]),
/// found before it runs, by the walk that checks the depth.
#[derive(Clone, Debug, Default)]
pub(crate) struct Index {
    /// Per node: how many nodes its subtree has (itself included), shifted
    /// left by one, and in the low bit whether it is or holds a step or a
    /// `call` (it calls a tool). Four bytes a node: built on every run.
    nodes: Vec<u32>,
}

impl Index {
    /// Records a node: give it every event of a [`Child::walk`] of the plan.
    #[inline]
    pub(crate) fn visit(&mut self, node: Child<'_>, at: Visit) {
        match at {
            Visit::Enter(id) => {
                debug_assert_eq!(id, self.nodes.len(), "nodes are entered in id order");
                let calls = matches!(
                    node.expr(),
                    None | Some(Expr::Match { .. } | Expr::Call { .. })
                );
                self.nodes.push(u32::from(calls));
            }
            Visit::Leave(id) => {
                let end = self.nodes.len();
                let mut calls = self.calls(id);
                let mut child = id + 1;
                while child < end && !calls {
                    calls = self.calls(child);
                    child = self.next(child);
                }
                let size = u32::try_from((end - id) << 1).expect("a plan has under 2^31 nodes");
                self.nodes[id] = size | u32::from(calls);
            }
        }
    }

    /// Whether node `id` calls a tool (is or holds a step or a `call`).
    #[inline]
    pub(crate) fn calls(&self, id: usize) -> bool {
        self.nodes[id] & 1 == 1
    }

    /// The id of the node after node `id`'s subtree: its next sibling.
    #[inline]
    pub(crate) fn next(&self, id: usize) -> usize {
        id + (self.nodes[id] >> 1) as usize
    }

    /// The ids of node `id`'s first `N` children, in text order.
    #[inline]
    pub(crate) fn children<const N: usize>(&self, id: usize) -> [usize; N] {
        let mut child = id + 1;
        std::array::from_fn(|_| {
            let this = child;
            child = self.next(this);
            this
        })
    }
}

/// Record fields as a JSON object, in order, names unique.
mod fields {
    use super::*;

    pub(super) fn serialize<S: Serializer, T: Serialize>(
        fields: &[(String, T)],
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(fields.len()))?;
        for (name, value) in fields {
            map.serialize_entry(name, value)?;
        }
        map.end()
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
        deserializer: D,
    ) -> Result<Vec<(String, T)>, D::Error> {
        struct Fields<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for Fields<T> {
            type Value = Vec<(String, T)>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object of fields")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut fields: Vec<(String, T)> = Vec::new();
                while let Some((name, value)) = map.next_entry::<String, T>()? {
                    if fields.iter().any(|(n, _)| *n == name) {
                        return Err(serde::de::Error::custom(format!(
                            "duplicate field `{name}`"
                        )));
                    }
                    fields.push((name, value));
                }
                Ok(fields)
            }
        }
        deserializer.deserialize_map(Fields(std::marker::PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn same(a: Child<'_>, b: Child<'_>) -> bool {
        match (a, b) {
            (Child::Step(a), Child::Step(b)) => std::ptr::eq(a, b),
            _ => matches!((a.expr(), b.expr()), (Some(a), Some(b)) if std::ptr::eq(a, b)),
        }
    }

    /// The ids `Index` gives a node's children are those the walk gave them,
    /// and which nodes call a tool is what the plan shows.
    #[test]
    fn the_index_follows_the_walk() {
        let plan = Plan::parse(
            r#"let xs = [1, {a = 2}.a, if true then 3 else 4] in
match traverse (fn x => exec tool t {n = x}) (map (fn y => y + 1) xs) {
  Ok(all) => fold (fn acc, v => acc + call tool f {v = v}) 0 (filter (fn z => not (z == 2)) all),
  Err(e) => e.message
}"#,
        )
        .unwrap();
        let mut index = Index::default();
        let mut order = Vec::new();
        assert!(Child::Expr(&plan.body).walk(&mut |node, at| {
            index.visit(node, at);
            if let Visit::Enter(id) = at {
                assert_eq!(id, order.len());
                order.push(node);
            }
        }));
        for (id, node) in order.iter().enumerate() {
            let mut child = id + 1;
            for expected in node.children() {
                assert!(same(order[child], expected), "child {child} of node {id}");
                child = index.next(child);
            }
            assert_eq!(
                child,
                index.next(id),
                "node {id} ends where its children do"
            );
        }
        let calls: Vec<usize> = (0..order.len()).filter(|&id| index.calls(id)).collect();
        // The `let`, the `match` and its step and `exec`, the `Ok` branch's
        // `fold`, its callback's `+` and the `call`.
        assert_eq!(calls.len(), 7, "{calls:?}");
        assert!(index.calls(0));
        assert!(!index.calls(1), "the list bound by `let`");
    }
}
