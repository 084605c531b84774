//! The journal's record format: what a [`Journal`](super::Journal) stores,
//! one [`Record`] at each position of a run, as JSON.
//!
//! # Format, version 2
//!
//! A run's journal is a sequence of records at positions 0, 1, 2, ...;
//! each is one JSON object whose `record` key says what it is:
//!
//! | `record` | when | fields |
//! | --- | --- | --- |
//! | `started` | first, once | `format` (this version: 2), `at_ms`, `input` (`{"kind": "plan", "text": ...}`, `{"kind": "calls"}`, or `{"kind": "agent", "system": ..., "task": ...}`), `tools` (`[{"name", "schema"}]`) |
//! | `model_answered` | an agent run's model answered, before anything acts on the answer | `step` (from 1), `response` (`{"text", "reasoning", "calls", "usage", "stop", "unread"}`: see [`RecordedResponse`]), `at_ms` |
//! | `call_started` | before a call runs | `call` (the run's call number, from 0), `tool`, `schema`, `args` (the JSON the tool is given), `approval` (`true` when an approval asks about the call), `at_ms` |
//! | `approved` | a call's approvals approved it, before the tool runs | `call`, `at_ms` |
//! | `call_finished` | after it returned | `call`, `result` (`{"ok": output}` or `{"err": {"kind", "message", "detail"}}`), `recovery` (when the arguments were repaired: what was done, each as the model is told), `at_ms` |
//! | `resolved` | a person's decision on a call in doubt | `call`, `resolution` (`{"resolution": "done", "output": ...}`, `"failed"` with `message`, or `"retry"`), `at_ms` |
//! | `finished` | last, once | `outcome` (`{"ok": value}` or `{"err": message}`), `at_ms` |
//!
//! `at_ms` is milliseconds since the Unix epoch, UTC. A tool's `schema` is
//! [`schema_stamp`]: a hash of its input and output schemas, its effects and
//! whether it is idempotent (not of its description, which may change
//! freely). A call number can have more than one `call_started`: a call
//! re-run after a crash (a `Read` call, an idempotent one, or one a person
//! allowed to retry) starts again.
//!
//! Version 2 added agent runs (the `agent` input and `model_answered`) and
//! approvals (`call_started.approval`, `approved`): a call an approval asks
//! about that has no `approved` record did not run, and is asked about and
//! run again on resume. A journal of version 1 reads as it is.
//!
//! ```
//! use typed_tools::durable::Record;
//!
//! let text = r#"{"record":"call_started","call":0,"tool":"charge_card","schema":"fnv1a64:00ff","args":{"amount":20},"at_ms":1764275000000}"#;
//! let record = Record::from_json(text).unwrap();
//! assert!(matches!(&record, Record::CallStarted { tool, .. } if tool == "charge_card"));
//! assert_eq!(record.to_json(), text);
//! ```

use std::fmt::Write as _;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use crate::error::{Escalation, Severity, ToolError};
use crate::model::{Reasoning, Response, StopReason, Usage};
use crate::reader::ToolCall;
use crate::recover::Recovered;
use crate::schema::{JsonPath, PathSegment, Problem};
use crate::tool::ToolSpec;
use crate::toolbox::ToolOutput;

/// The version of the record format this library writes and reads.
///
/// ```
/// assert_eq!(typed_tools::durable::FORMAT_VERSION, 2);
/// ```
pub const FORMAT_VERSION: u32 = 2;

