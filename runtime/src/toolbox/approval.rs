//! Approval: a person, or a rule, asked before a call runs, shown exactly the
//! arguments the tool will run with.
//!
//! An [`Approval`] is a hook and the tools it asks about (`Write` tools by
//! default; by name with [`Approval::tools`], or by a predicate on the
//! [`ToolSpec`] with [`Approval::when`]). It is asked in dispatch, so it
//! covers every way a call reaches a tool: [`Toolbox::call`](crate::Toolbox::call),
//! an agent's step, a plan's `exec`, a server answering a client. Dispatch
//! reads the arguments first (after any repair, coercion or model fix a
//! recovery policy made), shows the hook what it read, and runs the tool
//! with that very reading: what was approved is what runs. Arguments that
//! cannot be read are refused with their error before anyone is asked; a
//! refusal is [`ToolError::Refused`](crate::ToolError::Refused), which a
//! model reads as "change course". A hook that panics refuses.
//!
//! A hook can be given the call's [context](super::context) too, to decide
//! by who is asking ([`Approval::with_context`]); the compiler checks that
//! the toolbox gives the context it takes.
//!
//! ```
//! # futures::executor::block_on(async {
//! use typed_tools::toolbox::{Approval, Decision};
//! use typed_tools::{tool, ToolError, Toolbox};
//!
//! /// Refund an amount, in cents.
//! #[tool(effects = Write)]
//! fn refund(account: String, cents: u32) -> String { format!("refunded {cents}") }
//! /// Look up a balance.
//! #[tool(effects = Read)]
//! fn balance(account: String) -> u32 { 4900 }
//!
//! let toolbox = Toolbox::builder().tool(Refund).tool(Balance).build()?;
//! let guarded = toolbox.approve(Approval::new(|request| {
//!     if request.args["cents"].as_u64() > Some(10_000) {
//!         Decision::Refuse("over $100 needs a manager".into())
//!     } else {
//!         Decision::Approve
//!     }
//! }));
//! assert!(guarded.call("refund", r#"{"account": "a", "cents": 500}"#).await.is_ok());
//! let error = guarded.call("refund", r#"{"account": "a", "cents": 50000}"#).await.unwrap_err();
//! assert_eq!(error, ToolError::Refused { tool: "refund".into(), reason: "over $100 needs a manager".into() });
//! // Reads are not asked about.
//! assert!(guarded.call("balance", r#"{"account": "a"}"#).await.is_ok());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```

use std::any::Any;
use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::future::BoxFuture;
use futures::FutureExt;
use serde_json::Value;

use crate::effect::{Effect, EffectSet};
use crate::tool::ToolSpec;

use super::context::downcast;
use super::dispatch::panic_message;

/// A call about to run, shown to an approval hook. It owns its data, so that
/// an async hook can hold it while it waits (for a human, say).
#[derive(Clone, Debug, PartialEq)]
pub struct ApprovalRequest {
    /// The tool.
    pub tool: String,
    /// Its effects.
    pub effects: EffectSet,
    /// The arguments it will run with: read from the very text (or value)
    /// the tool's input is then made from, after every repair and rewrite.
    pub args: Value,
}

/// An approval hook's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Run the call.
    Approve,
    /// Do not run it: the call fails with
    /// [`ToolError::Refused`](crate::ToolError::Refused) and this reason (in a
    /// plan, the `Err` branch gets it, kind `"refused"`).
    Refuse(String),
}

/// A hook asked before calls of some tools run, and which tools those are.
/// `'h` is how long the hook may borrow from its surroundings: `'static` to
/// attach it to a toolbox ([`Toolbox::approve`](crate::Toolbox::approve)),
/// shorter for one plan run
/// ([`Interpreter::approval`](crate::plan::Interpreter::approval)).
/// `N` is the [context](super::context) the hook takes: `()` for none
/// ([`Approval::new`]), the toolbox's for one made by
/// [`Approval::with_context`]; a toolbox admits an approval whose `N` is
/// `()` or the context it gives, as it admits tools.
///
/// Cloning is cheap (the hook is shared).
pub struct Approval<'h, N = ()> {
    hook: Hook<'h>,
    _context: PhantomData<fn() -> N>,
}

