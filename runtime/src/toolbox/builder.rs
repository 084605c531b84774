//! [`ToolboxBuilder`]: tools, their policies and the allowed effects in; a
//! [`Toolbox`] or every problem found out.

use std::collections::HashMap;
use std::fmt;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex};

use serde_json::Value;

use super::approval::{Approval, Hook};
use super::context::{AdmitsApproval, AdmitsTool, NoContext, ToolboxContext, WithContext};
use super::dispatch::{Entry, Shared};
use super::erased::{ErasedTool, Typed};
use super::Toolbox;
use crate::effect::{Effect, EffectSet, Effects, ReadWriteNetwork, SubsetOf};
use crate::recover::{Policy, Retry, Retryable};
use crate::tool::{DynamicTool, Tool, ToolSpec};

/// Builds a [`Toolbox`]; problems are collected and reported together by
/// [`build`](Self::build). Start one with [`Toolbox::builder`] (every effect
/// admitted) or [`Toolbox::allowing`] (only the effects given).
///
/// ```
/// use typed_tools::recover::Policy;
/// use typed_tools::{tool, DynamicTool, Toolbox};
/// use typed_tools::effect::EffectSet;
///
/// /// Get one note by its id.
/// #[tool(effects = Read)]
/// fn get_note(id: u32) -> String { format!("note {id}") }
///
/// let toolbox = Toolbox::builder()
///     .tool(GetNote)
///     .dynamic(DynamicTool::new("ping").effects(EffectSet::NETWORK))
///     .policy(Policy::recover())
///     .max_argument_bytes(64 * 1024)
///     .build()?;
/// assert_eq!(toolbox.names().collect::<Vec<_>>(), ["get_note", "ping"]);
/// # Ok::<(), typed_tools::BuildError>(())
/// ```
///
/// `C` is the [context](super::context) the toolbox gives its calls:
/// [`NoContext`] until [`context`](Self::context) says otherwise.
pub struct ToolboxBuilder<A: Effects = ReadWriteNetwork, C: ToolboxContext = NoContext> {
    entries: Vec<Entry>,
    default_policy: Policy,
    /// Per-tool policies, by tool name; each replaces the default for its tool.
    policies: Vec<(String, Policy)>,
    max_argument_bytes: usize,
    /// Problems found as tools were added, reported by `build`.
    problems: Vec<BuildProblem>,
    approvals: Vec<Hook<'static>>,
    _allowed: PhantomData<fn() -> (A, C)>,
}

impl<A: Effects, C: ToolboxContext> fmt::Debug for ToolboxBuilder<A, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolboxBuilder")
            .field(
                "tools",
                &self
                    .entries
                    .iter()
                    .map(|e| e.spec.name())
                    .collect::<Vec<_>>(),
            )
            .field("allowed", &A::SET)
            .field("default_policy", &self.default_policy)
            .field("policies", &self.policies)
            .field("max_argument_bytes", &self.max_argument_bytes)
            .field("approvals", &self.approvals)
            .finish()
    }
}

impl<A: Effects> ToolboxBuilder<A> {
    /// The toolbox's calls are each given a context of type `X` (who is
    /// calling and what they may do, a connection, a request id): its
    /// tools may take it, as a `#[context] x: &X` parameter, and so may
    /// its approvals ([`Approval::with_context`]). The toolbox is then
    /// called with [`Toolbox::call_in`] and run plans with
    /// [`Interpreter::run_in`](crate::plan::Interpreter::run_in); `call`
    /// does not compile on it. It admits tools that need an `X` and tools
    /// that need nothing; a tool that needs another type does not compile.
    /// See [`context`](super::context).
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::{tool, Toolbox};
    ///
    /// /// Who is calling.
    /// struct Caller { name: String }
    ///
    /// /// List the caller's notes.
    /// #[tool(effects = Read)]
    /// fn my_notes(#[context] caller: &Caller) -> Vec<String> { vec![format!("{}'s note", caller.name)] }
    ///
    /// /// Add two numbers.
    /// #[tool(effects = Pure)]
    /// fn add(a: i64, b: i64) -> i64 { a + b }
    ///
    /// let toolbox = Toolbox::builder().context::<Caller>().tool(MyNotes).tool(Add).build()?;
    /// let ana = Caller { name: "ana".into() };
    /// assert_eq!(toolbox.call_in(&ana, "my_notes", "{}").await?.json(), r#"["ana's note"]"#);
    /// assert_eq!(toolbox.call_in(&ana, "add", r#"{"a": 1, "b": 2}"#).await?.json(), "3");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn context<X: Send + Sync + 'static>(self) -> ToolboxBuilder<A, WithContext<X>> {
        ToolboxBuilder {
            entries: self.entries,
            default_policy: self.default_policy,
            policies: self.policies,
            max_argument_bytes: self.max_argument_bytes,
            problems: self.problems,
            approvals: self.approvals,
            _allowed: PhantomData,
        }
    }
}

