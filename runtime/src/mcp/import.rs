//! [`Import`]: which of an MCP server's tools join a toolbox, and with which
//! effects.

use std::fmt;
use std::sync::Arc;

use rmcp::model::{CallToolResult, ContentBlock, Tool as McpTool, ToolAnnotations};
use serde_json::Value;

use super::{McpClient, McpError};
use crate::effect::EffectSet;
use crate::schema::SchemaModel;
use crate::tool::DynamicTool;

/// Which of a server's tools to import, and their effects. Effects are
/// declared, never assumed: either you state each tool's effects
/// ([`declared`](Self::declared) then [`tool`](Self::tool)), or you opt into
/// deriving them from the server's annotations
/// ([`from_annotations`](Self::from_annotations)).
///
/// From annotations, a tool gets:
///
/// | annotation | effect |
/// |---|---|
/// | any tool | `Read` (never pure: nothing says a remote tool reads nothing) |
/// | `readOnlyHint` not `true` (MCP's default is `false`) | `Write` |
/// | `openWorldHint` not `false` (MCP's default is `true`) | `Network` |
/// | `idempotentHint: true`, or read-only | safe to retry |
///
/// and a tool with no `annotations` at all is imported as
/// [`Unannotated::Assume`]`(EffectSet::ALL)` (`ReadWriteNetwork`, what MCP's
/// defaults mean), or refused with [`Unannotated::Refuse`]. Annotations are
/// the server's word: derive effects from them only for a server you trust.
///
/// A [`tool`](Self::tool) stated on a policy from annotations overrides the
/// server's word for that tool.
///
/// ```
/// use typed_tools::effect::EffectSet;
/// use typed_tools::mcp::{Import, Unannotated};
///
/// // Only these two tools, with these effects.
/// let declared = Import::declared()
///     .tool("lookup_account", EffectSet::READ)
///     .tool("issue_refund", EffectSet::WRITE);
///
/// // Every tool, effects from the annotations; refuse a tool without any.
/// let trusted = Import::from_annotations().unannotated(Unannotated::Refuse);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Import {
    every_tool: bool,
    declared: Vec<(String, EffectSet)>,
    idempotent: Vec<String>,
    unannotated: Unannotated,
}

/// What [`Import::from_annotations`] does with a tool that has no annotations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Unannotated {
    /// Import it with these effects. The default is `EffectSet::ALL`
    /// (`ReadWriteNetwork`): MCP's own defaults for a tool that says nothing.
    Assume(EffectSet),
    /// Do not import it: [`ImportError::Unannotated`].
    Refuse,
}

impl Import {
    /// Imports only the tools named with [`tool`](Self::tool), each with the
    /// effects stated there. A server tool not named is left out.
    pub fn declared() -> Import {
        Import {
            every_tool: false,
            declared: Vec::new(),
            idempotent: Vec::new(),
            unannotated: Unannotated::Assume(EffectSet::ALL),
        }
    }

    /// Imports every tool the server lists, its effects derived from its
    /// annotations (see the table above).
    pub fn from_annotations() -> Import {
        Import {
            every_tool: true,
            ..Import::declared()
        }
    }

    /// States the effects of tool `name`; importing fails with
    /// [`ImportError::NotOffered`] if the server has no such tool.
    pub fn tool(mut self, name: impl Into<String>, effects: EffectSet) -> Import {
        let name = name.into();
        self.declared.retain(|(declared, _)| *declared != name);
        self.declared.push((name, effects));
        self
    }

    /// Marks tool `name` safe to retry (calling it twice has the effect of
    /// calling it once), so a retry policy may apply to it.
    pub fn idempotent(mut self, name: impl Into<String>) -> Import {
        self.idempotent.push(name.into());
        self
    }

    /// What [`from_annotations`](Self::from_annotations) does with a tool that
    /// has no annotations.
    pub fn unannotated(mut self, unannotated: Unannotated) -> Import {
        self.unannotated = unannotated;
        self
    }

