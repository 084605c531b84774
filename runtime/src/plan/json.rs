//! The JSON form of a plan: what a model writes when a provider's
//! structured-output mode holds it to a JSON Schema ([`schema`]), or when it
//! calls the [`submit_tool`] natively. It reads into the same IR as the text
//! form ([`from_value`], [`from_str`]), which goes to the same checker.
//!
//! The IR's own serde form ([`Plan`]'s `Serialize`) is storage: a record's
//! fields are a JSON object keyed by name, which no strict schema can
//! describe (OpenAI's strict mode wants `additionalProperties: false` on
//! every object). This form is shaped for constrained decoding instead: every
//! object has a fixed set of keys, all of them required; a record's fields
//! are a list of `{name, value}`; a parameter's annotation is λ-Tool text or
//! `null`. The answer is an object `{"plan": EXPR}` (a schema's root must be
//! an object); an expression alone is read too.
//!
//! | `kind` | keys | text form |
//! |---|---|---|
//! | `unit` | | `()` |
//! | `bool`, `int`, `float`, `string` | `value` | `true`, `42`, `1.5`, `"text"` |
//! | `var` | `name` | `account` |
//! | `get` | `of`, `field` | `account.email` |
//! | `record` | `fields`: `[{name, value}]` | `{id = "c1"}` |
//! | `list` | `items` | `[1, 2]` |
//! | `match` | `on` (a step), `ok`, `err`: `{bind, body}` | `match STEP { Ok(x) => ..., Err(e) => ... }` |
//! | `let` | `name`, `value`, `body` | `let x = v in body` |
//! | `if` | `cond`, `then`, `else` | `if c then a else b` |
//! | `not` | `operand` | `not c` |
//! | `binary` | `op` (`==`, `++`, `and`, ...), `left`, `right` | `a + b` |
//! | `map`, `filter` | `param`, `body`, `list` | `map (fn x => body) list` |
//! | `fold` | `acc`, `item`, `body`, `init`, `list` | `fold (fn acc, x => body) init list` |
//! | `call` | `tool`, `arg` | `call tool NAME ARG` |
//!
//! A step (a `match`'s `on`) is `{"kind": "exec", "tool", "arg"}` or
//! `{"kind": "traverse", "param", "body" (a step), "list"}`; a parameter is
//! `{"name", "type"}`, `type` an annotation such as `"{id: Int}"`, or `null`.
//!
//! ```
//! use serde_json::json;
//! use typed_tools::plan::{json as plan_json, Plan};
//!
//! let answer = json!({"plan": {
//!     "kind": "match",
//!     "on": {"kind": "exec", "tool": "lookup_account", "arg": {"kind": "record", "fields": [
//!         {"name": "id", "value": {"kind": "string", "value": "cust_12345"}}
//!     ]}},
//!     "ok": {"bind": "account", "body": {"kind": "get", "of": {"kind": "var", "name": "account"}, "field": "email"}},
//!     "err": {"bind": "e", "body": {"kind": "string", "value": "account lookup failed"}}
//! }});
//! let plan = plan_json::from_value(&answer).unwrap();
//! assert_eq!(plan, Plan::parse(r#"match exec tool lookup_account {id = "cust_12345"} {
//!   Ok(account) => account.email,
//!   Err(e) => "account lookup failed"
//! }"#).unwrap());
//! assert_eq!(plan_json::to_value(&plan), answer);
//!
//! let error = plan_json::from_value(&json!({"plan": {"kind": "string", "value": null}})).unwrap_err();
//! assert_eq!(error.to_string(), "$.plan.value: expected a string, found null (λ-Tool has no null)");
//! ```
//!
//! # Providers
//!
//! The schema is recursive (an expression holds expressions), through
//! `$defs` and `$ref`. What each provider gets ([`schema_for`]):
//!
//! - OpenAI strict mode (`response_format` `json_schema` with `strict`, or
//!   the strict [`submit_tool`]): the schema as it is. It follows the strict
//!   rules (every key required, `additionalProperties: false`, a `$ref`
//!   alone, no unsupported keyword, within the 10 levels of nesting, the
//!   root an object), and strict mode supports recursion through `$defs`,
//!   so every plan can be written under it, at any depth.
//! - Anthropic: the schema as a tool's `input_schema` (JSON Schema 2020-12).
//!   Anthropic's strict tool use and JSON outputs do not support recursive
//!   schemas, so there the schema guides the model and the reader checks.
//! - Gemini's `Schema` (an OpenAPI 3.0 subset with no `$ref`): inlined,
//!   the recursive schema grows some twentyfold a level (263 KB at the two
//!   levels the catalog's Gemini rendering expands), so Gemini gets the
//!   outermost expression held to the schema (its kind and keys, a `match`'s
//!   step with its keys) and the expressions inside it described, not
//!   constrained (12 KB, rendered by the catalog's Gemini rewriter). Gemini's
//!   newer `responseJsonSchema` takes `$ref`s, but a cycle only through
//!   properties that are not required, which an expression's are.
//!
//! Whatever a provider constrains, the reader checks every key and the
//! checker every type: a model held to no schema at all is read the same way.

use std::fmt;

use serde_json::{json, Map, Value as Json};

use crate::catalog::{self, CatalogFormat};
use crate::cut::{cut, Echo, LINE};
use crate::json::Unread;
use crate::tool::{DynamicTool, ToolSpec};

use super::ir::{BinaryOp, Branch, Expr, Lambda, Lambda2, Param, Plan, Step, Type, MAX_DEPTH};
use super::parse::{parse_type, ParseOptions};

/// The name of the tool a model calls to hand in a plan in JSON form.
pub const SUBMIT_TOOL: &str = "submit_plan";