impl<N> Clone for Approval<'_, N> {
    fn clone(&self) -> Self {
        Approval {
            hook: self.hook.clone(),
            _context: PhantomData,
        }
    }
}

/// An approval with its context type erased: what views and calls hold.
#[derive(Clone)]
pub(crate) struct Hook<'h> {
    ask: Arc<dyn Ask + 'h>,
    scope: Scope<'h>,
}

#[derive(Clone)]
enum Scope<'h> {
    Writes,
    Tools(Arc<[String]>),
    When(Arc<dyn Fn(&ToolSpec) -> bool + Send + Sync + 'h>),
}

impl<N> fmt::Debug for Approval<'_, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.hook.fmt(f)
    }
}

impl fmt::Debug for Hook<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scope: &dyn fmt::Debug = match &self.scope {
            Scope::Writes => &"Write tools",
            Scope::Tools(names) => names,
            Scope::When(_) => &"a predicate",
        };
        f.debug_struct("Approval")
            .field("asks_about", scope)
            .finish_non_exhaustive()
    }
}

/// The hook, object safe; the future borrows the hook only, not the
/// call's context, which a hook that takes one reads before it returns.
trait Ask: Send + Sync {
    fn ask(
        &self,
        request: ApprovalRequest,
        context: &(dyn Any + Send + Sync),
    ) -> BoxFuture<'_, Decision>;
}

struct SyncHook<H>(H);

impl<H: Fn(&ApprovalRequest) -> Decision + Send + Sync> Ask for SyncHook<H> {
    fn ask(
        &self,
        request: ApprovalRequest,
        _: &(dyn Any + Send + Sync),
    ) -> BoxFuture<'_, Decision> {
        futures::future::ready((self.0)(&request)).boxed()
    }
}

/// `F` is part of the type so that `&'s self` implies `F: 's`.
struct AsyncHook<H, F>(H, PhantomData<fn() -> F>);

impl<H, F> Ask for AsyncHook<H, F>
where
    H: Fn(ApprovalRequest) -> F + Send + Sync,
    F: Future<Output = Decision> + Send,
{
    fn ask(
        &self,
        request: ApprovalRequest,
        _: &(dyn Any + Send + Sync),
    ) -> BoxFuture<'_, Decision> {
        (self.0)(request).boxed()
    }
}

/// A hook that takes the call's context, of type `N`.
struct ContextHook<H, N>(H, PhantomData<fn(&N)>);

impl<H, N> Ask for ContextHook<H, N>
where
    H: Fn(&ApprovalRequest, &N) -> Decision + Send + Sync,
    N: 'static,
{
    fn ask(
        &self,
        request: ApprovalRequest,
        context: &(dyn Any + Send + Sync),
    ) -> BoxFuture<'_, Decision> {
        let decision = match downcast::<N>(context) {
            Some(context) => (self.0)(&request, context),
            None => other_context::<N>(&request),
        };
        futures::future::ready(decision).boxed()
    }
}

/// An async hook that takes the call's context, of type `N`; `F` as in
/// [`AsyncHook`].
struct AsyncContextHook<H, N, F>(H, PhantomData<fn(&N) -> F>);

impl<H, N, F> Ask for AsyncContextHook<H, N, F>
where
    H: Fn(ApprovalRequest, &N) -> F + Send + Sync,
    N: 'static,
    F: Future<Output = Decision> + Send,
{
    fn ask(
        &self,
        request: ApprovalRequest,
        context: &(dyn Any + Send + Sync),
    ) -> BoxFuture<'_, Decision> {
        match downcast::<N>(context) {
            Some(context) => (self.0)(request, context).boxed(),
            None => futures::future::ready(other_context::<N>(&request)).boxed(),
        }
    }
}

