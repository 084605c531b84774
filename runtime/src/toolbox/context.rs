//! A per-run context: what a call is given besides its arguments (who is
//! asking and what they may do, a connection, a request id), typed, and
//! checked by the compiler from the tool to the call.
//!
//! A tool declares what it needs: a `#[context] caller: &Caller`
//! parameter, which becomes [`Tool::Context`](crate::Tool::Context) (`()`
//! for a tool that needs none). A toolbox is built once and shared; the
//! context is given per call ([`Toolbox::call_in`](crate::Toolbox::call_in)),
//! per plan run ([`Interpreter::run_in`](crate::plan::Interpreter::run_in)),
//! per agent run ([`Agent::run_in`](crate::agent::Agent::run_in), the plans
//! the agent runs included) and per MCP request
//! ([`McpServer::with_context`], from the request's headers: a bearer token
//! becomes the caller), and each sees its own: the toolbox holds none.
//! Approvals see it too ([`Approval::with_context`](crate::toolbox::Approval::with_context)),
//! so a rule can say "this user may not delete". `#[state]` is the other kind of thing a tool
//! receives: held by the tool from the start, the same for every call.
//!
//! ```
//! # futures::executor::block_on(async {
//! use typed_tools::{tool, Toolbox};
//!
//! /// Who is calling.
//! struct Caller { name: String }
//!
//! /// Say who is calling.
//! #[tool(effects = Read)]
//! fn whoami(#[context] caller: &Caller) -> String {
//!     caller.name.clone()
//! }
//!
//! let toolbox = Toolbox::builder().context::<Caller>().tool(Whoami).build()?;
//! let ana = Caller { name: "ana".into() };
//! assert_eq!(toolbox.call_in(&ana, "whoami", "{}").await?.json(), r#""ana""#);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```
//!
//! # In traces
//!
//! The library's spans (`agent_run`, `plan_run`, `tool_call`, ...) do not
//! record the context: what of it belongs in a trace (a user id, yes; a
//! token, no) is the user's to choose. Instrument the run with a span of
//! your own that records it, and every span the run opens is its child,
//! each call's included; concurrent runs each under their own
//! (`tests/agent_tracing.rs` checks it):
//!
//! ```
//! # futures::executor::block_on(async {
//! use tracing::Instrument;
//! use typed_tools::{tool, Toolbox};
//!
//! /// Who is calling.
//! struct Caller { id: u64 }
//!
//! /// Say who is calling.
//! #[tool(effects = Read)]
//! fn whoami(#[context] caller: &Caller) -> u64 { caller.id }
//!
//! let toolbox = Toolbox::builder().context::<Caller>().tool(Whoami).build()?;
//! let caller = Caller { id: 7 };
//! let span = tracing::info_span!("request", user.id = caller.id);
//! let output = toolbox.call_in(&caller, "whoami", "{}").instrument(span).await?;
//! assert_eq!(output.json(), "7");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```
//!
//! An approval made by [`Approval::with_context`](crate::toolbox::Approval::with_context)
//! runs inside the call's `tool_call` span, so the events it emits
//! (`tracing::info!(user = caller.id, "approved")`) are the call's.
//!
//! # Why it is built this way
//!
//! The context's type is part of the toolbox's type, `Toolbox<A, C>`, with
//! `C` one of two markers: [`NoContext`] (the default, so a toolbox whose
//! tools need none is written and called as before) or
//! [`WithContext<X>`](WithContext), made by
//! [`ToolboxBuilder::context`](crate::ToolboxBuilder::context). Markers, not
//! the context's type itself with `()` for none: "a toolbox of `X` admits
//! a tool that needs `()` or `X`" written as two impls overlaps when `X` is
//! `()`, which coherence refuses. With the markers, the impls for
//! `WithContext<X>` are told apart by a private marker parameter (`ByNone`
//! for a tool that needs nothing, `BySame` for one that needs `X`), which
//! rustc infers. Each bound a user can miss is a trait of its own with an
//! `on_unimplemented` message that names the types and says what to write;
//! where the message depends on the toolbox (a tool needing `Caller` in a
//! toolbox of none, or of `Tenant`), the bound is a small dispatch trait
//! whose impls require a leaf trait, and rustc reports the leaf's message
//! (`AdmitsTool` → `ToolNeedsNoContext` or `ToolContextIs`). The markers
//! print bare in those messages (`WithContext<Caller>`): a marker named
//! `Context` would print with its path, `std::task::Context` sharing the
//! name.
//!
//! Inside, the context travels erased, as `&(dyn Any + Send + Sync)`, and
//! each typed tool takes its own type back with a downcast; the builder
//! admitted only tools whose context is `()` or the toolbox's, so the
//! downcast cannot fail, and if it did, the call would fail with a
//! [`ToolError`](crate::ToolError), never a panic. A tool that needs no
//! context skips the downcast (the type test is a constant, folded away),
//! and a call of a toolbox without context carries nothing:
//! [`Call`](crate::Call) holds the context as `C::Given<'a>`, which is `()`
//! for `NoContext`, so the call of a context-free toolbox is the size it
//! was.
//!
//! [`McpServer::with_context`]: https://docs.rs/typed-tools/latest/typed_tools/mcp/struct.McpServer.html#method.with_context

