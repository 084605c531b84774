//! The [`Toolbox`]: an explicit allow-list of tools, their catalogs, and the
//! dispatcher of a model's calls.
//!
//! A tool not in the toolbox is never run, whatever the model writes; a tool
//! whose effects are not allowed is never run either. Every failure comes back
//! as a [`ToolError`] value and leaves the toolbox as it was.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::hash::{BuildHasherDefault, Hasher};
use std::marker::PhantomData;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use serde_json::Value;

use crate::call::{CallFormat, ReadError, ToolCall};
use crate::catalog::{self, Catalog, CatalogFormat};
use crate::effect::{Effect, EffectSet, Effects, ReadWriteNetwork, SubsetOf};
use crate::error::ToolError;
use crate::recover::{self, Policy, Retry, Retryable};
use crate::tool::{DynamicTool, Erased, ErasedTool, Failure, Tool, ToolOutput, ToolSpec, Typed};

/// An explicit allow-list of tools, and the dispatcher of a model's calls.
///
/// `A` is the set of effects the toolbox admits, checked when a typed tool is
/// added: a `Toolbox<Read>` does not compile with a `Write` tool in it. The
/// default admits every effect. Cloning is cheap (the tools are shared).
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
pub struct Toolbox<A: Effects = ReadWriteNetwork> {
    shared: Arc<Shared>,
    allowed: EffectSet,
    _allowed: PhantomData<fn() -> A>,
}

struct Shared {
    entries: Vec<Entry>,
    by_name: HashMap<String, usize, BuildHasherDefault<Fnv>>,
    catalogs: Mutex<HashMap<(CatalogFormat, EffectSet), Catalog>>,
}

pub(crate) struct Entry {
    pub(crate) spec: ToolSpec,
    /// The arguments' type in λ-Tool notation, for error messages.
    pub(crate) args_type: String,
    tool: Box<dyn ErasedTool>,
    /// The tool's own policy, or the toolbox's default.
    pub(crate) policy: Policy,
}

impl<A: Effects> Clone for Toolbox<A> {
    fn clone(&self) -> Self {
        Toolbox {
            shared: Arc::clone(&self.shared),
            allowed: self.allowed,
            _allowed: PhantomData,
        }
    }
}

impl<A: Effects> fmt::Debug for Toolbox<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Toolbox")
            .field("tools", &self.names().collect::<Vec<_>>())
            .field("allowed", &self.allowed)
            .finish()
    }
}

impl Toolbox {
    /// Starts a toolbox that admits every effect.
    pub fn builder() -> ToolboxBuilder<ReadWriteNetwork> {
        ToolboxBuilder::new()
    }

    /// Starts a toolbox that admits only the effects `A`:
    /// `Toolbox::allowing::<Read>()`. Adding a tool with other effects does not
    /// compile.
    pub fn allowing<A: Effects>() -> ToolboxBuilder<A> {
        ToolboxBuilder::new()
    }
}

impl<A: Effects> Toolbox<A> {
    /// The effects allowed now: `A`, or less after [`restrict`](Self::restrict).
    pub fn allowed(&self) -> EffectSet {
        self.allowed
    }

    /// A least-privilege view of the same tools: only tools whose effects are in
    /// `allowed` (and in what this toolbox allows already) are listed in
    /// catalogs and can be called; calling another gives
    /// [`ToolError::EffectDenied`].
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
    pub fn restrict(&self, allowed: EffectSet) -> Toolbox<A> {
        Toolbox {
            shared: Arc::clone(&self.shared),
            allowed: self.allowed.intersection(allowed),
            _allowed: PhantomData,
        }
    }

