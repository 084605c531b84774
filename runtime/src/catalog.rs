//! Catalogs: a toolbox's tools rendered for a model's prompt or a provider's API.
//!
//! One [`CatalogFormat`] per target. Each is rendered from the tools'
//! [`ToolSpec`]s, once per toolbox (see [`Toolbox::catalog`](crate::Toolbox::catalog)),
//! without changing the specs. Every target gets the schema in the dialect it
//! accepts:
//!
//! | format | input schema |
//! | --- | --- |
//! | [`OpenAiChat`](CatalogFormat::OpenAiChat), [`OpenAiResponses`](CatalogFormat::OpenAiResponses) | the tool's JSON Schema, without `$schema` |
//! | [`OpenAiChatStrict`](CatalogFormat::OpenAiChatStrict), [`OpenAiResponsesStrict`](CatalogFormat::OpenAiResponsesStrict) | OpenAI's strict subset: every property required, `Option`s nullable, `additionalProperties: false` everywhere |
//! | [`Anthropic`](CatalogFormat::Anthropic), [`Mcp`](CatalogFormat::Mcp) | the tool's JSON Schema (2020-12) as it is |
//! | [`Gemini`](CatalogFormat::Gemini) | Gemini's OpenAPI 3.0 subset: definitions inlined, `nullable` |
//! | [`Text`](CatalogFormat::Text) | λ-Tool types: `{id: String, note?: String}` |
//!
//! Rendering never fails and never panics, whatever the schema (`true`,
//! `false`, recursive `$ref`s): what a target cannot express is handled as each
//! format's documentation says.
//!
//! ```
//! use typed_tools::{tool, Toolbox, CatalogFormat};
//!
//! /// Look up a customer account by its id.
//! #[tool(effects = Read)]
//! fn lookup_account(id: String, note: Option<String>) -> String { id }
//!
//! let toolbox = Toolbox::builder().tool(LookupAccount).build().unwrap();
//! let strict = toolbox.catalog(CatalogFormat::OpenAiChatStrict).to_json();
//! let parameters = &strict[0]["function"]["parameters"];
//! assert_eq!(parameters["required"], serde_json::json!(["id", "note"]));
//! assert_eq!(parameters["properties"]["note"]["type"], serde_json::json!(["string", "null"]));
//!
//! let gemini = toolbox.catalog(CatalogFormat::Gemini).to_json();
//! let note = &gemini["functionDeclarations"][0]["parameters"]["properties"]["note"];
//! assert_eq!(note, &serde_json::json!({ "type": "string", "nullable": true }));
//! ```

use std::fmt;
use std::sync::Arc;

use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

use crate::tool::ToolSpec;

mod gemini;
mod mcp;
mod openai;
mod text;

