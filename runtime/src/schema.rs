//! A small reader of the JSON Schemas that tools advertise.
//!
//! Two jobs, one walker:
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

use std::cell::Cell;
use std::fmt;

use serde_json::{Map, Value};

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
                PathSegment::Field(name)
                    if !name.is_empty()
                        && name.chars().all(|c| c.is_alphanumeric() || c == '_') =>
                {
                    write!(f, ".{name}")?
                }
                PathSegment::Field(name) => write!(f, "[{}]", Value::String(name.clone()))?,
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
}

impl Problem {
    /// Where the problem is.
    pub fn path(&self) -> &JsonPath {
        match self {
            Problem::Missing { path, .. }
            | Problem::Unknown { path, .. }
            | Problem::Mismatch { path, .. } => path,
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

/// Every way `value` breaks `schema`, in the order met (an object's fields
/// before its missing fields). Empty when the value fits.
pub fn check(schema: &Value, value: &Value) -> Vec<Problem> {
    let mut problems = Vec::new();
    let budget = Cell::new(CHECK_BUDGET);
    Walker::new(schema, &budget).check(schema, value, &JsonPath::root(), &mut problems);
    problems
}

/// Whether `value` fits `schema`, by the rules of [`check`].
pub fn fits(schema: &Value, value: &Value) -> bool {
    check(schema, value).is_empty()
}

/// Whether `value` fits `schema`, a part of `root` whose `$ref`s point into `root`.
pub(crate) fn fits_within(root: &Value, schema: &Value, value: &Value) -> bool {
    let mut problems = Vec::new();
    let budget = Cell::new(CHECK_BUDGET);
    Walker::new(root, &budget).check(schema, value, &JsonPath::root(), &mut problems);
    problems.is_empty()
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
    Namer::new(schema).name(schema)
}

/// Resolves a local `$ref` against `root`.
pub fn resolve<'s>(root: &'s Value, reference: &str) -> Option<&'s Value> {
    let pointer = reference.strip_prefix('#')?;
    root.pointer(pointer)
}

/// `schema`, or what its `$ref` (a chain of them, bounded) points to in `root`.
pub(crate) fn resolve_chain<'s>(root: &'s Value, mut schema: &'s Value) -> &'s Value {
    for _ in 0..MAX_DEPTH {
        match schema
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| resolve(root, r))
        {
            Some(target) => schema = target,
            None => break,
        }
    }
    schema
}

/// A brief description of a value, for "found ...".
pub fn describe_value(value: &Value) -> String {
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

/// Deeper than any value serde_json parses (it stops at 128 levels, and a level
/// of the value is at most a few levels of the walk). A value nested deeper is
/// a problem, never passed unchecked.
const MAX_DEPTH: usize = 512;

/// How many schema nodes one check may visit. Options (`anyOf`) are each
/// checked, so hostile arguments against a schema of nested options could
/// otherwise cost time exponential in their depth.
const CHECK_BUDGET: usize = 200_000;

struct Walker<'s> {
    root: &'s Value,
    depth: usize,
    /// Node visits left, shared by the whole check.
    budget: &'s Cell<usize>,
}

