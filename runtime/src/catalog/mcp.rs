//! [`CatalogFormat::Mcp`](super::CatalogFormat::Mcp): an entry of a `tools/list`
//! result, as in the MCP schema of protocol revision 2025-11-25 (`Tool`,
//! `ToolAnnotations`).

use serde_json::{json, Value};

use crate::tool::ToolSpec;

/// `{"name", "title"?, "description", "inputSchema", "outputSchema"?,
/// "annotations"}`.
pub(super) fn tool(spec: &ToolSpec) -> Value {
    let mut entry = super::named(spec);
    if let Some(title) = spec.title() {
        // `Tool.title` (from `BaseMetadata`) is what a client shows; the
        // same in `annotations.title` for clients of the 2025-03-26 schema,
        // where only the annotation existed.
        entry.insert("title".into(), Value::String(title.to_owned()));
    }
    // MCP takes JSON Schema 2020-12 (its default dialect) with `$schema`
    // allowed, and requires `"type": "object"` at the root; the toolbox checks
    // that for every tool it admits.
    entry.insert("inputSchema".into(), spec.input_schema().clone());
    if is_object_schema(spec.output_schema()) {
        entry.insert("outputSchema".into(), spec.output_schema().clone());
    }
    entry.insert("annotations".into(), annotations(spec));
    Value::Object(entry)
}

/// MCP's `outputSchema` is "restricted to `type: \"object\"` at the root",
/// because it describes `structuredContent`, which is a JSON object.
fn is_object_schema(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("object")
}

/// The four hints, always explicit: an absent hint means the worst
/// (`readOnlyHint: false`, `destructiveHint: true`, `idempotentHint: false`,
/// `openWorldHint: true`); the title when there is one.
fn annotations(spec: &ToolSpec) -> Value {
    let read_only = spec.effects().is_read_only();
    let mut hints = json!({
        "readOnlyHint": read_only,
        // "If true, the tool may perform destructive updates to its
        // environment. If false, the tool performs only additive updates":
        // a writer unless declared `destructive = false`; false for a tool
        // that does not write.
        "destructiveHint": spec.is_destructive(),
        // "calling the tool repeatedly with the same arguments will have no
        // additional effect on its environment": true of every tool that does
        // not modify its environment, and of a writer declared idempotent.
        "idempotentHint": read_only || spec.is_idempotent(),
        "openWorldHint": spec.is_open_world(),
    });
    if let (Some(title), Value::Object(hints)) = (spec.title(), &mut hints) {
        hints.insert("title".into(), Value::String(title.to_owned()));
    }
    hints
}