/// A target format for a catalog.
///
/// ```
/// use typed_tools::CatalogFormat;
///
/// assert_eq!(CatalogFormat::ALL.len(), 8);
/// assert!(CatalogFormat::OpenAiChatStrict.is_json());
/// assert!(!CatalogFormat::Text.is_json());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CatalogFormat {
    /// OpenAI Chat Completions `tools`:
    /// `[{"type": "function", "function": {"name", "description", "parameters"}}]`.
    /// `strict` is left out (Chat Completions' default is `false`).
    OpenAiChat,
    /// OpenAI Chat Completions `tools` with `"strict": true` inside `function`
    /// and parameters in OpenAI's strict subset (see [`OpenAiResponsesStrict`](Self::OpenAiResponsesStrict)
    /// for the transform and its fallback).
    OpenAiChatStrict,
    /// OpenAI Responses API function tools:
    /// `[{"type": "function", "name", "description", "parameters", "strict": false}]`.
    /// `strict` is always written: the Responses API's default is `true`,
    /// which a plain schema would fail.
    OpenAiResponses,
    /// OpenAI Responses API function tools with `"strict": true` and parameters
    /// in OpenAI's strict subset: every property listed in `required`, an
    /// `Option` field nullable instead of absent (so a model writes `null`,
    /// which deserializes to `None`), `additionalProperties: false` on every
    /// object, `oneOf` as `anyOf`, `const` as a one-value `enum`, a `$ref` with
    /// sibling keywords inlined; annotations OpenAI does not take (`default`,
    /// `examples`, `format`s it does not list such as `uint8`) dropped, and so
    /// are `minLength`, `maxLength`, `uniqueItems`, `minProperties`,
    /// `maxProperties`, outside the subset (a `char` parameter, `minLength` and
    /// `maxLength` 1, is then held to one character by the deserializer alone).
    ///
    /// A tool whose schema cannot be made strict without changing what it
    /// accepts (a map such as `HashMap<String, T>`, a `serde_json::Value`, a
    /// tuple, `not`/`if`, or past OpenAI's limits: 10 levels of nesting, 5000
    /// properties, 1000 enum values) is written with `"strict": false` and its
    /// plain schema, so the catalog is always accepted.
    OpenAiResponsesStrict,
    /// Anthropic Messages `tools`: `[{"name", "description", "input_schema"}]`,
    /// the input schema in JSON Schema 2020-12 as it is.
    Anthropic,
    /// An MCP `tools/list` result: `{"tools": [{"name", "description",
    /// "inputSchema", "outputSchema", "annotations"}]}` (protocol 2025-11-25).
    ///
    /// `annotations` always carries the four hints, derived from the effects
    /// and the tool's annotations, because MCP's defaults assume the worst (a
    /// tool that writes, destroys and reaches the open world):
    /// - `readOnlyHint`: no `Write` effect;
    /// - `destructiveHint`: a `Write` effect, unless declared
    ///   `destructive = false` (a writer that only adds); `false` for a
    ///   read-only tool ([`ToolSpec::is_destructive`]);
    /// - `idempotentHint`: declared idempotent, or read-only (a tool that does
    ///   not modify its environment has no additional effect when called again);
    /// - `openWorldHint`: a `Network` effect, unless declared
    ///   `open_world = false` ([`ToolSpec::is_open_world`]).
    ///
    /// A tool's `title = "..."` is written twice: as the tool's `title` (what
    /// a client shows) and as `annotations.title`, where the 2025-03-26
    /// revision kept it. The other formats have no place for a title or
    /// hints: OpenAI, Anthropic and Gemini take a name, a description and a
    /// schema.
    ///
    /// `outputSchema` is written only when the output schema is an object at
    /// the root (a struct), because MCP's `structuredContent` must be an
    /// object. A tool returning a `String`, a number, a `Vec`, an enum or an
    /// `Option` has none; its result goes back as text content.
    Mcp,
    /// A Gemini `Tool`: `{"functionDeclarations": [{"name", "description",
    /// "parameters"}]}` with parameters in Gemini's OpenAPI 3.0 subset:
    /// - every `$ref` inlined (no `$defs`); a recursive type is expanded twice
    ///   on a path and then cut: the cut node keeps its description and says it
    ///   has the same shape as the enclosing type;
    /// - `Option<T>` (`["T", "null"]` or `anyOf [..., null]`) as `T` with
    ///   `"nullable": true`; `oneOf` as `anyOf`; `const` as a one-value `enum`;
    /// - only the keys of Gemini's `Schema` object are kept (`type`, `format`,
    ///   `title`, `description`, `nullable`, `enum`, `properties`, `required`,
    ///   `propertyOrdering`, `items`, `anyOf`, the min/max bounds, `pattern`,
    ///   `default`, `example`); `additionalProperties` and `$schema` go;
    /// - `format` only where Gemini knows it (`int32`/`int64` integers,
    ///   `float`/`double` numbers, `date-time`/`enum` strings);
    /// - `propertyOrdering` lists the parameters in declaration order;
    /// - an object without properties (a map, an empty struct) has no `type`,
    ///   since Gemini rejects an `OBJECT` with no properties, and a tool without
    ///   parameters has no `parameters`.
    Gemini,
    /// Compact λ-Tool signatures, one tool a line, for a system prompt:
    ///
    /// ```text
    /// tool lookup_account: {id: String} -{Read}-> {id: String, email: String}  -- Look up an account.
    /// ```
    ///
    /// After `--` comes the first paragraph of the tool's description, whole,
    /// on one line. The tools come in the toolbox's order, fields in
    /// declaration order, so the text is the same on every run. A recursive type is written once and
    /// named where it recurs: `{name: String, children: [Folder]}`. Put it in the system prompt as it is
    /// (see [`Catalog`]).
    Text,
}

