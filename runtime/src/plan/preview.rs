//! Before a plan runs: the checks that refuse it ([`Preview::check`]), what it
//! may do ([`Preview`]: the tools, their effects, how often each can run), and
//! the approval hook for `Write` calls ([`ApprovalRequest`], [`Decision`]).
//!
//! ```
//! use typed_tools::{tool, Toolbox};
//! use typed_tools::effect::EffectSet;
//! use typed_tools::plan::{Plan, Preview, Runs};
//!
//! /// Charge an order.
//! #[tool(effects = Write)]
//! fn charge(id: i64, amount: i64) -> String { format!("tx_{id}") }
//!
//! let toolbox = Toolbox::builder().tool(Charge).build().unwrap();
//! let plan = Plan::parse(r#"match traverse (fn o => exec tool charge o)
//!     [{id = 1, amount = 100}, {id = 2, amount = 50}] {
//!   Ok(receipts) => "done",
//!   Err(e) => e.message
//! }"#).unwrap();
//! let preview = Preview::check(&plan, &toolbox, EffectSet::ALL).unwrap();
//! assert_eq!(preview.effects, EffectSet::WRITE);
//! assert_eq!(preview.calls[0].runs, Runs::AtMost(2));
//! assert_eq!(preview.to_string(), "charge {Write}: at most 2 times\n");
//! ```

use std::fmt;

use crate::effect::{EffectSet, Effects};
use crate::toolbox::{Toolbox, ToolboxContext};

use super::check::{Outputs, Returns};
use super::error::PlanError;
use super::ir::{Child, Expr, Index, Plan, Step, Visit, MAX_DEPTH};

/// What a plan may do, known before it runs.
#[derive(Clone, Debug, PartialEq)]
pub struct Preview {
    /// Each tool the plan may call, in the order it first appears.
    pub calls: Vec<PlannedCall>,
    /// The union of the tools' effects: the plan's effects.
    pub effects: EffectSet,
}

/// One tool a plan may call.
#[derive(Clone, Debug, PartialEq)]
pub struct PlannedCall {
    /// The tool.
    pub tool: String,
    /// Its declared effects.
    pub effects: EffectSet,
    /// How many times it can run at most.
    pub runs: Runs,
}

/// How many times a tool can run at most.
///
/// Only one branch of a `match` or `if` runs, so the larger count of the two
/// is taken; a `traverse` over a list whose length the plan shows (a list
/// literal, or `map`/`filter` of one, or a `let` bound to one) multiplies by
/// that length; over a list known only at run time it is
/// [`PerElement`](Runs::PerElement).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Runs {
    /// At most this many times.
    AtMost(u64),
    /// Once per element of a list known only at run time (and perhaps more).
    PerElement,
}

impl Runs {
    fn plus(self, other: Runs) -> Runs {
        match (self, other) {
            (Runs::AtMost(a), Runs::AtMost(b)) => Runs::AtMost(a.saturating_add(b)),
            _ => Runs::PerElement,
        }
    }

    fn max(self, other: Runs) -> Runs {
        match (self, other) {
            (Runs::AtMost(a), Runs::AtMost(b)) => Runs::AtMost(a.max(b)),
            _ => Runs::PerElement,
        }
    }

    fn times(self, length: Option<u64>) -> Runs {
        match (self, length) {
            (Runs::AtMost(a), Some(n)) => Runs::AtMost(a.saturating_mul(n)),
            _ => Runs::PerElement,
        }
    }
}

impl fmt::Display for Runs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Runs::AtMost(1) => f.write_str("at most once"),
            Runs::AtMost(n) => write!(f, "at most {n} times"),
            Runs::PerElement => f.write_str("once per element of a list known at run time"),
        }
    }
}

