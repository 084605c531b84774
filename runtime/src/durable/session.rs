//! One run's journal, open: where the run stands in it, and what it says
//! about each call the run makes.

use std::sync::{Mutex, MutexGuard, PoisonError};

use futures::future::BoxFuture;
use serde_json::Value as Json;

use crate::effect::{Effect, EffectSet, Effects};
use crate::error::ToolError;
use crate::model::Response;
use crate::toolbox::{NoContext, ToolOutput, Toolbox, ToolboxContext};

use super::record::{self, Input, Record, RecordedResponse, RecordedResult, Resolution, ToolStamp};
use super::{
    load, schema_stamp, AnswerHook, Asked, Before, CallHook, DurableError, InDoubt, Journal,
    Source, Stage, FORMAT_VERSION,
};
use crate::toolbox::ApprovalNote;

/// One call as the journal has it.
#[derive(Debug)]
pub(super) struct Recorded {
    pub(super) tool: String,
    pub(super) args: Json,
    pub(super) at_ms: u64,
    pub(super) result: Option<RecordedResult>,
    /// What recovery did before it ran, as the model was told.
    recovery: Vec<String>,
    pub(super) resolution: Option<Resolution>,
    /// An approval asks about the call: it runs only once `approved`.
    approval: bool,
    approved: bool,
    /// Its approval could not be recorded: it did not run, and its
    /// refusal is not its result.
    unnoted: bool,
}

impl Recorded {
    fn started(tool: String, args: Json, at_ms: u64, approval: bool) -> Recorded {
        Recorded {
            tool,
            args,
            at_ms,
            result: None,
            recovery: Vec::new(),
            resolution: None,
            approval,
            approved: false,
            unnoted: false,
        }
    }

    /// Whether the call may have run: it started, and no approval was
    /// waited for, or it was given.
    pub(super) fn may_have_run(&self) -> bool {
        !self.approval || self.approved
    }
}

/// A run's journal, read, and where the run stands in it.
#[derive(Debug)]
pub(super) struct State {
    pub(super) calls: Vec<Recorded>,
    /// The number of the next call the run makes.
    next: usize,
    /// The next position in the journal.
    seq: u64,
    pub(super) sources: Vec<Source>,
    /// An agent run's recorded answers, in step order.
    answers: Vec<Response>,
    /// The number of answers the run has taken so far.
    next_answer: usize,
    /// Of those, the ones the model was asked for in this process.
    pub(super) asked: usize,
    /// The outcome of the last `finished` record: a run whose end is
    /// recorded again only when it ends otherwise (an agent run that
    /// stopped on a model's outage, resumed, and answered).
    finished: Option<Json>,
    /// Why the run was stopped, once it is.
    stopped: Option<DurableError>,
}

impl State {
    /// Reads the calls of a run's records, in order.
    pub(super) fn read(run: &str, records: &[Record]) -> Result<State, DurableError> {
        let unreadable = |message: String| DurableError::Unreadable {
            run: run.to_owned(),
            message,
        };
        let mut calls: Vec<Recorded> = Vec::new();
        let mut answers: Vec<Response> = Vec::new();
        let mut finished = None;
        for (seq, record) in records.iter().enumerate() {
            let index = |call: u64| usize::try_from(call).unwrap_or(usize::MAX);
            match record {
                Record::Started { format, .. } => {
                    if seq != 0 {
                        return Err(unreadable(format!("record {seq} starts the run again")));
                    }
                    if *format > FORMAT_VERSION {
                        return Err(unreadable(format!(
                            "it is in record format {format}, and this version reads up to {FORMAT_VERSION}"
                        )));
                    }
                }
                _ if seq == 0 => {
                    return Err(unreadable("its first record is not the run's start".into()))
                }
                Record::CallStarted {
                    call,
                    tool,
                    args,
                    at_ms,
                    approval,
                    ..
                } => {
                    let call = index(*call);
                    let started = Recorded::started(tool.clone(), args.clone(), *at_ms, *approval);
                    match call.cmp(&calls.len()) {
                        std::cmp::Ordering::Equal => calls.push(started),
                        // Started again: re-run after a crash, or retried.
                        std::cmp::Ordering::Less => calls[call] = started,
                        std::cmp::Ordering::Greater => {
                            return Err(unreadable(format!(
                                "record {seq} starts call {call} after {} calls",
                                calls.len()
                            )))
                        }
                    }
                }
                Record::CallFinished {
                    call,
                    result,
                    recovery,
                    ..
                } => match calls.get_mut(index(*call)) {
                    Some(recorded) => {
                        recorded.result = Some(result.clone());
                        recorded.recovery = recovery.clone();
                    }
                    None => {
                        return Err(unreadable(format!(
                            "record {seq} finishes call {call}, which did not start"
                        )))
                    }
                },
                Record::Resolved {
                    call, resolution, ..
                } => match calls.get_mut(index(*call)) {
                    Some(recorded) => recorded.resolution = Some(resolution.clone()),
                    None => {
                        return Err(unreadable(format!(
                            "record {seq} resolves call {call}, which did not start"
                        )))
                    }
                },
                Record::Approved { call, .. } => match calls.get_mut(index(*call)) {
                    Some(recorded) => recorded.approved = true,
                    None => {
                        return Err(unreadable(format!(
                            "record {seq} approves call {call}, which did not start"
                        )))
                    }
                },
                Record::ModelAnswered { step, response, .. } => {
                    if usize::try_from(*step).ok() != Some(answers.len() + 1) {
                        return Err(unreadable(format!(
                            "record {seq} answers step {step} after {} answers",
                            answers.len()
                        )));
                    }
                    answers.push(response.to_response());
                }
                Record::Finished { outcome, .. } => finished = Some(outcome.clone()),
            }
        }
        Ok(State {
            calls,
            next: 0,
            seq: records.len() as u64,
            sources: Vec::new(),
            answers,
            next_answer: 0,
            asked: 0,
            finished,
            stopped: None,
        })
    }
}