/// One entry of a run's journal; see the [module docs](self) for the format.
///
/// ```
/// use typed_tools::durable::{Input, Record};
///
/// let record = Record::Started { format: 1, at_ms: 0, input: Input::Calls, tools: vec![] };
/// assert_eq!(record.to_json(), r#"{"record":"started","format":1,"at_ms":0,"input":{"kind":"calls"},"tools":[]}"#);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "record", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Record {
    /// The run's start: its inputs and the tools it may use.
    Started {
        /// The format's version, [`FORMAT_VERSION`] when written by this library.
        format: u32,
        /// When, in milliseconds since the Unix epoch.
        at_ms: u64,
        /// What the run was given.
        input: Input,
        /// Each tool the run may call, with its schema stamp.
        tools: Vec<ToolStamp>,
    },
    /// An agent run's model answered: recorded before anything acts on
    /// the answer, and replayed on resume instead of asking the model.
    ModelAnswered {
        /// The run's step (from 1) the answer answered.
        step: u32,
        /// The answer.
        response: RecordedResponse,
        /// When, in milliseconds since the Unix epoch.
        at_ms: u64,
    },
    /// A call, recorded before it runs.
    CallStarted {
        /// The run's call number, from 0.
        call: u64,
        /// The tool.
        tool: String,
        /// The tool's [`schema_stamp`].
        schema: String,
        /// The arguments, as the JSON the tool is given.
        args: Json,
        /// Whether an approval asks about the call: until
        /// [`Approved`](Record::Approved) is recorded, it did not run.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        approval: bool,
        /// When, in milliseconds since the Unix epoch.
        at_ms: u64,
    },
    /// Every approval that asks about a call approved it: recorded before
    /// the tool runs.
    Approved {
        /// The run's call number.
        call: u64,
        /// When, in milliseconds since the Unix epoch.
        at_ms: u64,
    },
    /// A call's result, recorded after it returned.
    CallFinished {
        /// The run's call number.
        call: u64,
        /// What came back.
        result: RecordedResult,
        /// What recovery did to the call's arguments before it ran, as the
        /// model is told ([`ToolOutput::note_for_model`]); a replayed
        /// output tells it again.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        recovery: Vec<String>,
        /// When, in milliseconds since the Unix epoch.
        at_ms: u64,
    },
    /// A decision on a call in doubt.
    Resolved {
        /// The run's call number.
        call: u64,
        /// The decision.
        resolution: Resolution,
        /// When, in milliseconds since the Unix epoch.
        at_ms: u64,
    },
    /// The run's end.
    Finished {
        /// `{"ok": value}` or `{"err": message}`: for people reading the
        /// journal; a resumed run computes its outcome again from the
        /// recorded results.
        outcome: Json,
        /// When, in milliseconds since the Unix epoch.
        at_ms: u64,
    },
}

impl Record {
    /// The record as one line of JSON.
    ///
    /// ```
    /// use typed_tools::durable::{Record, Resolution};
    ///
    /// let record = Record::Resolved { call: 2, resolution: Resolution::Retry, at_ms: 5 };
    /// assert_eq!(record.to_json(), r#"{"record":"resolved","call":2,"resolution":{"resolution":"retry"},"at_ms":5}"#);
    /// ```
    pub fn to_json(&self) -> String {
        // A record holds strings, numbers and JSON values only: writing it
        // cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Reads a record written by [`to_json`](Self::to_json); `Err` with the
    /// parser's message for anything else.
    ///
    /// ```
    /// use typed_tools::durable::Record;
    ///
    /// assert!(Record::from_json(r#"{"record":"resolved","call":2,"resolution":{"resolution":"retry"},"at_ms":5}"#).is_ok());
    /// assert!(Record::from_json(r#"{"record":"exploded"}"#).is_err());
    /// ```
    pub fn from_json(text: &str) -> Result<Record, String> {
        serde_json::from_str(text).map_err(|error| error.to_string())
    }
}

/// What a run was given.
///
/// ```
/// use typed_tools::durable::Input;
///
/// let input = Input::Plan { text: "1 + 1".into() };
/// assert_eq!(serde_json::to_string(&input).unwrap(), r#"{"kind":"plan","text":"1 + 1"}"#);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Input {
    /// A plan, as its text.
    Plan {
        /// The plan's text ([`Plan`](crate::plan::Plan)'s `Display`).
        text: String,
    },
    /// Toolbox calls made one by one under the run's id
    /// ([`Durable::calls`](super::Durable::calls)).
    Calls,
    /// An agent run ([`Durable::run_agent`](super::Durable::run_agent)):
    /// its system prompt and task.
    Agent {
        /// The agent's system prompt.
        system: String,
        /// The task, the user's first message.
        task: String,
    },
}

