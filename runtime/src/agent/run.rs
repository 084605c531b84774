//! What a run of an agent gives back: why it stopped ([`Exit`]), the whole
//! conversation, and a record of each call and plan.

use std::fmt;
use std::time::Duration;

use crate::error::Escalation;
use crate::model::{Message, ModelError, StopReason, Usage};
use crate::plan;
use crate::reader::ToolCall;
use crate::toolbox::ToolOutput;
use crate::ToolError;

/// A finished run of an [`Agent`](super::Agent): `O` is what it was asked
/// for, the model's text (`String`) or a type given to
/// [`Agent::output`](super::Agent::output).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Run<O = String> {
    /// Why it stopped.
    pub exit: Exit,
    /// What it was asked for, when it ended with it ([`Exit::Answer`]):
    /// the model's text, or the typed value, read and checked.
    pub output: Option<O>,
    /// The whole conversation: the system prompt, the task, each answer of
    /// the model and each result handed back, in order. Every tool call in
    /// it is answered by a result, those that did not run included, so that
    /// it can be sent to a model again.
    pub transcript: Vec<Message>,
    /// Each tool call the model made, in order, with what became of it.
    pub calls: Vec<CallRecord>,
    /// Each plan the model wrote, in order, with its outcome.
    pub plans: Vec<PlanRecord>,
    /// Each answer of the model, in order: why it stopped and what it cost.
    pub answers: Vec<AnswerRecord>,
    /// The requests made to the model.
    pub steps: u32,
    /// The tokens spent, as the model reported them; where a provider
    /// reported none, estimated, and [`Usage::estimated`] says so.
    pub usage: Usage,
    /// How long the run took.
    pub elapsed: Duration,
}

impl<O> Run<O> {
    /// The final answer's text, if the run ended with one (for a typed
    /// output, its JSON as the model gave it; the value is
    /// [`output`](Self::output)).
    pub fn answer(&self) -> Option<&str> {
        match &self.exit {
            Exit::Answer(text) => Some(text),
            _ => None,
        }
    }

    /// What the run was asked for, if it ended with it: the model's text, or
    /// the typed value.
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::agent::Agent;
    /// use typed_tools::model::ScriptedModel;
    /// use typed_tools::Toolbox;
    ///
    /// let model = ScriptedModel::new([r#"[{"name": "final_result", "arguments": {"result": [3, 5]}}]"#]);
    /// let agent = Agent::new(&Toolbox::builder().build().unwrap(), model).output::<Vec<u32>>();
    /// let run = agent.run("Which items are low?").await;
    /// assert_eq!(run.output(), Some(&vec![3, 5]));
    /// # });
    /// ```
    pub fn output(&self) -> Option<&O> {
        self.output.as_ref()
    }

    /// This run, with `message` after its transcript, to go on with
    /// [`Agent::resume`](super::Agent::resume): the counts and limits carry
    /// on from where it stopped.
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::agent::Agent;
    /// use typed_tools::model::{Message, ScriptedModel};
    /// use typed_tools::Toolbox;
    ///
    /// let model = ScriptedModel::new(["Which city?", "Sunny in Lima."]);
    /// let agent = Agent::new(&Toolbox::builder().build().unwrap(), model);
    /// let asked = agent.run("What is the weather?").await;
    /// assert_eq!(asked.answer(), Some("Which city?"));
    /// let run = agent.resume(asked.then(Message::user("Lima"))).await;
    /// assert_eq!(run.answer(), Some("Sunny in Lima."));
    /// assert_eq!(run.steps, 2); // The whole run's.
    /// # });
    /// ```
    pub fn then(mut self, message: Message) -> Resume<O> {
        self.transcript.push(message);
        Resume {
            run: Some(self),
            transcript: Vec::new(),
        }
    }

