//! Catalogs: a toolbox's tools rendered for a model's prompt or a provider's API.
//!
//! One [`CatalogFormat`] per target. Each is rendered from the tools'
//! [`ToolSpec`]s, once per toolbox (see [`Toolbox::catalog`](crate::Toolbox::catalog)).

use std::fmt;
use std::sync::Arc;

use serde::{Serialize, Serializer};
use serde_json::{json, Value};

use crate::schema;
use crate::tool::ToolSpec;

/// A target format for a catalog.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CatalogFormat {
    /// OpenAI Chat Completions `tools`: `[{"type": "function", "function": {...}}]`.
    OpenAiChat,
    /// OpenAI Chat Completions `tools` with `"strict": true` and schemas that
    /// follow the strict-mode rules.
    OpenAiChatStrict,
    /// OpenAI Responses API function tools: `[{"type": "function", "name": ...}]`.
    OpenAiResponses,
    /// OpenAI Responses API function tools in strict mode.
    OpenAiResponsesStrict,
    /// Anthropic Messages `tools`: `[{"name", "description", "input_schema"}]`.
    Anthropic,
    /// An MCP `tools/list` result: `{"tools": [{"name", "inputSchema", "annotations", ...}]}`.
    Mcp,
    /// A Gemini `Tool`: `{"functionDeclarations": [...]}` in Gemini's OpenAPI subset.
    Gemini,
    /// Compact λ-Tool signatures for a system prompt, one tool a line.
    Text,
}

impl CatalogFormat {
    /// Every format.
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
}

/// A rendered catalog: JSON for the provider formats, text for [`CatalogFormat::Text`].
///
/// `Display` writes pretty JSON, or the text. Cloning is cheap.
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
    pub fn format(&self) -> CatalogFormat {
        self.format
    }

    /// The JSON, for the provider formats.
    pub fn as_json(&self) -> Option<&Value> {
        match &self.body {
            Body::Json(value) => Some(value),
            Body::Text(_) => None,
        }
    }

    /// The JSON, for the provider formats; the text as a JSON string for [`CatalogFormat::Text`].
    pub fn to_json(&self) -> Value {
        match &self.body {
            Body::Json(value) => Value::clone(value),
            Body::Text(text) => Value::String(text.to_string()),
        }
    }

    /// The text, for [`CatalogFormat::Text`].
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

/// Renders `tools` in `format`.
pub fn render(format: CatalogFormat, tools: &[&ToolSpec]) -> Catalog {
    let body = match format {
        CatalogFormat::Text => Body::Text(
            tools
                .iter()
                .map(|t| text_line(t))
                .collect::<Vec<_>>()
                .join("\n")
                .into(),
        ),
        CatalogFormat::Mcp => Body::Json(Arc::new(json!({ "tools": entries(format, tools) }))),
        CatalogFormat::Gemini => Body::Json(Arc::new(
            json!({ "functionDeclarations": entries(format, tools) }),
        )),
        _ => Body::Json(Arc::new(Value::Array(entries(format, tools)))),
    };
    Catalog { format, body }
}

fn entries(format: CatalogFormat, tools: &[&ToolSpec]) -> Vec<Value> {
    tools.iter().map(|spec| render_tool(format, spec)).collect()
}

/// One tool's entry in `format` (for [`CatalogFormat::Text`], its line as a JSON string).
pub fn render_tool(format: CatalogFormat, spec: &ToolSpec) -> Value {
    let input = spec.input_schema().clone();
    match format {
        CatalogFormat::OpenAiChat | CatalogFormat::OpenAiChatStrict => json!({
            "type": "function",
            "function": { "name": spec.name(), "description": spec.description(), "parameters": input }
        }),
        CatalogFormat::OpenAiResponses | CatalogFormat::OpenAiResponsesStrict => json!({
            "type": "function", "name": spec.name(), "description": spec.description(), "parameters": input
        }),
        CatalogFormat::Anthropic => json!({
            "name": spec.name(), "description": spec.description(), "input_schema": input
        }),
        CatalogFormat::Mcp => json!({
            "name": spec.name(), "description": spec.description(), "inputSchema": input
        }),
        CatalogFormat::Gemini => json!({
            "name": spec.name(), "description": spec.description(), "parameters": input
        }),
        CatalogFormat::Text => Value::String(text_line(spec)),
    }
}

/// `tool lookup_account: {id: String} -{Read}-> {id: String, email: String}`,
/// followed by the description as a `--` comment.
fn text_line(spec: &ToolSpec) -> String {
    let mut line = format!(
        "tool {}: {} -{}-> {}",
        spec.name(),
        schema::type_name(spec.input_schema()),
        spec.effects(),
        schema::type_name(spec.output_schema()),
    );
    let summary = spec.description().lines().next().unwrap_or("").trim();
    if !summary.is_empty() {
        line.push_str("  -- ");
        line.push_str(summary);
    }
    line
}
