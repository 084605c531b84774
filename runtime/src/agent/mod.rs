//! The [`Agent`]: a bounded loop of model steps over a toolbox. The model
//! proposes; the program decides what runs.
//!
//! Each step asks the [`Model`] for its next answer, given the conversation
//! so far and the tools (natively, in the model's `tools` field, when
//! [`Model::tool_format`] names a format; as a compact text catalog in the
//! system prompt otherwise). An answer with tool calls has them dispatched
//! through the agent's toolbox and their results handed back; an answer
//! with a plan (when [`plans`](Agent::plans) are on) has it checked,
//! previewed and run; an answer without either is the final answer.
//!
//! What keeps it safe:
//! - **Limits, enforced.** Steps, tool calls, tokens (from the usage the
//!   model reports), wall time and time per call ([`Limits`]) are checked
//!   before each step and each call, a plan's calls included; a run stops
//!   with a typed [`Exit`], never past a limit.
//! - **Least privilege.** Only the toolbox's tools within the agent's
//!   allowed effects ([`restrict`](Agent::restrict)) are shown and can run;
//!   an invented name or a tool outside the set is never run, and goes back
//!   to the model as an error naming the nearest tools. The allowed set is
//!   fixed when the run starts: nothing a tool returns is read as an
//!   instruction to the agent.
//! - **Approval in dispatch.** An [`Approval`] is asked before the calls it
//!   covers, shown exactly the arguments that run, for single calls and for
//!   plans alike ([`approval`](Agent::approval)).
//! - **No loops on failure.** A call that failed, sent again unchanged, is
//!   not run again: the model is told so, and a second time ends the run
//!   ([`Exit::Repeated`]).
//! - **Concurrency only where it is safe.** Of several calls in one answer,
//!   those that do not write run concurrently; each `Write` call runs alone,
//!   in the order given.
//!
//! No async runtime is named: the timers the limits need run on the crate's
//! own timer thread.
//!
//! ```
//! # futures::executor::block_on(async {
//! use typed_tools::agent::{Agent, Exit, Limits};
//! use typed_tools::model::ScriptedModel;
//! use typed_tools::{tool, Toolbox};
//!
//! /// Look up the weather in a city.
//! #[tool(effects = Read)]
//! fn weather(city: String) -> String { format!("sunny in {city}") }
//!
//! let toolbox = Toolbox::builder().tool(Weather).build()?;
//! // Offline: a model that answers from a script (a provider's client in production).
//! let model = ScriptedModel::new([
//!     r#"[{"name": "weather", "arguments": {"city": "Lima"}}]"#,
//!     "It is sunny in Lima.",
//! ]);
//! let agent = Agent::new(&toolbox, model).limits(Limits::new().steps(4));
//! let run = agent.run("What is the weather in Lima?").await;
//! assert_eq!(run.exit, Exit::Answer("It is sunny in Lima.".into()));
//! assert_eq!(run.tool_calls(), 1);
//! // The tool's result was handed back to the model.
//! assert_eq!(run.transcript[3].text(), r#""sunny in Lima""#);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```

mod calls;
pub mod events;
mod limits;
mod output;
mod plans;
mod prompt;
mod run;

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt};

use crate::catalog::{self, Catalog, CatalogFormat};
use crate::durable::{AnswerHook, Asked};
use crate::effect::{EffectSet, Effects, ReadWriteNetwork};
use crate::model::{
    request_tokens, Message, Model, ModelError, OutputSchema, Request, Response, StopReason,
    StreamEvent, Usage,
};
use crate::reader::{CallFormat, ReadError, ToolCall};
use crate::toolbox::timer::{within, Elapsed};
use crate::toolbox::{
    trace, AdmitsApproval, AgentWithoutContext, Approval, NoContext, Takes, Toolbox, ToolboxContext,
};

use tracing::field::Empty;
use tracing::Instrument;

use events::Sink;
pub use events::{Event, RunStream};
pub use limits::Limits;
use output::Output;
pub use output::OutputMode;
pub use run::{AnswerRecord, CallOutcome, CallRecord, Exit, PlanRecord, PlanRefusal, Resume, Run};

/// A bounded loop of model steps over a toolbox; see the [module docs](self).
///
/// `M` is the model: a provider's client, a [`ScriptedModel`](crate::model::ScriptedModel),
/// or an `Arc<dyn Model>`. `O` is what a run ends with: the model's text, or
/// a type asked for with [`output`](Self::output). `C` is the toolbox's
/// [context](crate::toolbox::context): over a toolbox whose tools take
/// one, each run is given its own with [`run_in`](Self::run_in). Set up
/// with [`Agent::new`] and setters; run with [`run`](Self::run) (a task) or
/// [`resume`](Self::resume) (a run, or a conversation, carried on).
pub struct Agent<M, A: Effects = ReadWriteNetwork, O = String, C: ToolboxContext = NoContext> {
    toolbox: Toolbox<A, C>,
    model: M,
    limits: Limits,
    system: String,
    on_refusal: OnRefusal,
    plans: bool,
    output: Output<O>,
}

/// What the agent does when an approval refuses a call.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OnRefusal {
    /// Hand the refusal back to the model, which changes course (the default).
    #[default]
    Continue,
    /// Stop the run with [`Exit::Refused`].
    Stop,
}

impl<M, A: Effects, O, C: ToolboxContext> fmt::Debug for Agent<M, A, O, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Agent")
            .field("toolbox", &self.toolbox)
            .field("limits", &self.limits)
            .field("system", &self.system)
            .field("on_refusal", &self.on_refusal)
            .field("plans", &self.plans)
            .field("output", &self.output.typed)
            .finish_non_exhaustive()
    }
}

impl<M: Model, A: Effects, C: ToolboxContext> Agent<M, A, String, C> {
    /// An agent over `toolbox`'s tools (a cheap clone of the view, with its
    /// allowed effects and approvals) and `model`, with the default
    /// [`Limits`], no system prompt of its own, refusals handed back to the
    /// model, and plans off.
    pub fn new(toolbox: &Toolbox<A, C>, model: M) -> Agent<M, A, String, C> {
        Agent {
            toolbox: toolbox.clone(),
            model,
            limits: Limits::new(),
            system: String::new(),
            on_refusal: OnRefusal::default(),
            plans: false,
            output: Output::text(),
        }
    }
}