/// The kinds of expression, as `"kind"` names them.
pub const EXPR_KINDS: [&str; 18] = [
    "unit", "bool", "int", "float", "string", "var", "get", "record", "list", "match", "let", "if",
    "not", "binary", "map", "filter", "fold", "call",
];

/// Why JSON did not read as a plan: where (a JSON path from `$`, the answer)
/// and what is wrong, written for a model to fix it.
///
/// ```
/// use serde_json::json;
/// use typed_tools::plan::json::from_value;
///
/// let error = from_value(&json!({"plan": {"kind": "while", "cond": {"kind": "bool", "value": true}}})).unwrap_err();
/// assert_eq!(error.path, "$.plan.kind");
/// assert!(error.message.starts_with("unknown kind `while`; λ-Tool has no loops"), "{}", error.message);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct JsonError {
    /// Where: `$.plan.on.arg.fields[0].value`.
    pub path: String,
    /// What is wrong, and what to write instead.
    pub message: String,
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

impl std::error::Error for JsonError {}

/// Reads a plan from JSON text in the JSON form, with the default
/// [`ParseOptions`] (at most 1 MiB).
///
/// ```
/// use typed_tools::plan::json::from_str;
///
/// let plan = from_str(r#"{"plan": {"kind": "int", "value": 42}}"#).unwrap();
/// assert_eq!(plan.to_string(), "42");
/// let error = from_str(r#"{"plan": {"kind": "int", "value": 42}"#).unwrap_err();
/// assert_eq!(error.to_string(), "$: not JSON: EOF while parsing an object at line 1 column 37");
/// ```
pub fn from_str(text: &str) -> Result<Plan, JsonError> {
    from_str_with(text, &ParseOptions::default())
}

/// [`from_str`] within `options`' limits: text longer than
/// [`ParseOptions::max_bytes`] is refused before it is read.
///
/// ```
/// use typed_tools::plan::{json::from_str_with, ParseOptions};
///
/// let error = from_str_with(r#"{"kind": "unit"}"#, &ParseOptions::default().max_bytes(8)).unwrap_err();
/// assert_eq!(error.message, "the plan is 16 bytes long, more than the 8 allowed; write a shorter plan");
/// ```
pub fn from_str_with(text: &str, options: &ParseOptions) -> Result<Plan, JsonError> {
    from_str_at(text, options, 1, 1)
}

/// [`from_str_with`] for text that starts at `line`, `column` (from 1, the
/// column in bytes) of a longer answer: a syntax error gives its line and
/// column in the answer.
pub(crate) fn from_str_at(
    text: &str,
    options: &ParseOptions,
    line: usize,
    column: usize,
) -> Result<Plan, JsonError> {
    if text.len() > options.limit() {
        return Err(error(
            "$".into(),
            format!(
                "the plan is {} bytes long, more than the {} allowed; write a shorter plan",
                text.len(),
                options.limit()
            ),
        ));
    }
    // Parsed once, and only within the limit; a key given twice is refused,
    // so that the plan shown (a reader that keeps the first) and the plan
    // run cannot differ.
    let json = match crate::json::from_str_unique(text) {
        Ok(json) => json,
        Err(Unread::Syntax(e)) => {
            return Err(error(
                "$".into(),
                format!("not JSON: {}", moved(&e, line, column)),
            ))
        }
        Err(Unread::Duplicate(path)) => {
            return Err(error(
                path.to_string(),
                "this key is given twice in its object; give each key once".into(),
            ))
        }
    };
    from_value(&json)
}

/// The largest byte index of `text` at most `limit` that is a character
/// boundary.
pub(crate) fn floor_boundary(text: &str, limit: usize) -> usize {
    if limit >= text.len() {
        return text.len();
    }
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    end
}

/// Whether JSON text is an object with a `plan` key, as an answer in the
/// JSON form is: read within `limit` bytes (the most a plan may be) and
/// building nothing. An object that names a plan and goes on past `limit`
/// is one (too long, as its reader will say); text that is not a JSON
/// object within `limit` is not.
pub(crate) fn names_a_plan(text: &str, limit: usize) -> bool {
    use serde::de::{Deserializer as _, IgnoredAny, MapAccess, Visitor};

    /// Reads an object's keys, noting a `plan` among them.
    struct Keys<'f>(&'f mut bool);

    impl<'de> Visitor<'de> for Keys<'_> {
        type Value = ();

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an object")
        }

        fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<(), M::Error> {
            while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                *self.0 |= key == "plan";
                map.next_value::<IgnoredAny>()?;
            }
            Ok(())
        }
    }

    let window = &text[..floor_boundary(text, limit)];
    let mut plan = false;
    let mut reader = serde_json::Deserializer::from_str(window);
    match reader.deserialize_map(Keys(&mut plan)) {
        Ok(()) => plan && reader.end().is_ok(),
        Err(error) => plan && error.is_eof() && window.len() < text.len(),
    }
}

/// serde_json's message for `error`, its position moved to a text that
/// starts at `line`, `column` (serde_json counts both from 1, a column of 0
/// being before a line's first byte).
fn moved(error: &serde_json::Error, line: usize, column: usize) -> String {
    let message = error.to_string();
    if error.line() == 0 {
        return message;
    }
    let at = format!(" at line {} column {}", error.line(), error.column());
    let what = message.strip_suffix(&at).unwrap_or(&message);
    let (line, column) = match error.line() {
        1 => (line, column - 1 + error.column()),
        n => (line + n - 1, error.column()),
    };
    format!("{what} at line {line} column {column}")
}

