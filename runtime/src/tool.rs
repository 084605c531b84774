//! The [`Tool`] trait, the [`ToolSpec`] computed from it once, and tools defined
//! at run time ([`DynamicTool`]).
//!
//! `#[tool]` implements [`Tool`] for you; implement it by hand only for tools
//! the macro cannot express. A [`Toolbox`](crate::toolbox::Toolbox) erases tools
//! into one form so that a model's call can be dispatched by name.

use std::any::TypeId;
use std::borrow::Cow;
use std::fmt;
use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;
use futures::FutureExt;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use crate::doc::ToolDoc;
use crate::effect::{EffectSet, Effects};
use crate::schema::SchemaModel;

/// A tool a model can call: typed input and output, declared effects.
///
/// Usually written by `#[tool]`:
///
/// ```
/// use typed_tools::{tool, Tool};
/// use typed_tools::effect::Pure;
///
/// /// Add two numbers.
/// #[tool(effects = Pure)]
/// fn add(a: i64, b: i64) -> i64 {
///     a + b
/// }
///
/// assert_eq!(Add::NAME, "add");
/// assert_eq!(add(2, 3), 5); // the fn is still an ordinary fn
/// let _: fn() -> <Add as Tool>::Effects = || Pure;
/// ```
///
/// By hand, for a tool the macro cannot express:
///
/// ```
/// use std::future::Future;
/// use typed_tools::{effect, Tool};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Query { text: String }
///
/// struct Shout;
///
/// impl Tool for Shout {
///     type Input = Query;
///     type Output = String;
///     type Error = std::convert::Infallible;
///     type Effects = effect::Pure;
///     type Context = ();
///     const NAME: &'static str = "shout";
///     const DOC: &'static [&'static str] = &["Upper-case a text."];
///
///     fn call(&self, _: &(), input: Query) -> impl Future<Output = Result<String, Self::Error>> + Send {
///         async move { Ok(input.text.to_uppercase()) }
///     }
/// }
/// # let _ = typed_tools::Toolbox::builder().tool(Shout).build().unwrap();
/// ```
///
/// A tool that needs the run's context (who is calling, a connection, a
/// request id: see [`toolbox::context`](crate::toolbox::context)) names its
/// type, and each call is lent one:
///
/// ```
/// use std::future::Future;
/// use typed_tools::{effect, Tool, Toolbox};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Nothing {}
///
/// /// Who is calling.
/// struct Caller { name: String }
///
/// struct Whoami;
///
/// impl Tool for Whoami {
///     type Input = Nothing;
///     type Output = String;
///     type Error = std::convert::Infallible;
///     type Effects = effect::Read;
///     type Context = Caller;
///     const NAME: &'static str = "whoami";
///     const DOC: &'static [&'static str] = &["Say who is calling."];
///
///     fn call(&self, caller: &Caller, _: Nothing) -> impl Future<Output = Result<String, Self::Error>> + Send {
///         std::future::ready(Ok(caller.name.clone()))
///     }
/// }
/// # futures::executor::block_on(async {
/// let toolbox = Toolbox::builder().context::<Caller>().tool(Whoami).build().unwrap();
/// let ana = Caller { name: "ana".into() };
/// assert_eq!(toolbox.call_in(&ana, "whoami", "{}").await.unwrap().json(), r#""ana""#);
/// # });
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a tool",
    label = "not a tool",
    note = "pass the type `#[tool]` generates from a fn, the fn's name in UpperCamelCase: `fn lookup_account` gives `LookupAccount` (made by `LookupAccount::new(state)` when the fn has a `#[state]` parameter); or implement `typed_tools::Tool` for `{Self}`"
)]
pub trait Tool: Send + Sync + 'static {
    /// The arguments, one field per parameter; deserialized from the model's JSON.
    type Input: DeserializeOwned + JsonSchema + Send + 'static;
    /// What the tool returns on success.
    type Output: Serialize + JsonSchema + Send + 'static;
    /// What the tool returns on failure; [`std::convert::Infallible`] for a tool
    /// that cannot fail. Its `Display` is what the model is shown.
    type Error: fmt::Display + Send + 'static;
    /// The tool's effects: one of the markers of [`effect`](crate::effect).
    type Effects: Effects;
    /// What each call is lent besides its input: the run's context (who is
    /// calling and what they may do, a connection, a request id), given
    /// per call, per plan run, per MCP request; `()` for a tool that needs
    /// none. `#[tool]` writes it from a `#[context] x: &C` parameter. A
    /// toolbox admits a tool whose context is `()` or the one it gives
    /// ([`ToolboxBuilder::context`](crate::ToolboxBuilder::context)).
    type Context: Send + Sync + 'static;
    /// The name the model calls the tool by.
    const NAME: &'static str;
    /// The doc comment's lines; [`ToolDoc::parse`] turns them into the
    /// description and the arguments' descriptions.
    const DOC: &'static [&'static str];
    /// Whether calling the tool twice with the same input has the effect of
    /// calling it once; only such tools may be retried automatically.
    const IDEMPOTENT: bool = false;
    /// A human-readable title, for people choosing or approving tools
    /// (MCP's `title`); the model reads the name and the description.
    const TITLE: Option<&'static str> = None;
    /// For a tool with the `Write` effect: whether a call may destroy or
    /// overwrite what is there (MCP's `destructiveHint`), rather than only
    /// add to it. `true` unless declared otherwise, the safe assumption:
    /// `#[tool(effects = Write, destructive = false)]` marks a writer that
    /// only adds. Meaningless without `Write`.
    const DESTRUCTIVE: bool = true;
    /// Whether the tool reaches an open world of external entities (MCP's
    /// `openWorldHint`): by default, whether it has the `Network` effect;
    /// `#[tool(effects = Network, open_world = false)]` marks a tool whose
    /// network reach is a closed, known domain.
    const OPEN_WORLD: bool =
        <Self::Effects as Effects>::SET.contains(crate::effect::Effect::Network);

    /// The input's required fields, by their Rust names (as `stringify!`
    /// writes them), each with the message for leaving it out of `exec!`;
    /// `None` when not known (a hand-written tool: then the plan checker
    /// refuses a required argument left out, before anything runs).
    /// `#[tool]` writes it, so that `exec!` may leave out the optional ones.
    #[doc(hidden)]
    const __TYPED_TOOLS_REQUIRED: Option<&'static [(&'static str, &'static str)]> = None;

    /// Runs the tool with the call's context (`&()` for a tool that needs
    /// none), which the future may borrow.
    fn call(
        &self,
        context: &Self::Context,
        input: Self::Input,
    ) -> impl Future<Output = Result<Self::Output, Self::Error>> + Send;

    /// Runs a tool whose body is synchronous without building a future, or
    /// gives the input back. `#[tool]` implements it for sync fns so that the
    /// dispatcher's fast path allocates nothing; the default gives the input back.
    #[doc(hidden)]
    fn __typed_tools_call_sync(
        &self,
        context: &Self::Context,
        input: Self::Input,
    ) -> Result<Result<Self::Output, Self::Error>, Self::Input> {
        let _ = context;
        Err(input)
    }

    /// The key in the arguments' JSON of the input field `name` as
    /// `stringify!` writes it. `#[tool]` implements it for parameters renamed
    /// by `#[serde(rename)]`; the plan builder's `exec!` uses it (and drops
    /// the `r#` of a raw name itself).
    #[doc(hidden)]
    fn __typed_tools_argument(name: &'static str) -> &'static str {
        name
    }
}