/// A model's answer as recorded: [`Response`] in the journal's JSON.
///
/// ```
/// use typed_tools::durable::RecordedResponse;
/// use typed_tools::model::{Response, Usage};
/// use typed_tools::ToolCall;
///
/// let call = ToolCall { id: Some("call_1".into()), name: "charge".into(), arguments: r#"{"n":1}"#.into() };
/// let response = Response::new("").calls(vec![call]).usage(Usage::new(90, 12));
/// let recorded = RecordedResponse::of(&response);
/// assert_eq!(
///     serde_json::to_string(&recorded).unwrap(),
///     r#"{"text":"","calls":[{"id":"call_1","name":"charge","arguments":"{\"n\":1}"}],"usage":{"input_tokens":90,"output_tokens":12},"stop":"tool_use"}"#
/// );
/// assert_eq!(recorded.to_response(), response);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RecordedResponse {
    /// [`Response::text`].
    pub text: String,
    /// [`Response::reasoning`]: each part's `text`, and its `signature`
    /// and `redacted` data when it has them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reasoning: Vec<Json>,
    /// [`Response::calls`]: `{"id", "name", "arguments"}`, the arguments as
    /// the model wrote them (a string).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<Json>,
    /// [`Response::usage`]: `input_tokens`, `output_tokens`, and
    /// `estimated: true` when it is an estimate.
    pub usage: Json,
    /// [`Response::stop`]: `end_turn`, `tool_use`, `max_tokens`,
    /// `stop_sequence`, `refused`, or `{"other": reason}`.
    pub stop: Json,
    /// [`Response::unread`], as the provider sent it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unread: Vec<Json>,
}

impl RecordedResponse {
    /// Records `response`.
    pub fn of(response: &Response) -> RecordedResponse {
        let reasoning = response
            .reasoning
            .iter()
            .map(|part| {
                let mut json = serde_json::json!({"text": part.text});
                if let Some(signature) = &part.signature {
                    json["signature"] = Json::String(signature.clone());
                }
                if let Some(redacted) = &part.redacted {
                    json["redacted"] = Json::String(redacted.clone());
                }
                json
            })
            .collect();
        let calls = response
            .calls
            .iter()
            .map(|call| {
                serde_json::json!({"id": call.id, "name": call.name, "arguments": call.arguments})
            })
            .collect();
        let mut usage = serde_json::json!({
            "input_tokens": response.usage.input_tokens,
            "output_tokens": response.usage.output_tokens,
        });
        if response.usage.estimated {
            usage["estimated"] = Json::Bool(true);
        }
        let stop = match &response.stop {
            StopReason::EndTurn => Json::from("end_turn"),
            StopReason::ToolUse => Json::from("tool_use"),
            StopReason::MaxTokens => Json::from("max_tokens"),
            StopReason::StopSequence => Json::from("stop_sequence"),
            StopReason::Refused => Json::from("refused"),
            StopReason::Other(other) => serde_json::json!({"other": other}),
        };
        RecordedResponse {
            text: response.text.clone(),
            reasoning,
            calls,
            usage,
            stop,
            unread: response.unread.clone(),
        }
    }

    /// The answer as it was given; a field this version does not know is
    /// read as empty (a stop reason as [`StopReason::Other`]).
    pub fn to_response(&self) -> Response {
        let text = |json: &Json, key: &str| json[key].as_str().map(str::to_owned);
        let reasoning = self
            .reasoning
            .iter()
            .map(|part| {
                let mut reasoning = Reasoning::new(text(part, "text").unwrap_or_default());
                reasoning.signature = text(part, "signature");
                reasoning.redacted = text(part, "redacted");
                reasoning
            })
            .collect();
        let calls = self
            .calls
            .iter()
            .map(|call| ToolCall {
                id: text(call, "id"),
                name: text(call, "name").unwrap_or_default(),
                arguments: text(call, "arguments").unwrap_or_default(),
            })
            .collect();
        let tokens = |key: &str| self.usage[key].as_u64().unwrap_or(0);
        let (input, output) = (tokens("input_tokens"), tokens("output_tokens"));
        let usage = match self.usage["estimated"].as_bool() {
            Some(true) => Usage::estimate(input, output),
            _ => Usage::new(input, output),
        };
        let stop = match (&self.stop, self.stop.as_str()) {
            (_, Some("end_turn")) => StopReason::EndTurn,
            (_, Some("tool_use")) => StopReason::ToolUse,
            (_, Some("max_tokens")) => StopReason::MaxTokens,
            (_, Some("stop_sequence")) => StopReason::StopSequence,
            (_, Some("refused")) => StopReason::Refused,
            (_, Some(other)) => StopReason::Other(other.to_owned()),
            (json, None) => StopReason::Other(text(json, "other").unwrap_or_default()),
        };
        let mut response = Response::new(self.text.clone())
            .reasoning(reasoning)
            .calls(calls)
            .usage(usage)
            .stop(stop);
        response.unread = self.unread.clone();
        response
    }
}

