//! The [`Toolbox`]: an explicit allow-list of tools, their catalogs, and the
//! dispatcher of a model's calls.
//!
//! A tool not in the toolbox is never run, whatever the model writes; a tool
//! whose effects are not allowed is never run either; a tool an
//! [`Approval`] asks about runs only once approved, with exactly the
//! arguments approved. Every failure comes back as a
//! [`ToolError`](crate::ToolError) value and leaves the toolbox as it was.

mod approval;
mod builder;
pub mod context;
mod dispatch;
mod erased;
mod lookup;
pub(crate) use lookup::Fnv;
mod output;
mod recovery;
pub(crate) mod timer;
pub(crate) mod trace;

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use serde_json::Value;

use crate::catalog::{self, Catalog, CatalogFormat};
use crate::effect::{EffectSet, Effects, ReadWriteNetwork};
use crate::reader::{CallFormat, ReadError, ToolCall};
use crate::tool::ToolSpec;

pub(crate) use approval::ApprovalNote;
pub(crate) use approval::Hook;
pub use approval::{Approval, ApprovalRequest, Decision};
use approval::{Approvals, Gates};
pub use builder::{BuildError, BuildProblem, ToolboxBuilder};
#[doc(hidden)]
pub use context::{
    AdmitsApproval, AdmitsTool, AgentWithoutContext, ApprovalContextIs, ApprovalNeedsNoContext,
    ByNone, BySame, CallWithoutContext, ContextIs, NoContextGiven, PlanWithoutContext,
    ServeWithoutContext, Takes, ToolContextIs, ToolNeedsNoContext,
};
pub use context::{NoContext, ToolboxContext, WithContext};
pub use dispatch::Call;
use dispatch::Shared;
pub use output::ToolOutput;

/// An explicit allow-list of tools, and the dispatcher of a model's calls.
///
/// `A` is the set of effects the toolbox admits, checked when a typed tool is
/// added: a `Toolbox<Read>` does not compile with a `Write` tool in it. The
/// default admits every effect. `C` is what each call is given besides its
/// arguments, the run's [context]: [`NoContext`] by default (the
/// toolbox is called with [`call`](Self::call)), or
/// [`WithContext<X>`](WithContext), built by
/// [`ToolboxBuilder::context`] and called with [`call_in`](Self::call_in).
/// Cloning is cheap (the tools are shared).
///
/// ```
/// # futures::executor::block_on(async {
/// use typed_tools::{tool, Toolbox, ToolError, effect::EffectSet};
///
/// /// Look up the weather in a city.
/// #[tool(effects = Network)]
/// fn weather(city: String) -> String {
///     format!("sunny in {city}")
/// }
///
/// let toolbox = Toolbox::builder().tool(Weather).build()?;
/// let output = toolbox.call("weather", r#"{"city": "Lima"}"#).await?;
/// assert_eq!(output.json(), r#""sunny in Lima""#);
///
/// // A hallucinated name never runs anything.
/// let error = toolbox.call("wether", "{}").await.unwrap_err();
/// assert_eq!(error.to_string(), "unknown tool `wether`; did you mean `weather`?");
///
/// // Least privilege: a view that allows only reads.
/// let offline = toolbox.restrict(EffectSet::READ);
/// assert!(matches!(
///     offline.call("weather", r#"{"city": "Lima"}"#).await,
///     Err(ToolError::EffectDenied { .. })
/// ));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
///
/// A typed tool whose effects the toolbox does not admit is a compile error:
///
/// ```compile_fail
/// use typed_tools::{tool, Toolbox, effect::Read};
///
/// /// Delete a file.
/// #[tool(effects = Write)]
/// fn delete(path: String) {}
///
/// // error: effect violation: allowed {Read} but got {Write}
/// let toolbox = Toolbox::allowing::<Read>().tool(Delete).build();
/// ```
pub struct Toolbox<A: Effects = ReadWriteNetwork, C: ToolboxContext = NoContext> {
    shared: Arc<Shared>,
    allowed: EffectSet,
    /// The approvals this view asks, in order; `None` for none.
    approvals: Option<Arc<Approvals>>,
    _allowed: PhantomData<fn() -> (A, C)>,
}