/// Reads a plan from its JSON form: `{"plan": EXPR}`, or an expression
/// alone. Every key is checked: an unknown one is an error, not ignored.
/// Expressions nest at most [`MAX_DEPTH`] levels.
///
/// ```
/// use serde_json::json;
/// use typed_tools::plan::json::from_value;
///
/// let plan = from_value(&json!({"kind": "binary", "op": "+",
///     "left": {"kind": "int", "value": 1}, "right": {"kind": "int", "value": 2}})).unwrap();
/// assert_eq!(plan.to_string(), "1 + 2");
/// let error = from_value(&json!({"plan": {"kind": "int", "value": "12"}})).unwrap_err();
/// assert_eq!(error.to_string(), r#"$.plan.value: expected an integer, found the string "12""#);
/// ```
pub fn from_value(json: &Json) -> Result<Plan, JsonError> {
    let mut reader = Reader { path: Vec::new() };
    let body = match json {
        Json::Object(answer) if answer.contains_key("plan") && !answer.contains_key("kind") => {
            reader.keys(answer, "the answer", &["plan"])?;
            reader.at(Seg::Key("plan"), |r| r.expr(&answer["plan"], 0))?
        }
        _ => reader.expr(json, 0)?,
    };
    Ok(Plan::new(body))
}

/// A plan in its JSON form, `{"plan": EXPR}`: what [`from_value`] reads back
/// to the same plan.
///
/// ```
/// use typed_tools::plan::{json, Plan};
///
/// let plan = Plan::parse("map (fn x: Int => x * 2) [1, 2]").unwrap();
/// let written = json::to_value(&plan);
/// assert_eq!(written["plan"]["param"], serde_json::json!({"name": "x", "type": "Int"}));
/// assert_eq!(json::from_value(&written).unwrap(), plan);
/// ```
pub fn to_value(plan: &Plan) -> Json {
    json!({ "plan": write_expr(&plan.body) })
}

/// The JSON Schema (2020-12) of an answer in the JSON form: an object
/// `{"plan": EXPR}`, the expression recursive through `$defs`. It is within
/// OpenAI's strict subset as it is (see the [module docs](self)).
///
/// ```
/// use typed_tools::plan::json::schema;
///
/// let schema = schema();
/// assert_eq!(schema["required"], serde_json::json!(["plan"]));
/// assert_eq!(schema["properties"]["plan"]["$ref"], "#/$defs/expr");
/// assert_eq!(schema["$defs"]["expr"]["anyOf"].as_array().unwrap().len(), 18);
/// ```
pub fn schema() -> Json {
    build_schema(false)
}

/// The schema, recursive through `$defs`; with `cut`, the expressions and
/// steps inside the outermost one are described but not constrained (an
/// untyped schema with a description), for a dialect with no `$ref`.
fn build_schema(cut: bool) -> Json {
    let (inner_expr, inner_step) = if cut {
        ("#/$defs/inner_expr", "#/$defs/inner_step")
    } else {
        ("#/$defs/expr", "#/$defs/step")
    };
    let expr = || json!({ "$ref": inner_expr });
    let step = || json!({ "$ref": inner_step });
    let param = || json!({ "$ref": "#/$defs/param" });
    let string = |description: &str| json!({ "type": "string", "description": description });
    let branch = |which: &str| json!({ "$ref": format!("#/$defs/{which}") });
    let ops: Vec<&str> = BinaryOp::ALL.iter().map(|op| op.symbol()).collect();
    let exprs = vec![
        variant("unit", "`()`, the unit value (λ-Tool has no null).", vec![]),
        variant("bool", "`true` or `false`.", vec![("value", json!({ "type": "boolean" }))]),
        variant("int", "An integer.", vec![("value", json!({ "type": "integer" }))]),
        variant("float", "A finite number.", vec![("value", json!({ "type": "number" }))]),
        variant("string", "A string literal.", vec![("value", json!({ "type": "string" }))]),
        variant(
            "var",
            "A variable bound by `let`, a match branch or a callback.",
            vec![("name", string("The variable."))],
        ),
        variant(
            "get",
            "`of.field`: a field of a record.",
            vec![("of", expr()), ("field", string("The field."))],
        ),
        variant(
            "record",
            "`{name = value, ...}`.",
            vec![("fields", json!({ "type": "array", "items": { "$ref": "#/$defs/field" } }))],
        ),
        variant(
            "list",
            "`[a, b, ...]`, elements of one type.",
            vec![("items", json!({ "type": "array", "items": expr() }))],
        ),
        variant(
            "match",
            "`match STEP { Ok(bind) => body, Err(bind) => body }`: the only use of a tool call's Result; both branches.",
            vec![
                ("on", json!({ "$ref": "#/$defs/step" })),
                ("ok", branch("ok")),
                ("err", branch("err")),
            ],
        ),
        variant(
            "let",
            "`let name = value in body`.",
            vec![("name", string("The variable.")), ("value", expr()), ("body", expr())],
        ),
        variant(
            "if",
            "`if cond then then else else`.",
            vec![("cond", expr()), ("then", expr()), ("else", expr())],
        ),
        variant("not", "`not operand`.", vec![("operand", expr())]),
        variant(
            "binary",
            "`left op right`.",
            vec![
                ("op", json!({ "type": "string", "enum": ops })),
                ("left", expr()),
                ("right", expr()),
            ],
        ),
        variant(
            "map",
            "`map (fn param => body) list`; the body is pure (no `exec`).",
            vec![("param", param()), ("body", expr()), ("list", expr())],
        ),
        variant(
            "filter",
            "`filter (fn param => body) list`; the body is a pure Bool.",
            vec![("param", param()), ("body", expr()), ("list", expr())],
        ),
        variant(
            "fold",
            "`fold (fn acc, item => body) init list`, from the left; the body is pure.",
            vec![
                ("acc", param()),
                ("item", param()),
                ("body", expr()),
                ("init", expr()),
                ("list", expr()),
            ],
        ),
        variant(
            "call",
            "`call tool NAME ARG`: a pure tool that cannot fail, as a function.",
            vec![("tool", string("The tool's name.")), ("arg", expr())],
        ),
    ];
    let steps = vec![
        variant(
            "exec",
            "`exec tool NAME ARG`: calls the tool once; its Result goes to the match.",
            vec![("tool", string("The tool's name.")), ("arg", expr())],
        ),
        variant(
            "traverse",
            "`traverse (fn param => STEP) list`: the step per element, stopping at the first Err.",
            vec![("param", param()), ("body", step()), ("list", expr())],
        ),
    ];
    let bound = |description: &str| {
        object(
            description,
            vec![
                ("bind", string("The variable the value is bound to.")),
                ("body", expr()),
            ],
        )
    };
    let mut definitions = json!({
        "expr": { "description": "A λ-Tool expression.", "anyOf": exprs },
        "step": { "description": "What a `match` matches on: a tool call or a traverse.", "anyOf": steps },
        "ok": bound("`Ok(bind) => body`: runs with the tool's output bound."),
        "err": bound("`Err(bind) => body`: runs with the error {tool, kind, message} bound."),
        "field": object("A record's field.", vec![("name", string("The field's name.")), ("value", expr())]),
        "param": object(
            "A callback's parameter.",
            vec![
                ("name", string("The parameter's name.")),
                ("type", json!({
                    "type": ["string", "null"],
                    "description": "A λ-Tool type annotation such as `{id: Int}`, or null for none.",
                })),
            ],
        ),
    });
    if cut {
        definitions["inner_expr"] = json!({
            "description": "A λ-Tool expression, in the same JSON form: an object with a `kind` (`var`, `get`, `string`, `int`, `record`, `match`, `let`, `if`, `binary`, `map`, ...) and that kind's keys.",
        });
        definitions["inner_step"] = json!({
            "description": "A step in the same JSON form: {\"kind\": \"exec\", \"tool\", \"arg\"} or {\"kind\": \"traverse\", \"param\", \"body\", \"list\"}.",
        });
    }
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": { "plan": { "$ref": "#/$defs/expr" } },
        "required": ["plan"],
        "additionalProperties": false,
        "$defs": definitions,
    })
}

