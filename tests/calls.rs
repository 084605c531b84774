//! Reading tool calls from real-looking model output, in every format, then
//! dispatching them.

use futures::executor::block_on;
use typed_tools::reader::{read_calls, ReadErrorKind};
use typed_tools::{tool, CallFormat, ToolCall, Toolbox};

/// Weather for a city.
#[tool(effects = Network)]
fn get_weather(city: String, unit: Option<String>) -> String {
    format!(
        "sunny in {city} ({})",
        unit.unwrap_or_else(|| "celsius".into())
    )
}

/// Sort a file's lines.
#[tool(effects = Write)]
fn sort(path: String, reverse: Option<bool>) -> String {
    format!(
        "sorted {path}{}",
        if reverse == Some(true) {
            " in reverse"
        } else {
            ""
        }
    )
}

fn toolbox() -> Toolbox {
    Toolbox::builder()
        .tool(GetWeather)
        .tool(Sort)
        .build()
        .unwrap()
}

fn call(id: Option<&str>, name: &str, arguments: &str) -> ToolCall {
    ToolCall {
        id: id.map(str::to_owned),
        name: name.to_owned(),
        arguments: arguments.to_owned(),
    }
}

/// Every call dispatched, in order: their outputs.
fn run(calls: &[ToolCall]) -> Vec<String> {
    let toolbox = toolbox();
    calls
        .iter()
        .map(|c| {
            block_on(toolbox.call(&c.name, &c.arguments))
                .unwrap()
                .into_json()
        })
        .collect()
}

// A Chat Completions response with two parallel calls, as the API returns it.
const OPENAI_CHAT: &str = r#"{
  "id": "chatcmpl-9abc",
  "object": "chat.completion",
  "model": "gpt-4o-2024-08-06",
  "choices": [{
    "index": 0,
    "message": {
      "role": "assistant",
      "content": null,
      "tool_calls": [
        {"id": "call_Xy1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Lima\"}"}},
        {"id": "call_Xy2", "type": "function", "function": {"name": "sort", "arguments": "{\"path\":\"report.pdf\",\"reverse\":true}"}}
      ],
      "refusal": null
    },
    "logprobs": null,
    "finish_reason": "tool_calls"
  }],
  "usage": {"prompt_tokens": 82, "completion_tokens": 41, "total_tokens": 123}
}"#;

