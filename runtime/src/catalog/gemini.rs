//! Gemini function declarations, with parameters in Gemini's `Schema`: "a
//! select subset of an OpenAPI 3.0 schema object" (Gemini API reference,
//! `Schema`; `FunctionDeclaration`).
//!
//! The `Schema` object has exactly these fields: `type`, `format`, `title`,
//! `description`, `nullable`, `enum` (strings), `maxItems`, `minItems`,
//! `properties`, `required`, `minProperties`, `maxProperties`, `minLength`,
//! `maxLength`, `pattern`, `example`, `anyOf`, `propertyOrdering`, `default`,
//! `items`, `minimum`, `maximum`. Any other key (`$ref`, `$defs`, `$schema`,
//! `additionalProperties`, `const`, `oneOf`) is rejected with "Invalid JSON
//! payload received. Unknown name", a list in `type` with "Proto field is not
//! repeating", an `OBJECT` without properties with "properties: should be
//! non-empty for OBJECT type".

use serde_json::{json, Map, Value};

use crate::schema;
use crate::schema::model::{Budget, Limits};
use crate::tool::ToolSpec;

/// `{"name", "description", "parameters"?}`; no `parameters` for a tool that
/// takes none ("For function with no parameters, this can be left unset").
pub(super) fn declaration(spec: &ToolSpec) -> Value {
    let mut entry = super::named(spec);
    if let Some(parameters) = parameters(spec.input_schema()) {
        entry.insert("parameters".into(), parameters);
    }
    Value::Object(entry)
}

/// The `Schema` fields kept as they are.
const KEPT: [&str; 12] = [
    "title",
    "description",
    "default",
    "example",
    "pattern",
    "minimum",
    "maximum",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "minProperties",
];

/// How far `$ref`s are inlined: [`Limits::GEMINI`] (how deep, how many
/// nodes before every reference is cut: inlining can grow a schema
/// exponentially) and [`Limits::GEMINI_REPEATS`] (how many times one
/// definition is expanded on one path).
const LIMITS: Limits = Limits::GEMINI;

/// The parameters as a Gemini `Schema`, or `None` when there are none.
fn parameters(schema: &Value) -> Option<Value> {
    let mut gemini = Gemini {
        root: schema,
        expanding: Vec::new(),
        budget: Budget::new(LIMITS),
    };
    let mut parameters = gemini.node(schema, 0);
    strip_notes(&mut parameters);
    let has_properties = parameters
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| !p.is_empty());
    has_properties.then_some(parameters)
}

struct Gemini<'s> {
    root: &'s Value,
    /// The `$ref`s being expanded, innermost last.
    expanding: Vec<String>,
    budget: Budget,
}

