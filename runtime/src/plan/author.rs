//! Plans written by a model: find the plan in an answer ([`find_plan`],
//! [`read_plan`]), check it with every error at once ([`check_plan`]), and
//! the fix-and-resubmit loop ([`Author`]) that sends the errors back until
//! a plan checks, within a number of attempts, a token budget and a wall
//! time.
//!
//! Nothing runs here: a plan is only read and checked. [`Author::write`]
//! gives a checked plan with its [`Preview`], ready for an
//! [`Interpreter`](super::Interpreter), or an [`AuthorError`] holding every
//! attempt and what was wrong with it.
//!
//! ```
//! # futures::executor::block_on(async {
//! use typed_tools::model::ScriptedModel;
//! use typed_tools::plan::Author;
//! use typed_tools::plan::prompt::example_toolbox;
//!
//! let toolbox = example_toolbox();
//! let model = ScriptedModel::new([
//!     // A field the account does not have: refused, the errors go back.
//!     "```lambda-tool\nmatch exec tool lookup_account {id = \"c1\"} {\n  Ok(a) => a.plan,\n  Err(e) => e.message\n}\n```",
//!     // Fixed.
//!     "```lambda-tool\nmatch exec tool lookup_account {id = \"c1\"} {\n  Ok(a) => a.subscription_tier,\n  Err(e) => e.message\n}\n```",
//! ]);
//! let authored = Author::new(&toolbox).write(&model, "Which plan is customer c1 on?").await.unwrap();
//! assert_eq!(authored.attempts.len(), 2);
//! assert_eq!(authored.preview.to_string(), "lookup_account {Read}: at most once\n");
//! let told = model.requests()[1].messages.last().unwrap().text().to_owned();
//! assert!(told.contains("field `plan` not found in record type {id: String, subscription_tier: String"), "{told}");
//! # });
//! ```

use std::fmt;
use std::time::{Duration, Instant};

use schemars::JsonSchema;

use crate::catalog::{self, Catalog};
use crate::effect::{EffectSet, Effects, ReadWriteNetwork};
use crate::error::ToolError;
use crate::markdown::{Fence, ListMarker};
use crate::model::{
    estimate_tokens, Message, Model, ModelError, Request, Response, ToolResult, Usage,
};
use crate::toolbox::timer::{within, Elapsed};
use crate::toolbox::{NoContext, Toolbox, ToolboxContext};

use super::check::{Returns, TypeErrorKind};
use super::error::PlanError;
use super::ir::{Child, Plan};
use super::json::{self, JsonError, SUBMIT_TOOL};
use super::parse::{ParseError, ParseOptions};
use super::preview::Preview;
use super::prompt::{PlanPrompt, FENCE};

/// Where a plan was found in a model's answer, and in which form: a slice of
/// the answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Written<'a> {
    /// λ-Tool text (leading tool declarations included, which the parser skips).
    Text(&'a str),
    /// The JSON form ([`json`]), possibly not valid JSON.
    Json(&'a str),
}

/// The fence tags that mark a block as a plan.
const PLAN_TAGS: [&str; 8] = [
    FENCE,
    "λ-tool",
    "lambda_tool",
    "lambdatool",
    "λtool",
    "lambda",
    "plan",
    "json",
];

/// The words a line of plan text can start with; a line of prose does not
/// (prose starts with a capital, a list marker or a heading).
const PLAN_STARTS: [&str; 12] = [
    "tool", "match", "let", "if", "map", "filter", "fold", "call", "not", "traverse", "exec", "fn",
];

/// Finds the plan in a model's answer, or `None` when it holds none.
///
/// - In fenced blocks (```` ``` ````, `~~~`), the last one tagged as a plan
///   (`lambda-tool`, `λ-tool`, `plan`, `json`, ...) that is more than tool
///   declarations, else the last one that is; an unclosed fence
///   runs to the end. Fences open and close as CommonMark has them, as
///   the call readers read them: a block closes at a fence of its
///   character at least as long, with no info string, and
///   ```` ```x``` ```` on one line is inline code, not a fence. A block
///   with nothing in it is no plan, nor is a lone fence (a closing one
///   whose opening is missing: the text before it is read as text without
///   fences).
/// - Without fences: from the first line that starts like a plan (a
///   keyword such as `match`, `let` or `tool`, or `{`, `[`, `(`, a string, a
///   number), else the first line of code (a bracket, `=`, `<`, `;`, ...)
///   that is not prose, to the line before the first line of prose after
///   it (prose starts with a capital other than `Ok`/`Err`, a list marker
///   such as `-` or `1.`, or `#`). A numbered list is prose, not a plan;
///   but a line that goes on with the plan (indented under its first line,
///   inside its brackets, or after an operator or `in`) is the plan's
///   whatever marker it starts with: `let total = 1\n  + 2 in total`.
/// - The plan is [`Written::Json`] when it is a JSON object (a `{` followed
///   by a quoted key and `:`), read up to where that JSON value ends; else
///   [`Written::Text`]. Leading λ-Tool declarations stay in the text: the
///   parser skips them. Where the JSON ends is looked for within the default
///   plan size ([`ParseOptions::DEFAULT_MAX_BYTES`]), without building it:
///   a JSON object longer than that is the whole block, which no reader
///   within the default options reads (it is refused by its size).
///
/// ```
/// use typed_tools::plan::author::{find_plan, Written};
///
/// let answer = "Here is the plan:\n\n```lambda-tool\nmatch exec tool t {} {\n  Ok(x) => x,\n  Err(e) => e.message\n}\n```\n\nIt calls `t` once.";
/// assert_eq!(find_plan(answer), Some(Written::Text("match exec tool t {} {\n  Ok(x) => x,\n  Err(e) => e.message\n}\n")));
///
/// let bare = "I will look the account up.\nlet id = \"c1\" in id\nThis returns the id.";
/// assert_eq!(find_plan(bare), Some(Written::Text("let id = \"c1\" in id\n")));
///
/// let json = "{\"plan\": {\"kind\": \"int\", \"value\": 1}} (an integer)";
/// assert_eq!(find_plan(json), Some(Written::Json("{\"plan\": {\"kind\": \"int\", \"value\": 1}}")));
///
/// assert_eq!(find_plan("I cannot do that."), None);
/// ```
pub fn find_plan(answer: &str) -> Option<Written<'_>> {
    match found(answer, ParseOptions::DEFAULT_MAX_BYTES) {
        Found::Plan(written, _) => Some(written),
        Found::EmptyFence | Found::Nothing => None,
    }
}

