//! The form a toolbox holds a tool in: one call from argument text (or a
//! parsed value) to output text, for typed tools and run-time tools alike.

use futures::future::BoxFuture;
use futures::FutureExt;
use serde::Deserialize;
use serde_json::Value;

use crate::error::ToolError;
use crate::tool::{DynamicTool, Tool, ToolSpec};

/// How an erased call can fail before the toolbox turns it into a [`ToolError`](crate::ToolError),
/// which needs the spec for its messages.
pub(crate) enum Failure {
    /// The arguments did not deserialize into the input type; `None` when they
    /// were refused before deserializing (not an object).
    Args(Option<serde_json::Error>),
    /// The arguments broke the schema of a tool defined at run time.
    Schema(ToolError),
    /// The tool returned its error.
    Tool(String),
    /// The output could not be serialized.
    Output(serde_json::Error),
    /// The tool panicked, with this message.
    Panicked(String),
}

/// The form a toolbox holds: one call from argument text to output text.
pub(crate) trait ErasedTool: Send + Sync + 'static {
    fn call<'a>(&'a self, spec: &'a ToolSpec, args: &str) -> Erased<'a>;

    /// The same call with arguments already parsed (a plan's), read
    /// straight from the JSON value. [`Failure::Args`] and
    /// [`Failure::Schema`] mean the tool did not run; the toolbox then makes
    /// the call again from the text, for that path's errors.
    fn call_json<'a>(&'a self, spec: &'a ToolSpec, args: &Value) -> Erased<'a>;
}

/// An erased call: done already (a sync tool, or arguments that did not
/// deserialize), or a future to await. The first costs no allocation.
pub(crate) enum Erased<'a> {
    Done(Result<String, Failure>),
    Running(BoxFuture<'a, Result<String, Failure>>),
}

/// The erased form of a typed tool.
pub(crate) struct Typed<T>(pub(crate) T);

impl<T: Tool> ErasedTool for Typed<T> {
    fn call<'a>(&'a self, _: &'a ToolSpec, args: &str) -> Erased<'a> {
        // serde derives also read a struct from an array of its fields in
        // order; the schema says object, so refuse anything else up front.
        if !args.trim_start().starts_with('{') {
            return Erased::Done(Err(Failure::Args(None)));
        }
        // Fast path: deserialize straight from the argument text; no JSON value
        // is built unless something fails.
        match serde_json::from_str::<T::Input>(args) {
            Ok(input) => self.run(input),
            Err(error) => Erased::Done(Err(Failure::Args(Some(error)))),
        }
    }

    fn call_json<'a>(&'a self, _: &'a ToolSpec, args: &Value) -> Erased<'a> {
        if !args.is_object() {
            return Erased::Done(Err(Failure::Args(None)));
        }
        match T::Input::deserialize(args) {
            Ok(input) => self.run(input),
            Err(error) => Erased::Done(Err(Failure::Args(Some(error)))),
        }
    }
}

impl<T: Tool> Typed<T> {
    fn run(&self, input: T::Input) -> Erased<'_> {
        let input = match self.0.__typed_tools_call_sync(input) {
            Ok(result) => return Erased::Done(finish::<T>(result)),
            Err(input) => input,
        };
        Erased::Running(async move { finish::<T>(self.0.call(input).await) }.boxed())
    }
}

fn finish<T: Tool>(result: Result<T::Output, T::Error>) -> Result<String, Failure> {
    match result {
        Ok(output) => serde_json::to_string(&output).map_err(Failure::Output),
        Err(error) => Err(Failure::Tool(error.to_string())),
    }
}

impl ErasedTool for DynamicTool {
    fn call<'a>(&'a self, spec: &'a ToolSpec, args: &str) -> Erased<'a> {
        let value = match serde_json::from_str::<Value>(args) {
            Ok(value) => value,
            Err(error) => return Erased::Done(Err(Failure::Args(Some(error)))),
        };
        match refusal(spec, &value) {
            Some(failure) => Erased::Done(Err(failure)),
            None => self.run(value),
        }
    }

    fn call_json<'a>(&'a self, spec: &'a ToolSpec, args: &Value) -> Erased<'a> {
        match refusal(spec, args) {
            Some(failure) => Erased::Done(Err(failure)),
            None => self.run(args.clone()),
        }
    }
}

/// Why arguments that break a run-time tool's schema are refused.
fn refusal(spec: &ToolSpec, args: &Value) -> Option<Failure> {
    let problems = spec.input_model().check(args);
    (!problems.is_empty())
        .then(|| Failure::Schema(ToolError::deserialization(spec.name(), problems, None)))
}

impl DynamicTool {
    fn run(&self, value: Value) -> Erased<'_> {
        let future = (self.handler)(value);
        Erased::Running(
            async move {
                match future.await {
                    Ok(output) => serde_json::to_string(&output).map_err(Failure::Output),
                    Err(message) => Err(Failure::Tool(message)),
                }
            }
            .boxed(),
        )
    }
}