/// A hook that takes a context of type `N` was given another: the
/// toolbox's bounds rule it out; the call is refused, never run unasked.
#[cold]
fn other_context<N>(request: &ApprovalRequest) -> Decision {
    Decision::Refuse(format!(
        "the approval for `{}` needs a context of type `{}`, and the call was given another, so the call was not run",
        request.tool,
        std::any::type_name::<N>()
    ))
}

impl<'h> Approval<'h> {
    /// A hook that answers at once, asked about every `Write` tool.
    ///
    /// ```
    /// use typed_tools::toolbox::{Approval, Decision};
    ///
    /// let approval = Approval::new(|request| {
    ///     if request.tool == "delete_account" {
    ///         Decision::Refuse("accounts are deleted by a person".into())
    ///     } else {
    ///         Decision::Approve
    ///     }
    /// });
    /// # let _ = approval;
    /// ```
    pub fn new(hook: impl Fn(&ApprovalRequest) -> Decision + Send + Sync + 'h) -> Approval<'h> {
        Approval::from_ask(Arc::new(SyncHook(hook)))
    }

    /// A hook that answers later (a person in the loop, a policy service),
    /// asked about every `Write` tool. The call waits for the answer.
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use futures::channel::{mpsc, oneshot};
    /// use futures::{SinkExt, StreamExt};
    /// use typed_tools::toolbox::{Approval, ApprovalRequest, Decision};
    /// use typed_tools::{tool, ToolError, Toolbox};
    ///
    /// /// Send an email.
    /// #[tool(effects = Write)]
    /// fn send(to: String) {}
    ///
    /// // Each request goes to a reviewer, with a channel for the answer.
    /// let (to_reviewer, mut inbox) = mpsc::channel::<(ApprovalRequest, oneshot::Sender<Decision>)>(1);
    /// let toolbox = Toolbox::builder().tool(Send).build()?.approve(Approval::new_async(move |request| {
    ///     let mut to_reviewer = to_reviewer.clone();
    ///     async move {
    ///         let (answer, decision) = oneshot::channel();
    ///         if to_reviewer.send((request, answer)).await.is_err() {
    ///             return Decision::Refuse("no reviewer".into());
    ///         }
    ///         decision.await.unwrap_or(Decision::Refuse("no answer".into()))
    ///     }
    /// }));
    /// let reviewer = async {
    ///     let (request, answer) = inbox.next().await.unwrap();
    ///     assert_eq!(request.args, serde_json::json!({"to": "ana@example.com"}));
    ///     answer.send(Decision::Refuse("not today".into())).unwrap();
    /// };
    /// let (result, ()) = futures::join!(toolbox.call("send", r#"{"to": "ana@example.com"}"#), reviewer);
    /// assert!(matches!(result, Err(ToolError::Refused { .. })));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn new_async<F>(hook: impl Fn(ApprovalRequest) -> F + Send + Sync + 'h) -> Approval<'h>
    where
        F: Future<Output = Decision> + Send + 'h,
    {
        Approval::from_ask(Arc::new(AsyncHook(hook, PhantomData)))
    }
}

impl<'h, N: 'static> Approval<'h, N> {
    /// A hook that answers at once and is given the call's context, of
    /// type `N`, asked about every `Write` tool: a rule by who is asking.
    /// Attach it to a toolbox that gives an `N`
    /// ([`ToolboxBuilder::context`](crate::ToolboxBuilder::context)); the
    /// compiler refuses any other.
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::toolbox::{Approval, Decision};
    /// use typed_tools::{tool, ToolError, Toolbox};
    ///
    /// /// Who is calling.
    /// struct Caller { name: String, admin: bool }
    ///
    /// /// Delete a note.
    /// #[tool(effects = Write)]
    /// fn delete_note(id: u32) -> bool { true }
    ///
    /// let toolbox = Toolbox::builder()
    ///     .context::<Caller>()
    ///     .tool(DeleteNote)
    ///     .approval(Approval::with_context(|_, caller: &Caller| {
    ///         if caller.admin {
    ///             Decision::Approve
    ///         } else {
    ///             Decision::Refuse(format!("{} may not delete notes", caller.name))
    ///         }
    ///     }))
    ///     .build()?;
    /// let ana = Caller { name: "ana".into(), admin: true };
    /// let bob = Caller { name: "bob".into(), admin: false };
    /// assert!(toolbox.call_in(&ana, "delete_note", r#"{"id": 1}"#).await.is_ok());
    /// let refused = toolbox.call_in(&bob, "delete_note", r#"{"id": 1}"#).await.unwrap_err();
    /// assert_eq!(refused.to_string(), "the call to `delete_note` was refused: bob may not delete notes");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn with_context(
        hook: impl Fn(&ApprovalRequest, &N) -> Decision + Send + Sync + 'h,
    ) -> Approval<'h, N> {
        Approval::from_ask(Arc::new(ContextHook(hook, PhantomData)))
    }

    /// A hook that answers later and is given the call's context, of type
    /// `N`, asked about every `Write` tool. The hook is called with the
    /// context, and returns the future of its answer, which may not borrow
    /// the context: take from it what the answer needs (a name, a role)
    /// before the future.
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::toolbox::{Approval, Decision};
    /// use typed_tools::{tool, Toolbox};
    ///
    /// /// Who is calling.
    /// struct Caller { name: String }
    ///
    /// /// Send an email.
    /// #[tool(effects = Write)]
    /// fn send(to: String) {}
    ///
    /// let toolbox = Toolbox::builder()
    ///     .context::<Caller>()
    ///     .tool(Send)
    ///     .approval(Approval::with_context_async(|request, caller: &Caller| {
    ///         let asker = caller.name.clone();
    ///         async move {
    ///             // A person would be asked here, told who asks.
    ///             if asker == "ana" && request.args["to"] == "boss@example.com" {
    ///                 Decision::Approve
    ///             } else {
    ///                 Decision::Refuse(format!("{asker} may not write to {}", request.args["to"]))
    ///             }
    ///         }
    ///     }))
    ///     .build()?;
    /// let ana = Caller { name: "ana".into() };
    /// assert!(toolbox.call_in(&ana, "send", r#"{"to": "boss@example.com"}"#).await.is_ok());
    /// assert!(toolbox.call_in(&ana, "send", r#"{"to": "all@example.com"}"#).await.is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn with_context_async<F>(
        hook: impl Fn(ApprovalRequest, &N) -> F + Send + Sync + 'h,
    ) -> Approval<'h, N>
    where
        F: Future<Output = Decision> + Send + 'h,
    {
        Approval::from_ask(Arc::new(AsyncContextHook(hook, PhantomData)))
    }
}