impl<A: Effects, C: ToolboxContext> Clone for Toolbox<A, C> {
    fn clone(&self) -> Self {
        Toolbox {
            shared: Arc::clone(&self.shared),
            allowed: self.allowed,
            approvals: self.approvals.clone(),
            _allowed: PhantomData,
        }
    }
}

impl<A: Effects, C: ToolboxContext> fmt::Debug for Toolbox<A, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Toolbox")
            .field("tools", &self.names().collect::<Vec<_>>())
            .field("allowed", &self.allowed)
            .field("approvals", &self.approvals.as_ref().map_or(0, |a| a.len()))
            .finish()
    }
}

impl Toolbox {
    /// The default limit on a call's argument text: 1 MiB, a hundred times
    /// any real tool call, and small enough that a server can parse and
    /// recover many at once (recovering a list of a million wrong values
    /// holds about 40 bytes per byte of text at its peak, `tests/bounds.rs`
    /// measures it). Set another with
    /// [`ToolboxBuilder::max_argument_bytes`].
    ///
    /// ```
    /// use typed_tools::Toolbox;
    ///
    /// assert_eq!(Toolbox::DEFAULT_MAX_ARGUMENT_BYTES, 1 << 20);
    /// let toolbox = Toolbox::builder().build().unwrap();
    /// assert_eq!(toolbox.max_argument_bytes(), Toolbox::DEFAULT_MAX_ARGUMENT_BYTES);
    /// ```
    pub const DEFAULT_MAX_ARGUMENT_BYTES: usize = 1 << 20;

    /// Starts a toolbox that admits every effect (see [`ToolboxBuilder`]).
    ///
    /// ```
    /// use typed_tools::{tool, Toolbox};
    ///
    /// /// Delete a note by its id.
    /// #[tool(effects = Write)]
    /// fn delete_note(id: u32) -> bool { id > 0 }
    ///
    /// let toolbox = Toolbox::builder().tool(DeleteNote).build().unwrap();
    /// assert_eq!(toolbox.names().collect::<Vec<_>>(), ["delete_note"]);
    /// ```
    pub fn builder() -> ToolboxBuilder<ReadWriteNetwork> {
        ToolboxBuilder::new()
    }

    /// Starts a toolbox that admits only the effects `A`:
    /// `Toolbox::allowing::<Read>()`. Adding a tool with other effects does not
    /// compile.
    ///
    /// ```
    /// use typed_tools::effect::{EffectSet, Read};
    /// use typed_tools::{tool, Toolbox};
    ///
    /// /// List the notes.
    /// #[tool(effects = Read)]
    /// fn list_notes() -> Vec<String> { vec![] }
    ///
    /// let toolbox = Toolbox::allowing::<Read>().tool(ListNotes).build().unwrap();
    /// assert_eq!(toolbox.allowed(), EffectSet::READ);
    /// ```
    pub fn allowing<A: Effects>() -> ToolboxBuilder<A> {
        ToolboxBuilder::new()
    }
}

impl<A: Effects, C: ToolboxContext> Toolbox<A, C> {
    /// The longest argument text a call may send, in bytes
    /// ([`ToolboxBuilder::max_argument_bytes`]).
    ///
    /// ```
    /// use typed_tools::Toolbox;
    ///
    /// let toolbox = Toolbox::builder().max_argument_bytes(4096).build().unwrap();
    /// assert_eq!(toolbox.max_argument_bytes(), 4096);
    /// ```
    pub fn max_argument_bytes(&self) -> usize {
        self.shared.max_argument_bytes
    }

    /// The effects allowed now: `A`, or less after [`restrict`](Self::restrict).
    ///
    /// ```
    /// use typed_tools::effect::EffectSet;
    /// use typed_tools::Toolbox;
    ///
    /// let toolbox = Toolbox::builder().build().unwrap();
    /// assert_eq!(toolbox.allowed(), EffectSet::ALL);
    /// assert_eq!(toolbox.restrict(EffectSet::READ).allowed(), EffectSet::READ);
    /// ```
    pub fn allowed(&self) -> EffectSet {
        self.allowed
    }