/// What a catalog and a dispatcher know about a tool, computed once when the
/// tool joins a toolbox.
///
/// ```
/// use typed_tools::{tool, ToolSpec, effect::EffectSet};
///
/// /// Say hello.
/// ///
/// /// # Arguments
/// /// * `name` - Who to greet.
/// #[tool(effects = Pure)]
/// fn greet(name: String, times: Option<u8>) -> String {
///     format!("hello {name}").repeat(times.unwrap_or(1) as usize)
/// }
///
/// let spec = ToolSpec::of::<Greet>();
/// assert_eq!(spec.name(), "greet");
/// assert_eq!(spec.description(), "Say hello.");
/// assert_eq!(spec.effects(), EffectSet::PURE);
/// assert_eq!(spec.input_schema()["properties"]["name"]["description"], "Who to greet.");
/// assert_eq!(spec.input_schema()["required"], serde_json::json!(["name"]));
/// assert_eq!(spec.parameters().collect::<Vec<_>>(), ["name", "times"]);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct ToolSpec {
    name: Cow<'static, str>,
    description: String,
    input_schema: Value,
    output_schema: Value,
    /// The schemas read once, for validation, names, coercion and plan types.
    models: Models,
    effects: EffectSet,
    idempotent: bool,
    fallible: bool,
    title: Option<Cow<'static, str>>,
    /// As declared; [`ToolSpec::is_destructive`] reads it with the effects.
    destructive: bool,
    /// As declared; `None`: by the `Network` effect.
    open_world: Option<bool>,
}