/// One line per tool: `issue_refund {Write}: at most once`; with several
/// tools, then the calls in all: `in all: at most 3 calls`.
impl fmt::Display for Preview {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for call in &self.calls {
            writeln!(f, "{} {}: {}", call.tool, call.effects, call.runs)?;
        }
        if self.calls.len() > 1 {
            match self.calls_in_all() {
                Runs::AtMost(1) => writeln!(f, "in all: at most 1 call")?,
                Runs::AtMost(n) => writeln!(f, "in all: at most {n} calls")?,
                Runs::PerElement => writeln!(f, "in all: {}", Runs::PerElement)?,
            }
        }
        Ok(())
    }
}

impl Preview {
    /// How many tool calls the plan can make in all, when it shows it (no
    /// `traverse` over a list known only at run time): what the
    /// interpreter's [`calls`](super::Limits::calls) limit is compared with
    /// as the plan runs.
    ///
    /// ```
    /// use typed_tools::{tool, Toolbox};
    /// use typed_tools::effect::EffectSet;
    /// use typed_tools::plan::{Plan, Preview, Runs};
    ///
    /// /// Look up an order.
    /// #[tool(effects = Read)]
    /// fn lookup(id: i64) -> i64 { id }
    /// /// Charge an order.
    /// #[tool(effects = Write)]
    /// fn charge(id: i64) -> String { format!("tx_{id}") }
    ///
    /// let toolbox = Toolbox::builder().tool(Lookup).tool(Charge).build().unwrap();
    /// let plan = Plan::parse(r#"match exec tool lookup {id = 1} {
    ///   Ok(id) => match traverse (fn o => exec tool charge o) [{id = id}, {id = 2}] {
    ///     Ok(receipts) => "done",
    ///     Err(e) => e.message
    ///   },
    ///   Err(e) => e.message
    /// }"#).unwrap();
    /// let preview = Preview::check(&plan, &toolbox, EffectSet::ALL).unwrap();
    /// assert_eq!(preview.calls_in_all(), Runs::AtMost(3));
    /// assert_eq!(preview.to_string(), "lookup {Read}: at most once
    /// charge {Write}: at most 2 times
    /// in all: at most 3 calls
    /// ");
    /// ```
    pub fn calls_in_all(&self) -> Runs {
        self.calls
            .iter()
            .fold(Runs::AtMost(0), |sum, call| sum.plus(call.runs))
    }

    /// Checks a plan against a toolbox and the allowed effects, and previews
    /// it. Refuses (nothing has run) a plan that nests deeper than
    /// [`MAX_DEPTH`], `exec`s a tool inside a `map`/`filter`/`fold` callback,
    /// names a tool the toolbox lacks, `call`s a tool that has effects or can
    /// fail, or whose tools' effects are not all within `allowed` and what
    /// the toolbox's view allows (a [`restrict`](Toolbox::restrict)ed view
    /// refuses a tool outside it for its effects, as a direct call does:
    /// [`PlanError::EffectViolation`]); then
    /// type-checks it against the tools' types ([`check`](super::check())),
    /// refusing it with every type error found ([`PlanError::TypeErrors`]).
    ///
    /// ```
    /// use typed_tools::effect::EffectSet;
    /// use typed_tools::plan::{Plan, PlanError, Preview};
    /// use typed_tools::{tool, Toolbox};
    ///
    /// /// Delete a note by its id.
    /// #[tool(effects = Write)]
    /// fn delete_note(id: u32) -> bool { id > 0 }
    ///
    /// let toolbox = Toolbox::builder().tool(DeleteNote).build().unwrap();
    /// let plan = Plan::parse("match exec tool delete_note {id = 3} { Ok(gone) => gone, Err(e) => false }").unwrap();
    /// let preview = Preview::check(&plan, &toolbox, EffectSet::ALL).unwrap();
    /// assert_eq!(preview.effects, EffectSet::WRITE);
    /// // On a read-only view the tool is there, and refused for its effects.
    /// let refused = Preview::check(&plan, &toolbox.restrict(EffectSet::READ), EffectSet::ALL).unwrap_err();
    /// assert!(matches!(refused, PlanError::EffectViolation { .. }));
    /// ```
    pub fn check<A: Effects, C: ToolboxContext>(
        plan: &Plan,
        toolbox: &Toolbox<A, C>,
        allowed: EffectSet,
    ) -> Result<Preview, PlanError> {
        Preview::check_indexed(plan, toolbox, allowed, true, None).map(|(preview, ..)| preview)
    }