use std::any::Any;
use std::fmt;
use std::marker::PhantomData;

/// What a toolbox gives its tools on each call: [`NoContext`] or
/// [`WithContext<X>`](WithContext). Sealed: the two markers are all there is.
///
/// ```
/// use typed_tools::effect::Effects;
/// use typed_tools::toolbox::ToolboxContext;
/// use typed_tools::Toolbox;
///
/// // Code over any toolbox, with a context or without.
/// fn tool_count<A: Effects, C: ToolboxContext>(toolbox: &Toolbox<A, C>) -> usize {
///     toolbox.names().count()
/// }
/// assert_eq!(tool_count(&Toolbox::builder().context::<String>().build().unwrap()), 0);
/// ```
pub trait ToolboxContext: sealed::Sealed + 'static {
    /// The context's type: `()` for [`NoContext`], `X` for
    /// [`WithContext<X>`](WithContext).
    type Value: Send + Sync + 'static;

    /// The context as a call holds it: nothing for `NoContext`, a
    /// reference for `WithContext<X>`.
    #[doc(hidden)]
    type Given<'a>: Copy + Send + Sync + Unpin;

    /// The context a call holds, from the value given.
    #[doc(hidden)]
    fn given(value: &Self::Value) -> Self::Given<'_>;

    /// The context as the erased tools take it.
    #[doc(hidden)]
    fn erase<'a>(given: Self::Given<'a>) -> &'a (dyn Any + Send + Sync);
}

/// The context of a toolbox whose tools need none: the default, as
/// [`Toolbox::builder`](crate::Toolbox::builder) starts. Such a toolbox is
/// called with [`Toolbox::call`](crate::Toolbox::call).
///
/// ```
/// use typed_tools::effect::Read;
/// use typed_tools::toolbox::NoContext;
/// use typed_tools::Toolbox;
///
/// // `Toolbox<Read>` is `Toolbox<Read, NoContext>`.
/// let toolbox: Toolbox<Read, NoContext> = Toolbox::allowing::<Read>().build().unwrap();
/// ```
pub enum NoContext {}

