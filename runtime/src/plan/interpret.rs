//! The [`Interpreter`]: runs a plan against a [`Toolbox`].
//!
//! Runtime-agnostic: it needs only `futures`, and awaits each tool call in
//! turn (a plan is sequential: the order of calls is the order of the text).
//!
//! ```
//! # futures::executor::block_on(async {
//! use typed_tools::{tool, Toolbox};
//! use typed_tools::plan::{Interpreter, Plan, Value};
//!
//! /// Look up a customer's email.
//! #[tool(effects = Read)]
//! fn lookup_email(id: String) -> Result<String, String> {
//!     if id == "cust_1" { Ok("ana@example.com".into()) } else { Err(format!("no customer {id}")) }
//! }
//!
//! let toolbox = Toolbox::builder().tool(LookupEmail).build().unwrap();
//! let plan = Plan::parse(r#"match exec tool lookup_email {id = "cust_2"} {
//!   Ok(email) => "write to " ++ email,
//!   Err(e) => e.message
//! }"#).unwrap();
//! let run = Interpreter::new(&toolbox).run(&plan).await.unwrap();
//! assert_eq!(run.outcome, Ok(Value::String("tool `lookup_email` failed: no customer cust_2".into())));
//! assert_eq!(run.trace.len(), 1);
//! assert_eq!(run.trace[0].args().to_string(), r#"{id = "cust_2"}"#);
//! # });
//! ```

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::hash::BuildHasherDefault;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use futures::FutureExt;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;

use crate::durable::{Before, CallHook};
use crate::effect::{EffectSet, Effects, ReadWriteNetwork};
use crate::error::ToolError;
use crate::tool::ToolSpec;
use crate::toolbox::ApprovalNote;
use crate::toolbox::{
    AdmitsApproval, Approval, Fnv, Hook, NoContext, PlanWithoutContext, Takes, Toolbox,
    ToolboxContext,
};

use super::check::{Returns, Ty};
use super::error::{PlanError, RunError};
use super::ir::{BinaryOp, Child, Expr, Index, Plan, Step, Visit};
use super::limits::{Limit, Limits, Meter};
use super::preview::{ApprovalRequest, Decision, Preview, Runs};
use super::value::{List, Value};

mod operations;
mod output;

use output::{read_output, Unfit};

use operations::{
    combine, error_value, field_ref, items, logical_right, short_circuit, truth, Building, Names,
    Operands,
};

/// Runs plans against a toolbox: checks first, then evaluates, calling each
/// reached `exec` exactly once.
///
/// Before anything runs, [`Preview::check`] refuses a plan that names a tool
/// the toolbox lacks or whose tools' effects are not all allowed (by default,
/// what the toolbox allows; narrower with [`restrict`](Self::restrict)), and
/// type-checks it against the tools' schemas ([`check`](super::check())),
/// reporting every type error at once: a plan from data has not been through
/// rustc. The errors are written for the model that wrote the plan to fix it.
///
/// A run is bounded by [`Limits`] (safe for a server by default; see
/// [`limits`](Self::limits)): one that reaches a limit stops with
/// [`RunError::LimitExceeded`], the calls made before it in its trace.
///
/// ```
/// # futures::executor::block_on(async {
/// use typed_tools::effect::EffectSet;
/// use typed_tools::plan::{Decision, Interpreter, Limits, Plan};
/// use typed_tools::{tool, Toolbox};
///
/// /// Delete a note by its id.
/// #[tool(effects = Write)]
/// fn delete_note(id: u32) -> bool { id > 0 }
///
/// let toolbox = Toolbox::builder().tool(DeleteNote).build().unwrap();
/// let interpreter = Interpreter::new(&toolbox)
///     .limits(Limits::new().calls(10))
///     .approve_writes(|request| match request.args["id"].as_u64() {
///         Some(1) => Decision::Refuse("note 1 is pinned".into()),
///         _ => Decision::Approve,
///     });
/// let plan = Plan::parse("match exec tool delete_note {id = 1} { Ok(gone) => gone, Err(e) => false }").unwrap();
/// let run = interpreter.run(&plan).await.unwrap();
/// assert_eq!(run.outcome, Ok(typed_tools::plan::Value::Bool(false)));
/// # });
/// ```
pub struct Interpreter<'t, A: Effects = ReadWriteNetwork, C: ToolboxContext = NoContext> {
    toolbox: &'t Toolbox<A, C>,
    allowed: EffectSet,
    approval: Option<Hook<'t>>,
    limits: Limits,
    /// Whether each call's duration is measured for the trace.
    time_calls: bool,
}

/// A finished run: the outcome and every call made, in order.
///
/// ```
/// # futures::executor::block_on(async {
/// use typed_tools::{tool, Toolbox};
/// use typed_tools::plan::{Interpreter, Plan, Value};
///
/// /// Get one note by its id.
/// #[tool(effects = Read)]
/// fn get_note(id: u32) -> Result<String, String> { Ok(format!("note {id}")) }
/// /// Delete a note by its id.
/// #[tool(effects = Write)]
/// fn delete_note(id: u32) -> bool { id > 0 }
///
/// let toolbox = Toolbox::builder().tool(GetNote).tool(DeleteNote).build().unwrap();
/// let plan = Plan::parse("match exec tool get_note {id = 7} { Ok(text) => text, Err(e) => e.message }").unwrap();
/// let run = Interpreter::new(&toolbox).run(&plan).await.unwrap();
/// assert_eq!(run.outcome, Ok(Value::String("note 7".into())));
/// assert_eq!(run.trace[0].tool(), "get_note");
/// assert_eq!(run.trace[0].args().to_json().unwrap(), serde_json::json!({"id": 7}));
/// assert_eq!(*run.trace[0].result(), typed_tools::plan::CallResult::Ok(Value::String("note 7".into())));
/// # });
/// ```
///
/// A run of a plan that must give a Rust value ([`Interpreter::run_as`],
/// [`TypedPlan::run`](super::typed::TypedPlan::run)) is a `Run<T>`: its
/// outcome is the value read into `T`, or [`RunError::OutcomeType`] (which
/// holds the plan's value as it came) when it does not fit.
#[derive(Clone, Debug, PartialEq)]
pub struct Run<T = Value> {
    /// The plan's value, or the run-time error of the plan itself that
    /// stopped it. The calls made before an error are in the trace.
    pub outcome: Result<T, RunError>,
    /// The calls, in the order they were made.
    pub trace: Vec<TracedCall>,
}

impl Run {
    /// The run with its value read into `T`, as [`Interpreter::run_as`]
    /// reads it ([`RunError::OutcomeType`], holding the value, when it does
    /// not fit), but with no check before the run: for a run already made,
    /// such as a [`Prepared`] plan's (check it once with
    /// [`Preview::check_returns`]) or one an agent recorded.
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::effect::EffectSet;
    /// use typed_tools::plan::check::Returns;
    /// use typed_tools::plan::{Interpreter, Plan, Preview};
    /// use typed_tools::{tool, Toolbox};
    ///
    /// /// Take the next ticket number.
    /// #[tool(effects = Write)]
    /// fn next_ticket() -> u32 { 7 }
    ///
    /// let toolbox = Toolbox::builder().tool(NextTicket).build().unwrap();
    /// let plan = Plan::parse("match exec tool next_ticket {} { Ok(n) => [n], Err(e) => [] }").unwrap();
    /// Preview::check_returns(&plan, &toolbox, EffectSet::ALL, &Returns::of::<Vec<u32>>()).unwrap();
    /// let interpreter = Interpreter::new(&toolbox);
    /// let prepared = interpreter.prepare(&plan).unwrap();
    /// let run = prepared.run().await.into_typed::<Vec<u32>>();
    /// assert_eq!(run.outcome, Ok(vec![7]));
    /// # });
    /// ```
    pub fn into_typed<T: DeserializeOwned + JsonSchema>(self) -> Run<T> {
        let expected = Returns::of::<T>().short();
        self.read_into(&expected)
    }

    /// The run with its value read into `T` (`expected` names `T` in the
    /// error): [`RunError::OutcomeType`] when it does not fit.
    pub(crate) fn read_into<T: DeserializeOwned>(self, expected: &str) -> Run<T> {
        let outcome = self.outcome.and_then(|value| {
            let read = match value.to_json() {
                Some(json) => T::deserialize(json).map_err(|error| error.to_string()),
                None => Err("it holds a number that is not finite, which JSON cannot write".into()),
            };
            read.map_err(|error| RunError::OutcomeType {
                expected: expected.to_owned(),
                error,
                value,
            })
        });
        Run {
            outcome,
            trace: self.trace,
        }
    }
}