    /// A least-privilege view of the same tools: only tools whose effects are in
    /// `allowed` (and in what this toolbox allows already) are listed in
    /// catalogs and can be called; calling another gives
    /// [`ToolError::EffectDenied`](crate::ToolError::EffectDenied).
    ///
    /// ```
    /// use typed_tools::{tool, Toolbox, effect::EffectSet};
    ///
    /// /// Read a note.
    /// #[tool(effects = Read)]
    /// fn read_note(id: u32) -> String { format!("note {id}") }
    /// /// Write a note.
    /// #[tool(effects = Write)]
    /// fn write_note(id: u32, text: String) {}
    ///
    /// let toolbox = Toolbox::builder().tool(ReadNote).tool(WriteNote).build().unwrap();
    /// let readonly = toolbox.restrict(EffectSet::READ);
    /// assert_eq!(readonly.names().collect::<Vec<_>>(), ["read_note"]);
    /// assert_eq!(toolbox.names().count(), 2);
    /// ```
    pub fn restrict(&self, allowed: EffectSet) -> Toolbox<A, C> {
        Toolbox {
            shared: Arc::clone(&self.shared),
            allowed: self.allowed.intersection(allowed),
            approvals: self.approvals.clone(),
            _allowed: PhantomData,
        }
    }

    /// A view of the same tools in which `approval` is asked before each
    /// call of a tool it asks about (`Write` tools, unless it says
    /// otherwise), after the approvals this view asks already: a view
    /// never asks less than the one it came from. The hook sees exactly
    /// the arguments the tool will run with, after any repair or rewrite;
    /// a refusal is [`ToolError::Refused`](crate::ToolError::Refused) and
    /// the tool does not run. Calls of tools no approval asks about take
    /// the same path as without one. See [`Approval`].
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::toolbox::{Approval, Decision};
    /// use typed_tools::{tool, NextStep, Toolbox};
    ///
    /// /// Delete a note.
    /// #[tool(effects = Write)]
    /// fn delete_note(id: u32) {}
    ///
    /// let toolbox = Toolbox::builder().tool(DeleteNote).build()?;
    /// let guarded = toolbox.approve(Approval::new(|_| Decision::Refuse("notes are kept".into())));
    /// let error = guarded.call("delete_note", r#"{"id": 7}"#).await.unwrap_err();
    /// assert_eq!(error.to_string(), "the call to `delete_note` was refused: notes are kept");
    /// assert_eq!(error.next_step(), NextStep::Adapt);
    /// // The toolbox it came from asks no one.
    /// assert!(toolbox.call("delete_note", r#"{"id": 7}"#).await.is_ok());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    ///
    /// An approval made by [`Approval::with_context`] is given each call's
    /// context, and needs a toolbox that gives that context.
    pub fn approve<N, M>(&self, approval: Approval<'static, N>) -> Toolbox<A, C>
    where
        C: AdmitsApproval<N, M>,
    {
        self.approve_hook(approval.into_hook())
    }

    /// [`approve`](Self::approve), the approval's context type checked.
    pub(crate) fn approve_hook(&self, approval: Hook<'static>) -> Toolbox<A, C> {
        let specs = self.shared.entries.iter().map(|entry| &entry.spec);
        let approvals = Approvals::with(self.approvals.as_deref(), approval, specs);
        Toolbox {
            shared: Arc::clone(&self.shared),
            allowed: self.allowed,
            approvals: Some(Arc::new(approvals)),
            _allowed: PhantomData,
        }
    }

    /// This view, with `observer` told of each call its approvals approved
    /// (after all of them did, with the arguments that run); the same view
    /// when it asks no approval.
    pub(crate) fn observe_approvals(
        &self,
        observer: impl Fn(&ApprovalRequest) + Send + Sync + 'static,
    ) -> Toolbox<A, C> {
        let Some(approvals) = &self.approvals else {
            return self.clone();
        };
        Toolbox {
            shared: Arc::clone(&self.shared),
            allowed: self.allowed,
            approvals: Some(Arc::new(approvals.observed(observer))),
            _allowed: PhantomData,
        }
    }

    /// This toolbox with the approvals of `view` (another toolbox's view),
    /// each asked about this toolbox's tools as it would be about any: for
    /// a tool an agent adds (its output tool), which passes the same
    /// approvals as the agent's own.
    /// The result gives the view's context: an approval that needs one is
    /// given it.
    pub(crate) fn carry_approvals<B: Effects, D: ToolboxContext>(
        &self,
        view: &Toolbox<B, D>,
    ) -> Toolbox<A, D> {
        let Some(approvals) = &view.approvals else {
            return Toolbox {
                shared: Arc::clone(&self.shared),
                allowed: self.allowed,
                approvals: self.approvals.clone(),
                _allowed: PhantomData,
            };
        };
        let specs = self.shared.entries.iter().map(|entry| &entry.spec);
        Toolbox {
            shared: Arc::clone(&self.shared),
            allowed: self.allowed,
            approvals: Some(Arc::new(approvals.rescoped(specs))),
            _allowed: PhantomData,
        }
    }

    fn gates(&self) -> Gates<'_> {
        Gates {
            view: self.approvals.as_deref(),
            extra: None,
            noted: None,
        }
    }

