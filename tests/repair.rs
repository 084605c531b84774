//! JSON repair as a user checks it before trusting it with a model's argument
//! text: each mistake models make gives the exact JSON expected and says what
//! it changed; valid JSON passes untouched; strict mode refuses what it was not
//! allowed to fix; hopeless text is an error that says why.

#[path = "../benches/corpus/repair.rs"]
mod corpus;

use serde_json::{json, Value};
use typed_tools::repair::RepairKind::{self, *};
use typed_tools::repair::{repair, repair_with, Repair, RepairErrorKind, RepairOptions, Repaired};

/// Repairs `input`, expecting exactly `json` and repairs of `kinds`, in order.
#[track_caller]
fn check(input: &str, json: &str, kinds: &[RepairKind]) {
    let repaired = repair(input).unwrap_or_else(|e| panic!("{input:?}: {e}"));
    assert_eq!(repaired.json(), json, "from {input:?}");
    // The first `KEPT_PER_KIND` of each kind are listed, and all counted.
    let got: Vec<RepairKind> = repaired.repairs().iter().map(|r| r.kind).collect();
    let listed: Vec<RepairKind> = kinds
        .iter()
        .enumerate()
        .filter(|&(i, kind)| {
            kinds[..i].iter().filter(|k| *k == kind).count() < Repaired::KEPT_PER_KIND
        })
        .map(|(_, kind)| *kind)
        .collect();
    assert_eq!(got, listed, "from {input:?}");
    for kind in kinds {
        let expected = kinds.iter().filter(|k| *k == kind).count();
        assert_eq!(repaired.count(*kind), expected, "from {input:?}");
    }
    assert_eq!(repaired.omitted(), kinds.len() - listed.len());
    assert!(serde_json::from_str::<Value>(repaired.json()).is_ok());
}

/// Expects `input` to be refused with this error kind at this byte.
#[track_caller]
fn refused(input: &str, kind: RepairErrorKind, at: usize) {
    let error = repair(input).map(|r| r.json().to_string()).unwrap_err();
    assert_eq!((error.kind(), error.at()), (kind, at), "{input:?}: {error}");
}