impl CatalogFormat {
    /// Every format.
    ///
    /// ```
    /// use typed_tools::CatalogFormat;
    ///
    /// assert!(CatalogFormat::ALL.contains(&CatalogFormat::Gemini));
    /// ```
    pub const ALL: [CatalogFormat; 8] = [
        CatalogFormat::OpenAiChat,
        CatalogFormat::OpenAiChatStrict,
        CatalogFormat::OpenAiResponses,
        CatalogFormat::OpenAiResponsesStrict,
        CatalogFormat::Anthropic,
        CatalogFormat::Mcp,
        CatalogFormat::Gemini,
        CatalogFormat::Text,
    ];

    /// Whether the format renders JSON (every format but [`Text`](Self::Text)).
    ///
    /// ```
    /// use typed_tools::CatalogFormat;
    ///
    /// assert!(CatalogFormat::Mcp.is_json());
    /// ```
    pub const fn is_json(self) -> bool {
        !matches!(self, CatalogFormat::Text)
    }
}

/// A rendered catalog: JSON for the provider formats, text for [`CatalogFormat::Text`].
///
/// `Display` writes pretty JSON, or the text; `Serialize` writes the JSON, or
/// the text as a string. Cloning is cheap.
///
/// The text form goes into a system prompt:
///
/// ```
/// use typed_tools::{tool, Toolbox, CatalogFormat};
///
/// /// Add two numbers.
/// #[tool(effects = Pure)]
/// fn add(a: i64, b: i64) -> i64 { a + b }
///
/// let toolbox = Toolbox::builder().tool(Add).build().unwrap();
/// let system = format!(
///     "You can call these tools; each line is `tool NAME: INPUT -{{EFFECTS}}-> OUTPUT`.\n{}",
///     toolbox.catalog(CatalogFormat::Text),
/// );
/// assert!(system.ends_with("tool add: {a: Int, b: Int} -{}-> Int  -- Add two numbers."));
/// ```
///
/// The JSON forms go into a request body as they are:
///
/// ```
/// use typed_tools::{tool, Toolbox, CatalogFormat};
///
/// /// Add two numbers.
/// #[tool(effects = Pure)]
/// fn add(a: i64, b: i64) -> i64 { a + b }
///
/// let toolbox = Toolbox::builder().tool(Add).build().unwrap();
/// let tools = toolbox.catalog(CatalogFormat::Anthropic);
/// let request = serde_json::json!({ "model": "...", "tools": tools, "messages": [] });
/// assert_eq!(request["tools"][0]["name"], "add");
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Catalog {
    format: CatalogFormat,
    body: Body,
}

#[derive(Clone, Debug, PartialEq)]
enum Body {
    Json(Arc<Value>),
    Text(Arc<str>),
}

impl Catalog {
    /// The format it is in.
    ///
    /// ```
    /// use typed_tools::{catalog, CatalogFormat};
    ///
    /// assert_eq!(catalog::render(CatalogFormat::Mcp, &[]).format(), CatalogFormat::Mcp);
    /// ```
    pub fn format(&self) -> CatalogFormat {
        self.format
    }

    /// The JSON, for the provider formats.
    ///
    /// ```
    /// use typed_tools::{catalog, CatalogFormat};
    ///
    /// let empty = catalog::render(CatalogFormat::Mcp, &[]);
    /// assert_eq!(empty.as_json(), Some(&serde_json::json!({ "tools": [] })));
    /// assert_eq!(catalog::render(CatalogFormat::Text, &[]).as_json(), None);
    /// ```
    pub fn as_json(&self) -> Option<&Value> {
        match &self.body {
            Body::Json(value) => Some(value),
            Body::Text(_) => None,
        }
    }

