//! OpenAI function tools, for Chat Completions and for the Responses API, with
//! plain or strict parameters.
//!
//! The strict subset follows OpenAI's Structured Outputs guide, "Supported
//! schemas": types `string`, `number`, `boolean`, `integer`, `object`,
//! `array`, `enum`, `anyOf`; the root an object, not `anyOf`; every property in
//! `required` (an optional one as a union with `null`); `additionalProperties:
//! false` on every object; `$defs`/`$ref` (recursion included) allowed, but a
//! `$ref` may not have sibling keywords ("$ref cannot have keywords
//! {'description'}"); string `pattern` and the listed `format`s, number bounds
//! and `multipleOf`, array `minItems`/`maxItems`; `allOf`, `not`, `if`/`then`/
//! `else`, `dependentRequired`, `dependentSchemas` unsupported; at most 5000
//! properties, 10 levels of nesting, 1000 enum values, 120 000 characters of
//! names and enum values, 15 000 for one enum of more than 250 strings.

use serde_json::{json, Map, Value};

use crate::schema;
use crate::schema::model::Limits;
use crate::tool::ToolSpec;

/// `{"type": "function", "function": {"name", "description", "parameters", "strict"?}}`.
pub(super) fn chat(spec: &ToolSpec, strict: bool) -> Value {
    let (parameters, is_strict) = parameters(spec, strict);
    let mut function = super::named(spec);
    function.insert("parameters".into(), parameters);
    // Chat Completions' default is `false`: say it only when strictness was asked for.
    if strict {
        function.insert("strict".into(), Value::Bool(is_strict));
    }
    super::object([
        ("type", Value::String("function".into())),
        ("function", Value::Object(function)),
    ])
}

/// `{"type": "function", "name", "description", "parameters", "strict"}`.
pub(super) fn responses(spec: &ToolSpec, strict: bool) -> Value {
    let (parameters, is_strict) = parameters(spec, strict);
    let mut entry = Map::new();
    entry.insert("type".into(), Value::String("function".into()));
    entry.extend(super::named(spec));
    entry.insert("parameters".into(), parameters);
    // Always written: the Responses API defaults to `true`.
    entry.insert("strict".into(), Value::Bool(is_strict));
    Value::Object(entry)
}

/// The parameters, and whether they are strict: strict when asked for and the
/// schema can be made strict, else the plain schema.
fn parameters(spec: &ToolSpec, strict: bool) -> (Value, bool) {
    if strict {
        if let Some(schema) = strict_schema(spec.input_schema()) {
            return (schema, true);
        }
    }
    (super::without_dialect(spec.input_schema()), false)
}

