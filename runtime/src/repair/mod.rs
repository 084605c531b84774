//! Deterministic repair of a model's argument text into JSON, with every change
//! recorded.
//!
//! Models wrap their arguments in markdown fences, add prose, leave trailing
//! commas, use Python's `True`, stop in the middle of a string. [`repair`] turns
//! such text into JSON in one pass and says what it changed, so that the caller
//! can log it and the model can be told:
//!
//! ```
//! use typed_tools::repair::{repair, RepairKind};
//!
//! let text = "```json\n{\"city\": 'Paris', \"days\": 3,}\n```";
//! let repaired = repair(text).unwrap();
//! assert_eq!(repaired.json(), r#"{"city": "Paris", "days": 3}"#);
//! let kinds: Vec<RepairKind> = repaired.repairs().iter().map(|r| r.kind).collect();
//! assert_eq!(
//!     kinds,
//!     [RepairKind::MarkdownFence, RepairKind::SingleQuotes, RepairKind::TrailingComma]
//! );
//! assert_eq!(
//!     repaired.to_string(),
//!     "removed a markdown code fence at byte 0; \
//!      replaced single quotes with double quotes at byte 17; \
//!      removed a trailing comma at byte 35"
//! );
//! ```
//!
//! # Promises
//!
//! - **Never lossy.** Every key, string, number and literal of the input is in
//!   the output, in order and in the same role (a key stays a key, a number a
//!   number), or its removal or rewriting is a recorded [`Repair`] whose kind
//!   says why: a comment ([`RepairKind::Comment`]), a fence, prose around the
//!   value, a JSONP or MongoDB wrapper, `NaN`/`undefined` written as `null`,
//!   strings joined with `+`. When the text can be read more than one way and
//!   a reading would drop or change a token, repair refuses with a
//!   [`RepairError`] that names the byte, rather than guess. Text is never
//!   skipped as "prose" if it holds JSON (a quote before the next value, a
//!   `"key":` after it). `tests/repair_props.rs` holds the promise against
//!   real JSON documents of other projects damaged in one place each
//!   (deleted, doubled or swapped characters, truncation, prose, fences and
//!   comments inserted anywhere): each token the damage did not touch must
//!   come back as it was, or the text must be refused.
//! - **Valid JSON is never changed.** Text that `serde_json` accepts is returned
//!   byte for byte, without a copy ([`Repaired::is_unchanged`]). The one
//!   exception is opt-in by kind: a JSON *string* whose whole content is a
//!   JSON object or array that parses as it is (double-encoded arguments)
//!   is decoded, as [`RepairKind::StringifiedJson`]; `"["`, `"{a: b}"` or
//!   `"[1,]"` stay strings.
//! - **The output is always JSON**: when repair succeeds, the result is a single
//!   JSON text; `NaN`, `Infinity` and `undefined` become `null` (recorded), never
//!   copied through. This holds by construction; debug builds also check every
//!   output with `serde_json`, and the property and fuzz tests run them over
//!   hundreds of thousands of generated and damaged inputs. (Release builds do
//!   not parse twice: the caller's own parse follows.)
//! - **Nothing is made up** but `null`: a key the text shows without a value
//!   (`{"a": }`, or `{"a": 1, "b` where the text stops) gets `null`; no key or
//!   other value is invented.
//! - **Every change is recorded** as a [`Repair`]: its [`RepairKind`] and the byte
//!   offset in the input where it applies. With no repairs, output = input. The
//!   first [`Repaired::KEPT_PER_KIND`] repairs of each kind are kept, and the
//!   rest counted ([`Repaired::count`], [`Repaired::omitted`]), so that 10 MB of
//!   `"` is not ten million records, nor a note a model cannot read.
//! - **Bounded work**: one pass, linear in the input (each lookahead reads a
//!   bounded window); nesting deeper than [`RepairOptions::max_depth`] is an
//!   error, never a stack overflow.
//!
//! ```
//! use typed_tools::repair::{repair, RepairErrorKind};
//!
//! // A missing closing quote ends the string where the structure says.
//! assert_eq!(
//!     repair(r#"{"city": "Paris, "days": 3}"#).unwrap().json(),
//!     r#"{"city": "Paris", "days": 3}"#
//! );
//! // `=` for `:` keeps the member; it does not lose it.
//! assert_eq!(repair(r#"{"a" = 1}"#).unwrap().json(), r#"{"a" : 1}"#);
//! // Two objects on one line would need one to be dropped: refused.
//! let error = repair(r#"{"a": 1} {"b": 2}"#).unwrap_err();
//! assert_eq!((error.kind(), error.at()), (RepairErrorKind::Unrepairable, 9));
//! ```
//!
//! # Strict mode
//!
//! [`RepairOptions::strict`] allows only the repairs listed; any other repair the
//! text needs is an error naming it and its position. Valid JSON always passes.
//!
//! ```
//! use typed_tools::repair::{repair_with, RepairErrorKind, RepairKind, RepairOptions};
//!
//! let options = RepairOptions::strict([RepairKind::MarkdownFence, RepairKind::TrailingComma]);
//! assert!(repair_with("```json\n{\"a\": 1,}\n```", &options).is_ok());
//!
//! let error = repair_with("{'a': 1}", &options).unwrap_err();
//! assert_eq!(error.kind(), RepairErrorKind::Refused(RepairKind::SingleQuotes));
//! assert_eq!(error.at(), 1);
//! ```
//!
//! # How ambiguous text is read
//!
//! - **Where the value is**: text that starts with `{` or `[` (after whitespace
//!   and comments), or that is a single JSON scalar, is read from its start.
//!   Otherwise the value is looked for inside the first markdown fence (a
//!   ` ```json ` fence first), then at the first `{` or `[`; `name(` right before
//!   it is a JSONP wrapper. A candidate that cannot be read is skipped as prose
//!   (and the next `{` or `[` tried, at most 8) only if it holds no quote and no
//!   colon (`Use {city} like this: ...`); otherwise the text is refused. A `{`
//!   or `[` right before the value, or with no whitespace between it and the
//!   value (`{au.[2.": 1}`: a key that lost its opening quote; a quote
//!   too), or where the text starts (`{ au.[2.": 1}`), or in text without
//!   a word (`{[": 1}`),
//!   is no prose but the value's own bracket: the text is refused, as it is
//!   when a `{` or `[` follows a quote (`" "{"`: inside a string), or text
//!   without a word holds a bracket or quote (a word is two letters in a
//!   row or a character beyond ASCII: `22e342` has none). Prose
//!   after the value is dropped and recorded unless it holds a `"key":`, or a
//!   string and ends with a bracket (`["a", ]b", "c"]`: the value closed
//!   early), or, after a value the text broke off, a quote or bracket.
//! - **A fenced block in braces** (`{```json\n{"a": 1}\n```}`, nothing
//!   else around): the fenced value, the braces removed
//!   ([`RepairKind::StrayBracket`]): an object holds no bare value. In
//!   brackets (`[```json ... ```]`) the block is the array's item, a reading
//!   that loses nothing and that the brackets may well mean.
//! - **More than one value**: values one per line (`{"a": 1}\n{"a": 2}`,
//!   NDJSON, `1\n2`) or separated by commas (`{"a": 1}, {"a": 2}`, `"a",
//!   "b"`) are put in an array ([`RepairKind::NewlineDelimited`]): each an
//!   array, an object, or a whole string that is no key, number or JSON
//!   literal; a bare word is prose (`a\nb` is refused). A comma between
//!   digits separates no values (`1,234`, `3,14`: a number's, perhaps).
//!   Two values on one line with only a space between, or text that goes on
//!   after the value closed (`{"a": 1}, "b": 2}`), are an error, since
//!   keeping one part would lose the other.
//! - **A quote inside a string** ends the string if what follows fits the
//!   place: `:` after a key; `}`, `]`, another string, `+` and a string, or a
//!   `,` and a next member or item after a value. A quote that does not fit
//!   but opens what reads as strict JSON in its place (a key and its value in
//!   an object, an item in an array) ends the string there: the string lacked
//!   its closing quote (`{"a": "x, "b": 1}` gives `"x"`,
//!   [`RepairKind::MissingQuote`]; refused where the text after a comma
//!   in it reads as strict JSON too, `["x, 1, "y"]`: it may end at either
//!   comma), or, after an odd number of quotes taken for
//!   text, the last of them closed it. A string that runs to the end of the
//!   text ends before the closing brackets the text ends with (`["abc]`), or at
//!   its first comma if everything after reads as JSON (`["a, 1, 2]`);
//!   otherwise it is one string, commas and all (`["red, green, blue` is
//!   `["red, green, blue"]`: splitting it at its commas, as some repairers
//!   do, would make up quotes the text does not show, where one string
//!   loses nothing); one
//!   that runs there over a quote taken for text and a line break or a
//!   space after it (`{"a": "x"\n{`, `{"a": "[LINK](" x`) is refused, since
//!   that quote may close it, and two such quotes with only spaces between
//!   (`"[LINK](" "}`); so is one whose text starts with a colon
//!   (`[2.":1}`), as if its quote closed a key. Any
//!   other quote is text and escaped (`"He said "hi" to me"`); but a quote
//!   taken for text that is followed by `:`, as a key is, makes the text
//!   ambiguous and is refused (the first such quote even in code: a key
//!   read as a value, `"a": # note\n "b[1": "y"`), as is a `"` followed by
//!   `:` in a key in other quotes (`` {`]a":"`"} ``). A quote followed by a comma opens no token
//!   (`"a ", (b": 1`). A key whose text ends in a colon, whose
//!   closing quote is followed by no `: value` (or by a colon and a string
//!   that runs to the end of the text, or a word and a quote:
//!   `{"a-:":NkN "}`, also as an array's first item: `{"ea-:":[aN "}`) but opens a string that
//!   closes as a value (`{"port:: "80"}`), may lack its closing quote
//!   instead: refused. An unquoted key that stops at a colon, where the
//!   text runs on over it to a quote, a colon and a value (`{/:":"a" }`),
//!   may lack its opening quote and end at that quote instead; and a
//!   value whose text is a colon before a quote that opens a closed value
//!   (`{"":":"a" }`) may have its opening quote close a key: both refused. So is a key with a backslash before a colon where,
//!   read as the key's closing quote, the backslash would make the colon
//!   and what follows strict JSON (`{"a\: 1}`), and a key with an escaped
//!   quote and a colon after it that, read as the key's closing quote,
//!   would close the value as strict JSON (`{"\":": "}`). So is a whole-text string whose first quote taken
//!   for text has only whitespace before it (`" "0"`: a stray quote). A
//!   fence after a closing quote ends the value only if nothing follows it
//!   on its line. Text that opens brackets of its own
//!   (`"print({"a": 1})"`) is code, whose quotes stay text, except one
//!   followed by a comma, a stray mark and a key (`"f({", - "b": 1`), or
//!   a comma, a few bytes of junk without quotes and a key whose member
//!   reads as strict JSON (`"f({",] "b": 1}`, `",\nHere you go: "b": 1}`),
//!   and one after which a bracket of another kind than the code opened
//!   closes (`"[p"/\n},`): that quote closed the string. Text that escapes
//!   its quotes (`"x {\"a\": 1} y`) is no such code: its bare quotes are
//!   the structure's. Nor is a quote that opens a line at the indentation
//!   of the line its string opened on (`"url": "x{/a,\n  "b": 1`): that is
//!   the next member, and the string lacked its closing quote. A quote before a
//!   line break, after a member on one line, closes its string where the
//!   next line opens at that member's indentation with an unquoted key and
//!   a colon (`  "a": "x"\n  b: 2`, comments between too): the next member,
//!   its comma and its key's quotes missing.
//! - **Stray quotes** (a quote before a value or key that opens nothing, a
//!   quote that never closes over JSON text) are refused; a stray quote's
//!   text that closes the containers it is in and opens others is read as
//!   JSON in those (`"x"'\n},\n{\n "b": "It's"`).
//! - **Missing commas and colons**: two values separated only by whitespace
//!   inside an array or object get a comma (`["a" "b"]`); a key followed by a
//!   value gets a colon; `=` and `=>` become `:`; a doubled `:` or `,` is
//!   removed.
//! - **Strings joined with `+`** (`"a" + "b"`) become one string. A quote
//!   after a `+` inside a string (`"a +"b"`) opens a joined string only if
//!   that string's closing quote fits the place; otherwise it is text. A
//!   `+` before a quoted key (`"a" +\n "b": 1`) is refused.
//! - **Numbers** are told by JSON's grammar, not by their size: `1e999` is a
//!   number, never a word or a key.
//! - **Truncated text** is closed: an unfinished string, array or object is
//!   ended where the text stops, an unfinished literal is completed (`tru`) and a
//!   key the text stopped in or before giving a value is kept with `null`
//!   ([`RepairKind::UnfinishedKey`]). A truncated string keeps the characters it
//!   has; a number cut short keeps its digits (`2.` is `2`), and a lone `-` is
//!   no value: removed and recorded ([`RepairKind::LoneSign`]), as in an
//!   array (`[1, -]`). A key that runs to the end over a colon (its first or its
//!   last) and a value that closes the text (`{"a: b:1}`) may have lacked
//!   its closing quote there: refused.
//! - **Missing values**: `{"a": }` and `{"a": ...}` give `null`; a key followed
//!   by `,` or `}` without a colon (`{"a", "b"}`, perhaps a Python set) is an
//!   error.
//! - **Numbers** JSON does not allow are rewritten (`+1`, `.5`, `1.`) except
//!   those with leading zeros (`007`), which are kept as strings, so that no
//!   digit is lost. `NaN` and `Infinity` become `null`.
//! - **Bare words** in value position become strings (`{"status": active}`),
//!   as do tokens that start like a number but are not one (`2024-01-15`); a
//!   word that ends in a quote lacks its opening quote (`{"a": b"}`). Bare text
//!   that holds a string, a `"key":` or, after its first word, a number or
//!   literal, or a bracket and a value (`{"a": Here you go: [1]}`), is refused: it
//!   is junk before a value, not one text. A JavaScript regular expression
//!   literal (`/^[a-z]+$/i`: on one line, without quotes, a `/` inside a
//!   `[...]` class being text) is kept whole as a string, never read as the
//!   array its brackets look like; prose before the value that ends in a
//!   `/` glued to its bracket, with another `/` after it on its line and no
//!   quote between (`Use /[a-z]+/ here`), is refused.
//! - **Constructor wrappers** (`NumberLong("2")`, `new Date("2020")`,
//!   `bson.Int64(-3)`): a name, dotted or after `new`, and parentheses
//!   around one string, number or literal (any content for MongoDB's type
//!   names) give that value, the wrapper removed ([`RepairKind::TypeWrapper`]);
//!   an empty one (`ObjectId()`) is `null`; as the whole text, a `;` after
//!   it goes too (`callback(2);`). Anything else in the parentheses makes
//!   no wrapper: `f(x)` is a bare word, `new Point(1, 2)` is refused.
//! - **JSON written escaped** (`{\"a\": 1}`, every quote escaped) is decoded
//!   ([`RepairKind::EscapedJson`]), with the escaped quotes in its strings,
//!   written `\\\"` or `\\"` (the backslash escaped instead of the quote),
//!   and a last quote that lost its backslash (`\"hello"`). **Strings inside the value** are never
//!   decoded, even if they hold JSON: a string field may legitimately carry
//!   JSON text.
//! - **Control characters** in a string are escaped, recorded once per string.
//!   Between tokens, control characters and Unicode's spaces (no-break
//!   U+00A0, U+2000 to U+200A, U+202F, U+205F, the ideographic U+3000,
//!   U+180E, zero-width U+200B, U+2028, U+2029, a byte-order mark) are
//!   whitespace: removed, and recorded ([`RepairKind::ControlCharacter`]).
//!   Inside a string they are its text.
//!
//! Peers measured side by side are in `benches/repair.rs` and
//! `examples/repair_compare.rs`.