    /// The names of the tools that can be called here, in the order they were added.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.shared.names(self.allowed)
    }

    /// The specs of the tools that can be called here, in the order they were added.
    pub fn specs(&self) -> impl Iterator<Item = &ToolSpec> {
        self.shared
            .entries
            .iter()
            .map(|entry| &entry.spec)
            .filter(move |spec| spec.effects().is_subset_of(self.allowed))
    }

    /// The spec of tool `name`, if it can be called here.
    pub fn spec(&self, name: &str) -> Option<&ToolSpec> {
        self.shared
            .entry(name, self.allowed)
            .ok()
            .map(|entry| &entry.spec)
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
    /// In order: is the name in the toolbox (else [`ToolError::UnknownTool`])?
    /// are its effects allowed (else [`ToolError::EffectDenied`])? do the
    /// arguments parse (else [`ToolError::InvalidArgs`]) and fit the input type
    /// (else [`ToolError::Deserialization`], naming every problem)? Then the
    /// tool runs once; its error, or a panic, is [`ToolError::Execution`].
    ///
    /// Nothing happens until the returned [`Call`] is awaited.
    pub fn call<'a>(&'a self, name: &'a str, args: &'a str) -> Call<'a> {
        Call::new(
            &self.shared,
            self.allowed,
            name,
            Args::Text(Cow::Borrowed(args)),
        )
    }

    /// Reads the tool calls in a model's answer (see [`call`](crate::call) for
    /// the formats). Pythonic calls' positional arguments are named by the
    /// tools' parameter order. The names are not checked here: an unknown
    /// name is reported when the call is made.
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
        crate::call::read_calls_with(format, text, &parameters)
    }

    /// Calls tool `name` with arguments already parsed.
    pub fn call_value<'a>(&'a self, name: &'a str, args: &Value) -> Call<'a> {
        Call::new(
            &self.shared,
            self.allowed,
            name,
            Args::Text(Cow::Owned(args.to_string())),
        )
    }

    /// Calls tool `name` with arguments already parsed, read straight from
    /// the value instead of from its text; the outcome and every error are
    /// those of [`call_value`](Self::call_value). For plans.
    pub(crate) fn call_json<'a>(&'a self, name: &'a str, args: &'a Value) -> Call<'a> {
        Call::new(&self.shared, self.allowed, name, Args::Json(args))
    }
}

impl Shared {
    fn names(&self, allowed: EffectSet) -> impl Iterator<Item = &str> {
        self.entries
            .iter()
            .filter(move |entry| entry.spec.effects().is_subset_of(allowed))
            .map(|entry| entry.spec.name())
    }

    #[inline]
    fn index(&self, name: &str) -> Option<usize> {
        // A scan beats hashing for the handful of tools most toolboxes hold.
        if self.entries.len() <= SCAN_LIMIT {
            self.entries
                .iter()
                .position(|entry| entry.spec.name() == name)
        } else {
            self.by_name.get(name).copied()
        }
    }

    #[inline]
    fn entry(&self, name: &str, allowed: EffectSet) -> Result<&Entry, ToolError> {
        let Some(index) = self.index(name) else {
            return Err(self.unknown(name, allowed));
        };
        let entry = &self.entries[index];
        if !entry.spec.effects().is_subset_of(allowed) {
            return Err(ToolError::EffectDenied {
                tool: name.to_owned(),
                effects: entry.spec.effects(),
                allowed,
            });
        }
        Ok(entry)
    }

    /// Off the fast path: a name the toolbox does not have. A hostile name
    /// (a model can send 200 KB of one) gets no suggestions and is shortened.
    #[cold]
    fn unknown(&self, name: &str, allowed: EffectSet) -> ToolError {
        const LONGEST: usize = 128;
        let available: Vec<String> = self.names(allowed).map(str::to_owned).collect();
        let suggestions = if name.len() <= LONGEST {
            nearest(name, &available)
        } else {
            Vec::new()
        };
        let name = match name.char_indices().nth(LONGEST) {
            Some((cut, _)) => format!("{}…", &name[..cut]),
            None => name.to_owned(),
        };
        ToolError::UnknownTool {
            name,
            suggestions,
            available,
        }
    }
}