/// String formats the strict subset supports.
const STRING_FORMATS: [&str; 9] = [
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

/// Keywords kept as they are.
const KEPT: [&str; 10] = [
    "description",
    "title",
    "pattern",
    "multipleOf",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minItems",
    "maxItems",
];

/// Keywords dropped: annotations, and constraints outside the subset that
/// serde does not enforce either (`minLength` on a `String`, `uniqueItems` on a
/// `HashSet`, which deserializes duplicates into one element).
const DROPPED: [&str; 17] = [
    "$schema",
    "$id",
    "$comment",
    "$anchor",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "minLength",
    "maxLength",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "contentEncoding",
    "contentMediaType",
    "contentSchema",
];

/// Keywords that only describe: a `$ref`'s siblings may be dropped or
/// overridden when they are of these.
const ANNOTATIONS: [&str; 6] = [
    "description",
    "title",
    "default",
    "examples",
    "deprecated",
    "$comment",
];

const TYPES: [&str; 7] = [
    "string", "number", "integer", "boolean", "object", "array", "null",
];

const MAX_PROPERTIES: usize = 5000;
const MAX_NESTING: usize = 10;
const MAX_ENUM_VALUES: usize = 1000;
const MAX_STRING_LENGTH: usize = 120_000;
const LARGE_ENUM: usize = 250;
const MAX_LARGE_ENUM_LENGTH: usize = 15_000;
/// How many `$ref`s with siblings may be inlined inside one another (and
/// how many steps a chain of references is followed when checked).
const MAX_INLINING: usize = Limits::INLINED;

/// `schema` in OpenAI's strict subset, or `None` when it cannot be without
/// changing what it accepts.
pub(crate) fn strict_schema(schema: &Value) -> Option<Value> {
    let mut strict = Strict {
        root: schema,
        inlining: Vec::new(),
    };
    let Value::Object(mut out) = strict.node(schema)? else {
        return None;
    };
    if out.get("type").and_then(Value::as_str) != Some("object") || out.contains_key("anyOf") {
        return None;
    }
    for key in ["$defs", "definitions"] {
        if let Some(Value::Object(definitions)) = schema.get(key) {
            let mut converted = Map::new();
            for (name, definition) in definitions {
                converted.insert(name.clone(), strict.node(definition)?);
            }
            out.insert(key.into(), Value::Object(converted));
        }
    }
    prune_definitions(&mut out);
    let out = Value::Object(out);
    (references_resolve(&out) && within_limits(&out)).then_some(out)
}

/// Whether every `$ref` in `schema` leads, in a few steps, to a schema that is
/// not itself a reference (the transform may have moved what one pointed to,
/// and `{"$ref": "#/properties/a"}` at `/properties/a` leads nowhere).
fn references_resolve(schema: &Value) -> bool {
    let mut all = Vec::new();
    references(schema, false, &mut all);
    all.into_iter().all(|mut reference| {
        for _ in 0..MAX_INLINING {
            match schema::resolve(schema, reference) {
                Some(Value::Object(target)) => match target.get("$ref") {
                    Some(next) => match next.as_str() {
                        Some(next) => reference = next,
                        None => return false,
                    },
                    None => return true,
                },
                _ => return false,
            }
        }
        false
    })
}

struct Strict<'s> {
    root: &'s Value,
    /// The `$ref`s being inlined, innermost last.
    inlining: Vec<String>,
}