    /// The JSON, for the provider formats; the text as a JSON string for [`CatalogFormat::Text`].
    ///
    /// ```
    /// use typed_tools::{catalog, CatalogFormat};
    ///
    /// assert_eq!(catalog::render(CatalogFormat::OpenAiChat, &[]).to_json(), serde_json::json!([]));
    /// assert_eq!(catalog::render(CatalogFormat::Text, &[]).to_json(), serde_json::json!(""));
    /// ```
    pub fn to_json(&self) -> Value {
        match &self.body {
            Body::Json(value) => Value::clone(value),
            Body::Text(text) => Value::String(text.to_string()),
        }
    }

    /// The text, for [`CatalogFormat::Text`].
    ///
    /// ```
    /// use typed_tools::{catalog, CatalogFormat};
    ///
    /// assert_eq!(catalog::render(CatalogFormat::Text, &[]).as_text(), Some(""));
    /// assert_eq!(catalog::render(CatalogFormat::Gemini, &[]).as_text(), None);
    /// ```
    pub fn as_text(&self) -> Option<&str> {
        match &self.body {
            Body::Text(text) => Some(text),
            Body::Json(_) => None,
        }
    }
}

impl fmt::Display for Catalog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.body {
            Body::Json(value) => {
                let pretty = serde_json::to_string_pretty(&**value).map_err(|_| fmt::Error)?;
                f.write_str(&pretty)
            }
            Body::Text(text) => f.write_str(text),
        }
    }
}

impl Serialize for Catalog {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.body {
            Body::Json(value) => value.serialize(serializer),
            Body::Text(text) => serializer.serialize_str(text),
        }
    }
}

/// Renders `tools` in `format`, in the order given.
///
/// [`Toolbox::catalog`](crate::Toolbox::catalog) calls this once per format
/// and keeps the result; call it directly for specs outside a toolbox.
///
/// ```
/// use typed_tools::{catalog, tool, CatalogFormat, ToolSpec};
///
/// /// Say hello.
/// #[tool(effects = Pure)]
/// fn greet(name: String) -> String { format!("hello {name}") }
///
/// let spec = ToolSpec::of::<Greet>();
/// let mcp = catalog::render(CatalogFormat::Mcp, &[&spec]);
/// assert_eq!(mcp.as_json().unwrap()["tools"][0]["annotations"]["readOnlyHint"], true);
/// let text = catalog::render(CatalogFormat::Text, &[&spec]);
/// assert_eq!(text.as_text(), Some("tool greet: {name: String} -{}-> String  -- Say hello."));
/// ```
pub fn render(format: CatalogFormat, tools: &[&ToolSpec]) -> Catalog {
    let body = match format {
        CatalogFormat::Text => Body::Text(
            tools
                .iter()
                .map(|spec| text::line(spec))
                .collect::<Vec<_>>()
                .join("\n")
                .into(),
        ),
        // Built as values, not with `json!`, which would serialize each
        // entry into a copy: the first catalog call is on a server's start.
        CatalogFormat::Mcp => Body::Json(Arc::new(object([(
            "tools",
            Value::Array(entries(format, tools)),
        )]))),
        CatalogFormat::Gemini => Body::Json(Arc::new(object([(
            "functionDeclarations",
            Value::Array(entries(format, tools)),
        )]))),
        _ => Body::Json(Arc::new(Value::Array(entries(format, tools)))),
    };
    Catalog { format, body }
}