impl Entry {
    /// Starts one call: done already, or a future to poll. A panic is a failure.
    #[inline]
    fn start<'a>(&'a self, args: &str) -> Erased<'a> {
        match std::panic::catch_unwind(AssertUnwindSafe(|| self.tool.call(&self.spec, args))) {
            Ok(erased) => erased,
            Err(panic) => Erased::Done(Err(Failure::Panicked(panic_message(panic)))),
        }
    }

    /// Starts one call with parsed arguments: from the value itself, unless
    /// the tool refuses them before running (then from their text, so that
    /// the error, and any recovery, is the text path's) or they nest deeper
    /// than the text parser reads (then the text path refuses them).
    fn start_json<'a>(&'a self, args: &'a Value) -> (Erased<'a>, Args<'a>) {
        if nests_within(args, JSON_NESTING) {
            let call = AssertUnwindSafe(|| self.tool.call_json(&self.spec, args));
            match std::panic::catch_unwind(call) {
                Ok(Erased::Done(Err(Failure::Args(_) | Failure::Schema(_)))) => {}
                Ok(erased) => return (erased, Args::Json(args)),
                Err(panic) => {
                    let failure = Failure::Panicked(panic_message(panic));
                    return (Erased::Done(Err(failure)), Args::Json(args));
                }
            }
        }
        let text = args.to_string();
        (self.start(&text), Args::Text(Cow::Owned(text)))
    }

    fn poll_running(
        future: &mut BoxFuture<'_, Result<String, Failure>>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<String, Failure>> {
        match std::panic::catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(cx))) {
            Ok(poll) => poll,
            Err(panic) => Poll::Ready(Err(Failure::Panicked(panic_message(panic)))),
        }
    }

    /// One call to the end, for recovery, which calls again.
    pub(crate) async fn run(&self, args: &str) -> Result<String, Failure> {
        match self.start(args) {
            Erased::Done(result) => result,
            Erased::Running(mut future) => {
                futures::future::poll_fn(|cx| Entry::poll_running(&mut future, cx)).await
            }
        }
    }

    /// The slow path: the fast deserializer said no; say precisely why.
    pub(crate) fn explain(&self, args: &str, failure: Failure) -> ToolError {
        let tool = self.spec.name().to_owned();
        let expected = self.args_type.clone();
        match failure {
            Failure::Args(error) => match serde_json::from_str::<Value>(args) {
                Err(syntax) => ToolError::InvalidArgs {
                    tool,
                    // serde_json stops at 128 levels: say so in words a model can act on.
                    message: if syntax.to_string().starts_with("recursion limit exceeded") {
                        format!(
                            "nested more than 128 levels deep at line {} column {}; send flatter arguments",
                            syntax.line(),
                            syntax.column()
                        )
                    } else {
                        syntax.to_string()
                    },
                    excerpt: excerpt(args),
                    expected,
                },
                Ok(value) => {
                    let problems = self.spec.input_model().check(&value);
                    // Only when the schema saw nothing wrong does the
                    // deserializer's own message add something.
                    let message = problems.is_empty().then(|| {
                        error.map_or_else(|| "expected a JSON object".to_owned(), |e| e.to_string())
                    });
                    ToolError::Deserialization {
                        tool,
                        problems,
                        message,
                        expected,
                    }
                }
            },
            Failure::Schema(ToolError::Deserialization {
                problems, message, ..
            }) => ToolError::Deserialization {
                tool,
                problems,
                message,
                expected,
            },
            Failure::Schema(other) => other,
            Failure::Tool(message) => ToolError::Execution {
                tool,
                message,
                panicked: false,
            },
            Failure::Panicked(message) => ToolError::Execution {
                tool,
                message,
                panicked: true,
            },
            Failure::Output(error) => ToolError::Execution {
                tool,
                message: format!("its output could not be serialized: {error}"),
                panicked: false,
            },
        }
    }
}

/// The future of [`Toolbox::call`]: one call of one tool.
///
/// On its first poll it looks the tool up, checks its effects, deserializes the
/// arguments and, for a sync tool, runs it; an async tool's future is polled
/// from then on. A panic in the tool is caught and returned as
/// [`ToolError::Execution`]. `Unpin` and `Send`.
#[must_use = "a call does nothing unless it is awaited"]
pub struct Call<'a> {
    state: CallState<'a>,
}

