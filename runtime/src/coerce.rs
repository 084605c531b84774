//! Schema-guided coercion: the "sanitize" step of recovery.
//!
//! A model often sends the right value in the wrong JSON type: `"42"` for an
//! integer, `"true"` for a boolean, one item where a list is expected,
//! `"HIGH"` for the enum value `"high"`. [`coerce`] uses the tool's input
//! schema to turn such values into what it asks for, and records each change
//! with its JSON path so that the caller and the model see it.
//!
//! What is coerced, and only where the schema asks for the target type and the
//! value does not already fit:
//!
//! | [`CoercionKind`] | from | to |
//! |---|---|---|
//! | `StringToNumber` | `"42"`, `"-3.5"`, `"1e3"` | `42`, `-3.5`, `1000` (an integer only if the text is one) |
//! | `FloatToInteger` | `5.0` | `5` (never `5.5`) |
//! | `ToString` | `42`, `true` | `"42"`, `"true"` (whole numbers only: a float's text is lost when JSON is parsed) |
//! | `StringToBool` | `"true"`, `"False"` | `true`, `false` (no other words) |
//! | `SingleToList` | `"a"` | `["a"]` |
//! | `EnumCase` | `"HIGH"` | `"high"` (only when exactly one value matches) |
//! | `StringifiedJson` | `"{\"a\": 1}"` | `{"a": 1}`, where an object or list is expected |
//! | `NullForAbsent` | a required field that is absent and may be null | `null` |
//!
//! A value that cannot be coerced is left as it is: the deserializer then
//! reports it with its path. Nothing is dropped or invented: no key is removed,
//! and only `null` is ever added, for a field whose schema allows it.
//!
//! ```
//! use serde_json::json;
//! use typed_tools::coerce::{coerce, CoercionKind};
//!
//! let schema = json!({
//!     "type": "object",
//!     "properties": {
//!         "amount": { "type": "integer" },
//!         "tags": { "type": "array", "items": { "type": "string" } },
//!         "priority": { "enum": ["low", "high"] }
//!     }
//! });
//! let mut args = json!({ "amount": "1250", "tags": "vip", "priority": "HIGH" });
//! let coercions = coerce(&schema, &mut args);
//! assert_eq!(args, json!({ "amount": 1250, "tags": ["vip"], "priority": "high" }));
//! assert_eq!(coercions[0].kind, CoercionKind::StringToNumber);
//! assert_eq!(coercions[0].to_string(), "$.amount: the string \"1250\" was read as the number 1250");
//! ```

use std::fmt;

use serde_json::{Map, Value};

use crate::schema::model::{Additional, Form, Limits, Node, Types};
use crate::schema::{type_matches, JsonPath, NodeId, PathLink, SchemaModel};

/// One change made by [`coerce`].
#[derive(Clone, Debug, PartialEq)]
pub struct Coercion {
    /// Where.
    pub path: JsonPath,
    /// What kind of change.
    pub kind: CoercionKind,
    /// The value as the model sent it (absent for [`CoercionKind::NullForAbsent`]).
    pub from: Option<Value>,
    /// The value as it is now.
    pub to: Value,
}

/// The kinds of [`Coercion`]; see the [module docs](self).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CoercionKind {
    /// A number written as a string.
    StringToNumber,
    /// A float with no fractional part where an integer is expected.
    FloatToInteger,
    /// A number or boolean where a string is expected.
    ToString,
    /// `"true"` / `"false"` where a boolean is expected.
    StringToBool,
    /// One value where a list is expected.
    SingleToList,
    /// An enum value in another letter case.
    EnumCase,
    /// An object or list sent as a string of JSON.
    StringifiedJson,
    /// `null` for an absent field that is required but may be null.
    NullForAbsent,
}

impl CoercionKind {
    /// Every kind, in declaration order.
    const ALL: [CoercionKind; 8] = [
        CoercionKind::StringToNumber,
        CoercionKind::FloatToInteger,
        CoercionKind::ToString,
        CoercionKind::StringToBool,
        CoercionKind::SingleToList,
        CoercionKind::EnumCase,
        CoercionKind::StringifiedJson,
        CoercionKind::NullForAbsent,
    ];