use std::borrow::Cow;
use std::fmt;

use serde::de::IgnoredAny;

mod containers;
mod continuation;
mod lex;
mod log;
mod parse;
mod scalar;
mod string;
mod stringified;
mod top;
mod verbatim;

/// Repairs `text` into JSON with the default options: every repair allowed,
/// nesting up to 512.
///
/// ```
/// use typed_tools::repair::repair;
///
/// let repaired = repair("{\"flag\": True, \"note\": None}").unwrap();
/// assert_eq!(repaired.json(), r#"{"flag": true, "note": null}"#);
/// assert_eq!(repaired.repairs().len(), 2);
///
/// // Valid JSON comes back as it was, without a copy.
/// let valid = r#"{ "a" : [1, 2] }"#;
/// assert!(repair(valid).unwrap().is_unchanged());
/// ```
pub fn repair(text: &str) -> Result<Repaired<'_>, RepairError> {
    repair_with(text, &RepairOptions::default())
}

/// Repairs `text` into JSON, applying only the repairs `options` allows.
///
/// ```
/// use typed_tools::repair::{repair_with, RepairKind, RepairOptions};
///
/// let options = RepairOptions::strict([RepairKind::TrailingComma]);
/// let repaired = repair_with("[1, 2,]", &options).unwrap();
/// assert_eq!(repaired.json(), "[1, 2]");
/// assert!(repair_with("[1, 2", &options).is_err());
/// ```
pub fn repair_with<'a>(
    text: &'a str,
    options: &RepairOptions,
) -> Result<Repaired<'a>, RepairError> {
    match stringified::unwrap_text(text, options) {
        Some(Some(unwrapped)) => return Ok(unwrapped),
        Some(None) => {
            return Ok(Repaired {
                json: Cow::Borrowed(text),
                repairs: Vec::new(),
                omitted: Vec::new(),
            })
        }
        None => {}
    }
    if may_be_json(text) && serde_json::from_str::<IgnoredAny>(text).is_ok() {
        if let Some(unwrapped) = stringified::unwrap_valid(text, options) {
            return Ok(unwrapped);
        }
        return Ok(Repaired {
            json: Cow::Borrowed(text),
            repairs: Vec::new(),
            omitted: Vec::new(),
        });
    }
    parse::run(text, options)
}