impl<M: Model, A: Effects, O: Send + Sync + 'static, C: ToolboxContext> Agent<M, A, O, C> {
    /// Ends runs with a value of type `T` rather than text: the model gives
    /// it (by default by calling an output tool, `final_result`, whose
    /// arguments are a `T`: see [`output_mode`](Self::output_mode)), and it
    /// is read, repaired, coerced and checked as any call's arguments are,
    /// then held to the [validators](Self::validate); an answer that does
    /// not fit is told to the model, which tries again, up to
    /// [`Limits::output_retries`]. The run's [`output`](Run::output) is the
    /// value. Validators set before are dropped (they were for another
    /// type). See [`OutputMode`] for the ways a model gives it.
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::agent::{Agent, Exit};
    /// use typed_tools::model::ScriptedModel;
    /// use typed_tools::{tool, Toolbox};
    ///
    /// /// What to restock, and what it costs.
    /// #[derive(Debug, PartialEq, serde::Deserialize, schemars::JsonSchema)]
    /// struct Restock { items: Vec<u32>, total_cost: f64 }
    ///
    /// /// The stock of an item.
    /// #[tool(effects = Read)]
    /// fn stock(item: u32) -> u32 { item * 2 }
    ///
    /// let toolbox = Toolbox::builder().tool(Stock).build().unwrap();
    /// let model = ScriptedModel::new([
    ///     r#"[{"name": "stock", "arguments": {"item": 2}}]"#,
    ///     // The total as a string: coerced, and recorded.
    ///     r#"[{"name": "final_result", "arguments": {"items": [2, 3], "total_cost": "62.5"}}]"#,
    /// ]);
    /// let agent = Agent::new(&toolbox, model).output::<Restock>();
    /// let run = agent.run("What should we restock?").await;
    /// assert!(run.exit.is_answer());
    /// assert_eq!(run.output, Some(Restock { items: vec![2, 3], total_cost: 62.5 }));
    /// # });
    /// ```
    pub fn output<T>(self) -> Agent<M, A, T, C>
    where
        T: serde::de::DeserializeOwned + schemars::JsonSchema + Send + Sync + 'static,
    {
        let mode = self
            .output
            .typed
            .as_ref()
            .map_or(OutputMode::default(), |typed| typed.mode);
        let output = Output::<O>::typed::<T>(mode, &|name| self.toolbox.spec(name).is_some());
        Agent {
            toolbox: self.toolbox,
            model: self.model,
            limits: self.limits,
            system: self.system,
            on_refusal: self.on_refusal,
            plans: self.plans,
            output,
        }
    }

    /// How the model gives the output asked for with
    /// [`output`](Self::output): [`OutputMode::Tool`] by default. No effect
    /// on a run for text.
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::agent::{Agent, OutputMode};
    /// use typed_tools::model::ScriptedModel;
    /// use typed_tools::Toolbox;
    ///
    /// #[derive(Debug, PartialEq, serde::Deserialize, schemars::JsonSchema)]
    /// struct Verdict { spam: bool }
    ///
    /// // A model that calls no tools: the schema goes in the prompt, and
    /// // the JSON is found in the answer's text.
    /// let model = ScriptedModel::new(["Clearly:\n```json\n{\"spam\": true}\n```"]);
    /// let agent = Agent::new(&Toolbox::builder().build().unwrap(), model)
    ///     .output::<Verdict>()
    ///     .output_mode(OutputMode::Prompted);
    /// assert!(agent.system_prompt().contains("JSON Schema"));
    /// let run = agent.run("Is 'WIN A CAR' spam?").await;
    /// assert_eq!(run.output, Some(Verdict { spam: true }));
    /// # });
    /// ```
    pub fn output_mode(mut self, mode: OutputMode) -> Self {
        if let Some(typed) = &mut self.output.typed {
            Arc::make_mut(typed).mode = mode;
        }
        self
    }

    /// Holds each answer to `check` before the run ends with it: a refusal's
    /// message goes back to the model, which tries again (within
    /// [`Limits::output_retries`]), as Pydantic AI's output validators do.
    /// For a text run, `check` reads the text. Validators run in the order
    /// added.
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::agent::Agent;
    /// use typed_tools::model::ScriptedModel;
    /// use typed_tools::Toolbox;
    ///
    /// let toolbox = Toolbox::builder().build().unwrap();
    /// let model = ScriptedModel::new(["Nope.", "A haiku, in three lines:\nold pond\nfrog jumps\nsplash"]);
    /// let agent = Agent::new(&toolbox, model).validate(|text: &String| match text.lines().count() >= 3 {
    ///     true => Ok(()),
    ///     false => Err("write the haiku on three lines".into()),
    /// });
    /// let run = agent.run("Write a haiku.").await;
    /// assert_eq!(run.steps, 2);
    /// assert!(run.transcript[3].text().contains("three lines"));
    /// # });
    /// ```
    pub fn validate(
        mut self,
        check: impl Fn(&O) -> Result<(), String> + Send + Sync + 'static,
    ) -> Self {
        self.output.validators.push(output::sync_validator(check));
        self
    }

    /// Holds each answer to an async `check` (a database lookup, say), as
    /// [`validate`](Self::validate) does; its future owns what it needs.
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::agent::Agent;
    /// use typed_tools::model::ScriptedModel;
    /// use typed_tools::Toolbox;
    ///
    /// #[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
    /// struct Signup { email: String }
    ///
    /// let model = ScriptedModel::new([
    ///     r#"[{"name": "final_result", "arguments": {"email": "ada@example.com"}}]"#,
    ///     r#"[{"name": "final_result", "arguments": {"email": "grace@example.com"}}]"#,
    /// ]);
    /// let agent = Agent::new(&Toolbox::builder().build().unwrap(), model)
    ///     .output::<Signup>()
    ///     .validate_async(|signup: &Signup| {
    ///         let email = signup.email.clone(); // The future owns its copy.
    ///         async move {
    ///             // A lookup in a database, say.
    ///             match email == "ada@example.com" {
    ///                 true => Err(format!("{email} has an account already")),
    ///                 false => Ok(()),
    ///             }
    ///         }
    ///     });
    /// let run = agent.run("Sign up the next person on the list.").await;
    /// assert_eq!(run.output.unwrap().email, "grace@example.com");
    /// # });
    /// ```
    pub fn validate_async<F>(mut self, check: impl Fn(&O) -> F + Send + Sync + 'static) -> Self
    where
        F: std::future::Future<Output = Result<(), String>> + Send + 'static,
    {
        self.output.validators.push(output::async_validator(check));
        self
    }

    /// Runs within `limits` instead of the defaults.
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Allows only the tools whose effects are within `allowed` (and within
    /// what is allowed already: each call narrows, none widens). The others
    /// are not shown to the model, and a call of one is refused unrun.
    ///
    /// ```
    /// use typed_tools::agent::Agent;
    /// use typed_tools::effect::EffectSet;
    /// use typed_tools::model::ScriptedModel;
    /// use typed_tools::{tool, Toolbox};
    ///
    /// /// Read a note.
    /// #[tool(effects = Read)]
    /// fn read_note(id: u32) -> String { format!("note {id}") }
    /// /// Delete a note.
    /// #[tool(effects = Write)]
    /// fn delete_note(id: u32) {}
    ///
    /// let toolbox = Toolbox::builder().tool(ReadNote).tool(DeleteNote).build().unwrap();
    /// let agent = Agent::new(&toolbox, ScriptedModel::new(["done"])).restrict(EffectSet::READ);
    /// assert_eq!(agent.allowed(), EffectSet::READ);
    /// assert_eq!(agent.toolbox().names().collect::<Vec<_>>(), ["read_note"]);
    /// ```
    pub fn restrict(mut self, allowed: EffectSet) -> Self {
        self.toolbox = self.toolbox.restrict(allowed);
        self
    }

    /// Asks `approval` before each call it covers (`Write` tools unless it
    /// says otherwise), single calls and plans' calls alike, after any
    /// approval the toolbox view asks already. See [`Toolbox::approve`].
    ///
    /// An approval made by [`Approval::with_context`] is given each run's
    /// context, and needs an agent over a toolbox that gives it.
    pub fn approval<N, K>(mut self, approval: Approval<'static, N>) -> Self
    where
        C: AdmitsApproval<N, K>,
    {
        self.toolbox = self.toolbox.approve(approval);
        self
    }

    /// What to do when an approval refuses a call: hand it back to the
    /// model (the default), or stop.
    pub fn on_refusal(mut self, on_refusal: OnRefusal) -> Self {
        self.on_refusal = on_refusal;
        self
    }

    /// The instructions the system prompt opens with; the agent adds how to
    /// call the tools (and write plans) after them.
    pub fn system(mut self, instructions: impl Into<String>) -> Self {
        self.system = instructions.into();
        self
    }

    /// Lets the model answer with a plan (the λ-Tool text language) instead
    /// of single calls: it is checked against the agent's tools and allowed
    /// effects, refused with every error before anything runs, or run, its
    /// calls passing the same approvals; the outcome goes back to the model.
    /// Off by default.
    pub fn plans(mut self, on: bool) -> Self {
        self.plans = on;
        self
    }

    /// The effects the agent's tools may have.
    pub fn allowed(&self) -> EffectSet {
        self.toolbox.allowed()
    }

    /// The model the agent asks.
    pub fn model(&self) -> &M {
        &self.model
    }

    /// The toolbox the agent calls through: its allowed tools, with its
    /// approvals.
    pub fn toolbox(&self) -> &Toolbox<A, C> {
        &self.toolbox
    }

    /// The system prompt the agent sends: its instructions, then the tools
    /// (as text, when the model does not take them natively) and how to
    /// call them.
    pub fn system_prompt(&self) -> String {
        prompt::system(self)
    }

    /// Runs the agent on `task` from the start: the system prompt, then
    /// `task` as the user's message.
    ///
    /// An agent over a toolbox whose tools take a
    /// [context](crate::toolbox::context) is run with
    /// [`run_in`](Self::run_in); `run` does not compile there.
    pub fn run(&self, task: impl Into<String>) -> BoxFuture<'_, Run<O>>
    where
        C::Value: AgentWithoutContext,
    {
        self.resume(self.start(task))
    }

    /// Runs the agent on `task` as [`run`](Self::run) does, each call lent
    /// `context`, a plan's calls included: the run's
    /// [context](crate::toolbox::context) (who is asking, their
    /// permissions, a connection), of the type the agent's toolbox was built
    /// with ([`ToolboxBuilder::context`](crate::ToolboxBuilder::context)).
    /// The agent holds none: runs made at once with different contexts each
    /// see their own, and so do the approvals made by
    /// [`Approval::with_context`].
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::agent::{Agent, Exit};
    /// use typed_tools::model::ScriptedModel;
    /// use typed_tools::{tool, Toolbox};
    ///
    /// /// Who is asking.
    /// struct User { name: String }
    ///
    /// /// The notes of the user asking.
    /// #[tool(effects = Read)]
    /// fn my_notes(#[context] user: &User) -> Vec<String> { vec![format!("{}'s list", user.name)] }
    ///
    /// let toolbox = Toolbox::builder().context::<User>().tool(MyNotes).build()?;
    /// let model = ScriptedModel::new([r#"[{"name": "my_notes", "arguments": {}}]"#, "One note."]);
    /// let agent = Agent::new(&toolbox, model);
    /// let run = agent.run_in(&User { name: "ana".into() }, "My notes?").await;
    /// assert_eq!(run.exit, Exit::Answer("One note.".into()));
    /// assert_eq!(run.transcript[3].text(), r#"["ana's list"]"#);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn run_in<'a, X>(&'a self, context: &'a X, task: impl Into<String>) -> BoxFuture<'a, Run<O>>
    where
        C: Takes<X>,
    {
        self.resume_in(context, self.start(task))
    }

    /// Goes on with an earlier run ([`Run::then`] adds a message, a person's
    /// answer say): its records and counts (steps, calls, tokens, time)
    /// carry on, so the run it returns covers the whole run, and the limits
    /// count from its start (raise them with [`limits`](Self::limits) to
    /// let it go further). Given a conversation instead (a `Vec` of
    /// messages), the counts start from zero.
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::agent::{Agent, Exit};
    /// use typed_tools::model::{Message, ScriptedModel};
    /// use typed_tools::Toolbox;
    ///
    /// let toolbox = Toolbox::builder().build().unwrap();
    /// let model = ScriptedModel::new(["Which city?", "Sunny in Lima."]);
    /// let agent = Agent::new(&toolbox, model);
    /// let first = agent.run("The weather, please.").await;
    /// let run = agent.resume(first.then(Message::user("Lima."))).await;
    /// assert_eq!(run.exit, Exit::Answer("Sunny in Lima.".into()));
    /// assert_eq!(run.steps, 2);
    /// assert_eq!(run.answers.len(), 2);
    /// # });
    /// ```
    ///
    /// (`run` and `resume` give a boxed future, not an `async fn`'s: an
    /// `async fn`'s future repeats the fn's bounds, and a missing context
    /// was reported three times. A run costs far more than the box.)
    pub fn resume(&self, from: impl Into<Resume<O>>) -> BoxFuture<'_, Run<O>>
    where
        C::Value: AgentWithoutContext,
    {
        self.drive(
            <C::Value as AgentWithoutContext>::nothing(),
            from.into(),
            None,
            None,
        )
        .boxed()
    }

    /// Goes on with a run as [`resume`](Self::resume) does, each call lent
    /// `context` as in [`run_in`](Self::run_in) (the context need not be
    /// the one the earlier part of the run was given).
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::agent::{Agent, CallOutcome, Exit};
    /// use typed_tools::model::{Message, ScriptedModel};
    /// use typed_tools::{tool, Toolbox};
    ///
    /// /// Who is asking.
    /// struct User { name: String }
    ///
    /// /// The name of the user asking.
    /// #[tool(effects = Read)]
    /// fn whoami(#[context] user: &User) -> String { user.name.clone() }
    ///
    /// let toolbox = Toolbox::builder().context::<User>().tool(Whoami).build()?;
    /// let model = ScriptedModel::new(["Who is asking?", r#"[{"name": "whoami", "arguments": {}}]"#, "Hello."]);
    /// let agent = Agent::new(&toolbox, model);
    /// let ana = User { name: "ana".into() };
    /// let first = agent.run_in(&ana, "Greet me.").await;
    /// let run = agent.resume_in(&ana, first.then(Message::user("Look it up."))).await;
    /// assert_eq!(run.exit, Exit::Answer("Hello.".into()));
    /// assert!(matches!(&run.calls[0].outcome, CallOutcome::Ok(output) if output.json() == r#""ana""#));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn resume_in<'a, X>(
        &'a self,
        context: &'a X,
        from: impl Into<Resume<O>>,
    ) -> BoxFuture<'a, Run<O>>
    where
        C: Takes<X>,
    {
        self.drive(C::value(context), from.into(), None, None)
            .boxed()
    }

    /// A durable run on `task` over `journal`, each call lent `context`.
    pub(crate) fn run_journaled<'a>(
        &'a self,
        context: &'a C::Value,
        task: String,
        journal: &'a dyn AnswerHook,
    ) -> BoxFuture<'a, Run<O>> {
        self.drive(context, self.start(task).into(), None, Some(journal))
            .boxed()
    }

    /// Runs the agent on `task` as [`run`](Self::run) does, live: a stream of
    /// the run's [`Event`]s as they happen (the model's text and reasoning
    /// as it writes them, each call proposed, approved, and what became of
    /// it, each plan checked and run, the limits used after each step), the
    /// last of them [`Event::Finished`] with the whole [`Run`]. Dropping the
    /// stream cancels the run. See [`events`].
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use futures::StreamExt;
    /// use typed_tools::agent::{Agent, Event};
    /// use typed_tools::model::ScriptedModel;
    /// use typed_tools::{tool, Toolbox};
    ///
    /// /// Look up the weather in a city.
    /// #[tool(effects = Read)]
    /// fn weather(city: String) -> String { format!("sunny in {city}") }
    ///
    /// let toolbox = Toolbox::builder().tool(Weather).build().unwrap();
    /// let model = ScriptedModel::new([
    ///     r#"[{"name": "weather", "arguments": {"city": "Lima"}}]"#,
    ///     "It is sunny in Lima.",
    /// ]);
    /// let agent = Agent::new(&toolbox, model);
    /// let mut events = agent.run_stream("Weather in Lima?");
    /// while let Some(event) = events.next().await {
    ///     match event {
    ///         Event::CallProposed { call, .. } => println!("calling {}…", call.name),
    ///         Event::CallFinished(record) => println!("{} done in {:?}", record.call.name, record.duration),
    ///         Event::Text(piece) => print!("{piece}"),
    ///         Event::Finished(run) => assert_eq!(run.answer(), Some("It is sunny in Lima.")),
    ///         _ => {}
    ///     }
    /// }
    /// # });
    /// ```
    pub fn run_stream(&self, task: impl Into<String>) -> RunStream<'_, O>
    where
        C::Value: AgentWithoutContext,
    {
        self.resume_stream(self.start(task))
    }

    /// Runs the agent on `task` live, as [`run_stream`](Self::run_stream)
    /// does, each call lent `context` as in [`run_in`](Self::run_in).
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use futures::StreamExt;
    /// use typed_tools::agent::{Agent, CallOutcome, Event};
    /// use typed_tools::model::ScriptedModel;
    /// use typed_tools::{tool, Toolbox};
    ///
    /// /// Who is asking.
    /// struct User { name: String }
    ///
    /// /// The name of the user asking.
    /// #[tool(effects = Read)]
    /// fn whoami(#[context] user: &User) -> String { user.name.clone() }
    ///
    /// let toolbox = Toolbox::builder().context::<User>().tool(Whoami).build().unwrap();
    /// let model = ScriptedModel::new([r#"[{"name": "whoami", "arguments": {}}]"#, "Hello, ana."]);
    /// let agent = Agent::new(&toolbox, model);
    /// let ana = User { name: "ana".into() };
    /// let mut events = agent.run_stream_in(&ana, "Who am I?");
    /// while let Some(event) = events.next().await {
    ///     if let Event::CallFinished(record) = event {
    ///         assert!(matches!(&record.outcome, CallOutcome::Ok(output) if output.json() == r#""ana""#));
    ///     }
    /// }
    /// # });
    /// ```
    pub fn run_stream_in<'a, X>(
        &'a self,
        context: &'a X,
        task: impl Into<String>,
    ) -> RunStream<'a, O>
    where
        C: Takes<X>,
    {
        self.resume_stream_in(context, self.start(task))
    }

    /// Goes on with a run as [`resume`](Self::resume) does, live, as
    /// [`run_stream`](Self::run_stream) does.
    pub fn resume_stream(&self, from: impl Into<Resume<O>>) -> RunStream<'_, O>
    where
        C::Value: AgentWithoutContext,
    {
        self.stream(<C::Value as AgentWithoutContext>::nothing(), from.into())
    }

    /// Goes on with a run live, as [`resume_stream`](Self::resume_stream)
    /// does, each call lent `context` as in [`run_in`](Self::run_in).
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use futures::StreamExt;
    /// use typed_tools::agent::{Agent, CallOutcome, Event};
    /// use typed_tools::model::{Message, ScriptedModel};
    /// use typed_tools::{tool, Toolbox};
    ///
    /// /// Who is asking.
    /// struct User { name: String }
    ///
    /// /// The name of the user asking.
    /// #[tool(effects = Read)]
    /// fn whoami(#[context] user: &User) -> String { user.name.clone() }
    ///
    /// let toolbox = Toolbox::builder().context::<User>().tool(Whoami).build().unwrap();
    /// let agent = Agent::new(&toolbox, ScriptedModel::new([r#"[{"name": "whoami", "arguments": {}}]"#, "Hi."]));
    /// let bob = User { name: "bob".into() };
    /// let mut events = agent.resume_stream_in(&bob, vec![Message::user("Who am I?")]);
    /// let mut last = None;
    /// while let Some(event) = events.next().await {
    ///     last = Some(event);
    /// }
    /// let Some(Event::Finished(run)) = last else { panic!("a run ends with its record") };
    /// assert!(matches!(&run.calls[0].outcome, CallOutcome::Ok(output) if output.json() == r#""bob""#));
    /// # });
    /// ```
    pub fn resume_stream_in<'a, X>(
        &'a self,
        context: &'a X,
        from: impl Into<Resume<O>>,
    ) -> RunStream<'a, O>
    where
        C: Takes<X>,
    {
        self.stream(C::value(context), from.into())
    }

    /// A streamed run, each call lent `context`.
    fn stream<'a>(&'a self, context: &'a C::Value, from: Resume<O>) -> RunStream<'a, O> {
        let sink = Arc::new(Sink::default());
        RunStream::new(
            self.drive(context, from, Some(Arc::clone(&sink)), None)
                .boxed(),
            sink,
        )
    }

    /// The conversation a run on `task` starts with.
    fn start(&self, task: impl Into<String>) -> Vec<Message> {
        vec![Message::system(self.system_prompt()), Message::user(task)]
    }

    /// The loop of steps, telling `sink` what happens when it streams.
    async fn drive(
        &self,
        context: &C::Value,
        from: Resume<O>,
        sink: Option<Arc<Sink<O>>>,
        journal: Option<&dyn AnswerHook>,
    ) -> Run<O> {
        let (provider, model) = self
            .model
            .name()
            .split_once('/')
            .unwrap_or(("unknown", self.model.name()));
        let span = tracing::info_span!(
            "agent_run",
            model = self.model.name(),
            allowed = %self.allowed(),
            steps = Empty,
            tool_calls = Empty,
            tokens = Empty,
            exit = Empty,
            otel.name = "invoke_agent",
            gen_ai.operation.name = "invoke_agent",
            gen_ai.provider.name = provider,
            gen_ai.request.model = model,
            gen_ai.usage.input_tokens = Empty,
            gen_ai.usage.output_tokens = Empty,
        );
        // A streamed run hears of each call its approvals approved.
        let toolbox = match &sink {
            Some(sink) => {
                let sink = Arc::clone(sink);
                self.toolbox.observe_approvals(move |request| {
                    sink.push(Event::Approved {
                        tool: request.tool.clone(),
                        args: request.args.clone(),
                    })
                })
            }
            None => self.toolbox.clone(),
        };
        let output_toolbox = self.output.typed.as_ref().and_then(|typed| {
            // The output tool passes the view's approvals too.
            Some(typed.toolbox.as_ref().ok()?.carry_approvals(&toolbox))
        });
        let mut state = State::new(from, &self.limits, toolbox, context, output_toolbox, sink);
        state.journal = journal;
        let exit = async {
            loop {
                if let Some(exit) = state.before_step(&self.limits) {
                    break exit;
                }
                state.steps += 1;
                let step = tracing::info_span!("agent_step", step = state.steps, answer = Empty);
                let exit = self.step(&mut state, &step).instrument(step.clone()).await;
                state.emit(|state| Event::Used {
                    steps: state.steps,
                    tool_calls: state.dispatched,
                    usage: state.usage,
                    elapsed: state.started.elapsed(),
                });
                if let Some(exit) = exit {
                    break exit;
                }
            }
        }
        .instrument(span.clone())
        .await;
        let run = state.finish(exit);
        if !span.is_disabled() {
            span.record("steps", run.steps);
            span.record("tool_calls", run.tool_calls());
            span.record("tokens", run.usage.total());
            span.record("exit", run.exit.name());
            span.record("gen_ai.usage.input_tokens", run.usage.input_tokens);
            span.record("gen_ai.usage.output_tokens", run.usage.output_tokens);
        }
        run
    }

    /// One step: ask the model, then do what it answered. `Some` exit if the
    /// run stops.
    async fn step(&self, state: &mut State<'_, A, O, C>, current: &tracing::Span) -> Option<Exit> {
        let step = state.steps;
        state.emit(|_| Event::Step { step });
        let request = match self.request(state) {
            Ok(request) => request,
            Err(exit) => return Some(exit),
        };
        let max_tokens = request.max_tokens;
        let asked = match state.journal {
            Some(journal) => journal.answer(),
            None => Asked::Ask,
        };
        let response = match asked {
            Asked::Replay(response) => response,
            Asked::Stop(message) => return Some(halted(message)),
            Asked::Ask => {
                let response =
                    match within(self.ask(request, state.sink.as_deref()), state.deadline).await {
                        Err(Elapsed) => {
                            return Some(Exit::Deadline {
                                limit: self.limits.wall_time,
                            })
                        }
                        Ok(Err(error)) => return Some(Exit::ModelFailed(error)),
                        Ok(Ok(response)) => response,
                    };
                if let Some(journal) = state.journal {
                    if let Err(message) = journal.answered(step, &response).await {
                        return Some(halted(message));
                    }
                }
                response
            }
        };
        state.usage += response.usage;
        state.answers.push(AnswerRecord {
            step,
            stop: response.stop.clone(),
            usage: response.usage,
        });
        state.emit(|_| Event::Answered {
            step,
            stop: response.stop.clone(),
            usage: response.usage,
        });
        let answer = self.read(state, &response);
        let native = self.native().is_some();
        // The answer goes into the conversation as the model gave it: its
        // native calls (each will be answered), never calls read from its
        // text, which the provider did not see as calls.
        let mut message = response.to_message();
        if let (Message::Assistant { calls, .. }, false) = (&mut message, native) {
            calls.clear();
        }
        state.messages.push(message);
        if response.stop == StopReason::MaxTokens {
            // Cut off: not a final answer, and its calls may be cut too (an
            // amount that lost a digit still reads), so none runs.
            current.record("answer", "truncated");
            if let Answer::Calls(calls) = &answer {
                state.propose(step, calls);
                state.not_run(
                    step,
                    calls,
                    "Not run: the answer was cut off at the token limit, and the call may be cut too.",
                );
            }
            return Some(Exit::Truncated {
                text: response.text,
                max_tokens,
            });
        }
        if state.over_budget(&self.limits) {
            // Past the budget (a server that ignored `max_tokens`, an input
            // longer than estimated): the answer is kept, nothing it asks
            // for runs, and the run ends, as a limit is a limit.
            current.record("answer", "over_budget");
            if let Answer::Calls(calls) = &answer {
                state.propose(step, calls);
                state.not_run(step, calls, "Not run: the token budget is spent.");
            }
            return Some(state.out_of_tokens(&self.limits));
        }
        match answer {
            Answer::Calls(calls) => {
                current.record("answer", "calls");
                state.propose(step, &calls);
                let output = self
                    .output
                    .typed
                    .as_ref()
                    .filter(|t| t.mode == OutputMode::Tool);
                match output.and_then(|typed| calls.iter().position(|c| c.name == typed.name)) {
                    Some(at) => self.output_call(state, step, &calls, at).await,
                    None => self.run_calls(state, step, &calls).await,
                }
            }
            Answer::Plan(written) => {
                current.record("answer", "plan");
                self.run_plan(state, step, written).await
            }
            Answer::Unreadable(error) => {
                current.record("answer", "unreadable");
                state.messages.push(Message::user(error.for_model()));
                None
            }
            Answer::Final if response.stop == StopReason::Other("pause_turn".into()) => {
                // Anthropic paused a long turn: asked again with its answer
                // last, the model goes on with it.
                current.record("answer", "paused");
                None
            }
            Answer::Final => {
                current.record("answer", "final");
                self.final_answer(state, response.text).await
            }
        }
    }

    /// A final answer in text: the run's output when it reads as one (the
    /// text itself for a text run; the value for a typed one, in any mode,
    /// since a model asked for a tool call may still answer with the JSON),
    /// else the model is told what is wrong: `Some` exit if the run stops.
    async fn final_answer(&self, state: &mut State<'_, A, O, C>, text: String) -> Option<Exit> {
        let read = match (&self.output.typed, &state.output_toolbox) {
            (None, _) => (self.output.parse)(&text),
            (Some(typed), Some(toolbox)) => {
                let read = toolbox
                    .call_given(state.context, &typed.name, Cow::Borrowed(&text))
                    .await;
                match read {
                    Ok(checked) => typed
                        .unwrap(checked.json())
                        .and_then(|json| (self.output.parse)(&json)),
                    Err(error) if typed.mode == OutputMode::Tool && !looks_like_json(&text) => {
                        let _ = error;
                        Err(format!(
                            "Your final answer must be given by calling `{}`, with the answer as \
                             its arguments ({}), not in plain text.",
                            typed.name, typed.type_name
                        ))
                    }
                    Err(error) => Err(typed.told(&error)),
                }
            }
            (Some(typed), None) => return Some(output_unusable(typed)),
        };
        let refused = match read {
            Ok(value) => match self.output.validate(&value).await {
                Ok(()) => {
                    state.output = Some(value);
                    return Some(Exit::Answer(text));
                }
                Err(reason) => format!("Your final answer was refused: {reason}. Answer again."),
            },
            Err(told) => told,
        };
        state.messages.push(Message::user(refused.clone()));
        state.refuse_output(refused, &self.limits)
    }

    /// Answers that called the output tool (at `at`): the output is read
    /// from its arguments, through the output tool's toolbox (reading,
    /// recovery, approval, as any call); when it fits, the run ends with it
    /// and the answer's other calls do not run (a model that calls tools and
    /// answers at once has answered); when it does not, none of them runs,
    /// and the model is told why.
    async fn output_call(
        &self,
        state: &mut State<'_, A, O, C>,
        step: u32,
        calls: &[ToolCall],
        at: usize,
    ) -> Option<Exit> {
        let Some(typed) = &self.output.typed else {
            return None;
        };
        let call = &calls[at];
        let admitted = state.admit(call, &self.limits);
        let Some(toolbox) = state.output_toolbox.clone() else {
            return Some(output_unusable(typed));
        };
        if let calls::Admit::Stop(exit, reason) = admitted {
            state.not_run(step, calls, &reason);
            return Some(exit);
        }
        let started = Instant::now();
        let result = toolbox
            .call_given(state.context, &call.name, Cow::Borrowed(&call.arguments))
            .await;
        let read = match &result {
            Ok(checked) => typed
                .unwrap(checked.json())
                .and_then(|json| (self.output.parse)(&json))
                .map_err(|error| {
                    format!(
                        "Your final answer could not be read as a {}: {error}",
                        typed.type_name
                    )
                }),
            Err(error) => Err(typed.told(error)),
        };
        let read = match read {
            Ok(value) => match self.output.validate(&value).await {
                Ok(()) => Ok(value),
                Err(reason) => Err(format!(
                    "Your final answer was refused: {reason}. Call `{}` again with a corrected answer.",
                    typed.name
                )),
            },
            Err(told) => Err(told),
        };
        let others = "Not run: the final answer was given in the same answer; call tools before \
                      giving it.";
        let mut result = Some(result);
        for (i, other) in calls.iter().enumerate() {
            if i != at {
                state.not_run(step, std::slice::from_ref(other), others);
                continue;
            }
            let outcome = match (&read, result.take()) {
                (Ok(_), Some(Ok(output))) => CallOutcome::Ok(output),
                (Err(told), _) => CallOutcome::NotRun {
                    reason: told.clone(),
                },
                (Ok(_), Some(Err(error))) => CallOutcome::Err(error),
                (Ok(_), None) => continue,
            };
            state.record(step, other, outcome, started.elapsed());
        }
        match read {
            Ok(value) => {
                state.output = Some(value);
                Some(Exit::Answer(call.arguments.clone()))
            }
            Err(told) => state.refuse_output(told, &self.limits),
        }
    }

    /// Asks the model, in a `model_request` span; when the run streams,
    /// with [`Model::stream`], telling the sink the text and reasoning as
    /// they come.
    async fn ask(&self, request: Request, sink: Option<&Sink<O>>) -> Result<Response, ModelError> {
        let Some(sink) = sink else {
            return trace::complete(&self.model, request).await;
        };
        let span = trace::model_span(&self.model, &request);
        let answer = async {
            let mut events = self.model.stream(request);
            let mut streamed = false;
            while let Some(event) = events.next().await {
                match event? {
                    StreamEvent::Text(piece) => {
                        streamed = true;
                        sink.push(Event::Text(piece));
                    }
                    StreamEvent::Reasoning(piece) => {
                        streamed = true;
                        sink.push(Event::Reasoning(piece));
                    }
                    StreamEvent::Done(response) => {
                        // A model that does not stream gives its answer whole.
                        if !streamed {
                            let reasoning = response.reasoning_text();
                            if !reasoning.is_empty() {
                                sink.push(Event::Reasoning(reasoning));
                            }
                            if !response.text.is_empty() {
                                sink.push(Event::Text(response.text.clone()));
                            }
                        }
                        return Ok(response);
                    }
                    _ => {}
                }
            }
            Err(ModelError::Malformed {
                message: "the stream ended before the answer did".into(),
                body: String::new(),
            })
        }
        .instrument(span.clone())
        .await;
        trace::record_answer(&span, &answer);
        answer
    }

    /// The format the model takes tools in natively, if any.
    fn native(&self) -> Option<CatalogFormat> {
        self.model.tool_format().filter(|format| format.is_json())
    }

    /// The next request: the conversation, the tools when the model takes
    /// them natively, and the most tokens its answer may take: the smaller
    /// of [`Limits::answer_tokens`] and the budget left once the request
    /// itself (estimated) is counted. No budget left is the run's end.
    fn request(&self, state: &mut State<'_, A, O, C>) -> Result<Request, Exit> {
        let mut request = Request::new(state.messages.clone());
        if let Some(format) = self.native() {
            request = request.tools(self.catalog(state, format));
        }
        if let Some(typed) = self
            .output
            .typed
            .as_ref()
            .filter(|t| t.mode == OutputMode::Native)
        {
            request = request.output(OutputSchema::new(&typed.name, typed.schema.clone()));
        }
        let asked = request_tokens(&request);
        let left = self
            .limits
            .tokens
            .saturating_sub(state.usage.total().saturating_add(asked));
        if left == 0 {
            return Err(state.out_of_tokens(&self.limits));
        }
        let cap = u64::from(self.limits.answer_tokens).min(left);
        Ok(request.max_tokens(u32::try_from(cap).unwrap_or(u32::MAX)))
    }

    /// Whether `text` is, whole, a value of the typed output asked for: a
    /// JSON object the output tool's schema takes as it is. Such an answer
    /// is the answer, even when it has the shape of a call (a type with
    /// `name` and `arguments` fields).
    fn is_output_json(&self, text: &str) -> bool {
        let Some(typed) = &self.output.typed else {
            return false;
        };
        let Ok(toolbox) = &typed.toolbox else {
            return false;
        };
        let Ok(value) = serde_json::from_str::<serde_json::Value>(text) else {
            return false;
        };
        toolbox
            .spec(&typed.name)
            .is_some_and(|spec| value.is_object() && spec.input_model().check(&value).is_empty())
    }

    /// The tools the model is offered natively: the view's catalog, and the
    /// output tool when the output is asked for through one (put together
    /// once a run).
    fn catalog(&self, state: &mut State<'_, A, O, C>, format: CatalogFormat) -> Catalog {
        let tools = state.toolbox.catalog(format);
        let Some(output) = state.output_toolbox.as_ref().filter(|_| {
            self.output
                .typed
                .as_ref()
                .is_some_and(|t| t.mode == OutputMode::Tool)
        }) else {
            return tools;
        };
        state
            .catalog
            .get_or_insert_with(|| catalog::join(&tools, &output.catalog(format)))
            .clone()
    }

    /// What an answer asks for.
    fn read<'r>(&self, state: &State<'_, A, O, C>, response: &'r Response) -> Answer<'r> {
        let toolbox = &state.toolbox;
        if self.native().is_some() {
            if !response.calls.is_empty() {
                return Answer::Calls(response.calls.clone());
            }
        } else {
            match toolbox.read_calls(CallFormat::Auto, &response.text) {
                // A JSON answer that is the typed output is the answer.
                Ok(calls) if !calls.is_empty() && self.is_output_json(&response.text) => {}
                Ok(calls) if !calls.is_empty() => return Answer::Calls(calls),
                Ok(_) => {}
                Err(error)
                    if prompt::is_a_call_attempt(&response.text, &error, toolbox.names()) =>
                {
                    if let Some(plan) = self.plans.then(|| plans::find(&response.text)).flatten() {
                        return Answer::Plan(plan);
                    }
                    if !self.is_output_json(&response.text) {
                        return Answer::Unreadable(error);
                    }
                }
                Err(_) => {}
            }
        }
        match self.plans.then(|| plans::find(&response.text)).flatten() {
            Some(plan) => Answer::Plan(plan),
            None => Answer::Final,
        }
    }
}