    /// The effects and idempotence of `tool`, or why it is not imported
    /// (`None`: not asked for).
    fn effects_of(&self, tool: &McpTool) -> Option<Result<(EffectSet, bool), ImportError>> {
        let name = tool.name.as_ref();
        let idempotent = self.idempotent.iter().any(|n| n == name);
        if let Some((_, effects)) = self.declared.iter().find(|(n, _)| n == name) {
            return Some(Ok((*effects, idempotent)));
        }
        if !self.every_tool {
            return None;
        }
        Some(match (&tool.annotations, self.unannotated) {
            (Some(annotations), _) => {
                let (effects, hinted) = from_annotations(annotations);
                Ok((effects, idempotent || hinted))
            }
            (None, Unannotated::Assume(effects)) => Ok((effects, idempotent)),
            (None, Unannotated::Refuse) => Err(ImportError::Unannotated {
                name: name.to_owned(),
            }),
        })
    }
}

/// The effects MCP's hints mean, and whether they say the tool may be retried.
fn from_annotations(annotations: &ToolAnnotations) -> (EffectSet, bool) {
    let read_only = annotations.read_only_hint == Some(true);
    let mut effects = EffectSet::READ;
    if !read_only {
        effects |= EffectSet::WRITE;
    }
    if annotations.open_world_hint != Some(false) {
        effects |= EffectSet::NETWORK;
    }
    (
        effects,
        read_only || annotations.idempotent_hint == Some(true),
    )
}

/// Why tools could not be imported.
///
/// ```
/// use typed_tools::effect::EffectSet;
/// use typed_tools::mcp::{Import, ImportError, McpClient, McpServer};
/// use typed_tools::{tool, Toolbox};
///
/// /// Add two numbers.
/// #[tool(effects = Pure)]
/// fn add(a: i64, b: i64) -> i64 { a + b }
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let (ours, theirs) = tokio::io::duplex(4096);
/// let (read, write) = tokio::io::split(theirs);
/// tokio::spawn(McpServer::new(Toolbox::builder().tool(Add).build()?).serve_io(read, write));
/// let client = McpClient::connect("calculator", ours).await?;
///
/// let error = client.import(&Import::declared().tool("sum", EffectSet::PURE)).await.unwrap_err();
/// assert_eq!(error, ImportError::NotOffered { name: "sum".into(), offered: vec!["add".into()] });
/// assert_eq!(error.to_string(), "the MCP server has no tool `sum`; it offers: add");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ImportError {
    /// The server's tools could not be listed.
    Connection(McpError),
    /// A tool stated with [`Import::tool`] is not among the server's tools.
    NotOffered {
        /// The name stated.
        name: String,
        /// The tools the server lists.
        offered: Vec<String>,
    },
    /// [`Unannotated::Refuse`] and a tool without annotations.
    Unannotated {
        /// The tool.
        name: String,
    },
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ImportError::Connection(error) => error.fmt(f),
            ImportError::NotOffered { name, offered } => write!(
                f,
                "the MCP server has no tool `{name}`; it offers: {}",
                offered.join(", ")
            ),
            ImportError::Unannotated { name } => write!(
                f,
                "tool `{name}` has no annotations to derive its effects from; \
                 state them with `Import::tool`, or import unannotated tools with `Unannotated::Assume`"
            ),
        }
    }
}

impl std::error::Error for ImportError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ImportError::Connection(error) => Some(error),
            _ => None,
        }
    }
}

/// The server's tools that `import` asks for, as run-time tools calling
/// `client`.
pub(super) fn tools(
    client: &McpClient,
    import: &Import,
    offered: Vec<McpTool>,
) -> Result<Vec<DynamicTool>, ImportError> {
    for (name, _) in &import.declared {
        if !offered.iter().any(|tool| tool.name == name.as_str()) {
            return Err(ImportError::NotOffered {
                name: name.clone(),
                offered: offered.iter().map(|tool| tool.name.to_string()).collect(),
            });
        }
    }
    let mut tools = Vec::new();
    for tool in offered {
        if let Some(effects) = import.effects_of(&tool) {
            let (effects, idempotent) = effects?;
            tools.push(dynamic(client, tool, effects, idempotent));
        }
    }
    Ok(tools)
}