enum CallState<'a> {
    Start {
        shared: &'a Shared,
        allowed: EffectSet,
        name: &'a str,
        args: Args<'a>,
    },
    Running {
        entry: &'a Entry,
        args: Args<'a>,
        future: BoxFuture<'a, Result<String, Failure>>,
    },
    /// A failure met the tool's policy: repair, coerce, retry, escalate.
    Recovering(BoxFuture<'a, Result<ToolOutput, ToolError>>),
    Done,
}

/// A call's arguments: the model's text, or JSON already parsed (a plan's).
enum Args<'a> {
    Text(Cow<'a, str>),
    Json(&'a Value),
}

impl<'a> Args<'a> {
    /// The arguments as text, which error messages and recovery read.
    fn into_text(self) -> Cow<'a, str> {
        match self {
            Args::Text(text) => text,
            Args::Json(value) => Cow::Owned(value.to_string()),
        }
    }
}

/// How deeply parsed arguments may nest to be read from the value: below
/// serde_json's parser's limit (128), where reading the text would fail.
const JSON_NESTING: usize = 100;

/// Whether `value` nests at most `limit` arrays and objects deep.
fn nests_within(value: &Value, limit: usize) -> bool {
    match value {
        Value::Array(items) => limit > 0 && items.iter().all(|v| nests_within(v, limit - 1)),
        Value::Object(fields) => limit > 0 && fields.values().all(|v| nests_within(v, limit - 1)),
        _ => true,
    }
}

impl<'a> Call<'a> {
    fn new(shared: &'a Shared, allowed: EffectSet, name: &'a str, args: Args<'a>) -> Call<'a> {
        Call {
            state: CallState::Start {
                shared,
                allowed,
                name,
                args,
            },
        }
    }
}

impl Future for Call<'_> {
    type Output = Result<ToolOutput, ToolError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        loop {
            let (entry, args, failure) = match std::mem::replace(&mut this.state, CallState::Done) {
                CallState::Start {
                    shared,
                    allowed,
                    name,
                    args,
                } => {
                    let entry = match shared.entry(name, allowed) {
                        Ok(entry) => entry,
                        Err(error) => return Poll::Ready(Err(error)),
                    };
                    let (erased, args) = match args {
                        Args::Text(text) => (entry.start(&text), Args::Text(text)),
                        Args::Json(value) => entry.start_json(value),
                    };
                    match erased {
                        Erased::Done(Ok(json)) => {
                            return Poll::Ready(Ok(ToolOutput::from_json(json)))
                        }
                        Erased::Done(Err(failure)) => (entry, args, failure),
                        Erased::Running(future) => {
                            this.state = CallState::Running {
                                entry,
                                args,
                                future,
                            };
                            continue;
                        }
                    }
                }
                CallState::Running {
                    entry,
                    args,
                    mut future,
                } => match Entry::poll_running(&mut future, cx) {
                    Poll::Pending => {
                        this.state = CallState::Running {
                            entry,
                            args,
                            future,
                        };
                        return Poll::Pending;
                    }
                    Poll::Ready(Ok(json)) => return Poll::Ready(Ok(ToolOutput::from_json(json))),
                    Poll::Ready(Err(failure)) => (entry, args, failure),
                },
                CallState::Recovering(mut future) => {
                    let poll = future.as_mut().poll(cx);
                    if poll.is_pending() {
                        this.state = CallState::Recovering(future);
                    }
                    return poll;
                }
                CallState::Done => panic!("`Call` polled after it completed"),
            };
            // The fast path failed: explain, or hand over to the tool's policy.
            let args = args.into_text();
            if entry.policy.is_none() {
                return Poll::Ready(Err(entry.explain(&args, failure)));
            }
            this.state = CallState::Recovering(Box::pin(recover::recover(
                entry,
                args.into_owned(),
                failure,
            )));
        }
    }
}

impl fmt::Debug for Call<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match &self.state {
            CallState::Start { name, .. } => format!("not started: {name}"),
            CallState::Running { entry, .. } => format!("running: {}", entry.spec.name()),
            CallState::Recovering(_) => "recovering".to_owned(),
            CallState::Done => "done".to_owned(),
        };
        f.debug_tuple("Call").field(&state).finish()
    }
}

/// Up to this many tools, a name is found by a scan; past it, by the map.
const SCAN_LIMIT: usize = 8;