impl<A: Effects, C: ToolboxContext> ToolboxBuilder<A, C> {
    pub(super) fn new() -> Self {
        ToolboxBuilder {
            entries: Vec::new(),
            default_policy: Policy::none(),
            policies: Vec::new(),
            max_argument_bytes: Toolbox::DEFAULT_MAX_ARGUMENT_BYTES,
            problems: Vec::new(),
            approvals: Vec::new(),
            _allowed: PhantomData,
        }
    }

    /// The longest argument text a call may send, in bytes; the default is
    /// [`Toolbox::DEFAULT_MAX_ARGUMENT_BYTES`] (1 MiB). Longer text is
    /// refused with [`ToolError::ArgsTooLarge`](crate::ToolError::ArgsTooLarge)
    /// before any of it is read, and no recovery policy is tried on it; a
    /// recovery step whose rewrite grows past the limit stops there too.
    /// (A plan's arguments, passed as values, are checked only when they are
    /// written as text.)
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::{tool, ToolError, Toolbox};
    ///
    /// /// Echo a text.
    /// #[tool(effects = Pure)]
    /// fn echo(text: String) -> String { text }
    ///
    /// let toolbox = Toolbox::builder().tool(Echo).max_argument_bytes(16 << 20).build()?;
    /// assert_eq!(toolbox.max_argument_bytes(), 16 << 20);
    /// let args = format!(r#"{{"text": "{}"}}"#, "a".repeat(2 << 20));
    /// assert!(toolbox.call("echo", &args).await.is_ok());
    ///
    /// let small = Toolbox::builder().tool(Echo).build()?;
    /// let error = small.call("echo", &args).await.unwrap_err();
    /// assert!(matches!(error, ToolError::ArgsTooLarge { max: 1_048_576, .. }));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn max_argument_bytes(mut self, max: usize) -> Self {
        self.max_argument_bytes = max;
        self
    }

    /// The recovery policy of every tool without one of its own (see
    /// [`recover`](crate::recover)). The default is [`Policy::none`].
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::recover::Policy;
    /// use typed_tools::{tool, Toolbox};
    ///
    /// /// Get one note by its id.
    /// #[tool(effects = Read)]
    /// fn get_note(id: u32) -> String { format!("note {id}") }
    ///
    /// let toolbox = Toolbox::builder().tool(GetNote).policy(Policy::recover()).build()?;
    /// // `'7'` is no JSON, and `"7"` no number: recovery fixes both.
    /// let output = toolbox.call("get_note", "{'id': '7'}").await?;
    /// assert_eq!(output.json(), r#""note 7""#);
    /// assert!(output.note_for_model().is_some());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
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

    /// Asks `approval` before each call of a tool it asks about, in every
    /// view of the toolbox built: [`Toolbox::approve`] from the start, so
    /// that no view of it runs those tools unasked.
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::toolbox::{Approval, Decision};
    /// use typed_tools::{tool, ToolError, Toolbox};
    ///
    /// /// Wipe a disk.
    /// #[tool(effects = Write)]
    /// fn wipe(disk: String) {}
    ///
    /// let toolbox = Toolbox::builder()
    ///     .tool(Wipe)
    ///     .approval(Approval::new(|_| Decision::Refuse("never".into())))
    ///     .build()?;
    /// let error = toolbox.call("wipe", r#"{"disk": "sda"}"#).await.unwrap_err();
    /// assert!(matches!(error, ToolError::Refused { .. }));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    ///
    /// An approval made by [`Approval::with_context`] needs a toolbox that
    /// gives its context ([`context`](Self::context)).
    pub fn approval<N, M>(mut self, approval: Approval<'static, N>) -> Self
    where
        C: AdmitsApproval<N, M>,
    {
        self.approvals.push(approval.into_hook());
        self
    }

    /// Adds a typed tool. Its effects must be admitted by the toolbox, and
    /// the context it takes (if any) be the one the toolbox gives
    /// ([`context`](Self::context)): both are checked by the compiler.
    ///
    /// ```
    /// use typed_tools::effect::Read;
    /// use typed_tools::{tool, Toolbox};
    ///
    /// /// List the notes.
    /// #[tool(effects = Read)]
    /// fn list_notes() -> Vec<String> { vec![] }
    ///
    /// // A toolbox that admits only reads takes a reader; a writer would not compile.
    /// let toolbox = Toolbox::allowing::<Read>().tool(ListNotes).build().unwrap();
    /// assert_eq!(toolbox.names().collect::<Vec<_>>(), ["list_notes"]);
    /// ```
    pub fn tool<T, M>(mut self, tool: T) -> Self
    where
        T: Tool,
        T::Effects: SubsetOf<A>,
        C: AdmitsTool<T, M>,
    {
        let spec = ToolSpec::of::<T>();
        let erased = Typed::new(tool, &spec);
        self.push(spec, Box::new(erased));
        self
    }

    /// Adds a tool defined at run time. Its effects are checked when the
    /// toolbox is built, since the compiler cannot see them.
    ///
    /// ```
    /// use typed_tools::effect::{EffectSet, Read};
    /// use typed_tools::{BuildProblem, DynamicTool, Toolbox};
    ///
    /// let erase = DynamicTool::new("erase_disk").effects(EffectSet::WRITE);
    /// let error = Toolbox::allowing::<Read>().dynamic(erase).build().unwrap_err();
    /// assert!(matches!(error.problems()[0], BuildProblem::EffectNotAllowed { .. }));
    /// ```
    pub fn dynamic(mut self, tool: DynamicTool) -> Self {
        if let Some(which) = tool.too_deep {
            self.problems.push(BuildProblem::SchemaTooDeep {
                name: tool.spec.name().to_owned(),
                which,
                max: DynamicTool::MAX_SCHEMA_DEPTH,
            });
            return self;
        }
        let spec = tool.spec.clone();
        self.push(spec, Box::new(tool));
        self
    }

    fn push(&mut self, spec: ToolSpec, tool: Box<dyn ErasedTool>) {
        self.entries.push(Entry {
            spec,
            tool,
            policy: Policy::none(),
        });
    }

    /// Builds the toolbox, or reports every problem: duplicate names, names no
    /// provider accepts, run-time tools with effects the toolbox does not admit
    /// or a schema that is not an object schema.
    ///
    /// ```
    /// use typed_tools::{BuildProblem, DynamicTool, Toolbox};
    ///
    /// let error = Toolbox::builder()
    ///     .dynamic(DynamicTool::new("echo"))
    ///     .dynamic(DynamicTool::new("echo"))
    ///     .dynamic(DynamicTool::new("has space"))
    ///     .build()
    ///     .unwrap_err();
    /// assert_eq!(error.problems().len(), 2);
    /// assert!(matches!(&error.problems()[0], BuildProblem::DuplicateName { name } if name == "echo"));
    /// assert!(error.to_string().contains("two tools are named `echo`"));
    /// ```
    pub fn build(self) -> Result<Toolbox<A, C>, BuildError> {
        // The work needs `A`'s set only: done by a builder of one type, so
        // that it is compiled once, here, not again in every crate that
        // builds a toolbox.
        let untyped = ToolboxBuilder::<ReadWriteNetwork, NoContext> {
            entries: self.entries,
            default_policy: self.default_policy,
            policies: self.policies,
            max_argument_bytes: self.max_argument_bytes,
            problems: self.problems,
            approvals: self.approvals,
            _allowed: PhantomData,
        };
        let toolbox = untyped.build_allowing(A::SET)?;
        Ok(Toolbox {
            shared: toolbox.shared,
            allowed: toolbox.allowed,
            approvals: toolbox.approvals,
            _allowed: PhantomData,
        })
    }
}