fn dynamic(client: &McpClient, tool: McpTool, effects: EffectSet, idempotent: bool) -> DynamicTool {
    let name: Arc<str> = Arc::from(tool.name.as_ref());
    let output_schema = tool
        .output_schema
        .as_ref()
        .map(|schema| Value::Object((**schema).clone()));
    // The result is checked against the schema the server advertised, so that
    // a plan type-checked against it never meets another shape at run time.
    let output_model = output_schema
        .as_ref()
        .map(|schema| Arc::new(SchemaModel::new(schema)));
    let client = client.clone();
    let mut dynamic = DynamicTool::new(tool.name.to_string())
        .description(tool.description.as_deref().unwrap_or_default())
        .input_schema(Value::Object((*tool.input_schema).clone()))
        .effects(effects)
        .idempotent(idempotent)
        .handler(move |arguments: Value| {
            let call = client.call_for_toolbox(Arc::clone(&name), arguments);
            let name = Arc::clone(&name);
            let output_model = output_model.clone();
            async move {
                let result = call.await.map_err(|error| error.to_string())?;
                output(&name, result, output_model.as_deref())
            }
        });
    if let Some(schema) = output_schema {
        dynamic = dynamic.output_schema(schema);
    }
    dynamic
}

/// What an imported tool returns: the structured content if there is one,
/// else the text (a string), else the content blocks as JSON; a result marked
/// `isError` is the tool's error, with its text.
fn output(
    name: &str,
    result: CallToolResult,
    output_model: Option<&SchemaModel>,
) -> Result<Value, String> {
    if result.is_error == Some(true) {
        return Err(text(&result.content)
            .unwrap_or_else(|| serde_json::to_string(&result.content).unwrap_or_default()));
    }
    let value = match (result.structured_content, text(&result.content)) {
        (Some(structured), _) => structured,
        (None, Some(text)) => Value::String(text),
        (None, None) => serde_json::to_value(&result.content).unwrap_or(Value::Null),
    };
    if let Some(model) = output_model {
        let problems = model.check(&value);
        if let Some(problem) = problems.first() {
            return Err(format!(
                "the MCP server's result for `{name}` does not match its outputSchema: {problem}"
            ));
        }
    }
    Ok(value)
}

/// The content's text, when every block is text.
fn text(content: &[ContentBlock]) -> Option<String> {
    let texts: Option<Vec<&str>> = content
        .iter()
        .map(|block| block.as_text().map(|text| text.text.as_str()))
        .collect();
    texts.map(|texts| texts.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::effect::Effect;

    fn annotated(annotations: Option<ToolAnnotations>) -> McpTool {
        let mut tool = McpTool::new("t", "", serde_json::Map::new());
        tool.annotations = annotations;
        tool
    }

    #[test]
    fn effects_from_annotations_are_never_pure() {
        let import = Import::from_annotations();
        let effects = |annotations| import.effects_of(&annotated(annotations)).unwrap().unwrap();
        let read_only = ToolAnnotations::new().read_only(true).open_world(false);
        assert_eq!(effects(Some(read_only)), (EffectSet::READ, true));
        let closed_writer = ToolAnnotations::new().read_only(false).open_world(false);
        assert_eq!(
            effects(Some(closed_writer)),
            (EffectSet::READ | EffectSet::WRITE, false)
        );
        let idempotent = ToolAnnotations::new().idempotent(true).open_world(false);
        assert_eq!(
            effects(Some(idempotent)),
            (EffectSet::READ | EffectSet::WRITE, true)
        );
        // Empty annotations mean MCP's defaults: a writer in the open world.
        assert_eq!(
            effects(Some(ToolAnnotations::new())),
            (EffectSet::ALL, false)
        );
        assert_eq!(effects(None), (EffectSet::ALL, false));
        assert!(effects(None).0.contains(Effect::Network));
    }

    #[test]
    fn unannotated_tools_can_be_refused_and_declared_effects_win() {
        let refuse = Import::from_annotations().unannotated(Unannotated::Refuse);
        assert_eq!(
            refuse.effects_of(&annotated(None)),
            Some(Err(ImportError::Unannotated { name: "t".into() }))
        );
        let stated = refuse.tool("t", EffectSet::PURE);
        assert_eq!(
            stated.effects_of(&annotated(None)),
            Some(Ok((EffectSet::PURE, false)))
        );
        assert_eq!(Import::declared().effects_of(&annotated(None)), None);
    }
}