impl Gemini<'_> {
    fn node(&mut self, schema: &Value, depth: usize) -> Value {
        // Every node counts; once spent, references are cut.
        let _ = self.budget.take();
        let Value::Object(keywords) = schema else {
            // `true` is any value, `false` none; Gemini can say neither, and
            // an untyped schema is the closest.
            return json!({});
        };
        if let Some(reference) = keywords.get("$ref").and_then(Value::as_str) {
            return self.reference(reference, keywords, depth);
        }
        if keywords.contains_key("allOf") {
            return self.node(&merge_all_of(keywords), depth);
        }

        let mut nullable = false;
        let mut types: Vec<&str> = match keywords.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if types.contains(&"null") {
            nullable = true;
            types.retain(|t| *t != "null");
        }

        let mut options = Vec::new();
        for key in ["anyOf", "oneOf"] {
            for option in keywords
                .get(key)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if is_null(option) {
                    nullable = true;
                } else {
                    options.push(self.node(option, depth + 1));
                }
            }
        }
        // `Option<T>` as `anyOf [T, null]`: T itself, nullable.
        let mut out = match (options.len(), types.is_empty()) {
            (1, true) => match options.pop() {
                Some(Value::Object(only)) => only,
                _ => Map::new(),
            },
            _ => Map::new(),
        };
        if out.remove("nullable") == Some(Value::Bool(true)) {
            nullable = true;
        }

        let (values, null_value) = enum_values(keywords);
        nullable |= null_value;
        let the_type = (types.len() == 1).then(|| types[0]);
        for (key, value) in keywords {
            match key.as_str() {
                "type" => match types.as_slice() {
                    [] => {}
                    [only] => {
                        out.insert("type".into(), json!(only));
                        if nullable {
                            out.insert("nullable".into(), Value::Bool(true));
                        }
                    }
                    several => {
                        let each = several.iter().map(|t| json!({ "type": t })).collect();
                        options.extend::<Vec<Value>>(each);
                    }
                },
                "anyOf" | "oneOf" if options.len() > 1 => {
                    out.insert("anyOf".into(), Value::Array(options.clone()));
                }
                "enum" | "const" => {
                    if let Some(values) = &values {
                        out.insert("enum".into(), Value::Array(values.clone()));
                    }
                }
                "format" if value.as_str().is_some_and(|f| known_format(the_type, f)) => {
                    out.insert(key.clone(), value.clone());
                }
                "properties" => {
                    let mut properties = Map::new();
                    for (name, property) in value.as_object().into_iter().flatten() {
                        properties.insert(name.clone(), self.node(property, depth + 1));
                    }
                    let order = properties.keys().cloned().map(Value::String).collect();
                    out.insert(key.clone(), Value::Object(properties));
                    out.insert("propertyOrdering".into(), Value::Array(order));
                }
                "required" => {
                    let listed = keywords.get("properties").and_then(Value::as_object);
                    let required: Vec<Value> = value
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter(|name| {
                            name.as_str()
                                .is_some_and(|n| listed.is_some_and(|p| p.contains_key(n)))
                        })
                        .cloned()
                        .collect();
                    if !required.is_empty() {
                        out.insert(key.clone(), Value::Array(required));
                    }
                }
                "items" => {
                    let items = self.node(value, depth + 1);
                    out.insert(key.clone(), items);
                }
                // A tuple: Gemini has none; each element is one of the types.
                "prefixItems" if !keywords.contains_key("items") => {
                    let mut elements: Vec<Value> = Vec::new();
                    for element in value.as_array().into_iter().flatten() {
                        let element = self.node(element, depth + 1);
                        if !elements.contains(&element) {
                            elements.push(element);
                        }
                    }
                    let items = match elements.len() {
                        1 => elements.pop().unwrap_or_default(),
                        _ => json!({ "anyOf": elements }),
                    };
                    out.insert("items".into(), items);
                }
                "examples" if !keywords.contains_key("example") => {
                    if let Some(first) = value.as_array().and_then(|e| e.first()) {
                        out.insert("example".into(), first.clone());
                    }
                }
                "maxProperties" => {
                    out.insert(key.clone(), value.clone());
                }
                // The cut `T` of an `Option<T>` keeps its note under the
                // field's own description.
                "description" if out.contains_key(NOTE) => {
                    let note = out.get(NOTE).and_then(Value::as_str).unwrap_or("");
                    let text = value.as_str().unwrap_or("");
                    out.insert(key.clone(), json!(format!("{text} ({note})")));
                }
                k if KEPT.contains(&k) => {
                    out.insert(key.clone(), value.clone());
                }
                _ => {}
            }
        }
        if types.len() > 1 && !out.contains_key("anyOf") {
            out.insert("anyOf".into(), Value::Array(options));
        }
        finish(&mut out, nullable);
        Value::Object(out)
    }

    /// A `$ref`: its target inlined, with the reference's own keywords over
    /// it (a field's description wins over its type's); cut when it recurs
    /// too often, nests too deep or the budget is spent.
    fn reference(&mut self, reference: &str, keywords: &Map<String, Value>, depth: usize) -> Value {
        let target = schema::resolve(self.root, reference);
        let repeats = self.expanding.iter().filter(|r| *r == reference).count();
        let expandable = repeats < Limits::GEMINI_REPEATS && self.budget.allows(depth).is_ok();
        match target {
            Some(Value::Object(target)) if expandable => {
                let mut merged = target.clone();
                for key in ["$defs", "definitions", "$schema", "$id"] {
                    merged.remove(key);
                }
                for (key, value) in keywords {
                    if key != "$ref" {
                        merged.insert(key.clone(), value.clone());
                    }
                }
                self.expanding.push(reference.to_owned());
                let out = self.node(&Value::Object(merged), depth);
                self.expanding.pop();
                out
            }
            _ => cut(reference, keywords, target, repeats > 0),
        }
    }
}