impl<'h, N> Approval<'h, N> {
    fn from_ask(ask: Arc<dyn Ask + 'h>) -> Approval<'h, N> {
        Approval {
            hook: Hook {
                ask,
                scope: Scope::Writes,
            },
            _context: PhantomData,
        }
    }

    /// The hook, its context type erased.
    pub(crate) fn into_hook(self) -> Hook<'h> {
        self.hook
    }

    /// Asks about exactly these tools, by name, whatever their effects.
    ///
    /// ```
    /// use typed_tools::toolbox::{Approval, Decision};
    ///
    /// let approval = Approval::new(|_| Decision::Approve).tools(["issue_refund", "fetch_url"]);
    /// # let _ = approval;
    /// ```
    pub fn tools<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Approval<'h, N> {
        self.hook.scope = Scope::Tools(names.into_iter().map(Into::into).collect());
        self
    }

    /// Asks about the tools whose spec `predicate` accepts.
    ///
    /// ```
    /// use typed_tools::effect::Effect;
    /// use typed_tools::toolbox::{Approval, Decision};
    ///
    /// // Writes and open-world calls alike.
    /// let approval = Approval::new(|_| Decision::Approve)
    ///     .when(|spec| spec.effects().contains(Effect::Write) || spec.effects().contains(Effect::Network));
    /// # let _ = approval;
    /// ```
    ///
    /// A tool's annotations are in its spec too: ask a person only before a
    /// write that may destroy, and let one that only adds
    /// (`#[tool(effects = Write, destructive = false)]`) run.
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::toolbox::{Approval, Decision};
    /// use typed_tools::{tool, ToolError, Toolbox};
    ///
    /// /// Add a note; returns its id.
    /// #[tool(effects = Write, destructive = false)]
    /// fn add_note(text: String) -> u32 { 1 }
    /// /// Delete a note by its id.
    /// #[tool(effects = Write)]
    /// fn delete_note(id: u32) -> bool { true }
    ///
    /// let toolbox = Toolbox::builder().tool(AddNote).tool(DeleteNote).build()?.approve(
    ///     Approval::new(|_| Decision::Refuse("deleting needs a person".into()))
    ///         .when(|spec| spec.is_destructive()),
    /// );
    /// assert!(toolbox.call("add_note", r#"{"text": "milk"}"#).await.is_ok());
    /// let refused = toolbox.call("delete_note", r#"{"id": 1}"#).await.unwrap_err();
    /// assert!(matches!(refused, ToolError::Refused { .. }));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn when(
        mut self,
        predicate: impl Fn(&ToolSpec) -> bool + Send + Sync + 'h,
    ) -> Approval<'h, N> {
        self.hook.scope = Scope::When(Arc::new(predicate));
        self
    }

    /// Whether this approval asks about the tool of `spec`.
    ///
    /// ```
    /// use typed_tools::toolbox::{Approval, Decision};
    /// use typed_tools::{tool, ToolSpec};
    ///
    /// /// Delete a file.
    /// #[tool(effects = Write)]
    /// fn delete(path: String) {}
    /// /// Read a file.
    /// #[tool(effects = Read)]
    /// fn read(path: String) -> String { path }
    ///
    /// let approval = Approval::new(|_| Decision::Approve);
    /// assert!(approval.asks_about(&ToolSpec::of::<Delete>()));
    /// assert!(!approval.asks_about(&ToolSpec::of::<Read>()));
    /// ```
    pub fn asks_about(&self, spec: &ToolSpec) -> bool {
        self.hook.asks_about(spec)
    }
}