/// Whether `text` can be JSON by its ends: the first and last bytes other
/// than whitespace could open and close a JSON value, and the byte after an
/// opening bracket could follow it. A cheap test that spares the full parse
/// of text cut off, wrapped in prose or with unquoted keys.
fn may_be_json(text: &str) -> bool {
    let bytes = text.as_bytes().trim_ascii();
    let (Some(first), Some(last)) = (bytes.first(), bytes.last()) else {
        return false;
    };
    let ends = matches!(
        first,
        b'{' | b'[' | b'"' | b'-' | b'0'..=b'9' | b't' | b'f' | b'n'
    ) && matches!(last, b'}' | b']' | b'"' | b'0'..=b'9' | b'e' | b'l');
    // What follows an opening bracket: a key or `}` after `{`, a value or
    // `]` after `[` (`{'a': 1}` and `{a: 1}` fail here).
    let second = bytes[1..].iter().find(|b| !b.is_ascii_whitespace());
    ends && match first {
        b'{' => matches!(second, Some(b'"' | b'}')),
        b'[' => matches!(
            second,
            Some(b'{' | b'[' | b'"' | b'-' | b'0'..=b'9' | b't' | b'f' | b'n' | b']')
        ),
        _ => true,
    }
}

/// JSON text and the repairs that produced it: the first
/// [`KEPT_PER_KIND`](Repaired::KEPT_PER_KIND) of each kind, and how many more.
///
/// ```
/// use typed_tools::repair::repair;
///
/// let repaired = repair("{a: 1}").unwrap();
/// assert_eq!(repaired.json(), r#"{"a": 1}"#);
/// assert!(!repaired.is_unchanged());
/// // `Display` lists the repairs, written for a model to read.
/// assert_eq!(repaired.to_string(), "quoted an unquoted key at byte 1");
/// let value: serde_json::Value = serde_json::from_str(&repaired.into_json()).unwrap();
/// assert_eq!(value["a"], 1);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Repaired<'a> {
    json: Cow<'a, str>,
    /// The first repairs of each kind, in the order of their positions.
    repairs: Vec<Repair>,
    /// For each kind with more repairs than were kept, how many more, in
    /// the order of [`RepairKind::ALL`]; empty for almost every text.
    omitted: Vec<(RepairKind, usize)>,
}

