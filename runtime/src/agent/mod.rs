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
mod plans;
mod prompt;
mod run;

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::{FutureExt, StreamExt};

use crate::catalog::CatalogFormat;
use crate::effect::{EffectSet, Effects, ReadWriteNetwork};
use crate::model::{
    request_tokens, Message, Model, ModelError, Request, Response, StopReason, StreamEvent, Usage,
};
use crate::reader::{CallFormat, ReadError, ToolCall};
use crate::toolbox::timer::{within, Elapsed};
use crate::toolbox::{trace, Approval, Toolbox};

use tracing::field::Empty;
use tracing::Instrument;

use events::Sink;
pub use events::{Event, RunStream};
pub use limits::Limits;
pub use run::{AnswerRecord, CallOutcome, CallRecord, Exit, PlanRecord, PlanRefusal, Run};

/// A bounded loop of model steps over a toolbox; see the [module docs](self).
///
/// `M` is the model: a provider's client, a [`ScriptedModel`](crate::model::ScriptedModel),
/// or an `Arc<dyn Model>`. Set up with [`Agent::new`] and setters; run with
/// [`run`](Self::run) (a task) or [`resume`](Self::resume) (a conversation).
pub struct Agent<M, A: Effects = ReadWriteNetwork> {
    toolbox: Toolbox<A>,
    model: M,
    limits: Limits,
    system: String,
    on_refusal: OnRefusal,
    plans: bool,
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

impl<M, A: Effects> fmt::Debug for Agent<M, A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Agent")
            .field("toolbox", &self.toolbox)
            .field("limits", &self.limits)
            .field("system", &self.system)
            .field("on_refusal", &self.on_refusal)
            .field("plans", &self.plans)
            .finish_non_exhaustive()
    }
}

impl<M: Model, A: Effects> Agent<M, A> {
    /// An agent over `toolbox`'s tools (a cheap clone of the view, with its
    /// allowed effects and approvals) and `model`, with the default
    /// [`Limits`], no system prompt of its own, refusals handed back to the
    /// model, and plans off.
    pub fn new(toolbox: &Toolbox<A>, model: M) -> Agent<M, A> {
        Agent {
            toolbox: toolbox.clone(),
            model,
            limits: Limits::new(),
            system: String::new(),
            on_refusal: OnRefusal::default(),
            plans: false,
        }
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
    pub fn approval(mut self, approval: Approval<'static>) -> Self {
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
    pub fn toolbox(&self) -> &Toolbox<A> {
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
    pub async fn run(&self, task: impl Into<String>) -> Run {
        self.resume(self.start(task)).await
    }

    /// Runs the agent on a conversation: a transcript of an earlier run, a
    /// person's answer added, say. The limits count from here.
    pub async fn resume(&self, transcript: Vec<Message>) -> Run {
        self.drive(transcript, None).await
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
    pub fn run_stream(&self, task: impl Into<String>) -> RunStream<'_> {
        self.resume_stream(self.start(task))
    }

    /// Runs the agent on a conversation as [`resume`](Self::resume) does,
    /// live, as [`run_stream`](Self::run_stream) does.
    pub fn resume_stream(&self, transcript: Vec<Message>) -> RunStream<'_> {
        let sink = Arc::new(Sink::default());
        RunStream::new(
            self.drive(transcript, Some(Arc::clone(&sink))).boxed(),
            sink,
        )
    }

    /// The conversation a run on `task` starts with.
    fn start(&self, task: impl Into<String>) -> Vec<Message> {
        vec![Message::system(self.system_prompt()), Message::user(task)]
    }

    /// The loop of steps, telling `sink` what happens when it streams.
    async fn drive(&self, transcript: Vec<Message>, sink: Option<Arc<Sink>>) -> Run {
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
        let mut state = State::new(transcript, &self.limits, toolbox, sink);
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
    async fn step(&self, state: &mut State<A>, current: &tracing::Span) -> Option<Exit> {
        let step = state.steps;
        state.emit(|_| Event::Step { step });
        let request = match self.request(state) {
            Ok(request) => request,
            Err(exit) => return Some(exit),
        };
        let max_tokens = request.max_tokens;
        let response = match within(self.ask(request, state.sink.as_deref()), state.deadline).await
        {
            Err(Elapsed) => {
                return Some(Exit::Deadline {
                    limit: self.limits.wall_time,
                })
            }
            Ok(Err(error)) => return Some(Exit::ModelFailed(error)),
            Ok(Ok(response)) => response,
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
        let answer = self.read(&state.toolbox, &response);
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
                self.run_calls(state, step, &calls).await
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
                Some(Exit::Answer(response.text))
            }
        }
    }

    /// Asks the model, in a `model_request` span; when the run streams,
    /// with [`Model::stream`], telling the sink the text and reasoning as
    /// they come.
    async fn ask(&self, request: Request, sink: Option<&Sink>) -> Result<Response, ModelError> {
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
    fn request(&self, state: &State<A>) -> Result<Request, Exit> {
        let mut request = Request::new(state.messages.clone());
        if let Some(format) = self.native() {
            request = request.tools(state.toolbox.catalog(format));
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

    /// What an answer asks for.
    fn read<'r>(&self, toolbox: &Toolbox<A>, response: &'r Response) -> Answer<'r> {
        if self.native().is_some() {
            if !response.calls.is_empty() {
                return Answer::Calls(response.calls.clone());
            }
        } else {
            match toolbox.read_calls(CallFormat::Auto, &response.text) {
                Ok(calls) if !calls.is_empty() => return Answer::Calls(calls),
                Ok(_) => {}
                Err(error)
                    if prompt::is_a_call_attempt(&response.text, &error, toolbox.names()) =>
                {
                    if let Some(plan) = self.plans.then(|| plans::find(&response.text)).flatten() {
                        return Answer::Plan(plan);
                    }
                    return Answer::Unreadable(error);
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
struct State<A: Effects> {
    toolbox: Toolbox<A>,
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
    /// Where a streamed run's events go; `None` for a plain run.
    sink: Option<Arc<Sink>>,
}

impl<A: Effects> State<A> {
    fn new(
        messages: Vec<Message>,
        limits: &Limits,
        toolbox: Toolbox<A>,
        sink: Option<Arc<Sink>>,
    ) -> State<A> {
        let started = Instant::now();
        State {
            toolbox,
            messages,
            calls: Vec::new(),
            plans: Vec::new(),
            answers: Vec::new(),
            steps: 0,
            usage: Usage::default(),
            dispatched: 0,
            started,
            deadline: started.checked_add(limits.wall_time),
            failed: Vec::new(),
            sink,
        }
    }

    /// Tells a streamed run's stream what happened; nothing is made for a
    /// plain run.
    fn emit(&self, event: impl FnOnce(&Self) -> Event) {
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

    fn finish(self, exit: Exit) -> Run {
        Run {
            exit,
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
