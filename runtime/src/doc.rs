//! Doc comments into descriptions.
//!
//! `#[tool]` passes a fn's `#[doc]` values through as they are (so `include_str!`
//! works); the rules that turn them into a tool description and per-argument
//! descriptions live here, as plain functions.
//!
//! The rules, after rustdoc's conventions:
//! - each line loses one leading space (the one after `///`); blank lines at
//!   the start and end are dropped;
//! - the lines of one paragraph are joined with a space, as rustdoc renders
//!   them: a doc comment wrapped at 80 columns is one line of text per
//!   paragraph, and a blank line separates paragraphs. What Markdown puts on
//!   lines of their own stays there: list items (a wrapped item is joined
//!   too), headings, code blocks (fenced or indented, kept as written),
//!   block quotes, table rows, rules, and hard breaks (a line ending in two
//!   spaces or a backslash);
//! - a section headed `# Arguments` (or `# Parameters`) lists the arguments as
//!   `` * `name` - text `` (also `-` bullets, `:` separators, and bare names);
//!   an entry continues on indented lines, joined with a space. That section
//!   is taken out of the description and its entries describe the input
//!   schema's properties;
//! - other sections (`# Errors`, `# Examples`, ...) stay in the description.
//!
//! ```
//! use typed_tools::doc::ToolDoc;
//!
//! let doc = ToolDoc::parse(&[
//!     " Look up a customer account by its id; returns the",
//!     " account, or an error when there is none.",
//!     "",
//!     " # Arguments",
//!     "",
//!     " * `id` - The account id,",
//!     "   as printed on the invoice.",
//! ]);
//! assert_eq!(
//!     doc.description,
//!     "Look up a customer account by its id; returns the account, or an error when there is none."
//! );
//! assert_eq!(doc.argument("id"), Some("The account id, as printed on the invoice."));
//! ```

use crate::markdown::{Fence, ListMarker};

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
        // The fence of the code block the line is in, if any.
        let mut code: Option<Fence> = None;
        for line in &lines {
            let trimmed = line.trim();
            let in_code = match code {
                Some(fence) => {
                    if fence.closes(trimmed) {
                        code = None;
                    }
                    true
                }
                None => {
                    code = Fence::open(trimmed).map(|(fence, _)| fence);
                    code.is_some()
                }
            };
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
            description: join_lines(trim_blank_lines(&description)),
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

/// Splits values that hold several lines (`include_str!`, `#[doc = "a\nb"]`)
/// and drops the one space after `///`. Trailing white space stays until
/// the lines are joined: two spaces there are a hard break.
fn normalize<'a>(lines: &[&'a str]) -> Vec<&'a str> {
    lines
        .iter()
        // `split`, not `lines`: an empty `///` line is a paragraph break.
        .flat_map(|value| value.strip_suffix('\n').unwrap_or(value).split('\n'))
        // A `\r` is what is left of a `\r\n` line end in an `include_str!`ed file.
        .map(|line| line.strip_suffix('\r').unwrap_or(line))
        .map(|line| line.strip_prefix(' ').unwrap_or(line))
        .collect()
}

fn trim_blank_lines<'a, 'b>(lines: &'b [&'a str]) -> &'b [&'a str] {
    let is_text = |line: &&str| !line.trim().is_empty();
    let start = lines.iter().position(is_text).unwrap_or(lines.len());
    let end = lines.iter().rposition(is_text).map_or(start, |i| i + 1);
    &lines[start..end]
}

/// Text from a doc comment (a parameter's `///`, as schemars' derive passes
/// it on: lines joined by `\n`) with the lines of each paragraph joined, by
/// the rules of the [module docs](self).
pub(crate) fn join_text(text: &str) -> String {
    let lines: Vec<&str> = text.split('\n').collect();
    join_lines(trim_blank_lines(&lines))
}

/// The first paragraph of a description, on one line: what the compact
/// text catalog shows. It ends at a blank line, a heading or a code block;
/// the lines before are joined with a space (a tool made at run time, or
/// imported over MCP, may wrap its description's lines), so it is never
/// cut mid-sentence.
pub(crate) fn summary(description: &str) -> String {
    let mut summary = String::new();
    for line in description.lines() {
        let line = line.trim();
        if line.is_empty() && summary.is_empty() {
            continue;
        }
        if line.is_empty() || is_heading(line) || Fence::open(line).is_some() {
            break;
        }
        if !summary.is_empty() {
            summary.push(' ');
        }
        summary.push_str(line);
    }
    summary
}