/// What an answer holds, as [`find_plan`] finds it.
enum Found<'a> {
    /// A plan, in the form it is written in, and the byte of the answer
    /// it starts at.
    Plan(Written<'a>, usize),
    /// No plan, but a fenced block with nothing in it, or a lone fence.
    EmptyFence,
    /// Nothing like a plan.
    Nothing,
}

/// The plan in `answer`, a JSON object's end looked for within `limit`
/// bytes (the most a plan may be).
fn found(answer: &str, limit: usize) -> Found<'_> {
    let (blocks, empty) = fenced_blocks(answer);
    let (candidate, at) = if blocks.is_empty() {
        match unfenced(answer) {
            Some(found) => found,
            None if empty => return Found::EmptyFence,
            None => return Found::Nothing,
        }
    } else {
        // A tagged block over an untagged one, one with a plan over one of
        // declarations only, a later one over an earlier one.
        let tagged = |tag: &str| PLAN_TAGS.contains(&tag.to_lowercase().as_str());
        let chosen = blocks
            .iter()
            .rev()
            .find(|(tag, body, _)| tagged(tag) && !only_declarations(body))
            .or_else(|| {
                blocks
                    .iter()
                    .rev()
                    .find(|(_, body, _)| !only_declarations(body))
            })
            .unwrap_or(&blocks[blocks.len() - 1]);
        (chosen.1, chosen.2)
    };
    let (written, offset) = classify(candidate, limit);
    Found::Plan(written, at + offset)
}

/// The fenced blocks of `answer` that hold something: each block's tag, its
/// content and the byte its content starts at; and whether there was a block with nothing in it, or a
/// lone fence (a closing fence without its opening reads as a fence opened
/// at the end).
fn fenced_blocks(answer: &str) -> (Vec<(&str, &str, usize)>, bool) {
    let mut blocks = Vec::new();
    let mut open: Option<(Fence, &str, usize)> = None;
    let mut at = 0;
    for line in answer.split_inclusive('\n') {
        match open {
            None => {
                if let Some((fence, tag)) = Fence::open(line) {
                    open = Some((fence, tag, at + line.len()));
                }
            }
            Some((fence, tag, start)) if fence.closes(line) => {
                blocks.push((tag, &answer[start..at], start));
                open = None;
            }
            Some(_) => {}
        }
        at += line.len();
    }
    if let Some((_, tag, start)) = open {
        let start = start.min(answer.len());
        blocks.push((tag, &answer[start..], start));
    }
    let empty = blocks.iter().any(|(_, body, _)| body.trim().is_empty());
    blocks.retain(|(_, body, _)| !body.trim().is_empty());
    (blocks, empty)
}

/// Whether `answer` has a fenced block tagged as λ-Tool text (`plan`,
/// `lambda-tool`, ...; not `json`, which may as well be a tool call): a
/// model that writes one means it as a plan, whether it parses or not.
pub(crate) fn has_plan_fence(answer: &str) -> bool {
    fenced_blocks(answer).0.iter().any(|(tag, body, _)| {
        let tag = tag.to_lowercase();
        tag != "json" && PLAN_TAGS.contains(&tag.as_str()) && !only_declarations(body)
    })
}

/// Whether a block holds tool declarations and comments only.
fn only_declarations(body: &str) -> bool {
    body.lines().all(|line| {
        let line = line.trim();
        line.is_empty() || starts_with_word(line, "tool") || line.starts_with("(*")
    })
}

fn starts_with_word(line: &str, word: &str) -> bool {
    line.strip_prefix(word)
        .is_some_and(|rest| !rest.starts_with(|c: char| c.is_alphanumeric() || c == '_'))
}

/// Whether a line starts like plan text (or JSON), and is not prose.
fn starts_like_a_plan(line: &str) -> bool {
    let line = line.trim_start();
    !is_prose(line)
        && (PLAN_STARTS.iter().any(|word| starts_with_word(line, word))
            || line.starts_with(['{', '[', '(', '"'])
            || line.starts_with(|c: char| c.is_ascii_digit())
            || (line.starts_with('-') && line[1..].starts_with(|c: char| c.is_ascii_digit())))
}

/// Whether a line is prose: a capital other than `Ok`/`Err`, a list marker
/// (`-`, `*`, `+`, `1.`, `2)`, then a blank) or a heading.
fn is_prose(line: &str) -> bool {
    starts_prose(line) || ListMarker::of(line.trim_start()).is_some()
}

/// Whether a line starts as prose does, whatever comes before it: a
/// capital other than `Ok`/`Err`, a heading, bold text. (A list marker is
/// prose only where a plan could start: on a line that goes on with the
/// plan, `+ 2` and `2)` are the plan's.)
fn starts_prose(line: &str) -> bool {
    let line = line.trim_start();
    let capital = line.starts_with(|c: char| c.is_uppercase())
        && !["Ok", "Err"].iter().any(|w| starts_with_word(line, w));
    capital || line.starts_with('#') || line.starts_with("**")
}

/// Whether a line that is not prose is code: it holds a bracket, `=`,
/// `<`, `>`, `;`, `|` or `&`. A line of lowercase words ("sure, here it
/// is") is prose all the same.
fn looks_like_code(line: &str) -> bool {
    line.contains(['{', '}', '[', ']', '(', ')', '=', '<', '>', ';', '|', '&'])
}

