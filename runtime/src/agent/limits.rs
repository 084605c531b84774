//! What an agent's run may consume: [`Limits`].

use std::time::Duration;

/// The most one [`Agent::run`](super::Agent::run) may consume. Each is
/// checked before the work it bounds (a step before the model is asked, a
/// call before it is dispatched), so a run stops at its limit with a typed
/// [`Exit`](super::Exit), never past it.
///
/// | limit | default | what it counts | exit |
/// |---|---|---|---|
/// | [`steps`](Self::steps) | 16 | requests to the model | [`OutOfSteps`](super::Exit::OutOfSteps) |
/// | [`tool_calls`](Self::tool_calls) | 64 | calls dispatched, a plan's included | [`OutOfToolCalls`](super::Exit::OutOfToolCalls) |
/// | [`tokens`](Self::tokens) | 200,000 | tokens in and out, as the model reports them ([`Usage`](crate::model::Usage); estimated where it reports none) | [`OutOfTokens`](super::Exit::OutOfTokens) |
/// | [`answer_tokens`](Self::answer_tokens) | 4,096 | one answer's tokens: each request asks for at most this, or the budget left if less | [`Truncated`](super::Exit::Truncated) when an answer is cut off |
/// | [`wall_time`](Self::wall_time) | 5 min | time since the run started; a model request or a call in progress is stopped when it passes | [`Deadline`](super::Exit::Deadline) |
/// | [`per_call`](Self::per_call) | 60 s | one tool call; the model is told that it timed out | — |
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
/// stop async tools and the model.
///
/// ```
/// use std::time::Duration;
/// use typed_tools::agent::Limits;
///
/// let limits = Limits::new().steps(4).tokens(10_000).per_call(Duration::from_secs(5));
/// assert_ne!(limits, Limits::default());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pub(super) steps: u32,
    pub(super) tool_calls: u32,
    pub(super) tokens: u64,
    pub(super) answer_tokens: u32,
    pub(super) wall_time: Duration,
    pub(super) per_call: Duration,
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
            per_call: Duration::from_secs(60),
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

    /// At most `wall_time` from the start of the run.
    pub const fn wall_time(mut self, wall_time: Duration) -> Limits {
        self.wall_time = wall_time;
        self
    }

    /// At most `per_call` for one tool call.
    pub const fn per_call(mut self, per_call: Duration) -> Limits {
        self.per_call = per_call;
        self
    }
}
