//! A plan as a step: found in the model's answer, checked and previewed
//! against the agent's tools and allowed effects, run through the agent's
//! toolbox (so its approvals are asked about each call), and its outcome
//! handed back to the model.

use std::fmt::Write;
use std::time::Duration;

use super::{Agent, Exit, OnRefusal, PlanRecord, PlanRefusal, State};
use crate::effect::Effects;
use crate::model::{Message, Model};
use crate::plan::{self, CallResult, Interpreter, Limit, Plan, RunError};
use crate::toolbox::timer::within;
use crate::ToolError;

/// The plan in an answer: a ```plan fenced block, or the whole answer when
/// it is plan text that calls a tool (prose never parses as one).
pub(super) fn find(answer: &str) -> Option<&str> {
    if let Some(start) = answer.find("```plan") {
        let body = &answer[start + "```plan".len()..];
        let body = body.split_once('\n').map_or("", |(_, rest)| rest);
        let end = body.find("```").unwrap_or(body.len());
        return Some(body[..end].trim());
    }
    let text = answer.trim();
    let calls_a_tool = text.contains("exec tool") || text.contains("call tool");
    (calls_a_tool && Plan::parse(text).is_ok_and(|plan| !plan.tools().is_empty())).then_some(text)
}

impl<M: Model, A: Effects> Agent<M, A> {
    /// Runs a plan the model wrote: `Some` exit if the run stops.
    pub(super) async fn run_plan(&self, state: &mut State, step: u32, text: &str) -> Option<Exit> {
        if state.over_budget(&self.limits) {
            return Some(state.out_of_tokens(&self.limits));
        }
        let record = |outcome| PlanRecord {
            step,
            text: text.to_owned(),
            outcome,
        };
        let plan = match Plan::parse(text) {
            Ok(plan) => plan,
            Err(error) => {
                state.messages.push(Message::user(format!(
                    "Your plan could not be read: {error}\nFix it and send it again."
                )));
                state.plans.push(record(Err(PlanRefusal::Parse(error))));
                return None;
            }
        };
        let calls_left = self.limits.tool_calls.saturating_sub(state.dispatched);
        let limits = plan::Limits::new()
            .calls(u64::from(calls_left))
            .wall_time(state.time_left().unwrap_or(Duration::MAX));
        let interpreter = Interpreter::new(&self.toolbox).limits(limits);
        let run = match within(interpreter.run(&plan), state.deadline).await {
            Err(_) => {
                state.plans.push(record(Err(PlanRefusal::Deadline)));
                return Some(Exit::Deadline {
                    limit: self.limits.wall_time,
                });
            }
            Ok(Err(error)) => {
                state.messages.push(Message::user(format!(
                    "Your plan was refused before anything ran: {error}\nFix it and send it again."
                )));
                state.plans.push(record(Err(PlanRefusal::Check(error))));
                return None;
            }
            Ok(Ok(run)) => run,
        };
        state.dispatched = state
            .dispatched
            .saturating_add(u32::try_from(run.trace.len()).unwrap_or(u32::MAX));
        state.messages.push(Message::user(report(&run)));
        let exit = self.plan_stops(&run);
        state.plans.push(record(Ok(run)));
        exit
    }

    /// Whether a plan's run ends the agent's.
    fn plan_stops(&self, run: &plan::Run) -> Option<Exit> {
        for call in &run.trace {
            match &call.result {
                CallResult::Err(ToolError::Escalation(escalation)) => {
                    return Some(Exit::Escalation(escalation.clone()))
                }
                CallResult::Refused(reason) if self.on_refusal == OnRefusal::Stop => {
                    return Some(Exit::Refused {
                        tool: call.tool.clone(),
                        reason: reason.clone(),
                    })
                }
                _ => {}
            }
        }
        match &run.outcome {
            Err(RunError::LimitExceeded {
                limit: Limit::Calls(_),
            }) => Some(Exit::OutOfToolCalls {
                limit: self.limits.tool_calls,
            }),
            Err(RunError::LimitExceeded {
                limit: Limit::WallTime(_),
            }) => Some(Exit::Deadline {
                limit: self.limits.wall_time,
            }),
            _ => None,
        }
    }
}

/// What the model is told of a plan's run: each call, then its value or
/// what stopped it.
fn report(run: &plan::Run) -> String {
    let mut text = format!("Your plan ran {} tool call(s).", run.trace.len());
    for call in &run.trace {
        let result = match &call.result {
            CallResult::Ok(output) => format!("ok: {output}"),
            CallResult::Err(error) => format!("error: {error}"),
            CallResult::Refused(reason) => format!("refused, not run: {reason}"),
        };
        let _ = write!(text, "\n- {} {}: {result}", call.tool, call.args);
    }
    match &run.outcome {
        Ok(value) => {
            let _ = write!(text, "\nIts value: {value}");
        }
        Err(error) => {
            let _ = write!(text, "\nIt stopped: {error}");
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_is_found_fenced_or_alone_and_prose_is_not_one() {
        let fenced = "I will do it in one go.\n```plan\nmatch exec tool a {} { Ok(x) => x, Err(e) => e.message }\n```\nDone.";
        assert_eq!(
            find(fenced),
            Some("match exec tool a {} { Ok(x) => x, Err(e) => e.message }")
        );
        let alone = "match exec tool a {} { Ok(x) => x, Err(e) => e.message }";
        assert_eq!(find(alone), Some(alone));
        for prose in [
            "The refund went through.",
            "\"done\"",
            "I would call exec tool a, but it is not needed.",
            "",
        ] {
            assert_eq!(find(prose), None, "{prose}");
        }
    }
}