/// The plan in an answer without fences: from the first line that starts
/// like one to the first line of prose (or a lone fence) after it; and the
/// byte it starts at.
fn unfenced(answer: &str) -> Option<(&str, usize)> {
    let first = |like_a_plan: fn(&str) -> bool| {
        let mut at = 0;
        for line in answer.split_inclusive('\n') {
            if like_a_plan(line) {
                return Some(at);
            }
            at += line.len();
        }
        None
    };
    // A line that starts like a plan, else any line of code that is not
    // prose (`while true { ... }` is meant as a plan, if not a good one).
    let start = first(starts_like_a_plan)
        .or_else(|| first(|line| !is_prose(line) && looks_like_code(line)))?;
    let indent = |line: &str| line.len() - line.trim_start().len();
    let first_indent = indent(answer[start..].lines().next().unwrap_or(""));
    let mut read = PlanLines::default();
    let mut at = start;
    for line in answer[start..].split_inclusive('\n') {
        if at > start {
            let goes_on = read.goes_on() || indent(line) > first_indent;
            let prose = if goes_on {
                starts_prose(line)
            } else {
                is_prose(line)
            };
            if prose || Fence::open(line).is_some() {
                return Some((&answer[start..at], start));
            }
        }
        read.read(line);
        at += line.len();
    }
    Some((&answer[start..], start))
}

/// Whether the plan's lines read so far go on: a bracket, a string or a
/// comment open, or a last line that ends in an operator (`+`, `=>`, `,`)
/// or a word that more must follow (`in`, `then`, `and`). A line after
/// them, like a line indented under the plan's first, is the plan's own
/// however it starts (`+ 2`, `2) [1]`), unless it starts as prose does.
/// Each line is read once.
#[derive(Default)]
struct PlanLines {
    /// Brackets open.
    depth: usize,
    /// A string open.
    string: bool,
    /// A `(* comment *)` open.
    comment: bool,
    /// The last line that is not blank ends where more must follow.
    open_end: bool,
}

/// The words after which a plan goes on.
const GOES_ON_AFTER: [&str; 16] = [
    "in", "then", "else", "and", "or", "not", "let", "if", "match", "fn", "exec", "call", "tool",
    "map", "filter", "fold",
];

impl PlanLines {
    fn goes_on(&self) -> bool {
        self.depth > 0 || self.string || self.comment || self.open_end
    }

    fn read(&mut self, line: &str) {
        let bytes = line.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            if self.comment {
                if bytes[i..].starts_with(b"*)") {
                    self.comment = false;
                    i += 1;
                }
            } else if self.string {
                match bytes[i] {
                    b'\\' => i += 1,
                    b'"' => self.string = false,
                    _ => {}
                }
            } else {
                match bytes[i] {
                    b'(' if bytes.get(i + 1) == Some(&b'*') => {
                        self.comment = true;
                        i += 1;
                    }
                    b'"' => self.string = true,
                    b'(' | b'[' | b'{' => self.depth += 1,
                    b')' | b']' | b'}' => self.depth = self.depth.saturating_sub(1),
                    _ => {}
                }
            }
            i += 1;
        }
        let code = line.trim_end();
        if !code.is_empty() {
            let word = code
                .rsplit(|c: char| !(c.is_alphanumeric() || c == '_'))
                .next()
                .unwrap_or("");
            self.open_end = code.ends_with(|c: char| "+-*/%=<>!,([{|&:".contains(c))
                || GOES_ON_AFTER.contains(&word);
        }
    }
}

/// JSON when the candidate is a JSON object, or starts like one; and the
/// byte of the candidate the plan starts at.
///
/// Where the object ends is found by reading at most `limit` bytes of it
/// and building nothing (a JSON value can take 40 times its text): an
/// object that does not end within them is longer than a plan may be, and
/// is the whole candidate, for the reader to refuse by its size unread.
fn classify(candidate: &str, limit: usize) -> (Written<'_>, usize) {
    let trimmed = candidate.trim_start();
    let offset = candidate.len() - trimmed.len();
    if let Some(inside) = trimmed.strip_prefix('{') {
        let window = &trimmed[..json::floor_boundary(trimmed, limit)];
        let mut values =
            serde_json::Deserializer::from_str(window).into_iter::<serde::de::IgnoredAny>();
        match values.next() {
            // It starts with `{`: an object.
            Some(Ok(_)) => {
                let end = offset + values.byte_offset();
                return (Written::Json(&candidate[offset..end]), offset);
            }
            Some(Err(error)) if error.is_eof() && window.len() < trimmed.len() => {
                return (Written::Json(trimmed), offset);
            }
            _ => {}
        }
        // `{"key": ...`: meant as JSON, though it is not valid.
        if let Some(key) = inside.trim_start().strip_prefix('"') {
            if let Some(close) = key.find('"') {
                if key[close + 1..].trim_start().starts_with(':') {
                    return (Written::Json(trimmed), offset);
                }
            }
        }
    }
    (Written::Text(candidate), 0)
}

/// Why a model's answer did not give a plan that checks. Nothing ran.
/// [`for_model`](Self::for_model) is what the model is told.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum AnswerError {
    /// No plan was found in the answer.
    NoPlan,
    /// No plan was found, but a fenced block with nothing in it, or a lone
    /// fence (```` ``` ````, perhaps a closing fence whose opening is
    /// missing): the model is told the block is empty.
    EmptyFence,
    /// The λ-Tool text does not parse.
    Parse {
        /// Where and why.
        error: ParseError,
        /// What to write instead of a word carried over from another
        /// language (`while`, `null`, `def`), when the error is at one.
        hint: Option<&'static str>,
    },
    /// The JSON form does not read as a plan.
    Json(JsonError),
    /// The plan was refused by the checks before a run: every error found
    /// (see [`check_plan`]).
    Refused {
        /// Every error, in the order found.
        errors: Vec<PlanError>,
        /// For each tool the toolbox lacks, the names nearest to it.
        nearest: Vec<(String, Vec<String>)>,
    },
}