/// What [`ToolSpec::of`] reads off a typed tool, for the part of it that
/// needs no types: constants, and each schema as a function that writes it.
struct Parts {
    name: &'static str,
    doc: &'static [&'static str],
    input: Writer,
    output: Writer,
    effects: EffectSet,
    idempotent: bool,
    fallible: bool,
    title: Option<&'static str>,
    destructive: bool,
    open_world: bool,
}

/// A root schema writer: `SchemaGenerator::into_root_schema_for::<T>`, the
/// one part of a spec that is compiled for every type.
type Writer = fn(schemars::SchemaGenerator) -> schemars::Schema;

impl ToolSpec {
    /// The spec of a typed tool: schemas generated by schemars (JSON Schema
    /// 2020-12), descriptions from its doc comment.
    ///
    /// ```
    /// use typed_tools::{tool, ToolSpec};
    ///
    /// /// Get one note by its id.
    /// ///
    /// /// # Arguments
    /// /// * `id` - The note's id.
    /// #[tool(effects = Read)]
    /// fn get_note(id: u32, tag: Option<String>) -> Result<String, String> { Ok(format!("note {id}")) }
    ///
    /// let spec = ToolSpec::of::<GetNote>();
    /// assert_eq!(spec.name(), "get_note");
    /// assert_eq!(spec.input_schema()["properties"]["id"]["description"], "The note's id.");
    /// ```
    pub fn of<T: Tool>() -> ToolSpec {
        // Only what needs the types is generic, and that is two function
        // pointers; the rest is written once (`assemble`), not once per tool
        // (a generic fn is compiled again for every tool).
        ToolSpec::assemble(Parts {
            name: T::NAME,
            doc: T::DOC,
            input: schemars::SchemaGenerator::into_root_schema_for::<T::Input>,
            output: schemars::SchemaGenerator::into_root_schema_for::<T::Output>,
            effects: <T::Effects as Effects>::SET,
            idempotent: T::IDEMPOTENT,
            fallible: TypeId::of::<T::Error>() != TypeId::of::<std::convert::Infallible>(),
            title: T::TITLE,
            destructive: T::DESTRUCTIVE,
            open_world: T::OPEN_WORLD,
        })
    }

    /// A typed tool's spec from its parts.
    fn assemble(parts: Parts) -> ToolSpec {
        let doc = ToolDoc::parse(parts.doc);
        let settings = schemars::generate::SchemaSettings::draft2020_12();
        let mut input_schema = (parts.input)(settings.clone().into_generator()).to_value();
        // The output is serialized, so its schema describes what `Serialize`
        // writes (`skip_deserializing` fields, `rename(serialize = ..)`).
        let output_schema = (parts.output)(settings.for_serialize().into_generator()).to_value();
        if let Some(root) = input_schema.as_object_mut() {
            // The input struct's name and rustdoc are for Rust readers; the
            // model reads the tool's description.
            root.remove("title");
            root.remove("description");
            if let Some(Value::Object(properties)) = root.get_mut("properties") {
                // A parameter's `///` comes as schemars' derive passes it
                // on, a line break for each line: joined as the fn's are.
                for property in properties.values_mut() {
                    if let Some(Value::String(text)) = property.get_mut("description") {
                        if text.contains('\n') {
                            *text = crate::doc::join_text(text);
                        }
                    }
                }
                for (name, text) in &doc.arguments {
                    if let Some(Value::Object(property)) = properties.get_mut(name) {
                        if !text.is_empty() && !property.contains_key("description") {
                            property.insert("description".into(), Value::String(text.clone()));
                        }
                    }
                }
            }
        }
        ToolSpec {
            name: Cow::Borrowed(parts.name),
            description: doc.description,
            models: Models::default(),
            input_schema,
            output_schema,
            effects: parts.effects,
            idempotent: parts.idempotent,
            fallible: parts.fallible,
            title: parts.title.map(Cow::Borrowed),
            destructive: parts.destructive,
            open_world: Some(parts.open_world),
        }
    }

