//! The corpus of malformed model output shared by `benches/repair.rs`,
//! `examples/repair_compare.rs` and `tests/repair.rs`: real-looking argument
//! text with one or more of the mistakes models make, each with the value it
//! clearly means. Cases with no clear meaning expect an error (`None`).

#![allow(dead_code)] // each includer uses a part

/// One malformed output and the JSON value it means (`None`: it should be refused).
pub(crate) struct Case {
    pub name: &'static str,
    pub input: &'static str,
    pub intended: Option<&'static str>,
}

const fn case(name: &'static str, input: &'static str, intended: &'static str) -> Case {
    Case {
        name,
        input,
        intended: Some(intended),
    }
}

const fn refused(name: &'static str, input: &'static str) -> Case {
    Case {
        name,
        input,
        intended: None,
    }
}

pub(crate) const CASES: &[Case] = &[
    case(
        "markdown fence",
        "```json\n{\"city\": \"Paris\", \"units\": \"metric\"}\n```",
        r#"{"city": "Paris", "units": "metric"}"#,
    ),
    case("bare fence", "```\n{\"query\": \"rust\"}\n```", r#"{"query": "rust"}"#),
    case(
        "prose before",
        "Sure! Here are the arguments:\n{\"query\": \"weather in Paris\", \"limit\": 5}",
        r#"{"query": "weather in Paris", "limit": 5}"#,
    ),
    case(
        "prose after",
        "{\"query\": \"weather\"}\nLet me know if you need anything else.",
        r#"{"query": "weather"}"#,
    ),
    case(
        "prose and fence",
        "I'll search for that.\n\n```json\n{\"query\": \"rust serde\", \"limit\": 3}\n```\n\nThis finds the docs.",
        r#"{"query": "rust serde", "limit": 3}"#,
    ),
    case(
        "xml tags",
        "<tool_call>\n{\"name\": \"get_weather\", \"city\": \"Oslo\"}\n</tool_call>",
        r#"{"name": "get_weather", "city": "Oslo"}"#,
    ),
    case("trailing comma in object", "{\"a\": 1, \"b\": 2,}", r#"{"a": 1, "b": 2}"#),
    case("trailing comma in array", "{\"ids\": [1, 2, 3,]}", r#"{"ids": [1, 2, 3]}"#),
    case("leading comma", "{\"ids\": [,1, 2]}", r#"{"ids": [1, 2]}"#),
    case("missing comma between members", "{\"a\": 1\n \"b\": 2}", r#"{"a": 1, "b": 2}"#),
    case("missing commas in array", "{\"tags\": [\"a\" \"b\" \"c\"]}", r#"{"tags": ["a", "b", "c"]}"#),
    case("single quotes", "{'name': 'Ada', 'role': 'admin'}", r#"{"name": "Ada", "role": "admin"}"#),
    case("apostrophe in single quotes", "{'note': 'don't forget'}", r#"{"note": "don't forget"}"#),
    case("double quotes in single quotes", "{'html': '<a href=\"/\">home</a>'}", r#"{"html": "<a href=\"/\">home</a>"}"#),
    case("curly quotes", "{“name”: “Ada”, “city”: “Paris”}", r#"{"name": "Ada", "city": "Paris"}"#),
    case("curly apostrophe kept", "{\"note\": \"it’s “fine”\"}", r#"{"note": "it’s “fine”"}"#),
    case("unquoted keys", "{name: \"Ada\", age: 36}", r#"{"name": "Ada", "age": 36}"#),
    case(
        "unescaped inner quotes",
        "{\"text\": \"He said \"hello\" to me\"}",
        r#"{"text": "He said \"hello\" to me"}"#,
    ),
    case(
        "unescaped quote before a comma",
        "{\"text\": \"say \"yes\", then go\", \"n\": 1}",
        r#"{"text": "say \"yes\", then go", "n": 1}"#,
    ),
    case(
        "raw newlines in a string",
        "{\"path\": \"main.rs\", \"content\": \"fn main() {\n    println!(\\\"hi\\\");\n}\n\"}",
        r#"{"path": "main.rs", "content": "fn main() {\n    println!(\"hi\");\n}\n"}"#,
    ),
    case("raw tab in a string", "{\"row\": \"a\tb\"}", r#"{"row": "a\tb"}"#),
    case(
        "line comments",
        "{\n  \"a\": 1, // the first\n  \"b\": 2\n}",
        r#"{"a": 1, "b": 2}"#,
    ),
    case("block comment", "{/* args */ \"a\": 1}", r#"{"a": 1}"#),
    case("hash comment", "{\n  \"a\": 1, # python style\n  \"b\": 2\n}", r#"{"a": 1, "b": 2}"#),
    case(
        "python literals",
        "{\"verbose\": True, \"dry_run\": False, \"limit\": None}",
        r#"{"verbose": true, "dry_run": false, "limit": null}"#,
    ),
    case("undefined", "{\"a\": 1, \"b\": undefined}", r#"{"a": 1, "b": null}"#),
    case(
        "NaN and Infinity",
        "{\"score\": NaN, \"max\": Infinity, \"min\": -Infinity}",
        r#"{"score": null, "max": null, "min": null}"#,
    ),
    case("ellipsis in array", "{\"items\": [1, 2, 3, ...]}", r#"{"items": [1, 2, 3]}"#),
    case("ellipsis in object", "{\"a\": 1, \"b\": 2, ...}", r#"{"a": 1, "b": 2}"#),
    case("jsonp", "callback({\"a\": 1, \"b\": [2]});", r#"{"a": 1, "b": [2]}"#),
    case(
        "stringified json",
        r#""{\"city\": \"Paris\", \"days\": 3}""#,
        r#"{"city": "Paris", "days": 3}"#,
    ),
    case("truncated string", "{\"query\": \"weather in Par", r#"{"query": "weather in Par"}"#),
    case("truncated array", "{\"ids\": [1, 2, 3", r#"{"ids": [1, 2, 3]}"#),
    case(
        "truncated nested",
        "{\"user\": {\"name\": \"Ada\", \"tags\": [\"x\"",
        r#"{"user": {"name": "Ada", "tags": ["x"]}}"#,
    ),
    case("truncated after a colon", "{\"a\": 1, \"b\":", r#"{"a": 1, "b": null}"#),
    case("truncated in a key", "{\"a\": 1, \"bo", r#"{"a": 1, "bo": null}"#),
    case("truncated literal", "{\"ok\": tru", r#"{"ok": true}"#),
    case("truncated after a comma", "{\"a\": [1, 2],", r#"{"a": [1, 2]}"#),
    case("missing value", "{\"a\": , \"b\": 2}", r#"{"a": null, "b": 2}"#),
    case(
        "windows path",
        r#"{"path": "C:\Users\Ada\Documents"}"#,
        r#"{"path": "C:\\Users\\Ada\\Documents"}"#,
    ),
    case("number forms", "{\"a\": +1, \"b\": .5, \"c\": 2.}", r#"{"a": 1, "b": 0.5, "c": 2}"#),
    case("missing bracket", "{\"a\": [1, 2}", r#"{"a": [1, 2]}"#),
    case("extra bracket", "{\"a\": 1}}", r#"{"a": 1}"#),
    case("unquoted value", "{\"status\": active, \"n\": 1}", r#"{"status": "active", "n": 1}"#),
    case(
        "valid unicode and escapes",
        r#"{"emoji": "😀", "e": "\u00e9", "big": 12345678901234567890123, "q": "\"x\""}"#,
        r#"{"emoji": "😀", "e": "é", "big": 12345678901234567890123, "q": "\"x\""}"#,
    ),
    case(
        "combined: fence, comment, quotes, python, commas",
        "Here you go:\n```json\n{\n  name: 'Ada', // the user\n  \"admin\": True,\n  \"tags\": [\"a\", \"b\",],\n}\n```",
        r#"{"name": "Ada", "admin": true, "tags": ["a", "b"]}"#,
    ),
    case(
        "combined: truncated inside a fence",
        "```json\n{'query': 'rust', 'filters': {'lang': None, 'year': 2024,\n```",
        r#"{"query": "rust", "filters": {"lang": null, "year": 2024}}"#,
    ),
    case(
        "combined: prose, unquoted keys, quotes, newline",
        "Calling the tool now: {path: 'notes.md', content: \"# Notes\n- say \"hi\"\n\"}",
        r##"{"path": "notes.md", "content": "# Notes\n- say \"hi\"\n"}"##,
    ),
    refused("empty", ""),
    refused("prose only", "I could not find a city with that name."),
    refused("two values", "{\"a\": 1} {\"a\": 2}"),
    refused("a set, not an object", "{\"a\", \"b\"}"),
];

/// Small calls (~130 B each) as models send them, each with a mistake or two
/// from the corpus; with the intended value's compact JSON.
pub(crate) const SMALL_CALLS: &[(&str, &str)] = &[
    (
        "```json\n{\"query\": \"weather in Paris tomorrow\", \"units\": \"metric\", \"days\": 3, \"include_hourly\": false, \"lang\": \"en\",}\n```",
        r#"{"query":"weather in Paris tomorrow","units":"metric","days":3,"include_hourly":false,"lang":"en"}"#,
    ),
    (
        "Sure, I'll look that up.\n{\"customer_id\": \"cust_1042\", \"reason\": \"duplicate charge on the last invoice\", \"amount_cents\": 1250, \"notify\": True}",
        r#"{"customer_id":"cust_1042","reason":"duplicate charge on the last invoice","amount_cents":1250,"notify":true}"#,
    ),
    (
        "{'title': 'Login page broken on Safari', 'priority': 'high', 'labels': ['bug', 'frontend', 'safari',], 'assignee': None}",
        r#"{"title":"Login page broken on Safari","priority":"high","labels":["bug","frontend","safari"],"assignee":null}"#,
    ),
    (
        "{path: \"src/lib.rs\", start_line: 10, end_line: 42, // the parser\n reason: \"read the parser before editing\"}",
        r#"{"path":"src/lib.rs","start_line":10,"end_line":42,"reason":"read the parser before editing"}"#,
    ),
    (
        "{\"to\": \"ada@example.com\", \"subject\": \"Your refund\", \"body\": \"Hi Ada,\nWe have refunded the \"duplicate\" charge.\nBest,\nSupport\"}",
        r#"{"to":"ada@example.com","subject":"Your refund","body":"Hi Ada,\nWe have refunded the \"duplicate\" charge.\nBest,\nSupport"}"#,
    ),
    (
        "{\"sql\": \"SELECT id, email FROM users WHERE created_at > '2024-01-01' LIMIT 50\", \"database\": \"analytics\", \"timeout_ms\": 5000, \"explain\": False, \"params\": [",
        r#"{"sql":"SELECT id, email FROM users WHERE created_at > '2024-01-01' LIMIT 50","database":"analytics","timeout_ms":5000,"explain":false,"params":[]}"#,
    ),
    (
        "{“city”: “Oslo”, “country”: “Norway”, “start”: “2024-06-01”, “nights”: 4, “guests”: 2, “max_price”: 180, “currency”: “EUR”}",
        r#"{"city":"Oslo","country":"Norway","start":"2024-06-01","nights":4,"guests":2,"max_price":180,"currency":"EUR"}"#,
    ),
    (
        "<tool_call>\n{\"name\": \"search_docs\", \"arguments\": {\"query\": \"serde flatten with deny_unknown_fields\", \"top_k\": 5, \"min_score\": .25}}\n</tool_call>",
        r#"{"name":"search_docs","arguments":{"query":"serde flatten with deny_unknown_fields","top_k":5,"min_score":0.25}}"#,
    ),
    (
        "{\"series\": [12.5, 13.1, NaN, 14.2, Infinity, 15.0], \"window\": 3, \"method\": \"rolling_mean\", \"fill\": undefined, \"label\": \"cpu load (5 min)\"}",
        r#"{"series":[12.5,13.1,null,14.2,null,15.0],"window":3,"method":"rolling_mean","fill":null,"label":"cpu load (5 min)"}"#,
    ),
    (
        "\"{\\\"repo\\\": \\\"typed-tools\\\", \\\"branch\\\": \\\"main\\\", \\\"files\\\": [\\\"src/lib.rs\\\", \\\"README.md\\\"], \\\"message\\\": \\\"docs: fix typo\\\"}\"",
        r#"{"repo":"typed-tools","branch":"main","files":["src/lib.rs","README.md"],"message":"docs: fix typo"}"#,
    ),
];

/// The inputs of [`SMALL_CALLS`].
pub(crate) fn small_calls() -> Vec<&'static str> {
    SMALL_CALLS.iter().map(|(input, _)| *input).collect()
}

/// Large arguments (~100 KB): rows of records with single quotes, unquoted
/// keys, Python literals, comments and trailing commas, in a fence, cut off at
/// the end; and the intended value's compact JSON.
pub(crate) fn large_records(bytes: usize) -> (String, String) {
    let mut text = String::from("Here are the rows:\n```json\n{\"rows\": [\n");
    let mut intended = String::from("{\"rows\":[");
    let mut i = 0;
    while text.len() < bytes {
        if i > 0 {
            intended.push(',');
        }
        text.push_str(&format!(
            "  {{id: {i}, 'name': 'user {i}', \"email\": \"user{i}@example.com\", \"active\": {}, \"score\": {}.5, \"tags\": ['a', 'b',], // row {i}\n   \"note\": None,}},\n",
            if i % 2 == 0 { "True" } else { "False" },
            i % 100
        ));
        intended.push_str(&format!(
            "{{\"id\":{i},\"name\":\"user {i}\",\"email\":\"user{i}@example.com\",\"active\":{},\"score\":{}.5,\"tags\":[\"a\",\"b\"],\"note\":null}}",
            i % 2 == 0,
            i % 100
        ));
        i += 1;
    }
    // Cut off after the last row's comma, as a model stopped by a token limit.
    intended.push_str("]}");
    (text, intended)
}

/// Large arguments (~100 KB): a file's content with raw newlines, tabs and
/// unescaped quotes, in a fence; and the intended value's compact JSON.
pub(crate) fn large_file(bytes: usize) -> (String, String) {
    let content = lines_up_to(bytes, |i| {
        format!(
            "fn step_{i}() {{\n\tprintln!(\"step {i}: \\\"ok\\\"\");\n}}\n// say \"done\" when finished\n"
        )
    });
    let text = format!("```json\n{{\"path\": \"src/steps.rs\", \"content\": \"{content}\"}}\n```");
    let intended =
        serde_json::json!({ "path": "src/steps.rs", "content": content.replace("\\\"", "\"") })
            .to_string();
    (text, intended)
}

/// Real JSON documents of other projects (`tests/repair_corpus/real/`,
/// licences in its README), pretty-printed as published.
const REAL_DOCUMENTS: [&str; 6] = [
    include_str!("../../tests/repair_corpus/real/octokit_commit_comment_created.json"),
    include_str!("../../tests/repair_corpus/real/rmcp_list_tools_result.json"),
    include_str!("../../tests/repair_corpus/real/schemars_main.schema.json"),
    include_str!("../../tests/repair_corpus/real/json_repair_valid_head.json"),
    include_str!("../../tests/repair_corpus/real/idna_punycode_tests.json"),
    include_str!("../../tests/repair_corpus/real/url_setters_tests.json"),
];

/// `{"documents": [` and the real documents, each as `each` writes it,
/// repeated until the text holds `bytes` bytes; not closed.
fn documents(bytes: usize, each: impl Fn(&str) -> String) -> String {
    let mut text = String::from("{\"documents\": [\n");
    for (i, document) in REAL_DOCUMENTS.iter().cycle().enumerate() {
        if text.len() >= bytes {
            break;
        }
        if i > 0 {
            text.push_str(",\n");
        }
        text.push_str(&each(document.trim_end()));
    }
    text
}

/// Valid JSON (at least `bytes` long): `{"documents": [...]}` holding the
/// real documents, repeated as needed.
pub(crate) fn large_valid(bytes: usize) -> String {
    documents(bytes, str::to_owned) + "\n]}"
}

/// [`large_valid`] damaged as a model damages a long reply, in ways every
/// repairer measured reads the same: in each document, the first key in
/// single quotes and a trailing comma before its closing bracket; and the
/// text cut off before the last two closing brackets. With the intended
/// value's JSON (the valid text).
pub(crate) fn large_document(bytes: usize) -> (String, String) {
    (documents(bytes, damaged), large_valid(bytes))
}

/// A document with its first plain key (`"name":`) in single quotes and a
/// trailing comma before its closing bracket.
fn damaged(document: &str) -> String {
    let body = &document[..document.len() - 1];
    let closing = &document[document.len() - 1..];
    let key = body.find("\":").and_then(|colon| {
        let open = body[..colon].rfind('"')?;
        let plain = body[open + 1..colon]
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_');
        plain.then_some((open, colon))
    });
    let mut text = match key {
        Some((open, colon)) => format!(
            "{}'{}'{}",
            &body[..open],
            &body[open + 1..colon],
            &body[colon + 1..]
        ),
        None => body.to_owned(),
    };
    text.insert(text.trim_end().len(), ',');
    text + closing
}

/// Large arguments (~100 KB): HTML in a single-quoted string, as Python
/// writes a dict, each of its many double quotes a quote inside the string
/// that repair must judge; and the intended value's compact JSON.
pub(crate) fn large_html(bytes: usize) -> (String, String) {
    let html = lines_up_to(bytes, |i| {
        format!(
            "<li class=\"item\" data-id=\"{i}\"><a href=\"/items/{i}\" title=\"item {i}\">item {i}</a></li>\n"
        )
    });
    let text = format!("{{'page': 'items', 'html': '{html}'}}");
    let intended = serde_json::json!({ "page": "items", "html": html }).to_string();
    (text, intended)
}

/// The lines `line` makes for 0, 1, 2, ..., until they hold `bytes` bytes.
fn lines_up_to(bytes: usize, line: impl Fn(usize) -> String) -> String {
    let mut text = String::new();
    let mut i = 0;
    while text.len() < bytes {
        text.push_str(&line(i));
        i += 1;
    }
    text
}