impl AnswerError {
    /// What the model is told: what is wrong, every error at once, and that
    /// nothing ran; with a hint where the mistake is one models make (a
    /// loop, `null`, a misspelled tool).
    ///
    /// ```
    /// use typed_tools::plan::author::read_plan;
    /// use typed_tools::plan::ParseOptions;
    ///
    /// let error = read_plan("while true { 1 }", &ParseOptions::default()).unwrap_err();
    /// assert_eq!(error.for_model(), "the plan does not parse, nothing ran; fix it and send the whole plan again:
    /// - line 1, column 7: expected an operator or the end of the plan, found `true`
    ///   hint: λ-Tool has no loops, no recursion and no retries: each `exec` runs at most once; iterate over a list with `map`, `filter`, `fold` (pure) or `traverse` (calls tools)");
    /// ```
    pub fn for_model(&self) -> String {
        match self {
            AnswerError::NoPlan => format!(
                "no plan found in your answer, nothing ran; write the whole plan in one fenced block that starts with ```{FENCE}"
            ),
            AnswerError::EmptyFence => format!(
                "the fenced block in your answer holds no plan (it is empty, or a ``` with nothing after it), nothing ran; write the whole plan inside one fenced block: ```{FENCE}, the plan, then ```"
            ),
            AnswerError::Parse { error, hint } => {
                let mut out = format!(
                    "the plan does not parse, nothing ran; fix it and send the whole plan again:\n- {error}"
                );
                if let Some(hint) = hint {
                    out.push_str("\n  hint: ");
                    out.push_str(hint);
                }
                out
            }
            AnswerError::Json(error) => format!(
                "the plan's JSON does not read as a plan, nothing ran; fix it and send the whole plan again:\n- {error}"
            ),
            AnswerError::Refused { errors, nearest } => {
                let mut out = String::from(
                    "the plan was refused, nothing ran; fix every error and send the whole plan again:",
                );
                for error in errors {
                    match error {
                        PlanError::TypeErrors(errors) => {
                            for error in errors {
                                out.push_str("\n- ");
                                out.push_str(&error.to_string());
                                if error.kind == TypeErrorKind::Unbound {
                                    let name = error.at.trim_matches('`');
                                    if let Some(hint) = word_hint(name) {
                                        out.push_str("\n  hint: ");
                                        out.push_str(hint);
                                    }
                                }
                            }
                        }
                        other => {
                            out.push_str("\n- ");
                            out.push_str(&other.to_string());
                            if let PlanError::UnknownTool { name, .. } = other {
                                let names = nearest.iter().find(|(n, _)| n == name);
                                if let Some((_, names)) = names.filter(|(_, n)| !n.is_empty()) {
                                    let names: Vec<String> =
                                        names.iter().map(|n| format!("`{n}`")).collect();
                                    out.push_str("\n  hint: did you mean ");
                                    out.push_str(&names.join(" or "));
                                    out.push('?');
                                }
                            }
                        }
                    }
                }
                out
            }
        }
    }
}

impl fmt::Display for AnswerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.for_model())
    }
}

impl std::error::Error for AnswerError {}

/// A hint for a word models write that λ-Tool does not have.
fn word_hint(word: &str) -> Option<&'static str> {
    Some(match word {
        "while" | "for" | "loop" | "do" | "retry" | "repeat" | "until" | "foreach" | "rec" => {
            "λ-Tool has no loops, no recursion and no retries: each `exec` runs at most once; iterate over a list with `map`, `filter`, `fold` (pure) or `traverse` (calls tools)"
        }
        "try" | "except" | "catch" | "raise" | "throw" | "finally" => {
            "λ-Tool has no exceptions: a tool's failure is the `Err(e)` branch of its `match`"
        }
        "null" | "None" | "nil" | "undefined" | "NULL" | "Nothing" => {
            "λ-Tool has no null: write `()` for no value, and test a value of type `T?` with `if x == () then ... else ...`"
        }
        "def" | "function" | "func" | "fun" | "lambda" | "return" | "const" | "var" | "val" => {
            "a plan is one expression, not statements: name a value with `let x = ... in ...`; a callback is written `(fn x => ...)`"
        }
        "=" => "a plan is one expression, not statements: name a value with `let x = ... in ...`",
        "True" | "False" => "the booleans are `true` and `false`",
        "elif" => "write `else if`",
        "f" => "strings do not interpolate: join text with `++`",
        "&&" => "write `and`",
        "||" => "write `or`",
        "!" => "write `not`",
        ";" => "a plan is one expression: chain steps with `let x = ... in` or nested `match`es, not `;`",
        "'" => "strings are written in double quotes",
        "#" | "//" => "comments are written (* like this *)",
        "(" => {
            "nothing is applied with parentheses: call a tool with `match exec tool NAME {arg = ...} { Ok(x) => ..., Err(e) => ... }` (`call tool NAME {...}` for a pure one), and iterate with `map (fn x => ...) list`"
        }
        "<" => {
            "tools are not called one by one here: write one plan that calls them, in λ-Tool"
        }
        _ => return None,
    })
}

/// The byte offset of `line`, `column` (from 1, the column in characters).
fn offset_of(text: &str, line: usize, column: usize) -> usize {
    let mut at = 0;
    for (i, this) in text.split_inclusive('\n').enumerate() {
        if i + 1 == line {
            return at
                + this
                    .char_indices()
                    .nth(column.saturating_sub(1))
                    .map_or(this.len(), |(i, _)| i);
        }
        at += this.len();
    }
    text.len()
}

/// The word (or symbol) that starts at `rest`.
fn first_token(rest: &str) -> &str {
    let word = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    if word > 0 {
        return &rest[..word];
    }
    ["&&", "||", "//"]
        .into_iter()
        .find(|s| rest.starts_with(s))
        .or_else(|| rest.char_indices().nth(1).map(|(i, _)| &rest[..i]))
        .unwrap_or(rest)
}

/// The word (or symbol) that ends `before`.
fn last_token(before: &str) -> &str {
    let before = before.trim_end();
    let start = before
        .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
        .map_or(0, |i| {
            i + before[i..].chars().next().map_or(1, char::len_utf8)
        });
    if start < before.len() {
        return &before[start..];
    }
    before
        .char_indices()
        .next_back()
        .map_or("", |(i, _)| &before[i..])
}

/// The hint for a parse error at `line`, `column` of `text`: for the token
/// there, or the one before it (`while true`: the parser reads `while` as a
/// variable and stops at `true`).
fn parse_hint(text: &str, line: usize, column: usize) -> Option<&'static str> {
    let at = offset_of(text, line, column);
    let here = first_token(&text[at..]);
    if here == "<" && !text[at..].starts_with("<tool_call>") {
        return word_hint(last_token(&text[..at]));
    }
    // A `(` says least: the word before it may say more (`retry(3)`).
    let hint_here = || word_hint(here);
    let hint_before = || word_hint(last_token(&text[..at]));
    if here == "(" {
        hint_before().or_else(hint_here)
    } else {
        hint_here().or_else(hint_before)
    }
}