    /// How many tool calls were dispatched, a plan's included: what
    /// [`Limits::tool_calls`](super::Limits::tool_calls) counts. A call
    /// dispatch refused (an unknown name, a tool outside the allowed
    /// effects, bad arguments, an approval's refusal) counts, since dispatch
    /// saw it; a call the agent did not dispatch (a limit reached, a failed
    /// call repeated) does not. For what ran, see
    /// [`calls_run`](Self::calls_run).
    ///
    /// | count | what |
    /// |---|---|
    /// | [`calls_proposed`](Self::calls_proposed) | every call the model made: in its answers, and the calls its plans made |
    /// | [`calls_run`](Self::calls_run) | the calls whose tool ran: an output, the tool's own error, a time-out |
    /// | [`calls_refused`](Self::calls_refused) | the others: refused by dispatch or an approval, or not dispatched; nothing ran |
    /// | [`tool_calls`](Self::tool_calls) | the calls dispatched (run or refused by dispatch), what the limit counts |
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::agent::Agent;
    /// use typed_tools::model::ScriptedModel;
    /// use typed_tools::{tool, Toolbox};
    ///
    /// /// Look up the weather in a city.
    /// #[tool(effects = Read)]
    /// fn weather(city: String) -> String { format!("sunny in {city}") }
    ///
    /// let toolbox = Toolbox::builder().tool(Weather).build().unwrap();
    /// let model = ScriptedModel::new([
    ///     r#"[{"name": "weather", "arguments": {"city": "Lima"}}, {"name": "wether", "arguments": {}}]"#,
    ///     "Sunny.",
    /// ]);
    /// let run = Agent::new(&toolbox, model).run("Weather in Lima?").await;
    /// assert_eq!((run.calls_proposed(), run.calls_run(), run.calls_refused()), (2, 1, 1));
    /// // The unknown name was dispatched, and refused there.
    /// assert_eq!(run.tool_calls(), 2);
    /// # });
    /// ```
    pub fn tool_calls(&self) -> usize {
        let direct = self
            .calls
            .iter()
            .filter(|record| !matches!(record.outcome, CallOutcome::NotRun { .. }))
            .count();
        direct + self.planned().count()
    }

    /// Every call the model made: each call of its answers, and each call
    /// its plans made.
    pub fn calls_proposed(&self) -> usize {
        self.calls.len() + self.planned().count()
    }

    /// The calls whose tool ran: it gave an output, failed with its own
    /// error, or was stopped at its time limit ([`ToolError::ran`]); a
    /// plan's included.
    pub fn calls_run(&self) -> usize {
        let direct = self.calls.iter().filter(|r| r.outcome.ran()).count();
        let planned = self
            .planned()
            .filter(|call| match call.result() {
                plan::CallResult::Ok(_) => true,
                plan::CallResult::Err(error) => error.ran(),
                plan::CallResult::Refused(_) => false,
            })
            .count();
        direct + planned
    }

    /// The calls that did not run: refused by dispatch (an unknown name, a
    /// tool outside the allowed effects, bad arguments) or an approval, or
    /// not dispatched (a limit reached, a failed call repeated); a plan's
    /// included.
    pub fn calls_refused(&self) -> usize {
        self.calls_proposed() - self.calls_run()
    }

    /// The calls the plans that ran made.
    fn planned(&self) -> impl Iterator<Item = &plan::TracedCall> {
        self.plans
            .iter()
            .filter_map(|plan| plan.outcome.as_ref().ok())
            .flat_map(|run| &run.trace)
    }
}

/// One answer of the model: why it stopped and what it cost.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnswerRecord {
    /// The step (from 1) it answered.
    pub step: u32,
    /// Why the model stopped.
    pub stop: StopReason,
    /// What it cost (estimated, when the provider reported nothing).
    pub usage: Usage,
}