impl<'s> Walker<'s> {
    fn new(root: &'s Value, budget: &'s Cell<usize>) -> Walker<'s> {
        Walker {
            root,
            depth: 0,
            budget,
        }
    }

    fn deeper(&self) -> Option<Walker<'s>> {
        (self.depth < MAX_DEPTH).then(|| Walker {
            root: self.root,
            depth: self.depth + 1,
            budget: self.budget,
        })
    }

    /// Follows `$ref`s (a chain of them, bounded).
    fn resolved(&self, schema: &'s Value) -> &'s Value {
        resolve_chain(self.root, schema)
    }

    fn check(&self, schema: &'s Value, value: &Value, path: &JsonPath, out: &mut Vec<Problem>) {
        match self.budget.get() {
            0 => return,
            1 => {
                self.budget.set(0);
                out.push(Problem::Mismatch {
                    path: path.clone(),
                    expected: "arguments small enough to check".into(),
                    found: "more than the checker will read".into(),
                });
                return;
            }
            left => self.budget.set(left - 1),
        }
        let Some(inner) = self.deeper() else {
            out.push(Problem::Mismatch {
                path: path.clone(),
                expected: format!("a value nested at most {} levels deep", MAX_DEPTH / 4),
                found: "deeper nesting".into(),
            });
            return;
        };
        let schema = self.resolved(schema);
        let Value::Object(keywords) = schema else {
            if schema == &Value::Bool(false) {
                out.push(self.mismatch(schema, value, path));
            }
            return;
        };

        if let Some(all) = keywords.get("allOf").and_then(Value::as_array) {
            for part in all {
                inner.check(part, value, path, out);
            }
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(options) = keywords.get(key).and_then(Value::as_array) {
                // Each option is checked once; its problems are kept for the message.
                let results: Vec<Vec<Problem>> = options
                    .iter()
                    .map(|option| {
                        let mut problems = Vec::new();
                        inner.check(option, value, path, &mut problems);
                        problems
                    })
                    .collect();
                let fitting = results.iter().filter(|p| p.is_empty()).count();
                let ok = if key == "anyOf" {
                    fitting > 0
                } else {
                    fitting == 1
                };
                if !ok {
                    // When exactly one option has the value's JSON type, its
                    // problems say more than "expected A | B".
                    let same_type: Vec<usize> = (0..options.len())
                        .filter(|&i| inner.accepts_type_of(&options[i], value))
                        .collect();
                    if let [only] = same_type.as_slice() {
                        out.extend(results.into_iter().nth(*only).unwrap_or_default());
                    } else {
                        out.push(self.mismatch(schema, value, path));
                    }
                    return;
                }
            }
        }
        if let Some(allowed) = keywords.get("enum").and_then(Value::as_array) {
            if !allowed.iter().any(|a| same_json(a, value)) {
                out.push(self.mismatch(schema, value, path));
                return;
            }
        }
        if let Some(constant) = keywords.get("const") {
            if !same_json(constant, value) {
                out.push(self.mismatch(schema, value, path));
                return;
            }
        }
        if let Some(types) = keywords.get("type") {
            let ok = match types {
                Value::String(t) => type_matches(t, value),
                Value::Array(ts) => ts
                    .iter()
                    .filter_map(Value::as_str)
                    .any(|t| type_matches(t, value)),
                _ => true,
            };
            if !ok {
                out.push(self.mismatch(schema, value, path));
                return;
            }
        }
        match value {
            Value::Object(fields) => inner.check_object(keywords, fields, path, out),
            Value::Array(items) => inner.check_array(keywords, items, path, out),
            Value::Number(n) => {
                let n = n.as_f64().unwrap_or(f64::NAN);
                let bound = |key: &str| keywords.get(key).and_then(Value::as_f64);
                let out_of_range = bound("minimum").is_some_and(|m| n < m)
                    || bound("maximum").is_some_and(|m| n > m)
                    || bound("exclusiveMinimum").is_some_and(|m| n <= m)
                    || bound("exclusiveMaximum").is_some_and(|m| n >= m);
                if out_of_range {
                    out.push(self.bounded_mismatch(schema, keywords, value, path));
                }
            }
            Value::String(s) => {
                let len = s.chars().count() as u64;
                let bound = |key: &str| keywords.get(key).and_then(Value::as_u64);
                if bound("minLength").is_some_and(|m| len < m)
                    || bound("maxLength").is_some_and(|m| len > m)
                {
                    out.push(self.bounded_mismatch(schema, keywords, value, path));
                }
            }
            Value::Null | Value::Bool(_) => {}
        }
    }

    fn check_object(
        &self,
        keywords: &'s Map<String, Value>,
        fields: &Map<String, Value>,
        path: &JsonPath,
        out: &mut Vec<Problem>,
    ) {
        let properties = keywords.get("properties").and_then(Value::as_object);
        let additional = keywords.get("additionalProperties");
        for (name, field) in fields {
            match properties.and_then(|p| p.get(name)) {
                Some(property) => self.check(property, field, &path.field(name), out),
                None => match additional {
                    Some(Value::Bool(false)) => out.push(Problem::Unknown {
                        path: path.field(name),
                        expected: properties
                            .map(|p| p.keys().cloned().collect())
                            .unwrap_or_default(),
                    }),
                    Some(schema @ Value::Object(_)) => {
                        self.check(schema, field, &path.field(name), out)
                    }
                    _ => {}
                },
            }
        }
        for name in keywords
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let Some(name) = name.as_str() else { continue };
            if !fields.contains_key(name) {
                let expected = properties
                    .and_then(|p| p.get(name))
                    .map_or_else(|| "Any".to_owned(), |s| self.name(s));
                out.push(Problem::Missing {
                    path: path.field(name),
                    expected,
                });
            }
        }
    }

    fn check_array(
        &self,
        keywords: &'s Map<String, Value>,
        items: &[Value],
        path: &JsonPath,
        out: &mut Vec<Problem>,
    ) {
        let len = items.len() as u64;
        let bound = |key: &str| keywords.get(key).and_then(Value::as_u64);
        if bound("minItems").is_some_and(|m| len < m) || bound("maxItems").is_some_and(|m| len > m)
        {
            let schema = keywords.get("items").unwrap_or(&Value::Null);
            let expected = match (bound("minItems"), bound("maxItems")) {
                (Some(a), Some(b)) if a == b => {
                    format!("[{}] of exactly {a} element(s)", self.name(schema))
                }
                (min, max) => format!(
                    "[{}] of {}{} element(s)",
                    self.name(schema),
                    min.map(|m| format!("at least {m}")).unwrap_or_default(),
                    max.map(|m| format!("{}at most {m}", if min.is_some() { ", " } else { "" }))
                        .unwrap_or_default()
                ),
            };
            out.push(Problem::Mismatch {
                path: path.clone(),
                expected,
                found: format!("an array of {} element(s)", items.len()),
            });
        }
        let prefix = keywords.get("prefixItems").and_then(Value::as_array);
        for (i, item) in items.iter().enumerate() {
            let schema = match prefix.and_then(|p| p.get(i)) {
                Some(schema) => Some(schema),
                None => keywords.get("items"),
            };
            if let Some(schema) = schema {
                self.check(schema, item, &path.index(i), out);
            }
        }
    }

    /// Whether the schema's `type` (if any) admits the value's JSON type.
    fn accepts_type_of(&self, schema: &'s Value, value: &Value) -> bool {
        let schema = self.resolved(schema);
        match schema.get("type") {
            Some(Value::String(t)) => {
                type_matches(t, value) || (t == "number" && value.is_number())
            }
            Some(Value::Array(ts)) => ts
                .iter()
                .filter_map(Value::as_str)
                .any(|t| type_matches(t, value)),
            _ => match schema
                .get("const")
                .or_else(|| schema.get("enum").and_then(|e| e.get(0)))
            {
                Some(example) => std::mem::discriminant(example) == std::mem::discriminant(value),
                None => false,
            },
        }
    }

    /// The schema in λ-Tool notation, for "expected ...".
    fn name(&self, schema: &'s Value) -> String {
        Namer::new(self.root).name(schema)
    }

    fn mismatch(&self, schema: &'s Value, value: &Value, path: &JsonPath) -> Problem {
        Problem::Mismatch {
            path: path.clone(),
            expected: self.name(schema),
            found: describe_value(value),
        }
    }

    /// A mismatch of range or length: "Int >= 1 and <= 50", "String of 1 to 8 characters".
    fn bounded_mismatch(
        &self,
        schema: &'s Value,
        keywords: &Map<String, Value>,
        value: &Value,
        path: &JsonPath,
    ) -> Problem {
        let mut expected = self.name(schema);
        let number = |key: &str| {
            keywords
                .get(key)
                .filter(|v| v.is_number())
                .map(Value::to_string)
        };
        let bounds: Vec<String> = [
            ("minimum", ">="),
            ("exclusiveMinimum", ">"),
            ("maximum", "<="),
            ("exclusiveMaximum", "<"),
        ]
        .iter()
        .filter_map(|(key, op)| number(key).map(|n| format!("{op} {n}")))
        .collect();
        if !bounds.is_empty() {
            expected = format!("{expected} {}", bounds.join(" and "));
        }
        match (number("minLength"), number("maxLength")) {
            (Some(min), Some(max)) => expected = format!("{expected} of {min} to {max} characters"),
            (Some(min), None) => expected = format!("{expected} of at least {min} characters"),
            (None, Some(max)) => expected = format!("{expected} of at most {max} characters"),
            (None, None) => {}
        }
        Problem::Mismatch {
            path: path.clone(),
            expected,
            found: describe_value(value),
        }
    }
}

