//! What a run ends with: the model's text, or a value of a type asked for
//! with [`Agent::output`](super::Agent::output), checked before anyone
//! trusts it.
//!
//! A typed output is read by the same machinery as a call: the answer is
//! the arguments of an output tool (`final_result`, a run-time tool whose
//! schema is the type's, alone in a toolbox of its own with
//! [`Policy::recover`]), so it is repaired, coerced and checked against the
//! schema with every change recorded, then deserialized into the type, then
//! held to the agent's validators. How the model gives it depends on the
//! [`OutputMode`]: by calling the tool (the default), in a provider's
//! structured output, or as JSON in its text. An answer that does not fit
//! goes back to the model with what is wrong, as a bad call's error does,
//! up to [`Limits::output_retries`](super::Limits::output_retries) times;
//! then the run ends with [`Exit::OutputInvalid`](super::Exit::OutputInvalid).
//!
//! A type whose schema is not an object (a list, a number, an enum) is
//! asked for as `{"result": ...}`, as providers take only objects for tool
//! arguments and structured output; the wrapper is taken off before the
//! value is read.

use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;
use futures::FutureExt;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{json, Value};

use crate::effect::EffectSet;
use crate::error::ToolError;
use crate::recover::Policy;
use crate::schema::model::SchemaModel;
use crate::tool::DynamicTool;
use crate::toolbox::Toolbox;

/// How an agent asked for a typed output ([`Agent::output`](super::Agent::output))
/// gets it from the model.
///
/// ```
/// use typed_tools::agent::{Agent, OutputMode};
/// use typed_tools::model::ScriptedModel;
/// use typed_tools::Toolbox;
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Verdict { spam: bool }
///
/// let toolbox = Toolbox::builder().build().unwrap();
/// let agent = Agent::new(&toolbox, ScriptedModel::new(["{}"])).output::<Verdict>();
/// // By default, the output tool is listed with the agent's tools.
/// assert!(agent.system_prompt().contains("final_result"));
/// let agent = agent.output_mode(OutputMode::Native);
/// assert!(!agent.system_prompt().contains("tool final_result"));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum OutputMode {
    /// An output tool (`final_result`) shown with the other tools, whose
    /// arguments are the answer: the model calling it ends the run, with no
    /// turn more. Every model that calls tools can; the default.
    #[default]
    Tool,
    /// The provider holds the model's answer to the type's schema
    /// (structured output: OpenAI's strict `response_format`, Anthropic's
    /// `output_config`), sent in [`Request::output`](crate::model::Request::output);
    /// the answer's text is the value.
    Native,
    /// The type's schema in the system prompt, and the value found in the
    /// answer's text (alone, fenced, or amid prose): for models that call
    /// no tools and have no structured output.
    Prompted,
}

/// An agent's validator: refuses a well-typed answer with a message for the
/// model.
pub(crate) type Validator<O> =
    Arc<dyn Fn(&O) -> BoxFuture<'static, Result<(), String>> + Send + Sync>;

/// What an agent's run ends with, and how it is read.
pub(crate) struct Output<O> {
    /// The typed output's reader; `None` for the model's text.
    pub(crate) typed: Option<Arc<TypedOutput>>,
    /// The value from the answer: the text itself, or the output tool's
    /// checked arguments (JSON).
    pub(crate) parse: fn(&str) -> Result<O, String>,
    pub(crate) validators: Vec<Validator<O>>,
}

impl Output<String> {
    /// The model's text, as it wrote it.
    pub(crate) fn text() -> Output<String> {
        Output {
            typed: None,
            parse: |text| Ok(text.to_owned()),
            validators: Vec::new(),
        }
    }
}

impl<O> Output<O> {
    /// A typed output of `T` given in `mode`, its tool named so that no tool
    /// of `taken` has the name.
    pub(crate) fn typed<T>(mode: OutputMode, taken: &dyn Fn(&str) -> bool) -> Output<T>
    where
        T: DeserializeOwned + JsonSchema,
    {
        Output {
            typed: Some(Arc::new(TypedOutput::of::<T>(mode, taken))),
            parse: |json| serde_json::from_str::<T>(json).map_err(|error| error.to_string()),
            validators: Vec::new(),
        }
    }

    /// Whether `value` passes every validator: the first refusal's message.
    pub(crate) async fn validate(&self, value: &O) -> Result<(), String> {
        for validator in &self.validators {
            validator(value).await?;
        }
        Ok(())
    }
}

/// A validator from a sync function.
pub(crate) fn sync_validator<O>(
    check: impl Fn(&O) -> Result<(), String> + Send + Sync + 'static,
) -> Validator<O> {
    Arc::new(move |value| futures::future::ready(check(value)).boxed())
}