    /// What the change is, in a few words for a model, as a count of
    /// changes left unlisted uses it ("… and 999,995 more (read a string
    /// as a number)").
    ///
    /// ```
    /// use typed_tools::coerce::CoercionKind;
    ///
    /// assert_eq!(CoercionKind::SingleToList.description(), "read a single value as a list");
    /// ```
    pub const fn description(self) -> &'static str {
        match self {
            CoercionKind::StringToNumber => "read a string as a number",
            CoercionKind::FloatToInteger => "read a float as an integer",
            CoercionKind::ToString => "read a number or boolean as a string",
            CoercionKind::StringToBool => "read a string as a boolean",
            CoercionKind::SingleToList => "read a single value as a list",
            CoercionKind::EnumCase => "read a value in another letter case as the allowed one",
            CoercionKind::StringifiedJson => "read a string of JSON as the value it holds",
            CoercionKind::NullForAbsent => "set an absent field to null",
        }
    }
}

/// The values are written as JSON, each cut after 100 bytes (`…`): a value
/// read as a list may be megabytes, and this is written for a model to read.
impl fmt::Display for Coercion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let from = self
            .from
            .as_ref()
            .map(Short)
            .map(|s| s.to_string())
            .unwrap_or_default();
        let to = Short(&self.to);
        match self.kind {
            CoercionKind::StringToNumber => write!(
                f,
                "{}: the string {from} was read as the number {to}",
                self.path
            ),
            CoercionKind::FloatToInteger => {
                write!(f, "{}: {from} was read as the integer {to}", self.path)
            }
            CoercionKind::ToString => {
                write!(f, "{}: {from} was read as the string {to}", self.path)
            }
            CoercionKind::StringToBool => write!(
                f,
                "{}: the string {from} was read as the boolean {to}",
                self.path
            ),
            CoercionKind::SingleToList => write!(
                f,
                "{}: the single value {from} was read as the list {to}",
                self.path
            ),
            CoercionKind::EnumCase => write!(
                f,
                "{}: {from} was read as the allowed value {to}",
                self.path
            ),
            CoercionKind::StringifiedJson => {
                write!(
                    f,
                    "{}: a string of JSON was read as the {} it holds",
                    self.path,
                    kind_of(&self.to)
                )
            }
            CoercionKind::NullForAbsent => write!(f, "{}: absent, set to null", self.path),
        }
    }
}

/// A value as JSON, cut after [`Short::BYTES`] bytes with `…`.
struct Short<'v>(&'v Value);

impl Short<'_> {
    const BYTES: usize = 100;
}

impl fmt::Display for Short<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        /// Takes bytes up to `BYTES`, then fails, which stops the serializer.
        struct Bounded(Vec<u8>);
        impl std::io::Write for Bounded {
            fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
                let room = Short::BYTES - self.0.len();
                if bytes.len() > room {
                    self.0.extend_from_slice(&bytes[..room]);
                    return Err(std::io::ErrorKind::WriteZero.into());
                }
                self.0.extend_from_slice(bytes);
                Ok(bytes.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let mut out = Bounded(Vec::new());
        let cut = serde_json::to_writer(&mut out, self.0).is_err();
        // A cut may split a character: keep what is whole.
        let whole = match std::str::from_utf8(&out.0) {
            Ok(text) => text,
            Err(e) => std::str::from_utf8(&out.0[..e.valid_up_to()]).unwrap_or_default(),
        };
        f.write_str(whole)?;
        if cut {
            f.write_str("…")?;
        }
        Ok(())
    }
}

fn kind_of(value: &Value) -> &'static str {
    if value.is_array() {
        "list"
    } else {
        "object"
    }
}

/// Coerces `value` in place towards `schema`; returns every change, in
/// document order. See the [module docs](self). (Recovery keeps only the
/// first few of each kind, and counts the rest.)
pub fn coerce(schema: &Value, value: &mut Value) -> Vec<Coercion> {
    SchemaModel::new(schema).coerce(value, usize::MAX).kept
}

impl SchemaModel {
    /// [`coerce`] towards this schema, keeping the first `keep` changes of
    /// each kind and counting the rest: the record of a million coerced
    /// items is a few changes and a count.
    pub(crate) fn coerce(&self, value: &mut Value, keep: usize) -> Changes {
        let mut out = Changes::new(keep);
        Coercer {
            model: self,
            depth: 0,
        }
        .value(NodeId::ROOT, value, &PathLink::Root, &mut out);
        out
    }
}

