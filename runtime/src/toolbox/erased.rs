//! The form a toolbox holds a tool in: one call from argument text to
//! output text, for typed tools and run-time tools alike.
//! A call that needs approval is made in two halves instead: read the
//! arguments ([`ErasedTool::read`]), and once approved, run the tool with
//! what was read ([`ErasedTool::run`]), so that nothing can change between.
//! The call's context comes erased (`&(dyn Any + Send + Sync)`); a typed
//! tool takes its own type back (see [`context`](super::context)).

use std::any::Any;
use std::fmt::Display;
use std::future::Future;

use futures::future::BoxFuture;
use futures::FutureExt;
use serde::Serialize;
use serde_json::Value;

use super::context::downcast;
use crate::error::ToolError;
use crate::json::Unread;
use crate::schema::Problem;
use crate::tool::{DynamicTool, Tool, ToolSpec};

/// How an erased call can fail before the toolbox turns it into a [`ToolError`](crate::ToolError),
/// which needs the spec for its messages.
pub(crate) enum Failure {
    /// The arguments did not deserialize into the input type; `None` when they
    /// were refused before deserializing (not an object).
    Args(Option<serde_json::Error>),
    /// The arguments broke the schema of a tool defined at run time. Boxed,
    /// so that an erased call's result is small to return.
    Schema(Box<ToolError>),
    /// The tool returned its error.
    Tool(String),
    /// The call was given a context of another type than the tool's, this
    /// one: the toolbox's bounds rule it out.
    Context(&'static str),
    /// The output could not be serialized.
    Output(serde_json::Error),
    /// The tool panicked, with this message.
    Panicked(String),
}

/// The form a toolbox holds: one call from argument text to output text.
pub(crate) trait ErasedTool: Send + Sync + 'static {
    /// The whole call, lent the call's context.
    fn call<'a>(&'a self, context: &'a (dyn Any + Send + Sync), args: &str) -> Erased<'a>;

    /// The first half of [`call`](Self::call): the arguments read into the
    /// tool's input, nothing run.
    fn read(&self, args: &str) -> Result<Input, Failure>;

    /// The second half: runs the tool with an input [`read`](Self::read)
    /// gave.
    fn run<'a>(&'a self, context: &'a (dyn Any + Send + Sync), input: Input) -> Erased<'a>;
}

/// A tool's input, read and not yet run with: the typed tool's `Input`, or
/// a run-time tool's checked value.
pub(crate) struct Input(Box<dyn Any + Send>);

impl Input {
    /// The value, when it is of type `T` (always, for the tool that read it).
    fn take<T: 'static>(self) -> Result<T, Failure> {
        self.0
            .downcast::<T>()
            .map(|input| *input)
            .map_err(|_| Failure::Panicked("an input read for another tool".to_owned()))
    }
}

/// An erased call: done already (a sync tool, or arguments that did not
/// deserialize), or a future to await. The first costs no allocation.
pub(crate) enum Erased<'a> {
    Done(Result<String, Failure>),
    Running(BoxFuture<'a, Result<String, Failure>>),
}

/// The erased form of a typed tool.
pub(crate) struct Typed<T> {
    pub(crate) tool: T,
    /// Whether its input has objects that no derived struct reads (maps,
    /// free-form JSON: see [`SchemaModel::has_free_objects`]), whose keys
    /// are checked for one given twice before it is deserialized. A
    /// struct's derive refuses a field given twice itself.
    ///
    /// [`SchemaModel::has_free_objects`]: crate::schema::model::SchemaModel::has_free_objects
    pub(crate) free_objects: bool,
}

impl<T: Tool> Typed<T> {
    /// `tool`, erased, for its `spec`.
    pub(crate) fn new(tool: T, spec: &ToolSpec) -> Typed<T> {
        Typed {
            tool,
            free_objects: spec.input_model().has_free_objects(),
        }
    }
}