    /// [`check`](Self::check), and also that the plan gives a `T`: its type
    /// (what [`check`](super::check()) gives) is compared with `T`'s schema
    /// (`returns`, [`Returns::of::<T>()`](Returns::of)) before anything runs, and a plan that would give
    /// another type is refused with a [`PlanError::TypeErrors`] of kind
    /// [`TypeErrorKind::Returns`](super::check::TypeErrorKind::Returns),
    /// saying what it gives and what is needed. What a task that needs a
    /// Rust value asks of a plan a model wrote; [`Interpreter::run_as`](super::Interpreter::run_as)
    /// checks this and reads the value into `T`.
    ///
    /// ```
    /// use typed_tools::effect::EffectSet;
    /// use typed_tools::plan::{Plan, PlanError, Preview};
    /// use typed_tools::plan::check::Returns;
    /// use typed_tools::{tool, Toolbox};
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct RestockReport { items: Vec<i64>, total_cost: f64 }
    ///
    /// /// The items low on stock.
    /// #[tool(effects = Read)]
    /// fn low_stock() -> Vec<String> { vec!["tea".into()] }
    ///
    /// let toolbox = Toolbox::builder().tool(LowStock).build().unwrap();
    /// let names = Plan::parse("match exec tool low_stock {} { Ok(names) => names, Err(e) => [] }").unwrap();
    /// let report = Returns::of::<RestockReport>();
    /// let Err(PlanError::TypeErrors(errors)) = Preview::check_returns(&names, &toolbox, EffectSet::ALL, &report)
    /// else { panic!() };
    /// assert_eq!(errors[0].to_string(), "the plan's value: the plan gives [String]; the task needs a \
    ///     RestockReport: {items: [Int], total_cost: Float}; make the plan's value a RestockReport in every branch");
    ///
    /// let plan = Plan::parse("{items = [2, 3], total_cost = 62.5}").unwrap();
    /// assert!(Preview::check_returns(&plan, &toolbox, EffectSet::ALL, &report).is_ok());
    /// ```
    pub fn check_returns<A: Effects, C: ToolboxContext>(
        plan: &Plan,
        toolbox: &Toolbox<A, C>,
        allowed: EffectSet,
        returns: &Returns,
    ) -> Result<Preview, PlanError> {
        Preview::check_indexed(plan, toolbox, allowed, true, Some(returns))
            .map(|(preview, ..)| preview)
    }

