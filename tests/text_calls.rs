//! Calls written in text, and prose that only mentions them. With tools
//! given as text (a local model without native tool calling, the scripted
//! model's default), a call in an answer is a call only where the model is
//! calling: alone on its line or as the whole answer, `[f(a=1), g(b=2)]`,
//! after "I'll call" or a colon, in a ```tool_code or ```python fence that
//! holds calls. Prose that mentions one is an answer: a name in inline code,
//! a `def` or a code sample that defines it, a signature, a call in the
//! middle of a sentence. A text that holds a definition and a call is read
//! as the call, and when the call cannot be read the error is at the call.
//!
//! Each case is written the way a model writes it (Llama 3, Qwen, Gemma,
//! Mistral, GPT), and each is read twice: by `Toolbox::read_calls` and by an
//! `Agent` over a `ScriptedModel`.

use std::sync::{Arc, Mutex};

use futures::executor::block_on;
use typed_tools::agent::{Agent, Exit};
use typed_tools::model::ScriptedModel;
use typed_tools::reader::ReadErrorKind;
use typed_tools::{tool, CallFormat, Toolbox};

/// What the tools were called with, in order.
#[derive(Default)]
struct Log(Mutex<Vec<String>>);

impl Log {
    fn record(&self, call: String) {
        self.0.lock().unwrap().push(call);
    }