impl Strict<'_> {
    fn node(&mut self, schema: &Value) -> Option<Value> {
        // `true`, `false`: any value, no value; neither is in the subset.
        let Value::Object(keywords) = schema else {
            return None;
        };
        if let Some(reference) = keywords.get("$ref") {
            return self.reference(reference.as_str()?, keywords);
        }
        if let Some(parts) = keywords.get("allOf") {
            return self.node(&merge_all_of(keywords, parts)?);
        }
        if keywords.contains_key("anyOf") && keywords.contains_key("oneOf") {
            return None;
        }
        let mut out = Map::new();
        for (key, value) in keywords {
            match key.as_str() {
                "type" => {
                    let known = |t: &Value| t.as_str().is_some_and(|t| TYPES.contains(&t));
                    let ok = match value {
                        Value::Array(types) => !types.is_empty() && types.iter().all(known),
                        other => known(other),
                    };
                    if !ok {
                        return None;
                    }
                    out.insert(key.clone(), value.clone());
                }
                "enum" => {
                    value.as_array()?;
                    out.insert(key.clone(), value.clone());
                }
                // A one-value `enum` says the same with a keyword every
                // strict-mode example uses.
                "const" => {}
                "format" if value.as_str().is_some_and(|f| STRING_FORMATS.contains(&f)) => {
                    out.insert(key.clone(), value.clone());
                }
                // `uint8`, `double`, ...: not formats OpenAI lists; the bounds
                // next to them still constrain.
                "format" => {}
                "properties" => {
                    let mut properties = Map::new();
                    for (name, property) in value.as_object()? {
                        properties.insert(name.clone(), self.node(property)?);
                    }
                    out.insert(key.clone(), Value::Object(properties));
                }
                "required" => {}
                "additionalProperties" => match value {
                    Value::Bool(_) => {}
                    // A map (`HashMap<String, T>`): strict objects take only
                    // the keys they list.
                    _ => return None,
                },
                "items" => {
                    let items = self.node(value)?;
                    out.insert(key.clone(), items);
                }
                "anyOf" | "oneOf" => {
                    let mut options = Vec::new();
                    for option in value.as_array()? {
                        options.push(self.node(option)?);
                    }
                    out.insert("anyOf".into(), Value::Array(options));
                }
                "$defs" | "definitions" if std::ptr::eq(schema, self.root) => {}
                k if KEPT.contains(&k) => {
                    out.insert(key.clone(), value.clone());
                }
                k if DROPPED.contains(&k) || k.starts_with("x-") => {}
                // `not`, `if`, `prefixItems`, `patternProperties`, ...: no
                // strict equivalent.
                _ => return None,
            }
        }
        if let Some(constant) = keywords.get("const") {
            if let Some(values) = keywords.get("enum").and_then(Value::as_array) {
                if !values.contains(constant) {
                    return None;
                }
            }
            out.insert("enum".into(), json!([constant]));
        }
        let is_object = match out.get("type") {
            Some(Value::String(t)) => t == "object",
            Some(Value::Array(ts)) => ts.iter().any(|t| t == "object"),
            _ => out.contains_key("properties"),
        };
        if is_object {
            let open = !matches!(
                keywords.get("additionalProperties"),
                Some(Value::Bool(false))
            );
            let properties = out
                .entry("properties")
                .or_insert_with(|| Value::Object(Map::new()));
            // An object with no listed properties that takes any key is a map.
            if open && properties.as_object().is_some_and(Map::is_empty) {
                return None;
            }
            let required: Vec<Value> = properties
                .as_object()
                .into_iter()
                .flat_map(|p| p.keys().cloned().map(Value::String))
                .collect();
            out.insert("required".into(), Value::Array(required));
            out.insert("additionalProperties".into(), Value::Bool(false));
        }
        if out.get("type") == Some(&json!("array")) && !out.contains_key("items") {
            return None;
        }
        // Nothing says what the value is: any value, which the subset lacks.
        if !["type", "enum", "anyOf"]
            .iter()
            .any(|k| out.contains_key(*k))
        {
            return None;
        }
        Some(Value::Object(out))
    }

    /// A bare `$ref` stays; one with siblings is replaced by its target with
    /// the siblings over it (a field's description wins over its type's).
    fn reference(&mut self, reference: &str, keywords: &Map<String, Value>) -> Option<Value> {
        let siblings: Map<String, Value> = keywords
            .iter()
            .filter(|(k, _)| *k != "$ref")
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let descriptive = siblings.keys().all(|k| ANNOTATIONS.contains(&k.as_str()));
        let target = schema::resolve(self.root, reference)?;
        if siblings.is_empty() {
            return Some(json!({ "$ref": reference }));
        }
        if self.inlining.iter().any(|r| r == reference) || self.inlining.len() >= MAX_INLINING {
            // Inlining a type into itself would not end: keep the bare
            // reference and lose the field's description.
            return descriptive.then(|| json!({ "$ref": reference }));
        }
        let Value::Object(target) = target else {
            return None;
        };
        let mut merged = target.clone();
        for key in ["$defs", "definitions", "$schema", "$id"] {
            merged.remove(key);
        }
        for (key, value) in siblings {
            if merged.contains_key(&key) && !ANNOTATIONS.contains(&key.as_str()) {
                // Both constrain: JSON Schema requires both, an override would not.
                return None;
            }
            merged.insert(key, value);
        }
        self.inlining.push(reference.to_owned());
        let out = self.node(&Value::Object(merged));
        self.inlining.pop();
        out
    }
}

/// `{"allOf": [A], ...rest}` as one schema, when the parts do not share a
/// constraining keyword.
fn merge_all_of(keywords: &Map<String, Value>, parts: &Value) -> Option<Value> {
    let mut merged: Map<String, Value> = keywords
        .iter()
        .filter(|(k, _)| *k != "allOf")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    for part in parts.as_array()? {
        for (key, value) in part.as_object()? {
            if merged.contains_key(key) && !ANNOTATIONS.contains(&key.as_str()) {
                return None;
            }
            merged.entry(key.clone()).or_insert_with(|| value.clone());
        }
    }
    Some(Value::Object(merged))
}

/// The definition a local reference points into: `#/$defs/Node/properties/x` -> `Node`.
fn definition_name(reference: &str) -> Option<(&'static str, String)> {
    for key in ["$defs", "definitions"] {
        let prefix = format!("#/{key}/");
        if let Some(rest) = reference.strip_prefix(&prefix) {
            let name = rest.split('/').next().unwrap_or("");
            return Some((key, name.replace("~1", "/").replace("~0", "~")));
        }
    }
    None
}