    /// [`check`](Self::check), also giving what the interpreter reads of
    /// each node ([`Index`]), found by the same first walk.
    ///
    /// Without `types`, the type check is left out: only for tests that
    /// watch what the interpreter's own run-time checks do.
    ///
    /// With the type check, each tool's output type comes too (see
    /// [`Outputs`]); without it, none. With `returns`, the plan's type is
    /// also held to it ([`Returns::check`]), after the type check.
    pub(crate) fn check_indexed<'p, A: Effects, C: ToolboxContext>(
        plan: &'p Plan,
        toolbox: &Toolbox<A, C>,
        allowed: EffectSet,
        types: bool,
        returns: Option<&Returns>,
    ) -> Result<(Preview, Index, Outputs<'p>), PlanError> {
        // One walk: the depth check, the tools in order of appearance, those
        // used as functions (`call`), the first tool call inside a pure
        // callback, and the index.
        let mut tools: Vec<&str> = Vec::new();
        let mut functions: Vec<&str> = Vec::new();
        let mut index = Index::default();
        // The combinators of the callbacks the walk is in, innermost last.
        let mut callbacks: Vec<&'static str> = Vec::new();
        let mut effect_in_callback = None;
        let within_depth = Child::Expr(&plan.body).walk(&mut |node, at| {
            index.visit(node, at);
            match (node, at) {
                (Child::Callback(combinator, _), Visit::Enter(_)) => callbacks.push(combinator),
                (Child::Callback(..), Visit::Leave(_)) => {
                    callbacks.pop();
                }
                _ => {}
            }
            let Visit::Enter(_) = at else { return };
            if let (Some(Expr::Match { on, .. }), Some(&combinator)) =
                (node.expr(), callbacks.last())
            {
                if effect_in_callback.is_none() {
                    let tool = on.exec_tool().to_owned();
                    effect_in_callback = Some(PlanError::EffectInPureCallback { combinator, tool });
                }
            }
            let Some((tool, call)) = node.tool() else {
                return;
            };
            if !tools.contains(&tool) {
                tools.push(tool);
            }
            if call && !functions.contains(&tool) {
                functions.push(tool);
            }
        });
        if !within_depth {
            return Err(PlanError::TooDeep { limit: MAX_DEPTH });
        }
        if let Some(error) = effect_in_callback {
            return Err(error);
        }
        let mut calls = Vec::new();
        let mut effects = EffectSet::PURE;
        let counts = Counter::default().expr(&plan.body);
        // What this view of the toolbox allows and what the caller allows.
        let allowed = allowed.intersection(toolbox.allowed());
        for &tool in &tools {
            // Found in the whole toolbox: a tool outside the view is refused
            // for its effects, in a direct call's words, not called unknown.
            let Some(spec) = toolbox.spec_in_any_view(tool) else {
                return Err(PlanError::UnknownTool {
                    name: tool.to_owned(),
                    available: toolbox
                        .specs()
                        .filter(|spec| spec.effects().is_subset_of(allowed))
                        .map(|spec| spec.name().to_owned())
                        .collect(),
                });
            };
            if !spec.effects().is_subset_of(allowed) {
                return Err(PlanError::EffectViolation {
                    tool: tool.to_owned(),
                    effects: spec.effects(),
                    allowed,
                });
            }
            if functions.contains(&tool) && (!spec.effects().is_pure() || spec.is_fallible()) {
                return Err(PlanError::NotAFunction {
                    tool: tool.to_owned(),
                    effects: spec.effects(),
                    fallible: spec.is_fallible(),
                });
            }
            effects |= spec.effects();
            let runs = counts
                .iter()
                .find(|(name, _)| name == tool)
                .map_or(Runs::AtMost(0), |(_, runs)| *runs);
            calls.push(PlannedCall {
                tool: tool.to_owned(),
                effects: spec.effects(),
                runs,
            });
        }
        let outputs = if types {
            let (ty, outputs) = super::check::check_within_depth(plan, &tools, toolbox)?;
            if let Some(returns) = returns {
                returns
                    .check(&ty)
                    .map_err(|error| PlanError::TypeErrors(vec![error]))?;
            }
            outputs
        } else {
            Outputs::default()
        };
        Ok((Preview { calls, effects }, index, outputs))
    }
}

impl Step {
    /// The tool the step calls: an `exec`'s, or that of the `exec` a
    /// `traverse` runs.
    fn exec_tool(&self) -> &str {
        match self {
            Step::Exec { tool, .. } => tool,
            Step::Traverse { body, .. } => body.exec_tool(),
        }
    }
}

/// Upper bounds of runs per tool, in order of first appearance.
type Counts = Vec<(String, Runs)>;

fn merge(mut a: Counts, b: Counts, combine: fn(Runs, Runs) -> Runs) -> Counts {
    for (tool, runs) in b {
        match a.iter_mut().find(|(name, _)| *name == tool) {
            Some((_, existing)) => *existing = combine(*existing, runs),
            None => a.push((tool, combine(Runs::AtMost(0), runs))),
        }
    }
    a
}

/// Counts runs; remembers the lengths of lists bound by `let`.
#[derive(Default)]
struct Counter {
    lengths: Vec<(String, Option<u64>)>,
}

