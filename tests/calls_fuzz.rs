//! A bounded fuzz harness over the call readers, run by `cargo test`: real
//! model outputs mutated byte by byte, arbitrary text, and deep nesting. The
//! readers must never panic, whatever they are given; and what they read must
//! be a name and argument text the dispatcher can be handed.
//!
//! The seed is fixed, so a failure reproduces; `FUZZ_SEED` and `FUZZ_CASES`
//! change them for a longer run.

use typed_tools::{tool, CallFormat, Toolbox};

/// Weather for a city.
#[tool(effects = Network)]
fn get_weather(city: String, unit: Option<String>) -> String {
    format!("{city} {unit:?}")
}

const CORPUS: &[&str] = &[
    r#"{"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Lima\"}"}}]}}]}"#,
    r#"{"output":[{"type":"function_call","call_id":"c","name":"get_weather","arguments":"{\"city\":\"Oslo\"}"}]}"#,
    r#"{"content":[{"type":"text","text":"hi"},{"type":"tool_use","id":"t","name":"get_weather","input":{"city":"Rome"}}]}"#,
    "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Lima\"}}\n</tool_call>",
    "```json\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Lima\"}}\n```",
    r#"{"functionName": "get_weather", "args": {"city": "Quito"}}"#,
    r#"[get_weather(city="Lima", unit='celsius'), get_weather('Oslo')]"#,
    "<|python_tag|>get_weather(city=\"Lima\", unit=None)",
];

mod support;

use support::rng::Rng;

const INTERESTING: &[&[u8]] = &[
    b"{",
    b"}",
    b"[",
    b"]",
    b"(",
    b")",
    b"\"",
    b"'",
    b"\\",
    b",",
    b":",
    b"=",
    b"<tool_call>",
    b"</tool_call>",
    b"```",
    b"\n",
    b"\0",
    b"\xF0\x9F\x98\x80",
    b"\xC3",
    b"True",
    b"None",
    b"1e999",
    b"-",
    b"...",
];

fn mutate(rng: &mut Rng, input: &[u8]) -> Vec<u8> {
    let mut bytes = input.to_vec();
    for _ in 0..=rng.below(4) {
        let at = rng.below(bytes.len() + 1);
        match rng.below(4) {
            0 if !bytes.is_empty() => {
                let end = (at + rng.below(8)).min(bytes.len());
                bytes.drain(at.min(end)..end);
            }
            1 => {
                let piece = INTERESTING[rng.below(INTERESTING.len())];
                bytes.splice(at..at, piece.iter().copied());
            }
            2 if at < bytes.len() => bytes[at] = rng.next() as u8,
            _ => bytes.truncate(at),
        }
    }
    bytes
}

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
fn readers_never_panic_on_mutated_model_output() {
    let toolbox = Toolbox::builder().tool(GetWeather).build().unwrap();
    let mut rng = Rng(env("FUZZ_SEED", 0x5EED_CAFE) | 1);
    let cases = env("FUZZ_CASES", 20_000);
    let mut read = 0;
    for _ in 0..cases {
        let base = CORPUS[rng.below(CORPUS.len())].as_bytes();
        let bytes = mutate(&mut rng, base);
        // The readers take text: what is not UTF-8 is read lossily, as a client would.
        let text = String::from_utf8_lossy(&bytes);
        let format = CallFormat::ALL[rng.below(CallFormat::ALL.len())];
        if let Ok(calls) = toolbox.read_calls(format, &text) {
            for call in calls {
                read += 1;
                // Whatever was read can be handed to the dispatcher, which never panics either.
                let _ = futures::executor::block_on(toolbox.call(&call.name, &call.arguments));
            }
        }
    }
    // The harness is not vacuous: formats are picked at random, so most pairs
    // cannot match, but a good share of mutated inputs still read (about one
    // in seventeen with the default seed).
    assert!(read > cases / 40, "only {read} calls read in {cases} cases");
}

#[test]
fn readers_never_panic_on_arbitrary_text_and_deep_nesting() {
    let toolbox = Toolbox::builder().tool(GetWeather).build().unwrap();
    let mut rng = Rng(env("FUZZ_SEED", 0xDEAD_BEEF) | 1);
    for _ in 0..env("FUZZ_CASES", 20_000) / 4 {
        let len = rng.below(64);
        let bytes: Vec<u8> = (0..len)
            .map(|_| {
                let piece = INTERESTING[rng.below(INTERESTING.len())];
                piece[rng.below(piece.len())]
            })
            .collect();
        let text = String::from_utf8_lossy(&bytes);
        for format in CallFormat::ALL {
            let _ = toolbox.read_calls(format, &text);
        }
    }
    for open in [
        "[",
        "{\"a\":",
        "f(a=[",
        "<tool_call>[",
        "(",
        "{\"name\": \"get_weather\", \"arguments\": ",
    ] {
        let deep = open.repeat(100_000);
        for format in CallFormat::ALL {
            assert!(
                toolbox.read_calls(format, &deep).is_err(),
                "{format:?} read a call out of {open:?}×100000"
            );
        }
    }
}