    /// The name the model calls the tool by.
    ///
    /// ```
    /// use typed_tools::{tool, ToolSpec};
    ///
    /// /// Get one note by its id.
    /// ///
    /// /// # Arguments
    /// /// * `id` - The note's id.
    /// #[tool(effects = Read)]
    /// fn get_note(id: u32, tag: Option<String>) -> Result<String, String> { Ok(format!("note {id}")) }
    ///
    /// let spec = ToolSpec::of::<GetNote>();
    /// assert_eq!(spec.name(), "get_note");
    /// ```
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The name as it is held: borrowed for the life of the program (a
    /// typed tool's), or owned (one made at run time).
    pub(crate) fn held_name(&self) -> &Cow<'static, str> {
        &self.name
    }

    /// What the tool does, for the model: the doc comment, less its
    /// `# Arguments` section.
    ///
    /// ```
    /// use typed_tools::{tool, ToolSpec};
    ///
    /// /// Get one note by its id.
    /// ///
    /// /// # Arguments
    /// /// * `id` - The note's id.
    /// #[tool(effects = Read)]
    /// fn get_note(id: u32, tag: Option<String>) -> Result<String, String> { Ok(format!("note {id}")) }
    ///
    /// let spec = ToolSpec::of::<GetNote>();
    /// assert_eq!(spec.description(), "Get one note by its id.");
    /// ```
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The JSON Schema (2020-12) of the arguments: an object, one property per parameter.
    ///
    /// ```
    /// use typed_tools::{tool, ToolSpec};
    ///
    /// /// Get one note by its id.
    /// ///
    /// /// # Arguments
    /// /// * `id` - The note's id.
    /// #[tool(effects = Read)]
    /// fn get_note(id: u32, tag: Option<String>) -> Result<String, String> { Ok(format!("note {id}")) }
    ///
    /// let spec = ToolSpec::of::<GetNote>();
    /// assert_eq!(spec.input_schema()["type"], "object");
    /// assert_eq!(spec.input_schema()["required"], serde_json::json!(["id"]));
    /// ```
    pub fn input_schema(&self) -> &Value {
        &self.input_schema
    }

    /// The JSON Schema (2020-12) of the output on success.
    ///
    /// ```
    /// use typed_tools::{tool, ToolSpec};
    ///
    /// /// Get one note by its id.
    /// ///
    /// /// # Arguments
    /// /// * `id` - The note's id.
    /// #[tool(effects = Read)]
    /// fn get_note(id: u32, tag: Option<String>) -> Result<String, String> { Ok(format!("note {id}")) }
    ///
    /// let spec = ToolSpec::of::<GetNote>();
    /// assert_eq!(spec.output_schema()["type"], "string");
    /// ```
    pub fn output_schema(&self) -> &Value {
        &self.output_schema
    }

    /// The input schema, read.
    pub(crate) fn input_model(&self) -> &SchemaModel {
        &self.models()[0]
    }

    /// The output schema, read.
    pub(crate) fn output_model(&self) -> &SchemaModel {
        &self.models()[1]
    }

    fn models(&self) -> &[SchemaModel; 2] {
        self.models.0.get_or_init(|| {
            [
                SchemaModel::new(&self.input_schema),
                SchemaModel::new(&self.output_schema),
            ]
        })
    }

    /// The declared effects.
    ///
    /// ```
    /// use typed_tools::{tool, ToolSpec};
    ///
    /// /// Get one note by its id.
    /// ///
    /// /// # Arguments
    /// /// * `id` - The note's id.
    /// #[tool(effects = Read)]
    /// fn get_note(id: u32, tag: Option<String>) -> Result<String, String> { Ok(format!("note {id}")) }
    ///
    /// let spec = ToolSpec::of::<GetNote>();
    /// assert_eq!(spec.effects(), typed_tools::effect::EffectSet::READ);
    /// ```
    pub fn effects(&self) -> EffectSet {
        self.effects
    }

    /// Whether the tool was declared safe to retry (`#[tool(idempotent)]`).
    ///
    /// ```
    /// use typed_tools::{tool, ToolSpec};
    ///
    /// /// Get one note by its id.
    /// ///
    /// /// # Arguments
    /// /// * `id` - The note's id.
    /// #[tool(effects = Read)]
    /// fn get_note(id: u32, tag: Option<String>) -> Result<String, String> { Ok(format!("note {id}")) }
    ///
    /// let spec = ToolSpec::of::<GetNote>();
    /// assert!(!spec.is_idempotent());
    /// ```
    pub fn is_idempotent(&self) -> bool {
        self.idempotent
    }

