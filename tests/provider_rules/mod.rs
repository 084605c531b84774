//! The providers' published rules for tool schemas, written out with their
//! sources, as checks any test can run on a schema: the catalogs'
//! (`tests/catalog.rs`) and the plan's JSON form (`tests/plan_author_json.rs`).
//!
//! Sources:
//! - [OPENAI-FN] OpenAI API reference, `FunctionDefinition` (Chat Completions
//!   `tools[].function`) and `FunctionTool` (Responses `tools[]`), as generated
//!   into openai-python `types/shared_params/function_definition.py` and
//!   `types/responses/function_tool_param.py`: name "must be a-z, A-Z, 0-9, or
//!   contain underscores and dashes, with a maximum length of 64"; Responses
//!   `strict`: "Default `true`".
//! - [OPENAI-SO] OpenAI guide "Structured Outputs", section "Supported
//!   schemas" (platform.openai.com/docs/guides/structured-outputs#supported-schemas):
//!   supported types string, number, boolean, integer, object, array, enum,
//!   anyOf; string `pattern` and `format` in {date-time, time, date, duration,
//!   email, hostname, ipv4, ipv6, uuid}; number `multipleOf`, `maximum`,
//!   `exclusiveMaximum`, `minimum`, `exclusiveMinimum`; array `minItems`,
//!   `maxItems`; "root objects must not be anyOf and must be an object"; "all
//!   fields must be required" (optional as a union with null);
//!   "additionalProperties: false must always be set in objects"; "up to 5000
//!   object properties total, with up to 10 levels of nesting"; "up to 1000 enum
//!   values"; not supported: allOf, not, dependentRequired, dependentSchemas,
//!   if, then, else; definitions and recursion supported.
//! - [OPENAI-REF] OpenAI's error for strict schemas, "$ref cannot have keywords
//!   {'description'}" (openai/openai-python#1637, pydantic/pydantic-ai#1488):
//!   a `$ref` stands alone.
//! - [ANTHROPIC] Anthropic Messages API reference, `tools[]`: `name` matches
//!   `^[a-zA-Z0-9_-]{1,64}$`, `input_schema` has `"type": "object"`, and the
//!   API answers "JSON schema is invalid. It must match JSON Schema draft
//!   2020-12" otherwise (anthropics/claude-code#7365).
//! - [GEMINI] Gemini API reference, `FunctionDeclaration` and `Schema` ("a
//!   select subset of an OpenAPI 3.0 schema object"; fields type, format,
//!   title, description, nullable, enum, maxItems, minItems, properties,
//!   required, minProperties, maxProperties, minLength, maxLength, pattern,
//!   example, anyOf, propertyOrdering, default, items, minimum, maximum; `enum`
//!   is `string[]`); formats for the Gemini Developer API: int32/int64,
//!   float/double, date-time/enum (Firebase AI `SchemaShared.format`); errors
//!   "Unknown name \"$ref\"/\"additionalProperties\"/\"$schema\"/\"const\"",
//!   "Proto field is not repeating" for a list in `type`, and "properties:
//!   should be non-empty for OBJECT type" (google-gemini issues quoted in
//!   router-for-me/CLIProxyAPI#97, zed-industries/zed#44875, agno-agi/agno#2112);
//!   function name: starts with a letter or `_`, then a-z A-Z 0-9 `_` `.` `-`,
//!   at most 64.

// Each test crate uses a part of this module.
#![allow(dead_code)]

use serde_json::{json, Map, Value};
use typed_tools::CatalogFormat;

/// Whether `instance` fits `schema`, by a full JSON Schema validator.
pub(crate) fn fits(schema: &Value, instance: &Value) -> bool {
    jsonschema::validator_for(schema)
        .unwrap_or_else(|e| panic!("a usable schema: {e}\n{schema:#}"))
        .is_valid(instance)
}