/// Why a run stopped.
///
/// ```
/// use typed_tools::agent::Exit;
///
/// assert_eq!(Exit::OutOfSteps { limit: 8 }.to_string(), "stopped after 8 steps without a final answer");
/// assert!(Exit::Answer("done".into()).is_answer());
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Exit {
    /// The model answered without calling a tool: its answer.
    Answer(String),
    /// The step limit was reached before a final answer.
    OutOfSteps {
        /// The limit.
        limit: u32,
    },
    /// The model asked for a call past the tool-call limit; it did not run.
    OutOfToolCalls {
        /// The limit.
        limit: u32,
    },
    /// The token budget was spent, counted from the usage the model reported.
    OutOfTokens {
        /// Tokens spent.
        used: u64,
        /// The budget.
        limit: u64,
    },
    /// The model's answer was cut off at its token limit: not a final
    /// answer, and none of its calls ran (a call cut short may still read,
    /// with a value that lost its end).
    Truncated {
        /// The text it wrote before it was cut off.
        text: String,
        /// The limit the request set ([`Limits::answer_tokens`](super::Limits::answer_tokens),
        /// or the budget left).
        max_tokens: Option<u32>,
    },
    /// The wall-time limit passed.
    Deadline {
        /// The limit.
        limit: Duration,
    },
    /// A tool's recovery gave up and escalated
    /// ([`NextStep::Abort`](crate::NextStep::Abort)).
    Escalation(Box<Escalation>),
    /// An approval refused a call and the agent is set to stop then
    /// ([`OnRefusal::Stop`](super::OnRefusal::Stop)).
    Refused {
        /// The tool.
        tool: String,
        /// The approval's reason.
        reason: String,
    },
    /// The model sent a call that had failed, unchanged, again after being
    /// told it had failed.
    Repeated {
        /// The call.
        call: ToolCall,
        /// How it failed.
        error: String,
    },
    /// The model could not answer.
    ModelFailed(ModelError),
    /// The answer asked for ([`Agent::output`](super::Agent::output)) did
    /// not fit its type, or its validators, after every retry
    /// ([`Limits::output_retries`](super::Limits::output_retries)).
    OutputInvalid {
        /// What was wrong with the last answer, as the model was told.
        error: String,
        /// How many answers were refused.
        attempts: u32,
    },
}

impl Exit {
    /// Whether the run ended with a final answer.
    pub fn is_answer(&self) -> bool {
        matches!(self, Exit::Answer(_))
    }

    /// The exit's name, one word: `answer`, `out_of_steps`, ...
    ///
    /// ```
    /// use typed_tools::agent::Exit;
    ///
    /// assert_eq!(Exit::OutOfTokens { used: 12, limit: 10 }.name(), "out_of_tokens");
    /// ```
    pub fn name(&self) -> &'static str {
        match self {
            Exit::Answer(_) => "answer",
            Exit::OutOfSteps { .. } => "out_of_steps",
            Exit::OutOfToolCalls { .. } => "out_of_tool_calls",
            Exit::OutOfTokens { .. } => "out_of_tokens",
            Exit::Truncated { .. } => "truncated",
            Exit::Deadline { .. } => "deadline",
            Exit::Escalation(_) => "escalation",
            Exit::Refused { .. } => "refused",
            Exit::Repeated { .. } => "repeated",
            Exit::ModelFailed(_) => "model_failed",
            Exit::OutputInvalid { .. } => "output_invalid",
        }
    }
}

impl fmt::Display for Exit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Exit::Answer(text) => write!(f, "answered: {text}"),
            Exit::OutOfSteps { limit } => {
                write!(f, "stopped after {limit} steps without a final answer")
            }
            Exit::OutOfToolCalls { limit } => {
                write!(
                    f,
                    "stopped: the model asked for more than {limit} tool calls"
                )
            }
            Exit::OutOfTokens { used, limit } if used >= limit => {
                write!(
                    f,
                    "stopped: {used} tokens spent, over the budget of {limit}"
                )
            }
            Exit::OutOfTokens { used, limit } => write!(
                f,
                "stopped: {used} tokens spent of the budget of {limit}, too few left for the next request"
            ),
            Exit::Truncated { max_tokens, .. } => {
                f.write_str("stopped: the answer was cut off at the token limit")?;
                if let Some(max) = max_tokens {
                    write!(f, " ({max} tokens)")?;
                }
                f.write_str("; raise `Limits::answer_tokens` (or the budget) for longer answers")
            }
            Exit::Deadline { limit } => write!(f, "stopped: the run took longer than {limit:?}"),
            Exit::Escalation(escalation) => write!(
                f,
                "stopped: {} escalated: {}",
                escalation.source, escalation.reason
            ),
            Exit::Refused { tool, reason } => {
                write!(f, "stopped: the call to `{tool}` was refused: {reason}")
            }
            Exit::Repeated { call, error } => write!(
                f,
                "stopped: the model repeated a failed call to `{}` unchanged: {error}",
                call.name
            ),
            Exit::ModelFailed(error) => write!(f, "stopped: {error}"),
            Exit::OutputInvalid { error, attempts } => write!(
                f,
                "stopped: {attempts} answers did not fit the output asked for; the last: {error}"
            ),
        }
    }
}