    /// Whether a call of `name` is asked about by this view's approvals, or
    /// by `extra` (a plan run's).
    pub(crate) fn asks_approval(&self, name: &str, extra: Option<&Hook<'_>>) -> bool {
        let Some((index, entry)) = self.shared.find(name) else {
            return false;
        };
        Gates {
            extra,
            ..self.gates()
        }
        .ask_about(index, &entry.spec)
    }

    /// [`call_given`](Self::call_given), `noted` told of each call its
    /// approvals approved before it runs.
    pub(crate) fn call_noted<'a>(
        &'a self,
        context: &'a C::Value,
        name: &'a str,
        args: Cow<'a, str>,
        noted: Option<&'a dyn ApprovalNote>,
    ) -> Call<'a, C> {
        let gates = Gates {
            noted,
            ..self.gates()
        };
        self.call_through(gates, context, name, args)
    }

    /// A call through `gates`.
    #[inline]
    fn call_through<'a>(
        &'a self,
        gates: Gates<'a>,
        context: &'a C::Value,
        name: &'a str,
        args: Cow<'a, str>,
    ) -> Call<'a, C> {
        Call::new(
            &self.shared,
            self.allowed,
            gates,
            name,
            args,
            C::given(context),
        )
    }

    /// The names of the tools that can be called here, in the order they were added.
    ///
    /// ```
    /// use typed_tools::effect::EffectSet;
    /// use typed_tools::{tool, Toolbox};
    ///
    /// /// Get one note by its id.
    /// #[tool(effects = Read)]
    /// fn get_note(id: u32) -> String { format!("note {id}") }
    /// /// Delete a note by its id.
    /// #[tool(effects = Write)]
    /// fn delete_note(id: u32) -> bool { id > 0 }
    ///
    /// let toolbox = Toolbox::builder().tool(GetNote).tool(DeleteNote).build().unwrap();
    /// assert_eq!(toolbox.names().collect::<Vec<_>>(), ["get_note", "delete_note"]);
    /// assert_eq!(toolbox.restrict(EffectSet::READ).names().collect::<Vec<_>>(), ["get_note"]);
    /// ```
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.shared.names(self.allowed)
    }

    /// The specs of the tools that can be called here, in the order they were added.
    ///
    /// ```
    /// use typed_tools::{tool, Toolbox};
    ///
    /// /// Get one note by its id.
    /// #[tool(effects = Read)]
    /// fn get_note(id: u32) -> String { format!("note {id}") }
    ///
    /// let toolbox = Toolbox::builder().tool(GetNote).build().unwrap();
    /// let descriptions: Vec<&str> = toolbox.specs().map(|spec| spec.description()).collect();
    /// assert_eq!(descriptions, ["Get one note by its id."]);
    /// ```
    pub fn specs(&self) -> impl Iterator<Item = &ToolSpec> {
        self.shared
            .entries
            .iter()
            .map(|entry| &entry.spec)
            .filter(move |spec| spec.effects().is_subset_of(self.allowed))
    }

    /// The spec of tool `name`, if it can be called here.
    ///
    /// ```
    /// use typed_tools::effect::EffectSet;
    /// use typed_tools::{tool, Toolbox};
    ///
    /// /// Delete a note by its id.
    /// #[tool(effects = Write)]
    /// fn delete_note(id: u32) -> bool { id > 0 }
    ///
    /// let toolbox = Toolbox::builder().tool(DeleteNote).build().unwrap();
    /// assert_eq!(toolbox.spec("delete_note").unwrap().effects(), EffectSet::WRITE);
    /// assert!(toolbox.restrict(EffectSet::READ).spec("delete_note").is_none());
    /// ```
    pub fn spec(&self, name: &str) -> Option<&ToolSpec> {
        self.shared
            .entry(name, self.allowed)
            .ok()
            .map(|entry| &entry.spec)
    }

    /// The spec of tool `name` if the toolbox has it, whether or not this
    /// view allows its effects: a refusal then says what the tool does
    /// rather than that it is missing.
    pub(crate) fn spec_in_any_view(&self, name: &str) -> Option<&ToolSpec> {
        self.shared
            .entry(name, EffectSet::ALL)
            .ok()
            .map(|entry| &entry.spec)
    }

    /// What a call of `name` is refused with when this view is all a caller
    /// can see: [`ToolError::UnknownTool`](crate::ToolError::UnknownTool),
    /// with the nearest names among the tools it allows, as for a name the
    /// toolbox does not have. For a server whose clients know only the tools
    /// it lists (MCP), where a tool outside the view does not exist, and for
    /// the names nearest to one a plan misspelled.
    pub(crate) fn unknown(&self, name: &str) -> crate::error::ToolError {
        self.shared.unknown(name, self.allowed)
    }

    /// The catalog of the tools that can be called here, in `format`.
    ///
    /// Rendered once per format (and per [`restrict`](Self::restrict)ed set);
    /// later calls return the same catalog.
    ///
    /// ```
    /// use typed_tools::{tool, Toolbox, CatalogFormat};
    ///
    /// /// Add two numbers.
    /// #[tool(effects = Pure)]
    /// fn add(a: i64, b: i64) -> i64 { a + b }
    ///
    /// let toolbox = Toolbox::builder().tool(Add).build().unwrap();
    /// let text = toolbox.catalog(CatalogFormat::Text).to_string();
    /// assert!(text.contains("tool add: {a: Int, b: Int} -{}-> Int"));
    /// let openai = toolbox.catalog(CatalogFormat::OpenAiChat);
    /// assert_eq!(openai.to_json()[0]["function"]["name"], "add");
    /// ```
    pub fn catalog(&self, format: CatalogFormat) -> Catalog {
        let key = (format, self.allowed);
        let mut cache = self
            .shared
            .catalogs
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        cache
            .entry(key)
            .or_insert_with(|| catalog::render(format, &self.specs().collect::<Vec<_>>()))
            .clone()
    }

    /// Calls tool `name` with the model's argument text (a JSON object).
    ///
    /// In order: is the name in the toolbox (else [`ToolError::UnknownTool`](crate::ToolError::UnknownTool))?
    /// are its effects allowed (else [`ToolError::EffectDenied`](crate::ToolError::EffectDenied))? do the
    /// arguments parse (else [`ToolError::InvalidArgs`](crate::ToolError::InvalidArgs)) and fit the input type
    /// (else [`ToolError::Deserialization`](crate::ToolError::Deserialization), naming every problem)? Then the
    /// tool runs once; its error, or a panic, is [`ToolError::Execution`](crate::ToolError::Execution).
    ///
    /// An object in the arguments that gives a key twice, at any depth, is
    /// refused ([`ToolError::Deserialization`](crate::ToolError::Deserialization)
    /// with a [`Problem::Duplicate`](crate::schema::Problem::Duplicate) at
    /// the key's path), for every tool: JSON readers keep one of the two,
    /// not always the same one, so what an approval was shown and what runs
    /// could differ. A typed tool's derived structs refuse it themselves;
    /// an input with maps or free-form JSON is checked for it first, and a
    /// run-time tool's arguments are read so. Recovery does not choose one
    /// of the two either (repair keeps both; coercion does not read them).
    /// [`call_value`](Self::call_value) takes a `Value`, which cannot hold a
    /// key twice.
    ///
    /// Nothing happens until the returned [`Call`] is awaited.
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::{tool, NextStep, Toolbox};
    ///
    /// /// Get one note by its id.
    /// #[tool(effects = Read)]
    /// fn get_note(id: u32) -> Result<String, String> {
    ///     if id == 1 { Ok("buy milk".into()) } else { Err(format!("there is no note {id}")) }
    /// }
    ///
    /// let toolbox = Toolbox::builder().tool(GetNote).build()?;
    /// assert_eq!(toolbox.call("get_note", r#"{"id": 1}"#).await?.json(), r#""buy milk""#);
    /// let error = toolbox.call("get_note", r#"{"id": 2}"#).await.unwrap_err();
    /// assert_eq!(error.next_step(), NextStep::Adapt);
    /// assert_eq!(error.to_string(), "tool `get_note` failed: there is no note 2");
    /// let twice = toolbox.call("get_note", r#"{"id": 1, "id": 2}"#).await.unwrap_err();
    /// assert_eq!(
    ///     twice.to_string(),
    ///     "arguments for `get_note` do not fit its input; $.id: the key is given twice; give each key once"
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    ///
    /// A toolbox whose tools take a context ([`ToolboxBuilder::context`])
    /// is called with [`call_in`](Self::call_in); `call` does not compile
    /// there.
    pub fn call<'a>(&'a self, name: &'a str, args: &'a str) -> Call<'a, C>
    where
        C::Value: CallWithoutContext,
    {
        Call::new(
            &self.shared,
            self.allowed,
            self.gates(),
            name,
            Cow::Borrowed(args),
            C::given(<C::Value as CallWithoutContext>::nothing()),
        )
    }

    /// Calls tool `name` as [`call`](Self::call) does, lending it `context`:
    /// the run's [context] (who is calling, a connection, a request
    /// id), of the type the toolbox was built with
    /// ([`ToolboxBuilder::context`]). The tools that take a `#[context]`
    /// parameter get it, and so do the approvals made by
    /// [`Approval::with_context`]. The toolbox holds no context: calls made
    /// at once with different contexts each see their own.
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::{tool, Toolbox};
    ///
    /// /// Who is calling, and for which request.
    /// struct Caller { name: String, request_id: u64 }
    ///
    /// /// Say hello to the caller.
    /// #[tool(effects = Pure)]
    /// fn hello(#[context] caller: &Caller, greeting: String) -> String {
    ///     format!("{greeting}, {} (request {})", caller.name, caller.request_id)
    /// }
    ///
    /// let toolbox = Toolbox::builder().context::<Caller>().tool(Hello).build()?;
    /// let ana = Caller { name: "ana".into(), request_id: 7 };
    /// let bob = Caller { name: "bob".into(), request_id: 8 };
    /// let (to_ana, to_bob) = futures::join!(
    ///     toolbox.call_in(&ana, "hello", r#"{"greeting": "hi"}"#),
    ///     toolbox.call_in(&bob, "hello", r#"{"greeting": "hello"}"#),
    /// );
    /// assert_eq!(to_ana?.json(), r#""hi, ana (request 7)""#);
    /// assert_eq!(to_bob?.json(), r#""hello, bob (request 8)""#);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn call_in<'a, X>(&'a self, context: &'a X, name: &'a str, args: &'a str) -> Call<'a, C>
    where
        C: Takes<X>,
    {
        self.call_given(C::value(context), name, Cow::Borrowed(args))
    }

    /// [`call_in`](Self::call_in) with arguments already parsed, as
    /// [`call_value`](Self::call_value) is to [`call`](Self::call).
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::{tool, Toolbox};
    ///
    /// /// Who is calling.
    /// struct Caller { name: String }
    ///
    /// /// Sign a text with the caller's name.
    /// #[tool(effects = Pure)]
    /// fn sign(#[context] caller: &Caller, text: String) -> String { format!("{text} -- {}", caller.name) }
    ///
    /// let toolbox = Toolbox::builder().context::<Caller>().tool(Sign).build()?;
    /// let ana = Caller { name: "ana".into() };
    /// let output = toolbox.call_value_in(&ana, "sign", &serde_json::json!({"text": "hi"})).await?;
    /// assert_eq!(output.to_value(), serde_json::json!("hi -- ana"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn call_value_in<'a, X>(
        &'a self,
        context: &'a X,
        name: &'a str,
        args: &Value,
    ) -> Call<'a, C>
    where
        C: Takes<X>,
    {
        self.call_given(
            C::value(context),
            name,
            Cow::Owned(crate::json::to_text(args)),
        )
    }

    /// A call lent `context`, the toolbox's own type: for the crate's
    /// callers generic over `C` (plans, the MCP server).
    pub(crate) fn call_given<'a>(
        &'a self,
        context: &'a C::Value,
        name: &'a str,
        args: Cow<'a, str>,
    ) -> Call<'a, C> {
        self.call_through(self.gates(), context, name, args)
    }

    /// Reads the tool calls in a model's answer (see [`reader`](crate::reader) for
    /// the formats). Pythonic calls' positional arguments are named by the
    /// tools' parameter order. The names are not checked here: an unknown
    /// name is reported when the call is made. A JSON value in the answer
    /// (a call, a list of calls, a provider's response) is read only when
    /// its text is at most [`max_argument_bytes`](Self::max_argument_bytes)
    /// and 64 KiB more (for names, ids and layout): a longer one could only
    /// hold arguments this toolbox refuses, so it is measured without being
    /// built (a JSON value can take 40 times its text) and refused with a
    /// [`ReadError`] that says so.
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::{tool, CallFormat, Toolbox};
    ///
    /// /// Add two numbers.
    /// #[tool(effects = Pure)]
    /// fn add(a: i64, b: i64) -> i64 { a + b }
    ///
    /// let toolbox = Toolbox::builder().tool(Add).build()?;
    /// let calls = toolbox.read_calls(CallFormat::Auto, "[add(2, b=3), add(a=1, b=1)]")?;
    /// assert_eq!(calls[0].arguments, r#"{"a":2,"b":3}"#);
    /// let mut sums = Vec::new();
    /// for call in &calls {
    ///     sums.push(toolbox.call(&call.name, &call.arguments).await?.into_json());
    /// }
    /// assert_eq!(sums, ["5", "2"]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn read_calls(&self, format: CallFormat, text: &str) -> Result<Vec<ToolCall>, ReadError> {
        let parameters = |name: &str| {
            self.shared
                .entry(name, EffectSet::ALL)
                .ok()
                .map(|entry| entry.spec.parameters().map(str::to_owned).collect())
        };
        let max_json = crate::reader::read_limit(self.shared.max_argument_bytes);
        crate::reader::read_calls_with(format, text, &parameters, max_json)
    }

    /// Calls tool `name` with arguments already parsed: as
    /// [`call`](Self::call) with their JSON text. Arguments of any depth are
    /// safe to pass: those nested deeper than JSON text is read (128 levels)
    /// are refused as [`ToolError::InvalidArgs`](crate::ToolError::InvalidArgs).
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::{tool, Toolbox};
    ///
    /// /// Get one note by its id.
    /// #[tool(effects = Read)]
    /// fn get_note(id: u32) -> String { format!("note {id}") }
    ///
    /// let toolbox = Toolbox::builder().tool(GetNote).build()?;
    /// let output = toolbox.call_value("get_note", &serde_json::json!({"id": 3})).await?;
    /// assert_eq!(output.to_value(), serde_json::json!("note 3"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn call_value<'a>(&'a self, name: &'a str, args: &Value) -> Call<'a, C>
    where
        C::Value: CallWithoutContext,
    {
        Call::new(
            &self.shared,
            self.allowed,
            self.gates(),
            name,
            Cow::Owned(crate::json::to_text(args)),
            C::given(<C::Value as CallWithoutContext>::nothing()),
        )
    }

    /// Calls tool `name` with argument text, as [`call`](Self::call)
    /// does, lent `context`; `approval`, if any, is asked after this view's
    /// own. For plans, which write their arguments' text themselves.
    pub(crate) fn call_with<'a>(
        &'a self,
        name: &'a str,
        args: &'a str,
        approval: Option<&'a Hook<'a>>,
        context: &'a C::Value,
        noted: Option<&'a dyn ApprovalNote>,
    ) -> Call<'a, C> {
        let gates = Gates {
            extra: approval,
            noted,
            ..self.gates()
        };
        self.call_through(gates, context, name, Cow::Borrowed(args))
    }
}