impl Hook<'_> {
    /// Whether this hook asks about the tool of `spec`.
    pub(crate) fn asks_about(&self, spec: &ToolSpec) -> bool {
        match &self.scope {
            Scope::Writes => spec.effects().contains(Effect::Write),
            Scope::Tools(names) => names.iter().any(|name| name == spec.name()),
            Scope::When(predicate) => predicate(spec),
        }
    }

    /// Asks the hook, lent the call's context; a panic in it is a refusal.
    async fn decide(
        &self,
        request: ApprovalRequest,
        context: &(dyn Any + Send + Sync),
    ) -> Decision {
        let tool = request.tool.clone();
        let asked = std::panic::catch_unwind(AssertUnwindSafe(|| self.ask.ask(request, context)));
        let answer = match asked {
            Ok(future) => AssertUnwindSafe(future).catch_unwind().await,
            Err(panic) => Err(panic),
        };
        answer.unwrap_or_else(|panic| {
            Decision::Refuse(format!(
                "the approval hook for `{tool}` failed ({}), so the call was not run",
                panic_message(panic)
            ))
        })
    }
}

/// The approvals a view of a toolbox carries, each with the tools it asks
/// about, by their position in the toolbox, found once when it is attached.
pub(crate) struct Approvals {
    gates: Vec<(Hook<'static>, Arc<[bool]>)>,
}

impl Approvals {
    /// These approvals and one more, asked after them.
    pub(crate) fn with<'s>(
        previous: Option<&Approvals>,
        approval: Hook<'static>,
        specs: impl Iterator<Item = &'s ToolSpec>,
    ) -> Approvals {
        let asks: Arc<[bool]> = specs.map(|spec| approval.asks_about(spec)).collect();
        let mut gates = previous.map_or_else(Vec::new, |p| p.gates.clone());
        gates.push((approval, asks));
        Approvals { gates }
    }