    /// Whether the tool can return an error of its own: its fn returns a
    /// `Result`.
    ///
    /// ```
    /// use typed_tools::{tool, ToolSpec};
    ///
    /// /// Get one note by its id.
    /// ///
    /// /// # Arguments
    /// /// * `id` - The note's id.
    /// #[tool(effects = Read)]
    /// fn get_note(id: u32, tag: Option<String>) -> Result<String, String> { Ok(format!("note {id}")) }
    ///
    /// let spec = ToolSpec::of::<GetNote>();
    /// assert!(spec.is_fallible());
    /// ```
    pub fn is_fallible(&self) -> bool {
        self.fallible
    }

    /// The human-readable title, if one was given: for people choosing or
    /// approving tools (MCP's `title`). See [`is_destructive`](Self::is_destructive)
    /// for one.
    ///
    /// ```
    /// use typed_tools::{tool, ToolSpec};
    ///
    /// /// Get one note by its id.
    /// ///
    /// /// # Arguments
    /// /// * `id` - The note's id.
    /// #[tool(effects = Read)]
    /// fn get_note(id: u32, tag: Option<String>) -> Result<String, String> { Ok(format!("note {id}")) }
    ///
    /// let spec = ToolSpec::of::<GetNote>();
    /// assert_eq!(spec.title(), None);
    /// ```
    pub fn title(&self) -> Option<&str> {
        self.title.as_deref()
    }

    /// Whether a call may destroy or overwrite what is there: a tool with
    /// the `Write` effect not declared `destructive = false`. A tool that
    /// does not write destroys nothing.
    ///
    /// ```
    /// use typed_tools::{tool, ToolSpec};
    ///
    /// /// Add a note.
    /// #[tool(effects = Write, destructive = false, title = "Add a note")]
    /// fn add_note(text: String) -> u32 { 1 }
    /// /// Delete a note.
    /// #[tool(effects = Write)]
    /// fn delete_note(id: u32) -> bool { true }
    /// /// Read a note.
    /// #[tool(effects = Read)]
    /// fn get_note(id: u32) -> String { String::new() }
    ///
    /// assert!(!ToolSpec::of::<AddNote>().is_destructive());
    /// assert!(ToolSpec::of::<DeleteNote>().is_destructive());
    /// assert!(!ToolSpec::of::<GetNote>().is_destructive());
    /// assert_eq!(ToolSpec::of::<AddNote>().title(), Some("Add a note"));
    /// assert_eq!(ToolSpec::of::<DeleteNote>().title(), None);
    /// ```
    pub fn is_destructive(&self) -> bool {
        self.effects.contains(crate::effect::Effect::Write) && self.destructive
    }

    /// Whether the tool reaches an open world of external entities: by
    /// default, whether it has the `Network` effect.
    ///
    /// ```
    /// use typed_tools::{tool, ToolSpec};
    ///
    /// /// Search the web.
    /// #[tool(effects = Network)]
    /// fn search(query: String) -> Vec<String> { vec![] }
    /// /// Ask the company's own directory service.
    /// #[tool(effects = Network, open_world = false)]
    /// fn directory(name: String) -> String { name }
    ///
    /// assert!(ToolSpec::of::<Search>().is_open_world());
    /// assert!(!ToolSpec::of::<Directory>().is_open_world());
    /// ```
    pub fn is_open_world(&self) -> bool {
        self.open_world
            .unwrap_or(self.effects.contains(crate::effect::Effect::Network))
    }

    /// The parameters' names, in declaration order.
    ///
    /// ```
    /// use typed_tools::{tool, ToolSpec};
    ///
    /// /// Get one note by its id.
    /// ///
    /// /// # Arguments
    /// /// * `id` - The note's id.
    /// #[tool(effects = Read)]
    /// fn get_note(id: u32, tag: Option<String>) -> Result<String, String> { Ok(format!("note {id}")) }
    ///
    /// let spec = ToolSpec::of::<GetNote>();
    /// assert_eq!(spec.parameters().collect::<Vec<_>>(), ["id", "tag"]);
    /// ```
    pub fn parameters(&self) -> impl Iterator<Item = &str> {
        self.input_schema
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(|properties| properties.keys().map(String::as_str))
    }