/// One tool call the model made, and what became of it.
#[derive(Clone, Debug, PartialEq)]
pub struct CallRecord {
    /// The step (from 1) whose answer made the call.
    pub step: u32,
    /// The call, as the model made it.
    pub call: ToolCall,
    /// What became of it.
    pub outcome: CallOutcome,
    /// How long it took, from dispatch to result.
    pub duration: Duration,
}

/// What became of one call.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum CallOutcome {
    /// The tool ran: its output.
    Ok(ToolOutput),
    /// Dispatch refused it or the tool failed: an unknown name or a tool
    /// outside the agent's effects (never run), bad arguments, a refusal
    /// by approval, the tool's own error.
    Err(ToolError),
    /// It did not finish within the per-call limit and was stopped.
    TimedOut {
        /// The limit.
        after: Duration,
    },
    /// It was not dispatched: a limit was reached, or it repeated a call
    /// that had failed.
    NotRun {
        /// Why, as the model was told.
        reason: String,
    },
}

impl CallOutcome {
    /// Whether the tool ran: an output, its own error, a time-out.
    pub fn ran(&self) -> bool {
        match self {
            CallOutcome::Ok(_) | CallOutcome::TimedOut { .. } => true,
            CallOutcome::Err(error) => error.ran(),
            CallOutcome::NotRun { .. } => false,
        }
    }
}

/// One plan the model wrote, and its outcome.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanRecord {
    /// The step (from 1) whose answer held it.
    pub step: u32,
    /// Its text, as found in the answer.
    pub text: String,
    /// The run (its outcome and trace), or why it did not run.
    pub outcome: Result<plan::Run, PlanRefusal>,
}

/// Why a plan the model wrote did not run.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum PlanRefusal {
    /// It could not be read, or the checks refused it: nothing ran. The
    /// model was told [`AnswerError::for_model`](plan::author::AnswerError::for_model).
    Refused(plan::author::AnswerError),
    /// The run's deadline passed while it ran; calls made until then ran.
    Deadline,
}

impl fmt::Display for PlanRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlanRefusal::Refused(error) => write!(f, "{error}"),
            PlanRefusal::Deadline => f.write_str("the run's time ran out while the plan ran"),
        }
    }
}

/// Where [`Agent::resume`](super::Agent::resume) starts: an earlier run
/// carried on ([`Run::then`], or the run as it is), its counts, records and
/// limits going on from where it stopped; or a conversation alone, counted
/// from zero.
///
/// ```
/// # futures::executor::block_on(async {
/// use typed_tools::agent::Agent;
/// use typed_tools::model::{Message, ScriptedModel};
/// use typed_tools::Toolbox;
///
/// let agent = Agent::new(&Toolbox::builder().build().unwrap(), ScriptedModel::new(["Hello, Ada."]));
/// // A conversation kept elsewhere, counted from zero.
/// let saved = vec![Message::user("I am Ada."), Message::assistant("Noted."), Message::user("Greet me.")];
/// let run = agent.resume(saved).await;
/// assert_eq!(run.answer(), Some("Hello, Ada."));
/// # });
/// ```
#[derive(Clone, Debug)]
pub struct Resume<O = String> {
    pub(super) run: Option<Run<O>>,
    pub(super) transcript: Vec<Message>,
}

impl<O> From<Run<O>> for Resume<O> {
    fn from(run: Run<O>) -> Resume<O> {
        Resume {
            run: Some(run),
            transcript: Vec::new(),
        }
    }
}

impl<O> From<Vec<Message>> for Resume<O> {
    fn from(transcript: Vec<Message>) -> Resume<O> {
        Resume {
            run: None,
            transcript,
        }
    }
}
