//! A plan as a step: found in the model's answer, checked and previewed
//! against the agent's tools and allowed effects, run through the agent's
//! toolbox (so its approvals are asked about each call), and its outcome
//! handed back to the model.

use std::fmt::Write;

use super::{Agent, Event, Exit, OnRefusal, PlanRecord, PlanRefusal, State};
use crate::durable::CallHook;
use crate::effect::Effects;
use crate::model::{Message, Model};
use crate::plan::author::{self, Written};
use crate::plan::{self, CallResult, Interpreter, Limit, ParseOptions, Plan, RunError};
use crate::toolbox::timer::within;
use crate::toolbox::ToolboxContext;
use crate::ToolError;

/// The plan in an answer, found as [`author::find_plan`] finds it, when the
/// answer means one: a fenced block tagged as a plan (then even one that
/// does not parse is a plan, and its errors go back to the model), λ-Tool
/// text that parses and calls a tool (prose never does), or the JSON form
/// (an object with a `plan` key).
pub(super) fn find(answer: &str) -> Option<Written<'_>> {
    let written = author::find_plan(answer)?;
    let meant = author::has_plan_fence(answer)
        || match written {
            Written::Text(text) => {
                (text.contains("exec tool") || text.contains("call tool"))
                    && Plan::parse(text).is_ok_and(|plan| !plan.tools().is_empty())
            }
            // Its keys read, nothing built: a plan too long to read is
            // still one, refused by its size.
            Written::Json(text) => plan::json::names_a_plan(text, ParseOptions::DEFAULT_MAX_BYTES),
        };
    meant.then_some(written)
}

impl<M: Model, A: Effects, O, C: ToolboxContext> Agent<M, A, O, C> {
    /// Runs a plan the model wrote: `Some` exit if the run stops.
    pub(super) async fn run_plan(
        &self,
        state: &mut State<'_, A, O, C>,
        step: u32,
        written: Written<'_>,
    ) -> Option<Exit> {
        let text = match written {
            Written::Text(text) | Written::Json(text) => text,
        };
        let record = |outcome| PlanRecord {
            step,
            text: text.to_owned(),
            outcome,
        };
        // Read and checked as an author's plan is: every error at once,
        // with hints, before anything runs; a line and column are the
        // answer's, the assistant message the step has just recorded.
        let answer = match state.messages.last() {
            Some(message @ Message::Assistant { .. }) => message.text(),
            _ => text,
        };
        let toolbox = state.toolbox.clone();
        let checked = author::read_in(answer, written, &ParseOptions::default()).and_then(|plan| {
            author::check_plan(&plan, &toolbox, toolbox.allowed()).map(|preview| (plan, preview))
        });
        let plan = match checked {
            Ok((plan, preview)) => {
                state.emit(|_| Event::PlanChecked { step, preview });
                plan
            }
            Err(error) => {
                state.messages.push(Message::user(error.for_model()));
                state.finish_plan(record(Err(PlanRefusal::Refused(error))));
                return None;
            }
        };
        // The agent's limits on plans, within the calls and time the run
        // has left, each call held to the agent's limits on calls.
        let calls_left = self.limits.tool_calls.saturating_sub(state.dispatched);
        let limits = self.limits.for_plan(calls_left, state.time_left());
        let interpreter = Interpreter::new(&toolbox).limits(limits);
        let run = match within(
            interpreter.run_checked(
                state.context,
                &plan,
                true,
                state.journal.map(|journal| journal as &dyn CallHook),
            ),
            state.deadline,
        )
        .await
        {
            Err(_) => {
                state.finish_plan(record(Err(PlanRefusal::Deadline)));
                return Some(Exit::Deadline {
                    limit: self.limits.wall_time,
                });
            }
            Ok(Err(error)) => {
                // The checks passed above; the interpreter's are the same.
                let error = author::AnswerError::Refused {
                    errors: vec![error],
                    nearest: Vec::new(),
                };
                state.messages.push(Message::user(error.for_model()));
                state.finish_plan(record(Err(PlanRefusal::Refused(error))));
                return None;
            }
            Ok(Ok(run)) => run,
        };
        state.dispatched = state
            .dispatched
            .saturating_add(u32::try_from(run.trace.len()).unwrap_or(u32::MAX));
        state.messages.push(Message::user(report(&run)));
        let exit = self.plan_stops(&run, state);
        state.finish_plan(record(Ok(run)));
        exit
    }