impl<'a> Repaired<'a> {
    /// How many repairs of each kind [`repairs`](Repaired::repairs) keeps
    /// (and `Display` lists): the first 5, in the order they were made. The
    /// rest are counted ([`count`](Repaired::count),
    /// [`omitted`](Repaired::omitted)), so that what is kept, and the note a
    /// model reads, stay short whatever the input's size.
    ///
    /// ```
    /// use typed_tools::repair::{repair, Repaired, RepairKind};
    ///
    /// let text = format!("[{}]", "1 ".repeat(100));
    /// let repaired = repair(&text).unwrap();
    /// assert_eq!(repaired.repairs().len(), Repaired::KEPT_PER_KIND);
    /// assert_eq!(repaired.count(RepairKind::MissingComma), 99);
    /// assert_eq!(repaired.omitted(), 94);
    /// assert!(repaired.to_string().ends_with(
    ///     "; … and 94 more (inserted a missing comma)"
    /// ));
    /// ```
    pub const KEPT_PER_KIND: usize = log::KEPT_PER_KIND;

    /// The JSON text.
    ///
    /// ```
    /// assert_eq!(typed_tools::repair::repair("[1,]").unwrap().json(), "[1]");
    /// ```
    pub fn json(&self) -> &str {
        &self.json
    }