/// Where a reference is not expanded: its description, and the type it names.
fn cut(
    reference: &str,
    keywords: &Map<String, Value>,
    target: Option<&Value>,
    recurs: bool,
) -> Value {
    let name = match reference.rsplit('/').next() {
        Some(name) if !name.is_empty() && name != "#" => name,
        _ => "object",
    };
    let description = keywords
        .get("description")
        .or_else(|| target.and_then(|t| t.get("description")))
        .and_then(Value::as_str)
        .unwrap_or("");
    let note = if recurs {
        format!("Same shape as the enclosing `{name}`.")
    } else {
        format!("A `{name}`.")
    };
    let text = if description.is_empty() {
        note.clone()
    } else {
        format!("{description} ({note})")
    };
    json!({ "description": text, NOTE: note })
}

/// Where a cut node keeps its note while the conversion runs.
const NOTE: &str = "\u{1}note";

fn strip_notes(schema: &mut Value) {
    match schema {
        Value::Object(keywords) => {
            keywords.remove(NOTE);
            keywords.values_mut().for_each(strip_notes);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_notes),
        _ => {}
    }
}

/// The last touches: `nullable`, and an object's `type` only when it has
/// properties.
fn finish(out: &mut Map<String, Value>, nullable: bool) {
    if nullable && !out.contains_key("nullable") {
        out.insert("nullable".into(), Value::Bool(true));
    }
    if out.get("type").and_then(Value::as_str) == Some("object") {
        let empty = out
            .get("properties")
            .and_then(Value::as_object)
            .is_none_or(Map::is_empty);
        if empty {
            for key in ["type", "properties", "required", "propertyOrdering"] {
                out.remove(key);
            }
        }
    }
    if out.get("type").and_then(Value::as_str) == Some("array") && !out.contains_key("items") {
        out.insert("items".into(), json!({}));
    }
}

/// `enum` (or `const`) as Gemini's string enum, and whether `null` was among
/// the values. Values that are not strings cannot be listed, so such an enum
/// is dropped and only the type constrains.
fn enum_values(keywords: &Map<String, Value>) -> (Option<Vec<Value>>, bool) {
    let values: Vec<Value> = match (keywords.get("const"), keywords.get("enum")) {
        (Some(constant), _) => vec![constant.clone()],
        (None, Some(Value::Array(values))) => values.clone(),
        _ => return (None, false),
    };
    let null = values.contains(&Value::Null);
    let rest: Vec<Value> = values.into_iter().filter(|v| !v.is_null()).collect();
    let listable = !rest.is_empty() && rest.iter().all(Value::is_string);
    (listable.then_some(rest), null)
}

/// Formats Gemini knows: `int32`/`int64` for integers, `float`/`double` for
/// numbers, `date-time`/`enum` for strings.
fn known_format(the_type: Option<&str>, format: &str) -> bool {
    matches!(
        (the_type, format),
        (Some("integer"), "int32" | "int64")
            | (Some("number"), "float" | "double")
            | (Some("string"), "date-time" | "enum")
    )
}

fn is_null(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("null")
        || schema.get("const") == Some(&Value::Null)
        || schema.get("enum") == Some(&json!([null]))
}

/// `allOf` parts folded into one schema: properties and `required` joined,
/// otherwise the first value of a keyword wins.
fn merge_all_of(keywords: &Map<String, Value>) -> Value {
    let mut merged: Map<String, Value> = keywords
        .iter()
        .filter(|(k, _)| *k != "allOf")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let parts = keywords.get("allOf").and_then(Value::as_array);
    for part in parts.into_iter().flatten().filter_map(Value::as_object) {
        for (key, value) in part {
            match (key.as_str(), merged.get_mut(key), value) {
                ("properties", Some(Value::Object(into)), Value::Object(from)) => {
                    for (name, property) in from {
                        into.entry(name.clone()).or_insert_with(|| property.clone());
                    }
                }
                ("required", Some(Value::Array(into)), Value::Array(from)) => {
                    for name in from {
                        if !into.contains(name) {
                            into.push(name.clone());
                        }
                    }
                }
                (_, Some(_), _) => {}
                (_, None, _) => {
                    merged.insert(key.clone(), value.clone());
                }
            }
        }
    }
    Value::Object(merged)
}