/// One call a plan made (or that the approval hook refused): the tool, its
/// arguments and what came back, both as the plan's values, and how long it
/// took.
///
/// ```
/// # futures::executor::block_on(async {
/// use typed_tools::{tool, Toolbox};
/// use typed_tools::plan::{CallResult, Interpreter, Plan, Value};
///
/// /// Get one note by its id.
/// #[tool(effects = Read)]
/// fn get_note(id: u32) -> String { format!("note {id}") }
///
/// let toolbox = Toolbox::builder().tool(GetNote).build().unwrap();
/// let plan = Plan::parse("match exec tool get_note {id = 7} { Ok(text) => text, Err(e) => e.message }").unwrap();
/// let run = Interpreter::new(&toolbox).run(&plan).await.unwrap();
/// let call = &run.trace[0];
/// assert_eq!(call.tool(), "get_note");
/// assert_eq!(call.args().to_string(), "{id = 7}");
/// // The text the tool was given:
/// assert_eq!(call.args().to_json_text().unwrap(), r#"{"id":7}"#);
/// assert_eq!(*call.result(), CallResult::Ok(Value::String("note 7".into())));
/// # });
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct TracedCall {
    tool: ToolName,
    args: Value,
    result: CallResult,
    duration: Option<Duration>,
}

impl TracedCall {
    /// The tool's name.
    pub fn tool(&self) -> &str {
        self.tool.as_str()
    }

    /// The arguments: the plan's value, whose
    /// [`to_json_text`](Value::to_json_text) is the text the tool was given.
    pub fn args(&self) -> &Value {
        &self.args
    }

    /// What came back.
    pub fn result(&self) -> &CallResult {
        &self.result
    }

    /// How long the call took, when the interpreter times calls
    /// ([`Interpreter::time_calls`]; zero for a refused call, which did not
    /// run), and `None` when it does not.
    pub fn duration(&self) -> Option<Duration> {
        self.duration
    }
}

/// A traced call's tool name: a typed tool's, which lives as long as the
/// program, is kept as it is (no count to update for each call), any other
/// is shared.
#[derive(Clone, Debug)]
enum ToolName {
    Static(&'static str),
    Shared(Arc<str>),
}

impl ToolName {
    fn as_str(&self) -> &str {
        match self {
            ToolName::Static(name) => name,
            ToolName::Shared(name) => name,
        }
    }
}

impl PartialEq for ToolName {
    fn eq(&self, other: &ToolName) -> bool {
        self.as_str() == other.as_str()
    }
}

/// What one call gave.
#[derive(Clone, Debug, PartialEq)]
pub enum CallResult {
    /// The tool's output, as the plan read it: held to the output type the
    /// check gave the tool (see [`Interpreter`]).
    Ok(Value),
    /// The tool's error, or the toolbox's (bad arguments, ...), or an
    /// output that does not fit the tool's output type.
    Err(ToolError),
    /// The approval hook refused the call, which did not run.
    Refused(String),
}

impl<A: Effects, C: ToolboxContext> fmt::Debug for Interpreter<'_, A, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Interpreter")
            .field("toolbox", self.toolbox)
            .field("allowed", &self.allowed)
            .field("approval", &self.approval)
            .field("limits", &self.limits)
            .field("time_calls", &self.time_calls)
            .finish()
    }
}

impl<'t, A: Effects, C: ToolboxContext> Interpreter<'t, A, C> {
    /// An interpreter over `toolbox`, allowing what the toolbox allows, with
    /// no approval hook and the default [`Limits`].
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::{tool, Toolbox};
    /// use typed_tools::plan::{Interpreter, Plan, Value};
    ///
    /// /// Get one note by its id.
    /// #[tool(effects = Read)]
    /// fn get_note(id: u32) -> Result<String, String> { Ok(format!("note {id}")) }
    /// /// Delete a note by its id.
    /// #[tool(effects = Write)]
    /// fn delete_note(id: u32) -> bool { id > 0 }
    ///
    /// let toolbox = Toolbox::builder().tool(GetNote).tool(DeleteNote).build().unwrap();
    /// let plan = Plan::parse("match exec tool delete_note {id = 3} { Ok(gone) => gone, Err(e) => false }").unwrap();
    /// let run = Interpreter::new(&toolbox).run(&plan).await.unwrap();
    /// assert_eq!(run.outcome, Ok(Value::Bool(true)));
    /// # });
    /// ```
    ///
    /// Over a toolbox whose tools take a [context](crate::toolbox::context),
    /// each run is given one: [`run_in`](Self::run_in).
    pub fn new(toolbox: &'t Toolbox<A, C>) -> Self {
        Interpreter {
            toolbox,
            allowed: toolbox.allowed(),
            approval: None,
            limits: Limits::new(),
            time_calls: false,
        }
    }

    /// Runs plans within `limits` instead of the defaults.
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::{tool, Toolbox};
    /// use typed_tools::plan::{Interpreter, Limit, Limits, Plan, RunError};
    ///
    /// /// Add one.
    /// #[tool(effects = Pure)]
    /// fn inc(n: i64) -> i64 { n + 1 }
    ///
    /// let toolbox = Toolbox::builder().tool(Inc).build().unwrap();
    /// let plan = Plan::parse("match traverse (fn x => exec tool inc {n = x}) [1, 2, 3] {
    ///   Ok(all) => all,
    ///   Err(e) => []
    /// }").unwrap();
    /// let run = Interpreter::new(&toolbox).limits(Limits::new().calls(2)).run(&plan).await.unwrap();
    /// assert_eq!(run.outcome, Err(RunError::LimitExceeded { limit: Limit::Calls(2) }));
    /// assert_eq!(run.trace.len(), 2); // the third call did not run
    /// # });
    /// ```
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Measures how long each call takes, for its place in the trace
    /// ([`TracedCall::duration`]). Off by default: reading the clock twice
    /// a call costs more than the interpreter's own work on a call of a
    /// fast tool (a `tracing` subscriber sees each call's duration in its
    /// `tool_call` span either way). The wall-time limit is checked either
    /// way, by one look at the clock after each call.
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::{tool, Toolbox};
    /// use typed_tools::plan::{Interpreter, Plan};
    ///
    /// /// Get one note by its id.
    /// #[tool(effects = Read)]
    /// fn get_note(id: u32) -> String { format!("note {id}") }
    ///
    /// let toolbox = Toolbox::builder().tool(GetNote).build().unwrap();
    /// let plan = Plan::parse("match exec tool get_note {id = 7} { Ok(text) => text, Err(e) => e.message }").unwrap();
    /// let untimed = Interpreter::new(&toolbox).run(&plan).await.unwrap();
    /// assert_eq!(untimed.trace[0].duration(), None);
    /// let timed = Interpreter::new(&toolbox).time_calls(true).run(&plan).await.unwrap();
    /// assert!(timed.trace[0].duration().is_some());
    /// # });
    /// ```
    pub fn time_calls(mut self, yes: bool) -> Self {
        self.time_calls = yes;
        self
    }

    /// Allows only `allowed`, within what is allowed already (as
    /// [`Toolbox::restrict`] does): each call narrows, none widens. A plan
    /// calling a tool outside it is refused before anything runs, in the
    /// words a direct call gets ([`PlanError::EffectViolation`]).
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::effect::EffectSet;
    /// use typed_tools::{tool, Toolbox};
    /// use typed_tools::plan::{Interpreter, Plan, Value};
    ///
    /// /// Get one note by its id.
    /// #[tool(effects = Read)]
    /// fn get_note(id: u32) -> Result<String, String> { Ok(format!("note {id}")) }
    /// /// Delete a note by its id.
    /// #[tool(effects = Write)]
    /// fn delete_note(id: u32) -> bool { id > 0 }
    ///
    /// let toolbox = Toolbox::builder().tool(GetNote).tool(DeleteNote).build().unwrap();
    /// let plan = Plan::parse("match exec tool delete_note {id = 3} { Ok(gone) => gone, Err(e) => false }").unwrap();
    /// let read_only = Interpreter::new(&toolbox).restrict(EffectSet::READ);
    /// let refused = read_only.run(&plan).await.unwrap_err();
    /// assert_eq!(
    ///     refused.to_string(),
    ///     "effect violation: tool `delete_note` has effects {Write}, but only {Read} are allowed here"
    /// );
    /// # });
    /// ```
    pub fn restrict(mut self, allowed: EffectSet) -> Self {
        self.allowed = self.allowed.intersection(allowed);
        self
    }