/// Where the previous line leaves the text.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Block {
    /// Nothing written yet.
    Start,
    /// A paragraph or a list item: the next line may continue it.
    Text,
    /// A line that no other continues: a heading, a quote, a table row, a
    /// rule, a closed code block.
    Line,
    /// Inside a fenced code block opened by this fence.
    Fenced(Fence),
    /// Inside a code block indented by four spaces.
    Indented,
}

/// The lines of a description joined as rustdoc renders them: the lines of
/// a paragraph (or of one list item) with a space, hard breaks kept as line
/// breaks, a blank line between paragraphs, and what Markdown puts on lines
/// of their own on lines of their own; code blocks as written.
fn join_lines(lines: &[&str]) -> String {
    let mut out = String::new();
    let mut block = Block::Start;
    // Blank lines since the last line written.
    let mut blanks = 0;
    // Inside a list: any item marker starts an item, and an indented
    // paragraph after a blank line belongs to the item.
    let mut in_list = false;
    // How the last line of text ended: `Some(true)` a backslash, `Some(false)`
    // two spaces (hard breaks, if a line of the same paragraph follows).
    let mut hard_break = None;
    for line in lines {
        let text = line.trim_end();
        let trimmed = text.trim_start();
        let indent = text.len() - trimmed.len();
        if let Block::Fenced(fence) = block {
            out.push('\n');
            out.push_str(text);
            if fence.closes(trimmed) {
                block = Block::Line;
            }
            continue;
        }
        if trimmed.is_empty() {
            blanks += 1;
            continue;
        }
        let ended_with = hard_break.take();
        if block == Block::Indented && indent >= 4 {
            // Blank lines inside a code block are its own.
            out.push_str(&"\n".repeat(blanks + 1));
            out.push_str(text);
            blanks = 0;
            continue;
        }
        if blanks == 0 && block == Block::Text && !interrupts(trimmed, in_list) {
            // The paragraph goes on.
            match ended_with {
                Some(backslash) => {
                    if backslash {
                        out.pop();
                    }
                    out.push('\n');
                }
                None => out.push(' '),
            }
            out.push_str(trimmed);
        } else {
            if !out.is_empty() {
                out.push_str(if blanks > 0 { "\n\n" } else { "\n" });
            }
            let code_may_start = blanks > 0 || block != Block::Text;
            if let Some((fence, _)) = Fence::open(trimmed) {
                block = Block::Fenced(fence);
                in_list = false;
                out.push_str(text);
            } else if in_list && blanks > 0 && indent >= 2 {
                // A paragraph of the list item above: indented as written.
                block = Block::Text;
                out.push_str(text);
            } else if code_may_start && indent >= 4 {
                block = Block::Indented;
                in_list = false;
                out.push_str(text);
            } else if is_line_of_its_own(trimmed) {
                block = Block::Line;
                in_list = false;
                out.push_str(trimmed);
            } else if list_item(trimmed).is_some() {
                block = Block::Text;
                in_list = true;
                // A nested item keeps its indentation.
                out.push_str(text);
            } else {
                block = Block::Text;
                in_list = false;
                out.push_str(trimmed);
            }
        }
        blanks = 0;
        if block == Block::Text {
            hard_break = if line.ends_with("  ") {
                Some(false)
            } else if text.ends_with('\\') {
                Some(true)
            } else {
                None
            };
        }
    }
    out
}

/// Whether a line that follows a paragraph or list item without a blank
/// line starts something else, as CommonMark has it.
fn interrupts(trimmed: &str, in_list: bool) -> bool {
    if Fence::open(trimmed).is_some() || is_line_of_its_own(trimmed) {
        return true;
    }
    match list_item(trimmed) {
        // In a list, every marker starts an item.
        Some(_) if in_list => true,
        // A list starts inside a paragraph only with a bullet and text, or
        // at `1.`: a wrapped line that begins `2024. ` goes on.
        Some(Marker::Bullet { empty }) => !empty,
        Some(Marker::Ordered { number }) => number == 1,
        None => false,
    }
}