/// The context of a toolbox whose calls are each given an `X`
/// ([`Toolbox::call_in`](crate::Toolbox::call_in)): made by
/// [`ToolboxBuilder::context`](crate::ToolboxBuilder::context). Its tools
/// need `X`, or nothing.
///
/// ```
/// use typed_tools::effect::ReadWriteNetwork;
/// use typed_tools::toolbox::WithContext;
/// use typed_tools::{tool, Toolbox};
///
/// /// Who is calling.
/// pub struct Caller { pub name: String }
///
/// /// Say who is calling.
/// #[tool(effects = Read)]
/// fn whoami(#[context] caller: &Caller) -> String { caller.name.clone() }
///
/// // The type to name where the toolbox is kept.
/// fn tools() -> Toolbox<ReadWriteNetwork, WithContext<Caller>> {
///     Toolbox::builder().context::<Caller>().tool(Whoami).build().unwrap()
/// }
/// # let _ = tools();
/// ```
pub struct WithContext<X>(PhantomData<fn() -> X>, NoContext);

impl fmt::Debug for NoContext {
    fn fmt(&self, _: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {}
    }
}

impl<X> fmt::Debug for WithContext<X> {
    fn fmt(&self, _: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.1 {}
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::NoContext {}
    impl<X> Sealed for super::WithContext<X> {}
}

/// The context nothing needs, lent to every call of a toolbox without one.
static NOTHING: () = ();

impl ToolboxContext for NoContext {
    type Value = ();
    type Given<'a> = ();

    #[inline(always)]
    fn given(_: &()) {}

    #[inline(always)]
    fn erase<'a>(_: Self::Given<'a>) -> &'a (dyn Any + Send + Sync) {
        &NOTHING
    }
}

impl<X: Send + Sync + 'static> ToolboxContext for WithContext<X> {
    type Value = X;
    type Given<'a> = &'a X;

    #[inline(always)]
    fn given(value: &X) -> &X {
        value
    }

    #[inline(always)]
    fn erase<'a>(given: Self::Given<'a>) -> &'a (dyn Any + Send + Sync) {
        given
    }
}

/// The context a tool, an approval or a call needs, taken back from its
/// erased form: `None` when it is of another type, which the builder's
/// bounds rule out. A tool that needs none gets `()` whatever was given:
/// the test is a constant, and folds away.
#[inline(always)]
pub(crate) fn downcast<X: Any>(given: &(dyn Any + Send + Sync)) -> Option<&X> {
    if std::any::TypeId::of::<X>() == std::any::TypeId::of::<()>() {
        return (&NOTHING as &dyn Any).downcast_ref::<X>();
    }
    given.downcast_ref::<X>()
}

/// Which impl gave a context: the one for what needs nothing.
#[doc(hidden)]
#[derive(Debug)]
pub enum ByNone {}

/// Which impl gave a context: the one for what needs the toolbox's own.
#[doc(hidden)]
#[derive(Debug)]
pub enum BySame {}

/// A toolbox's context admits tool `T`: `T` needs none, or the toolbox's.
/// The bound of [`ToolboxBuilder::tool`](crate::ToolboxBuilder::tool);
/// `M` is [`ByNone`] or [`BySame`], inferred.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "the tool `{T}` needs a context this toolbox does not give",
    label = "needs another context",
    note = "build the toolbox with `Toolbox::builder().context::<C>()`, `C` the type of the tool's `#[context]` parameter"
)]
pub trait AdmitsTool<T, M> {}

impl<T: crate::Tool> AdmitsTool<T, ByNone> for NoContext where T::Context: ToolNeedsNoContext<T> {}

impl<X, T: crate::Tool, M> AdmitsTool<T, M> for WithContext<X> where
    T::Context: ToolContextIs<X, T, M>
{
}

/// What a tool needs of a toolbox without context: nothing, `()`.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "the tool `{T}` needs a context of type `{Self}`, but this toolbox gives none",
    label = "needs a context of type `{Self}`",
    note = "build the toolbox with `Toolbox::builder().context::<{Self}>()`, and call it with `call_in(&context, name, args)`"
)]
pub trait ToolNeedsNoContext<T> {}

impl<T> ToolNeedsNoContext<T> for () {}

/// What a tool needs of a toolbox that gives `X`: nothing, or `X`.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "the tool `{T}` needs a context of type `{Self}`, but this toolbox gives `{X}`",
    label = "needs a context of type `{Self}`",
    note = "a toolbox gives each call one context: give it a type that holds what each of its tools needs, and have `{T}` take that type"
)]
pub trait ToolContextIs<X, T, M> {}