    /// Asks `hook` before each call of a tool with the `Write` effect, shown
    /// exactly the arguments the tool will run with (after any repair or
    /// coercion the toolbox's policy makes). A [`Decision::Refuse`] does
    /// not run the call; its reason becomes the call's error, for the
    /// plan's `Err` branch (kind `"refused"`). The same as
    /// [`approval`](Self::approval)`(Approval::new(hook))`.
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::{tool, Toolbox};
    /// use typed_tools::plan::{CallResult, Decision, Interpreter, Plan, Value};
    ///
    /// /// Refund an amount.
    /// #[tool(effects = Write)]
    /// fn issue_refund(account_id: String, amount: i64) -> String { "tx_1".into() }
    ///
    /// let toolbox = Toolbox::builder().tool(IssueRefund).build().unwrap();
    /// let plan = Plan::parse(r#"match exec tool issue_refund {account_id = "a", amount = 5000} {
    ///   Ok(tx) => tx,
    ///   Err(e) => "not refunded: " ++ e.message
    /// }"#).unwrap();
    /// let interpreter = Interpreter::new(&toolbox).approve_writes(|request| {
    ///     if request.args["amount"].as_i64() > Some(1000) {
    ///         Decision::Refuse("over 1000 cents needs a human".into())
    ///     } else {
    ///         Decision::Approve
    ///     }
    /// });
    /// let run = interpreter.run(&plan).await.unwrap();
    /// assert_eq!(run.outcome, Ok(Value::String("not refunded: over 1000 cents needs a human".into())));
    /// assert!(matches!(run.trace[0].result(), CallResult::Refused(_)));
    /// # });
    /// ```
    pub fn approve_writes(
        self,
        hook: impl Fn(&ApprovalRequest) -> Decision + Send + Sync + 't,
    ) -> Self {
        self.approve_with(Approval::new(hook).into_hook())
    }

