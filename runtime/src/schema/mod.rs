//! A small reader of the JSON Schemas that tools advertise.
//!
//! A schema is read once into a typed model (`model`: nodes in an arena,
//! `$ref`s resolved to indices, the limits of every walk), which a
//! [`ToolSpec`](crate::ToolSpec) builds for its input and output. Two jobs
//! read it:
//! - [`check`] finds *every* way a value breaks a schema, each with its JSON path,
//!   so that a model is told all that is wrong with its call at once. It is used
//!   on the error path of typed tools (the deserializer decides, this explains)
//!   and as the validator of [`DynamicTool`](crate::DynamicTool)s.
//! - [`type_name`] writes a schema in λ-Tool's notation (`{id: String, note?: String}`),
//!   for the compact text catalog and for "expected ..." in messages.
//!
//! Keywords understood: `type`, `enum`, `const`, `properties`, `required`,
//! `additionalProperties`, `items`, `prefixItems`, `minItems`, `maxItems`,
//! `anyOf`, `oneOf`, `allOf`, `minimum`, `maximum`, `exclusiveMinimum`,
//! `exclusiveMaximum`, `minLength`, `maxLength`, and local `$ref`s
//! (`#/$defs/...`, `#/definitions/...`). Others (`pattern`, `format`, ...) are
//! not checked. Integers follow serde: `5.0` is a number, not an integer,
//! because `serde_json` will not deserialize it into an integer type.
//!
//! ```
//! use serde_json::json;
//! use typed_tools::schema::{check, type_name};
//!
//! let schema = json!({
//!     "type": "object",
//!     "properties": { "id": { "type": "string" }, "n": { "type": "integer" } },
//!     "required": ["id", "n"],
//!     "additionalProperties": false
//! });
//! assert_eq!(type_name(&schema), "{id: String, n: Int}");
//! let problems = check(&schema, &json!({ "n": "3", "x": 1 }));
//! let text: Vec<String> = problems.iter().map(ToString::to_string).collect();
//! assert_eq!(text, [
//!     "$.n: expected Int, found string \"3\"",
//!     "$.x: unknown field; expected one of: `id`, `n`",
//!     "$.id: missing required field of type String",
//! ]);
//! ```

use std::fmt;

use serde_json::Value;

mod check;
pub(crate) mod model;
pub(crate) mod name;

pub(crate) use check::type_matches;
pub(crate) use model::{NodeId, SchemaModel};
use name::Namer;

/// Where in the arguments a problem is: `$`, `$.items[2].name`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct JsonPath(Vec<PathSegment>);

/// One step of a [`JsonPath`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum PathSegment {
    /// An object's field.
    Field(String),
    /// An array's element.
    Index(usize),
}

impl JsonPath {
    /// The root: the arguments object itself.
    pub fn root() -> JsonPath {
        JsonPath::default()
    }

    /// The path of these steps, from the root.
    pub(crate) fn from_segments(segments: Vec<PathSegment>) -> JsonPath {
        JsonPath(segments)
    }

    /// This path, one field deeper.
    pub fn field(&self, name: &str) -> JsonPath {
        let mut path = self.clone();
        path.0.push(PathSegment::Field(name.to_owned()));
        path
    }

    /// This path, one element deeper.
    pub fn index(&self, index: usize) -> JsonPath {
        let mut path = self.clone();
        path.0.push(PathSegment::Index(index));
        path
    }

    /// The steps from the root.
    pub fn segments(&self) -> &[PathSegment] {
        &self.0
    }

    /// The value at this path inside `value`.
    pub fn lookup<'v>(&self, value: &'v Value) -> Option<&'v Value> {
        self.0
            .iter()
            .try_fold(value, |value, segment| match segment {
                PathSegment::Field(name) => value.get(name),
                PathSegment::Index(i) => value.get(i),
            })
    }
}

impl fmt::Display for JsonPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("$")?;
        for segment in &self.0 {
            match segment {
                // A key a model wrote may be long: cut (it names a place
                // in the model's own text, which it has).
                PathSegment::Field(name)
                    if !name.is_empty()
                        && name.chars().all(|c| c.is_alphanumeric() || c == '_') =>
                {
                    write!(f, ".{}", crate::cut::Echo(name))?
                }
                PathSegment::Field(name) => write!(
                    f,
                    "[{}]",
                    Value::String(crate::cut::cut(name, crate::cut::ECHO).into_owned())
                )?,
                PathSegment::Index(i) => write!(f, "[{i}]")?,
            }
        }
        Ok(())
    }
}