impl<T: Tool> ErasedTool for Typed<T> {
    fn call<'a>(&'a self, context: &'a (dyn Any + Send + Sync), args: &str) -> Erased<'a> {
        // A tool that needs no context takes `()` here without a test.
        let Some(context) = downcast::<T::Context>(context) else {
            return Erased::Done(Err(Typed::<T>::other_context()));
        };
        // Fast path: deserialize straight from the argument text; no JSON value
        // is built unless something fails.
        match self.input(args) {
            Ok(input) => self.run_input(context, input),
            Err(failure) => Erased::Done(Err(failure)),
        }
    }

    fn read(&self, args: &str) -> Result<Input, Failure> {
        self.input(args).map(|input| Input(Box::new(input)))
    }

    fn run<'a>(&'a self, context: &'a (dyn Any + Send + Sync), input: Input) -> Erased<'a> {
        let Some(context) = downcast::<T::Context>(context) else {
            return Erased::Done(Err(Typed::<T>::other_context()));
        };
        match input.take::<T::Input>() {
            Ok(input) => self.run_input(context, input),
            Err(failure) => Erased::Done(Err(failure)),
        }
    }
}

impl<T: Tool> Typed<T> {
    #[inline]
    fn input(&self, args: &str) -> Result<T::Input, Failure> {
        // serde derives also read a struct from an array of its fields in
        // order; the schema says object, so refuse anything else up front.
        // A key given twice in a map is refused here (the slow path says
        // which), in a struct by its derive.
        if !opens_object(args) || (self.free_objects && crate::json::check_unique(args).is_err()) {
            return Err(Failure::Args(None));
        }
        serde_json::from_str::<T::Input>(args).map_err(|error| Failure::Args(Some(error)))
    }

    #[inline]
    fn run_input<'a>(&'a self, context: &'a T::Context, input: T::Input) -> Erased<'a> {
        let input = match self.tool.__typed_tools_call_sync(context, input) {
            Ok(result) => return Erased::Done(finish(result)),
            Err(input) => input,
        };
        Erased::Running(running(self.tool.call(context, input)))
    }

    /// The call was given another context than `T`'s: the toolbox's
    /// bounds rule it out, and it fails rather than panics.
    #[cold]
    #[inline(never)]
    fn other_context() -> Failure {
        Failure::Context(std::any::type_name::<T::Context>())
    }
}

/// Whether argument text starts as a JSON object: its first byte past
/// JSON's whitespace is `{`. (Any other text is refused, and then explained
/// from the text, so what other whitespace would have done is the same.)
#[inline]
fn opens_object(args: &str) -> bool {
    match args.as_bytes().first() {
        // Most arguments start with their brace.
        Some(b'{') => true,
        _ => {
            args.bytes()
                .find(|byte| !matches!(byte, b' ' | b'\t' | b'\n' | b'\r'))
                == Some(b'{')
        }
    }
}

/// A tool's future, boxed, its result made text. Generic over the future and
/// the result, not the tool: tools whose futures are of one type (a sync
/// tool's `Ready`) share one copy of it.
fn running<'a, F, O, E>(future: F) -> BoxFuture<'a, Result<String, Failure>>
where
    F: Future<Output = Result<O, E>> + Send + 'a,
    O: Serialize,
    E: Display,
{
    async move { finish(future.await) }.boxed()
}

/// A tool's result as text. Generic over the result, not the tool, so
/// that tools of one output and error type share one copy.
fn finish<O: Serialize, E: Display>(result: Result<O, E>) -> Result<String, Failure> {
    match result {
        Ok(output) => serde_json::to_string(&output).map_err(Failure::Output),
        Err(error) => Err(Failure::Tool(error.to_string())),
    }
}

/// A run-time tool takes no context, and joins a toolbox of any.
impl ErasedTool for DynamicTool {
    fn call<'a>(&'a self, _: &'a (dyn Any + Send + Sync), args: &str) -> Erased<'a> {
        match arguments(&self.spec, args) {
            Ok(value) => self.run_value(value),
            Err(failure) => Erased::Done(Err(failure)),
        }
    }