/// One run's journal, open: what [`CallHook`] asks.
pub(super) struct Session<'a, A: Effects, C: ToolboxContext = NoContext> {
    journal: &'a dyn Journal,
    pub(super) toolbox: &'a Toolbox<A, C>,
    pub(super) run: &'a str,
    state: Mutex<State>,
}

impl<'a, A: Effects, C: ToolboxContext> Session<'a, A, C> {
    /// Opens run `run`: reads its journal and checks it against `input`
    /// and the toolbox, or records its start.
    pub(super) async fn open(
        journal: &'a dyn Journal,
        toolbox: &'a Toolbox<A, C>,
        run: &'a str,
        input: Input,
        tools: Vec<ToolStamp>,
    ) -> Result<Session<'a, A, C>, DurableError> {
        let records = load(journal, run).await?;
        let state = if records.is_empty() {
            let start = Record::Started {
                format: FORMAT_VERSION,
                at_ms: record::now_ms(),
                input,
                tools,
            };
            journal
                .append(run, 0, &start)
                .await
                .map_err(|error| DurableError::Journal {
                    run: run.to_owned(),
                    stage: Stage::Start,
                    error,
                })?;
            State::read(run, std::slice::from_ref(&start))?
        } else {
            let state = State::read(run, &records)?;
            if let Some(Record::Started {
                input: recorded,
                tools: used,
                ..
            }) = records.first()
            {
                if *recorded != input {
                    return Err(DurableError::InputChanged {
                        run: run.to_owned(),
                    });
                }
                let called = records.iter().filter_map(|record| match record {
                    Record::CallStarted { tool, schema, .. } => Some((tool, schema)),
                    _ => None,
                });
                let used = used.iter().map(|stamp| (&stamp.name, &stamp.schema));
                for (tool, schema) in used.chain(called) {
                    let current = toolbox.spec(tool).map(schema_stamp);
                    if current.as_ref() != Some(schema) {
                        return Err(DurableError::ToolChanged {
                            run: run.to_owned(),
                            tool: tool.clone(),
                            recorded: schema.clone(),
                            current,
                        });
                    }
                }
            }
            state
        };
        Ok(Session {
            journal,
            toolbox,
            run,
            state: Mutex::new(state),
        })
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, State> {
        // Never held across an await, nor while user code runs.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The error that stopped the run.
    pub(super) fn stopped(&self) -> DurableError {
        self.lock()
            .stopped
            .clone()
            .unwrap_or_else(|| DurableError::Unreadable {
                run: self.run.to_owned(),
                message: "the run was stopped without a reason".into(),
            })
    }

    fn stop(&self, error: DurableError) -> Before {
        let message = error.to_string();
        self.lock().stopped = Some(error);
        Before::Stop(message)
    }

    async fn append(&self, record: Record, stage: Stage) -> Result<(), DurableError> {
        let seq = self.lock().seq;
        match self.journal.append(self.run, seq, &record).await {
            Ok(()) => {
                self.lock().seq = seq + 1;
                Ok(())
            }
            Err(error) => Err(DurableError::Journal {
                run: self.run.to_owned(),
                stage,
                error,
            }),
        }
    }

    /// Whether a tool's call in doubt may run again: it neither writes nor
    /// reaches the open world, or it is idempotent.
    fn rerunnable(&self, tool: &str) -> bool {
        self.toolbox.spec(tool).is_some_and(|spec| {
            let effects: EffectSet = spec.effects();
            spec.is_idempotent()
                || !(effects.contains(Effect::Write) || effects.contains(Effect::Network))
        })
    }

    async fn decide(&self, tool: &str, args: &str, gated: bool) -> Before {
        let args: Json = match serde_json::from_str(args) {
            Ok(args) => args,
            Err(_) => Json::String(args.to_owned()),
        };
        // What the journal says about this call, decided under the lock.
        enum Next {
            Start(Source),
            Replay(Result<ToolOutput, ToolError>, Source),
        }
        let (call, plan) = {
            let mut state = self.lock();
            if let Some(stopped) = &state.stopped {
                let message = stopped.to_string();
                return Before::Stop(message);
            }
            let call = state.next;
            state.next += 1;
            let plan = match state.calls.get(call) {
                None => Next::Start(Source::Ran),
                Some(recorded) if recorded.tool != tool || recorded.args != args => {
                    let error = DurableError::Diverged {
                        run: self.run.to_owned(),
                        call: call as u64,
                        recorded: format!(
                            "`{}` {}",
                            recorded.tool,
                            crate::cut::cut(&crate::json::to_text(&recorded.args), 200)
                        ),
                        found: format!(
                            "`{tool}` {}",
                            crate::cut::cut(&crate::json::to_text(&args), 200)
                        ),
                    };
                    drop(state);
                    return self.stop(error);
                }
                Some(recorded) => match (&recorded.result, &recorded.resolution) {
                    (Some(result), _) => Next::Replay(
                        result.replay_with(tool, &recorded.recovery),
                        Source::Replayed,
                    ),
                    (None, Some(resolution)) => match resolution.replay(tool) {
                        Some(result) => Next::Replay(result, Source::Resolved),
                        None => Next::Start(Source::Rerun),
                    },
                    (None, None) if self.rerunnable(tool) || !recorded.may_have_run() => {
                        Next::Start(Source::Rerun)
                    }
                    (None, None) => {
                        let error = DurableError::InDoubt(Box::new(InDoubt {
                            run: self.run.to_owned(),
                            call: call as u64,
                            tool: tool.to_owned(),
                            args: recorded.args.clone(),
                            started_at_ms: recorded.at_ms,
                        }));
                        drop(state);
                        return self.stop(error);
                    }
                },
            };
            (call, plan)
        };
        match plan {
            Next::Replay(result, source) => {
                self.lock().sources.push(source);
                Before::Replay(result)
            }
            Next::Start(source) => {
                let schema = self
                    .toolbox
                    .spec(tool)
                    .map(schema_stamp)
                    .unwrap_or_default();
                let at_ms = record::now_ms();
                let record = Record::CallStarted {
                    call: call as u64,
                    tool: tool.to_owned(),
                    schema,
                    args: args.clone(),
                    approval: gated,
                    at_ms,
                };
                let stage = Stage::CallStart {
                    call: call as u64,
                    tool: tool.to_owned(),
                };
                if let Err(error) = self.append(record, stage).await {
                    return self.stop(error);
                }
                let mut state = self.lock();
                let started = Recorded::started(tool.to_owned(), args, at_ms, gated);
                if call < state.calls.len() {
                    state.calls[call] = started;
                } else {
                    state.calls.push(started);
                }
                state.sources.push(source);
                Before::Run(call as u64)
            }
        }
    }

    async fn record(
        &self,
        call: u64,
        tool: &str,
        result: &Result<ToolOutput, ToolError>,
    ) -> Result<(), String> {
        let call = usize::try_from(call).unwrap_or(usize::MAX);
        if self.lock().calls.get(call).is_some_and(|c| c.unnoted) {
            // Refused because its approval was not recorded: the run is
            // stopped, and the call is asked about again on resume.
            return Err(self.stopped().to_string());
        }
        let recorded = RecordedResult::of(result);
        let recovery = RecordedResult::recovery(result);
        let record = Record::CallFinished {
            call: call as u64,
            result: recorded.clone(),
            recovery: recovery.clone(),
            at_ms: record::now_ms(),
        };
        let stage = Stage::CallResult {
            call: call as u64,
            tool: tool.to_owned(),
        };
        match self.append(record, stage).await {
            Ok(()) => {
                if let Some(recorded_call) = self.lock().calls.get_mut(call) {
                    recorded_call.result = Some(recorded);
                    recorded_call.recovery = recovery;
                }
                Ok(())
            }
            Err(error) => match self.stop(error) {
                Before::Stop(message) => Err(message),
                _ => Err(String::new()),
            },
        }
    }

    /// Ends a run: the typed reason it was stopped, or its end recorded
    /// (`outcome`, for people reading the journal) and where each call's
    /// result came from.
    pub(super) async fn finish(&self, outcome: Json) -> Result<Vec<Source>, DurableError> {
        let (stopped, finished) = {
            let mut state = self.lock();
            (state.stopped.take(), state.finished.take())
        };
        if let Some(error) = stopped {
            return Err(error);
        }
        if finished.as_ref() != Some(&outcome) {
            let record = Record::Finished {
                outcome,
                at_ms: record::now_ms(),
            };
            self.append(record, Stage::Finish).await?;
        }
        Ok(std::mem::take(&mut self.lock().sources))
    }

    /// Records that a call of `tool`, started and waiting for its
    /// approvals, was approved with `args`: the one started with these
    /// arguments, else (recovery repaired or rewrote them before they were
    /// asked about) the last of the tool's waiting. A `Write` call runs
    /// alone, so only calls that may run again share a tool. `Err` stops the
    /// run, and the call does not run.
    async fn record_approval(&self, tool: &str, args: &Json) -> Result<(), String> {
        let call = {
            let state = self.lock();
            let waiting =
                |c: &&Recorded| c.tool == tool && c.approval && !c.approved && c.result.is_none();
            let exact = state
                .calls
                .iter()
                .rposition(|c| waiting(&c) && c.args == *args);
            exact.or_else(|| state.calls.iter().rposition(|c| waiting(&c)))
        };
        // A call the journal did not start (none: its hook was not asked)
        // has nothing to record.
        let Some(call) = call else {
            return Ok(());
        };
        let record = Record::Approved {
            call: call as u64,
            at_ms: record::now_ms(),
        };
        let stage = Stage::Approval {
            call: call as u64,
            tool: tool.to_owned(),
        };
        match self.append(record, stage).await {
            Ok(()) => {
                self.lock().calls[call].approved = true;
                Ok(())
            }
            Err(error) => {
                self.lock().calls[call].unnoted = true;
                match self.stop(error) {
                    Before::Stop(message) => Err(message),
                    _ => Err(String::new()),
                }
            }
        }
    }

    /// The next answer of an agent run: the recorded one, or the model is
    /// to be asked.
    fn next_answer(&self) -> Asked {
        let mut state = self.lock();
        if let Some(stopped) = &state.stopped {
            return Asked::Stop(stopped.to_string());
        }
        let at = state.next_answer;
        state.next_answer += 1;
        match state.answers.get(at) {
            Some(response) => Asked::Replay(response.clone()),
            None => {
                state.asked += 1;
                Asked::Ask
            }
        }
    }

    /// Records the answer the model gave for `step`.
    async fn record_answer(&self, step: u32, response: &Response) -> Result<(), String> {
        let record = Record::ModelAnswered {
            step,
            response: RecordedResponse::of(response),
            at_ms: record::now_ms(),
        };
        // Kept in the journal only: this process goes on past the recorded
        // answers, and never replays its own.
        match self.append(record, Stage::Answer { step }).await {
            Ok(()) => Ok(()),
            Err(error) => match self.stop(error) {
                Before::Stop(message) => Err(message),
                _ => Err(String::new()),
            },
        }
    }
}

impl<A: Effects, C: ToolboxContext> CallHook for Session<'_, A, C> {
    fn before<'a>(&'a self, tool: &'a str, args: &'a str, gated: bool) -> BoxFuture<'a, Before> {
        Box::pin(self.decide(tool, args, gated))
    }

    fn after<'a>(
        &'a self,
        call: u64,
        tool: &'a str,
        result: &'a Result<ToolOutput, ToolError>,
    ) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(self.record(call, tool, result))
    }
}

impl<A: Effects, C: ToolboxContext> ApprovalNote for Session<'_, A, C> {
    fn approved<'a>(&'a self, tool: &'a str, args: &'a Json) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(self.record_approval(tool, args))
    }
}

impl<A: Effects, C: ToolboxContext> AnswerHook for Session<'_, A, C> {
    fn answer(&self) -> Asked {
        self.next_answer()
    }

    fn answered<'a>(
        &'a self,
        step: u32,
        response: &'a Response,
    ) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(self.record_answer(step, response))
    }
}