    /// The repairs kept, in the order of their positions in the input: every
    /// repair made, up to the first [`KEPT_PER_KIND`](Repaired::KEPT_PER_KIND)
    /// of each kind.
    ///
    /// ```
    /// use typed_tools::repair::{repair, Repair, RepairKind};
    ///
    /// let repaired = repair("[1,]").unwrap();
    /// assert_eq!(repaired.repairs(), [Repair { kind: RepairKind::TrailingComma, at: 2 }]);
    /// ```
    pub fn repairs(&self) -> &[Repair] {
        &self.repairs
    }

    /// How many repairs of `kind` were made, kept or not.
    ///
    /// ```
    /// use typed_tools::repair::{repair, RepairKind};
    ///
    /// let text = format!("[{}]", "1,,".repeat(10));
    /// let repaired = repair(&text).unwrap();
    /// assert_eq!(repaired.count(RepairKind::ExtraComma), 10);
    /// assert_eq!(repaired.count(RepairKind::TrailingComma), 1);
    /// assert_eq!(repaired.count(RepairKind::Comment), 0);
    /// ```
    pub fn count(&self, kind: RepairKind) -> usize {
        let kept = self.repairs.iter().filter(|r| r.kind == kind).count();
        kept + self.omitted_of(kind)
    }

    /// How many repairs were made but not kept in
    /// [`repairs`](Repaired::repairs), of every kind; 0 when every repair is
    /// listed.
    ///
    /// ```
    /// use typed_tools::repair::repair;
    ///
    /// assert_eq!(repair("[1 2 3]").unwrap().omitted(), 0);
    /// assert_eq!(repair(&format!("[{}]", "1 ".repeat(1000))).unwrap().omitted(), 994);
    /// ```
    pub fn omitted(&self) -> usize {
        self.omitted.iter().map(|&(_, n)| n).sum()
    }

    /// How many repairs of `kind` were made but not kept.
    pub(crate) fn omitted_of(&self, kind: RepairKind) -> usize {
        self.omitted
            .iter()
            .find(|&&(k, _)| k == kind)
            .map_or(0, |&(_, n)| n)
    }

    /// For each kind with repairs not kept, how many, in the order of
    /// [`RepairKind::ALL`].
    pub(crate) fn omitted_by_kind(&self) -> &[(RepairKind, usize)] {
        &self.omitted
    }

    /// Adds these repairs to `log`.
    fn log_into(&self, log: &mut log::Log) {
        for &repair in &self.repairs {
            log.record(repair);
        }
        for &(kind, n) in &self.omitted {
            log.count_more(kind, n);
        }
    }

    /// Whether the text was valid JSON and is returned as it was.
    ///
    /// ```
    /// assert!(typed_tools::repair::repair("[1]").unwrap().is_unchanged());
    /// assert!(!typed_tools::repair::repair("[1,]").unwrap().is_unchanged());
    /// ```
    pub fn is_unchanged(&self) -> bool {
        self.repairs.is_empty()
    }

    /// The JSON text, borrowed from the input when it was unchanged.
    ///
    /// ```
    /// use std::borrow::Cow;
    ///
    /// assert!(matches!(typed_tools::repair::repair("[1]").unwrap().into_json(), Cow::Borrowed("[1]")));
    /// ```
    pub fn into_json(self) -> Cow<'a, str> {
        self.json
    }
}

/// The repairs, for a model to read: `removed a trailing comma at byte 17; ...`,
/// then, for each kind with more repairs than were kept, `… and 1,048,571 more
/// (escaped a quote inside a string)`; or `no repairs` when the text was valid
/// JSON.
impl fmt::Display for Repaired<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.repairs.is_empty() {
            return f.write_str("no repairs");
        }
        for (i, repair) in self.repairs.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{repair}")?;
        }
        for &(kind, n) in &self.omitted {
            f.write_str("; ")?;
            more(f, n, kind.description())?;
        }
        Ok(())
    }
}