#[test]
fn markdown_fences_and_prose_are_removed() {
    check(
        "```json\n{\"city\": \"Paris\"}\n```",
        r#"{"city": "Paris"}"#,
        &[MarkdownFence],
    );
    check("```\n[1, 2]\n```", "[1, 2]", &[MarkdownFence]);
    check("```JSON\n{\"a\": 1}```", r#"{"a": 1}"#, &[MarkdownFence]);
    check(
        "Here are the arguments:\n{\"city\": \"Paris\"}",
        r#"{"city": "Paris"}"#,
        &[SurroundingProse],
    );
    check(
        "{\"city\": \"Paris\"}\nLet me know if you need more.",
        r#"{"city": "Paris"}"#,
        &[SurroundingProse],
    );
    check(
        "I'll call it:\n```json\n{\"city\": \"Paris\"}\n```\nDone.",
        r#"{"city": "Paris"}"#,
        &[SurroundingProse, MarkdownFence, SurroundingProse],
    );
    check(
        "<tool_call>{\"a\": 1}</tool_call>",
        r#"{"a": 1}"#,
        &[SurroundingProse, SurroundingProse],
    );
    // A ```json fence is preferred to an earlier fence of code.
    check(
        "Run:\n```sh\nls\n```\nwith\n```json\n{\"a\": 1}\n```",
        r#"{"a": 1}"#,
        &[SurroundingProse, MarkdownFence],
    );
    // "1." is prose here, not a number; and braces in prose are skipped when
    // they hold no readable value.
    check(
        "1. Call the tool: {\"a\": 1}",
        r#"{"a": 1}"#,
        &[SurroundingProse],
    );
    check(
        "Use {city} like this: {\"city\": \"Oslo\"}",
        r#"{"city": "Oslo"}"#,
        &[SurroundingProse],
    );
}

#[test]
fn commas_are_removed_or_inserted() {
    check(
        "{\"a\": 1, \"b\": [1, 2,],}",
        r#"{"a": 1, "b": [1, 2]}"#,
        &[TrailingComma, TrailingComma],
    );
    check("[,1, 2]", "[1, 2]", &[LeadingComma]);
    check("{,\"a\": 1}", r#"{"a": 1}"#, &[LeadingComma]);
    // A repeated comma is not a hole to fill with a made-up null.
    check("[1,,2]", "[1,2]", &[ExtraComma]);
    check(
        "{\"a\": 1\n\"b\": 2}",
        "{\"a\": 1,\n\"b\": 2}",
        &[MissingComma],
    );
    check("[\"a\" \"b\"]", r#"["a", "b"]"#, &[MissingComma]);
    check(
        "[1 2 {\"c\": 3}]",
        r#"[1, 2, {"c": 3}]"#,
        &[MissingComma, MissingComma],
    );
}

#[test]
fn quotes_are_normalized() {
    check("{'a': 'b'}", r#"{"a": "b"}"#, &[SingleQuotes, SingleQuotes]);
    // An apostrophe inside single quotes is read by what follows it.
    check(
        "{'note': 'don't forget'}",
        r#"{"note": "don't forget"}"#,
        &[SingleQuotes, SingleQuotes],
    );
    check(
        "{'a': 'it\\'s'}",
        r#"{"a": "it's"}"#,
        &[SingleQuotes, SingleQuotes],
    );
    check(
        "{'text': 'say \"hi\"'}",
        r#"{"text": "say \"hi\""}"#,
        &[SingleQuotes, SingleQuotes],
    );
    check(
        "{“a”: “b”, ‘c’: ‘d’}",
        r#"{"a": "b", "c": "d"}"#,
        &[CurlyQuotes, CurlyQuotes, CurlyQuotes, CurlyQuotes],
    );
    // Typographic quotes inside a JSON string are text, and stay.
    check(
        "{\"a\": \"it’s “fine”\",}",
        r#"{"a": "it’s “fine”"}"#,
        &[TrailingComma],
    );
}

#[test]
fn inner_quotes_are_escaped_by_context() {
    check(
        "{\"q\": \"the \"best\" one\"}",
        r#"{"q": "the \"best\" one"}"#,
        &[UnescapedQuote, UnescapedQuote],
    );
    // A quote then a comma ends the string only if a key follows.
    check(
        "{\"text\": \"say \"yes\", then go\", \"n\": 1}",
        r#"{"text": "say \"yes\", then go", "n": 1}"#,
        &[UnescapedQuote, UnescapedQuote],
    );
    check(
        "[\"a \"quoted\" word\", \"b\"]",
        r#"["a \"quoted\" word", "b"]"#,
        &[UnescapedQuote, UnescapedQuote],
    );
    // A quote on its own line before another quote: the end of the string
    // only if that quote opens a key.
    check(
        "{\"body\": \"say \"hi\"\n\", \"n\": 1}",
        r#"{"body": "say \"hi\"\n", "n": 1}"#,
        &[UnescapedQuote, UnescapedQuote, ControlCharacter],
    );
}

#[test]
fn keys_and_bare_values_are_quoted() {
    check(
        "{city: \"Paris\", max_days: 3}",
        r#"{"city": "Paris", "max_days": 3}"#,
        &[UnquotedKey, UnquotedKey],
    );
    check("{\"s\": active}", r#"{"s": "active"}"#, &[UnquotedString]);
    check(
        "{\"s\": hello world, \"n\": 1}",
        r#"{"s": "hello world", "n": 1}"#,
        &[UnquotedString],
    );
    check(
        "[2024-01-15, 12px, 0x1F]",
        r#"["2024-01-15", "12px", "0x1F"]"#,
        &[UnquotedString; 3],
    );
    check("{\"a\" 1}", r#"{"a": 1}"#, &[MissingColon]);
}

#[test]
fn control_characters_and_bad_escapes_are_fixed() {
    // One record per string, at the first control character.
    check(
        "{\"code\": \"a\n\tb\r\"}",
        r#"{"code": "a\n\tb\r"}"#,
        &[ControlCharacter],
    );
    check("[\"\u{1}\"]", r#"["\u0001"]"#, &[ControlCharacter]);
    check(
        r#"{"p": "C:\Users\Ada"}"#,
        r#"{"p": "C:\\Users\\Ada"}"#,
        &[InvalidEscape, InvalidEscape],
    );
    check(r#"{"re": "\d+"}"#, r#"{"re": "\\d+"}"#, &[InvalidEscape]);
    check(r#"{"a": "it\'s"}"#, r#"{"a": "it's"}"#, &[InvalidEscape]);
    // Whitespace JSON does not allow, between tokens: removed.
    check("\u{feff}{\"a\": 1}", r#"{"a": 1}"#, &[ControlCharacter]);
    check("{\"a\":\u{a0}1}", r#"{"a":1}"#, &[ControlCharacter]);
}

#[test]
fn comments_are_removed() {
    check(
        "{\"a\": 1 // one\n, \"b\": 2 /* two */, # three\n \"c\": 3}",
        "{\"a\": 1 \n, \"b\": 2 , \n \"c\": 3}",
        &[Comment, Comment, Comment],
    );
    check("/* args */ [1]", " [1]", &[Comment]);
    // `#` followed by a letter is a value, not a comment.
    check(
        "{\"color\": #fff}",
        r##"{"color": "#fff"}"##,
        &[UnquotedString],
    );
    // `//` inside a string is text.
    check(
        "{'url': 'http://x.org'}",
        r#"{"url": "http://x.org"}"#,
        &[SingleQuotes, SingleQuotes],
    );
}

#[test]
fn literals_and_numbers_become_json() {
    check(
        "{\"t\": True, \"f\": False, \"n\": None}",
        r#"{"t": true, "f": false, "n": null}"#,
        &[PythonLiteral; 3],
    );
    check("{\"u\": undefined}", r#"{"u": null}"#, &[Undefined]);
    // Never emitted as is: JSON has no NaN or Infinity.
    check(
        "[NaN, Infinity, -Infinity, +Infinity]",
        "[null, null, null, null]",
        &[NonFiniteNumber; 4],
    );
    // Leading zeros may matter (a code, an id): kept as text.
    check(
        "[+1, .5, -.5, 1., 007, -01]",
        r#"[1, 0.5, -0.5, 1, "007", "-01"]"#,
        &[NumberFormat; 6],
    );
}

/// A constructor around one value, as MongoDB's shell and some models
/// write it (a name, dotted or after `new`, and parentheses around one
/// string, number or literal), is the value, the wrapper removed and
/// recorded; an empty one is `null`. Around anything else the text is not
/// a wrapper (`f(x)` is a bare word, two arguments are refused).
#[test]
fn constructor_wrappers_are_removed_around_their_value() {
    check(
        r#"{"since": new Date("2024-05-01"), "n": bson.Int64(-3)}"#,
        r#"{"since": "2024-05-01", "n": -3}"#,
        &[TypeWrapper, TypeWrapper],
    );
    check(r#"{"id": ObjectId()}"#, r#"{"id": null}"#, &[TypeWrapper]);
    check(
        r#"[Flag(true), Id ("x")]"#,
        r#"[true, "x"]"#,
        &[TypeWrapper, TypeWrapper],
    );
    check(r#"NumberLong("2")"#, r#""2""#, &[TypeWrapper]);
    check("callback_1(2);", "2", &[TypeWrapper]);
    check(r#"{"a": f(x)}"#, r#"{"a": "f(x)"}"#, &[UnquotedString]);
    assert!(repair(r#"{"a": new Point(1, 2)}"#).is_err());
}

/// A member on its own line, its comma and its key's quotes missing, at
/// the indentation of the member before (which opens its line with a
/// quote): the string before ends at its quote, and the member is read,
/// its value unquoted at the end of the text too; comments between the
/// members are removed. A line that does not open as a member does stays
/// the string's text.
#[test]
fn a_member_on_a_new_line_without_comma_or_quotes_is_read() {
    check(
        "{\n  \"city\": \"Oslo\"\n  days: 3\n}",
        "{\n  \"city\": \"Oslo\",\n  \"days\": 3\n}",
        &[MissingComma, UnquotedKey],
    );
    check(
        "{\n  \"city\": \"Oslo\" // where\n  unit: metric",
        "{\n  \"city\": \"Oslo\", \n  \"unit\": \"metric\"}",
        &[
            MissingComma,
            Comment,
            UnquotedKey,
            UnquotedString,
            Truncated,
        ],
    );
    check(
        "{\"text\": \"He said \"stop\"\nNote: x\"}",
        r#"{"text": "He said \"stop\"\nNote: x"}"#,
        &[UnescapedQuote, UnescapedQuote, ControlCharacter],
    );
}

/// A string that runs to the end of the text inside an array and holds
/// commas is one string, commas and all: splitting it at the commas (as
/// some repairers do) would make up quotes the text does not show, and one
/// string loses nothing. Only where everything after its first comma reads
/// as JSON does it end there.
#[test]
fn a_string_running_to_the_end_in_an_array_keeps_its_commas() {
    check(
        r#"["red, green, blue"#,
        r#"["red, green, blue"]"#,
        &[Truncated],
    );
    check(r#"["a, 1, 2]"#, r#"["a", 1, 2]"#, &[MissingQuote]);
}

/// A fenced code block in a stray brace is the fenced value: the braces
/// are removed and recorded (an object holds no bare value). In brackets
/// it is the array's item.
#[test]
fn a_fenced_block_in_braces_is_the_fenced_value() {
    check(
        "{```json\n{\"a\": 1}\n```}",
        r#"{"a": 1}"#,
        &[StrayBracket, MarkdownFence, StrayBracket],
    );
    check(
        "{ ```\n[1, 2]\n```\n}\n",
        "[1, 2]",
        &[StrayBracket, MarkdownFence, StrayBracket],
    );
    check(
        "[```json\n{\"a\": 1}\n```]",
        "[{\"a\": 1}\n]",
        &[MarkdownFence, MarkdownFence],
    );
    // With more text after the brace, it is not the block's.
    assert!(repair("{```json\n{\"a\": 1}\n```} and more").is_err());
}

/// Several values at the top, separated by commas or line breaks (NDJSON
/// included), are put in an array, recorded: each kept. Only where the text
/// has no other reading: not two values with only a space between, not a
/// key after the comma, not a comma between digits (`1,234`).
#[test]
fn values_after_commas_or_one_per_line_are_put_in_an_array() {
    check(
        r#"{"a": 1}, {"b": 2}"#,
        r#"[{"a": 1}, {"b": 2}]"#,
        &[NewlineDelimited],
    );
    check("1\n2\n3", "[1,\n2,\n3]", &[NewlineDelimited]);
    check(r#""a", "b""#, r#"["a", "b"]"#, &[NewlineDelimited]);
    check(
        "{\"a\": 1}\n\"x\"\n",
        "[{\"a\": 1},\n\"x\"]\n",
        &[NewlineDelimited],
    );
    for text in ["1,234", "3,14", "a\nb", "{\"a\": 1}, \"b\": 2}", "[1] [2]"] {
        assert!(repair(text).is_err(), "{text:?}");
    }
}

/// JSON whose quotes are all escaped, as when a stringified document is
/// pasted, is decoded, including the escaped quotes inside its strings,
/// written `\\\"` (the escape doubled) or `\\"` (its backslash escaped
/// instead of the quote), and a last quote that lost its backslash.
#[test]
fn escaped_json_is_decoded_with_the_quotes_inside_its_strings() {
    check(
        r#"{\"note\": \"say \\\"hi\\\"\", \"n\": 1}"#,
        r#"{"note": "say \"hi\"", "n": 1}"#,
        &[EscapedJson],
    );
    check(
        r#"{\"note\": \"say \\"hi\\"\"}"#,
        r#"{"note": "say \"hi\""}"#,
        &[EscapedJson],
    );
    check(
        r#"\"hello \\"world\\"""#,
        r#""hello \"world\"""#,
        &[EscapedJson],
    );
}

/// Unicode's spaces between tokens are whitespace, as other repairers read
/// them: removed, each recorded; inside a string they are its text.
#[test]
fn unicode_spaces_between_tokens_are_whitespace() {
    let spaces = [
        '\u{a0}', '\u{2000}', '\u{2003}', '\u{200a}', '\u{202f}', '\u{205f}', '\u{3000}',
        '\u{180e}',
    ];
    for space in spaces {
        check(
            &format!("{{\"a\":{space}1,{space}\"b\":{space}[2{space}]}}"),
            r#"{"a":1,"b":[2]}"#,
            &[ControlCharacter; 4],
        );
        let text = format!("{{\"a\": \"x{space}y\"}}");
        assert!(repair(&text).unwrap().is_unchanged());
    }
    // Before and after the value too.
    check("\u{3000}[1]\u{2003}", "[1]", &[ControlCharacter; 2]);
}

/// A sign or decimal point with no digits where a value belongs is no
/// value: removed, and the record says what was removed (it had been
/// dropped silently where the text stops, or recorded as a rewritten
/// number).
#[test]
fn a_lone_sign_is_removed_and_said_so() {
    check("[-]", "[]", &[LoneSign]);
    check("[1, +]", "[1 ]", &[TrailingComma, LoneSign]);
    check("[-", "[]", &[LoneSign, Truncated]);
    check("[1, .", "[1 ]", &[LoneSign, Truncated]);
    check(
        "{\"a\": -",
        r#"{"a": null}"#,
        &[UnfinishedKey, LoneSign, Truncated],
    );
    // Where the text goes on after it in an object, `-` is kept as text.
    check("{\"a\": -}", r#"{"a": "-"}"#, &[UnquotedString]);
}

/// A JavaScript regular expression literal where a value belongs is kept
/// whole as a string: its slashes, its classes and its flags (the text
/// inside its brackets had been read as an array, the rest dropped).
#[test]
fn a_regular_expression_is_kept_as_text() {
    check(
        r#"{"pattern": /^[a-z]+$/i, "n": 1}"#,
        r#"{"pattern": "/^[a-z]+$/i", "n": 1}"#,
        &[UnquotedString],
    );
    check(
        r#"{"digits": /[0-9]{3}/g}"#,
        r#"{"digits": "/[0-9]{3}/g"}"#,
        &[UnquotedString],
    );
    check("[/[/]x/, 2]", r#"["/[/]x/", 2]"#, &[UnquotedString]);
    check("/[a-z]+/", r#""/[a-z]+/""#, &[UnquotedString]);
    check(
        r#"{"a": /(\d+)-\1/}"#,
        r#"{"a": "/(\\d+)-\\1/"}"#,
        &[UnquotedString],
    );
    // A `/` glued to the bracket the value would start at: the bracket is
    // the expression's, so the text is refused rather than cut there.
    refused("Use /[a-z]+/ here", RepairErrorKind::Unrepairable, 4);
    // A `/` before a value that would read on to a `/` in a string is no
    // expression (expressions hold no quotes).
    check(
        r#"{"a": /1, "u": "http://x"}"#,
        r#"{"a": "/1", "u": "http://x"}"#,
        &[UnquotedString],
    );
}

#[test]
fn ellipses_are_removed() {
    check("[1, 2, ...]", "[1, 2 ]", &[Ellipsis]);
    check("[..., 1]", "[ 1]", &[Ellipsis]);
    check("[1, …, 2]", "[1,  2]", &[Ellipsis]);
    check("{\"a\": 1, ...}", r#"{"a": 1 }"#, &[Ellipsis]);
    // Where a value is required, null.
    check("{\"a\": ...}", r#"{"a": null}"#, &[Ellipsis]);
    // A string "..." is a value.
    check("[\"...\",]", r#"["..."]"#, &[TrailingComma]);
}

#[test]
fn jsonp_wrappers_and_stringified_json_are_unwrapped() {
    check("callback({\"a\": 1});", r#"{"a": 1}"#, &[Jsonp]);
    check("window.handlers.cb ( [1] )", "[1]", &[Jsonp]);
    check(r#""{\"a\": 1}""#, r#"{"a": 1}"#, &[StringifiedJson]);
    // Only content that parses as it is: a string may carry text that only
    // looks like JSON.
    for text in [
        r#""[1, 2,]""#,
        r#""{a: 1}""#,
        r#""[""#,
        r#""{\"a\": 1} and more""#,
    ] {
        assert!(repair(text).unwrap().is_unchanged(), "{text}");
    }
    let repaired = repair(r#""[1, 2]""#).unwrap();
    assert_eq!(repaired.json(), "[1, 2]");
    assert_eq!(
        repaired.repairs(),
        [Repair {
            kind: StringifiedJson,
            at: 0
        }]
    );
    check(
        "```json\n\"{\\\"a\\\": 1}\"\n```",
        r#"{"a": 1}"#,
        &[MarkdownFence, StringifiedJson],
    );
    // Strings holding anything else, and strings inside the value, stay strings.
    check(
        r#"{"a": "{\"b\": 1}",}"#,
        r#"{"a": "{\"b\": 1}"}"#,
        &[TrailingComma],
    );
    assert!(repair(r#""hello""#).unwrap().is_unchanged());
    assert!(repair(r#""{not json""#).unwrap().is_unchanged());
}

#[test]
fn truncated_text_is_closed_and_unfinished_keys_kept_with_null() {
    check(
        "{\"a\": \"unfinished",
        r#"{"a": "unfinished"}"#,
        &[Truncated],
    );
    check(
        "{\"a\": [1, {\"b\": 2",
        r#"{"a": [1, {"b": 2}]}"#,
        &[Truncated],
    );
    check("{\"a\": [1, 2],", r#"{"a": [1, 2]}"#, &[Truncated]);
    // Cut short in a string after a comma: the comma is the string's (a
    // proptest found this refused as a stray quote before `0`).
    check("{\"a\":{\"b\":\"0,", r#"{"a":{"b":"0,"}}"#, &[Truncated]);
    check("[\"x, y,", r#"["x, y,"]"#, &[Truncated]);
    // Cut short after a key that ends in an escaped quote and a colon: the
    // escape holds, since the key's own quote and colon follow.
    check("{\"a\\\":\":{", "{\"a\\\":\":{}}", &[Truncated]);
    // A key the text stopped before giving a value is kept, with null.
    check(
        "{\"a\": 1, \"b\": ",
        r#"{"a": 1, "b": null}"#,
        &[UnfinishedKey, Truncated],
    );
    check(
        "{\"a\": 1, \"b\"",
        r#"{"a": 1, "b": null}"#,
        &[UnfinishedKey, Truncated],
    );
    check(
        "{\"a\": 1, \"b",
        r#"{"a": 1, "b": null}"#,
        &[UnfinishedKey, Truncated],
    );
    check(
        "{\"a\": 1, b",
        r#"{"a": 1, "b": null}"#,
        &[UnquotedKey, UnfinishedKey, Truncated],
    );
    check(
        "{\"a\": 1, 'b':",
        r#"{"a": 1, "b":null}"#,
        &[SingleQuotes, UnfinishedKey, Truncated],
    );
    check(
        "{\"a\": -",
        r#"{"a": null}"#,
        &[UnfinishedKey, LoneSign, Truncated],
    );
    // Unfinished literals, numbers, escapes.
    check("[tru", "[true]", &[Truncated]);
    check("[Fals", "[false]", &[Truncated]);
    check("[1.", "[1]", &[Truncated]);
    check("[1e", "[1]", &[Truncated]);
    check("[\"a\\", r#"["a"]"#, &[Truncated]);
    check("[\"\\u00", r#"[""]"#, &[Truncated]);
    check("[-", "[]", &[LoneSign, Truncated]);
    // A fence ends an unfinished string in it.
    check(
        "```json\n{\"a\": \"x\n```",
        r#"{"a": "x"}"#,
        &[MarkdownFence, Truncated],
    );
}

#[test]
fn brackets_are_matched() {
    check("{\"a\": [1}", r#"{"a": [1]}"#, &[MissingBracket]);
    check("[{\"a\": 1]", r#"[{"a": 1}]"#, &[MissingBracket]);
    check("[1]]", "[1]", &[StrayBracket]);
    check("{\"a\": 1}}", r#"{"a": 1}"#, &[StrayBracket]);
    check("{\"a\": }", r#"{"a": null}"#, &[MissingValue]);
    check(
        "{\"a\": , \"b\": 1}",
        r#"{"a": null, "b": 1}"#,
        &[MissingValue],
    );
}

#[test]
fn several_mistakes_at_once() {
    check(
        "Sure! Here you go:\n```json\n{\n  name: 'Ada', // the user\n  \"admin\": True,\n  \"tags\": [\"a\", \"b\",],\n  \"bio\": \"Says \"hi\"\nto all\",\n}\n```\nAnything else?",
        "{\n  \"name\": \"Ada\", \n  \"admin\": true,\n  \"tags\": [\"a\", \"b\"],\n  \"bio\": \"Says \\\"hi\\\"\\nto all\"\n}",
        &[
            SurroundingProse,
            MarkdownFence,
            UnquotedKey,
            SingleQuotes,
            Comment,
            PythonLiteral,
            TrailingComma,
            UnescapedQuote,
            UnescapedQuote,
            ControlCharacter,
            TrailingComma,
            SurroundingProse,
        ],
    );
    check(
        "```json\n{'query': 'rust', 'filters': {'lang': None, 'year': 2024,\n```",
        "{\"query\": \"rust\", \"filters\": {\"lang\": null, \"year\": 2024\n}}",
        &[
            MarkdownFence,
            SingleQuotes,
            SingleQuotes,
            SingleQuotes,
            SingleQuotes,
            PythonLiteral,
            SingleQuotes,
            Truncated,
        ],
    );
}

#[test]
fn positions_point_at_the_change_and_read_well_for_a_model() {
    let repaired = repair("{'a': 1, \"b\": [1 2],}").unwrap();
    assert_eq!(repaired.json(), r#"{"a": 1, "b": [1, 2]}"#);
    assert_eq!(
        repaired.repairs(),
        [
            Repair {
                kind: SingleQuotes,
                at: 1
            },
            Repair {
                kind: MissingComma,
                at: 16
            },
            Repair {
                kind: TrailingComma,
                at: 19
            },
        ]
    );
    assert_eq!(
        repaired.to_string(),
        "replaced single quotes with double quotes at byte 1; inserted a missing comma at byte 16; \
         removed a trailing comma at byte 19"
    );
    assert_eq!(repair("[1]").unwrap().to_string(), "no repairs");
    // Every kind has its own description.
    let mut descriptions: Vec<&str> = RepairKind::ALL.iter().map(|k| k.description()).collect();
    descriptions.sort_unstable();
    descriptions.dedup();
    assert_eq!(descriptions.len(), RepairKind::ALL.len());
}

#[test]
fn valid_json_is_returned_byte_for_byte() {
    let deep = "[".repeat(1000) + &"]".repeat(1000);
    let texts = [
        r#"{"emoji": "😀", "cjk": "東京", "escaped": "\u00e9\n\t\"\\\/", "pair": "\ud83d\ude00"}"#
            .to_string(),
        r#"{"big": 123456789012345678901234567890, "tiny": 1e-400, "huge": 1e400, "neg": -0.0}"#
            .to_string(),
        "  {\n    \"a\" : [ 1 , 2 ] ,\n    \"b\" : { }\n  }\n".to_string(),
        r#""say {\"a\": 1}""#.to_string(),
        "null".to_string(),
        deep,
        serde_json::to_string_pretty(&json!({"z": 1, "a": [true, null, "x"], "m": {"k": 0.5}}))
            .unwrap(),
    ];
    for text in &texts {
        let repaired = repair(text).unwrap();
        assert!(repaired.is_unchanged(), "{text:?}: {repaired}");
        assert_eq!(repaired.json(), text);
        assert!(repair_with(text, &RepairOptions::strict([]))
            .unwrap()
            .is_unchanged());
    }
    // Keys keep their order, in repaired text too.
    let repaired = repair("{z: 1, a: 2, m: 3,}").unwrap();
    let keys: Vec<String> = serde_json::from_str::<Value>(repaired.json())
        .unwrap()
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(keys, ["z", "a", "m"]);
}

#[test]
fn strict_mode_applies_only_the_repairs_it_allows() {
    let options = RepairOptions::strict([MarkdownFence, TrailingComma]);
    let repaired = repair_with("```json\n{\"a\": [1, 2,],}\n```", &options).unwrap();
    assert_eq!(repaired.json(), r#"{"a": [1, 2]}"#);

    for (input, kind, at) in [
        ("{'a': 1}", SingleQuotes, 1),
        ("{\"a\": 1", Truncated, 7),
        ("Here: {\"a\": 1}", SurroundingProse, 0),
        ("{\"a\": True}", PythonLiteral, 6),
        ("{\"a\": NaN}", NonFiniteNumber, 6),
        ("'text'", SingleQuotes, 0),
    ] {
        let error = repair_with(input, &options).unwrap_err();
        assert_eq!((error.refused(), error.at()), (Some(kind), at), "{input:?}");
        assert_eq!(error.kind(), RepairErrorKind::Refused(kind));
        assert!(error.to_string().contains(kind.description()), "{error}");
    }
    // Valid JSON passes strict mode with nothing allowed; a stringified value
    // stays a string unless StringifiedJson is allowed.
    let nothing = RepairOptions::strict([]);
    assert!(repair_with(r#"{"a": 1}"#, &nothing).unwrap().is_unchanged());
    assert!(repair_with(r#""{\"a\": 1}""#, &nothing)
        .unwrap()
        .is_unchanged());
    let unwrap = RepairOptions::strict([StringifiedJson]);
    assert_eq!(
        repair_with(r#""{\"a\": 1}""#, &unwrap).unwrap().json(),
        r#"{"a": 1}"#
    );
    // An unfinished key needs its own permission beside Truncated.
    let truncation = RepairOptions::strict([Truncated]);
    assert_eq!(
        repair_with("{\"a\": 1, \"b", &truncation)
            .unwrap_err()
            .refused(),
        Some(UnfinishedKey)
    );
    let truncation = RepairOptions::strict([Truncated, UnfinishedKey]);
    assert_eq!(
        repair_with("{\"a\": 1, \"b", &truncation).unwrap().json(),
        r#"{"a": 1, "b": null}"#
    );
}

#[test]
fn hopeless_or_ambiguous_text_is_an_error_that_says_why() {
    refused("", RepairErrorKind::Empty, 0);
    refused("  \n ", RepairErrorKind::Empty, 0);
    refused("I could not find that city.", RepairErrorKind::NoJson, 0);
    refused("-", RepairErrorKind::NoJson, 0);
    // Keeping one of two values would lose the other (with a comma or a
    // line break between, they are put in an array).
    refused("{\"a\": 1} {\"b\": 2}", RepairErrorKind::Unrepairable, 9);
    refused("{\"a\": 1}, \"b\": 2}", RepairErrorKind::Unrepairable, 8);
    // A key with no colon and no value (perhaps a Python set): no value to give it.
    refused("{\"a\", \"b\"}", RepairErrorKind::Unrepairable, 1);
    refused("{: 1}", RepairErrorKind::Unrepairable, 1);
    let error = repair("{\"a\": 1} {\"b\": 2}").unwrap_err();
    assert_eq!(
        error.to_string(),
        "the text cannot be read as JSON at byte 9: a second JSON value follows the first; \
         send the arguments as one valid JSON object"
    );
    // Too deep: an error, not a stack overflow.
    let error = repair(&"[".repeat(600)).unwrap_err();
    assert_eq!((error.kind(), error.at()), (RepairErrorKind::TooDeep, 512));
    let shallow = RepairOptions::default().max_depth(3);
    assert!(repair_with("[[[1,]]]", &shallow).is_ok());
    assert_eq!(
        repair_with("[[[[1,]]]]", &shallow).unwrap_err().kind(),
        RepairErrorKind::TooDeep
    );
}

/// The guesses the module docs promise to refuse, each from its own example
/// there: a repair of these would pick one reading of two, and the fuzz
/// findings (`tests/repair_fuzz.rs`) only check that a repair loses nothing,
/// not that none is made.
#[test]
fn the_guesses_the_docs_refuse_are_refused() {
    use RepairErrorKind::{NoJson, Unrepairable};
    // A quote taken for text, then a line break, and the text stops: that
    // quote may close the string.
    refused("{\"a\": \"x\"\n{", Unrepairable, 8);
    // The same with a space after that quote, as after a closing one (a
    // sweep of every single damage found `{ "content": "[LINK](" }` with
    // its `}` replaced read as the string `[LINK](" x`).
    refused("{ \"content\": \"[LINK](\" x", Unrepairable, 21);
    // And where a closing quote follows it after spaces only (`"}`
    // inserted): either quote may close the string.
    refused("{ \"content\": \"[LINK](\" \"}", Unrepairable, 21);
    // A quote taken for text in code (`[p"`), then a bracket of another
    // kind than the code opened (`/\n}`): that quote may close the
    // string (found by fuzz/run.sh in a pretty-printed array of records,
    // whose next key went into the string).
    refused(
        "[\n{\n    \"decoded\": \"Hello\",\n    \"encoded\": \"d9juau41awczcz=  [!-  [p`\"/\n},\n{\n    \"description\": \"ASCII string.)\",\n    \"decoded\": \"-> $1.00 <-\"\n}\n]\n",
        Unrepairable,
        70,
    );
    // A quote that never closes, followed by a colon as a key's closing
    // quote is (`{"au.[2.":1}` with `.` replaced by a quote was read as
    // `{"au": [2, ":1}"]}`).
    refused("{\"au\"[2.\":1}", Unrepairable, 8);
    // A key ending in a colon whose closing quote may open the value.
    refused("{\"port:: \"80\"}", Unrepairable, 9);
    // The same where a colon follows that quote, but the string after it
    // runs to the end of the text (found by fuzz/run.sh: `{"a":": "}` with
    // the key's closing quote replaced by `-` was read as the key `a-:` and
    // an empty value).
    refused("{\"a-:\": \"}", Unrepairable, 5);
    // A whole-text string whose first inner quote has only whitespace
    // before it: a stray quote (no value is left once it is refused).
    refused("\" \"0\"", NoJson, 0);
    // A `{` or `[` right after a quote, inside a string.
    refused("\" \"{\"", Unrepairable, 2);
    // A `{` or `[` right before the value, or in text without a word.
    refused("{[\": 1}", Unrepairable, 0);
    refused("Sure {[\"a\": 1}", Unrepairable, 5);
    // One with no whitespace between it and the value: here a key that
    // lost its opening quote, whose text holds a `[` (found by fuzz/run.sh;
    // read from the `[`, the `{au.` was dropped as prose and `1` went into
    // a string).
    refused("{au.[2.\":1}", Unrepairable, 0);
    // The same with a quote glued to the value, or with the text's first
    // bracket (read first, and failed) before prose: what follows is
    // inside that bracket.
    refused("\"\"au.[2.\":1}", Unrepairable, 0);
    refused("{ au.[2.\":1}", Unrepairable, 0);
    // A backslash before a colon in a key, where the key's closing quote
    // would make the rest strict JSON: it may stand for that quote (found
    // by fuzz/run.sh: `{"a":": "}` with its key's closing quote replaced
    // was read as the key `a\:` and an empty value).
    refused("{\"a\\:\": \"}", Unrepairable, 3);
    refused("{\"a\\: 1}", Unrepairable, 3);
    // A key's escaped quote, then a colon, a quote and a colon: the escape
    // holds (`{"a\":":{` below is repaired) unless, read as the key's
    // closing quote, the rest closes the value as strict JSON (found by
    // fuzz/run.sh: `{"a":": "}` with `a` replaced lost `": "`).
    refused("{\"\\\":\": \"}", Unrepairable, 2);
    // Prose after the value that holds a string and ends with a bracket:
    // the value closed early.
    refused("[\"a\", ]bc d\", \"c\"]", Unrepairable, 7);
    // A key that runs to the end over two colons, a value after each.
    refused("{\"a: b:1}", Unrepairable, 1);
    // Bare text that holds a bracket and a value.
    refused("{\"a\": Here you go: [1]}", Unrepairable, 20);
    // A quote that never closes, before JSON that closes the value.
    refused("{\"a\": '1, 2]}", Unrepairable, 6);
}

/// A key that is a colon (`":"`) before an object whose first key opens
/// with a quote: that quote was taken for a word's closing quote after the
/// colon (`: {"`), so the key's closing quote "might open the value", and
/// the text was refused. Found by proptest in repair_props (truncated and
/// sloppy objects); valid JSON alone skips the parser, so only damaged
/// text showed it.
#[test]
fn a_colon_key_before_an_object_is_read() {
    check(
        "{\"a\": {\":\": {\",\": null}}, \"b\": nu",
        "{\"a\": {\":\": {\",\": null}}, \"b\": null}",
        &[Truncated],
    );
    check(
        "{':': {'}': None},}",
        "{\":\": {\"}\": null}}",
        &[SingleQuotes, SingleQuotes, PythonLiteral, TrailingComma],
    );
    check("{\":\": [\"x\"],}", "{\":\": [\"x\"]}", &[TrailingComma]);
}

/// What the module docs promise to read rather than refuse, beside the
/// refusals above: numbers by JSON's grammar, whatever their size; a fence
/// after a closing quote only when nothing follows it on its line; a `+`
/// before a quote inside a string joins only a string that closes in place.
#[test]
fn numbers_fences_and_joins_read_as_the_docs_say() {
    // (Valid JSON, which `serde_json::Value` still refuses: out of range.)
    let repaired = repair("{\"a\": [1e999, -0.5E+400],}").unwrap();
    assert_eq!(repaired.json(), "{\"a\": [1e999, -0.5E+400]}");
    let kinds: Vec<RepairKind> = repaired.repairs().iter().map(|r| r.kind).collect();
    assert_eq!(kinds, [TrailingComma]);
    check(
        "{\"a\": \"x\"```\n",
        "{\"a\": \"x\"}",
        &[Truncated, MarkdownFence],
    );
    check(
        "{\"a\": \"x\"```b\"}",
        "{\"a\": \"x\\\"```b\"}",
        &[UnescapedQuote],
    );
    check(
        "[\"a +\"b\", \"c\"]",
        "[\"ab\", \"c\"]",
        &[MissingQuote, StringConcatenation],
    );
    // The string after the `+` would not close in place: the quote is text.
    check("[\"x +\"\u{2026}, \"y\"]", "[\"x +\", \"y\"]", &[Ellipsis]);
}

#[test]
fn the_corpus_repairs_to_its_intended_values() {
    // The cases `examples/repair_compare.rs` runs against peer libraries.
    for case in corpus::CASES {
        let result = repair(case.input);
        match case.intended {
            Some(intended) => {
                let repaired = result.unwrap_or_else(|e| panic!("{}: {e}", case.name));
                let got: Value = serde_json::from_str(repaired.json()).unwrap();
                let want: Value = serde_json::from_str(intended).unwrap();
                assert_eq!(got, want, "{}", case.name);
            }
            None => assert!(
                result.is_err(),
                "{}: {:?}",
                case.name,
                result.map(|r| r.into_json())
            ),
        }
    }
    for (input, intended) in corpus::SMALL_CALLS {
        let got: Value = serde_json::from_str(repair(input).unwrap().json()).unwrap();
        assert_eq!(
            got,
            serde_json::from_str::<Value>(intended).unwrap(),
            "{input}"
        );
    }
    for (input, intended) in [
        corpus::large_records(100_000),
        corpus::large_file(100_000),
        corpus::large_document(100_000),
        corpus::large_html(100_000),
    ] {
        let got: Value = serde_json::from_str(repair(&input).unwrap().json()).unwrap();
        assert_eq!(got, serde_json::from_str::<Value>(&intended).unwrap());
    }
    let valid = corpus::large_valid(100_000);
    assert!(repair(&valid).unwrap().is_unchanged());
}

#[test]
fn only_the_first_repairs_of_each_kind_are_kept_and_every_one_is_counted() {
    // Seven missing commas: five listed, two counted.
    let text = r#"{"a": 1 "b": 2 "c": 3 "d": 4 "e": 5 "f": 6 "g": 7 "h""#;
    let repaired = repair(text).unwrap();
    assert_eq!(
        repaired.json(),
        r#"{"a": 1, "b": 2, "c": 3, "d": 4, "e": 5, "f": 6, "g": 7, "h": null}"#
    );
    assert_eq!(repaired.count(MissingComma), 7);
    assert_eq!(repaired.count(UnfinishedKey), 1);
    assert_eq!(repaired.count(Truncated), 1);
    assert_eq!(repaired.omitted(), 2);
    let text = format!("[{}", "1 ".repeat(20));
    let repaired = repair(&text).unwrap();
    assert_eq!(repaired.count(MissingComma), 19);
    assert_eq!(repaired.repairs().len(), Repaired::KEPT_PER_KIND + 1);
    assert!(
        repaired
            .to_string()
            .ends_with("; … and 14 more (inserted a missing comma)"),
        "{repaired}"
    );
    // An unfinished key is kept, and each of its own repairs counted.
    let text = format!(r#"{{"a": 1, {}"#, "'k\\d\\d\\d\\d\\d\\d\\d'");
    let repaired = repair(&text).unwrap();
    assert_eq!(
        repaired.json(),
        r#"{"a": 1, "k\\d\\d\\d\\d\\d\\d\\d": null}"#
    );
    assert_eq!(repaired.count(InvalidEscape), 7);
    assert_eq!(repaired.count(SingleQuotes), 1);
    assert_eq!(repaired.omitted(), 2);
    // Strict mode still names the first repair it refuses.
    let text = format!("[{}'x']", "1 ".repeat(20));
    let error = repair_with(&text, &RepairOptions::strict([MissingComma])).unwrap_err();
    assert_eq!(error.refused(), Some(SingleQuotes));
}

#[test]
fn strict_json_inside_damaged_text_comes_back_byte_for_byte() {
    // The damage is around them: each inner array and object, already
    // strict JSON, is copied as it is (escapes, exponents, spacing).
    // Short, the parser reads them itself; long enough to be worth a scan,
    // the scan copies them: the same bytes either way.
    let short = r#"{"a": [1, -2.5E+3, true, null, "\ud83d\ude00 \"q\" \u00e9"], "b" :{ }}"#;
    let long = format!(
        r#"{}, "c": "{}"}}"#,
        &short[..short.len() - 1],
        "x".repeat(300)
    );
    for inner in [short.to_string(), long] {
        let text = format!("{{'x': {inner}, \"y\": [{inner},\n {inner}],}}");
        let repaired = repair(&text).unwrap();
        assert_eq!(
            repaired.json(),
            format!("{{\"x\": {inner}, \"y\": [{inner},\n {inner}]}}")
        );
        let kinds: Vec<_> = repaired.repairs().iter().map(|r| r.kind).collect();
        assert_eq!(kinds, [SingleQuotes, TrailingComma]);
        // Damage deep inside is still repaired, around strict parts before it.
        let text = format!("[{inner}, [{inner}, {{\"c\": [1, 2,]}}], {inner}]");
        assert_eq!(
            repair(&text).unwrap().json(),
            format!("[{inner}, [{inner}, {{\"c\": [1, 2]}}], {inner}]")
        );
    }
    // The nesting limit holds inside strict JSON too.
    let deep = format!("{{'a': {}{}}}", "[".repeat(600), "]".repeat(600));
    assert_eq!(repair(&deep).unwrap_err().kind(), RepairErrorKind::TooDeep);
}

/// A string whose text escapes its quotes (`{\"pa`) and opens brackets is
/// no code with quotes of its own: a bare quote after it is the structure's.
/// Found by sweeping every single damage over the fuzzer's corpus (a
/// mutated IDNA test file): with the string's closing quote deleted, or
/// the comma after it replaced by `+`, the next key went into the string.
#[test]
fn a_string_that_escapes_its_quotes_is_no_code() {
    let doc = "[\n{\n    \"description\": \"These tests are 1opiI des sp\\u00E4teren J\",\n    \"encoded\": \"Willst du die Blthe {\\\"paNaNmh\\falseC:aNth\\f$al{e:aNth\\fal{eC:\\\\\\\\tm\\\\\\\\h\\fwwwwwwwwww\\u30F3\\u0000000000000000000000000500000000 <-\",\n    \"encoded\": \"-> $1.00 <--\"\n}\n]\n";
    let intended: serde_json::Value = serde_json::from_str(doc).unwrap();
    // The closing quote lost: it is put back before the comma.
    let damaged = doc.replacen("<-\",", "<-,", 1);
    let repaired = repair(&damaged).unwrap();
    let value: serde_json::Value = serde_json::from_str(repaired.json()).unwrap();
    assert_eq!(value, intended, "{}", repaired.json());
    // The comma replaced by `+` before a key: no join, refused.
    let damaged = doc.replacen("<-\",", "<-\"+", 1);
    let error = repair(&damaged).unwrap_err();
    assert_eq!(error.kind(), RepairErrorKind::Unrepairable, "{error}");
}

/// A quote that opens a line at the indentation of its string's member is
/// the next member, even after an unclosed bracket in the string's text
/// (a URL template whose `{` lost its `}`): the string lacked its closing
/// quote. Found by the same sweep, on a mutated GitHub webhook payload.
#[test]
fn a_quote_at_the_members_indentation_opens_the_next_member() {
    let damaged =
        "{\n  \"url\": \"https:{/bpi/releases{/id},\n  \"deployments_url\": \"https://x\"\n}";
    let repaired = repair(damaged).unwrap();
    let value: serde_json::Value = serde_json::from_str(repaired.json()).unwrap();
    assert_eq!(
        value,
        serde_json::json!({"url": "https:{/bpi/releases{/id}", "deployments_url": "https://x"})
    );
    // Code indents its own lines: its quotes stay text.
    let code = "{\"code\": \"def f():\n    return {\"a\": 1}\n\"}";
    let value: serde_json::Value = serde_json::from_str(repair(code).unwrap().json()).unwrap();
    assert_eq!(
        value,
        serde_json::json!({"code": "def f():\n    return {\"a\": 1}\n"})
    );
}