/// The tool a model calls to hand in a plan in JSON form, named
/// [`SUBMIT_TOOL`]: its input schema is [`schema`]. Offer it in a model's
/// native tool format (`catalog::render`) and read its arguments with
/// [`from_str`]; it is pure and is never run.
///
/// ```
/// use typed_tools::{catalog, CatalogFormat};
/// use typed_tools::plan::json::submit_tool;
///
/// let tools = catalog::render(CatalogFormat::OpenAiChatStrict, &[&submit_tool()]).to_json();
/// assert_eq!(tools[0]["function"]["name"], "submit_plan");
/// assert_eq!(tools[0]["function"]["strict"], true);
/// ```
pub fn submit_tool() -> ToolSpec {
    submit_tool_with(schema())
}

/// The [`submit_tool`] to offer a model that reads tools in `format`: for
/// Gemini, whose schemas have no `$ref`, with the schema whose outermost
/// expression is held and whose inner ones are described (inlined, the
/// recursive schema grows some twentyfold a level: 263 KB at the two levels
/// the catalog's Gemini rendering expands); for the others, [`submit_tool`].
///
/// ```
/// use typed_tools::{catalog, CatalogFormat};
/// use typed_tools::plan::json::submit_tool_for;
///
/// let gemini = catalog::render(CatalogFormat::Gemini, &[&submit_tool_for(CatalogFormat::Gemini)]);
/// assert!(gemini.to_json().to_string().len() < 16_000);
/// ```
pub fn submit_tool_for(format: CatalogFormat) -> ToolSpec {
    match format {
        CatalogFormat::Gemini => submit_tool_with(build_schema(true)),
        _ => submit_tool(),
    }
}

fn submit_tool_with(schema: Json) -> ToolSpec {
    DynamicTool::new(SUBMIT_TOOL)
        .description(
            "Hand in a plan: one λ-Tool expression in JSON form. It is type-checked before anything runs; \
             if it does not check, the errors come back and you send the whole plan again.",
        )
        .input_schema(schema)
        .spec()
        .clone()
}

/// [`schema`] in a provider's dialect, as its structured-output mode takes
/// it: the parameters of [`submit_tool_for`] `format` as the catalog renders
/// them (OpenAI strict: the schema itself; Gemini: its OpenAPI subset, the
/// outermost expression held and the ones inside it described; Anthropic
/// and MCP: the schema). `None` for [`CatalogFormat::Text`].
///
/// ```
/// use typed_tools::CatalogFormat;
/// use typed_tools::plan::json::{schema, schema_for};
///
/// let mut expected = schema();
/// expected.as_object_mut().unwrap().remove("$schema");
/// assert_eq!(schema_for(CatalogFormat::OpenAiChatStrict), Some(expected));
/// let gemini = schema_for(CatalogFormat::Gemini).unwrap();
/// assert!(gemini.get("$defs").is_none());
/// assert_eq!(schema_for(CatalogFormat::Text), None);
/// ```
pub fn schema_for(format: CatalogFormat) -> Option<Json> {
    let spec = submit_tool_for(format);
    let entry = catalog::render_tool(format, &spec);
    let parameters = match format {
        CatalogFormat::OpenAiChat | CatalogFormat::OpenAiChatStrict => {
            entry["function"].get("parameters")
        }
        CatalogFormat::OpenAiResponses
        | CatalogFormat::OpenAiResponsesStrict
        | CatalogFormat::Gemini => entry.get("parameters"),
        CatalogFormat::Anthropic => entry.get("input_schema"),
        CatalogFormat::Mcp => entry.get("inputSchema"),
        _ => None,
    };
    parameters.cloned()
}