    /// Asks `approval` before each call of a tool it asks about, after any
    /// approval the toolbox view asks already ([`Toolbox::approve`]); the
    /// toolbox's dispatch asks it, as it asks its own, so that what is
    /// approved is what runs. A refusal is the call's error, for the plan's
    /// `Err` branch (kind `"refused"`); in the trace it is
    /// [`CallResult::Refused`]. A later call replaces an earlier one.
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::{tool, Toolbox};
    /// use typed_tools::plan::{Interpreter, Plan, Value};
    /// use typed_tools::toolbox::{Approval, Decision};
    ///
    /// /// Fetch a page.
    /// #[tool(effects = Network)]
    /// fn fetch(url: String) -> String { url }
    ///
    /// let toolbox = Toolbox::builder().tool(Fetch).build().unwrap();
    /// let plan = Plan::parse(r#"match exec tool fetch {url = "http://intranet/"} {
    ///   Ok(page) => page,
    ///   Err(e) => e.kind ++ ": " ++ e.message
    /// }"#).unwrap();
    /// // Not a Write tool: asked about by name.
    /// let approval = Approval::new(|request| match request.args["url"].as_str() {
    ///     Some(url) if url.starts_with("https://") => Decision::Approve,
    ///     _ => Decision::Refuse("only https".into()),
    /// })
    /// .tools(["fetch"]);
    /// let run = Interpreter::new(&toolbox).approval(approval).run(&plan).await.unwrap();
    /// assert_eq!(run.outcome, Ok(Value::String("refused: only https".into())));
    /// # });
    /// ```
    ///
    /// An approval made by [`Approval::with_context`] is given each run's
    /// context, and needs a toolbox that gives that context.
    pub fn approval<N, M>(self, approval: Approval<'t, N>) -> Self
    where
        C: AdmitsApproval<N, M>,
    {
        self.approve_with(approval.into_hook())
    }

    /// [`approval`](Self::approval), its context type checked.
    fn approve_with(mut self, approval: Hook<'t>) -> Self {
        self.approval = Some(approval);
        self
    }

    /// Like [`approve_writes`](Self::approve_writes), with a hook that
    /// answers later: a human in the loop, a policy service. The plan waits
    /// for the answer; nothing else runs meanwhile. The wait counts as the
    /// call's time: an answer that does not come within
    /// [`Limits::per_call`] (or the run's wall time) stops the call, which
    /// did not run ([`ToolError::TimedOut`], kind `timed_out` in the `Err`
    /// branch).
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use futures::channel::{mpsc, oneshot};
    /// use futures::{SinkExt, StreamExt};
    /// use typed_tools::{tool, Toolbox};
    /// use typed_tools::plan::{ApprovalRequest, Decision, Interpreter, Plan, Value};
    ///
    /// /// Refund an amount.
    /// #[tool(effects = Write)]
    /// fn issue_refund(account_id: String, amount: i64) -> String { "tx_1".into() }
    ///
    /// let toolbox = Toolbox::builder().tool(IssueRefund).build().unwrap();
    /// let plan = Plan::parse(r#"match exec tool issue_refund {account_id = "a", amount = 5000} {
    ///   Ok(tx) => tx,
    ///   Err(e) => "not refunded: " ++ e.message
    /// }"#).unwrap();
    ///
    /// // Each request goes to a reviewer, with a channel for the answer.
    /// let (to_reviewer, mut inbox) = mpsc::channel::<(ApprovalRequest, oneshot::Sender<Decision>)>(1);
    /// let interpreter = Interpreter::new(&toolbox).approve_writes_async(move |request| {
    ///     let mut to_reviewer = to_reviewer.clone();
    ///     async move {
    ///         let (answer, decision) = oneshot::channel();
    ///         if to_reviewer.send((request, answer)).await.is_err() {
    ///             return Decision::Refuse("no reviewer".into());
    ///         }
    ///         decision.await.unwrap_or(Decision::Refuse("no answer".into()))
    ///     }
    /// });
    /// let reviewer = async {
    ///     while let Some((request, answer)) = inbox.next().await {
    ///         let _ = answer.send(if request.args["amount"].as_i64() > Some(1000) {
    ///             Decision::Refuse("over 1000 cents".into())
    ///         } else {
    ///             Decision::Approve
    ///         });
    ///     }
    /// };
    /// let run = futures::future::select(Box::pin(interpreter.run(&plan)), Box::pin(reviewer)).await;
    /// let futures::future::Either::Left((run, _)) = run else { unreachable!() };
    /// assert_eq!(run.unwrap().outcome, Ok(Value::String("not refunded: over 1000 cents".into())));
    /// # });
    /// ```
    pub fn approve_writes_async<F>(
        self,
        hook: impl Fn(ApprovalRequest) -> F + Send + Sync + 't,
    ) -> Self
    where
        F: Future<Output = Decision> + Send + 't,
    {
        self.approve_with(Approval::new_async(hook).into_hook())
    }

    /// Checks and previews a plan without running it; see [`Preview::check`].
    ///
    /// ```
    /// use typed_tools::{tool, Toolbox};
    /// use typed_tools::plan::{Interpreter, Plan, Value};
    ///
    /// /// Get one note by its id.
    /// #[tool(effects = Read)]
    /// fn get_note(id: u32) -> Result<String, String> { Ok(format!("note {id}")) }
    /// /// Delete a note by its id.
    /// #[tool(effects = Write)]
    /// fn delete_note(id: u32) -> bool { id > 0 }
    ///
    /// let toolbox = Toolbox::builder().tool(GetNote).tool(DeleteNote).build().unwrap();
    /// let plan = Plan::parse("match exec tool delete_note {id = 3} { Ok(gone) => gone, Err(e) => false }").unwrap();
    /// let preview = Interpreter::new(&toolbox).preview(&plan).unwrap();
    /// assert_eq!(preview.to_string(), "delete_note {Write}: at most once\n");
    /// ```
    pub fn preview(&self, plan: &Plan) -> Result<Preview, PlanError> {
        Preview::check(plan, self.toolbox, self.allowed)
    }

    /// Checks the plan, then runs it. `Err` means it was refused and nothing
    /// ran; a run-time error of the plan is in [`Run::outcome`].
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::{tool, Toolbox};
    /// use typed_tools::plan::{Interpreter, Plan, Value};
    ///
    /// /// Get one note by its id.
    /// #[tool(effects = Read)]
    /// fn get_note(id: u32) -> Result<String, String> { Ok(format!("note {id}")) }
    /// /// Delete a note by its id.
    /// #[tool(effects = Write)]
    /// fn delete_note(id: u32) -> bool { id > 0 }
    ///
    /// let toolbox = Toolbox::builder().tool(GetNote).tool(DeleteNote).build().unwrap();
    /// let plan = Plan::parse("match exec tool get_note {id = 7} { Ok(text) => text, Err(e) => e.message }").unwrap();
    /// let run = Interpreter::new(&toolbox).run(&plan).await.unwrap();
    /// assert_eq!(run.outcome, Ok(Value::String("note 7".into())));
    /// // A plan that does not type-check is refused; nothing runs.
    /// let wrong = Plan::parse(r#"match exec tool get_note {id = "seven"} { Ok(t) => t, Err(e) => e.message }"#).unwrap();
    /// assert!(Interpreter::new(&toolbox).run(&wrong).await.is_err());
    /// # });
    /// ```
    ///
    /// Over a toolbox whose tools take a [context](crate::toolbox::context),
    /// a run is given one with [`run_in`](Self::run_in); `run` does not
    /// compile there.
    ///
    /// (A boxed future, not an `async fn`: the opaque future of an `async
    /// fn` repeats the fn's bounds, and a missing context was reported
    /// three times, at the call, the future and its `.await`. The check of
    /// the plan costs more than the box.)
    pub fn run<'a>(&'a self, plan: &'a Plan) -> BoxFuture<'a, Result<Run, PlanError>>
    where
        C::Value: PlanWithoutContext,
    {
        self.run_checked(
            <C::Value as PlanWithoutContext>::nothing(),
            plan,
            true,
            None,
        )
        .boxed()
    }

    /// Checks the plan, then runs it as [`run`](Self::run) does, each call
    /// lent `context`: the run's [context](crate::toolbox::context), of the
    /// type the toolbox was built with. The interpreter holds no context,
    /// so runs made at once with different contexts each see their own.
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::{tool, Toolbox};
    /// use typed_tools::plan::{Interpreter, Plan, Value};
    ///
    /// /// Who is calling.
    /// struct Caller { name: String }
    ///
    /// /// The caller's name.
    /// #[tool(effects = Read)]
    /// fn whoami(#[context] caller: &Caller) -> String { caller.name.clone() }
    ///
    /// let toolbox = Toolbox::builder().context::<Caller>().tool(Whoami).build().unwrap();
    /// let interpreter = Interpreter::new(&toolbox);
    /// let plan = Plan::parse(r#"match exec tool whoami {} { Ok(name) => "hello " ++ name, Err(e) => e.message }"#).unwrap();
    /// let ana = Caller { name: "ana".into() };
    /// let run = interpreter.run_in(&ana, &plan).await.unwrap();
    /// assert_eq!(run.outcome, Ok(Value::String("hello ana".into())));
    /// # });
    /// ```
    pub async fn run_in<X>(&self, context: &X, plan: &Plan) -> Result<Run, PlanError>
    where
        C: Takes<X>,
    {
        self.run_checked(C::value(context), plan, true, None).await
    }

    /// Checks the plan, also that it gives a `T` ([`Preview::check_returns`]:
    /// its type is compared with `T`'s schema, and a plan that would give
    /// another type is refused, nothing run), then runs it and reads its
    /// value into `T`. `Err` means it was refused and nothing ran; a
    /// run-time error of the plan, or a value that does not fit `T` after
    /// all (a number out of `T`'s range, a string not among an enum's, a
    /// part whose type the check could not know), is in [`Run::outcome`]
    /// ([`RunError::OutcomeType`], holding the value as it came).
    ///
    /// For a plan a model wrote for a task that needs a Rust value:
    /// [`Author::returning`](super::Author::returning) asks the model for a
    /// plan of that type and sends it back until one checks.
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::plan::{Interpreter, Plan, PlanError, RunError, Value};
    /// use typed_tools::plan::check::TypeErrorKind;
    /// use typed_tools::{tool, Toolbox};
    ///
    /// #[derive(Debug, PartialEq, serde::Deserialize, schemars::JsonSchema)]
    /// struct Stock { item: String, count: u32 }
    ///
    /// /// How many of an item are in stock.
    /// #[tool(effects = Read)]
    /// fn count_stock(item: String) -> Result<u32, String> { Ok(item.len() as u32) }
    ///
    /// let toolbox = Toolbox::builder().tool(CountStock).build().unwrap();
    /// let interpreter = Interpreter::new(&toolbox);
    /// let plan = Plan::parse(r#"match exec tool count_stock {item = "tea"} {
    ///   Ok(n) => {item = "tea", count = n},
    ///   Err(e) => {item = "tea", count = 0}
    /// }"#).unwrap();
    /// let run = interpreter.run_as::<Stock>(&plan).await.unwrap();
    /// assert_eq!(run.outcome, Ok(Stock { item: "tea".into(), count: 3 }));
    ///
    /// // A plan that gives another type is refused before anything runs.
    /// let count = Plan::parse(r#"match exec tool count_stock {item = "tea"} { Ok(n) => n, Err(e) => 0 }"#).unwrap();
    /// let Err(PlanError::TypeErrors(errors)) = interpreter.run_as::<Stock>(&count).await else { panic!() };
    /// assert_eq!(errors[0].kind, TypeErrorKind::Returns);
    /// assert!(errors[0].message.starts_with("the plan gives Int; the task needs a Stock: {item: String, count: Int}"));
    ///
    /// // Ranges are not types: 300 checks as a `u8`, and does not fit it.
    /// let big = Plan::parse("300").unwrap();
    /// let Err(RunError::OutcomeType { expected, value, .. }) = interpreter.run_as::<u8>(&big).await.unwrap().outcome
    /// else { panic!() };
    /// assert_eq!((expected.as_str(), value), ("Int", Value::Int(300)));
    /// # });
    /// ```
    ///
    /// Over a toolbox whose tools take a [context](crate::toolbox::context),
    /// a run is given one with [`run_as_in`](Self::run_as_in).
    pub async fn run_as<T: DeserializeOwned + JsonSchema>(
        &self,
        plan: &Plan,
    ) -> Result<Run<T>, PlanError>
    where
        C::Value: PlanWithoutContext,
    {
        self.run_as_given(<C::Value as PlanWithoutContext>::nothing(), plan)
            .await
    }

    /// [`run_as`](Self::run_as), each call lent `context`, as
    /// [`run_in`](Self::run_in) does.
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::plan::{Interpreter, Plan};
    /// use typed_tools::{tool, Toolbox};
    ///
    /// /// Who is calling.
    /// struct Caller { name: String }
    ///
    /// /// The caller's name.
    /// #[tool(effects = Read)]
    /// fn whoami(#[context] caller: &Caller) -> String { caller.name.clone() }
    ///
    /// let toolbox = Toolbox::builder().context::<Caller>().tool(Whoami).build().unwrap();
    /// let plan = Plan::parse("match exec tool whoami {} { Ok(name) => name, Err(e) => e.message }").unwrap();
    /// let ana = Caller { name: "ana".into() };
    /// let run = Interpreter::new(&toolbox).run_as_in::<String, _>(&ana, &plan).await.unwrap();
    /// assert_eq!(run.outcome, Ok("ana".to_owned()));
    /// # });
    /// ```
    pub async fn run_as_in<T: DeserializeOwned + JsonSchema, X>(
        &self,
        context: &X,
        plan: &Plan,
    ) -> Result<Run<T>, PlanError>
    where
        C: Takes<X>,
    {
        self.run_as_given(C::value(context), plan).await
    }

    /// A run read into `T`, each call lent `context`.
    async fn run_as_given<T: DeserializeOwned + JsonSchema>(
        &self,
        context: &C::Value,
        plan: &Plan,
    ) -> Result<Run<T>, PlanError> {
        let returns = Returns::of::<T>();
        let run = self
            .prepare_with(plan, true, Some(&returns))?
            .run_given(context)
            .await;
        Ok(run.read_into(&returns.short()))
    }

    /// [`run`](Self::run) without the type check (every other check before
    /// a run is made): for tests of the interpreter's own run-time checks,
    /// which a checked plan never meets. Not API.
    #[doc(hidden)]
    pub async fn __run_without_type_check(&self, plan: &Plan) -> Result<Run, PlanError>
    where
        C::Value: PlanWithoutContext,
    {
        self.run_checked(
            <C::Value as PlanWithoutContext>::nothing(),
            plan,
            false,
            None,
        )
        .await
    }

    /// Checks a plan once, for any number of runs: [`run`](Self::run)
    /// checks the plan each time, a [`Prepared`] plan runs without checking
    /// it again. A plan is immutable, and so are the toolbox and the
    /// interpreter the prepared plan borrows, so the check holds for every
    /// run. `Err` means the plan was refused, as [`run`](Self::run) would
    /// refuse it.
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::{tool, Toolbox};
    /// use typed_tools::plan::{Interpreter, Plan, Value};
    ///
    /// /// Get one note by its id.
    /// #[tool(effects = Read)]
    /// fn get_note(id: u32) -> Result<String, String> { Ok(format!("note {id}")) }
    ///
    /// let toolbox = Toolbox::builder().tool(GetNote).build().unwrap();
    /// let interpreter = Interpreter::new(&toolbox);
    /// let plan = Plan::parse("match exec tool get_note {id = 7} { Ok(text) => text, Err(e) => e.message }").unwrap();
    /// let prepared = interpreter.prepare(&plan).unwrap();
    /// assert_eq!(prepared.preview().to_string(), "get_note {Read}: at most once\n");
    /// for _ in 0..3 {
    ///     assert_eq!(prepared.run().await.outcome, Ok(Value::String("note 7".into())));
    /// }
    /// # });
    /// ```
    pub fn prepare<'i, 'p>(
        &'i self,
        plan: &'p Plan,
    ) -> Result<Prepared<'i, 'p, 't, A, C>, PlanError> {
        let mut prepared = self.prepare_with(plan, true, None)?;
        prepared.constants = fold(&prepared);
        Ok(prepared)
    }