    /// Whether parameter `name` must be given.
    ///
    /// ```
    /// use typed_tools::{tool, ToolSpec};
    ///
    /// /// Get one note by its id.
    /// ///
    /// /// # Arguments
    /// /// * `id` - The note's id.
    /// #[tool(effects = Read)]
    /// fn get_note(id: u32, tag: Option<String>) -> Result<String, String> { Ok(format!("note {id}")) }
    ///
    /// let spec = ToolSpec::of::<GetNote>();
    /// assert!(spec.is_required("id"));
    /// assert!(!spec.is_required("tag"));
    /// ```
    pub fn is_required(&self, name: &str) -> bool {
        self.input_schema
            .get("required")
            .and_then(Value::as_array)
            .is_some_and(|required| required.iter().any(|r| r == name))
    }
}

/// A spec's schemas read ([`SchemaModel`]), made the first time they are
/// needed (a call's arguments checked or explained, a type named, a plan
/// checked), not when the tool joins a toolbox: a server that starts, lists
/// its tools and serves a few calls reads only what it uses, so that a
/// fresh process answers its first `tools/list` sooner. Shared by a spec's
/// clones.
#[derive(Clone, Debug, Default)]
struct Models(Arc<std::sync::OnceLock<[SchemaModel; 2]>>);

/// The models are the schemas read: two specs with equal schemas have equal
/// models, whether or not either has been read yet.
impl PartialEq for Models {
    fn eq(&self, _: &Models) -> bool {
        true
    }
}

type Handler = dyn Fn(Value) -> BoxFuture<'static, Result<Value, String>> + Send + Sync;

/// A tool defined at run time: from configuration, or from another server.
///
/// It has a name, a description, a JSON Schema for its arguments, effects and
/// an async handler; in a toolbox it goes through the same catalogs, effect gate
/// and errors as a typed tool. Its arguments are checked against the schema
/// before the handler runs (see [`schema`](crate::schema) for the keywords
/// checked).
///
/// ```
/// # futures::executor::block_on(async {
/// use serde_json::{json, Value};
/// use typed_tools::{DynamicTool, Toolbox, effect::EffectSet};
///
/// let echo = DynamicTool::new("echo")
///     .description("Repeat a text.")
///     .input_schema(json!({
///         "type": "object",
///         "properties": { "text": { "type": "string" } },
///         "required": ["text"],
///         "additionalProperties": false
///     }))
///     .effects(EffectSet::PURE)
///     .handler(|args: Value| async move { Ok(args["text"].clone()) });
///
/// let toolbox = Toolbox::builder().dynamic(echo).build()?;
/// assert_eq!(toolbox.call("echo", r#"{"text": "hi"}"#).await?.json(), r#""hi""#);
/// assert!(toolbox.call("echo", r#"{"text": 1}"#).await.is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
pub struct DynamicTool {
    pub(crate) spec: ToolSpec,
    pub(crate) handler: Arc<Handler>,
    /// Which schema was given nested deeper than
    /// [`MAX_SCHEMA_DEPTH`](Self::MAX_SCHEMA_DEPTH), and was not kept.
    pub(crate) too_deep: Option<&'static str>,
}

impl DynamicTool {
    /// Starts a tool named `name`. The defaults: no description, a schema that
    /// takes an empty object, no effects (pure), not idempotent, and a handler
    /// that returns `null`; set each that applies.
    ///
    /// ```
    /// use typed_tools::DynamicTool;
    /// use typed_tools::effect::EffectSet;
    ///
    /// let tool = DynamicTool::new("ping");
    /// assert_eq!(tool.spec().name(), "ping");
    /// assert_eq!(tool.spec().effects(), EffectSet::PURE);
    /// assert_eq!(tool.spec().input_schema()["properties"], serde_json::json!({}));
    /// ```
    pub fn new(name: impl Into<Cow<'static, str>>) -> DynamicTool {
        let input_schema = serde_json::json!({
            "type": "object", "properties": {}, "additionalProperties": false
        });
        let output_schema = serde_json::json!({});
        DynamicTool {
            spec: ToolSpec {
                name: name.into(),
                description: String::new(),
                models: Models::default(),
                input_schema,
                output_schema,
                effects: EffectSet::PURE,
                idempotent: false,
                fallible: true,
                title: None,
                destructive: true,
                open_world: None,
            },
            handler: Arc::new(|_| futures::future::ready(Ok(Value::Null)).boxed()),
            too_deep: None,
        }
    }