/// A tool's name and [`schema_stamp`], as a run recorded them.
///
/// ```
/// use typed_tools::durable::ToolStamp;
///
/// let stamp = ToolStamp { name: "charge_card".into(), schema: "fnv1a64:0123456789abcdef".into() };
/// assert_eq!(serde_json::to_string(&stamp).unwrap(), r#"{"name":"charge_card","schema":"fnv1a64:0123456789abcdef"}"#);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolStamp {
    /// The tool's name.
    pub name: String,
    /// Its [`schema_stamp`].
    pub schema: String,
}

/// A call's result as recorded.
///
/// ```
/// use typed_tools::durable::RecordedResult;
///
/// let ok = RecordedResult::Ok(serde_json::json!("tx_1"));
/// assert_eq!(serde_json::to_string(&ok).unwrap(), r#"{"ok":"tx_1"}"#);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RecordedResult {
    /// The tool's output.
    Ok(Json),
    /// The error the call ended with.
    Err(RecordedError),
}

/// A call's error as recorded: its kind and message always, and the error
/// itself when it is one of the kinds kept whole (see [`RecordedError::to_error`]).
///
/// ```
/// use typed_tools::durable::RecordedError;
/// use typed_tools::ToolError;
///
/// let error = ToolError::Execution { tool: "charge_card".into(), message: "card declined".into(), panicked: false };
/// let recorded = RecordedError::of(&error);
/// assert_eq!(recorded.kind, "execution");
/// assert_eq!(recorded.to_error("charge_card"), error);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RecordedError {
    /// [`ToolError::kind`].
    pub kind: String,
    /// The error's `Display`.
    pub message: String,
    /// The error's fields, for the kinds kept whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<Json>,
}

impl RecordedError {
    /// Records `error`.
    ///
    /// ```
    /// use typed_tools::durable::RecordedError;
    /// use typed_tools::ToolError;
    ///
    /// let error = ToolError::Refused { tool: "charge_card".into(), reason: "over the limit".into() };
    /// assert_eq!(RecordedError::of(&error).message, error.to_string());
    /// ```
    pub fn of(error: &ToolError) -> RecordedError {
        let detail = match error {
            ToolError::Execution {
                tool,
                message,
                panicked,
            } => Some(serde_json::json!({"tool": tool, "message": message, "panicked": panicked})),
            ToolError::Refused { tool, reason } => {
                Some(serde_json::json!({"tool": tool, "reason": reason}))
            }
            ToolError::TimedOut { tool, after } => Some(serde_json::json!({
                "tool": tool,
                "after_ms": u64::try_from(after.as_millis()).unwrap_or(u64::MAX),
            })),
            ToolError::ArgsTooLarge { tool, bytes, max } => {
                Some(serde_json::json!({"tool": tool, "bytes": bytes, "max": max}))
            }
            ToolError::InvalidArgs {
                tool,
                message,
                excerpt,
                expected,
            } => Some(serde_json::json!({
                "tool": tool, "message": message, "excerpt": excerpt, "expected": expected,
            })),
            ToolError::UnknownTool {
                name,
                suggestions,
                available,
            } => Some(serde_json::json!({
                "name": name, "suggestions": suggestions, "available": available,
            })),
            ToolError::EffectDenied {
                tool,
                effects,
                allowed,
            } => Some(serde_json::json!({
                "tool": tool, "effects": effects.to_string(), "allowed": allowed.to_string(),
            })),
            ToolError::Deserialization {
                tool,
                problems,
                message,
                expected,
            } => Some(serde_json::json!({
                "tool": tool,
                "problems": problems.iter().map(problem_json).collect::<Vec<_>>(),
                "message": message,
                "expected": expected,
            })),
            ToolError::Escalation(escalation) => Some(serde_json::json!({
                "source": escalation.source,
                "reason": escalation.reason,
                "severity": severity_name(escalation.severity),
                "original": RecordedError::of(&escalation.original),
                "attempts": escalation.attempts,
            })),
        };
        RecordedError {
            kind: error.kind().to_owned(),
            message: error.to_string(),
            detail,
        }
    }