#[test]
fn openai_chat_completions() {
    let calls = read_calls(CallFormat::OpenAiChat, OPENAI_CHAT).unwrap();
    assert_eq!(
        calls,
        [
            call(Some("call_Xy1"), "get_weather", r#"{"city":"Lima"}"#),
            call(
                Some("call_Xy2"),
                "sort",
                r#"{"path":"report.pdf","reverse":true}"#
            ),
        ]
    );
    assert_eq!(
        run(&calls),
        [
            r#""sunny in Lima (celsius)""#,
            r#""sorted report.pdf in reverse""#
        ]
    );
    // The message alone, and the tool_calls list alone, read the same.
    let message = serde_json::from_str::<serde_json::Value>(OPENAI_CHAT).unwrap()["choices"][0]
        ["message"]
        .clone();
    assert_eq!(
        read_calls(CallFormat::OpenAiChat, &message.to_string()).unwrap(),
        calls
    );
    assert_eq!(
        read_calls(CallFormat::OpenAiChat, &message["tool_calls"].to_string()).unwrap(),
        calls
    );
    // The legacy `function_call`.
    let legacy = r#"{"role": "assistant", "content": null, "function_call": {"name": "sort", "arguments": "{\"path\": \"a\"}"}}"#;
    assert_eq!(
        read_calls(CallFormat::OpenAiChat, legacy).unwrap(),
        [call(None, "sort", r#"{"path": "a"}"#)]
    );
    // A prose answer has no calls.
    let prose = r#"{"choices": [{"message": {"role": "assistant", "content": "It is sunny."}, "finish_reason": "stop"}]}"#;
    assert!(read_calls(CallFormat::OpenAiChat, prose)
        .unwrap()
        .is_empty());
}

#[test]
fn openai_chat_errors_name_the_path() {
    let no_name =
        r#"{"tool_calls": [{"id": "c", "type": "function", "function": {"arguments": "{}"}}]}"#;
    let error = read_calls(CallFormat::OpenAiChat, no_name).unwrap_err();
    assert_eq!(error.at, "$.tool_calls[0].function.name");
    assert_eq!(error.to_string(), "cannot read a OpenAiChat tool call: at $.tool_calls[0].function.name, expected a `name` field, found nothing");
    let bad_args =
        r#"{"tool_calls": [{"type": "function", "function": {"name": "sort", "arguments": 12}}]}"#;
    let error = read_calls(CallFormat::OpenAiChat, bad_args).unwrap_err();
    assert_eq!(error.at, "$.tool_calls[0].function.arguments");
    assert_eq!(error.found, "integer 12");
    let not_json = read_calls(CallFormat::OpenAiChat, "{\"choices\": [").unwrap_err();
    assert!(not_json.found.starts_with("invalid JSON"), "{not_json}");
    assert!(not_json.for_model().contains("could not be read"));
}

#[test]
fn openai_responses() {
    let response = r#"{
      "id": "resp_1", "object": "response", "status": "completed",
      "output": [
        {"type": "reasoning", "id": "rs_1", "summary": []},
        {"type": "function_call", "id": "fc_1", "call_id": "call_A", "name": "get_weather", "arguments": "{\"city\":\"Oslo\",\"unit\":\"kelvin\"}", "status": "completed"},
        {"type": "function_call", "id": "fc_2", "call_id": "call_B", "name": "sort", "arguments": "{\"path\":\"x.txt\"}", "status": "completed"}
      ]
    }"#;
    let calls = read_calls(CallFormat::OpenAiResponses, response).unwrap();
    assert_eq!(
        calls,
        [
            call(
                Some("call_A"),
                "get_weather",
                r#"{"city":"Oslo","unit":"kelvin"}"#
            ),
            call(Some("call_B"), "sort", r#"{"path":"x.txt"}"#),
        ]
    );
    assert_eq!(run(&calls)[0], r#""sunny in Oslo (kelvin)""#);
    let item =
        r#"{"type": "function_call", "call_id": "call_C", "name": "sort", "arguments": "{}"}"#;
    assert_eq!(
        read_calls(CallFormat::OpenAiResponses, item).unwrap()[0]
            .id
            .as_deref(),
        Some("call_C")
    );
    assert_eq!(read_calls(CallFormat::Auto, response).unwrap(), calls);
}

#[test]
fn anthropic_tool_use() {
    let message = r#"{
      "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
      "content": [
        {"type": "text", "text": "I'll check the weather and sort the file."},
        {"type": "tool_use", "id": "toolu_01A", "name": "get_weather", "input": {"city": "Lima"}},
        {"type": "tool_use", "id": "toolu_01B", "name": "sort", "input": {"path": "report.pdf", "reverse": false}}
      ],
      "stop_reason": "tool_use"
    }"#;
    let calls = read_calls(CallFormat::Anthropic, message).unwrap();
    assert_eq!(
        calls,
        [
            call(Some("toolu_01A"), "get_weather", r#"{"city":"Lima"}"#),
            call(
                Some("toolu_01B"),
                "sort",
                r#"{"path":"report.pdf","reverse":false}"#
            ),
        ]
    );
    assert_eq!(run(&calls)[1], r#""sorted report.pdf""#);
    assert_eq!(read_calls(CallFormat::Auto, message).unwrap(), calls);
    let no_input = r#"{"type": "tool_use", "id": "t", "name": 5}"#;
    assert_eq!(
        read_calls(CallFormat::Anthropic, no_input).unwrap_err().at,
        "$.name"
    );
}

#[test]
fn hermes_and_qwen_tags() {
    let answer = "Let me look that up.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Lima\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"sort\", \"arguments\": \"{\\\"path\\\": \\\"b.txt\\\"}\"}\n</tool_call>";
    let calls = read_calls(CallFormat::Hermes, answer).unwrap();
    assert_eq!(
        calls,
        [
            call(None, "get_weather", r#"{"city":"Lima"}"#),
            call(None, "sort", r#"{"path": "b.txt"}"#)
        ]
    );
    assert_eq!(read_calls(CallFormat::Auto, answer).unwrap(), calls);
    // A truncated answer: the last block is unclosed but complete.
    let truncated = "<tool_call>\n{\"name\": \"sort\", \"arguments\": {\"path\": \"c\"}}";
    assert_eq!(
        read_calls(CallFormat::Hermes, truncated).unwrap()[0].arguments,
        r#"{"path":"c"}"#
    );
    let broken = "<tool_call>{\"name\": \"sort\", \"arguments\": {</tool_call>";
    let error = read_calls(CallFormat::Hermes, broken).unwrap_err();
    assert_eq!(error.at, "byte 11");
    assert!(error.found.starts_with("invalid JSON"));
}

#[test]
fn json_objects_in_text() {
    let fenced = "Sure!\n```json\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Lima\"}}\n```\nDone.";
    assert_eq!(
        read_calls(CallFormat::Json, fenced).unwrap(),
        [call(None, "get_weather", r#"{"city":"Lima"}"#)]
    );
    // trivialai's shape.
    let trivialai = r#"{"functionName": "sort", "args": {"path": "d.txt"}}"#;
    assert_eq!(
        read_calls(CallFormat::Json, trivialai).unwrap(),
        [call(None, "sort", r#"{"path":"d.txt"}"#)]
    );
    // Llama 3.1's JSON tool calls.
    let llama = r#"{"name": "get_weather", "parameters": {"city": "Quito"}}"#;
    assert_eq!(
        read_calls(CallFormat::Auto, llama).unwrap(),
        [call(None, "get_weather", r#"{"city":"Quito"}"#)]
    );
    // A list of calls, and several objects in prose.
    let list = r#"[{"name": "sort", "arguments": {"path": "a"}}, {"name": "sort", "arguments": {"path": "b"}}]"#;
    assert_eq!(read_calls(CallFormat::Json, list).unwrap().len(), 2);
    let two = r#"First {"name": "sort", "arguments": {"path": "a"}} then {"name": "get_weather", "arguments": {"city": "b"}}."#;
    assert_eq!(
        run(&read_calls(CallFormat::Auto, two).unwrap()),
        [r#""sorted a""#, r#""sunny in b (celsius)""#]
    );
    let error = read_calls(CallFormat::Json, r#"{"tool": "sort"}"#).unwrap_err();
    assert!(error.expected.contains("`name` and `arguments`"), "{error}");
    assert!(error.found.contains("\"tool\""), "{error}");
    assert!(read_calls(CallFormat::Json, "no json here").is_err());
}

#[test]
fn pythonic_calls_map_positional_arguments_by_parameter_order() {
    let toolbox = toolbox();
    let text = r#"[get_weather(city="Lima"), sort('report.pdf', reverse=True)]"#;
    let calls = toolbox.read_calls(CallFormat::Pythonic, text).unwrap();
    assert_eq!(
        calls,
        [
            call(None, "get_weather", r#"{"city":"Lima"}"#),
            call(None, "sort", r#"{"path":"report.pdf","reverse":true}"#)
        ]
    );
    assert_eq!(run(&calls)[1], r#""sorted report.pdf in reverse""#);
    // Llama's python tag, one call without brackets, auto-detected.
    let tagged = "<|python_tag|>get_weather('Oslo', 'kelvin')";
    assert_eq!(
        toolbox.read_calls(CallFormat::Auto, tagged).unwrap(),
        [call(
            None,
            "get_weather",
            r#"{"city":"Oslo","unit":"kelvin"}"#
        )]
    );
    // Without a toolbox, positional arguments cannot be named.
    assert!(read_calls(CallFormat::Pythonic, "sort('a')").is_err());
}

#[test]
fn pythonic_errors_say_what_and_where() {
    let toolbox = toolbox();
    let too_many = toolbox
        .read_calls(CallFormat::Pythonic, "sort('a', True, 3)")
        .unwrap_err();
    assert_eq!(too_many.at, "byte 16");
    assert_eq!(
        too_many.expected,
        "at most 2 positional argument(s) for `sort`"
    );
    let after_keyword = toolbox
        .read_calls(CallFormat::Pythonic, "sort(path='a', True)")
        .unwrap_err();
    assert_eq!(
        after_keyword.expected,
        "a keyword argument (positional ones come first)"
    );
    let twice = toolbox
        .read_calls(CallFormat::Pythonic, "sort('a', path='b')")
        .unwrap_err();
    assert_eq!(twice.found, "`path` by position and by keyword");
    let unclosed = toolbox
        .read_calls(CallFormat::Pythonic, "[sort(path='a)]")
        .unwrap_err();
    assert_eq!(unclosed.at, "byte 11");
    assert_eq!(unclosed.expected, "a string closed by '");
    let no_call = read_calls(CallFormat::Pythonic, "I cannot help with that.").unwrap_err();
    assert_eq!(no_call.found, "no call in the text");
    assert_eq!(no_call.kind, ReadErrorKind::NoCall);
    assert_eq!(twice.kind, ReadErrorKind::Malformed);
}

/// Each text format says by the error's kind, not its words, that a text
/// holds no call (prose), apart from a call it could not read.
#[test]
fn every_text_format_tells_no_call_from_a_broken_one() {
    let prose = "I cannot help with that.";
    for format in [
        CallFormat::Hermes,
        CallFormat::Json,
        CallFormat::Pythonic,
        CallFormat::Auto,
    ] {
        let error = read_calls(format, prose).unwrap_err();
        assert_eq!(error.kind, ReadErrorKind::NoCall, "{format:?}: {error}");
    }
    for (format, broken) in [
        (CallFormat::Hermes, "<tool_call>{\"name\": </tool_call>"),
        (CallFormat::Json, "{\"name\": \"a\", \"arguments\": }"),
        (CallFormat::Pythonic, "a(b=)"),
        (CallFormat::Auto, "[a(b=)]"),
        (CallFormat::OpenAiChat, "{\"tool_calls\": [{}]}"),
        (CallFormat::Anthropic, "not JSON"),
    ] {
        let error = read_calls(format, broken).unwrap_err();
        assert_eq!(error.kind, ReadErrorKind::Malformed, "{format:?}: {error}");
    }
}

#[test]
fn no_input_panics_a_reader() {
    let deep = "[".repeat(50_000);
    let inputs = [
        "",
        "{",
        "[",
        "<tool_call>",
        "<tool_call></tool_call>",
        "f(",
        "[f(a=[[[",
        "\"",
        "f(a='\\",
        "f(a=1e999)",
        &deep,
        "{\"choices\": [{}]}",
        "{\"content\": 1}",
        "{\"output\": \"x\"}",
        "\u{0}\u{1F600}(",
    ];
    let toolbox = toolbox();
    for format in CallFormat::ALL {
        for input in inputs {
            let _ = toolbox.read_calls(format, input);
        }
    }
}