/// Reads the plan in a model's answer ([`find_plan`]), text or JSON, within
/// `options`' limits. Refuses an answer with no plan ([`AnswerError::NoPlan`],
/// or [`AnswerError::EmptyFence`] when all it has is an empty fenced block
/// or a lone fence) and one that does not parse ([`AnswerError::Parse`], [`AnswerError::Json`]);
/// a parse error at a word models carry over from other languages (`while`,
/// `null`, `def`, `True`, `;`) gets a hint.
///
/// ```
/// use typed_tools::plan::author::{read_plan, AnswerError};
/// use typed_tools::plan::ParseOptions;
///
/// let plan = read_plan("Sure:\n```lambda-tool\n1 + 2\n```", &ParseOptions::default()).unwrap();
/// assert_eq!(plan.to_string(), "1 + 2");
/// let error = read_plan("```\nlet x = null in x\n```", &ParseOptions::default());
/// assert!(error.is_ok(), "`null` is a variable to the parser; the checker refuses it");
/// assert_eq!(read_plan("No.", &ParseOptions::default()), Err(AnswerError::NoPlan));
/// assert_eq!(read_plan("Here:\n```lambda-tool\n```", &ParseOptions::default()), Err(AnswerError::EmptyFence));
/// ```
pub fn read_plan(answer: &str, options: &ParseOptions) -> Result<Plan, AnswerError> {
    match found(answer, options.limit()) {
        Found::Plan(written, at) => read_at(written, Origin::of(answer, at), options),
        Found::EmptyFence => Err(AnswerError::EmptyFence),
        Found::Nothing => Err(AnswerError::NoPlan),
    }
}

/// Reads `written`, a plan [`find_plan`] found in `answer` (a copy of the
/// answer will do), as [`read_plan`] does: its errors' lines and columns
/// are the answer's. For the agent, which finds a plan in an answer and
/// reads it later.
pub(crate) fn read_in(
    answer: &str,
    written: Written<'_>,
    options: &ParseOptions,
) -> Result<Plan, AnswerError> {
    let origin = match found(answer, options.limit()) {
        Found::Plan(again, at) if again == written => Origin::of(answer, at),
        // Not found there: positions from the plan's own start.
        _ => Origin::START,
    };
    read_at(written, origin, options)
}

/// Where a plan starts in the answer it was found in: its line and column
/// (from 1; the column in characters, as λ-Tool's errors count, and in
/// bytes, as JSON's do).
#[derive(Clone, Copy, Debug)]
struct Origin {
    line: usize,
    chars: usize,
    bytes: usize,
}

impl Origin {
    const START: Origin = Origin {
        line: 1,
        chars: 1,
        bytes: 1,
    };

    /// The origin of the text at byte `at` of `answer`.
    fn of(answer: &str, at: usize) -> Origin {
        let before = &answer[..at];
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        Origin {
            line: 1 + memchr::memchr_iter(b'\n', before.as_bytes()).count(),
            chars: 1 + before[line_start..].chars().count(),
            bytes: 1 + at - line_start,
        }
    }
}

/// [`read_written`], each error's line and column moved to where the plan
/// starts in its answer (`origin`): on the plan's first line by its column
/// there, on every line by its line.
fn read_at(
    written: Written<'_>,
    origin: Origin,
    options: &ParseOptions,
) -> Result<Plan, AnswerError> {
    match written {
        Written::Json(text) => {
            json::from_str_at(text, options, origin.line, origin.bytes).map_err(AnswerError::Json)
        }
        Written::Text(_) => read_written(written, options).map_err(|error| match error {
            AnswerError::Parse { mut error, hint } => {
                if error.line == 1 {
                    error.column += origin.chars - 1;
                }
                error.line += origin.line - 1;
                AnswerError::Parse { error, hint }
            }
            other => other,
        }),
    }
}

/// Reads a plan [`find_plan`] found: λ-Tool text or the JSON form, each
/// error with what to write instead, as [`read_plan`] does. The errors'
/// lines and columns count from the start of `written`; [`read_plan`]
/// counts them from the start of the answer, which the model wrote.
///
/// ```
/// use typed_tools::plan::author::{read_written, Written};
/// use typed_tools::plan::ParseOptions;
///
/// let plan = read_written(Written::Text("1 + 2"), &ParseOptions::default()).unwrap();
/// assert_eq!(plan.to_string(), "1 + 2");
/// ```
pub fn read_written(written: Written<'_>, options: &ParseOptions) -> Result<Plan, AnswerError> {
    match written {
        Written::Json(text) => json::from_str_with(text, options).map_err(AnswerError::Json),
        Written::Text(text) => Plan::parse_with(text, options).map_err(|error| {
            let hint = match error.limit {
                None => parse_hint(text, error.line, error.column),
                Some(_) => None,
            };
            AnswerError::Parse { error, hint }
        }),
    }
}

/// Checks a plan as [`Preview::check`] does (depth, a tool call inside a
/// pure callback, tools, effects, `call` of a tool that is not a function,
/// types) and previews it; when it is refused, gives every error found, not
/// only the first: every tool the toolbox lacks (with the nearest names),
/// every effect outside `allowed`, every `call` of a tool that is not a
/// function, and every type error.
///
/// ```
/// use typed_tools::effect::EffectSet;
/// use typed_tools::plan::author::{check_plan, AnswerError};
/// use typed_tools::plan::prompt::example_toolbox;
/// use typed_tools::plan::Plan;
///
/// let toolbox = example_toolbox();
/// let plan = Plan::parse(r#"match exec tool lookup_acount {id = "c1"} {
///   Ok(a) => a.email,
///   Err(e) => e.reason
/// }"#).unwrap();
/// let error = check_plan(&plan, &toolbox, EffectSet::ALL).unwrap_err();
/// assert_eq!(error.for_model(), "the plan was refused, nothing ran; fix every error and send the whole plan again:
/// - unknown tool `lookup_acount`; the plan may call: `lookup_account`, `issue_refund`, `send_reply`, `list_orders`, `charge`, `format_cents`
///   hint: did you mean `lookup_account`?
/// - `e.reason`: field `reason` not found in record type {tool: String, kind: String, message: String}");
/// ```
pub fn check_plan<A: Effects, C: ToolboxContext>(
    plan: &Plan,
    toolbox: &Toolbox<A, C>,
    allowed: EffectSet,
) -> Result<Preview, AnswerError> {
    check_plan_returning(plan, toolbox, allowed, None)
}