/// FNV-1a, for the name map: names are short, and SipHash's protection against
/// flooding buys nothing here, since only the toolbox inserts keys (a model's
/// names are only looked up). SipHash was a sixth of the dispatch overhead.
#[derive(Default)]
struct Fnv(u64);

impl Hasher for Fnv {
    fn write(&mut self, bytes: &[u8]) {
        let mut hash = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for byte in bytes {
            hash = (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = hash;
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

pub(crate) fn panic_message(panic: Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_owned())
}

fn excerpt(args: &str) -> String {
    let mut short: String = args.chars().take(200).collect();
    if short.len() < args.len() {
        short.push('…');
    }
    short
}

/// The names closest to `name`, best first: same letters in another case or
/// separator style, then by edit distance (at most a third of the name).
fn nearest(name: &str, names: &[String]) -> Vec<String> {
    fn fold(s: &str) -> String {
        s.chars()
            .filter(|c| *c != '_' && *c != '-')
            .flat_map(char::to_lowercase)
            .collect()
    }
    let wanted = fold(name);
    let limit = (wanted.chars().count() / 3).max(1);
    let mut scored: Vec<(usize, &String)> = names
        .iter()
        .filter_map(|candidate| {
            let folded = fold(candidate);
            let distance = edit_distance(&wanted, &folded);
            let contains =
                wanted.len() >= 3 && (folded.contains(&wanted) || wanted.contains(&folded));
            (distance <= limit || contains).then_some((distance, candidate))
        })
        .collect();
    scored.sort_by_key(|(distance, candidate)| (*distance, candidate.len()));
    scored.into_iter().take(3).map(|(_, c)| c.clone()).collect()
}

/// Damerau-Levenshtein distance (adjacent transpositions count once).
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut rows = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in rows.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in rows[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (rows[i - 1][j] + 1)
                .min(rows[i][j - 1] + 1)
                .min(rows[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(rows[i - 2][j - 2] + 1);
            }
            rows[i][j] = best;
        }
    }
    rows[a.len()][b.len()]
}

/// Builds a [`Toolbox`]; problems are collected and reported together by
/// [`build`](Self::build).
pub struct ToolboxBuilder<A: Effects = ReadWriteNetwork> {
    entries: Vec<Entry>,
    default_policy: Policy,
    /// Per-tool policies, by tool name; each replaces the default for its tool.
    policies: Vec<(String, Policy)>,
    _allowed: PhantomData<fn() -> A>,
}

impl<A: Effects> ToolboxBuilder<A> {
    fn new() -> Self {
        ToolboxBuilder {
            entries: Vec::new(),
            default_policy: Policy::none(),
            policies: Vec::new(),
            _allowed: PhantomData,
        }
    }

    /// The recovery policy of every tool without one of its own (see
    /// [`recover`](crate::recover)). The default is [`Policy::none`].
    pub fn policy(mut self, policy: Policy) -> Self {
        self.default_policy = policy;
        self
    }

    /// The recovery policy of tool `name`, instead of the default. A name not
    /// in the toolbox, or a retry for a `Write` tool not declared idempotent, is
    /// reported by [`build`](Self::build).
    ///
    /// ```
    /// use typed_tools::recover::{Policy, Retry};
    /// use typed_tools::{tool, BuildProblem, Toolbox};
    ///
    /// /// Charge a card.
    /// #[tool(effects = Write)]
    /// fn charge(cents: u32) -> String { format!("charged {cents}") }
    ///
    /// let error = Toolbox::builder()
    ///     .tool(Charge)
    ///     .policy_for("charge", Policy::recover().retry(Retry::exponential(3)))
    ///     .build()
    ///     .unwrap_err();
    /// assert!(matches!(error.problems()[0], BuildProblem::RetryNotIdempotent { .. }));
    /// ```
    pub fn policy_for(mut self, name: impl Into<String>, policy: Policy) -> Self {
        let name = name.into();
        self.policies.retain(|(n, _)| *n != name);
        self.policies.push((name, policy));
        self
    }

    /// Retries tool `T`'s execution errors, on top of its policy (its own, or
    /// the default as it is when this is called). `T` must be [`Retryable`]: a
    /// `Write` tool not declared `idempotent` does not compile here.
    ///
    /// ```
    /// use typed_tools::recover::Retry;
    /// use typed_tools::{tool, Toolbox};
    ///
    /// /// Fetch a page.
    /// #[tool(effects = Network)]
    /// fn fetch(url: String) -> String { url }
    ///
    /// let toolbox = Toolbox::builder().tool(Fetch).retry::<Fetch>(Retry::exponential(3)).build();
    /// assert!(toolbox.is_ok());
    /// ```
    pub fn retry<T: Retryable>(self, retry: Retry) -> Self {
        let policy = self
            .policies
            .iter()
            .find(|(name, _)| name == T::NAME)
            .map_or_else(|| self.default_policy.clone(), |(_, policy)| policy.clone());
        self.policy_for(T::NAME, policy.retry(retry))
    }

    /// Adds a typed tool. Its effects must be admitted by the toolbox: this is
    /// checked by the compiler.
    pub fn tool<T>(mut self, tool: T) -> Self
    where
        T: Tool,
        T::Effects: SubsetOf<A>,
    {
        self.push(ToolSpec::of::<T>(), Box::new(Typed(tool)));
        self
    }

    /// Adds a tool defined at run time. Its effects are checked when the
    /// toolbox is built, since the compiler cannot see them.
    pub fn dynamic(mut self, tool: DynamicTool) -> Self {
        let spec = tool.spec.clone();
        self.push(spec, Box::new(tool));
        self
    }

    fn push(&mut self, spec: ToolSpec, tool: Box<dyn ErasedTool>) {
        let args_type = spec.input_model().type_name();
        self.entries.push(Entry {
            spec,
            args_type,
            tool,
            policy: Policy::none(),
        });
    }

    /// Builds the toolbox, or reports every problem: duplicate names, names no
    /// provider accepts, run-time tools with effects the toolbox does not admit
    /// or a schema that is not an object schema.
    pub fn build(mut self) -> Result<Toolbox<A>, BuildError> {
        let mut problems = Vec::new();
        let mut by_name = HashMap::default();
        for (name, _) in &self.policies {
            if !self.entries.iter().any(|entry| entry.spec.name() == name) {
                problems.push(BuildProblem::PolicyForUnknownTool { name: name.clone() });
            }
        }
        for entry in &mut self.entries {
            entry.policy = self
                .policies
                .iter()
                .find(|(name, _)| name == entry.spec.name())
                .map_or_else(|| self.default_policy.clone(), |(_, policy)| policy.clone());
        }
        for (index, entry) in self.entries.iter().enumerate() {
            let name = entry.spec.name();
            if entry.policy.retry.is_some()
                && entry.spec.effects().contains(Effect::Write)
                && !entry.spec.is_idempotent()
            {
                problems.push(BuildProblem::RetryNotIdempotent {
                    name: name.to_owned(),
                });
            }
            if let Err(reason) = check_name(name) {
                problems.push(BuildProblem::InvalidName {
                    name: name.to_owned(),
                    reason,
                });
            }
            if by_name.insert(name.to_owned(), index).is_some() {
                problems.push(BuildProblem::DuplicateName {
                    name: name.to_owned(),
                });
            }
            if !entry.spec.effects().is_subset_of(A::SET) {
                problems.push(BuildProblem::EffectNotAllowed {
                    name: name.to_owned(),
                    effects: entry.spec.effects(),
                    allowed: A::SET,
                });
            }
            if entry
                .spec
                .input_schema()
                .get("type")
                .and_then(Value::as_str)
                != Some("object")
            {
                problems.push(BuildProblem::InputNotObject {
                    name: name.to_owned(),
                });
            }
        }
        if !problems.is_empty() {
            return Err(BuildError { problems });
        }
        Ok(Toolbox {
            shared: Arc::new(Shared {
                entries: self.entries,
                by_name,
                catalogs: Mutex::default(),
            }),
            allowed: A::SET,
            _allowed: PhantomData,
        })
    }
}

/// A name every provider accepts: a letter or `_` first, then letters, digits,
/// `_` and `-`, at most 64 in all (the intersection of OpenAI's, Anthropic's,
/// Gemini's and MCP's rules).
pub(crate) fn check_name(name: &str) -> Result<(), &'static str> {
    let mut chars = name.chars();
    match chars.next() {
        None => return Err("it is empty"),
        Some(c) if !(c.is_ascii_alphabetic() || c == '_') => {
            return Err("it must start with an ASCII letter or `_`")
        }
        _ => {}
    }
    if !chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
        return Err("it may hold only ASCII letters, digits, `_` and `-`");
    }
    if name.len() > 64 {
        return Err("it is longer than 64 characters");
    }
    Ok(())
}