/// A validator from an async function whose future owns what it needs.
pub(crate) fn async_validator<O, F>(check: impl Fn(&O) -> F + Send + Sync + 'static) -> Validator<O>
where
    F: Future<Output = Result<(), String>> + Send + 'static,
{
    Arc::new(move |value| check(value).boxed())
}

/// The reader of a typed output: its tool, alone in a toolbox of its own.
#[derive(Clone)]
pub(crate) struct TypedOutput {
    pub(crate) mode: OutputMode,
    /// The output tool's toolbox (recovery: [`Policy::recover`]); an error
    /// when the type's schema cannot make a tool (deeper than a tool's
    /// schema may be).
    pub(crate) toolbox: Result<Toolbox, String>,
    /// The output tool's name: `final_result`, or with a number after it
    /// when the agent has a tool of that name.
    pub(crate) name: String,
    /// The answer's type in λ-Tool notation, for the model.
    pub(crate) type_name: String,
    /// The output tool's arguments' schema: the type's, or
    /// `{"result": ...}` around it.
    pub(crate) schema: Value,
    /// Whether the value is under `result`.
    pub(crate) wrapped: bool,
}

impl std::fmt::Debug for TypedOutput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TypedOutput")
            .field("mode", &self.mode)
            .field("name", &self.name)
            .field("type", &self.type_name)
            .finish_non_exhaustive()
    }
}

impl TypedOutput {
    fn of<T: JsonSchema>(mode: OutputMode, taken: &dyn Fn(&str) -> bool) -> TypedOutput {
        let settings = schemars::generate::SchemaSettings::draft2020_12();
        let schema = settings
            .into_generator()
            .into_root_schema_for::<T>()
            .to_value();
        let type_name = SchemaModel::new(&schema).type_name();
        let is_object = schema.get("type").and_then(Value::as_str) == Some("object")
            && ["anyOf", "oneOf", "allOf"]
                .iter()
                .all(|key| schema.get(*key).is_none());
        let (schema, wrapped) = match is_object {
            true => (schema, false),
            false => (wrap(schema), true),
        };
        let name = std::iter::once("final_result".to_owned())
            .chain((1..).map(|n| format!("final_result_{n}")))
            .find(|name| !taken(name))
            .unwrap_or_default();
        let tool = DynamicTool::new(name.clone())
            .description(format!(
                "Give your final answer, a {type_name}: call this once you have it, with the answer as its arguments. The run ends with it."
            ))
            .input_schema(schema.clone())
            .effects(EffectSet::PURE)
            .handler(|arguments: Value| async move { Ok::<Value, String>(arguments) });
        let toolbox = Toolbox::builder()
            .dynamic(tool)
            .policy(Policy::recover())
            .build()
            .map_err(|error| error.to_string());
        TypedOutput {
            mode,
            toolbox,
            name,
            type_name,
            schema,
            wrapped,
        }
    }

    /// The value's JSON from the output tool's checked arguments: under
    /// `result` when wrapped.
    pub(crate) fn unwrap(&self, json: &str) -> Result<String, String> {
        if !self.wrapped {
            return Ok(json.to_owned());
        }
        let mut value: Value = serde_json::from_str(json).map_err(|error| error.to_string())?;
        Ok(value
            .get_mut("result")
            .map(Value::take)
            .unwrap_or(Value::Null)
            .to_string())
    }

    /// What the model is told of an answer that does not fit, and how to
    /// give it again.
    pub(crate) fn told(&self, error: &ToolError) -> String {
        let how = match self.mode {
            OutputMode::Tool => format!("Call `{}` again with the corrected answer.", self.name),
            OutputMode::Native | OutputMode::Prompted => format!(
                "Answer again with only the JSON value{}.",
                if self.wrapped {
                    ", as `{\"result\": ...}`"
                } else {
                    ""
                }
            ),
        };
        let what = match error {
            ToolError::InvalidArgs { message, .. } => format!("it is not JSON: {message}"),
            ToolError::Deserialization {
                problems, message, ..
            } => {
                let mut lines: Vec<String> = problems
                    .iter()
                    .map(|problem| format!("- {problem}"))
                    .collect();
                if lines.is_empty() {
                    lines.extend(message.iter().map(|message| format!("- {message}")));
                }
                format!("it does not fit:\n{}", lines.join("\n"))
            }
            other => other.for_model(),
        };
        format!(
            "Your final answer must be a {}; {what}\n{how}",
            self.type_name
        )
    }

    /// The system prompt's words on how to give the answer.
    pub(crate) fn instructions(&self) -> String {
        match self.mode {
            OutputMode::Tool => format!(
                "When you have the final answer, call `{}` with it as the arguments ({}); \
                 do not answer in plain text.",
                self.name,
                self.arguments_type()
            ),
            OutputMode::Native => format!(
                "Your final answer is a JSON value of type {}, and nothing else.",
                self.arguments_type()
            ),
            OutputMode::Prompted => format!(
                "Your final answer is a JSON value of type {} and nothing else: no prose, \
                 no code fence. Its JSON Schema:\n{}",
                self.arguments_type(),
                self.schema
            ),
        }
    }

    /// The type of what the model writes: the answer's, or `{result: ...}`.
    fn arguments_type(&self) -> String {
        match self.wrapped {
            true => format!("{{result: {}}}", self.type_name),
            false => self.type_name.clone(),
        }
    }
}

/// An object schema with the value under `result`, the value's definitions
/// kept at the root where its `$ref`s find them.
fn wrap(mut schema: Value) -> Value {
    let definitions = schema.as_object_mut().and_then(|root| root.remove("$defs"));
    if let Some(root) = schema.as_object_mut() {
        root.remove("$schema");
    }
    let mut wrapped = json!({
        "type": "object",
        "properties": {"result": schema},
        "required": ["result"],
        "additionalProperties": false,
    });
    if let Some(definitions) = definitions {
        wrapped["$defs"] = definitions;
    }
    wrapped
}