/// What one answer of the model asks for.
enum Answer<'r> {
    /// Run these calls.
    Calls(Vec<ToolCall>),
    /// Run this plan (its text, or its JSON form).
    Plan(crate::plan::author::Written<'r>),
    /// A call that could not be read: tell the model.
    Unreadable(ReadError),
    /// Nothing: it is the final answer.
    Final,
}

/// A run in progress, over `toolbox`: the agent's view, which a streamed
/// run observes.
struct State<'c, A: Effects, O, C: ToolboxContext> {
    toolbox: Toolbox<A, C>,
    /// The run's context, lent to each call, a plan's included.
    context: &'c C::Value,
    /// The output tool's toolbox, with the view's approvals, when a typed
    /// output is asked for.
    output_toolbox: Option<Toolbox<ReadWriteNetwork, C>>,
    /// The tools offered natively with the output tool, put together once.
    catalog: Option<Catalog>,
    messages: Vec<Message>,
    calls: Vec<CallRecord>,
    plans: Vec<PlanRecord>,
    answers: Vec<AnswerRecord>,
    steps: u32,
    usage: Usage,
    /// Tool calls dispatched, a plan's included.
    dispatched: u32,
    started: Instant,
    deadline: Option<Instant>,
    /// Calls that failed, to notice one sent again unchanged.
    failed: Vec<calls::Failed>,
    /// The output, once an answer gave one that fits.
    output: Option<O>,
    /// Answers refused for not fitting the output asked for.
    output_refused: u32,
    /// Where a streamed run's events go; `None` for a plain run.
    sink: Option<Arc<Sink<O>>>,
    /// A durable run's journal: it replays recorded answers and call
    /// results, and records new ones.
    journal: Option<&'c dyn AnswerHook>,
}