impl Counter {
    fn expr(&mut self, expr: &Expr) -> Counts {
        match expr {
            Expr::Match { on, ok, err } => {
                let on = self.step(on);
                let ok = self.expr(&ok.body);
                let err = self.expr(&err.body);
                merge(on, merge(ok, err, Runs::max), Runs::plus)
            }
            Expr::If {
                cond,
                then,
                otherwise,
            } => {
                let cond = self.expr(cond);
                let then = self.expr(then);
                let otherwise = self.expr(otherwise);
                merge(cond, merge(then, otherwise, Runs::max), Runs::plus)
            }
            Expr::Let { name, value, body } => {
                let length = self.length(value);
                let value = self.expr(value);
                self.lengths.push((name.clone(), length));
                let body = self.expr(body);
                self.lengths.pop();
                merge(value, body, Runs::plus)
            }
            Expr::Call { tool, arg } => merge(
                self.expr(arg),
                vec![(tool.clone(), Runs::AtMost(1))],
                Runs::plus,
            ),
            Expr::Map { func, list } | Expr::Filter { func, list } => {
                let per_element = self.callback(&[&func.param.name], &func.body, list);
                merge(self.expr(list), per_element, Runs::plus)
            }
            Expr::Fold { func, init, list } => {
                let per_element =
                    self.callback(&[&func.acc.name, &func.item.name], &func.body, list);
                let before = merge(self.expr(init), self.expr(list), Runs::plus);
                merge(before, per_element, Runs::plus)
            }
            // Every other expression runs each of its children once.
            other => other.children().fold(Counts::new(), |counts, child| {
                let more = match child {
                    Child::Expr(e) => self.expr(e),
                    Child::Step(step) => self.step(step),
                    // Per element of a list of unknown length.
                    Child::Callback(_, body) => self
                        .expr(body)
                        .into_iter()
                        .map(|(tool, runs)| (tool, runs.times(None)))
                        .collect(),
                };
                merge(counts, more, Runs::plus)
            }),
        }
    }

    fn step(&mut self, step: &Step) -> Counts {
        match step {
            Step::Exec { tool, arg } => merge(
                self.expr(arg),
                vec![(tool.clone(), Runs::AtMost(1))],
                Runs::plus,
            ),
            Step::Traverse { param, body, list } => {
                let length = self.length(list);
                let counts = self.expr(list);
                // The parameter shadows a `let` of the same name.
                self.lengths.push((param.name.clone(), None));
                let per_element = self.step(body);
                self.lengths.pop();
                let all = per_element
                    .into_iter()
                    .map(|(tool, runs)| (tool, runs.times(length)))
                    .collect();
                merge(counts, all, Runs::plus)
            }
        }
    }

    /// The runs of a callback's `call`s over all the elements of `list`.
    fn callback(&mut self, params: &[&str], body: &Expr, list: &Expr) -> Counts {
        let length = self.length(list);
        // The parameters shadow a `let` of the same name.
        for param in params {
            self.lengths.push(((*param).to_owned(), None));
        }
        let per_element = self.expr(body);
        self.lengths.truncate(self.lengths.len() - params.len());
        per_element
            .into_iter()
            .map(|(tool, runs)| (tool, runs.times(length)))
            .collect()
    }

    /// The length of a list, when the plan shows it (an upper bound for `filter`).
    fn length(&self, expr: &Expr) -> Option<u64> {
        match expr {
            Expr::List { items } => u64::try_from(items.len()).ok(),
            Expr::Map { list, .. } | Expr::Filter { list, .. } => self.length(list),
            Expr::Var { name } => self
                .lengths
                .iter()
                .rev()
                .find(|(n, _)| n == name)
                .and_then(|(_, length)| *length),
            _ => None,
        }
    }
}

/// The approval hook's types live with dispatch, which asks the hook;
/// they are here too, where plans first had them.
pub use crate::toolbox::{ApprovalRequest, Decision};