    /// Whether a plan's run ends the agent's: an escalation, a refusal when
    /// refusals stop it, or the run's own calls or time spent. (A plan
    /// stopped by a limit of its own, [`Limits::plans`](super::Limits::plans),
    /// is told to the model, and the run goes on.)
    fn plan_stops(&self, run: &plan::Run, state: &State<'_, A, O, C>) -> Option<Exit> {
        for call in &run.trace {
            match call.result() {
                CallResult::Err(ToolError::Escalation(escalation)) => {
                    return Some(Exit::Escalation(escalation.clone()))
                }
                CallResult::Refused(reason) if self.on_refusal == OnRefusal::Stop => {
                    return Some(Exit::Refused {
                        tool: call.tool().to_owned(),
                        reason: reason.clone(),
                    })
                }
                _ => {}
            }
        }
        match &run.outcome {
            Err(RunError::LimitExceeded {
                limit: Limit::Calls(_),
            }) if state.dispatched >= self.limits.tool_calls => Some(Exit::OutOfToolCalls {
                limit: self.limits.tool_calls,
            }),
            Err(RunError::LimitExceeded {
                limit: Limit::WallTime(_),
            }) if state.out_of_time() => Some(Exit::Deadline {
                limit: self.limits.wall_time,
            }),
            _ => None,
        }
    }
}

impl<A: Effects, O, C: ToolboxContext> State<'_, A, O, C> {
    /// Records what became of a plan, and tells a streamed run.
    fn finish_plan(&mut self, record: PlanRecord) {
        self.emit(|_| Event::PlanFinished(record.clone()));
        self.plans.push(record);
    }
}

/// What the model is told of a plan's run: each call, then its value or
/// what stopped it.
fn report(run: &plan::Run) -> String {
    let mut text = format!("Your plan ran {} tool call(s).", run.trace.len());
    for call in &run.trace {
        let result = match call.result() {
            CallResult::Ok(output) => format!("ok: {output}"),
            CallResult::Err(error) => format!("error: {error}"),
            CallResult::Refused(reason) => format!("refused, not run: {reason}"),
        };
        let _ = write!(text, "\n- {} {}: {result}", call.tool(), call.args());
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
            Some(Written::Text(
                "match exec tool a {} { Ok(x) => x, Err(e) => e.message }\n"
            ))
        );
        // Fenced as a plan, it is one even when it does not parse.
        let broken = "```lambda-tool\nwhile true { exec tool a {} }\n```";
        assert!(find(broken).is_some());
        let alone = "match exec tool a {} { Ok(x) => x, Err(e) => e.message }";
        assert_eq!(find(alone), Some(Written::Text(alone)));
        let json = r#"{"plan": {"kind": "int", "value": 1}}"#;
        assert_eq!(find(json), Some(Written::Json(json)));
        for not_a_plan in [
            "The refund went through.",
            "\"done\"",
            "I would call exec tool a, but it is not needed.",
            r#"{"name": "a", "arguments": {}}"#,
            "```json\n{\"name\": \"a\", \"arguments\": {}}\n```",
            "",
        ] {
            assert_eq!(find(not_a_plan), None, "{not_a_plan}");
        }
    }

    #[test]
    fn a_plan_past_the_size_limit_is_found_whole_and_json_that_is_no_plan_is_not() {
        let lists = ",[]".repeat(ParseOptions::DEFAULT_MAX_BYTES / 3 + 1);
        // Too long to read: found whole, for the reader to refuse by its size.
        let plan = format!("{{\"plan\": [[]{lists}]}}\nThat is the plan.");
        let line = plan.find('\n').unwrap() + 1;
        assert_eq!(find(&plan), Some(Written::Json(&plan[..line])));
        let data = format!("{{\"data\": [[]{lists}]}}");
        assert_eq!(find(&data), None);
        // Within the limit, a `plan` key anywhere among the keys.
        assert!(plan::json::names_a_plan(
            r#"{"why": "", "plan": {"kind": "unit"}}"#,
            64
        ));
        assert!(!plan::json::names_a_plan(
            r#"{"plan": {"kind": "unit"}"#,
            64
        ));
        assert!(!plan::json::names_a_plan(r#"[{"plan": 1}]"#, 64));
    }
}