    fn prepare_with<'i, 'p>(
        &'i self,
        plan: &'p Plan,
        types: bool,
        returns: Option<&Returns>,
    ) -> Result<Prepared<'i, 'p, 't, A, C>, PlanError> {
        let (preview, index, outputs) =
            Preview::check_indexed(plan, self.toolbox, self.allowed, types, returns)?;
        let tools = outputs
            .into_iter()
            .map(|(name, ty)| {
                let held = match self.toolbox.spec(name).map(ToolSpec::held_name) {
                    Some(Cow::Borrowed(name)) => ToolName::Static(name),
                    _ => ToolName::Shared(Arc::from(name)),
                };
                (name, (held, ty))
            })
            .collect();
        Ok(Prepared {
            interpreter: self,
            plan,
            preview,
            index,
            tools,
            constants: Vec::new(),
        })
    }

    /// The toolbox the interpreter runs plans against.
    pub(crate) fn toolbox(&self) -> &'t Toolbox<A, C> {
        self.toolbox
    }

    pub(crate) async fn run_checked(
        &self,
        context: &C::Value,
        plan: &Plan,
        types: bool,
        hook: Option<&dyn CallHook>,
    ) -> Result<Run, PlanError> {
        Ok(self
            .prepare_with(plan, types, None)?
            .run_hooked(context, hook)
            .await)
    }
}

/// A plan checked by an interpreter, to run any number of times without
/// checking it again: see [`Interpreter::prepare`]. It borrows the plan
/// and the interpreter (so the toolbox, the allowed effects, the approval
/// and the limits it was checked under are the ones it runs under).
pub struct Prepared<'i, 'p, 't, A: Effects = ReadWriteNetwork, C: ToolboxContext = NoContext> {
    interpreter: &'i Interpreter<'t, A, C>,
    plan: &'p Plan,
    preview: Preview,
    index: Index,
    /// Each tool the plan names (when it was type-checked): its name, made
    /// once for every trace, and the output type its outputs are held to.
    tools: Tools<'p>,
    /// The values of the plan's constant expressions, by node id (see
    /// [`fold`]); empty when nothing was folded.
    constants: Vec<Option<Value>>,
}

/// The tools a checked plan names, by name: the name as the trace keeps it,
/// and the output type the check gave the tool.
type Tools<'p> = HashMap<&'p str, (ToolName, Ty), BuildHasherDefault<Fnv>>;

impl<A: Effects, C: ToolboxContext> fmt::Debug for Prepared<'_, '_, '_, A, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Prepared")
            .field("plan", self.plan)
            .field("preview", &self.preview)
            .finish_non_exhaustive()
    }
}

impl<A: Effects, C: ToolboxContext> Prepared<'_, '_, '_, A, C> {
    /// What the plan may call, with which effects, how many times: the
    /// preview made by its check.
    ///
    /// ```
    /// use typed_tools::{tool, Toolbox};
    /// use typed_tools::plan::{Interpreter, Plan};
    ///
    /// /// Delete a note by its id.
    /// #[tool(effects = Write)]
    /// fn delete_note(id: u32) -> bool { id > 0 }
    ///
    /// let toolbox = Toolbox::builder().tool(DeleteNote).build().unwrap();
    /// let interpreter = Interpreter::new(&toolbox);
    /// let plan = Plan::parse("match exec tool delete_note {id = 3} { Ok(gone) => gone, Err(e) => false }").unwrap();
    /// let prepared = interpreter.prepare(&plan).unwrap();
    /// assert_eq!(prepared.preview().to_string(), "delete_note {Write}: at most once\n");
    /// ```
    pub fn preview(&self) -> &Preview {
        &self.preview
    }

    /// Runs the plan, as [`Interpreter::run`] would after its check: under
    /// the interpreter's approval and limits, each run from the start with
    /// a trace of its own.
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use std::sync::atomic::{AtomicU32, Ordering};
    /// use typed_tools::{tool, Toolbox};
    /// use typed_tools::plan::{Interpreter, Plan, Value};
    ///
    /// static NEXT: AtomicU32 = AtomicU32::new(1);
    ///
    /// /// Take the next ticket number.
    /// #[tool(effects = Write)]
    /// fn next_ticket() -> u32 { NEXT.fetch_add(1, Ordering::SeqCst) }
    ///
    /// let toolbox = Toolbox::builder().tool(NextTicket).build().unwrap();
    /// let interpreter = Interpreter::new(&toolbox);
    /// let plan = Plan::parse("match exec tool next_ticket {} { Ok(n) => n, Err(e) => 0 }").unwrap();
    /// let prepared = interpreter.prepare(&plan).unwrap();
    /// assert_eq!(prepared.run().await.outcome, Ok(Value::Int(1)));
    /// let second = prepared.run().await;
    /// assert_eq!(second.outcome, Ok(Value::Int(2)));
    /// assert_eq!(second.trace.len(), 1);
    /// # });
    /// ```
    ///
    /// Over a toolbox whose tools take a [context](crate::toolbox::context),
    /// each run is given one: [`run_in`](Self::run_in).
    pub async fn run(&self) -> Run
    where
        C::Value: PlanWithoutContext,
    {
        self.run_given(<C::Value as PlanWithoutContext>::nothing())
            .await
    }

    /// Runs the plan as [`run`](Self::run) does, each call lent `context`
    /// (see [`Interpreter::run_in`]): one check, any number of runs, each
    /// with the context of its own caller.
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::{tool, Toolbox};
    /// use typed_tools::plan::{Interpreter, Plan, Value};
    ///
    /// /// Who is calling.
    /// struct Caller { name: String }
    ///
    /// /// The caller's name.
    /// #[tool(effects = Read)]
    /// fn whoami(#[context] caller: &Caller) -> String { caller.name.clone() }
    ///
    /// let toolbox = Toolbox::builder().context::<Caller>().tool(Whoami).build().unwrap();
    /// let interpreter = Interpreter::new(&toolbox);
    /// let plan = Plan::parse("match exec tool whoami {} { Ok(name) => name, Err(e) => e.message }").unwrap();
    /// let prepared = interpreter.prepare(&plan).unwrap();
    /// for name in ["ana", "bob"] {
    ///     let run = prepared.run_in(&Caller { name: name.into() }).await;
    ///     assert_eq!(run.outcome, Ok(Value::String(name.into())));
    /// }
    /// # });
    /// ```
    pub async fn run_in<X>(&self, context: &X) -> Run
    where
        C: Takes<X>,
    {
        self.run_given(C::value(context)).await
    }

    /// A run, each call lent `context`.
    async fn run_given(&self, context: &C::Value) -> Run {
        self.run_hooked(context, None).await
    }

    /// [`run`](Self::run), each call lent `context` and passed through
    /// `hook` first: a [durable](crate::durable) run's journal, which
    /// records the call before it runs and its result after, replays a
    /// recorded result instead of running the call, or stops the run.
    pub(crate) async fn run_hooked(&self, context: &C::Value, hook: Option<&dyn CallHook>) -> Run {
        let plan = self.plan;
        // Room for every call, when the plan shows how many it can make (a
        // bounded guess: a `traverse` over a long literal list may stop early).
        let room = match self.preview.calls_in_all() {
            Runs::AtMost(n) => usize::try_from(n.min(1024)).unwrap_or(0),
            Runs::PerElement => 0,
        };
        let mut machine = Machine::new(self, Vec::with_capacity(room), Some(context));
        machine.hook = hook;
        let span = tracing::info_span!(
            "plan_run",
            tools = self.preview.calls.len(),
            effects = %self.preview.effects,
            calls = tracing::field::Empty,
            outcome = tracing::field::Empty,
        );
        // The plan's body is the walk's first node.
        let outcome =
            tracing::Instrument::instrument(machine.value(&plan.body, 0), span.clone()).await;
        if !span.is_disabled() {
            span.record("calls", machine.trace.len());
            match &outcome {
                Ok(_) => span.record("outcome", "ok"),
                Err(error) => span.record("outcome", tracing::field::display(error)),
            };
        }
        Run {
            outcome,
            trace: machine.trace,
        }
    }
}