impl<X, T> ToolContextIs<X, T, ByNone> for () {}

impl<X, T> ToolContextIs<X, T, BySame> for X {}

/// A toolbox's context admits an approval needing `N`: `N` is `()`, or
/// the toolbox's. The bound of [`Toolbox::approve`](crate::Toolbox::approve)
/// and the like; `M` is inferred.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "this approval needs a context this toolbox does not give",
    label = "needs another context",
    note = "build the toolbox with `Toolbox::builder().context::<C>()`, `C` the type the approval's hook takes"
)]
pub trait AdmitsApproval<N, M> {}

impl<N: ApprovalNeedsNoContext> AdmitsApproval<N, ByNone> for NoContext {}

impl<X, N: ApprovalContextIs<X, M>, M> AdmitsApproval<N, M> for WithContext<X> {}

/// What an approval needs of a toolbox without context: nothing.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "this approval needs a context of type `{Self}`, but the toolbox gives none",
    label = "needs a context of type `{Self}`",
    note = "build the toolbox with `Toolbox::builder().context::<{Self}>()`, or ask with `Approval::new`, whose hook takes no context"
)]
pub trait ApprovalNeedsNoContext {}

impl ApprovalNeedsNoContext for () {}

/// What an approval needs of a toolbox that gives `X`: nothing, or `X`.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "this approval needs a context of type `{Self}`, but the toolbox gives `{X}`",
    label = "needs a context of type `{Self}`",
    note = "an approval's hook is given the toolbox's context: take `&{X}` in it"
)]
pub trait ApprovalContextIs<X, M> {}

impl<X> ApprovalContextIs<X, ByNone> for () {}

impl<X> ApprovalContextIs<X, BySame> for X {}

/// A toolbox's calls can be given a `Y`: the bound of
/// [`Toolbox::call_in`](crate::Toolbox::call_in) and the other `_in`
/// methods.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "this toolbox's calls cannot be given a `{Y}`",
    label = "a `{Y}`",
    note = "give the context the toolbox was built with (`Toolbox::builder().context::<C>()`)"
)]
pub trait Takes<Y>: ToolboxContext {
    /// The context given, as the toolbox's own type.
    #[doc(hidden)]
    fn value(given: &Y) -> &Self::Value;
}

impl<Y: NoContextGiven> Takes<Y> for NoContext {
    #[inline(always)]
    fn value(given: &Y) -> &() {
        given.nothing()
    }
}

impl<X: Send + Sync + 'static, Y: ContextIs<X>> Takes<Y> for WithContext<X> {
    #[inline(always)]
    fn value(given: &Y) -> &X {
        given.same()
    }
}

/// What the calls of a toolbox without context can be given: `()`.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "this toolbox gives its tools no context, but a `{Self}` is given",
    label = "no context is taken here",
    note = "give no context (`call` rather than `call_in`, `run` rather than `run_in`), or build the toolbox with `Toolbox::builder().context::<{Self}>()` if its tools are to take a `{Self}`"
)]
pub trait NoContextGiven {
    /// The unit given.
    #[doc(hidden)]
    fn nothing(&self) -> &();
}

impl NoContextGiven for () {
    #[inline(always)]
    fn nothing(&self) -> &() {
        self
    }
}

/// What the calls of a toolbox that gives `X` can be given: an `X`.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "this toolbox's calls are given a context of type `{X}`, not `{Self}`",
    label = "a `{Self}`, where a `&{X}` is expected",
    note = "give the context the toolbox was built with (`Toolbox::builder().context::<{X}>()`): a `&{X}`"
)]
pub trait ContextIs<X> {
    /// The context, as itself.
    #[doc(hidden)]
    fn same(&self) -> &X;
}

impl<X> ContextIs<X> for X {
    #[inline(always)]
    fn same(&self) -> &X {
        self
    }
}