/// What [`coerce`] changed: the first `keep` changes of each kind, in
/// document order, and how many of each.
pub(crate) struct Changes {
    pub(crate) kept: Vec<Coercion>,
    counts: [usize; CoercionKind::ALL.len()],
    keep: usize,
}

impl Changes {
    fn new(keep: usize) -> Changes {
        Changes {
            kept: Vec::new(),
            counts: [0; CoercionKind::ALL.len()],
            keep,
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.counts.iter().all(|&n| n == 0)
    }

    /// Records a change of `kind`, made by `change` only if it is kept.
    fn push(&mut self, kind: CoercionKind, change: impl FnOnce() -> Coercion) {
        let count = &mut self.counts[kind as usize];
        if *count < self.keep {
            self.kept.push(change());
        }
        *count += 1;
    }

    fn append(&mut self, other: Changes) {
        let mut counts = other.counts;
        for change in other.kept {
            counts[change.kind as usize] -= 1;
            self.push(change.kind, || change);
        }
        for (count, more) in self.counts.iter_mut().zip(counts) {
            *count += more;
        }
    }

    /// For each kind with changes not kept, how many.
    pub(crate) fn omitted(&self) -> impl Iterator<Item = (CoercionKind, usize)> + '_ {
        CoercionKind::ALL.into_iter().filter_map(|kind| {
            let n = self.counts[kind as usize].saturating_sub(self.keep);
            (n > 0).then_some((kind, n))
        })
    }
}

struct Coercer<'m> {
    model: &'m SchemaModel,
    depth: usize,
}

impl Coercer<'_> {
    fn fits(&self, id: NodeId, value: &Value) -> bool {
        self.model.fits(id, value)
    }

    fn value(&mut self, id: NodeId, value: &mut Value, path: &PathLink<'_>, out: &mut Changes) {
        if self.depth >= Limits::COERCE.depth {
            return;
        }
        self.depth += 1;
        self.value_inner(id, value, path, out);
        self.depth -= 1;
    }

    fn value_inner(
        &mut self,
        id: NodeId,
        value: &mut Value,
        path: &PathLink<'_>,
        out: &mut Changes,
    ) {
        let id = self.model.resolved(id);
        let node = self.model.node(id);
        if node.form != Form::Keywords {
            return;
        }

        // Options: keep a value that fits one; otherwise the first option it
        // can be coerced into wins.
        if let Some(options) = node.any_of.as_ref().or(node.one_of.as_ref()) {
            if let Some(&option) = options.iter().find(|&&o| self.fits(o, value)) {
                // Fits as it is; still coerce inside it (an object's fields).
                self.inside(option, value, path, out);
                return;
            }
            for &option in options {
                let mut attempt = value.clone();
                let mut changes = Changes::new(out.keep);
                self.value(option, &mut attempt, path, &mut changes);
                if !changes.is_empty() && self.fits(option, &attempt) {
                    *value = attempt;
                    out.append(changes);
                    return;
                }
            }
            return;
        }
        if let Some(allowed) = &node.enum_values {
            enum_case(allowed, value, path, out);
            return;
        }
        if let Some(Value::String(constant)) = &node.constant {
            enum_case(&[Value::String(constant.clone())], value, path, out);
            return;
        }
        let types = node.types.list();
        if !types.is_empty() && !types.iter().any(|t| type_matches(t, value)) {
            let items = node.items.map(|items| self.model.node(items));
            if let Some((kind, coerced)) = types.iter().find_map(|t| convert(t, items, value)) {
                let from = std::mem::replace(value, coerced);
                out.push(kind, || Coercion {
                    path: path.to_json_path(),
                    kind,
                    from: Some(from),
                    to: value.clone(),
                });
            } else {
                return;
            }
        }
        self.inside(id, value, path, out);
    }

    /// Into an object's fields and a list's items.
    fn inside(&mut self, id: NodeId, value: &mut Value, path: &PathLink<'_>, out: &mut Changes) {
        let id = self.model.resolved(id);
        let node = self.model.node(id);
        match value {
            Value::Object(fields) => self.object(node, fields, path, out),
            Value::Array(items) => {
                for (i, item) in items.iter_mut().enumerate() {
                    let prefix = node.prefix_items.as_ref().and_then(|p| p.get(i).copied());
                    if let Some(item_schema) = prefix.or(node.items) {
                        self.value(item_schema, item, &path.index(i), out);
                    }
                }
            }
            _ => {}
        }
    }

    fn object(
        &mut self,
        node: &Node,
        fields: &mut Map<String, Value>,
        path: &PathLink<'_>,
        out: &mut Changes,
    ) {
        let properties = node.properties.as_ref();
        let additional = match node.additional {
            Additional::Schema(values) => Some(values),
            _ => None,
        };
        for (name, field) in fields.iter_mut() {
            let field_schema = properties.and_then(|p| p.get(name)).or(additional);
            if let Some(field_schema) = field_schema {
                self.value(field_schema, field, &path.field(name), out);
            }
        }
        let (Some(properties), Some(required)) = (properties, &node.required) else {
            return;
        };
        for name in required {
            if !fields.contains_key(name) {
                if let Some(property) = properties.get(name) {
                    if self.fits(property, &Value::Null) {
                        fields.insert(name.to_owned(), Value::Null);
                        out.push(CoercionKind::NullForAbsent, || Coercion {
                            path: path.field(name).to_json_path(),
                            kind: CoercionKind::NullForAbsent,
                            from: None,
                            to: Value::Null,
                        });
                    }
                }
            }
        }
    }
}