    /// The error a replayed call gives: the recorded error itself (every
    /// kind this version writes is kept whole); for a record without its
    /// detail (a kind added by a later version, a record written by
    /// hand), an `execution` error of `tool` with the recorded message.
    ///
    /// ```
    /// use typed_tools::durable::RecordedError;
    /// use typed_tools::ToolError;
    ///
    /// let recorded = RecordedError { kind: "a_later_kind".into(), message: "gave up".into(), detail: None };
    /// assert_eq!(
    ///     recorded.to_error("book"),
    ///     ToolError::Execution { tool: "book".into(), message: "gave up".into(), panicked: false }
    /// );
    /// ```
    pub fn to_error(&self, tool: &str) -> ToolError {
        self.whole(tool).unwrap_or_else(|| ToolError::Execution {
            tool: tool.to_owned(),
            message: self.message.clone(),
            panicked: false,
        })
    }

    fn whole(&self, tool: &str) -> Option<ToolError> {
        let detail = self.detail.as_ref()?;
        let text = |key: &str| detail.get(key)?.as_str().map(str::to_owned);
        let number = |key: &str| detail.get(key)?.as_u64();
        let texts = |key: &str| -> Option<Vec<String>> {
            detail
                .get(key)?
                .as_array()?
                .iter()
                .map(|name| name.as_str().map(str::to_owned))
                .collect()
        };
        Some(match self.kind.as_str() {
            "execution" => ToolError::Execution {
                tool: text("tool")?,
                message: text("message")?,
                panicked: detail.get("panicked")?.as_bool()?,
            },
            "refused" => ToolError::Refused {
                tool: text("tool")?,
                reason: text("reason")?,
            },
            "timed_out" => ToolError::TimedOut {
                tool: text("tool")?,
                after: std::time::Duration::from_millis(number("after_ms")?),
            },
            "args_too_large" => ToolError::ArgsTooLarge {
                tool: text("tool")?,
                bytes: usize::try_from(number("bytes")?).ok()?,
                max: usize::try_from(number("max")?).ok()?,
            },
            "invalid_args" => ToolError::InvalidArgs {
                tool: text("tool")?,
                message: text("message")?,
                excerpt: text("excerpt")?,
                expected: text("expected")?,
            },
            "unknown_tool" => ToolError::UnknownTool {
                name: text("name")?,
                suggestions: texts("suggestions")?,
                available: texts("available")?,
            },
            "effect_denied" => ToolError::EffectDenied {
                tool: text("tool")?,
                effects: text("effects")?.parse().ok()?,
                allowed: text("allowed")?.parse().ok()?,
            },
            "deserialization" => ToolError::Deserialization {
                tool: text("tool")?,
                problems: detail
                    .get("problems")?
                    .as_array()?
                    .iter()
                    .map(problem_from_json)
                    .collect::<Option<_>>()?,
                message: match detail.get("message")? {
                    Json::Null => None,
                    message => Some(message.as_str()?.to_owned()),
                },
                expected: text("expected")?,
            },
            "escalation" => {
                let original: RecordedError =
                    serde_json::from_value(detail.get("original")?.clone()).ok()?;
                ToolError::Escalation(Box::new(Escalation {
                    source: text("source")?,
                    reason: text("reason")?,
                    severity: severity_from_name(&text("severity")?)?,
                    original: original.to_error(tool),
                    attempts: u32::try_from(number("attempts")?).ok()?,
                }))
            }
            _ => return None,
        })
    }
}