impl ToolboxBuilder {
    /// [`build`](Self::build), for a toolbox that admits `allowed`.
    fn build_allowing(mut self, allowed: EffectSet) -> Result<Toolbox, BuildError> {
        let mut problems = std::mem::take(&mut self.problems);
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
            if !entry.spec.effects().is_subset_of(allowed) {
                problems.push(BuildProblem::EffectNotAllowed {
                    name: name.to_owned(),
                    effects: entry.spec.effects(),
                    allowed,
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
        let toolbox = Toolbox {
            shared: Arc::new(Shared {
                max_argument_bytes: self.max_argument_bytes,
                entries: self.entries,
                by_name,
                catalogs: Mutex::default(),
            }),
            allowed,
            approvals: None,
            _allowed: PhantomData,
        };
        Ok(self
            .approvals
            .into_iter()
            .fold(toolbox, |toolbox, approval| toolbox.approve_hook(approval)))
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

/// Why a toolbox could not be built: every problem found, listed by its
/// `Display`. See [`ToolboxBuilder::build`] for an example.
#[derive(Clone, Debug, PartialEq)]
pub struct BuildError {
    problems: Vec<BuildProblem>,
}

impl BuildError {
    /// Every problem found.
    ///
    /// ```
    /// use typed_tools::{BuildProblem, DynamicTool, Toolbox};
    ///
    /// let error = Toolbox::builder().dynamic(DynamicTool::new("9lives")).build().unwrap_err();
    /// assert!(matches!(&error.problems()[0], BuildProblem::InvalidName { name, .. } if name == "9lives"));
    /// ```
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
    /// A run-time tool's schema nests deeper than
    /// [`DynamicTool::MAX_SCHEMA_DEPTH`].
    SchemaTooDeep {
        /// The tool.
        name: String,
        /// Which schema: `"input"` or `"output"`.
        which: &'static str,
        /// The limit, in levels.
        max: usize,
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
            BuildProblem::SchemaTooDeep { name, which, max } => write!(
                f,
                "the {which} schema of `{name}` nests deeper than {max} levels; flatten it, or name its repeated parts in `$defs` and `$ref` them"
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