    fn read(&self, args: &str) -> Result<Input, Failure> {
        arguments(&self.spec, args).map(|value| Input(Box::new(value)))
    }

    fn run<'a>(&'a self, _: &'a (dyn Any + Send + Sync), input: Input) -> Erased<'a> {
        match input.take::<Value>() {
            Ok(value) => self.run_value(value),
            Err(failure) => Erased::Done(Err(failure)),
        }
    }
}

/// A run-time tool's arguments, read with each key given once and checked
/// against its schema.
fn arguments(spec: &ToolSpec, args: &str) -> Result<Value, Failure> {
    let value = match crate::json::from_str_unique(args) {
        Ok(value) => value,
        Err(Unread::Syntax(error)) => return Err(Failure::Args(Some(error))),
        Err(Unread::Duplicate(path)) => {
            return Err(Failure::Schema(Box::new(ToolError::deserialization(
                spec.name(),
                vec![Problem::Duplicate { path }],
                None,
            ))))
        }
    };
    match refusal(spec, &value) {
        Some(failure) => Err(failure),
        None => Ok(value),
    }
}

/// Why arguments that break a run-time tool's schema are refused.
fn refusal(spec: &ToolSpec, args: &Value) -> Option<Failure> {
    let problems = spec.input_model().check(args);
    (!problems.is_empty()).then(|| {
        Failure::Schema(Box::new(ToolError::deserialization(
            spec.name(),
            problems,
            None,
        )))
    })
}

impl DynamicTool {
    fn run_value(&self, value: Value) -> Erased<'_> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::toolbox::dispatch::Entry;

    /// Who is calling.
    struct Caller(&'static str);

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Nothing {}

    /// A tool that needs a `Caller`.
    struct Whoami;

    impl Tool for Whoami {
        type Input = Nothing;
        type Output = String;
        type Error = std::convert::Infallible;
        type Effects = crate::effect::Read;
        type Context = Caller;
        const NAME: &'static str = "whoami";
        const DOC: &'static [&'static str] = &["Say who is calling."];

        fn call(
            &self,
            caller: &Caller,
            _: Nothing,
        ) -> impl Future<Output = Result<String, Self::Error>> + Send {
            std::future::ready(Ok(caller.0.to_owned()))
        }
    }

    fn entry() -> Entry {
        let spec = ToolSpec::of::<Whoami>();
        Entry {
            tool: Box::new(Typed::new(Whoami, &spec)),
            spec,
            policy: crate::recover::Policy::none(),
        }
    }

    #[test]
    fn a_tool_takes_its_context_back() {
        let entry = entry();
        // A hand-written tool's future: run, not done at once (only
        // `#[tool]` fns without `async` are).
        let json = match entry.tool.call(&Caller("ana"), "{}") {
            Erased::Done(result) => result,
            Erased::Running(future) => futures::executor::block_on(future),
        };
        assert_eq!(json.map_err(|_| "failed").unwrap(), r#""ana""#);
    }

    #[test]
    fn a_context_of_another_type_fails_the_call_without_running_the_tool() {
        // The toolbox's bounds rule this out; the erased layer still says
        // no rather than panic.
        let entry = entry();
        let Erased::Done(Err(failure)) = entry.tool.call(&"not a caller", "{}") else {
            panic!("the call fails at once");
        };
        let error = entry.explain("{}", failure);
        assert_eq!(
            error.to_string(),
            "tool `whoami` failed: it needs a context of type `typed_tools_runtime::toolbox::erased::tests::Caller`, and the call was given another; give the toolbox's calls the context it was built with"
        );
        let input = entry.read("{}").map_err(|_| "read").unwrap();
        let Erased::Done(Err(Failure::Context(_))) = entry.tool.run(&(), input) else {
            panic!("the second half fails the same way");
        };
    }
}
