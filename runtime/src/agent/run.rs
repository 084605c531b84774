//! What a run of an agent gives back: why it stopped ([`Exit`]), the whole
//! conversation, and a record of each call and plan.

use std::fmt;
use std::time::Duration;

use crate::error::Escalation;
use crate::model::{Message, ModelError, Usage};
use crate::plan::{self, PlanError};
use crate::reader::ToolCall;
use crate::toolbox::ToolOutput;
use crate::ToolError;

/// A finished run of an [`Agent`](super::Agent).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Run {
    /// Why it stopped.
    pub exit: Exit,
    /// The whole conversation: the system prompt, the task, each answer of
    /// the model and each result handed back, in order. Every tool call in
    /// it is answered by a result, those that did not run included, so that
    /// it can be sent to a model again.
    pub transcript: Vec<Message>,
    /// Each tool call the model made, in order, with what became of it.
    pub calls: Vec<CallRecord>,
    /// Each plan the model wrote, in order, with its outcome.
    pub plans: Vec<PlanRecord>,
    /// The requests made to the model.
    pub steps: u32,
    /// The tokens spent, as the model reported them.
    pub usage: Usage,
    /// How long the run took.
    pub elapsed: Duration,
}

impl Run {
    /// The final answer, if the run ended with one.
    pub fn answer(&self) -> Option<&str> {
        match &self.exit {
            Exit::Answer(text) => Some(text),
            _ => None,
        }
    }

    /// How many tool calls were dispatched, a plan's included (calls that
    /// were not run are not counted).
    pub fn tool_calls(&self) -> usize {
        let direct = self
            .calls
            .iter()
            .filter(|record| !matches!(record.outcome, CallOutcome::NotRun { .. }))
            .count();
        let planned: usize = self
            .plans
            .iter()
            .filter_map(|plan| plan.outcome.as_ref().ok())
            .map(|run| run.trace.len())
            .sum();
        direct + planned
    }
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
            Exit::Deadline { .. } => "deadline",
            Exit::Escalation(_) => "escalation",
            Exit::Refused { .. } => "refused",
            Exit::Repeated { .. } => "repeated",
            Exit::ModelFailed(_) => "model_failed",
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
            Exit::OutOfTokens { used, limit } => {
                write!(
                    f,
                    "stopped: {used} tokens spent, over the budget of {limit}"
                )
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
    /// It is not valid plan text.
    Parse(plan::ParseError),
    /// It was checked and refused: nothing ran.
    Check(PlanError),
    /// The run's deadline passed while it ran; calls made until then ran.
    Deadline,
}

impl fmt::Display for PlanRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlanRefusal::Parse(error) => write!(f, "{error}"),
            PlanRefusal::Check(error) => write!(f, "{error}"),
            PlanRefusal::Deadline => f.write_str("the run's time ran out while the plan ran"),
        }
    }
}