/// Why a toolbox could not be built: every problem found.
#[derive(Clone, Debug, PartialEq)]
pub struct BuildError {
    problems: Vec<BuildProblem>,
}

impl BuildError {
    /// Every problem found.
    pub fn problems(&self) -> &[BuildProblem] {
        &self.problems
    }
}

/// One problem found when building a toolbox.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum BuildProblem {
    /// Two tools have the same name.
    DuplicateName {
        /// The name.
        name: String,
    },
    /// A name some provider would reject.
    InvalidName {
        /// The name.
        name: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A run-time tool with effects the toolbox does not admit.
    EffectNotAllowed {
        /// The tool.
        name: String,
        /// Its effects.
        effects: EffectSet,
        /// What the toolbox admits.
        allowed: EffectSet,
    },
    /// A run-time tool whose input schema is not `{"type": "object", ...}`.
    InputNotObject {
        /// The tool.
        name: String,
    },
    /// A policy with a retry for a `Write` tool not declared idempotent: a
    /// retry could write twice.
    RetryNotIdempotent {
        /// The tool.
        name: String,
    },
    /// A policy given for a tool the toolbox does not have.
    PolicyForUnknownTool {
        /// The name given.
        name: String,
    },
}

impl fmt::Display for BuildProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildProblem::DuplicateName { name } => {
                write!(f, "two tools are named `{name}`; rename one with `#[tool(name = \"...\")]`")
            }
            BuildProblem::InvalidName { name, reason } => write!(
                f,
                "tool name `{name}` is not accepted by every provider: {reason}; use letters, digits, `_` and `-`"
            ),
            BuildProblem::EffectNotAllowed { name, effects, allowed } => write!(
                f,
                "effect violation: allowed {allowed} but got {effects} (tool `{name}`)"
            ),
            BuildProblem::RetryNotIdempotent { name } => write!(
                f,
                "`{name}` writes and is not declared idempotent, so it may not be retried: a retry could write twice; declare it `#[tool(effects = Write, idempotent)]` if a second call does no harm, or remove the retry"
            ),
            BuildProblem::PolicyForUnknownTool { name } => write!(
                f,
                "a policy is given for `{name}`, which is not in the toolbox; check the name"
            ),
            BuildProblem::InputNotObject { name } => write!(
                f,
                "the input schema of `{name}` must be an object schema (`{{\"type\": \"object\", ...}}`)"
            ),
        }
    }
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the toolbox could not be built: ")?;
        for (i, problem) in self.problems.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{problem}")?;
        }
        Ok(())
    }
}

impl std::error::Error for BuildError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_names() {
        let names: Vec<String> = ["lookup_account", "issue_refund", "send_reply"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(nearest("lookupAccount", &names), ["lookup_account"]);
        assert_eq!(nearest("issue_refnud", &names), ["issue_refund"]);
        assert_eq!(nearest("refund", &names), ["issue_refund"]);
        assert!(nearest("delete_everything", &names).is_empty());
    }

    #[test]
    fn names_every_provider_accepts() {
        assert!(check_name("lookup_account").is_ok());
        assert!(check_name("get-weather2").is_ok());
        assert!(check_name("").is_err());
        assert!(check_name("2fast").is_err());
        assert!(check_name("has space").is_err());
        assert!(check_name("dotted.name").is_err());
        assert!(check_name(&"x".repeat(65)).is_err());
    }
}