/// One way a value breaks a schema.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Problem {
    /// A required field is absent. `path` names the field.
    Missing {
        /// The missing field's path.
        path: JsonPath,
        /// Its type, in λ-Tool notation.
        expected: String,
    },
    /// A field the schema does not have (and does not allow).
    Unknown {
        /// The unknown field's path.
        path: JsonPath,
        /// The fields the schema has.
        expected: Vec<String>,
    },
    /// A value of the wrong type, or out of its range, or not one of its values.
    Mismatch {
        /// Where the value is.
        path: JsonPath,
        /// What was expected, in λ-Tool notation.
        expected: String,
        /// What was found, briefly.
        found: String,
    },
    /// An object gives a key twice. JSON readers keep one of the two
    /// (serde_json the last), so what one reader shows and another runs
    /// could differ: arguments that do are refused. `path` names the key.
    Duplicate {
        /// The key's path.
        path: JsonPath,
    },
}

impl Problem {
    /// Where the problem is.
    pub fn path(&self) -> &JsonPath {
        match self {
            Problem::Missing { path, .. }
            | Problem::Unknown { path, .. }
            | Problem::Mismatch { path, .. }
            | Problem::Duplicate { path } => path,
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::Missing { path, expected } => {
                write!(f, "{path}: missing required field of type {expected}")
            }
            Problem::Unknown { path, expected } if expected.is_empty() => {
                write!(f, "{path}: unknown field; this object takes no fields")
            }
            Problem::Unknown { path, expected } => {
                write!(f, "{path}: unknown field; expected one of: ")?;
                write_list(f, expected)
            }
            Problem::Mismatch {
                path,
                expected,
                found,
            } => {
                write!(f, "{path}: expected {expected}, found {found}")
            }
            Problem::Duplicate { path } => {
                write!(f, "{path}: the key is given twice; give each key once")
            }
        }
    }
}

pub(crate) fn write_list(f: &mut fmt::Formatter<'_>, names: &[String]) -> fmt::Result {
    for (i, name) in names.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "`{name}`")?;
    }
    Ok(())
}

/// Where a walk of a value is, as a list linked through the walker's stack:
/// a [`JsonPath`] is made only for what is reported (a problem, a coercion),
/// not for each of a million items walked.
#[derive(Clone, Copy)]
pub(crate) enum PathLink<'p> {
    Root,
    Field(&'p PathLink<'p>, &'p str),
    Index(&'p PathLink<'p>, usize),
}

impl<'p> PathLink<'p> {
    pub(crate) fn field(&'p self, name: &'p str) -> PathLink<'p> {
        PathLink::Field(self, name)
    }

    pub(crate) fn index(&'p self, index: usize) -> PathLink<'p> {
        PathLink::Index(self, index)
    }

    pub(crate) fn to_json_path(self) -> JsonPath {
        let mut segments = Vec::new();
        let mut at = self;
        loop {
            match at {
                PathLink::Root => break,
                PathLink::Field(parent, name) => {
                    segments.push(PathSegment::Field(name.to_owned()));
                    at = *parent;
                }
                PathLink::Index(parent, index) => {
                    segments.push(PathSegment::Index(index));
                    at = *parent;
                }
            }
        }
        segments.reverse();
        JsonPath(segments)
    }
}

/// A count written with thousands separators (`1,048,571`), for the
/// "… and N more" of capped lists of changes.
pub(crate) struct Thousands(pub(crate) usize);

impl fmt::Display for Thousands {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let digits = self.0.to_string();
        for (i, digit) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i).is_multiple_of(3) {
                f.write_str(",")?;
            }
            write!(f, "{digit}")?;
        }
        Ok(())
    }
}

/// Every way `value` breaks `schema`, in the order met (an object's fields
/// before its missing fields). Empty when the value fits.
pub fn check(schema: &Value, value: &Value) -> Vec<Problem> {
    SchemaModel::new(schema).check(value)
}

/// The schema in λ-Tool's notation: `String`, `Int`, `Float`, `Bool`, `Unit`,
/// `[T]`, `{a: T, b?: U}`, `T?` for nullable, `"a" | "b"` for enums, `Any`.
///
/// ```
/// use serde_json::json;
/// use typed_tools::schema::type_name;
///
/// assert_eq!(type_name(&json!({"type": ["string", "null"]})), "String?");
/// assert_eq!(type_name(&json!({"type": "array", "items": {"type": "integer"}})), "[Int]");
/// assert_eq!(type_name(&json!({"enum": ["a", "b"]})), r#""a" | "b""#);
/// ```
pub fn type_name(schema: &Value) -> String {
    SchemaModel::new(schema).type_name()
}

impl SchemaModel {
    /// The whole schema in λ-Tool notation (see [`type_name`]).
    pub(crate) fn type_name(&self) -> String {
        Namer::new(self).name(NodeId::ROOT)
    }
}

/// Resolves a local `$ref` against `root`.
pub(crate) fn resolve<'s>(root: &'s Value, reference: &str) -> Option<&'s Value> {
    let pointer = reference.strip_prefix('#')?;
    root.pointer(pointer)
}