fn severity_name(severity: Severity) -> &'static str {
    match severity {
        Severity::Low => "low",
        Severity::Medium => "medium",
        Severity::High => "high",
        Severity::Critical => "critical",
    }
}

fn severity_from_name(name: &str) -> Option<Severity> {
    Some(match name {
        "low" => Severity::Low,
        "medium" => Severity::Medium,
        "high" => Severity::High,
        "critical" => Severity::Critical,
        _ => return None,
    })
}

/// A path as a list of field names and indexes.
fn path_json(path: &JsonPath) -> Json {
    path.segments()
        .iter()
        .map(|segment| match segment {
            PathSegment::Field(name) => Json::from(name.as_str()),
            PathSegment::Index(index) => Json::from(*index),
        })
        .collect()
}

fn path_from_json(json: &Json) -> Option<JsonPath> {
    let segments = json
        .as_array()?
        .iter()
        .map(|segment| match segment {
            Json::String(name) => Some(PathSegment::Field(name.clone())),
            index => usize::try_from(index.as_u64()?)
                .ok()
                .map(PathSegment::Index),
        })
        .collect::<Option<_>>()?;
    Some(JsonPath::from_segments(segments))
}

fn problem_json(problem: &Problem) -> Json {
    match problem {
        Problem::Missing { path, expected } => serde_json::json!({
            "problem": "missing", "path": path_json(path), "expected": expected,
        }),
        Problem::Unknown { path, expected } => serde_json::json!({
            "problem": "unknown", "path": path_json(path), "expected": expected,
        }),
        Problem::Mismatch {
            path,
            expected,
            found,
        } => serde_json::json!({
            "problem": "mismatch", "path": path_json(path), "expected": expected, "found": found,
        }),
        Problem::Duplicate { path } => serde_json::json!({
            "problem": "duplicate", "path": path_json(path),
        }),
    }
}

fn problem_from_json(json: &Json) -> Option<Problem> {
    let path = path_from_json(json.get("path")?)?;
    let text = |key: &str| json.get(key)?.as_str().map(str::to_owned);
    Some(match json.get("problem")?.as_str()? {
        "missing" => Problem::Missing {
            path,
            expected: text("expected")?,
        },
        "unknown" => Problem::Unknown {
            path,
            expected: json
                .get("expected")?
                .as_array()?
                .iter()
                .map(|name| name.as_str().map(str::to_owned))
                .collect::<Option<_>>()?,
        },
        "mismatch" => Problem::Mismatch {
            path,
            expected: text("expected")?,
            found: text("found")?,
        },
        "duplicate" => Problem::Duplicate { path },
        _ => return None,
    })
}

impl RecordedResult {
    /// Records a call's result.
    pub(crate) fn of(result: &Result<ToolOutput, ToolError>) -> RecordedResult {
        match result {
            // A tool's output is JSON it wrote: it reads back (a string of
            // it, should it ever not).
            Ok(output) => RecordedResult::Ok(
                serde_json::from_str(output.json())
                    .unwrap_or_else(|_| Json::String(output.json().to_owned())),
            ),
            Err(error) => RecordedResult::Err(RecordedError::of(error)),
        }
    }

    /// What recovery did before a call succeeded, as recorded: the
    /// changes the model is told of.
    pub(crate) fn recovery(result: &Result<ToolOutput, ToolError>) -> Vec<String> {
        match result {
            Ok(output) => output
                .recovery()
                .iter()
                .filter(|r| !matches!(r, Recovered::Retried { .. }))
                .map(ToString::to_string)
                .collect(),
            Err(_) => Vec::new(),
        }
    }

    /// The result a replayed call gives, with what recovery did as recorded.
    pub(crate) fn replay_with(
        &self,
        tool: &str,
        recovery: &[String],
    ) -> Result<ToolOutput, ToolError> {
        match self {
            RecordedResult::Ok(json) if !recovery.is_empty() => Ok(ToolOutput::recovered(
                crate::json::to_text(json),
                recovery.iter().cloned().map(Recovered::Recorded).collect(),
            )),
            _ => self.replay(tool),
        }
    }