    /// These approvals, each asked about the tools of `specs` that it asks
    /// about (another toolbox's), in the same order.
    pub(crate) fn rescoped<'s>(
        &self,
        specs: impl Iterator<Item = &'s ToolSpec> + Clone,
    ) -> Approvals {
        let gates = self
            .gates
            .iter()
            .map(|(approval, _)| {
                let asks: Arc<[bool]> = specs
                    .clone()
                    .map(|spec| approval.asks_about(spec))
                    .collect();
                (approval.clone(), asks)
            })
            .collect();
        Approvals { gates }
    }

    pub(crate) fn len(&self) -> usize {
        self.gates.len()
    }

    /// These approvals and an observer asked after them about the tools they
    /// ask about: it hears of each call they all approved, with the
    /// arguments that run, and approves it (a streamed agent run reports
    /// approvals so).
    pub(crate) fn observed(
        &self,
        observer: impl Fn(&ApprovalRequest) + Send + Sync + 'static,
    ) -> Approvals {
        let count = self.gates.first().map_or(0, |(_, asks)| asks.len());
        let asks: Arc<[bool]> = (0..count)
            .map(|index| self.gates.iter().any(|(_, asks)| asks[index]))
            .collect();
        let approval = Approval::new(move |request| {
            observer(request);
            Decision::Approve
        })
        .into_hook();
        let mut gates = self.gates.clone();
        gates.push((approval, asks));
        Approvals { gates }
    }
}

/// Told of each call every approval approved, before the tool runs: a
/// [durable](crate::durable) run's journal, which records the approval (an
/// `Err` refuses the call: it does not run unrecorded).
pub(crate) trait ApprovalNote: Sync {
    fn approved<'a>(&'a self, tool: &'a str, args: &'a Value) -> BoxFuture<'a, Result<(), String>>;
}

/// The approvals one call passes: its toolbox view's, and one more given
/// for the call (a plan run's); and who is told when they all approved.
/// Copied into the call; nothing when empty.
#[derive(Clone, Copy, Default)]
pub(crate) struct Gates<'a> {
    pub(crate) view: Option<&'a Approvals>,
    pub(crate) extra: Option<&'a Hook<'a>>,
    pub(crate) noted: Option<&'a dyn ApprovalNote>,
}

impl<'a> Gates<'a> {
    /// Whether any approval asks about tool number `index`, of `spec`.
    #[inline]
    pub(crate) fn ask_about(&self, index: usize, spec: &ToolSpec) -> bool {
        if self.view.is_none() && self.extra.is_none() {
            return false;
        }
        self.view
            .is_some_and(|view| view.gates.iter().any(|(_, asks)| asks[index]))
            || self.extra.is_some_and(|extra| extra.asks_about(spec))
    }

    /// Asks each approval that asks about the tool, in order, until one
    /// refuses: `Err` with its reason. Each is lent the call's `context`.
    pub(crate) async fn decide(
        &self,
        index: usize,
        spec: &ToolSpec,
        args: Value,
        context: &(dyn Any + Send + Sync),
    ) -> Result<(), String> {
        let request = ApprovalRequest {
            tool: spec.name().to_owned(),
            effects: spec.effects(),
            args,
        };
        let view = self
            .view
            .into_iter()
            .flat_map(|view| view.gates.iter())
            .filter(|(_, asks)| asks[index])
            .map(|(approval, _)| approval);
        let extra = self.extra.filter(|extra| extra.asks_about(spec));
        for approval in view.chain(extra) {
            if let Decision::Refuse(reason) = approval.decide(request.clone(), context).await {
                return Err(reason);
            }
        }
        match self.noted {
            Some(note) => note.approved(&request.tool, &request.args).await,
            None => Ok(()),
        }
    }
}