/// Every subschema of a JSON Schema, the root first, with its JSON pointer.
pub(crate) fn subschemas(schema: &Value) -> Vec<(String, Value)> {
    fn walk(path: String, schema: &Value, out: &mut Vec<(String, Value)>) {
        out.push((path.clone(), schema.clone()));
        let Value::Object(keywords) = schema else {
            return;
        };
        if let Some(child @ Value::Object(_)) = keywords.get("additionalProperties") {
            walk(format!("{path}/additionalProperties"), child, out);
        }
        for key in ["items", "not", "contains", "if", "then", "else"] {
            if let Some(child @ (Value::Object(_) | Value::Bool(_))) = keywords.get(key) {
                walk(format!("{path}/{key}"), child, out);
            }
        }
        for key in ["anyOf", "oneOf", "allOf", "prefixItems"] {
            for (i, child) in keywords
                .get(key)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
            {
                walk(format!("{path}/{key}/{i}"), child, out);
            }
        }
        for key in ["properties", "$defs", "definitions", "patternProperties"] {
            for (name, child) in keywords
                .get(key)
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
            {
                walk(format!("{path}/{key}/{name}"), child, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(String::new(), schema, &mut out);
    out
}

pub(crate) fn keys(value: &Value) -> Vec<&str> {
    value
        .as_object()
        .map(|m| m.keys().map(String::as_str).collect())
        .unwrap_or_default()
}

pub(crate) fn types_of(schema: &Value) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// [OPENAI-FN], as JSON Schemas of one `tools[]` element.
pub(crate) fn openai_shape(format: CatalogFormat) -> Value {
    let name = json!({ "type": "string", "pattern": "^[a-zA-Z0-9_-]{1,64}$" });
    let function = json!({
        "type": "object",
        "required": ["name"],
        "additionalProperties": false,
        "properties": {
            "name": name,
            "description": { "type": "string" },
            "parameters": { "type": "object" },
            "strict": { "type": ["boolean", "null"] }
        }
    });
    match format {
        CatalogFormat::OpenAiChat | CatalogFormat::OpenAiChatStrict => json!({
            "type": "object",
            "required": ["type", "function"],
            "additionalProperties": false,
            "properties": { "type": { "const": "function" }, "function": function }
        }),
        _ => json!({
            "type": "object",
            "required": ["type", "name", "parameters"],
            "additionalProperties": false,
            "properties": {
                "type": { "const": "function" },
                "name": name,
                "description": { "type": "string" },
                "parameters": { "type": ["object", "null"] },
                "strict": { "type": ["boolean", "null"] }
            }
        }),
    }
}

/// Keywords [OPENAI-SO] supports (plus the structure around them).
pub(crate) const OPENAI_STRICT_KEYWORDS: [&str; 22] = [
    "type",
    "description",
    "title",
    "enum",
    "const",
    "anyOf",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "$ref",
    "$defs",
    "definitions",
    "pattern",
    "format",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "minItems",
    "maxItems",
];

pub(crate) const OPENAI_STRING_FORMATS: [&str; 9] = [
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

/// Checks one strict parameters schema against [OPENAI-SO] and [OPENAI-REF].
pub(crate) fn assert_openai_strict(name: &str, schema: &Value) {
    assert_eq!(schema["type"], "object", "{name}: the root is an object");
    assert!(
        schema.get("anyOf").is_none(),
        "{name}: the root is not anyOf"
    );
    let mut properties = 0;
    let mut enum_values = 0;
    for (path, node) in subschemas(schema) {
        let at = format!("{name}{path}");
        let Value::Object(keywords) = &node else {
            panic!("{at}: a boolean schema");
        };
        for key in keywords.keys() {
            assert!(
                OPENAI_STRICT_KEYWORDS.contains(&key.as_str()),
                "{at}: `{key}` is not supported"
            );
        }
        if keywords.contains_key("$ref") {
            assert_eq!(keywords.len(), 1, "{at}: a $ref has no sibling keywords");
            continue;
        }
        assert!(
            ["type", "enum", "const", "anyOf"]
                .iter()
                .any(|k| keywords.contains_key(*k)),
            "{at}: says what the value is"
        );
        if let Some(format) = keywords.get("format").and_then(Value::as_str) {
            assert!(
                OPENAI_STRING_FORMATS.contains(&format),
                "{at}: format `{format}`"
            );
        }
        if types_of(&node).contains(&"object") || keywords.contains_key("properties") {
            assert_eq!(
                node["additionalProperties"], false,
                "{at}: additionalProperties: false"
            );
            let listed = keys(&node["properties"]);
            let required: Vec<&str> = node["required"]
                .as_array()
                .unwrap_or_else(|| panic!("{at}: `required`"))
                .iter()
                .filter_map(Value::as_str)
                .collect();
            assert_eq!(required, listed, "{at}: every property is required");
            properties += listed.len();
        }
        if types_of(&node).contains(&"array") {
            assert!(keywords.contains_key("items"), "{at}: items");
        }
        enum_values += node
            .get("enum")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
    }
    assert!(properties <= 5000, "{name}: at most 5000 properties");
    assert!(enum_values <= 1000, "{name}: at most 1000 enum values");
    assert!(
        nesting(schema, schema, &mut Vec::new()) <= 10,
        "{name}: at most 10 levels"
    );
}

/// Object levels, following each `$ref` once on a path.
pub(crate) fn nesting(root: &Value, schema: &Value, seen: &mut Vec<String>) -> usize {
    let mut deepest = 0;
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        if !seen.iter().any(|s| s == reference) {
            let pointer = reference.trim_start_matches('#');
            if let Some(target) = root.pointer(pointer) {
                seen.push(reference.to_owned());
                deepest = nesting(root, target, seen);
                seen.pop();
            }
        }
    }
    let children = schema
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(Map::values)
        .chain(schema.get("items"))
        .chain(
            schema
                .get("anyOf")
                .and_then(Value::as_array)
                .into_iter()
                .flatten(),
        );
    for child in children {
        deepest = deepest.max(nesting(root, child, seen));
    }
    deepest + usize::from(schema.get("properties").is_some())
}

pub(crate) const GEMINI_SCHEMA_FIELDS: [&str; 22] = [
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "maxItems",
    "minItems",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "example",
    "anyOf",
    "propertyOrdering",
    "default",
    "items",
    "minimum",
    "maximum",
];

/// Checks one parameters schema against [GEMINI], node by node.
pub(crate) fn assert_gemini(name: &str, schema: &Value) {
    assert_eq!(schema["type"], "object", "{name}: parameters are an object");
    for (path, node) in subschemas(schema) {
        let at = format!("{name}{path}");
        let Value::Object(fields) = &node else {
            panic!("{at}: a boolean schema");
        };
        for key in fields.keys() {
            assert!(
                GEMINI_SCHEMA_FIELDS.contains(&key.as_str()),
                "{at}: unknown name `{key}`"
            );
        }
        let the_type = fields.get("type").map(|t| {
            let t = t
                .as_str()
                .unwrap_or_else(|| panic!("{at}: `type` is not repeating"));
            assert!(
                ["string", "number", "integer", "boolean", "array", "object"].contains(&t),
                "{at}: type {t}"
            );
            t
        });
        if let Some(format) = fields.get("format").and_then(Value::as_str) {
            let known = matches!(
                (the_type, format),
                (Some("integer"), "int32" | "int64")
                    | (Some("number"), "float" | "double")
                    | (Some("string"), "date-time" | "enum")
            );
            assert!(known, "{at}: format {format}");
        }
        if let Some(values) = fields.get("enum") {
            assert!(
                values
                    .as_array()
                    .is_some_and(|v| v.iter().all(Value::is_string)),
                "{at}: enum is string[]"
            );
        }
        if let Some(nullable) = fields.get("nullable") {
            assert!(nullable.is_boolean(), "{at}: nullable");
        }
        if the_type == Some("object") {
            let listed = keys(&node["properties"]);
            assert!(
                !listed.is_empty(),
                "{at}: properties should be non-empty for OBJECT type"
            );
            let ordering: Vec<&str> = node["propertyOrdering"]
                .as_array()
                .unwrap_or_else(|| panic!("{at}: propertyOrdering"))
                .iter()
                .filter_map(Value::as_str)
                .collect();
            assert_eq!(ordering, listed, "{at}: declaration order");
            for required in node
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                assert!(
                    listed.contains(&required.as_str().unwrap_or("")),
                    "{at}: required {required}"
                );
            }
        }
        if the_type == Some("array") {
            assert!(fields.contains_key("items"), "{at}: items");
        }
    }
}

/// [ANTHROPIC], as a JSON Schema of one `tools[]` element.
pub(crate) fn anthropic_shape() -> Value {
    json!({
        "type": "object",
        "required": ["name", "input_schema"],
        "additionalProperties": false,
        "properties": {
            "name": { "type": "string", "pattern": "^[a-zA-Z0-9_-]{1,64}$" },
            "description": { "type": "string" },
            "input_schema": {
                "type": "object",
                "required": ["type"],
                "properties": {
                    "type": { "const": "object" },
                    "properties": { "type": ["object", "null"] },
                    "required": { "type": ["array", "null"], "items": { "type": "string" } }
                }
            }
        }
    })
}

/// [GEMINI] `FunctionDeclaration`, as a JSON Schema.
pub(crate) fn gemini_shape() -> Value {
    json!({
        "type": "object",
        "required": ["name"],
        "additionalProperties": false,
        "properties": {
            "name": { "type": "string", "pattern": "^[a-zA-Z_][a-zA-Z0-9_.-]{0,63}$" },
            "description": { "type": "string" },
            "parameters": { "type": "object" }
        }
    })
}