/// A heading, a block quote, a table row, a rule (or a heading's underline).
fn is_line_of_its_own(trimmed: &str) -> bool {
    is_heading(trimmed) || trimmed.starts_with('>') || trimmed.starts_with('|') || is_rule(trimmed)
}

/// `# Heading`: one to six `#` and a space, or `#` alone.
fn is_heading(trimmed: &str) -> bool {
    let hashes = trimmed.bytes().take_while(|&b| b == b'#').count();
    (1..=6).contains(&hashes) && matches!(trimmed.as_bytes().get(hashes), None | Some(b' ' | b'\t'))
}

/// `---`, `***`, `___` (spaces between allowed), or a heading's underline,
/// `===` or `---` of any length.
fn is_rule(trimmed: &str) -> bool {
    let Some(first) = trimmed.chars().next() else {
        return false;
    };
    let marks = trimmed.chars().filter(|c| !c.is_whitespace());
    match first {
        '-' | '*' | '_' => marks.clone().all(|c| c == first) && marks.count() >= 3,
        '=' => trimmed.chars().all(|c| c == '='),
        _ => false,
    }
}

/// A list item's marker.
enum Marker {
    /// `-`, `*` or `+`; `empty` when no text follows it on the line.
    Bullet { empty: bool },
    /// `1.` or `1)`.
    Ordered { number: u64 },
}