    /// The result a replayed call gives.
    pub(crate) fn replay(&self, tool: &str) -> Result<ToolOutput, ToolError> {
        match self {
            RecordedResult::Ok(json) => Ok(ToolOutput::from_json(crate::json::to_text(json))),
            RecordedResult::Err(error) => Err(error.to_error(tool)),
        }
    }
}

/// A person's (or a program's) decision on a call in doubt
/// ([`Durable::resolve`](super::Durable::resolve)).
///
/// ```
/// use typed_tools::durable::Resolution;
///
/// let done = Resolution::Done { output: serde_json::json!({"charge": "ch_1"}) };
/// assert_eq!(serde_json::to_string(&done).unwrap(), r#"{"resolution":"done","output":{"charge":"ch_1"}}"#);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "resolution", rename_all = "snake_case")]
pub enum Resolution {
    /// The call took effect, with this output: the run goes on as if the
    /// tool had returned it.
    Done {
        /// The tool's output, as JSON.
        output: Json,
    },
    /// The call failed, or did not take effect and should not be tried
    /// again: the run goes on as if the tool had failed with `message`.
    Failed {
        /// The error's message.
        message: String,
    },
    /// The call did not take effect: run it again.
    Retry,
}

impl Resolution {
    pub(crate) fn replay(&self, tool: &str) -> Option<Result<ToolOutput, ToolError>> {
        match self {
            Resolution::Done { output } => {
                Some(Ok(ToolOutput::from_json(crate::json::to_text(output))))
            }
            Resolution::Failed { message } => Some(Err(ToolError::Execution {
                tool: tool.to_owned(),
                message: message.clone(),
                panicked: false,
            })),
            Resolution::Retry => None,
        }
    }
}

/// A tool's schema stamp: `fnv1a64:` and 16 hex digits, the 64-bit FNV-1a
/// hash of the JSON text of its input schema, output schema, effects and
/// idempotence. Stable across processes and versions of this library (FNV
/// is fixed, and so is the JSON a schema writes), so that a run resumed
/// against a changed tool is stopped.
///
/// ```
/// use typed_tools::durable::schema_stamp;
/// use typed_tools::{tool, ToolSpec};
///
/// /// Charge a card.
/// #[tool(effects = Write)]
/// fn charge_card(card: String, amount: u32) -> String { card }
///
/// let stamp = schema_stamp(&ToolSpec::of::<ChargeCard>());
/// assert!(stamp.starts_with("fnv1a64:"));
/// assert_eq!(stamp.len(), 8 + 16);
/// assert_eq!(stamp, schema_stamp(&ToolSpec::of::<ChargeCard>()));
/// ```
pub fn schema_stamp(spec: &ToolSpec) -> String {
    let facts = serde_json::json!({
        "input": spec.input_schema(),
        "output": spec.output_schema(),
        "effects": spec.effects().to_string(),
        "idempotent": spec.is_idempotent(),
    });
    let text = crate::json::to_text(&facts);
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in text.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("fnv1a64:{hash:016x}")
}

/// Milliseconds since the Unix epoch, now.
pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| {
            u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
        })
}

/// `ms` since the Unix epoch as an RFC 3339 UTC time with milliseconds:
/// `2026-11-27T20:30:00.123Z`.
pub(crate) fn utc(ms: u64) -> String {
    let (days, rest) = (ms / 86_400_000, ms % 86_400_000);
    // Howard Hinnant's civil_from_days, for days since 1970-01-01.
    let z = i64::try_from(days).unwrap_or(i64::MAX / 2) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let mut out = String::with_capacity(24);
    let _ = write!(
        out,
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rest / 3_600_000,
        rest / 60_000 % 60,
        rest / 1000 % 60,
        rest % 1000
    );
    out
}

#[cfg(test)]
mod tests {
    use super::utc;

    #[test]
    fn utc_times_read_as_calendars_do() {
        assert_eq!(utc(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(utc(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(utc(1_764_275_172_123), "2025-11-27T20:26:12.123Z");
    }
}