/// `… and 1,048,571 more (escaped a quote inside a string)`: how many
/// changes of one kind were made beyond those listed.
pub(crate) fn more(f: &mut fmt::Formatter<'_>, n: usize, what: &str) -> fmt::Result {
    write!(f, "… and {} more ({what})", crate::schema::Thousands(n))
}

/// One change made to the text: what, and where.
///
/// ```
/// use typed_tools::repair::{Repair, RepairKind};
///
/// let repair = Repair { kind: RepairKind::Comment, at: 9 };
/// assert_eq!(repair.to_string(), "removed a comment at byte 9");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Repair {
    /// What was changed.
    pub kind: RepairKind,
    /// The byte offset in the input where the change applies: the first byte of
    /// what was removed or rewritten, or where something was inserted.
    pub at: usize,
}

impl fmt::Display for Repair {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.kind.description(), self.at)
    }
}

macro_rules! repair_kinds {
    ($($(#[$doc:meta])* $kind:ident => $description:literal,)*) => {
        /// A kind of change [`repair`] can make. Strict mode lists the kinds it allows.
        ///
        /// ```
        /// use typed_tools::repair::RepairKind;
        ///
        /// assert_eq!(RepairKind::PythonLiteral.description(), "replaced a Python literal with JSON");
        /// assert!(RepairKind::ALL.contains(&RepairKind::Truncated));
        /// ```
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum RepairKind {
            $($(#[$doc])* $kind,)*
        }

        impl RepairKind {
            /// Every kind, in declaration order.
            ///
            /// ```
            /// use typed_tools::repair::{RepairKind, RepairOptions};
            ///
            /// // Strict mode allowing everything is the default.
            /// let all = RepairOptions::strict(RepairKind::ALL.iter().copied());
            /// assert!(RepairKind::ALL.iter().all(|kind| all.allows(*kind)));
            /// ```
            pub const ALL: &'static [RepairKind] = &[$(RepairKind::$kind,)*];

            /// What the change was, in a few words for a model ("removed a
            /// trailing comma"); [`Repair`]'s `Display` adds the position.
            ///
            /// ```
            /// use typed_tools::repair::RepairKind;
            ///
            /// assert_eq!(RepairKind::TrailingComma.description(), "removed a trailing comma");
            /// ```
            pub const fn description(self) -> &'static str {
                match self {
                    $(RepairKind::$kind => $description,)*
                }
            }
        }
    };
}

repair_kinds! {
    /// ```` ```json ... ``` ```` around the value, or a fence line inside it:
    /// the fence lines are removed.
    MarkdownFence => "removed a markdown code fence",
    /// Text before or after the value ("Here are the arguments: ..."), removed.
    SurroundingProse => "removed text around the JSON value",
    /// `callback({...});`: the wrapper is removed.
    Jsonp => "removed a JSONP wrapper",
    /// `NumberLong("2")`, `ObjectId("5f1")`, `new Date("2020")`, `Foo(1)`:
    /// a constructor's name (after `new`, or a MongoDB type's) and its
    /// parentheses around one string, number or literal are removed, the
    /// value kept; an empty one (`ObjectId()`) is `null`.
    TypeWrapper => "removed a constructor wrapper such as NumberLong(...)",
    /// A JSON string whose content is a JSON object or array (`"{\"a\": 1}"`),
    /// decoded. Only for the whole value, never for strings inside it.
    StringifiedJson => "decoded JSON that was sent as a string",
    /// `{\"a\": 1}`: JSON written as the content of a string, without the
    /// string's quotes; the escapes are decoded.
    EscapedJson => "decoded JSON that was written escaped",
    /// Values one per line (`{"a": 1}\n{"a": 2}`, NDJSON) or separated by
    /// commas (`{"a": 1}, {"a": 2}`, `1, 2`): put in an array, each kept.
    NewlineDelimited => "put several values, one per line or after commas, in an array",
    /// `[1, 2,]`, `{"a": 1,}`: the comma is removed.
    TrailingComma => "removed a trailing comma",
    /// `[,1]`: the comma is removed.
    LeadingComma => "removed a leading comma",
    /// `[1,,2]`: the repeated comma is removed (no `null` is made up for it).
    ExtraComma => "removed a repeated comma",
    /// `[1 2]`, `{"a": 1 "b": 2}`: a comma is inserted.
    MissingComma => "inserted a missing comma",
    /// `{"a" 1}`: a colon is inserted.
    MissingColon => "inserted a missing colon",
    /// `{"a" = 1}`, `{"a" => 1}`: written as `:`.
    EqualsForColon => "replaced `=` with `:`",
    /// `{"a":: 1}`: the repeated colon is removed.
    ExtraColon => "removed a repeated colon",
    /// `{"a": }`: `null` is written for the value the key shows is missing.
    MissingValue => "wrote null for a missing value",
    /// `'text'`: rewritten with double quotes, inner `"` escaped.
    SingleQuotes => "replaced single quotes with double quotes",
    /// `“text”`, `‘text’`: rewritten with straight double quotes.
    CurlyQuotes => "replaced typographic quotes with double quotes",
    /// `` `text` ``, `` `text´ ``: rewritten with double quotes.
    Backticks => "replaced backticks with double quotes",
    /// A string that lacks a quote, ended or begun where the structure
    /// around it shows: `{"a": "x, "b": 1}`, `["abc]`, `{a": 1}`.
    MissingQuote => "added a missing quote to a string",
    /// `"a" + "b"`: joined into one string.
    StringConcatenation => "joined strings concatenated with +",
    /// `{city: "Paris"}`: the key is quoted.
    UnquotedKey => "quoted an unquoted key",
    /// `{"status": active}`, `{"date": 2024-01-15}`: the text is quoted.
    UnquotedString => "quoted an unquoted string",
    /// `"He said "hi""`: the inner quote is escaped.
    UnescapedQuote => "escaped a quote inside a string",
    /// `"C:\dir"`, `"it\'s"`: the backslash is escaped (`\\d`), or dropped
    /// before `'`.
    InvalidEscape => "fixed an invalid escape sequence in a string",
    /// A raw newline, tab or other control character in a string, escaped (one
    /// record per string); or stray whitespace JSON does not allow (a form feed,
    /// a byte-order mark, a Unicode space: no-break, U+2000 to U+200A, U+202F,
    /// U+205F, U+3000, U+180E) between tokens, removed.
    ControlCharacter => "escaped or removed a raw control character",
    /// `// ...`, `/* ... */` or `# ...`, removed.
    Comment => "removed a comment",
    /// `True`, `False`, `None`: written as `true`, `false`, `null`.
    PythonLiteral => "replaced a Python literal with JSON",
    /// `undefined`: written as `null`.
    Undefined => "replaced undefined with null",
    /// `NaN`, `Infinity`, `-Infinity`: JSON has no such numbers; written as `null`.
    NonFiniteNumber => "replaced NaN or Infinity with null",
    /// `+1`, `.5`, `1.` rewritten as `1`, `0.5`, `1`; `007` kept as the string `"007"`.
    NumberFormat => "rewrote a number JSON does not allow",
    /// `[-]`, `[1, +]`, `{"a": -` (cut short): a sign or a decimal point
    /// with no digits, where a value belongs, removed (a key's value is then
    /// `null`, as the text stops before giving one).
    LoneSign => "removed a sign or point that had no digits",
    /// `[1, 2, ...]`: the ellipsis is removed, or where a value is required
    /// (`{"a": ...}`) written as `null`.
    Ellipsis => "removed an ellipsis",
    /// `{"a": [1, 2}`: the array is closed before the `}` closes the object.
    MissingBracket => "closed an array or object left open",
    /// `{"a": 1}}`: a closing bracket with nothing to close, removed; or
    /// the braces around a fenced block (`{```json ... ```}`).
    StrayBracket => "removed an unmatched bracket",
    /// The text stops inside the value: unfinished strings, literals, arrays
    /// and objects are closed where it stops.
    Truncated => "closed the truncated text",
    /// `{"a": 1, "b": ` (truncated): the key is kept, with `null` for the
    /// value the text stops before giving.
    UnfinishedKey => "wrote null for a key the text stops before giving a value",
}

impl fmt::Display for RepairKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.description())
    }
}