/// Past this many nodes a name is cut short with `…`; past this many types
/// inlined inside one another, a type is written by its name.
const NAME_BUDGET: usize = 2_000;
const MAX_INLINED: usize = 32;

/// Writes schemas in λ-Tool notation. A `$ref` is inlined, except inside
/// itself: a recursive type is written once and named where it recurs
/// (`{name: String, children: [Folder]}`).
struct Namer<'s> {
    root: &'s Value,
    /// The `$ref`s being inlined, outermost first.
    inlining: Vec<&'s str>,
    budget: usize,
    depth: usize,
}

impl<'s> Namer<'s> {
    fn new(root: &'s Value) -> Namer<'s> {
        Namer {
            root,
            inlining: Vec::new(),
            budget: NAME_BUDGET,
            depth: 0,
        }
    }

    /// Follows a chain of `$ref`s, for telling what an option is.
    fn resolved(&self, schema: &'s Value) -> &'s Value {
        resolve_chain(self.root, schema)
    }

    fn name(&mut self, schema: &'s Value) -> String {
        if self.depth >= MAX_DEPTH || self.budget == 0 {
            return "…".into();
        }
        self.budget -= 1;
        self.depth += 1;
        let name = self.name_inner(schema);
        self.depth -= 1;
        name
    }

    fn name_inner(&mut self, schema: &'s Value) -> String {
        if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
            let defined = reference
                .rsplit('/')
                .next()
                .filter(|n| !n.is_empty() && *n != "#");
            // A type inside itself (a recursive type) is named, not unfolded again.
            if self.inlining.contains(&reference) || self.inlining.len() >= MAX_INLINED {
                return defined.unwrap_or("Self").to_owned();
            }
            let Some(target) = resolve(self.root, reference) else {
                return defined.unwrap_or("Any").to_owned();
            };
            self.inlining.push(reference);
            let name = self.name(target);
            self.inlining.pop();
            return name;
        }
        let Value::Object(keywords) = schema else {
            return if schema == &Value::Bool(false) {
                "Never".into()
            } else {
                "Any".into()
            };
        };
        if let Some(constant) = keywords.get("const") {
            return constant.to_string();
        }
        if let Some(values) = keywords.get("enum").and_then(Value::as_array) {
            return values
                .iter()
                .map(Value::to_string)
                .collect::<Vec<_>>()
                .join(" | ");
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(options) = keywords.get(key).and_then(Value::as_array) {
                let (nulls, others): (Vec<&Value>, Vec<&Value>) = options
                    .iter()
                    .partition(|o| is_null_schema(self.resolved(o)));
                let names: Vec<String> = others.iter().map(|o| self.name(o)).collect();
                let joined = if names.len() == 1 {
                    names[0].clone()
                } else {
                    names
                        .iter()
                        .map(|n| {
                            if n.contains(' ') && !n.starts_with('{') {
                                format!("({n})")
                            } else {
                                n.clone()
                            }
                        })
                        .collect::<Vec<_>>()
                        .join(" | ")
                };
                return if nulls.is_empty() || names.is_empty() {
                    if names.is_empty() {
                        "Unit".into()
                    } else {
                        joined
                    }
                } else if names.len() == 1 && !joined.contains(" | ") {
                    format!("{joined}?")
                } else {
                    format!("({joined})?")
                };
            }
        }
        if let Some(all) = keywords.get("allOf").and_then(Value::as_array) {
            if let [only] = all.as_slice() {
                return self.name(only);
            }
        }
        let (types, nullable): (Vec<&str>, bool) = match keywords.get("type") {
            Some(Value::String(t)) => (vec![t.as_str()], false),
            Some(Value::Array(ts)) => {
                let ts: Vec<&str> = ts.iter().filter_map(Value::as_str).collect();
                let nullable = ts.contains(&"null") && ts.len() > 1;
                (
                    ts.into_iter()
                        .filter(|t| !nullable || *t != "null")
                        .collect(),
                    nullable,
                )
            }
            _ if keywords.contains_key("properties") => (vec!["object"], false),
            _ => (vec![], false),
        };
        let names: Vec<String> = types
            .iter()
            .map(|t| self.name_of_type(t, keywords))
            .collect();
        let joined = match names.len() {
            0 => "Any".to_owned(),
            1 => names[0].clone(),
            _ => names.join(" | "),
        };
        match (nullable, names.len()) {
            (false, _) => joined,
            (true, 1) => format!("{joined}?"),
            (true, _) => format!("({joined})?"),
        }
    }

    fn name_of_type(&mut self, t: &str, keywords: &'s Map<String, Value>) -> String {
        match t {
            "string" => "String".into(),
            "integer" => "Int".into(),
            "number" => "Float".into(),
            "boolean" => "Bool".into(),
            "null" => "Unit".into(),
            "array" => match (
                keywords.get("prefixItems").and_then(Value::as_array),
                keywords.get("items"),
            ) {
                (Some(prefix), _) => {
                    let names: Vec<String> = prefix.iter().map(|p| self.name(p)).collect();
                    format!("({})", names.join(", "))
                }
                (None, Some(items)) => format!("[{}]", self.name(items)),
                (None, None) => "[Any]".into(),
            },
            "object" => {
                let properties = keywords.get("properties").and_then(Value::as_object);
                let required: Vec<&str> = keywords
                    .get("required")
                    .and_then(Value::as_array)
                    .map(|r| r.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                match properties {
                    Some(properties) if !properties.is_empty() => {
                        let fields: Vec<String> = properties
                            .iter()
                            .map(|(name, schema)| {
                                let ty = self.name(schema);
                                if required.contains(&name.as_str()) {
                                    format!("{name}: {ty}")
                                } else {
                                    // `note?: String`, not `note?: String?`: absent and null mean the same.
                                    format!("{name}?: {}", ty.strip_suffix('?').unwrap_or(&ty))
                                }
                            })
                            .collect();
                        format!("{{{}}}", fields.join(", "))
                    }
                    _ => match keywords.get("additionalProperties") {
                        Some(values @ Value::Object(_)) => {
                            format!("Map[String, {}]", self.name(values))
                        }
                        _ => "{}".into(),
                    },
                }
            }
            other => other.to_owned(),
        }
    }
}

fn is_null_schema(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("null")
        || schema.get("const") == Some(&Value::Null)
}

fn type_matches(t: &str, value: &Value) -> bool {
    match (t, value) {
        ("null", Value::Null)
        | ("boolean", Value::Bool(_))
        | ("number", Value::Number(_))
        | ("string", Value::String(_))
        | ("array", Value::Array(_))
        | ("object", Value::Object(_)) => true,
        ("integer", Value::Number(n)) => n.is_i64() || n.is_u64(),
        _ => false,
    }
}

/// JSON equality where `1` and `1.0` are the same number.
fn same_json(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x == y || x.as_f64() == y.as_f64(),
        _ => a == b,
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
        assert!(fits(&schema, &json!(5)));
        assert!(!fits(&schema, &json!(5.0)));
        assert!(fits(&json!({"enum": [1]}), &json!(1.0)));
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