/// [`check_plan`], and with `returns`, that the plan gives that type
/// ([`Returns::check`], once the plan type-checks).
fn check_plan_returning<A: Effects, C: ToolboxContext>(
    plan: &Plan,
    toolbox: &Toolbox<A, C>,
    allowed: EffectSet,
    returns: Option<&Returns>,
) -> Result<Preview, AnswerError> {
    let checked = Preview::check_indexed(plan, toolbox, allowed, true, returns);
    let first = match checked.map(|(preview, ..)| preview) {
        Ok(preview) => return Ok(preview),
        Err(error @ PlanError::TooDeep { .. }) => {
            return Err(AnswerError::Refused {
                errors: vec![error],
                nearest: Vec::new(),
            })
        }
        Err(first) => first,
    };
    let mut errors: Vec<PlanError> = Vec::new();
    let mut nearest = Vec::new();
    if let PlanError::EffectInPureCallback { .. } = first {
        errors.push(first.clone());
    }
    // Every tool, once, in order: `call`ed if it is called anywhere.
    let mut tools: Vec<(&str, bool)> = Vec::new();
    Child::Expr(&plan.body).visit_tools(&mut |tool, call| match tools
        .iter_mut()
        .find(|(name, _)| *name == tool)
    {
        Some((_, called)) => *called |= call,
        None => tools.push((tool, call)),
    });
    for (tool, called) in tools {
        // A tool outside this view exists: it is refused for its effects,
        // in the words a direct call gets, never called unknown.
        let Some(spec) = toolbox.spec_in_any_view(tool) else {
            errors.push(PlanError::UnknownTool {
                name: tool.to_owned(),
                available: toolbox.names().map(str::to_owned).collect(),
            });
            nearest.push((tool.to_owned(), nearest_names(tool, toolbox)));
            continue;
        };
        if !spec.effects().is_subset_of(allowed) {
            errors.push(PlanError::EffectViolation {
                tool: tool.to_owned(),
                effects: spec.effects(),
                allowed,
            });
        }
        if called && (!spec.effects().is_pure() || spec.is_fallible()) {
            errors.push(PlanError::NotAFunction {
                tool: tool.to_owned(),
                effects: spec.effects(),
                fallible: spec.is_fallible(),
            });
        }
    }
    match first {
        PlanError::TypeErrors(_) => errors.push(first),
        _ => match super::check(plan, toolbox) {
            Err(error @ PlanError::TypeErrors(_)) => errors.push(error),
            // Its type is known: held to the one required, every error at once.
            Ok(ty) => {
                if let Some(Err(error)) = returns.map(|returns| returns.check(&ty)) {
                    errors.push(PlanError::TypeErrors(vec![error]));
                }
            }
            Err(_) => {}
        },
    }
    Err(AnswerError::Refused { errors, nearest })
}

/// The names nearest to `name` that the toolbox's own lookup suggests (the
/// dispatcher's suggestions for an unknown tool).
fn nearest_names<A: Effects, C: ToolboxContext>(
    name: &str,
    toolbox: &Toolbox<A, C>,
) -> Vec<String> {
    // Asked only for a name it does not have.
    match toolbox.unknown(name) {
        ToolError::UnknownTool { suggestions, .. } => suggestions,
        _ => Vec::new(),
    }
}

/// Writes plans with a model: asks for one, reads it from the answer (text
/// or JSON), checks it, and sends every error back until a plan checks,
/// within [`attempts`](Self::attempts), a [`token_budget`](Self::token_budget)
/// and a [`wall_time`](Self::wall_time) (5 minutes by default).
/// Nothing runs: it gives a checked plan ([`Authored`]) for an
/// [`Interpreter`](super::Interpreter) to preview and run.
///
/// The conversation: a system message, the [`PlanPrompt`] for the toolbox's
/// allowed tools; the task as the user's message; then, per refused answer,
/// the answer and the errors ([`AnswerError::for_model`]) as the user's
/// next message, or as the result of the model's `submit_plan` call. A
/// model that takes tools natively ([`Model::tool_format`]) is also offered
/// the [`submit_tool`](super::json::submit_tool), to answer in JSON.
///
/// ```
/// # futures::executor::block_on(async {
/// use typed_tools::model::ScriptedModel;
/// use typed_tools::plan::{Author, Interpreter};
/// use typed_tools::plan::author::AuthorError;
/// use typed_tools::plan::prompt::example_toolbox;
///
/// let toolbox = example_toolbox();
/// let author = Author::new(&toolbox).attempts(2);
/// let model = ScriptedModel::new(["while true { retry }", "for x in [1, 2]: x"]);
/// let Err(AuthorError::Attempts { attempts, .. }) = author.write(&model, "Count to two.").await else { panic!() };
/// assert_eq!(attempts.len(), 2);
/// assert!(attempts.iter().all(|attempt| attempt.error.is_some()));
///
/// let model = ScriptedModel::new(["```lambda-tool\ncall tool format_cents {cents = 4900}\n```"]);
/// let authored = author.write(&model, "Write 4900 cents as dollars.").await.unwrap();
/// let run = Interpreter::new(&toolbox).run(&authored.plan).await.unwrap();
/// assert_eq!(run.outcome.unwrap().to_string(), "\"$49.00\"");
/// # });
/// ```
#[derive(Debug)]
pub struct Author<'t, A: Effects = ReadWriteNetwork, C: ToolboxContext = NoContext> {
    toolbox: &'t Toolbox<A, C>,
    allowed: EffectSet,
    returns: Option<Returns>,
    attempts: usize,
    token_budget: Option<u64>,
    wall_time: Duration,
    options: ParseOptions,
}

/// A plan that checks, and how it was written.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Authored {
    /// The plan: checked against the toolbox and the allowed effects.
    pub plan: Plan,
    /// What it may do, known before it runs.
    pub preview: Preview,
    /// Every answer, the last one the plan's.
    pub attempts: Vec<Attempt>,
    /// The tokens spent, in all.
    pub usage: Usage,
}

