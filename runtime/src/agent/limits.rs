//! What an agent's run may consume: [`Limits`].

use std::time::Duration;

use crate::plan::{self, limits::CallLimits};

/// The most one [`Agent::run`](super::Agent::run) may consume. Each is
/// checked before the work it bounds (a step before the model is asked, a
/// call before it is dispatched), so a run stops at its limit with a typed
/// [`Exit`](super::Exit), never past it.
///
/// | limit | default | what it counts | applies to | exit |
/// |---|---|---|---|---|
/// | [`steps`](Self::steps) | 16 | requests to the model | the run | [`OutOfSteps`](super::Exit::OutOfSteps) |
/// | [`tool_calls`](Self::tool_calls) | 64 | calls dispatched | the run: its calls and its plans' calls together | [`OutOfToolCalls`](super::Exit::OutOfToolCalls) |
/// | [`tokens`](Self::tokens) | 200,000 | tokens in and out, as the model reports them ([`Usage`](crate::model::Usage); estimated where it reports none) | the run | [`OutOfTokens`](super::Exit::OutOfTokens) |
/// | [`answer_tokens`](Self::answer_tokens) | 4,096 | one answer's tokens: each request asks for at most this, or the budget left if less | each request | [`Truncated`](super::Exit::Truncated) when an answer is cut off |
/// | [`wall_time`](Self::wall_time) | 5 min | time since the run started; a model request or a call in progress is stopped when it passes | the run, its plans included | [`Deadline`](super::Exit::Deadline) |
/// | [`per_call`](Self::per_call) | 60 s | one tool call, the wait for its approvals included | every call: the model's own and each call in its plans | — (the call is stopped; see below) |
/// | [`plans`](Self::plans) | [`plan::Limits::new`] with no calls or wall time of its own | each plan's evaluation: steps, values, memory | each plan | — (the plan stops; the model is told) |
/// | [`output_retries`](Self::output_retries) | 3 | answers that did not fit the output asked for ([`Agent::output`](super::Agent::output)) or its validators, each told to the model | the run | [`OutputInvalid`](super::Exit::OutputInvalid) |
///
/// Every call the agent makes is held to the same limits, whether the model
/// asked for it directly or in a plan: a plan runs within
/// [`plans`](Self::plans), its tool calls, wall time and per-call time each
/// the smaller of what `plans` says and what the run has left (calls not
/// yet made, time not yet spent, [`per_call`](Self::per_call)). A direct
/// call past its time is recorded as
/// [`CallOutcome::TimedOut`](super::CallOutcome::TimedOut); a plan's call
/// past it is [`ToolError::TimedOut`](crate::ToolError::TimedOut), which
/// an `exec` hands to the plan's `Err` branch (kind `timed_out`). Either
/// way the model is told that the call was stopped and may or may not
/// have taken effect.
///
/// Tokens are known only once the model has answered, so the budget is
/// checked before each step and before the calls of an answer: an answer
/// that goes past it runs none of its calls. Each request also tells the
/// model the most it may write (`max_tokens`): the smaller of
/// [`answer_tokens`](Self::answer_tokens) and what the budget leaves once
/// the request itself (estimated, a token per four bytes) is counted; a
/// server that ignores it still has its answer counted. An answer cut off
/// at that limit is not a final answer: the run ends with
/// [`Exit::Truncated`](super::Exit::Truncated), its calls not run. A sync tool runs to its end
/// inside the first poll of its call and cannot be stopped; the time limits
/// stop async tools, approvals waiting for an answer, and the model.
///
/// ```
/// use std::time::Duration;
/// use typed_tools::agent::Limits;
/// use typed_tools::plan;
///
/// let limits = Limits::new()
///     .steps(4)
///     .tokens(10_000)
///     .per_call(Duration::from_secs(5))
///     .plans(plan::Limits::new().memory(1 << 20));
/// assert_ne!(limits, Limits::default());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pub(super) steps: u32,
    pub(super) tool_calls: u32,
    pub(super) tokens: u64,
    pub(super) answer_tokens: u32,
    pub(super) wall_time: Duration,
    pub(super) output_retries: u32,
    /// The limits on each call, direct or in a plan.
    pub(super) call: CallLimits,
    /// What each plan may consume, before the run's own caps.
    plans: plan::Limits,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits::new()
    }
}