    /// The deepest schema a run-time tool may have: 128 levels of arrays and
    /// objects, as deep as serde_json reads JSON text. A deeper schema is not
    /// kept, and the toolbox refuses the tool when it is built
    /// ([`BuildProblem::SchemaTooDeep`](crate::toolbox::BuildProblem::SchemaTooDeep)):
    /// serde_json's walks over a value (clone, print, drop) recurse once a
    /// level, and a schema from a server must not be able to overflow a
    /// thread's stack.
    ///
    /// ```
    /// use serde_json::{json, Value};
    /// use typed_tools::{DynamicTool, Toolbox};
    ///
    /// let mut schema = json!({ "type": "integer" });
    /// for _ in 0..200 {
    ///     schema = json!({ "type": "object", "properties": { "next": schema } });
    /// }
    /// let tool = DynamicTool::new("deep").input_schema(schema);
    /// let error = Toolbox::builder().dynamic(tool).build().unwrap_err();
    /// assert_eq!(
    ///     error.to_string(),
    ///     "the toolbox could not be built: the input schema of `deep` nests deeper than 128 levels; flatten it, or name its repeated parts in `$defs` and `$ref` them"
    /// );
    /// ```
    pub const MAX_SCHEMA_DEPTH: usize = crate::json::MAX_DEPTH;

    /// Whether `schema` is too deep to keep: then it is dropped without
    /// recursion and `which` recorded.
    fn too_deep(&mut self, schema: Value, which: &'static str) -> Option<Value> {
        if crate::json::depth_up_to(&schema, Self::MAX_SCHEMA_DEPTH) > Self::MAX_SCHEMA_DEPTH {
            crate::json::drop_deep(schema);
            self.too_deep = Some(which);
            return None;
        }
        Some(schema)
    }

    /// What the tool does, for the model.
    ///
    /// ```
    /// use typed_tools::DynamicTool;
    /// use typed_tools::effect::EffectSet;
    ///
    /// let tool = DynamicTool::new("ping").description("Check that the server answers.");
    /// assert_eq!(tool.spec().description(), "Check that the server answers.");
    /// ```
    pub fn description(mut self, description: impl Into<String>) -> DynamicTool {
        self.spec.description = description.into();
        self
    }

    /// The JSON Schema of the arguments; must be an object schema, at most
    /// [`MAX_SCHEMA_DEPTH`](Self::MAX_SCHEMA_DEPTH) levels deep.
    ///
    /// ```
    /// use typed_tools::DynamicTool;
    /// use typed_tools::effect::EffectSet;
    ///
    /// let schema = serde_json::json!({
    ///     "type": "object",
    ///     "properties": { "host": { "type": "string" } },
    ///     "required": ["host"]
    /// });
    /// let tool = DynamicTool::new("ping").input_schema(schema.clone());
    /// assert_eq!(tool.spec().input_schema(), &schema);
    /// assert!(tool.spec().is_required("host"));
    /// ```
    pub fn input_schema(mut self, schema: Value) -> DynamicTool {
        let Some(schema) = self.too_deep(schema, "input") else {
            return self;
        };
        self.spec.models = Models::default();
        self.spec.input_schema = schema;
        self
    }

    /// The JSON Schema of the output; `{}` (anything) by default; at most
    /// [`MAX_SCHEMA_DEPTH`](Self::MAX_SCHEMA_DEPTH) levels deep.
    ///
    /// ```
    /// use typed_tools::DynamicTool;
    /// use typed_tools::effect::EffectSet;
    ///
    /// let tool = DynamicTool::new("ping").output_schema(serde_json::json!({ "type": "integer" }));
    /// assert_eq!(tool.spec().output_schema()["type"], "integer");
    /// ```
    pub fn output_schema(mut self, schema: Value) -> DynamicTool {
        let Some(schema) = self.too_deep(schema, "output") else {
            return self;
        };
        self.spec.models = Models::default();
        self.spec.output_schema = schema;
        self
    }