/// The state of one run of a plan borrowed for `'p`.
struct Machine<'p, 'r, 't, A: Effects, C: ToolboxContext> {
    interpreter: &'r Interpreter<'t, A, C>,
    /// The run's context, lent to each call; `None` for the machine that
    /// folds constants ([`fold`]), which calls no tool.
    context: Option<&'p C::Value>,
    /// Bound variables, innermost last; the names are the plan's.
    env: Vec<(&'p str, Bound)>,
    /// The lists being walked (by `map`, `filter`, `fold`, `traverse`),
    /// innermost last: a variable bound to an element is its place here,
    /// so that binding one copies nothing.
    lists: Vec<List>,
    trace: Vec<TracedCall>,
    /// Which of the plan's nodes call a tool, by id (each expression below
    /// is evaluated with its id): the others are evaluated without a future.
    index: &'p Index,
    /// The output type the check gave each tool, which each output is held
    /// to ([`output::read_output`]), and its name for the trace; empty for a
    /// run without the type check.
    tools: &'p Tools<'p>,
    /// The values of the children of the expressions [`eval`](Self::eval)
    /// is combining, until [`combine`] takes them. A run-time error ends the
    /// run, so one that leaves values here does no harm (and later ones go
    /// on top).
    operands: Vec<Value>,
    /// What the run has consumed, against the interpreter's limits.
    meter: Meter,
    /// The record field names made so far.
    names: Names,
    /// The JSON text of the arguments of the call being made, written
    /// again for each call.
    text: String,
    /// The plan's constant expressions' values, by node id.
    constants: &'p [Option<Value>],
    /// A durable run's journal, asked about each call.
    hook: Option<&'p dyn CallHook>,
}

impl<'p, 'r, 't, A: Effects, C: ToolboxContext> Machine<'p, 'r, 't, A, C> {
    /// A machine for one run of `prepared`, from the start, lent `context`.
    fn new(
        prepared: &'p Prepared<'r, 'p, 't, A, C>,
        trace: Vec<TracedCall>,
        context: Option<&'p C::Value>,
    ) -> Self {
        let interpreter = prepared.interpreter;
        Machine {
            interpreter,
            context,
            env: Vec::new(),
            lists: Vec::new(),
            trace,
            index: &prepared.index,
            tools: &prepared.tools,
            operands: Vec::new(),
            meter: Meter::new(interpreter.limits),
            names: Names::default(),
            text: String::new(),
            constants: &prepared.constants,
            hook: None,
        }
    }
}

/// The values of `prepared`'s constant expressions, by node id: each largest
/// expression that calls no tool and reads no variable, and is more than a
/// number or a Bool (a string, a list, a record, an operation), evaluated
/// once, so that each run shares the value instead of building it again (a
/// `traverse` over a literal list, a literal record of arguments). An
/// expression whose evaluation fails (a limit, `1 / 0`) is not folded: it
/// fails when a run reaches it, as it would have. Only values the
/// interpreter reaches by node id are looked up: a step's argument, a
/// branch, a combinator's list or callback body, a `let`'s value.
fn fold<A: Effects, C: ToolboxContext>(
    prepared: &Prepared<'_, '_, '_, A, C>,
) -> Vec<Option<Value>> {
    let index = &prepared.index;
    // Per node: its expression, and whether its subtree reads a variable.
    let mut nodes: Vec<(Option<&Expr>, bool)> = Vec::new();
    let mut open: Vec<usize> = Vec::new();
    Child::Expr(&prepared.plan.body).walk(&mut |node, at| match at {
        Visit::Enter(id) => {
            debug_assert_eq!(id, nodes.len());
            nodes.push((node.expr(), matches!(node.expr(), Some(Expr::Var { .. }))));
            open.push(id);
        }
        Visit::Leave(id) => {
            open.pop();
            if let (true, Some(&parent)) = (nodes[id].1, open.last()) {
                nodes[parent].1 = true;
            }
        }
    });
    let mut constants: Vec<Option<Value>> = Vec::new();
    let mut machine = Machine::new(prepared, Vec::new(), None);
    let mut id = 0;
    while id < nodes.len() {
        let (expr, reads) = nodes[id];
        let Some(expr) = expr.filter(|expr| !reads && !index.calls(id) && worth_folding(expr))
        else {
            id += 1;
            continue;
        };
        match machine.eval_pure(expr) {
            Ok(value) => {
                constants.resize(id + 1, None);
                constants[id] = Some(value);
            }
            // A failure can leave bindings and walks open: start clean.
            Err(_) => {
                machine.env.clear();
                machine.lists.clear();
                machine.operands.clear();
            }
        }
        id = index.next(id);
    }
    constants
}

/// Whether a constant expression builds something worth keeping: anything
/// but a literal number, Bool or `()`, which costs nothing to make again.
fn worth_folding(expr: &Expr) -> bool {
    !matches!(
        expr,
        Expr::Unit | Expr::Bool { .. } | Expr::Int { .. } | Expr::Float { .. }
    )
}

/// [`combine`]'s operands for [`Machine::eval_pure`]: evaluated as asked.
struct Pure<'m, 'p, 'r, 't, A: Effects, C: ToolboxContext>(&'m mut Machine<'p, 'r, 't, A, C>);

impl<'p, A: Effects, C: ToolboxContext> Operands<'p> for Pure<'_, 'p, '_, '_, A, C> {
    fn value(&mut self, expr: &'p Expr) -> Result<Value, RunError> {
        self.0.eval_pure(expr)
    }
    fn meter(&mut self) -> &mut Meter {
        &mut self.0.meter
    }
    fn name(&mut self, name: &'p str) -> Result<Arc<str>, Limit> {
        self.0.names.get(name, &mut self.0.meter)
    }
}

/// [`combine`]'s operands for [`Machine::eval`]: evaluated first, in order.
struct Ready<'m, I> {
    values: I,
    meter: &'m mut Meter,
    names: &'m mut Names,
}

impl<'p, I: Iterator<Item = Value>> Operands<'p> for Ready<'_, I> {
    fn value(&mut self, _: &'p Expr) -> Result<Value, RunError> {
        Ok(self.values.next().expect("a value per child"))
    }
    fn meter(&mut self) -> &mut Meter {
        self.meter
    }
    fn name(&mut self, name: &'p str) -> Result<Arc<str>, Limit> {
        self.names.get(name, self.meter)
    }
}

type Eval<'s, T> = BoxFuture<'s, Result<T, RunError>>;

impl<'p, A: Effects, C: ToolboxContext> Machine<'p, '_, '_, A, C> {
    /// Evaluates `body` with `name` bound to `value`.
    async fn bound(
        &mut self,
        name: &'p str,
        value: Value,
        body: &'p Expr,
        id: usize,
    ) -> Result<Value, RunError> {
        self.env.push((name, Bound::Value(value)));
        let result = self.value(body, id).await;
        self.env.pop();
        result
    }

    /// Evaluates `body` with `name` bound to `value`, without a future.
    fn bound_pure(
        &mut self,
        name: &'p str,
        value: Value,
        body: &'p Expr,
    ) -> Result<Value, RunError> {
        self.env.push((name, Bound::Value(value)));
        let result = self.eval_pure(body);
        self.env.pop();
        result
    }

    /// Evaluates `expr`: through [`eval`](Self::eval)'s boxed future when it
    /// holds a tool call, directly with [`eval_pure`](Self::eval_pure) when
    /// it does not (most sub-expressions: literals, arguments, callbacks).
    async fn value(&mut self, expr: &'p Expr, id: usize) -> Result<Value, RunError> {
        if self.index.calls(id) {
            self.eval(expr, id).await
        } else if let Some(Some(constant)) = self.constants.get(id) {
            // Folded when the plan was prepared: one step, nothing built.
            self.meter.step()?;
            Ok(constant.clone())
        } else {
            self.eval_pure(expr)
        }
    }

