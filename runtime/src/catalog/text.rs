//! [`CatalogFormat::Text`](super::CatalogFormat::Text): one λ-Tool signature a line.

use crate::tool::ToolSpec;

/// `tool lookup_account: {id: String} -{Read}-> {id: String, email: String}`,
/// followed by the description's first paragraph, on one line, as a `--`
/// comment.
///
/// Deterministic: the types are written from the schemas in their own order
/// (parameters in declaration order), and nothing depends on a hash map.
pub(super) fn line(spec: &ToolSpec) -> String {
    let mut line = format!(
        "tool {}: {} -{}-> {}",
        spec.name(),
        spec.input_model().type_name(),
        spec.effects(),
        spec.output_model().type_name(),
    );
    let summary = crate::doc::summary(spec.description());
    if !summary.is_empty() {
        line.push_str("  -- ");
        line.push_str(&summary);
    }
    line
}