/// Every `$ref` in `value`; with `skip_definitions`, not those inside its
/// `$defs`/`definitions`.
fn references<'v>(value: &'v Value, skip_definitions: bool, out: &mut Vec<&'v str>) {
    match value {
        Value::Object(keywords) => {
            for (key, child) in keywords {
                if key == "$ref" {
                    out.extend(child.as_str());
                } else if !(skip_definitions && (key == "$defs" || key == "definitions")) {
                    references(child, false, out);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|i| references(i, false, out)),
        _ => {}
    }
}

/// Drops the definitions nothing refers to any more (those inlined).
fn prune_definitions(root: &mut Map<String, Value>) {
    let snapshot = Value::Object(root.clone());
    let mut pending = Vec::new();
    references(&snapshot, true, &mut pending);
    let mut reached: Vec<(&'static str, String)> = Vec::new();
    while let Some(reference) = pending.pop() {
        let Some((key, name)) = definition_name(reference) else {
            continue;
        };
        if reached.iter().any(|(k, n)| *k == key && *n == name) {
            continue;
        }
        if let Some(definition) = snapshot.get(key).and_then(|d| d.get(&name)) {
            references(definition, false, &mut pending);
        }
        reached.push((key, name));
    }
    for key in ["$defs", "definitions"] {
        if let Some(Value::Object(definitions)) = root.get_mut(key) {
            definitions.retain(|name, _| reached.iter().any(|(k, n)| *k == key && n == name));
            if definitions.is_empty() {
                root.remove(key);
            }
        }
    }
}

/// OpenAI's size limits.
fn within_limits(schema: &Value) -> bool {
    let mut totals = Totals::default();
    totals.count(schema, false);
    totals.properties <= MAX_PROPERTIES
        && totals.enum_values <= MAX_ENUM_VALUES
        && totals.string_length <= MAX_STRING_LENGTH
        && !totals.large_enum_too_long
        && nesting(schema, schema, &mut Vec::new()) <= MAX_NESTING
}

#[derive(Default)]
struct Totals {
    properties: usize,
    enum_values: usize,
    string_length: usize,
    large_enum_too_long: bool,
}

impl Totals {
    fn count(&mut self, value: &Value, names_are_keys: bool) {
        match value {
            Value::Object(keywords) if names_are_keys => {
                for (name, child) in keywords {
                    self.string_length += name.chars().count();
                    self.count(child, false);
                }
            }
            Value::Object(keywords) => {
                for (key, child) in keywords {
                    match key.as_str() {
                        "properties" => {
                            self.properties += child.as_object().map_or(0, Map::len);
                            self.count(child, true);
                        }
                        "$defs" | "definitions" => self.count(child, true),
                        "enum" => {
                            let values = child.as_array().map_or(&[][..], Vec::as_slice);
                            let length: usize = values
                                .iter()
                                .filter_map(Value::as_str)
                                .map(|s| s.chars().count())
                                .sum();
                            self.enum_values += values.len();
                            self.string_length += length;
                            if values.len() > LARGE_ENUM && length > MAX_LARGE_ENUM_LENGTH {
                                self.large_enum_too_long = true;
                            }
                        }
                        _ => self.count(child, false),
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|i| self.count(i, false)),
            _ => {}
        }
    }
}

/// Levels of objects inside objects, following each `$ref` once on a path.
fn nesting<'v>(root: &'v Value, schema: &'v Value, seen: &mut Vec<&'v str>) -> usize {
    let Value::Object(keywords) = schema else {
        return 0;
    };
    let mut deepest = 0;
    if let Some(reference) = keywords.get("$ref").and_then(Value::as_str) {
        if !seen.contains(&reference) {
            if let Some(target) = schema::resolve(root, reference) {
                seen.push(reference);
                deepest = deepest.max(nesting(root, target, seen));
                seen.pop();
            }
        }
    }
    let properties = keywords.get("properties").and_then(Value::as_object);
    for child in properties.into_iter().flat_map(Map::values) {
        deepest = deepest.max(nesting(root, child, seen));
    }
    if let Some(items) = keywords.get("items") {
        deepest = deepest.max(nesting(root, items, seen));
    }
    for option in keywords
        .get("anyOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        deepest = deepest.max(nesting(root, option, seen));
    }
    deepest + usize::from(properties.is_some())
}