    /// The value of variable `name`, borrowed.
    fn lookup(&self, name: &str) -> Result<&Value, RunError> {
        match self.env.iter().rev().find(|(n, _)| *n == name) {
            Some((_, Bound::Value(value))) => Ok(value),
            Some((_, Bound::Element { list, index })) => Ok(&self.lists[*list][*index]),
            None => Err(RunError::Unbound {
                name: name.to_owned(),
            }),
        }
    }

    /// Starts walking `list`: its elements can be bound by place
    /// ([`Bound::Element`]) until [`walked`](Self::walked).
    fn walk(&mut self, list: List) -> usize {
        self.lists.push(list);
        self.lists.len() - 1
    }

    /// Ends the walk of the innermost list.
    fn walked(&mut self) {
        self.lists.pop();
    }

    /// The value of a place (a variable, or a field of a place), borrowed
    /// instead of cloned, with the errors its evaluation gives; `None` for any
    /// other expression.
    fn place(&self, expr: &Expr) -> Option<Result<&Value, RunError>> {
        match expr {
            Expr::Var { name } => Some(self.lookup(name)),
            Expr::Get { of, field } => Some(self.place(of)?.and_then(|of| field_ref(of, field))),
            _ => None,
        }
    }

    /// Evaluates an expression that calls a tool, node `id` of the plan.
    ///
    /// The twin of [`eval_pure`](Self::eval_pure): both run control flow
    /// themselves, and hand every other expression's children's values to
    /// [`combine`].
    fn eval<'s>(&'s mut self, expr: &'p Expr, id: usize) -> Eval<'s, Value> {
        async move {
            self.meter.step()?;
            Ok(match expr {
                Expr::Match { on, ok, err } => {
                    let [on_id, ok_id, err_id] = self.index.children(id);
                    match self.step(on, on_id).await? {
                        Ok(value) => self.bound(&ok.bind, value, &ok.body, ok_id).await?,
                        Err(error) => self.bound(&err.bind, error, &err.body, err_id).await?,
                    }
                }
                Expr::Let { name, value, body } => {
                    let [value_id, body_id] = self.index.children(id);
                    let value = self.value(value, value_id).await?;
                    self.bound(name, value, body, body_id).await?
                }
                Expr::If {
                    cond,
                    then,
                    otherwise,
                } => {
                    let [cond_id, then_id, otherwise_id] = self.index.children(id);
                    if truth(self.value(cond, cond_id).await?, || "`if`".into())? {
                        self.value(then, then_id).await?
                    } else {
                        self.value(otherwise, otherwise_id).await?
                    }
                }
                Expr::Binary {
                    op: op @ (BinaryOp::And | BinaryOp::Or),
                    left,
                    right,
                } => {
                    let [left_id, right_id] = self.index.children(id);
                    match short_circuit(*op, self.value(left, left_id).await?)? {
                        Some(value) => value,
                        None => logical_right(*op, self.value(right, right_id).await?)?,
                    }
                }
                Expr::Call { tool, arg } => {
                    let args = self.arguments(arg, id + 1).await?;
                    self.call(tool, args).await?
                }
                Expr::Map { func, list } => {
                    let [body_id, list_id] = self.index.children(id);
                    let list = items(self.value(list, list_id).await?, "`map`")?;
                    let mut out = Building::new(list.len(), &mut self.meter)?;
                    let (len, walked) = (list.len(), self.walk(list));
                    for index in 0..len {
                        let element = Bound::element(walked, index);
                        self.env.push((&func.param.name, element));
                        let value = self.value(&func.body, body_id).await;
                        self.env.pop();
                        out.push(value?, &self.meter)?;
                    }
                    self.walked();
                    out.finish()
                }
                Expr::Filter { func, list } => {
                    let [body_id, list_id] = self.index.children(id);
                    let list = items(self.value(list, list_id).await?, "`filter`")?;
                    let mut out = Building::growing(list.len(), &mut self.meter)?;
                    let (len, walked) = (list.len(), self.walk(list));
                    for index in 0..len {
                        let element = Bound::element(walked, index);
                        self.env.push((&func.param.name, element));
                        let keep = self.value(&func.body, body_id).await;
                        self.env.pop();
                        if truth(keep?, || "the callback of `filter`".into())? {
                            out.push(self.lists[walked][index].clone(), &self.meter)?;
                        }
                    }
                    self.walked();
                    out.finish()
                }
                Expr::Fold { func, init, list } => {
                    let [body_id, init_id, list_id] = self.index.children(id);
                    let mut acc = self.value(init, init_id).await?;
                    let list = items(self.value(list, list_id).await?, "`fold`")?;
                    let (len, walked) = (list.len(), self.walk(list));
                    for index in 0..len {
                        self.env.push((&func.acc.name, Bound::Value(acc)));
                        let element = Bound::element(walked, index);
                        self.env.push((&func.item.name, element));
                        let result = self.value(&func.body, body_id).await;
                        self.env.truncate(self.env.len() - 2);
                        acc = result?;
                    }
                    self.walked();
                    acc
                }
                // Records, lists, field access, `not`, the other operators
                // (a literal or a variable calls no tool: never here): the
                // children first, in order, then `combine` takes their values.
                _ => {
                    let start = self.operands.len();
                    let mut child = id + 1;
                    for node in expr.children() {
                        let value = self.value(operand(node), child).await?;
                        self.operands.push(value);
                        child = self.index.next(child);
                    }
                    let mut ready = Ready {
                        values: self.operands.drain(start..),
                        meter: &mut self.meter,
                        names: &mut self.names,
                    };
                    let value = combine(expr, &mut ready);
                    debug_assert!(ready.values.next().is_none(), "`combine` takes every child");
                    value?
                }
            })
        }
        .boxed()
    }

    /// Evaluates an expression that calls no tool, without a future.
    ///
    /// The twin of [`eval`](Self::eval), with the same semantics and errors;
    /// [`value`](Self::value) sends here only expressions that call no tool,
    /// so never a `match` or a `call`.
    fn eval_pure(&mut self, expr: &'p Expr) -> Result<Value, RunError> {
        self.meter.step()?;
        Ok(match expr {
            Expr::Unit => Value::Unit,
            Expr::Bool { value } => Value::Bool(*value),
            Expr::Int { value } => Value::Int(*value),
            Expr::Float { value } => Value::Float(*value),
            Expr::String { value } => {
                self.meter.string(value.len())?;
                Value::String(value.as_str().into())
            }
            // Shared, not copied: O(1) whatever the value.
            Expr::Var { name } => self.lookup(name)?.clone(),
            // Read in place: only the field's value is shared, not the record.
            Expr::Get { of, field } => match self.place(of) {
                Some(record) => field_ref(record?, field)?.clone(),
                None => combine(expr, &mut Pure(self))?,
            },
            Expr::Match { .. } | Expr::Call { .. } => {
                unreachable!("a `match` or a `call` calls a tool, so `value` never sends it here")
            }
            Expr::Let { name, value, body } => {
                let value = self.eval_pure(value)?;
                self.bound_pure(name, value, body)?
            }
            Expr::If {
                cond,
                then,
                otherwise,
            } => {
                if truth(self.eval_pure(cond)?, || "`if`".into())? {
                    self.eval_pure(then)?
                } else {
                    self.eval_pure(otherwise)?
                }
            }
            Expr::Binary {
                op: op @ (BinaryOp::And | BinaryOp::Or),
                left,
                right,
            } => match short_circuit(*op, self.eval_pure(left)?)? {
                Some(value) => value,
                None => logical_right(*op, self.eval_pure(right)?)?,
            },
            Expr::Map { func, list } => {
                let list = items(self.eval_pure(list)?, "`map`")?;
                let mut out = Building::new(list.len(), &mut self.meter)?;
                let (len, walked) = (list.len(), self.walk(list));
                for index in 0..len {
                    let element = Bound::element(walked, index);
                    self.env.push((&func.param.name, element));
                    let value = self.eval_pure(&func.body);
                    self.env.pop();
                    out.push(value?, &self.meter)?;
                }
                self.walked();
                out.finish()
            }
            Expr::Filter { func, list } => {
                let list = items(self.eval_pure(list)?, "`filter`")?;
                let mut out = Building::growing(list.len(), &mut self.meter)?;
                let (len, walked) = (list.len(), self.walk(list));
                for index in 0..len {
                    let element = Bound::element(walked, index);
                    self.env.push((&func.param.name, element));
                    let keep = self.eval_pure(&func.body);
                    self.env.pop();
                    if truth(keep?, || "the callback of `filter`".into())? {
                        out.push(self.lists[walked][index].clone(), &self.meter)?;
                    }
                }
                self.walked();
                out.finish()
            }
            Expr::Fold { func, init, list } => {
                let mut acc = self.eval_pure(init)?;
                let list = items(self.eval_pure(list)?, "`fold`")?;
                let (len, walked) = (list.len(), self.walk(list));
                for index in 0..len {
                    self.env.push((&func.acc.name, Bound::Value(acc)));
                    self.env
                        .push((&func.item.name, Bound::element(walked, index)));
                    let result = self.eval_pure(&func.body);
                    self.env.truncate(self.env.len() - 2);
                    acc = result?;
                }
                self.walked();
                acc
            }
            // Records, lists, `not`, the other operators.
            _ => combine(expr, &mut Pure(self))?,
        })
    }