/// What a toolbox's calls are given when none is: `()`, the context of a
/// toolbox without one. The bound of [`Toolbox::call`](crate::Toolbox::call)
/// and [`Toolbox::call_value`](crate::Toolbox::call_value), on the
/// toolbox's context type.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "this toolbox's tools take a context of type `{Self}`, and this call gives none",
    label = "no `{Self}` given",
    note = "give one: `toolbox.call_in(&context, name, args)`, with `context` a `{Self}` (`call_value_in` for arguments already parsed)"
)]
pub trait CallWithoutContext: Send + Sync + 'static {
    /// The context nothing needs.
    #[doc(hidden)]
    fn nothing() -> &'static Self;
}

impl CallWithoutContext for () {
    #[inline(always)]
    fn nothing() -> &'static () {
        &NOTHING
    }
}

/// What a plan run is given when none is: `()`. The bound of
/// [`Interpreter::run`](crate::plan::Interpreter::run),
/// [`Prepared::run`](crate::plan::Prepared::run),
/// [`TypedPlan::run`](crate::plan::typed::TypedPlan::run) and
/// [`Durable::run_plan`](crate::durable::Durable::run_plan), on the
/// toolbox's context type.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "this toolbox's tools take a context of type `{Self}`, and this plan run gives none",
    label = "no `{Self}` given",
    note = "give one, a `{Self}`: `interpreter.run_in(&context, &plan)`, `prepared.run_in(&context)` or `plan.run_in(&toolbox, &context)`; durably, `durable.run_plan_in(&interpreter, &context, run, &plan)` or `resume_plan_in`"
)]
pub trait PlanWithoutContext: Send + Sync + 'static {
    /// The context nothing needs.
    #[doc(hidden)]
    fn nothing() -> &'static Self;
}

impl PlanWithoutContext for () {
    #[inline(always)]
    fn nothing() -> &'static () {
        &NOTHING
    }
}

/// What an agent's run is given when none is: `()`. The bound of
/// [`Agent::run`](crate::agent::Agent::run), `resume`, `run_stream`,
/// `resume_stream` and [`Durable::run_agent`](crate::durable::Durable::run_agent),
/// on the agent's toolbox's context type.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "this agent's tools take a context of type `{Self}`, and this run gives none",
    label = "no `{Self}` given",
    note = "give one: `agent.run_in(&context, task)`, with `context` a `{Self}` (`resume_in`, `run_stream_in` and `resume_stream_in` for the others); durably, `durable.run_agent_in(&agent, &context, run, task)` or `resume_agent_in`"
)]
pub trait AgentWithoutContext: Send + Sync + 'static {
    /// The context nothing needs.
    #[doc(hidden)]
    fn nothing() -> &'static Self;
}

impl AgentWithoutContext for () {
    #[inline(always)]
    fn nothing() -> &'static () {
        &NOTHING
    }
}

/// What an MCP server's calls are given when no function makes a context:
/// `()`. The bound of `McpServer::new`, on the toolbox's context type.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "this toolbox's tools take a context of type `{Self}`, and `McpServer::new` makes none",
    label = "no `{Self}` made",
    note = "serve it with `McpServer::with_context(toolbox, |request| ...)`, the function making each call's `{Self}` from its request (`request.bearer_token()`, `request.header(name)`)"
)]
pub trait ServeWithoutContext: Send + Sync + 'static {
    /// The context nothing needs.
    #[doc(hidden)]
    fn nothing() -> Self;
}

impl ServeWithoutContext for () {
    #[inline(always)]
    fn nothing() {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_that_needs_nothing_gets_nothing_whatever_is_given() {
        let given: &(dyn Any + Send + Sync) = &"a caller";
        assert_eq!(downcast::<()>(given), Some(&()));
        assert_eq!(downcast::<&str>(given), Some(&"a caller"));
        assert_eq!(downcast::<u32>(given), None);
    }
}