impl<'c, A: Effects, O, C: ToolboxContext> State<'c, A, O, C> {
    /// A run from `from`: an earlier run's records and counts carried on
    /// (its time too, so that the wall time counts the whole run), or a
    /// conversation counted from zero.
    fn new(
        from: Resume<O>,
        limits: &Limits,
        toolbox: Toolbox<A, C>,
        context: &'c C::Value,
        output_toolbox: Option<Toolbox<ReadWriteNetwork, C>>,
        sink: Option<Arc<Sink<O>>>,
    ) -> State<'c, A, O, C> {
        let now = Instant::now();
        let mut state = State {
            toolbox,
            context,
            output_toolbox,
            catalog: None,
            messages: from.transcript,
            calls: Vec::new(),
            plans: Vec::new(),
            answers: Vec::new(),
            steps: 0,
            usage: Usage::default(),
            dispatched: 0,
            started: now,
            deadline: None,
            failed: Vec::new(),
            output: None,
            output_refused: 0,
            sink,
            journal: None,
        };
        if let Some(run) = from.run {
            state.dispatched = u32::try_from(run.tool_calls()).unwrap_or(u32::MAX);
            state.started = now.checked_sub(run.elapsed).unwrap_or(now);
            state.messages = run.transcript;
            state.calls = run.calls;
            state.plans = run.plans;
            state.answers = run.answers;
            state.steps = run.steps;
            state.usage = run.usage;
        }
        state.deadline = state.started.checked_add(limits.wall_time);
        state
    }

    /// An answer refused for the output asked for, told to the model
    /// already: the run goes on, or ends once the retries are spent.
    fn refuse_output(&mut self, told: String, limits: &Limits) -> Option<Exit> {
        self.output_refused += 1;
        (self.output_refused > limits.output_retries).then_some(Exit::OutputInvalid {
            error: told,
            attempts: self.output_refused,
        })
    }

    /// Tells a streamed run's stream what happened; nothing is made for a
    /// plain run.
    fn emit(&self, event: impl FnOnce(&Self) -> Event<O>) {
        if let Some(sink) = &self.sink {
            sink.push(event(self));
        }
    }

    /// The calls of an answer, proposed: told before any is decided.
    fn propose(&self, step: u32, calls: &[ToolCall]) {
        for call in calls {
            self.emit(|_| Event::CallProposed {
                step,
                call: call.clone(),
            });
        }
    }

    fn out_of_time(&self) -> bool {
        self.deadline
            .is_some_and(|deadline| Instant::now() >= deadline)
    }

    /// The time left, if limited.
    fn time_left(&self) -> Option<Duration> {
        self.deadline
            .map(|deadline| deadline.saturating_duration_since(Instant::now()))
    }

    /// Why no step may be taken now, if one may not.
    fn before_step(&self, limits: &Limits) -> Option<Exit> {
        if self.steps >= limits.steps {
            return Some(Exit::OutOfSteps {
                limit: limits.steps,
            });
        }
        if self.usage.total() >= limits.tokens {
            return Some(self.out_of_tokens(limits));
        }
        if self.out_of_time() {
            return Some(Exit::Deadline {
                limit: limits.wall_time,
            });
        }
        None
    }

    fn over_budget(&self, limits: &Limits) -> bool {
        self.usage.total() > limits.tokens
    }

    fn out_of_tokens(&self, limits: &Limits) -> Exit {
        Exit::OutOfTokens {
            used: self.usage.total(),
            limit: limits.tokens,
        }
    }

    fn finish(self, exit: Exit) -> Run<O> {
        Run {
            exit,
            output: self.output,
            transcript: self.messages,
            calls: self.calls,
            plans: self.plans,
            answers: self.answers,
            steps: self.steps,
            usage: self.usage,
            elapsed: self.started.elapsed(),
        }
    }
}

/// The exit of a run its journal stopped: never seen by a user, since
/// [`Durable`](crate::durable::Durable) gives the journal's typed reason
/// instead of the run.
fn halted(message: String) -> Exit {
    Exit::ModelFailed(ModelError::other(message))
}

/// Whether an answer's text is JSON (after blanks, or in a fence): a
/// model asked for a call that answered with the value instead is told
/// what is wrong with the value, not that it should call.
fn looks_like_json(text: &str) -> bool {
    let text = text.trim_start();
    text.starts_with(['{', '[']) || text.starts_with("```")
}

/// The exit for an output type whose schema could not make a tool (deeper
/// than a tool's schema may be): nothing the model answers can fit.
fn output_unusable(typed: &output::TypedOutput) -> Exit {
    Exit::OutputInvalid {
        error: match &typed.toolbox {
            Err(problem) => format!("the output type cannot be asked for: {problem}"),
            Ok(_) => "the output type cannot be asked for".to_owned(),
        },
        attempts: 0,
    }
}