/// One variant of a tagged union: an object with `kind` fixed, every key required.
fn variant(kind: &str, description: &str, keys: Vec<(&str, Json)>) -> Json {
    let mut all = vec![("kind", json!({ "type": "string", "enum": [kind] }))];
    all.extend(keys);
    object(description, all)
}

/// A closed object of `keys`, every one required.
fn object(description: &str, keys: Vec<(&str, Json)>) -> Json {
    let required: Vec<&str> = keys.iter().map(|(name, _)| *name).collect();
    let properties: Map<String, Json> = keys
        .into_iter()
        .map(|(name, schema)| (name.to_owned(), schema))
        .collect();
    json!({
        "type": "object",
        "description": description,
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

fn error(path: String, message: String) -> JsonError {
    JsonError { path, message }
}

/// A step of a JSON path.
#[derive(Clone, Copy)]
enum Seg<'j> {
    Key(&'j str),
    Index(usize),
}

struct Reader<'j> {
    path: Vec<Seg<'j>>,
}

/// What a JSON value is, for a message: `the string "12"`, `null`, `an object`.
fn found(json: &Json) -> String {
    match json {
        Json::Null => "null (λ-Tool has no null)".into(),
        Json::Bool(b) => format!("the boolean {b}"),
        Json::Number(n) => format!("the number {n}"),
        Json::String(s) if s.chars().count() > 40 => {
            let cut: String = s.chars().take(39).collect();
            format!("the string \"{cut}…\"")
        }
        Json::String(s) => format!("the string {}", Json::String(s.clone())),
        Json::Array(_) => "a list".into(),
        Json::Object(_) => "an object".into(),
    }
}

/// An integer as JSON Schema counts one: a number with no fraction (`49.0`
/// too), within `i64`.
fn integer(json: &Json) -> Option<i64> {
    match json.as_i64() {
        Some(i) => Some(i),
        None => json
            .as_f64()
            .filter(|f| f.fract() == 0.0 && *f >= -(2f64.powi(63)) && *f < 2f64.powi(63))
            .map(|f| f as i64),
    }
}

/// What a scalar written where an expression is due should have been.
fn literal_for(json: &Json) -> Option<String> {
    let node = match json {
        Json::Bool(_) => json!({ "kind": "bool", "value": json }),
        Json::Number(n) if n.is_i64() => json!({ "kind": "int", "value": json }),
        Json::Number(_) => json!({ "kind": "float", "value": json }),
        Json::String(s) if s.chars().count() <= 40 => json!({ "kind": "string", "value": json }),
        Json::String(_) => json!({ "kind": "string", "value": "..." }),
        Json::Null => json!({ "kind": "unit" }),
        _ => return None,
    };
    Some(node.to_string())
}

/// Why a kind that is no kind of expression is not one, for the ones models write.
fn unknown_kind_hint(kind: &str) -> &'static str {
    match kind {
        "while" | "for" | "loop" | "repeat" | "retry" | "do" | "until" | "for_each"
        | "foreach" => {
            "λ-Tool has no loops, no recursion and no retries: each `exec` runs at most once; iterate over a list with `map`, `filter`, `fold` (pure) or `traverse` (calls tools)"
        }
        "try" | "catch" | "try_catch" | "throw" | "raise" => {
            "λ-Tool has no exceptions: a tool's failure is the `err` branch of its `match`"
        }
        "null" | "none" | "nil" | "undefined" => {
            "λ-Tool has no null: write {\"kind\": \"unit\"} for no value"
        }
        "lambda" | "fn" | "function" | "def" => {
            "functions are not values: a callback is the `param` and `body` of `map`, `filter`, `fold` or `traverse`"
        }
        "traverse" => "`traverse` is a step: put it in the `on` of a `match`",
        "tool" | "tool_call" | "invoke" => {
            "a tool is called by a step {\"kind\": \"exec\", \"tool\", \"arg\"} in the `on` of a `match`"
        }
        _ => "",
    }
}

impl<'j> Reader<'j> {
    fn path(&self) -> String {
        let mut path = String::from("$");
        for seg in &self.path {
            match seg {
                Seg::Key(key) => {
                    path.push('.');
                    path.push_str(&Echo(key).to_string());
                }
                Seg::Index(i) => path.push_str(&format!("[{i}]")),
            }
        }
        path
    }

    fn error(&self, message: String) -> JsonError {
        error(self.path(), message)
    }

    /// Runs `read` one step down the path.
    fn at<T>(
        &mut self,
        seg: Seg<'j>,
        read: impl FnOnce(&mut Self) -> Result<T, JsonError>,
    ) -> Result<T, JsonError> {
        self.path.push(seg);
        let out = read(self)?;
        self.path.pop();
        Ok(out)
    }

    /// Refuses a key outside `allowed`.
    fn keys(
        &mut self,
        object: &'j Map<String, Json>,
        what: &str,
        allowed: &[&str],
    ) -> Result<(), JsonError> {
        if let Some(key) = object.keys().find(|k| !allowed.contains(&k.as_str())) {
            let listed = allowed
                .iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ");
            let message = format!(
                "unknown key `{}` in {what}; its keys are: {listed}",
                Echo(key)
            );
            return self.at(Seg::Key(key), |r| Err(r.error(message)));
        }
        Ok(())
    }

    /// The value of `key`, read by `read` at that key.
    fn get<T>(
        &mut self,
        object: &'j Map<String, Json>,
        key: &'static str,
        what: &str,
        read: impl FnOnce(&mut Self, &'j Json) -> Result<T, JsonError>,
    ) -> Result<T, JsonError> {
        match object.get(key) {
            Some(value) => self.at(Seg::Key(key), |r| read(r, value)),
            None => Err(self.error(format!("missing `{key}` in {what}"))),
        }
    }

    fn object(&self, json: &'j Json, what: &str) -> Result<&'j Map<String, Json>, JsonError> {
        match json {
            Json::Object(object) => Ok(object),
            other => Err(self.error(format!("expected {what}, found {}", found(other)))),
        }
    }

    fn string(&self, json: &'j Json) -> Result<&'j str, JsonError> {
        match json {
            Json::String(s) => Ok(s),
            other => Err(self.error(format!("expected a string, found {}", found(other)))),
        }
    }

    /// A name: a non-empty string.
    fn name(&self, json: &'j Json) -> Result<String, JsonError> {
        match self.string(json)? {
            "" => Err(self.error("expected a name, found an empty string".into())),
            name => Ok(name.to_owned()),
        }
    }

    fn array(&self, json: &'j Json) -> Result<&'j [Json], JsonError> {
        match json {
            Json::Array(items) => Ok(items),
            other => Err(self.error(format!("expected a list, found {}", found(other)))),
        }
    }

    fn expr(&mut self, json: &'j Json, depth: usize) -> Result<Expr, JsonError> {
        if depth >= MAX_DEPTH {
            return Err(self.error(format!(
                "the plan nests deeper than {MAX_DEPTH} levels; name parts with `let`"
            )));
        }
        let object = match json {
            Json::Object(object) => object,
            other => {
                let mut message = format!(
                    "expected an expression (an object with a `kind`), found {}",
                    found(other)
                );
                if let Some(literal) = literal_for(other) {
                    message.push_str(&format!("; write {literal}"));
                }
                return Err(self.error(message));
            }
        };
        let what = "an expression";
        let kind = self.get(object, "kind", what, |r, kind| r.string(kind))?;
        let d = depth + 1;
        let expr = match kind {
            "unit" => {
                self.keys(object, "a `unit`", &["kind"])?;
                Expr::Unit
            }
            "bool" => {
                self.keys(object, "a `bool`", &["kind", "value"])?;
                let value = self.get(object, "value", "a `bool`", |r, v| match v {
                    Json::Bool(b) => Ok(*b),
                    other => Err(r.error(format!("expected true or false, found {}", found(other)))),
                })?;
                Expr::Bool { value }
            }
            "int" => {
                self.keys(object, "an `int`", &["kind", "value"])?;
                let value = self.get(object, "value", "an `int`", |r, v| match integer(v) {
                    Some(i) => Ok(i),
                    None => Err(r.error(format!("expected an integer, found {}", found(v)))),
                })?;
                Expr::Int { value }
            }
            "float" => {
                self.keys(object, "a `float`", &["kind", "value"])?;
                let value = self.get(object, "value", "a `float`", |r, v| match v.as_f64() {
                    Some(f) if f.is_finite() => Ok(f),
                    _ => Err(r.error(format!("expected a number, found {}", found(v)))),
                })?;
                Expr::Float { value }
            }
            "string" => {
                self.keys(object, "a `string`", &["kind", "value"])?;
                let value = self.get(object, "value", "a `string`", |r, v| r.string(v))?;
                Expr::String {
                    value: value.to_owned(),
                }
            }
            "var" => {
                self.keys(object, "a `var`", &["kind", "name"])?;
                let name = self.get(object, "name", "a `var`", |r, v| r.name(v))?;
                Expr::Var { name }
            }
            "get" => {
                self.keys(object, "a `get`", &["kind", "of", "field"])?;
                let of = self.get(object, "of", "a `get`", |r, v| r.expr(v, d))?;
                let field = self.get(object, "field", "a `get`", |r, v| r.name(v))?;
                of.get(field)
            }
            "record" => {
                self.keys(object, "a `record`", &["kind", "fields"])?;
                let fields = self.get(object, "fields", "a `record`", |r, v| r.fields(v, d))?;
                Expr::Record { fields }
            }
            "list" => {
                self.keys(object, "a `list`", &["kind", "items"])?;
                let items = self.get(object, "items", "a `list`", |r, v| {
                    let items = r.array(v)?;
                    let mut out = Vec::with_capacity(items.len());
                    for (i, item) in items.iter().enumerate() {
                        out.push(r.at(Seg::Index(i), |r| r.expr(item, d))?);
                    }
                    Ok(out)
                })?;
                Expr::List { items }
            }
            "match" => {
                self.keys(object, "a `match`", &["kind", "on", "ok", "err"])?;
                let on = self.get(object, "on", "a `match`", |r, v| r.step(v, d))?;
                let ok = match object.get("ok") {
                    Some(v) => self.at(Seg::Key("ok"), |r| r.branch(v, "`ok` branch", d))?,
                    None => {
                        return Err(self.error(
                            "missing `ok` in a `match`: a tool's Result is matched on both branches, `ok` and `err`".into(),
                        ))
                    }
                };
                let err = match object.get("err") {
                    Some(v) => self.at(Seg::Key("err"), |r| r.branch(v, "`err` branch", d))?,
                    None => {
                        return Err(self.error(
                            "missing `err` in a `match`: a tool's Result is matched on both branches; add \"err\": {\"bind\": \"e\", \"body\": ...}, where `e` is the error {tool, kind, message}".into(),
                        ))
                    }
                };
                Expr::Match {
                    on: Box::new(on),
                    ok,
                    err,
                }
            }
            "let" => {
                self.keys(object, "a `let`", &["kind", "name", "value", "body"])?;
                let name = self.get(object, "name", "a `let`", |r, v| r.name(v))?;
                let value = self.get(object, "value", "a `let`", |r, v| r.expr(v, d))?;
                let body = self.get(object, "body", "a `let`", |r, v| r.expr(v, d))?;
                Expr::Let {
                    name,
                    value: Box::new(value),
                    body: Box::new(body),
                }
            }
            "if" => {
                self.keys(object, "an `if`", &["kind", "cond", "then", "else"])?;
                let cond = self.get(object, "cond", "an `if`", |r, v| r.expr(v, d))?;
                let then = self.get(object, "then", "an `if`", |r, v| r.expr(v, d))?;
                let otherwise = self.get(object, "else", "an `if`", |r, v| r.expr(v, d))?;
                Expr::If {
                    cond: Box::new(cond),
                    then: Box::new(then),
                    otherwise: Box::new(otherwise),
                }
            }
            "not" => {
                self.keys(object, "a `not`", &["kind", "operand"])?;
                let operand = self.get(object, "operand", "a `not`", |r, v| r.expr(v, d))?;
                Expr::Not {
                    operand: Box::new(operand),
                }
            }
            "binary" => {
                self.keys(object, "a `binary`", &["kind", "op", "left", "right"])?;
                let op = self.get(object, "op", "a `binary`", |r, v| {
                    let op = r.string(v)?;
                    BinaryOp::ALL
                        .into_iter()
                        .find(|o| o.symbol() == op)
                        .ok_or_else(|| {
                            let ops: Vec<String> =
                                BinaryOp::ALL.iter().map(|o| format!("`{}`", o.symbol())).collect();
                            r.error(format!(
                                "unknown operator `{}`; the operators are: {}",
                                Echo(op),
                                ops.join(", ")
                            ))
                        })
                })?;
                let left = self.get(object, "left", "a `binary`", |r, v| r.expr(v, d))?;
                let right = self.get(object, "right", "a `binary`", |r, v| r.expr(v, d))?;
                Expr::binary(op, left, right)
            }
            "map" | "filter" => {
                let what = if kind == "map" { "a `map`" } else { "a `filter`" };
                self.keys(object, what, &["kind", "param", "body", "list"])?;
                let param = self.get(object, "param", what, |r, v| r.param(v))?;
                let body = self.get(object, "body", what, |r, v| r.expr(v, d))?;
                let list = self.get(object, "list", what, |r, v| r.expr(v, d))?;
                let func = Lambda {
                    param,
                    body: Box::new(body),
                };
                let list = Box::new(list);
                if kind == "map" {
                    Expr::Map { func, list }
                } else {
                    Expr::Filter { func, list }
                }
            }
            "fold" => {
                let what = "a `fold`";
                self.keys(object, what, &["kind", "acc", "item", "body", "init", "list"])?;
                let acc = self.get(object, "acc", what, |r, v| r.param(v))?;
                let item = self.get(object, "item", what, |r, v| r.param(v))?;
                let body = self.get(object, "body", what, |r, v| r.expr(v, d))?;
                let init = self.get(object, "init", what, |r, v| r.expr(v, d))?;
                let list = self.get(object, "list", what, |r, v| r.expr(v, d))?;
                Expr::Fold {
                    func: Lambda2 {
                        acc,
                        item,
                        body: Box::new(body),
                    },
                    init: Box::new(init),
                    list: Box::new(list),
                }
            }
            "call" => {
                self.keys(object, "a `call`", &["kind", "tool", "arg"])?;
                let tool = self.get(object, "tool", "a `call`", |r, v| r.name(v))?;
                let arg = self.get(object, "arg", "a `call`", |r, v| r.expr(v, d))?;
                Expr::call(tool, arg)
            }
            "exec" | "traverse" => {
                return self.at(Seg::Key("kind"), |r| {
                    Err(r.error(format!(
                        "`{kind}` gives a Result, which only a `match` can use: put it in the `on` of {{\"kind\": \"match\", \"on\": ..., \"ok\": ..., \"err\": ...}}"
                    )))
                })
            }
            other => {
                let hint = unknown_kind_hint(other);
                let kinds = EXPR_KINDS.join(", ");
                let other = Echo(other);
                let message = if hint.is_empty() {
                    format!("unknown kind `{other}`; an expression's kind is one of: {kinds}")
                } else {
                    format!("unknown kind `{other}`; {hint}")
                };
                return self.at(Seg::Key("kind"), |r| Err(r.error(message)));
            }
        };
        Ok(expr)
    }

    fn step(&mut self, json: &'j Json, depth: usize) -> Result<Step, JsonError> {
        if depth >= MAX_DEPTH {
            return Err(self.error(format!(
                "the plan nests deeper than {MAX_DEPTH} levels; name parts with `let`"
            )));
        }
        let what = "a step (`exec` or `traverse`)";
        let object = self.object(json, what)?;
        let kind = self.get(object, "kind", what, |r, kind| r.string(kind))?;
        let d = depth + 1;
        match kind {
            "exec" => {
                self.keys(object, "an `exec`", &["kind", "tool", "arg"])?;
                let tool = self.get(object, "tool", "an `exec`", |r, v| r.name(v))?;
                let arg = self.get(object, "arg", "an `exec`", |r, v| r.expr(v, d))?;
                Ok(Step::Exec {
                    tool,
                    arg: Box::new(arg),
                })
            }
            "traverse" => {
                self.keys(object, "a `traverse`", &["kind", "param", "body", "list"])?;
                let param = self.get(object, "param", "a `traverse`", |r, v| r.param(v))?;
                let body = self.get(object, "body", "a `traverse`", |r, v| r.step(v, d))?;
                let list = self.get(object, "list", "a `traverse`", |r, v| r.expr(v, d))?;
                Ok(Step::Traverse {
                    param,
                    body: Box::new(body),
                    list: Box::new(list),
                })
            }
            other => self.at(Seg::Key("kind"), |r| {
                Err(r.error(format!(
                    "a `match` matches on a step, `exec` (a tool call) or `traverse`, found the kind `{}`",
                    Echo(other)
                )))
            }),
        }
    }

    fn branch(&mut self, json: &'j Json, what: &str, depth: usize) -> Result<Branch, JsonError> {
        let object = self.object(
            json,
            &format!("the {what}, {{\"bind\": NAME, \"body\": EXPRESSION}}"),
        )?;
        self.keys(object, &format!("the {what}"), &["bind", "body"])?;
        let bind = self.get(object, "bind", what, |r, v| r.name(v))?;
        let body = self.get(object, "body", what, |r, v| r.expr(v, depth))?;
        Ok(Branch {
            bind,
            body: Box::new(body),
        })
    }

    fn fields(&mut self, json: &'j Json, depth: usize) -> Result<Vec<(String, Expr)>, JsonError> {
        let items = match json {
            Json::Array(items) => items,
            Json::Object(_) => {
                return Err(self.error(
                    "expected a list of fields [{\"name\": NAME, \"value\": EXPRESSION}], found an object".into(),
                ))
            }
            other => {
                return Err(self.error(format!("expected a list of fields, found {}", found(other))))
            }
        };
        let mut fields: Vec<(String, Expr)> = Vec::with_capacity(items.len());
        let mut seen = std::collections::HashSet::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let field = self.at(Seg::Index(i), |r| {
                let object = r.object(item, "a field {\"name\": NAME, \"value\": EXPRESSION}")?;
                r.keys(object, "a field", &["name", "value"])?;
                let name = r.get(object, "name", "a field", |r, v| r.name(v))?;
                if !seen.insert(name.clone()) {
                    return Err(r.error(format!("the field `{}` is given twice", Echo(&name))));
                }
                let value = r.get(object, "value", "a field", |r, v| r.expr(v, depth))?;
                Ok((name, value))
            })?;
            fields.push(field);
        }
        Ok(fields)
    }

    fn param(&mut self, json: &'j Json) -> Result<Param, JsonError> {
        let object = self.object(json, "a parameter {\"name\": NAME, \"type\": null}")?;
        self.keys(object, "a parameter", &["name", "type"])?;
        let name = self.get(object, "name", "a parameter", |r, v| r.name(v))?;
        let ty = match object.get("type") {
            None => {
                return Err(self.error(
                    "missing `type` in a parameter; write \"type\": null for no annotation".into(),
                ))
            }
            Some(Json::Null) => None,
            Some(ty) => Some(self.at(Seg::Key("type"), |r| {
                let text = r.string(ty)?;
                // The annotation and the parser's words on it, each cut:
                // a message bounded whatever was written.
                parse_type(text).map_err(|e| {
                    r.error(format!(
                        "the annotation `{}` is not a type: {}",
                        Echo(text),
                        cut(&e.message, LINE)
                    ))
                })
            })?),
        };
        Ok(Param { name, ty })
    }
}

fn write_expr(expr: &Expr) -> Json {
    match expr {
        Expr::Unit => json!({ "kind": "unit" }),
        Expr::Bool { value } => json!({ "kind": "bool", "value": value }),
        Expr::Int { value } => json!({ "kind": "int", "value": value }),
        Expr::Float { value } => json!({ "kind": "float", "value": value }),
        Expr::String { value } => json!({ "kind": "string", "value": value }),
        Expr::Var { name } => json!({ "kind": "var", "name": name }),
        Expr::Get { of, field } => json!({ "kind": "get", "of": write_expr(of), "field": field }),
        Expr::Record { fields } => {
            let fields: Vec<Json> = fields
                .iter()
                .map(|(name, value)| json!({ "name": name, "value": write_expr(value) }))
                .collect();
            json!({ "kind": "record", "fields": fields })
        }
        Expr::List { items } => {
            json!({ "kind": "list", "items": items.iter().map(write_expr).collect::<Vec<_>>() })
        }
        Expr::Match { on, ok, err } => json!({
            "kind": "match",
            "on": write_step(on),
            "ok": { "bind": ok.bind, "body": write_expr(&ok.body) },
            "err": { "bind": err.bind, "body": write_expr(&err.body) },
        }),
        Expr::Let { name, value, body } => json!({
            "kind": "let", "name": name, "value": write_expr(value), "body": write_expr(body),
        }),
        Expr::If {
            cond,
            then,
            otherwise,
        } => json!({
            "kind": "if", "cond": write_expr(cond), "then": write_expr(then), "else": write_expr(otherwise),
        }),
        Expr::Not { operand } => json!({ "kind": "not", "operand": write_expr(operand) }),
        Expr::Binary { op, left, right } => json!({
            "kind": "binary", "op": op.symbol(), "left": write_expr(left), "right": write_expr(right),
        }),
        Expr::Map { func, list } | Expr::Filter { func, list } => json!({
            "kind": if matches!(expr, Expr::Map { .. }) { "map" } else { "filter" },
            "param": write_param(&func.param),
            "body": write_expr(&func.body),
            "list": write_expr(list),
        }),
        Expr::Fold { func, init, list } => json!({
            "kind": "fold",
            "acc": write_param(&func.acc),
            "item": write_param(&func.item),
            "body": write_expr(&func.body),
            "init": write_expr(init),
            "list": write_expr(list),
        }),
        Expr::Call { tool, arg } => json!({ "kind": "call", "tool": tool, "arg": write_expr(arg) }),
    }
}

fn write_step(step: &Step) -> Json {
    match step {
        Step::Exec { tool, arg } => json!({ "kind": "exec", "tool": tool, "arg": write_expr(arg) }),
        Step::Traverse { param, body, list } => json!({
            "kind": "traverse",
            "param": write_param(param),
            "body": write_step(body),
            "list": write_expr(list),
        }),
    }
}

fn write_param(param: &Param) -> Json {
    json!({ "name": param.name, "type": param.ty.as_ref().map(Type::to_string) })
}