    fn calls(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

/// The weather in a city.
#[tool(effects = Network)]
fn get_weather(#[state] log: &Log, city: String, unit: Option<String>) -> String {
    log.record(format!("get_weather {city} {unit:?}"));
    format!("sunny in {city}")
}

/// Send an email.
#[tool(effects = Write)]
fn send_email(#[state] log: &Log, to: String, subject: String, body: String) -> String {
    log.record(format!("send_email {to} {subject} {body}"));
    "sent".into()
}

/// Search the web.
#[tool(effects = Read)]
fn search(#[state] log: &Log, query: String) -> Vec<String> {
    log.record(format!("search {query}"));
    vec![format!("a page about {query}")]
}

/// Install a package.
#[tool(effects = Write)]
fn install(#[state] log: &Log, package: String) -> String {
    log.record(format!("install {package}"));
    "installed".into()
}

fn toolbox() -> (Toolbox, Arc<Log>) {
    let log = Arc::new(Log::default());
    let toolbox = Toolbox::builder()
        .tool(GetWeather::new(Arc::clone(&log)))
        .tool(SendEmail::new(Arc::clone(&log)))
        .tool(Search::new(Arc::clone(&log)))
        .tool(Install::new(Arc::clone(&log)))
        .build()
        .unwrap();
    (toolbox, log)
}

/// Prose that mentions calls: each is an answer, with no call in it. JSON
/// without a call's shape (no name or arguments key) is an answer too: a
/// model asked for a report writes it as JSON.
const PROSE: &[(&str, &str)] = &[
    (
        "qwen: the answer as a JSON object",
        r#"{"items":[2,3],"total_cost":62.5}"#,
    ),
    (
        "gpt: the answer as a fenced JSON object",
        "```json\n{\"city\": \"Lima\", \"forecast\": \"sunny\", \"high_c\": 24}\n```",
    ),
    (
        "llama 3: the answer as a list of records",
        r#"[{"sku": "A-1", "reorder": 12}, {"sku": "B-7", "reorder": 0}]"#,
    ),
    (
        "mistral: prose, then the report as JSON",
        "Here is the restock report:\n\n{\"items\": [2, 3], \"total_cost\": 62.5, \"note\": null}",
    ),
    (
        "gpt: a call in inline code, mid-sentence",
        "You can try `send_email()` once you have the recipient's address.",
    ),
    (
        "gpt: a bare call mid-sentence",
        "Try calling send_email() later, when the mail server is back up.",
    ),
    (
        "qwen: a Python sample that defines the tool and calls it",
        "Here is how you could write it yourself:\n\n```python\nimport requests\n\ndef get_weather(city):\n    return requests.get(f\"https://wttr.in/{city}?format=3\").text\n\nprint(get_weather(\"Lima\"))\n```\n\nThis prints a one-line forecast.",
    ),
    (
        "gpt: a signature in inline code, mid-sentence",
        "To look something up, use `search(query)` with a short query, then summarize the top results.",
    ),
    (
        "gpt: a signature in inline code, then more prose",
        "You can use `get_weather(city)` to get the forecast for a city; pass the city's name in English.",
    ),
    (
        "llama 3: signatures listed one a line",
        "I have these tools:\n\nget_weather(city)\nsend_email(to, subject, body)\nsearch(query)\n\nWhich one should I use?",
    ),
    (
        "mistral: a markdown list of tools",
        "Here is what I can do:\n\n- **get_weather(city)**: the current weather in a city.\n- **search(query)**: a web search.\n\nWhat would you like?",
    ),
    (
        "gpt: a JavaScript sample that defines and calls",
        "In the browser it would look like this:\n\n```javascript\nfunction getWeather(city) {\n  return fetch(`/weather/${city}`);\n}\ngetWeather('Lima');\n```",
    ),
    (
        "llama 3: a call with a value, mid-sentence",
        "The function get_weather(city=\"Lima\") would return the forecast, but I already know it: sunny, 24 °C.",
    ),
    (
        "qwen: an offer to call, later",
        "If you want, I can call send_email(to=\"ana@example.com\") for you later.",
    ),
    (
        "mistral: an example call in inline code",
        "The `search()` function takes a `query` argument. For example, `search(query=\"rust async\")` returns a list of pages.",
    ),
    (
        "gemma: a call named in parentheses",
        "I don't need a tool for this. (Calling get_weather() wouldn't help, since you asked about yesterday.)",
    ),
    (
        "llama 3: a definition without a fence",
        "A tool like this would be defined as\n\ndef get_weather(city: str) -> str:\n    \"\"\"Get the weather.\"\"\"\n    get_forecast(city)\n    return fetch(city)\n\nbut you have not given me one.",
    ),
    (
        "qwen: a typed signature opening a sentence",
        "get_weather(city: str) -> str returns the forecast; search(query: str) returns pages.",
    ),
    (
        "gpt: a Rust sample",
        "```rust\nfn get_weather(city: &str) -> String {\n    format!(\"sunny in {city}\")\n}\n\nfn main() {\n    println!(\"{}\", get_weather(\"Lima\"));\n}\n```\nThat is the whole program.",
    ),
    (
        "gpt: a JSON call in inline code, mid-sentence",
        "Send `{\"name\": \"search\", \"arguments\": {\"query\": \"x\"}}` when you want me to search.",
    ),
    (
        "qwen: a tool-call tag in inline code",
        "I would wrap a call in `<tool_call>` tags, but none is needed here: it is sunny.",
    ),
    (
        "qwen: a request for the user to run a call",
        "Sure! The weather in Lima is sunny. If you need more, just ask me to run get_weather(city=\"Cusco\") too.",
    ),
    (
        "gpt: numbered steps with calls in inline code",
        "1. Call `get_weather(city)` for each city.\n2. Compare the temperatures.\n3. Send the result with `send_email(to, subject, body)`.",
    ),
    (
        "llama 3: a doctest",
        "Example:\n\n>>> get_weather('Lima')\n'sunny in Lima'\n\nIt returns a short string.",
    ),
    (
        "gemma: a Python sample with an import and a call",
        "```python\nfrom tools import search\n\nsearch(query=\"weather in Lima\")\n```\nRun that in your own environment.",
    ),
];

/// A case that holds calls: what it is, its text, and the calls read out
/// of it, `(name, arguments)`.
type Calls = (
    &'static str,
    &'static str,
    &'static [(&'static str, &'static str)],
);

/// Texts that hold a definition (or a mention) and a call: each is read as
/// the calls.
const CALLS: &[Calls] = &[
    (
        "qwen: a sample with a def, then the call alone on its line",
        "```python\ndef get_weather(city: str) -> str:\n    \"\"\"Get the weather.\"\"\"\n    ...\n```\n\nget_weather(city=\"Lima\")",
        &[("get_weather", r#"{"city":"Lima"}"#)],
    ),
    (
        "llama 3: a sample, then a list of calls",
        "```python\ndef get_weather(city: str, unit: str = \"celsius\") -> str: ...\n```\n\n[get_weather(city=\"Lima\", unit=\"celsius\")]",
        &[("get_weather", r#"{"city":"Lima","unit":"celsius"}"#)],
    ),
    (
        "llama 3: a def without a fence, then the call",
        "def get_weather(city):\n    return lookup(city)\n\nget_weather(city=\"Oslo\")",
        &[("get_weather", r#"{"city":"Oslo"}"#)],
    ),
    (
        "gpt: a signature in inline code, then \"I'll call\"",
        "The `get_weather(city)` tool fits. I'll call get_weather(city=\"Lima\").",
        &[("get_weather", r#"{"city":"Lima"}"#)],
    ),
    (
        "gemma: a sample, then a tool_code fence",
        "```python\ndef search(query: str) -> list[str]:\n    ...\n```\n\n```tool_code\nsearch(query=\"weather Lima\")\n```",
        &[("search", r#"{"query":"weather Lima"}"#)],
    ),
    (
        "llama 3.1: a sample, then the python tag",
        "```python\ndef get_weather(city: str) -> str: ...\n```\n<|python_tag|>get_weather(city=\"Lima\")",
        &[("get_weather", r#"{"city":"Lima"}"#)],
    ),
    (
        "qwen: signatures listed, then \"Let me use\"",
        "Tools: `search(query)`, `get_weather(city)`.\n\nLet me use search(query=\"Lima weather\").",
        &[("search", r#"{"query":"Lima weather"}"#)],
    ),
    (
        "llama 3.2: two calls on their own lines after a sample",
        "```python\ndef get_weather(city): ...\ndef search(query): ...\n```\nget_weather(city=\"Lima\")\nsearch(query=\"umbrella\")",
        &[
            ("get_weather", r#"{"city":"Lima"}"#),
            ("search", r#"{"query":"umbrella"}"#),
        ],
    ),
    (
        "gpt: a JavaScript sample, then a list",
        "```javascript\nfunction get_weather(city) { return fetch(city); }\n```\n[get_weather(city=\"Lima\")]",
        &[("get_weather", r#"{"city":"Lima"}"#)],
    ),
    (
        "gemma: a sample that calls inside it, then the call in tool_code",
        "```python\ndef get_weather(city):\n    ...\nprint(get_weather(\"Lima\"))\n```\n```tool_code\nget_weather(city=\"Quito\")\n```",
        &[("get_weather", r#"{"city":"Quito"}"#)],
    ),
    (
        "llama 3: positional arguments after a sample",
        "```python\ndef get_weather(city, unit=None): ...\n```\nget_weather('Lima', 'kelvin')",
        &[("get_weather", r#"{"city":"Lima","unit":"kelvin"}"#)],
    ),
    (
        "qwen: a call over several lines after a sample",
        "```python\ndef send_email(to, subject, body): ...\n```\n\nsend_email(\n    to=\"ana@example.com\",\n    subject=\"Refund\",\n    body=\"Done.\",\n)",
        &[(
            "send_email",
            r#"{"to":"ana@example.com","subject":"Refund","body":"Done."}"#,
        )],
    ),
    (
        "react: a thought with a mention, then an action",
        "Thought: I need `get_weather(city)` for Lima.\nAction: get_weather(city=\"Lima\")",
        &[("get_weather", r#"{"city":"Lima"}"#)],
    ),
    (
        "gpt: a def and its call, separate lines, no fence",
        "def search(query): ...\nsearch(query=\"rust\")",
        &[("search", r#"{"query":"rust"}"#)],
    ),
    (
        "mistral: a sentence mentioning a call, then the call",
        "Calling get_weather() with no city would fail. I'll call get_weather(city=\"Paris\") instead.",
        &[("get_weather", r#"{"city":"Paris"}"#)],
    ),
    (
        "llama 3: an inline call alone on its line",
        "I need the weather first.\n\n`get_weather(city=\"Lima\")`",
        &[("get_weather", r#"{"city":"Lima"}"#)],
    ),
    (
        "gemma: a list spread over lines after a signature",
        "search(query) finds pages.\n[\n  search(query=\"Lima\"),\n  get_weather(city=\"Lima\")\n]",
        &[
            ("search", r#"{"query":"Lima"}"#),
            ("get_weather", r#"{"city":"Lima"}"#),
        ],
    ),
    (
        "gemma: the call in a one-line fence after a mention",
        "`get_weather(city)` is the tool for this.\n```get_weather(city=\"Lima\")```",
        &[("get_weather", r#"{"city":"Lima"}"#)],
    ),
    (
        "llama 3.1: the python tag and the end-of-message token, after a sample",
        "```python\ndef get_weather(city): ...\n```\n<|python_tag|>get_weather(city=\"Lima\")<|eom_id|>",
        &[("get_weather", r#"{"city":"Lima"}"#)],
    ),
    (
        "gemma: a tool_code fence whose string has lines starting `let` and `from`",
        "```tool_code\nsend_email(to=\"ana@example.com\", subject=\"Lunch\", body=\"\"\"Hello,\nlet me know if Friday works.\nfrom Bob\n\"\"\")\n```",
        &[(
            "send_email",
            r#"{"to":"ana@example.com","subject":"Lunch","body":"Hello,\nlet me know if Friday works.\nfrom Bob\n"}"#,
        )],
    ),
    (
        "qwen: a call over several lines in a tool_code fence, an argument named `package`",
        "```tool_code\ninstall(\n    package = \"curl\",\n)\n```",
        &[("install", r#"{"package":"curl"}"#)],
    ),
    (
        "mistral: a line of prose starting with `class`, the call indented under it",
        "class notes:\n  get_weather(city=\"Lima\")",
        &[("get_weather", r#"{"city":"Lima"}"#)],
    ),
    (
        "llama 3: a line of prose starting with `function`, the call indented under it",
        "function calls to make:\n    search(query=\"Lima weather\")",
        &[("search", r#"{"query":"Lima weather"}"#)],
    ),
    (
        "qwen: a def whose parameters wrap, then the call",
        "def get_weather(\n    city,\n):\n    get_forecast(city=\"Oslo\")\n\nget_weather(city=\"Lima\")",
        &[("get_weather", r#"{"city":"Lima"}"#)],
    ),
    (
        "gemma: a call between <tool_code> tags",
        "<tool_code>get_weather(city=\"Lima\")</tool_code>",
        &[("get_weather", r#"{"city":"Lima"}"#)],
    ),
    (
        "gemma: <tool_code> tags on lines of their own, after a sentence and a mention",
        "Let me check `get_weather(city)` for you.\n<tool_code>\nget_weather(city=\"Lima\")\n</tool_code>",
        &[("get_weather", r#"{"city":"Lima"}"#)],
    ),
    (
        "gpt: a JSON tool definition, then a JSON call",
        "The tool is:\n```json\n{\"name\": \"get_weather\", \"description\": \"The weather in a city.\", \"parameters\": {\"type\": \"object\", \"properties\": {\"city\": {\"type\": \"string\"}}, \"required\": [\"city\"]}}\n```\nCalling it:\n```json\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Lima\"}}\n```",
        &[("get_weather", r#"{"city":"Lima"}"#)],
    ),
];

/// Texts that hold a definition and a call that cannot be read: the error
/// is at the call (`call`, or the blanks after it), never at the definition.
const BROKEN: &[(&str, &str, &str)] = &[
    (
        "a sample with a def, then a call missing a value",
        "```python\ndef get_weather(city: str, unit: str) -> str:\n    ...\n```\n\nget_weather(city=\"Lima\", unit=)",
        "get_weather(city=\"Lima\", unit=)",
    ),
    (
        "a def without a fence, then a list with an unclosed string",
        "def get_weather(city):\n    return lookup(city)\n\n[get_weather(city='Lima)]",
        "[get_weather(city='Lima)]",
    ),
    (
        "a sample, then a tool_code fence with an unclosed call",
        "```python\ndef search(query): ...\n```\n```tool_code\nsearch(query=\"x\"\n```",
        "search(query=\"x\"",
    ),
    (
        "a signature, then \"I'll call\" with a bare word",
        "The `send_email(to, subject, body)` tool sends mail. I'll call send_email(to=ana)",
        "send_email(to=ana)",
    ),
];

/// A call over several lines in a fence is read whatever its lines start
/// with: a line of a string (`let me know`, `from Bob`, `import`) or of the
/// call's arguments (`package =`, `interface =`, `const =`, `struct =`)
/// starts no statement, so it defines nothing. Each of these had been
/// taken for a definition, the fence for a code sample, and the call
/// dropped ("no call in the text").
#[test]
fn a_call_over_several_lines_in_a_fence_is_read_whatever_its_lines_start_with() {
    let cases = [
        (
            "```tool_code\nsend_email(to=\"a@b.c\", body=\"\"\"Hello,\nlet me know...\n\"\"\")\n```",
            "send_email",
            r#"{"to":"a@b.c","body":"Hello,\nlet me know...\n"}"#,
        ),
        (
            "```tool_code\ninstall(\n    package = \"curl\",\n)\n```",
            "install",
            r#"{"package":"curl"}"#,
        ),
        (
            "```tool_code\nconfigure(\n    interface = \"eth0\",\n    const = 1,\n    struct = {\"mtu\": 1500},\n)\n```",
            "configure",
            r#"{"interface":"eth0","const":1,"struct":{"mtu":1500}}"#,
        ),
        (
            "```python\nsend_email(\n    to=\"ana@example.com\",\n    body='''Hi,\nimport nothing,\nfrom Bob''',\n)\n```",
            "send_email",
            r#"{"to":"ana@example.com","body":"Hi,\nimport nothing,\nfrom Bob"}"#,
        ),
    ];
    let mut wrong = Vec::new();
    for (text, name, arguments) in cases {
        let got = typed_tools::reader::read_calls(CallFormat::Auto, text)
            .map(|calls| {
                calls
                    .into_iter()
                    .map(|c| (c.name, c.arguments))
                    .collect::<Vec<_>>()
            })
            .map_err(|error| error.to_string());
        if got != Ok(vec![(name.to_owned(), arguments.to_owned())]) {
            wrong.push(format!("{text:?}: {got:?}"));
        }
    }
    report(wrong);
}

/// A call stands after any number of blanks or special tokens before it
/// on its line: how far back its line is read does not depend on them.
/// (With 160 bytes read back, a call indented deeper, or after a dozen
/// `<|python_tag|>`s, was "no call in the text".)
#[test]
fn a_call_after_long_blanks_or_tokens_stands() {
    let (toolbox, _) = toolbox();
    let call = "get_weather(city=\"Lima\")";
    let mut wrong = Vec::new();
    for before in [
        " ".repeat(200),
        format!("Let me check.\n{}", "\t".repeat(400)),
        "<|python_tag|>".repeat(12),
        format!("<tool_code>{}", " ".repeat(1_000)),
        format!("I'll call{}", " ".repeat(200)),
        format!("Action:{}", " ".repeat(200)),
    ] {
        let text = format!("{before}{call}");
        let got = read(&toolbox, &text);
        if got != Ok(vec![("get_weather".into(), r#"{"city":"Lima"}"#.into())]) {
            wrong.push(format!("{:?}: {got:?}", &before[..before.len().min(40)]));
        }
    }
    // Nor do they make a list item or a word before the call a call's start.
    for before in [
        format!("{}- ", " ".repeat(300)),
        format!("Try calling{}", " ".repeat(300)),
    ] {
        let text = format!("{before}{call}");
        let got = read(&toolbox, &text);
        if got.as_ref().is_ok_and(|calls| !calls.is_empty()) {
            wrong.push(format!("{:?}: {got:?}", &before[..before.len().min(40)]));
        }
    }
    report(wrong);
}

/// A call between `<tool_code>` tags is read end to end by
/// `reader::read_calls` as by `Toolbox::read_calls` (the CALLS cases):
/// the tags are markup around a call that stands.
#[test]
fn a_call_between_tool_code_tags_is_read() {
    for text in [
        "<tool_code>get_weather(city=\"Lima\")</tool_code>",
        "<tool_code>\nget_weather(city=\"Lima\")\n</tool_code>",
        "Sure.\n<tool_code> [get_weather(city=\"Lima\")] </tool_code>\n",
    ] {
        for format in [CallFormat::Pythonic, CallFormat::Auto] {
            let calls = typed_tools::reader::read_calls(format, text)
                .unwrap_or_else(|error| panic!("{text:?} {format:?}: {error}"));
            assert_eq!(calls.len(), 1, "{text:?}");
            assert_eq!(
                (calls[0].name.as_str(), calls[0].arguments.as_str()),
                ("get_weather", r#"{"city":"Lima"}"#),
                "{text:?}"
            );
        }
    }
}

/// `name (` with a space before the bracket is no call, even where a call
/// would stand: prose writes "the account (cust_1)" or "a search (two
/// pages)". Without the space it is one.
#[test]
fn a_name_a_space_and_a_bracket_is_no_call() {
    let (toolbox, _) = toolbox();
    for text in [
        "search (two pages) found nothing new.",
        "get_weather (city=\"Lima\")",
        "Done: account (cust_1) refunded.",
        "I'll call search (\"Lima\")",
    ] {
        let error = toolbox.read_calls(CallFormat::Auto, text).unwrap_err();
        assert_eq!(error.kind, ReadErrorKind::NoCall, "{text:?}: {error}");
    }
    assert_eq!(
        read(&toolbox, "get_weather(city=\"Lima\")"),
        Ok(vec![("get_weather".into(), r#"{"city":"Lima"}"#.into())])
    );
}

/// What `Toolbox::read_calls` reads out of `text`: the calls, or the error.
fn read(toolbox: &Toolbox, text: &str) -> Result<Vec<(String, String)>, String> {
    toolbox
        .read_calls(CallFormat::Auto, text)
        .map(|calls| calls.into_iter().map(|c| (c.name, c.arguments)).collect())
        .map_err(|error| format!("{error:?}"))
}

/// Every case that went wrong, each with what it is and what happened.
fn report(wrong: Vec<String>) {
    assert!(
        wrong.is_empty(),
        "{} wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

#[test]
fn prose_that_mentions_calls_holds_none() {
    assert!(PROSE.len() >= 15);
    let (toolbox, _) = toolbox();
    let mut wrong = Vec::new();
    for (what, text) in PROSE {
        match toolbox.read_calls(CallFormat::Auto, text) {
            Ok(calls) if calls.is_empty() => {}
            Err(error) if error.kind == ReadErrorKind::NoCall => {}
            other => wrong.push(format!("{what}: {other:?}")),
        }
    }
    report(wrong);
}

#[test]
fn a_definition_and_a_call_is_read_as_the_call() {
    assert!(CALLS.len() >= 15);
    let (toolbox, _) = toolbox();
    let mut wrong = Vec::new();
    for (what, text, expected) in CALLS {
        let expected: Vec<(String, String)> = expected
            .iter()
            .map(|(name, args)| (name.to_string(), args.to_string()))
            .collect();
        let got = read(&toolbox, text);
        if got.as_ref() != Ok(&expected) {
            wrong.push(format!("{what}: {got:?}"));
        }
    }
    report(wrong);
}

#[test]
fn an_unreadable_call_beside_a_definition_is_the_error_not_the_definition() {
    let (toolbox, _) = toolbox();
    let mut wrong = Vec::new();
    for (what, text, call) in BROKEN {
        // The call, and the blanks after it (where a parser finds the end).
        let start = text.rfind(call).unwrap();
        let end = start + call.len();
        let calls = start..=end + text[end..].len() - text[end..].trim_start().len();
        match toolbox.read_calls(CallFormat::Auto, text) {
            Err(error)
                if error
                    .at
                    .strip_prefix("byte ")
                    .and_then(|n| n.parse().ok())
                    .is_some_and(|at: usize| calls.contains(&at)) => {}
            other => wrong.push(format!("{what}: the call is at {calls:?}: {other:?}")),
        }
    }
    report(wrong);
}

/// JSON with a call's shape is a call attempt, read or told: a name with
/// its arguments, or arguments without a name.
#[test]
fn json_with_a_calls_shape_is_a_call_attempt() {
    let (toolbox, _) = toolbox();
    assert_eq!(
        read(
            &toolbox,
            r#"{"name": "search", "arguments": {"query": "rust"}}"#
        ),
        Ok(vec![(
            "search".to_owned(),
            r#"{"query":"rust"}"#.to_owned()
        )])
    );
    for attempt in [
        r#"{"arguments": {"query": "rust"}}"#,
        r#"[{"name": "search", "arguments": {"query": "rust"}}, {"args": {"query": "go"}}]"#,
    ] {
        let error = toolbox.read_calls(CallFormat::Auto, attempt).unwrap_err();
        assert_eq!(error.kind, ReadErrorKind::Malformed, "{attempt}: {error:?}");
    }
}

/// In an agent, prose is the final answer: nothing runs and the model is
/// not told it made a mistake.
#[test]
fn in_an_agent_prose_that_mentions_calls_is_the_final_answer() {
    let mut wrong = Vec::new();
    for (what, text) in PROSE {
        let (toolbox, log) = toolbox();
        let model = ScriptedModel::new([*text]);
        let run = block_on(Agent::new(&toolbox, model).run("What's the weather in Lima?"));
        if run.exit != Exit::Answer(text.to_string())
            || run.steps != 1
            || !run.calls.is_empty()
            || !log.calls().is_empty()
        {
            let told = run.transcript.get(3).map(|m| m.text().to_owned());
            wrong.push(format!(
                "{what}: {:?} after {} step(s), told {told:?}",
                run.exit, run.steps
            ));
        }
    }
    report(wrong);
}

/// In an agent, the call beside a definition runs, and the run goes on.
#[test]
fn in_an_agent_the_call_beside_a_definition_runs() {
    let mut wrong = Vec::new();
    for (what, text, expected) in CALLS {
        let (toolbox, log) = toolbox();
        let model = ScriptedModel::new([*text, "Done."]);
        let run = block_on(Agent::new(&toolbox, model).run("What's the weather in Lima?"));
        let names: Vec<&str> = run.calls.iter().map(|c| c.call.name.as_str()).collect();
        let expected: Vec<&str> = expected.iter().map(|(name, _)| *name).collect();
        if run.exit != Exit::Answer("Done.".into())
            || names != expected
            || log.calls().len() != expected.len()
        {
            wrong.push(format!(
                "{what}: {:?}, calls {names:?}, ran {:?}",
                run.exit,
                log.calls()
            ));
        }
    }
    report(wrong);
}

/// In an agent, an unreadable call beside a definition is told to the
/// model, which sends it again.
#[test]
fn in_an_agent_an_unreadable_call_beside_a_definition_is_told() {
    let mut wrong = Vec::new();
    for (what, text, _) in BROKEN {
        let (toolbox, log) = toolbox();
        let model = ScriptedModel::new([*text, "search(query=\"x\")", "Done."]);
        let run = block_on(Agent::new(&toolbox, model).run("Search for x."));
        let told = run
            .transcript
            .get(3)
            .map(|m| m.text().to_owned())
            .unwrap_or_default();
        if run.exit != Exit::Answer("Done.".into())
            || !told.starts_with("Your tool call could not be read")
            || log.calls() != ["search x"]
        {
            wrong.push(format!(
                "{what}: {:?}, told {told:?}, ran {:?}",
                run.exit,
                log.calls()
            ));
        }
    }
    report(wrong);
}