/// A brief description of a value, for "found ...".
pub(crate) fn describe_value(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("boolean {b}"),
        Value::Number(n) if n.is_f64() => format!("number {n}"),
        Value::Number(n) => format!("integer {n}"),
        Value::String(s) => {
            let mut short: String = s.chars().take(40).collect();
            if short.len() < s.len() {
                short.push('…');
            }
            format!("string {}", Value::String(short))
        }
        Value::Array(items) => format!("an array of {} element(s)", items.len()),
        Value::Object(_) => "an object".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn problems(schema: Value, value: Value) -> Vec<String> {
        check(&schema, &value)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn nested_paths_and_refs() {
        let schema = json!({
            "type": "object",
            "properties": { "items": { "type": "array", "items": { "$ref": "#/$defs/Item" } } },
            "required": ["items"],
            "$defs": { "Item": {
                "type": "object",
                "properties": { "name": { "type": "string" }, "qty": { "type": "integer", "minimum": 1 } },
                "required": ["name", "qty"]
            } }
        });
        assert_eq!(
            problems(
                schema.clone(),
                json!({"items": [{"name": "a", "qty": 1}, {"name": 2, "qty": 0}]})
            ),
            [
                "$.items[1].name: expected String, found integer 2",
                "$.items[1].qty: expected Int >= 1, found integer 0"
            ]
        );
        assert!(problems(schema, json!({"items": []})).is_empty());
    }

    #[test]
    fn option_is_nullable_and_enum_lists_values() {
        let schema = json!({
            "type": "object",
            "properties": {
                "note": { "type": ["string", "null"] },
                "kind": { "oneOf": [ { "type": "string", "enum": ["a"] }, { "type": "string", "const": "b" } ] }
            },
            "additionalProperties": false
        });
        assert!(problems(schema.clone(), json!({"note": null, "kind": "b"})).is_empty());
        assert_eq!(
            problems(schema, json!({"note": 1, "kind": "c"})),
            [
                "$.note: expected String?, found integer 1",
                "$.kind: expected \"a\" | \"b\", found string \"c\""
            ]
        );
    }

    #[test]
    fn integers_follow_serde() {
        let schema = json!({ "type": "integer" });
        assert!(check(&schema, &json!(5)).is_empty());
        assert!(!check(&schema, &json!(5.0)).is_empty());
        assert!(check(&json!({"enum": [1]}), &json!(1.0)).is_empty());
    }

    #[test]
    fn names_nested_types() {
        let schema = json!({
            "type": "object",
            "properties": {
                "id": { "type": "string" },
                "tags": { "type": "array", "items": { "type": "string" } },
                "owner": { "anyOf": [ { "$ref": "#/$defs/Owner" }, { "type": "null" } ] }
            },
            "required": ["id", "tags"],
            "$defs": { "Owner": { "type": "object", "properties": { "email": { "type": "string" } }, "required": ["email"] } }
        });
        assert_eq!(
            type_name(&schema),
            "{id: String, tags: [String], owner?: {email: String}}"
        );
    }

    #[test]
    fn recursive_schemas_terminate() {
        let schema = json!({
            "$ref": "#/$defs/Node",
            "$defs": { "Node": { "type": "object", "properties": { "next": { "$ref": "#/$defs/Node" } } } }
        });
        assert!(type_name(&schema).contains("Node"));
        let mut value = json!({});
        for _ in 0..200 {
            value = json!({ "next": value });
        }
        assert!(check(&schema, &value).is_empty());
    }

    /// `Option<Box<Node>>`-style recursion: each level is an `anyOf`.
    fn nested_options(depth: usize, leaf: Value) -> (Value, Value) {
        let schema = json!({
            "$ref": "#/$defs/Node",
            "$defs": { "Node": {
                "type": "object",
                "properties": {
                    "n": { "type": "integer" },
                    "next": { "anyOf": [ { "$ref": "#/$defs/Node" }, { "type": "null" } ] }
                },
                "required": ["n"]
            } }
        });
        let mut value = json!({ "n": leaf });
        for _ in 0..depth {
            value = json!({ "n": 1, "next": value });
        }
        (schema, value)
    }

    #[test]
    fn nested_options_are_checked_once_each() {
        // Checking an option and then again for the message made this 2^depth:
        // a minute at 22 levels. Once each, it is linear.
        let (schema, value) = nested_options(100, json!("bad"));
        let problems = check(&schema, &value);
        assert_eq!(problems.len(), 1, "{problems:?}");
        let path = problems[0].path().to_string();
        assert!(path.ends_with(".next.n") && path.len() > 500, "{path}");
    }

    #[test]
    fn values_deeper_than_the_walk_are_problems_not_passed() {
        let (schema, value) = nested_options(400, json!(1));
        let problems = check(&schema, &value);
        assert!(
            problems
                .iter()
                .any(|p| p.to_string().contains("nested at most")),
            "{problems:?}"
        );
    }

    #[test]
    fn paths_quote_odd_keys() {
        assert_eq!(
            JsonPath::root().field("a b").index(0).to_string(),
            "$[\"a b\"][0]"
        );
    }
}