    /// A tool's arguments. A variable (the usual argument: a traverse's
    /// element), or a field of one, is shared, not copied. The JSON text
    /// written for the tool counts as built, about as large as the value's
    /// [size](Value::size).
    async fn arguments(&mut self, arg: &'p Expr, id: usize) -> Result<Value, RunError> {
        self.meter.call()?;
        let value = match self.place(arg) {
            Some(value) => value?.clone(),
            None => self.value(arg, id).await?,
        };
        self.meter.charge(value.size())?;
        Ok(value)
    }

    /// Runs a step: `Ok` value, or the error value for the `Err` branch.
    async fn step(&mut self, step: &'p Step, id: usize) -> Result<Result<Value, Value>, RunError> {
        match step {
            Step::Exec { tool, arg } => {
                let args = self.arguments(arg, id + 1).await?;
                self.exec(tool, args).await
            }
            Step::Traverse { param, body, list } => {
                self.traverse(&param.name, body, list, self.index.children(id))
                    .await
            }
        }
    }

    /// Runs `body` with `param` bound to each element of `list` in turn:
    /// `Ok` with the list of `Ok` values, or the first `Err`.
    fn traverse<'s>(
        &'s mut self,
        param: &'p str,
        body: &'p Step,
        list: &'p Expr,
        [body_id, list_id]: [usize; 2],
    ) -> Eval<'s, Result<Value, Value>> {
        async move {
            let list = items(self.value(list, list_id).await?, "`traverse`")?;
            let mut oks = Building::new(list.len(), &mut self.meter)?;
            let (len, walked) = (list.len(), self.walk(list));
            for index in 0..len {
                self.env.push((param, Bound::element(walked, index)));
                let result = self.step(body, body_id).await;
                self.env.pop();
                match result? {
                    Ok(value) => oks.push(value, &self.meter)?,
                    // Short-circuit: later elements do not run.
                    Err(error) => {
                        self.walked();
                        return Ok(Err(error));
                    }
                }
            }
            self.walked();
            Ok(Ok(oks.finish()))
        }
        .boxed()
    }

    /// Calls a tool once, recording the call.
    async fn exec(&mut self, tool: &str, args: Value) -> Result<Result<Value, Value>, RunError> {
        match self.invoke(tool, args).await? {
            Ok(value) => Ok(Ok(value)),
            // Only the reason: the plan's `Err` branch reads it as the message.
            Err(ToolError::Refused { reason, .. }) => {
                Ok(Err(error_value(tool, "refused", &reason, &mut self.meter)?))
            }
            Err(error) => Ok(Err(error_value(
                tool,
                error.kind(),
                &error.to_string(),
                &mut self.meter,
            )?)),
        }
    }

    /// Calls a pure, infallible tool as a function, recording the call; a
    /// failure (arguments that do not fit, a panic) stops the plan.
    async fn call(&mut self, tool: &str, args: Value) -> Result<Value, RunError> {
        self.invoke(tool, args)
            .await?
            .map_err(|error| RunError::CallFailed {
                tool: tool.to_owned(),
                error: Box::new(error),
            })
    }

    /// Runs a tool through the toolbox and records the call in the trace;
    /// its output is read as the output type the check gave the tool,
    /// within the limits (the call stays in the trace when it passes one).
    async fn invoke(
        &mut self,
        tool: &str,
        args: Value,
    ) -> Result<Result<Value, ToolError>, RunError> {
        let start = self.interpreter.time_calls.then(Instant::now);
        let known = self.tools.get(tool);
        self.text.clear();
        if !args.write_json(&mut self.text) {
            return Err(RunError::NotJson {
                tool: tool.to_owned(),
            });
        }
        let text = self.text.as_str();
        let (replayed, number) = match self.hook {
            None => (None, 0),
            Some(hook) => {
                let gated = self
                    .interpreter
                    .toolbox
                    .asks_approval(tool, self.interpreter.approval.as_ref());
                match hook.before(tool, text, gated).await {
                    Before::Run(number) => (None, number),
                    Before::Replay(result) => (Some(result), 0),
                    Before::Stop(message) => return Err(RunError::Journal { message }),
                }
            }
        };
        let result = match replayed {
            Some(result) => result,
            None => {
                let approval = self.interpreter.approval.as_ref();
                let Some(context) = self.context else {
                    // Folding skips what calls a tool; were one reached, the
                    // expression would be left to the run, which has a context.
                    return Err(RunError::CallFailed {
                        tool: tool.to_owned(),
                        error: Box::new(ToolError::Execution {
                            tool: tool.to_owned(),
                            message: "a constant of the plan calls it, and is evaluated when the plan runs"
                                .to_owned(),
                            panicked: false,
                        }),
                    });
                };
                let call = self.interpreter.toolbox.call_with(
                    tool,
                    text,
                    approval,
                    context,
                    self.hook.map(|hook| hook as &dyn ApprovalNote),
                );
                // Within the limits on each call and the run's wall time: a call
                // past either is stopped where it waits (dropped), approvals and all.
                let limits = self.interpreter.limits.call();
                let result = limits.run(tool, call, self.meter.deadline()).await;
                if let Some(hook) = self.hook {
                    if let Err(message) = hook.after(number, tool, &result).await {
                        return Err(RunError::Journal { message });
                    }
                }
                result
            }
        };
        // One look at the clock after each call checks the wall time (the
        // evaluation between calls looks at it every few steps).
        let end = Instant::now();
        let mut duration = start.map(|start| end.saturating_duration_since(start));
        let (output, result) = match result {
            Ok(output) => {
                let ty = known.map_or(&Ty::Any, |(_, ty)| ty);
                match read_output(output.json(), ty, &mut self.meter, &mut self.names) {
                    Ok(value) => (Ok(Ok(value.clone())), CallResult::Ok(value)),
                    // The call ran and gave an output past the run's limits:
                    // the trace says so, and the run stops.
                    Err(Unfit::Limit(limit)) => {
                        let error = ToolError::Execution {
                            tool: tool.to_owned(),
                            message: format!("its output was not read, since {limit}"),
                            panicked: false,
                        };
                        (Ok(Err(limit)), CallResult::Err(error))
                    }
                    Err(Unfit::Misfit(message)) => {
                        let error = ToolError::Execution {
                            tool: tool.to_owned(),
                            message: format!(
                                "its output does not fit the output type its schema declares: {message}"
                            ),
                            panicked: false,
                        };
                        (Err(error.clone()), CallResult::Err(error))
                    }
                }
            }
            Err(ToolError::Refused { tool, reason }) => {
                // A refused call did not run: it took no time.
                duration = duration.map(|_| Duration::ZERO);
                let error = ToolError::Refused {
                    tool,
                    reason: reason.clone(),
                };
                (Err(error), CallResult::Refused(reason))
            }
            Err(error) => (Err(error.clone()), CallResult::Err(error)),
        };
        let tool = match known {
            Some((name, _)) => name.clone(),
            None => ToolName::Shared(self.names.get(tool, &mut self.meter)?),
        };
        self.trace.push(TracedCall {
            tool,
            args,
            result,
            duration,
        });
        // A call that ends past the deadline stops the run, kept in the trace.
        self.meter.by(end)?;
        Ok(match output {
            Ok(value) => Ok(value?),
            Err(error) => Err(error),
        })
    }
}

/// What a variable is bound to.
enum Bound {
    /// A value of its own.
    Value(Value),
    /// Element `index` of the list being walked at `list` in
    /// [`Machine::lists`].
    Element { list: usize, index: usize },
}

impl Bound {
    fn element(list: usize, index: usize) -> Bound {
        Bound::Element { list, index }
    }
}

/// A child of an expression whose children are all operands (see [`combine`]).
#[inline]
fn operand(node: Child<'_>) -> &Expr {
    node.expr()
        .expect("only a `match` or a `traverse` has a step, and neither is combined")
}