/// One answer of the model, and what was wrong with it.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Attempt {
    /// What the model answered (its text, native calls, usage).
    pub response: Response,
    /// Why it was refused (what the model was told is its
    /// [`for_model`](AnswerError::for_model)); `None` for the answer whose
    /// plan checked.
    pub error: Option<AnswerError>,
}

/// Why no plan checked. Each holds every attempt made, with its errors;
/// nothing ran.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum AuthorError {
    /// Every attempt was refused.
    Attempts {
        /// Each answer and what was wrong with it.
        attempts: Vec<Attempt>,
        /// The tokens spent.
        usage: Usage,
    },
    /// The token budget was spent before a plan checked, or the next request
    /// would go past it.
    Budget {
        /// The budget, in tokens.
        budget: u64,
        /// The tokens spent.
        usage: Usage,
        /// Each answer and what was wrong with it.
        attempts: Vec<Attempt>,
    },
    /// The wall time ran out before a plan checked: it had passed before a
    /// request, or a request was still waiting for the model when it did
    /// (that request is dropped; its answer is not among the attempts).
    Deadline {
        /// The wall time, as [`Author::wall_time`] set it.
        limit: Duration,
        /// Each answer before, and what was wrong with it.
        attempts: Vec<Attempt>,
        /// The tokens spent.
        usage: Usage,
    },
    /// The model could not answer.
    Model {
        /// Why.
        error: ModelError,
        /// The answers before.
        attempts: Vec<Attempt>,
        /// The tokens spent.
        usage: Usage,
    },
}

impl AuthorError {
    /// Every attempt made, in order, with what was wrong with each.
    pub fn attempts(&self) -> &[Attempt] {
        match self {
            AuthorError::Attempts { attempts, .. }
            | AuthorError::Budget { attempts, .. }
            | AuthorError::Deadline { attempts, .. }
            | AuthorError::Model { attempts, .. } => attempts,
        }
    }
}

impl fmt::Display for AuthorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AuthorError::Attempts { attempts, .. } => {
                write!(f, "no plan checked in {} attempts", attempts.len())?
            }
            AuthorError::Budget { budget, usage, attempts } => write!(
                f,
                "the token budget of {budget} ran out after {} attempts ({} tokens spent) before a plan checked",
                attempts.len(),
                usage.total()
            )?,
            AuthorError::Deadline {
                limit, attempts, ..
            } => write!(
                f,
                "the wall time of {limit:?} ran out after {} attempt(s) before a plan checked",
                attempts.len()
            )?,
            AuthorError::Model { error, attempts, .. } => {
                write!(f, "{error} (after {} attempts)", attempts.len())?
            }
        }
        if let Some(error) = self.attempts().last().and_then(|a| a.error.as_ref()) {
            write!(f, "; the last answer was refused: {}", error.for_model())?;
        }
        Ok(())
    }
}

impl std::error::Error for AuthorError {}