    /// The tool's effects. Declare them: the default is pure.
    ///
    /// ```
    /// use typed_tools::DynamicTool;
    /// use typed_tools::effect::EffectSet;
    ///
    /// let tool = DynamicTool::new("ping").effects(EffectSet::NETWORK);
    /// assert_eq!(tool.spec().effects(), EffectSet::NETWORK);
    /// assert!(tool.spec().is_open_world());
    /// ```
    pub fn effects(mut self, effects: EffectSet) -> DynamicTool {
        self.spec.effects = effects;
        self
    }

    /// Marks the tool safe to retry.
    ///
    /// ```
    /// use typed_tools::DynamicTool;
    /// use typed_tools::effect::EffectSet;
    ///
    /// let tool = DynamicTool::new("put_file").effects(EffectSet::WRITE).idempotent(true);
    /// assert!(tool.spec().is_idempotent());
    /// ```
    pub fn idempotent(mut self, idempotent: bool) -> DynamicTool {
        self.spec.idempotent = idempotent;
        self
    }

    /// A human-readable title, for people (MCP's `title`).
    ///
    /// ```
    /// use typed_tools::DynamicTool;
    /// use typed_tools::effect::EffectSet;
    ///
    /// let tool = DynamicTool::new("ping").title("Ping a host");
    /// assert_eq!(tool.spec().title(), Some("Ping a host"));
    /// ```
    pub fn title(mut self, title: impl Into<Cow<'static, str>>) -> DynamicTool {
        self.spec.title = Some(title.into());
        self
    }

    /// For a tool with the `Write` effect: whether a call may destroy or
    /// overwrite (`true`, the default) or only adds (`false`); see
    /// [`ToolSpec::is_destructive`].
    ///
    /// ```
    /// use typed_tools::DynamicTool;
    /// use typed_tools::effect::EffectSet;
    ///
    /// let append = DynamicTool::new("append_log").effects(EffectSet::WRITE).destructive(false);
    /// assert!(!append.spec().is_destructive());
    /// assert!(DynamicTool::new("drop_table").effects(EffectSet::WRITE).spec().is_destructive());
    /// ```
    pub fn destructive(mut self, destructive: bool) -> DynamicTool {
        self.spec.destructive = destructive;
        self
    }

    /// Whether the tool reaches an open world; by default, whether its
    /// effects include `Network` (see [`ToolSpec::is_open_world`]).
    ///
    /// ```
    /// use typed_tools::DynamicTool;
    /// use typed_tools::effect::EffectSet;
    ///
    /// let intranet = DynamicTool::new("directory").effects(EffectSet::NETWORK).open_world(false);
    /// assert!(!intranet.spec().is_open_world());
    /// ```
    pub fn open_world(mut self, open_world: bool) -> DynamicTool {
        self.spec.open_world = Some(open_world);
        self
    }

    /// What runs: the arguments (already checked against the schema) in, the
    /// output or an error message for the model out.
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use serde_json::{json, Value};
    /// use typed_tools::{DynamicTool, Toolbox};
    ///
    /// let shout = DynamicTool::new("shout")
    ///     .input_schema(json!({ "type": "object", "properties": { "text": { "type": "string" } } }))
    ///     .handler(|args: Value| async move {
    ///         match args["text"].as_str() {
    ///             Some(text) => Ok(json!(text.to_uppercase())),
    ///             None => Err("give a `text`".to_owned()),
    ///         }
    ///     });
    /// let toolbox = Toolbox::builder().dynamic(shout).build()?;
    /// assert_eq!(toolbox.call("shout", r#"{"text": "hi"}"#).await?.json(), r#""HI""#);
    /// let error = toolbox.call("shout", "{}").await.unwrap_err();
    /// assert_eq!(error.to_string(), "tool `shout` failed: give a `text`");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn handler<F, Fut>(mut self, handler: F) -> DynamicTool
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, String>> + Send + 'static,
    {
        self.handler = Arc::new(move |args| handler(args).boxed());
        self
    }

    /// The spec as built so far.
    ///
    /// ```
    /// use typed_tools::DynamicTool;
    /// use typed_tools::effect::EffectSet;
    ///
    /// let tool = DynamicTool::new("ping").effects(EffectSet::NETWORK);
    /// assert_eq!(tool.spec().name(), "ping");
    /// ```
    pub fn spec(&self) -> &ToolSpec {
        &self.spec
    }
}

impl fmt::Debug for DynamicTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DynamicTool")
            .field("spec", &self.spec)
            .finish_non_exhaustive()
    }
}