/// Which repairs are allowed, and how deep values may nest.
///
/// The default allows every repair and nesting up to 512.
///
/// ```
/// use typed_tools::repair::{RepairKind, RepairOptions};
///
/// let options = RepairOptions::default().max_depth(64);
/// assert!(options.allows(RepairKind::Truncated));
/// let strict = RepairOptions::strict([RepairKind::MarkdownFence]);
/// assert!(!strict.allows(RepairKind::Truncated));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RepairOptions {
    allowed: u64,
    max_depth: usize,
}

const _: () = assert!(
    RepairKind::ALL.len() <= 64,
    "the allowed set is a u64 bit set"
);

impl Default for RepairOptions {
    fn default() -> Self {
        RepairOptions {
            allowed: u64::MAX,
            max_depth: 512,
        }
    }
}

impl RepairOptions {
    /// Allows only the repairs listed: any other repair the text needs is an
    /// error ([`RepairErrorKind::Refused`]) naming it and its position.
    ///
    /// ```
    /// use typed_tools::repair::{repair_with, RepairKind, RepairOptions};
    ///
    /// let fences_only = RepairOptions::strict([RepairKind::MarkdownFence]);
    /// assert_eq!(repair_with("```\n[1]\n```", &fences_only).unwrap().json(), "[1]");
    /// // Nothing allowed: only valid JSON passes.
    /// let none = RepairOptions::strict([]);
    /// assert!(repair_with("[1]", &none).is_ok());
    /// assert!(repair_with("[1,]", &none).is_err());
    /// ```
    pub fn strict(allowed: impl IntoIterator<Item = RepairKind>) -> Self {
        let allowed = allowed.into_iter().fold(0, |set, kind| set | bit(kind));
        RepairOptions {
            allowed,
            ..RepairOptions::default()
        }
    }

