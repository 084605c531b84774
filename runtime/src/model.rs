//! The small [`Model`] trait the framework shares: messages in, text and token
//! usage out. Recovery uses it to ask a model to repair a call
//! ([`Fix::Model`](crate::recover::Fix::Model)).
//!
//! [`ScriptedModel`] replays answers written in advance, so that tests and
//! examples run offline and deterministically.
//!
//! ```
//! # futures::executor::block_on(async {
//! use typed_tools::model::{Message, Model, Request, ScriptedModel};
//!
//! let model = ScriptedModel::new(["{\"city\": \"Lima\"}"]);
//! let response = model.complete(Request::new(vec![Message::user("Fix this JSON: {city: Lima")])).await?;
//! assert_eq!(response.text, "{\"city\": \"Lima\"}");
//! assert_eq!(model.requests()[0].messages[0].content, "Fix this JSON: {city: Lima");
//! // The script is used up: the next request is an error, not a made-up answer.
//! assert!(model.complete(Request::new(vec![Message::user("again")])).await.is_err());
//! # Ok::<(), typed_tools::model::ModelError>(())
//! # }).unwrap();
//! ```

use std::collections::VecDeque;
use std::fmt;
use std::sync::Mutex;

use futures::future::BoxFuture;
use futures::FutureExt;

/// Who wrote a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// Instructions.
    System,
    /// The user, or the program speaking for them.
    User,
    /// The model.
    Assistant,
    /// A tool's result, handed back to the model.
    ToolResult,
}

/// One message of a conversation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    /// Who wrote it.
    pub role: Role,
    /// What it says.
    pub content: String,
}

impl Message {
    /// A system message.
    pub fn system(content: impl Into<String>) -> Message {
        Message {
            role: Role::System,
            content: content.into(),
        }
    }

    /// A user message.
    pub fn user(content: impl Into<String>) -> Message {
        Message {
            role: Role::User,
            content: content.into(),
        }
    }

    /// A message from the model.
    pub fn assistant(content: impl Into<String>) -> Message {
        Message {
            role: Role::Assistant,
            content: content.into(),
        }
    }
}

/// What is sent to a model.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Request {
    /// The conversation so far.
    pub messages: Vec<Message>,
    /// The most tokens the answer may take, if limited.
    pub max_tokens: Option<u32>,
}

impl Request {
    /// A request of `messages`, with no token limit.
    pub fn new(messages: Vec<Message>) -> Request {
        Request {
            messages,
            max_tokens: None,
        }
    }
}

/// Tokens spent by one request.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Usage {
    /// Tokens read.
    pub input_tokens: u64,
    /// Tokens written.
    pub output_tokens: u64,
}

impl Usage {
    /// Both together.
    pub fn total(&self) -> u64 {
        self.input_tokens + self.output_tokens
    }
}

/// What a model answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Response {
    /// The text of the answer.
    pub text: String,
    /// What it cost.
    pub usage: Usage,
}

/// A model could not answer: unreachable, refused, out of script.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelError {
    /// What went wrong.
    pub message: String,
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the model could not answer: {}", self.message)
    }
}

impl std::error::Error for ModelError {}

/// A language model: a request of messages in, text and token usage out.
///
/// Implement it over your provider's client. Object safe, so that policies and
/// agents can hold an `Arc<dyn Model>`.
pub trait Model: Send + Sync {
    /// Answers one request.
    fn complete(&self, request: Request) -> BoxFuture<'_, Result<Response, ModelError>>;
}

/// A model that replays answers written in advance, in order, and records the
/// requests it was sent. Once the answers are used up, each further request is
/// a [`ModelError`]. Usage is estimated as one token per four bytes, at least one.
#[derive(Debug, Default)]
pub struct ScriptedModel {
    answers: Mutex<VecDeque<Result<String, String>>>,
    requests: Mutex<Vec<Request>>,
}

impl ScriptedModel {
    /// A model that answers `answers`, one per request.
    pub fn new<S: Into<String>>(answers: impl IntoIterator<Item = S>) -> ScriptedModel {
        ScriptedModel {
            answers: Mutex::new(answers.into_iter().map(|a| Ok(a.into())).collect()),
            requests: Mutex::default(),
        }
    }

    /// Adds an answer that is an error (an outage, a refusal) after the others.
    pub fn then_fail(self, message: impl Into<String>) -> ScriptedModel {
        lock(&self.answers).push_back(Err(message.into()));
        self
    }

    /// The requests received so far.
    pub fn requests(&self) -> Vec<Request> {
        lock(&self.requests).clone()
    }

    /// How many answers are left.
    pub fn remaining(&self) -> usize {
        lock(&self.answers).len()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn estimate_tokens(text: &str) -> u64 {
    (text.len() as u64).div_ceil(4).max(1)
}

impl Model for ScriptedModel {
    fn complete(&self, request: Request) -> BoxFuture<'_, Result<Response, ModelError>> {
        let input_tokens = request
            .messages
            .iter()
            .map(|m| estimate_tokens(&m.content))
            .sum();
        lock(&self.requests).push(request);
        let answer = lock(&self.answers).pop_front();
        let result = match answer {
            Some(Ok(text)) => Ok(Response {
                usage: Usage {
                    input_tokens,
                    output_tokens: estimate_tokens(&text),
                },
                text,
            }),
            Some(Err(message)) => Err(ModelError { message }),
            None => Err(ModelError {
                message: "the script has no more answers".into(),
            }),
        };
        futures::future::ready(result).boxed()
    }
}