fn list_item(trimmed: &str) -> Option<Marker> {
    let marker = ListMarker::of(trimmed)?;
    Some(match marker.number {
        None => Marker::Bullet {
            empty: trimmed[marker.len..].trim().is_empty(),
        },
        Some(number) => Marker::Ordered { number },
    })
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

    /// A tilde fence is a code block as a backtick fence is, and a fence
    /// closes only at a fence of its character at least as long, with no
    /// info string (`crate::markdown`): a `# Arguments` line in either is
    /// the code's, not the arguments section.
    #[test]
    fn a_heading_in_any_code_block_is_code() {
        for (open, inner, close) in [("~~~", "", "~~~"), ("````", "```text", "````")] {
            let mut lines = vec![" Run a script.", "", " Like this:", "", open];
            lines.extend(["# Arguments", "* `x` - not an argument"]);
            if !inner.is_empty() {
                lines.push(inner);
            }
            lines.extend([close, "", "# Arguments", "* `path` - The script."]);
            let doc = ToolDoc::parse(&lines);
            assert!(
                doc.description
                    .contains("# Arguments\n* `x` - not an argument"),
                "{open}: {:?}",
                doc.description
            );
            assert_eq!(
                doc.arguments,
                [("path".to_owned(), "The script.".to_owned())],
                "{open}"
            );
        }
    }

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
        assert_eq!(doc.description, "First line. Second line.");
        assert_eq!(doc.argument("x"), Some("An x."));
        // Windows line ends.
        let doc = ToolDoc::parse(&["First line,\r\nsecond line.\r\n\r\nMore.\r\n"]);
        assert_eq!(doc.description, "First line, second line.\n\nMore.");
    }

    /// `///` lines as rustc passes them, each with its leading space.
    fn description(lines: &[&str]) -> String {
        let lines: Vec<String> = lines.iter().map(|line| format!(" {line}")).collect();
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        ToolDoc::parse(&lines).description
    }

    #[test]
    fn the_lines_of_a_paragraph_are_joined() {
        assert_eq!(
            description(&[
                "Look up a customer account by its id; returns the",
                "account, or an error when there is none.",
                "",
                "",
                "Reads the accounts table",
                "  (indented lines join too).",
            ]),
            "Look up a customer account by its id; returns the account, or an error when there is none.\n\n\
             Reads the accounts table (indented lines join too)."
        );
    }

    #[test]
    fn list_items_keep_their_lines_and_a_wrapped_item_is_joined() {
        assert_eq!(
            description(&[
                "Modes:",
                "- `fast`: skips the",
                "  checks;",
                "- `safe`: checks",
                "every row.",
                "  * nested, wrapped",
                "    here.",
                "",
                "  A second paragraph of the item,",
                "  wrapped.",
                "",
                "Then text again,",
                "wrapped.",
            ]),
            "Modes:\n\
             - `fast`: skips the checks;\n\
             - `safe`: checks every row.\n\
             \x20 * nested, wrapped here.\n\n\
             \x20 A second paragraph of the item, wrapped.\n\n\
             Then text again, wrapped."
        );
        assert_eq!(
            description(&["Steps:", "1. read,", "   then", "2. write."]),
            "Steps:\n1. read, then\n2. write."
        );
    }

    #[test]
    fn a_wrapped_line_that_only_looks_like_a_list_item_is_joined() {
        // A list interrupts a paragraph only at `1.`, or with a bullet and text.
        assert_eq!(
            description(&[
                "Counts the orders since",
                "2024. Then sums them",
                "-",
                "and stops."
            ]),
            "Counts the orders since 2024. Then sums them - and stops."
        );
    }

    #[test]
    fn code_blocks_are_kept_as_written() {
        assert_eq!(
            description(&[
                "Run a query,",
                "like this:",
                "```sql",
                "SELECT *",
                "",
                "  FROM t",
                "# not a heading",
                "```",
                "and read",
                "the rows.",
            ]),
            "Run a query, like this:\n```sql\nSELECT *\n\n  FROM t\n# not a heading\n```\nand read the rows."
        );
        assert_eq!(
            description(&[
                "Example:",
                "",
                "    let a = 1;",
                "",
                "    let b = 2;",
                "",
                "Done,",
                "done."
            ]),
            "Example:\n\n    let a = 1;\n\n    let b = 2;\n\nDone, done."
        );
        assert_eq!(description(&["~~~", "a", "b", "~~~"]), "~~~\na\nb\n~~~");
    }

    #[test]
    fn hard_breaks_are_line_breaks() {
        assert_eq!(
            description(&[
                "Roses are red,  ",
                "violets are blue,\\",
                "no more",
                "rhymes."
            ]),
            "Roses are red,\nviolets are blue,\nno more rhymes."
        );
        // At a paragraph's end, a backslash is text and two spaces are nothing.
        assert_eq!(
            description(&["Ends with \\", "", "and  ", "", "more."]),
            "Ends with \\\n\nand\n\nmore."
        );
    }

    #[test]
    fn headings_quotes_tables_and_rules_keep_their_lines() {
        assert_eq!(
            description(&[
                "Refund a charge.",
                "## Errors",
                "Fails when the account",
                "is closed.",
                "> Note: quoted,",
                "> as written.",
                "| a | b |",
                "|---|---|",
                "Title",
                "=====",
                "***",
                "End.",
            ]),
            "Refund a charge.\n## Errors\nFails when the account is closed.\n> Note: quoted,\n> as written.\n\
             | a | b |\n|---|---|\nTitle\n=====\n***\nEnd."
        );
    }

    #[test]
    fn a_parameters_doc_is_joined_as_the_fns_is() {
        assert_eq!(
            join_text("The account id,\nas printed on the invoice.\n\n- or its email"),
            "The account id, as printed on the invoice.\n\n- or its email"
        );
    }

    #[test]
    fn the_summary_is_the_first_paragraph_whole() {
        assert_eq!(
            summary("Look up an account; returns the account. Reads only.\n\nMore."),
            "Look up an account; returns the account. Reads only."
        );
        // Text that was not joined (a tool made at run time, an MCP server's).
        assert_eq!(
            summary("\n  Look up an account; returns the\n  account.\n\nMore."),
            "Look up an account; returns the account."
        );
        // A heading or a code block ends it; a list item or hard break does not.
        assert_eq!(summary("Refund.\n# Errors\nWhen closed."), "Refund.");
        assert_eq!(summary("Run:\n```\nx\n```"), "Run:");
        assert_eq!(summary("Modes:\n- fast\n- safe"), "Modes: - fast - safe");
        assert_eq!(summary(""), "");
    }

    #[test]
    fn headings_inside_code_blocks_are_not_sections() {
        let doc = ToolDoc::parse(&[" Run it.", " ```", " # Arguments", " ```"]);
        assert_eq!(doc.description, "Run it.\n```\n# Arguments\n```");
    }
}