/// The tools of `first` then of `second`, two catalogs of one format: a
/// toolbox's tools and one more a caller offers beside them (an agent's
/// output tool).
pub(crate) fn join(first: &Catalog, second: &Catalog) -> Catalog {
    let body = match (&first.body, &second.body) {
        (Body::Text(a), Body::Text(b)) => Body::Text(match (a.is_empty(), b.is_empty()) {
            (true, _) => b.clone(),
            (_, true) => a.clone(),
            _ => format!("{a}\n{b}").into(),
        }),
        (Body::Json(a), Body::Json(b)) => {
            // An array of tools (OpenAI, Anthropic), or an object holding
            // one (MCP's `tools`, Gemini's `functionDeclarations`).
            let mut joined = (**a).clone();
            match (&mut joined, &**b) {
                (Value::Array(items), Value::Array(more)) => items.extend(more.iter().cloned()),
                (Value::Object(fields), Value::Object(more)) => {
                    for (key, value) in more {
                        match (fields.get_mut(key), value) {
                            (Some(Value::Array(items)), Value::Array(more)) => {
                                items.extend(more.iter().cloned())
                            }
                            _ => {
                                fields.insert(key.clone(), value.clone());
                            }
                        }
                    }
                }
                _ => {}
            }
            Body::Json(Arc::new(joined))
        }
        _ => first.body.clone(),
    };
    Catalog {
        format: first.format,
        body,
    }
}

/// An object of these members, in this order.
pub(crate) fn object<const N: usize>(members: [(&str, Value); N]) -> Value {
    Value::Object(
        members
            .into_iter()
            .map(|(key, value)| (key.to_owned(), value))
            .collect(),
    )
}

fn entries(format: CatalogFormat, tools: &[&ToolSpec]) -> Vec<Value> {
    tools.iter().map(|spec| render_tool(format, spec)).collect()
}

/// One tool's entry in `format`: an element of the `tools` array (of
/// `functionDeclarations` for Gemini); for [`CatalogFormat::Text`], its line as
/// a JSON string.
///
/// ```
/// use serde_json::json;
/// use typed_tools::{catalog, tool, CatalogFormat, ToolSpec};
///
/// /// Delete a note.
/// #[tool(effects = Write)]
/// fn delete_note(id: u32) {}
///
/// let spec = ToolSpec::of::<DeleteNote>();
/// let entry = catalog::render_tool(CatalogFormat::Mcp, &spec);
/// assert_eq!(entry["annotations"], json!({
///     "readOnlyHint": false,
///     "destructiveHint": true,
///     "idempotentHint": false,
///     "openWorldHint": false,
/// }));
/// let anthropic = catalog::render_tool(CatalogFormat::Anthropic, &spec);
/// assert_eq!(anthropic["input_schema"], *spec.input_schema());
/// ```
pub fn render_tool(format: CatalogFormat, spec: &ToolSpec) -> Value {
    match format {
        CatalogFormat::OpenAiChat => openai::chat(spec, false),
        CatalogFormat::OpenAiChatStrict => openai::chat(spec, true),
        CatalogFormat::OpenAiResponses => openai::responses(spec, false),
        CatalogFormat::OpenAiResponsesStrict => openai::responses(spec, true),
        CatalogFormat::Anthropic => {
            let mut entry = named(spec);
            entry.insert("input_schema".into(), spec.input_schema().clone());
            Value::Object(entry)
        }
        CatalogFormat::Mcp => mcp::tool(spec),
        CatalogFormat::Gemini => gemini::declaration(spec),
        CatalogFormat::Text => Value::String(text::line(spec)),
    }
}

/// `{"name": ..., "description": ...}`, the description left out when empty
/// (every provider makes it optional).
fn named(spec: &ToolSpec) -> Map<String, Value> {
    let mut entry = Map::new();
    entry.insert("name".into(), Value::String(spec.name().to_owned()));
    if !spec.description().is_empty() {
        entry.insert(
            "description".into(),
            Value::String(spec.description().to_owned()),
        );
    }
    entry
}

/// The schema without its `$schema` keyword, for targets whose documented
/// examples never carry one.
/// `schema` (an object schema) in OpenAI's strict subset, as its strict
/// catalogs send parameters; `None` when it cannot be made strict (maps,
/// tuples, a root that is not an object). For structured output.
#[cfg_attr(
    not(any(feature = "openai", feature = "anthropic")),
    allow(dead_code, reason = "used by the provider clients only")
)]
pub(crate) fn strict_schema(schema: &Value) -> Option<Value> {
    openai::strict_schema(&without_dialect(schema))
}

fn without_dialect(schema: &Value) -> Value {
    let mut schema = schema.clone();
    if let Value::Object(keywords) = &mut schema {
        keywords.remove("$schema");
    }
    schema
}