    /// Sets how deep arrays and objects may nest in text that needs repair
    /// (valid JSON is never refused). Deeper text is an error
    /// ([`RepairErrorKind::TooDeep`]); the repairer recurses once per level, so
    /// this also bounds its stack.
    ///
    /// ```
    /// use typed_tools::repair::{repair_with, RepairErrorKind, RepairOptions};
    ///
    /// let options = RepairOptions::default().max_depth(2);
    /// assert!(repair_with("[[1,]]", &options).is_ok());
    /// let error = repair_with("[[[1,]]]", &options).unwrap_err();
    /// assert_eq!((error.kind(), error.at()), (RepairErrorKind::TooDeep, 2));
    /// ```
    pub fn max_depth(mut self, depth: usize) -> Self {
        self.max_depth = depth;
        self
    }

    /// Whether this repair is allowed.
    ///
    /// ```
    /// use typed_tools::repair::{RepairKind, RepairOptions};
    ///
    /// assert!(RepairOptions::default().allows(RepairKind::Comment));
    /// assert!(!RepairOptions::strict([]).allows(RepairKind::Comment));
    /// ```
    pub fn allows(&self, kind: RepairKind) -> bool {
        self.allowed & bit(kind) != 0
    }

    fn without(&self, kinds: &[RepairKind]) -> Self {
        RepairOptions {
            allowed: kinds
                .iter()
                .fold(self.allowed, |set, &kind| set & !bit(kind)),
            max_depth: self.max_depth,
        }
    }
}

const fn bit(kind: RepairKind) -> u64 {
    1 << kind as u32
}

/// Why text could not be repaired, and where.
///
/// ```
/// use typed_tools::repair::{repair, RepairErrorKind};
///
/// let error = repair("I could not find that city.").unwrap_err();
/// assert_eq!(error.kind(), RepairErrorKind::NoJson);
/// assert_eq!(
///     error.to_string(),
///     "no JSON value in the text; send the arguments as one JSON object"
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RepairError {
    kind: RepairErrorKind,
    at: usize,
    reason: &'static str,
}

/// What kind of failure a [`RepairError`] is.
///
/// ```
/// use typed_tools::repair::{repair, RepairErrorKind};
///
/// assert_eq!(repair("  ").unwrap_err().kind(), RepairErrorKind::Empty);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RepairErrorKind {
    /// The text is empty or only whitespace.
    Empty,
    /// The text holds no JSON value: no `{` or `[`, and it is not a scalar.
    NoJson,
    /// The text needs a repair the options do not allow.
    Refused(RepairKind),
    /// Arrays and objects nest deeper than [`RepairOptions::max_depth`].
    TooDeep,
    /// The text cannot be read as JSON without guessing (a key with no colon and
    /// no value, two values where one is expected, a stray `:`).
    Unrepairable,
}

impl RepairError {
    pub(crate) fn new(kind: RepairErrorKind, at: usize, reason: &'static str) -> Self {
        RepairError { kind, at, reason }
    }

    /// What kind of failure this is.
    ///
    /// ```
    /// use typed_tools::repair::{repair, RepairErrorKind};
    ///
    /// assert_eq!(repair("{\"a\": 1} {\"a\": 2}").unwrap_err().kind(), RepairErrorKind::Unrepairable);
    /// ```
    pub fn kind(&self) -> RepairErrorKind {
        self.kind
    }

    /// The byte offset in the input where the problem is.
    ///
    /// ```
    /// assert_eq!(typed_tools::repair::repair("{\"a\": 1} {\"a\": 2}").unwrap_err().at(), 9);
    /// ```
    pub fn at(&self) -> usize {
        self.at
    }

    /// In strict mode, the repair that was needed but not allowed.
    ///
    /// ```
    /// use typed_tools::repair::{repair_with, RepairKind, RepairOptions};
    ///
    /// let error = repair_with("[1,]", &RepairOptions::strict([])).unwrap_err();
    /// assert_eq!(error.refused(), Some(RepairKind::TrailingComma));
    /// ```
    pub fn refused(&self) -> Option<RepairKind> {
        match self.kind {
            RepairErrorKind::Refused(kind) => Some(kind),
            _ => None,
        }
    }
}

impl fmt::Display for RepairError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            RepairErrorKind::Empty => {
                f.write_str("the text is empty; send the arguments as one JSON object")
            }
            RepairErrorKind::NoJson => {
                f.write_str("no JSON value in the text; send the arguments as one JSON object")
            }
            RepairErrorKind::Refused(kind) => write!(
                f,
                "the text is not valid JSON at byte {}: it would need a repair that is not allowed ({}); send valid JSON",
                self.at,
                kind.description()
            ),
            RepairErrorKind::TooDeep => write!(
                f,
                "the value nests too deeply at byte {} ({}); send a flatter value",
                self.at, self.reason
            ),
            RepairErrorKind::Unrepairable => write!(
                f,
                "the text cannot be read as JSON at byte {}: {}; send the arguments as one valid JSON object",
                self.at, self.reason
            ),
        }
    }
}

impl std::error::Error for RepairError {}
