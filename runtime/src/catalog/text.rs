//! [`CatalogFormat::Text`](super::CatalogFormat::Text): one λ-Tool signature a line.

use serde_json::{Map, Value};

use crate::schema;
use crate::tool::ToolSpec;

/// `tool lookup_account: {id: String} -{Read}-> {id: String, email: String}`,
/// followed by the description's first line as a `--` comment.
///
/// Deterministic: the types are written from the schemas in their own order
/// (parameters in declaration order), and nothing depends on a hash map.
pub(super) fn line(spec: &ToolSpec) -> String {
    let mut line = format!(
        "tool {}: {} -{}-> {}",
        spec.name(),
        type_name(spec.input_schema()),
        spec.effects(),
        type_name(spec.output_schema()),
    );
    let summary = spec.description().lines().next().unwrap_or("").trim();
    if !summary.is_empty() {
        line.push_str("  -- ");
        line.push_str(summary);
    }
    line
}

/// Past this many nodes, references are named instead of inlined.
const MAX_NODES: usize = 2_000;
/// Past this many references inside one another, the same.
const MAX_NESTING: usize = 32;

/// The schema's type in λ-Tool notation, a recursive type written once: its
/// references to itself by name (`{name: String, children: [Folder]}`).
fn type_name(schema: &Value) -> String {
    let mut budget = MAX_NODES;
    schema::type_name(&unfold(schema, schema, &mut Vec::new(), &mut budget))
}

/// `schema` with every `$ref` inlined, except one back into a type being
/// inlined: that becomes `{"type": "Name"}`, which
/// [`schema::type_name`] writes as `Name`.
fn unfold(root: &Value, schema: &Value, inlining: &mut Vec<String>, budget: &mut usize) -> Value {
    *budget = budget.saturating_sub(1);
    let Value::Object(keywords) = schema else {
        return schema.clone();
    };
    if let Some(reference) = keywords.get("$ref").and_then(Value::as_str) {
        let name = match reference.rsplit('/').next() {
            Some(name) if !name.is_empty() && name != "#" => name,
            _ => "Self",
        };
        let named = || serde_json::json!({ "type": name });
        let recurs = inlining.iter().any(|r| r == reference);
        if recurs || *budget == 0 || inlining.len() >= MAX_NESTING {
            return named();
        }
        let Some(target) = schema::resolve(root, reference) else {
            return named();
        };
        inlining.push(reference.to_owned());
        let out = unfold(root, target, inlining, budget);
        inlining.pop();
        return out;
    }
    let mut out = Map::new();
    for (key, value) in keywords {
        let value = match key.as_str() {
            "$defs" | "definitions" => continue,
            "properties" | "patternProperties" => Value::Object(
                value
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(k, v)| (k.clone(), unfold(root, v, inlining, budget)))
                    .collect(),
            ),
            "anyOf" | "oneOf" | "allOf" | "prefixItems" => Value::Array(
                value
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|v| unfold(root, v, inlining, budget))
                    .collect(),
            ),
            "items" | "additionalProperties" => unfold(root, value, inlining, budget),
            _ => value.clone(),
        };
        out.insert(key.clone(), value);
    }
    Value::Object(out)
}