fn enum_case(allowed: &[Value], value: &mut Value, path: &PathLink<'_>, out: &mut Changes) {
    let Value::String(text) = &*value else { return };
    if allowed.iter().any(|a| a == &*value) {
        return;
    }
    let matches: Vec<&Value> = allowed
        .iter()
        .filter(|a| a.as_str().is_some_and(|a| a.eq_ignore_ascii_case(text)))
        .collect();
    if let [only] = matches.as_slice() {
        let from = std::mem::replace(value, (*only).clone());
        out.push(CoercionKind::EnumCase, || Coercion {
            path: path.to_json_path(),
            kind: CoercionKind::EnumCase,
            from: Some(from),
            to: value.clone(),
        });
    }
}

/// `value` as JSON type `t`, if one of the coercions applies.
fn convert(t: &str, items: Option<&Node>, value: &Value) -> Option<(CoercionKind, Value)> {
    match (t, value) {
        ("integer", Value::Number(n)) => {
            let f = n.as_f64()?;
            (f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0)
                .then(|| (CoercionKind::FloatToInteger, Value::from(f as i64)))
        }
        ("integer", Value::String(s)) => {
            let s = s.trim();
            s.parse::<i64>()
                .map(Value::from)
                .or_else(|_| s.parse::<u64>().map(Value::from))
                .ok()
                .map(|v| (CoercionKind::StringToNumber, v))
        }
        ("number", Value::String(s)) => {
            let s = s.trim();
            let number = s.parse::<i64>().map(Value::from).ok().or_else(|| {
                s.parse::<f64>()
                    .ok()
                    .and_then(serde_json::Number::from_f64)
                    .map(Value::Number)
            })?;
            Some((CoercionKind::StringToNumber, number))
        }
        // Whole numbers only: a float was already rounded when the JSON was
        // parsed (`1.10` is 1.1, `98765432109876543210123` is 9.87…e22), so its
        // text is lost; better the model resends it than a wrong string runs.
        ("string", Value::Number(n)) if n.is_i64() || n.is_u64() => {
            Some((CoercionKind::ToString, Value::String(n.to_string())))
        }
        ("string", Value::Bool(b)) => Some((CoercionKind::ToString, Value::String(b.to_string()))),
        ("boolean", Value::String(s)) if s.trim().eq_ignore_ascii_case("true") => {
            Some((CoercionKind::StringToBool, Value::Bool(true)))
        }
        ("boolean", Value::String(s)) if s.trim().eq_ignore_ascii_case("false") => {
            Some((CoercionKind::StringToBool, Value::Bool(false)))
        }
        ("array" | "object", Value::String(s)) if stringified(t, s).is_some() => {
            stringified(t, s).map(|parsed| (CoercionKind::StringifiedJson, parsed))
        }
        ("array", single) if !single.is_null() => {
            // Only when the single value could be an item.
            let fits_item = items.is_none_or(|items| item_type_admits(items, single));
            fits_item.then(|| {
                (
                    CoercionKind::SingleToList,
                    Value::Array(vec![single.clone()]),
                )
            })
        }
        _ => None,
    }
}