impl Limits {
    /// The defaults (see the table above).
    pub const fn new() -> Limits {
        Limits {
            steps: 16,
            tool_calls: 64,
            tokens: 200_000,
            answer_tokens: 4096,
            wall_time: Duration::from_secs(5 * 60),
            output_retries: 3,
            call: CallLimits::DEFAULT,
            // A plan's calls and time are what the run has left.
            plans: plan::Limits::new().calls(u64::MAX).wall_time(Duration::MAX),
        }
    }

    /// At most `steps` requests to the model.
    pub const fn steps(mut self, steps: u32) -> Limits {
        self.steps = steps;
        self
    }

    /// At most `calls` tool calls dispatched, a plan's included; the one
    /// past it does not run.
    pub const fn tool_calls(mut self, calls: u32) -> Limits {
        self.tool_calls = calls;
        self
    }

    /// At most `tokens` tokens in and out, counted from the usage each
    /// answer reports.
    pub const fn tokens(mut self, tokens: u64) -> Limits {
        self.tokens = tokens;
        self
    }

    /// At most `tokens` written in one answer: sent with each request as
    /// its `max_tokens` (or the budget left, if less). 4,096 by default,
    /// which every provider's models accept; raise it for long answers and
    /// for reasoning models, whose thinking counts too.
    pub const fn answer_tokens(mut self, tokens: u32) -> Limits {
        self.answer_tokens = tokens;
        self
    }

    /// At most `retries` answers refused for not fitting the output asked
    /// for ([`Agent::output`](super::Agent::output)) or its validators: the
    /// one after ends the run with [`Exit::OutputInvalid`](super::Exit::OutputInvalid).
    /// Each refusal is told to the model, which tries again. 3 by default.
    pub const fn output_retries(mut self, retries: u32) -> Limits {
        self.output_retries = retries;
        self
    }

    /// At most `wall_time` from the start of the run, its plans included.
    pub const fn wall_time(mut self, wall_time: Duration) -> Limits {
        self.wall_time = wall_time;
        self
    }

    /// At most `per_call` for one tool call, the wait for its approvals
    /// included: each call the model makes directly, and each call in each
    /// of its plans.
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use std::time::Duration;
    /// use typed_tools::agent::{Agent, Limits};
    /// use typed_tools::model::ScriptedModel;
    /// use typed_tools::{tool, Toolbox};
    ///
    /// /// Wait for an answer that never comes.
    /// #[tool(effects = Read)]
    /// async fn wait_forever() -> String {
    ///     futures::future::pending::<String>().await
    /// }
    ///
    /// let toolbox = Toolbox::builder().tool(WaitForever).build().unwrap();
    /// let plan = "```lambda-tool\nmatch exec tool wait_forever {} { Ok(x) => x, Err(e) => e.kind }\n```";
    /// let model = ScriptedModel::new([plan, "It timed out."]);
    /// let agent = Agent::new(&toolbox, model)
    ///     .plans(true)
    ///     .limits(Limits::new().per_call(Duration::from_millis(10)));
    /// let run = agent.run("Wait.").await;
    /// assert_eq!(run.answer(), Some("It timed out."));
    /// // The plan's call was stopped, and its `Err` branch ran.
    /// assert!(run.transcript[3].text().ends_with("Its value: \"timed_out\""));
    /// # });
    /// ```
    pub const fn per_call(mut self, per_call: Duration) -> Limits {
        self.call.time = per_call;
        self
    }

    /// What each plan the model writes may consume
    /// ([`Agent::plans`](super::Agent::plans)): its evaluation steps, its
    /// values and the memory they take. Its tool calls, wall time and time
    /// per call are each the smaller of what `limits` says and what the
    /// run allows: the calls and time the run has left, and
    /// [`per_call`](Self::per_call). By default, [`plan::Limits::new`]
    /// with no calls or wall time of its own: a plan gets what the run has
    /// left.
    ///
    /// ```
    /// use typed_tools::agent::Limits;
    /// use typed_tools::plan;
    ///
    /// // Small plans: at most 10,000 steps and 1 MiB of values each.
    /// let limits = Limits::new().plans(plan::Limits::new().steps(10_000).memory(1 << 20));
    /// assert_ne!(limits, Limits::new());
    /// ```
    pub const fn plans(mut self, limits: plan::Limits) -> Limits {
        self.plans = limits;
        self
    }

    /// The limits of a plan run now, when the run has `calls` calls and
    /// `time` left: [`plans`](Self::plans) within them and within the
    /// limits on each call. The one place an agent's limits become an
    /// interpreter's.
    pub(super) fn for_plan(&self, calls: u32, time: Option<Duration>) -> plan::Limits {
        self.plans
            .within(u64::from(calls), time.unwrap_or(Duration::MAX), self.call)
    }
}