impl<'t, A: Effects, C: ToolboxContext> Author<'t, A, C> {
    /// Writes plans for the tools `toolbox` allows: 3 attempts, no token
    /// budget, 5 minutes of wall time, the default [`ParseOptions`].
    pub fn new(toolbox: &'t Toolbox<A, C>) -> Author<'t, A, C> {
        Author {
            toolbox,
            allowed: toolbox.allowed(),
            returns: None,
            attempts: 3,
            token_budget: None,
            wall_time: Duration::from_secs(5 * 60),
            options: ParseOptions::default(),
        }
    }

    /// At most `attempts` answers (at least one is asked for).
    pub fn attempts(mut self, attempts: usize) -> Self {
        self.attempts = attempts.max(1);
        self
    }

    /// At most `tokens` spent in all (in and out, as the model's
    /// [`Usage`] says). A request is not sent when the tokens spent and its
    /// messages and tools (estimated at one token per four bytes,
    /// [`estimate_tokens`]) reach the budget; each request's `max_tokens` is
    /// what is left.
    pub fn token_budget(mut self, tokens: u64) -> Self {
        self.token_budget = Some(tokens);
        self
    }

    /// At most `limit` of wall time for one [`write`](Self::write), from its
    /// call (5 minutes by default, as an [agent's run](crate::agent::Limits)).
    /// It is checked before each request, and a request still waiting for
    /// the model when it passes is stopped (its future dropped, as the
    /// agent's are, on the crate's own timer: no async runtime is named).
    /// Then `write` gives [`AuthorError::Deadline`] with the attempts made
    /// so far; nothing ran.
    ///
    /// ```
    /// use std::time::Duration;
    /// use typed_tools::model::ScriptedModel;
    /// use typed_tools::plan::author::{Author, AuthorError};
    /// use typed_tools::plan::prompt::example_toolbox;
    ///
    /// let toolbox = example_toolbox();
    /// let model = ScriptedModel::new(["```lambda-tool\n1\n```"]);
    /// let author = Author::new(&toolbox).wall_time(Duration::ZERO);
    /// let error = futures::executor::block_on(author.write(&model, "Count.")).unwrap_err();
    /// assert!(matches!(error, AuthorError::Deadline { limit: Duration::ZERO, .. }));
    /// assert!(model.requests().is_empty());
    /// ```
    pub fn wall_time(mut self, limit: Duration) -> Self {
        self.wall_time = limit;
        self
    }

    /// Narrows the effects a plan may have (never widening the toolbox's):
    /// the prompt lists only the tools allowed, and the check refuses others.
    pub fn restrict(mut self, allowed: EffectSet) -> Self {
        self.allowed = self.allowed.intersection(allowed);
        self
    }

    /// Requires a plan that gives a `T`: the prompt says which type the
    /// plan's value must have ([`PlanPrompt::returns`]), and a plan whose
    /// type is another (compared with `T`'s schema before anything runs,
    /// [`Returns`]) is refused and sent back with what it gives and what the
    /// task needs, as any other error is. Run the plan written with
    /// [`Interpreter::run_as::<T>`](super::Interpreter::run_as), which
    /// reads its value into `T`. Works alike for plans written as text and
    /// in the JSON form.
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::model::ScriptedModel;
    /// use typed_tools::plan::{Author, Interpreter};
    /// use typed_tools::plan::prompt::example_toolbox;
    ///
    /// #[derive(Debug, PartialEq, serde::Deserialize, schemars::JsonSchema)]
    /// struct Contact { email: String, tier: String }
    ///
    /// let toolbox = example_toolbox();
    /// let model = ScriptedModel::new([
    ///     // The email alone: a String, where a Contact is needed.
    ///     "```lambda-tool\nmatch exec tool lookup_account {id = \"c1\"} {\n  Ok(a) => a.email,\n  Err(e) => e.message\n}\n```",
    ///     "```lambda-tool\nmatch exec tool lookup_account {id = \"c1\"} {\n  Ok(a) => {email = a.email, tier = a.subscription_tier},\n  Err(e) => {email = \"\", tier = \"unknown\"}\n}\n```",
    /// ]);
    /// let author = Author::new(&toolbox).returning::<Contact>();
    /// let authored = author.write(&model, "How do I reach customer c1, and on which tier?").await.unwrap();
    /// assert_eq!(authored.attempts.len(), 2);
    /// let told = model.requests()[1].messages.last().unwrap().text().to_owned();
    /// assert!(told.contains("the plan gives String; the task needs a Contact: {email: String, tier: String}"), "{told}");
    /// let run = Interpreter::new(&toolbox).run_as::<Contact>(&authored.plan).await.unwrap();
    /// assert_eq!(run.outcome.unwrap().tier, "pro");
    /// # });
    /// ```
    pub fn returning<T: JsonSchema + ?Sized>(mut self) -> Self {
        self.returns = Some(Returns::of::<T>());
        self
    }

    /// The limits on the text of a plan read from an answer.
    pub fn parse_options(mut self, options: ParseOptions) -> Self {
        self.options = options;
        self
    }

    /// The prompt the model is given, offering the JSON tool or not.
    pub fn prompt(&self, submit_tool: bool) -> PlanPrompt {
        let prompt = PlanPrompt::new(&self.toolbox.restrict(self.allowed)).submit_tool(submit_tool);
        match &self.returns {
            Some(returns) => prompt.returns(returns.clone()),
            None => prompt,
        }
    }

    /// Reads and checks one answer: a `submit_plan` call's arguments (JSON)
    /// when it made one, else the plan in its text.
    pub fn check_answer(&self, response: &Response) -> Result<(Plan, Preview), AnswerError> {
        let plan = match response.calls.iter().rev().find(|c| c.name == SUBMIT_TOOL) {
            Some(call) => {
                json::from_str_with(&call.arguments, &self.options).map_err(AnswerError::Json)?
            }
            None => read_plan(&response.text, &self.options)?,
        };
        let preview =
            check_plan_returning(&plan, self.toolbox, self.allowed, self.returns.as_ref())?;
        Ok((plan, preview))
    }

    /// Asks `model` for a plan that does `task`, and sends the errors back
    /// until one checks; see the [type docs](Self).
    pub async fn write<M: Model + ?Sized>(
        &self,
        model: &M,
        task: &str,
    ) -> Result<Authored, AuthorError> {
        let tools: Option<Catalog> = model
            .tool_format()
            .map(|format| catalog::render(format, &[&json::submit_tool_for(format)]));
        let tools_tokens = tools
            .as_ref()
            .map_or(0, |tools| estimate_tokens(&tools.to_string()));
        let prompt = self.prompt(tools.is_some()).to_string();
        let mut messages = vec![Message::system(prompt), Message::user(task)];
        let mut attempts: Vec<Attempt> = Vec::new();
        let mut usage = Usage::default();
        // A limit too far to add to now is no limit.
        let deadline = Instant::now().checked_add(self.wall_time);
        let out_of_time = |attempts, usage| AuthorError::Deadline {
            limit: self.wall_time,
            attempts,
            usage,
        };
        for _ in 0..self.attempts {
            if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
                return Err(out_of_time(attempts, usage));
            }
            let mut request = Request::new(messages.clone());
            if let Some(tools) = &tools {
                request = request.tools(tools.clone());
            }
            if let Some(budget) = self.token_budget {
                let asked: u64 = messages
                    .iter()
                    .map(|m| estimate_tokens(m.text()))
                    .sum::<u64>()
                    + tools_tokens;
                let left = budget.saturating_sub(usage.total().saturating_add(asked));
                if left == 0 {
                    return Err(AuthorError::Budget {
                        budget,
                        usage,
                        attempts,
                    });
                }
                request = request.max_tokens(u32::try_from(left).unwrap_or(u32::MAX));
            }
            let response = match within(model.complete(request), deadline).await {
                Ok(Ok(response)) => response,
                Ok(Err(error)) => {
                    return Err(AuthorError::Model {
                        error,
                        attempts,
                        usage,
                    })
                }
                Err(Elapsed) => return Err(out_of_time(attempts, usage)),
            };
            usage += response.usage;
            let error = match self.check_answer(&response) {
                Ok((plan, preview)) => {
                    attempts.push(Attempt {
                        response,
                        error: None,
                    });
                    return Ok(Authored {
                        plan,
                        preview,
                        attempts,
                        usage,
                    });
                }
                Err(error) => error,
            };
            let told = error.for_model();
            messages.push(response.to_message());
            if response.calls.is_empty() {
                messages.push(Message::user(told));
            } else {
                // Every call is answered, as providers require: the errors
                // go to the plan's, the others are not run.
                let plan_call = response.calls.iter().rposition(|c| c.name == SUBMIT_TOOL);
                for (i, call) in response.calls.iter().enumerate() {
                    let content = match plan_call {
                        Some(p) if p == i => told.clone(),
                        None if i == 0 => told.clone(),
                        _ => format!(
                            "not run: tools are not called one by one here; hand in one plan that calls them (`{SUBMIT_TOOL}`, or λ-Tool text in a fenced block)"
                        ),
                    };
                    messages.push(Message::tool_result(ToolResult::refused(call, content)));
                }
            }
            attempts.push(Attempt {
                response,
                error: Some(error),
            });
            if let Some(budget) = self.token_budget {
                if usage.total() >= budget {
                    return Err(AuthorError::Budget {
                        budget,
                        usage,
                        attempts,
                    });
                }
            }
        }
        Err(AuthorError::Attempts { attempts, usage })
    }
}