/// The object or list a string of JSON holds, if it holds one of type `t`.
fn stringified(t: &str, text: &str) -> Option<Value> {
    let text = text.trim();
    if !text.starts_with(['{', '[']) {
        return None;
    }
    let parsed: Value = serde_json::from_str(text).ok()?;
    type_matches(t, &parsed).then_some(parsed)
}

/// Whether an item schema's `type` admits the value's JSON type (a cheap test;
/// the item is coerced further when the list is walked).
fn item_type_admits(items: &Node, value: &Value) -> bool {
    let admits = |t: &str| type_matches(t, value) || convertible(t, value);
    match &items.types {
        Types::One(t) => admits(t),
        Types::Many(ts) => ts.iter().any(|t| admits(t)),
        Types::Absent | Types::Other => true,
    }
}

fn convertible(t: &str, value: &Value) -> bool {
    convert(t, None, value).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(schema: Value, mut value: Value) -> (Value, Vec<String>) {
        let changes = coerce(&schema, &mut value);
        (value, changes.iter().map(ToString::to_string).collect())
    }

    #[test]
    fn every_kind() {
        let schema = json!({
            "type": "object",
            "properties": {
                "n": { "type": "integer" }, "f": { "type": "integer" }, "x": { "type": "number" },
                "s": { "type": "string" }, "b": { "type": "boolean" }, "l": { "type": "array", "items": { "type": "integer" } },
                "e": { "$ref": "#/$defs/E" }, "o": { "type": "object", "properties": { "k": { "type": "integer" } } },
                "note": { "type": ["string", "null"] }
            },
            "required": ["n", "note"],
            "$defs": { "E": { "oneOf": [ { "const": "low" }, { "const": "high" } ] } }
        });
        let (value, changes) = run(
            schema,
            json!({"n": " 42 ", "f": 5.0, "x": "2.5", "s": 7, "b": "False", "l": "3", "e": "High", "o": "{\"k\": \"1\"}"}),
        );
        assert_eq!(
            value,
            json!({"n": 42, "f": 5, "x": 2.5, "s": "7", "b": false, "l": [3], "e": "high", "o": {"k": 1}, "note": null})
        );
        assert_eq!(changes.len(), 11, "{changes:#?}");
        assert!(
            changes.contains(&"$.l[0]: the string \"3\" was read as the number 3".to_owned()),
            "{changes:#?}"
        );
        assert!(changes.contains(&"$.note: absent, set to null".to_owned()));
    }

    #[test]
    fn what_cannot_be_coerced_is_left_alone() {
        let schema = json!({"type": "object", "properties": {
            "n": {"type": "integer"}, "f": {"type": "integer"}, "b": {"type": "boolean"},
            "e": {"enum": ["Low", "low"]}, "req": {"type": "string"}
        }, "required": ["req"]});
        let original = json!({"n": "forty-two", "f": 5.5, "b": "yes", "e": "LOW"});
        let (value, changes) = run(schema, original.clone());
        assert_eq!(
            value, original,
            "nothing changed, nothing added for a non-nullable field"
        );
        assert!(changes.is_empty());
    }

    #[test]
    fn numbers_whose_text_is_lost_are_not_made_strings() {
        let schema = json!({"type": "object", "properties": {"id": {"type": "string"}, "v": {"type": "string"}}});
        let mut value: Value =
            serde_json::from_str(r#"{"id": 98765432109876543210123, "v": 1.10}"#).unwrap();
        let before = value.clone();
        assert!(coerce(&schema, &mut value).is_empty());
        assert_eq!(value, before);
    }

    #[test]
    fn values_that_fit_are_never_changed() {
        let schema = json!({"type": "object", "properties": {"s": {"type": "string"}, "u": {"anyOf": [{"type": "integer"}, {"type": "string"}]}}});
        let (value, changes) = run(schema, json!({"s": "42", "u": "7"}));
        assert_eq!(value, json!({"s": "42", "u": "7"}));
        assert!(changes.is_empty());
    }
}
