//! Doc comments into descriptions.
//!
//! `#[tool]` passes a fn's `#[doc]` values through as they are (so `include_str!`
//! works); the rules that turn them into a tool description and per-argument
//! descriptions live here, as plain functions.
//!
//! The rules, after rustdoc's conventions:
//! - each line loses one leading space (the one after `///`) and its trailing
//!   white space; blank lines at the start and end are dropped;
//! - a section headed `# Arguments` (or `# Parameters`) lists the arguments as
//!   `` * `name` - text `` (also `-` bullets, `:` separators, and bare names);
//!   an entry continues on indented lines. That section is taken out of the
//!   description and its entries describe the input schema's properties;
//! - other sections (`# Errors`, `# Examples`, ...) stay in the description.
//!
//! ```
//! use typed_tools::doc::ToolDoc;
//!
//! let doc = ToolDoc::parse(&[
//!     " Look up a customer account.",
//!     "",
//!     " # Arguments",
//!     "",
//!     " * `id` - The account id,",
//!     "   as printed on the invoice.",
//! ]);
//! assert_eq!(doc.description, "Look up a customer account.");
//! assert_eq!(doc.argument("id"), Some("The account id, as printed on the invoice."));
//! ```

/// A tool's doc comment, split into its description and its argument list.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ToolDoc {
    /// The description, without the `# Arguments` section.
    pub description: String,
    /// The `# Arguments` entries, in order: (argument name, description).
    pub arguments: Vec<(String, String)>,
}

impl ToolDoc {
    /// Splits the `#[doc]` values of a tool fn; see the [module docs](self) for the rules.
    pub fn parse(lines: &[&str]) -> ToolDoc {
        let lines = normalize(lines);
        let mut description: Vec<&str> = Vec::new();
        let mut arguments: Vec<(String, String)> = Vec::new();
        let mut in_arguments = false;
        let mut in_code = false;
        for line in &lines {
            let trimmed = line.trim();
            if trimmed.starts_with("```") {
                in_code = !in_code;
            }
            if !in_code && trimmed.starts_with('#') && !trimmed.starts_with("#[") {
                let heading = trimmed.trim_start_matches('#').trim().to_ascii_lowercase();
                in_arguments = matches!(
                    heading.as_str(),
                    "arguments" | "parameters" | "args" | "params"
                );
                if in_arguments {
                    continue;
                }
            }
            if !in_arguments {
                description.push(line);
                continue;
            }
            if let Some((name, text)) = argument_entry(trimmed) {
                arguments.push((name, text));
            } else if let (Some(last), false) = (arguments.last_mut(), trimmed.is_empty()) {
                if !last.1.is_empty() {
                    last.1.push(' ');
                }
                last.1.push_str(trimmed);
            }
        }
        ToolDoc {
            description: trim_blank_lines(&description).join("\n"),
            arguments,
        }
    }

    /// The description of argument `name` from the `# Arguments` section.
    pub fn argument(&self, name: &str) -> Option<&str> {
        self.arguments
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, text)| text.as_str())
    }
}

/// Splits values that hold several lines (`include_str!`, `#[doc = "a\nb"]`),
/// drops the one space after `///` and trailing white space.
fn normalize<'a>(lines: &[&'a str]) -> Vec<&'a str> {
    lines
        .iter()
        // `split`, not `lines`: an empty `///` line is a paragraph break.
        .flat_map(|value| value.strip_suffix('\n').unwrap_or(value).split('\n'))
        .map(|line| line.strip_prefix(' ').unwrap_or(line).trim_end())
        .collect()
}

fn trim_blank_lines<'a, 'b>(lines: &'b [&'a str]) -> &'b [&'a str] {
    let start = lines
        .iter()
        .position(|l| !l.is_empty())
        .unwrap_or(lines.len());
    let end = lines
        .iter()
        .rposition(|l| !l.is_empty())
        .map_or(start, |i| i + 1);
    &lines[start..end]
}

/// `` * `name` - text ``, `- name: text`, `` `name`: text ``, `name - text`.
fn argument_entry(line: &str) -> Option<(String, String)> {
    let rest = line
        .strip_prefix("* ")
        .or_else(|| line.strip_prefix("- "))
        .unwrap_or(line)
        .trim_start();
    let (name, after) = if let Some(quoted) = rest.strip_prefix('`') {
        let end = quoted.find('`')?;
        (&quoted[..end], &quoted[end + 1..])
    } else {
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        (&rest[..end], &rest[end..])
    };
    let is_ident = !name.is_empty()
        && name.chars().all(|c| c.is_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit());
    if !is_ident {
        return None;
    }
    let after = after.trim_start();
    let text = after
        .strip_prefix("- ")
        .or_else(|| after.strip_prefix(": "))
        .or_else(|| after.strip_prefix(':'))
        .or_else(|| after.strip_prefix("— "))
        .or_else(|| after.strip_prefix("-- "));
    match text {
        Some(text) => Some((name.to_owned(), text.trim().to_owned())),
        // A bare `` * `name` `` entry, described on the following lines.
        None if after.is_empty() && line != rest => Some((name.to_owned(), String::new())),
        None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_doc_comment_is_the_description() {
        let doc = ToolDoc::parse(&[" Send a reply.", "", " Second paragraph."]);
        assert_eq!(doc.description, "Send a reply.\n\nSecond paragraph.");
        assert!(doc.arguments.is_empty());
    }

    #[test]
    fn arguments_section_is_taken_out_and_other_sections_stay() {
        let doc = ToolDoc::parse(&[
            " Refund a charge.",
            "",
            " # Arguments",
            " * `account_id` - Whose charge.",
            " * `amount` - In cents.",
            "",
            " # Errors",
            " Fails when the account is closed.",
        ]);
        assert_eq!(
            doc.description,
            "Refund a charge.\n\n# Errors\nFails when the account is closed."
        );
        assert_eq!(doc.argument("account_id"), Some("Whose charge."));
        assert_eq!(doc.argument("amount"), Some("In cents."));
    }

    #[test]
    fn bullet_styles() {
        let doc = ToolDoc::parse(&[
            "# Parameters",
            "- city: The city.",
            "* `days`: How many days",
            "  ahead.",
            "units - Metric or imperial.",
        ]);
        assert_eq!(doc.argument("city"), Some("The city."));
        assert_eq!(doc.argument("days"), Some("How many days ahead."));
        assert_eq!(doc.argument("units"), Some("Metric or imperial."));
        assert_eq!(doc.description, "");
    }

    #[test]
    fn include_str_values_are_split_into_lines() {
        let doc = ToolDoc::parse(&["First line.\nSecond line.\n\n# Arguments\n* `x` - An x.\n"]);
        assert_eq!(doc.description, "First line.\nSecond line.");
        assert_eq!(doc.argument("x"), Some("An x."));
    }

    #[test]
    fn headings_inside_code_blocks_are_not_sections() {
        let doc = ToolDoc::parse(&[" Run it.", " ```", " # Arguments", " ```"]);
        assert_eq!(doc.description, "Run it.\n```\n# Arguments\n```");
    }
}
