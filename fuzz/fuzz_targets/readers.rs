//! Model output from the fuzzer, read by every call reader: each
//! `CallFormat` through `typed_tools::reader::read_calls`, and the Pythonic
//! format through `Toolbox::read_calls`, which knows the tools' parameters
//! for positional arguments. The oracle: no reader panics or hangs; a call
//! read from Python syntax has a name and arguments that are a JSON object;
//! every call read can be handed to the toolbox, which neither panics nor
//! runs a tool whose name it does not have.
#![no_main]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use futures::executor::block_on;
use libfuzzer_sys::fuzz_target;
use typed_tools::reader::read_calls;
use typed_tools::{tool, CallFormat, ToolError, Toolbox};

static RUNS: AtomicUsize = AtomicUsize::new(0);

/// Weather for a city.
#[tool(effects = Network)]
fn get_weather(city: String, unit: Option<String>) -> String {
    RUNS.fetch_add(1, Ordering::SeqCst);
    format!("{city} {unit:?}")
}

/// Add two numbers.
#[tool(effects = Pure)]
fn add(a: i64, b: i64) -> i64 {
    RUNS.fetch_add(1, Ordering::SeqCst);
    a.wrapping_add(b)
}

fn toolbox() -> &'static Toolbox {
    static TOOLBOX: OnceLock<Toolbox> = OnceLock::new();
    TOOLBOX.get_or_init(|| {
        Toolbox::builder()
            .tool(GetWeather)
            .tool(Add)
            .build()
            .expect("well-named tools")
    })
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let toolbox = toolbox();
    let mut read = Vec::new();
    for format in CallFormat::ALL {
        if let Ok(calls) = read_calls(format, &text) {
            read.extend(calls);
        }
    }
    if let Ok(calls) = toolbox.read_calls(CallFormat::Pythonic, &text) {
        for call in &calls {
            assert!(
                !call.name.is_empty(),
                "a Pythonic call without a name in {text:?}"
            );
            let arguments: serde_json::Value = serde_json::from_str(&call.arguments)
                .unwrap_or_else(|e| {
                    panic!("Pythonic arguments {:?} are not JSON: {e}", call.arguments)
                });
            assert!(
                arguments.is_object(),
                "Pythonic arguments {arguments} are not an object"
            );
        }
        read.extend(calls);
    }
    for call in read.iter().take(16) {
        let before = RUNS.load(Ordering::SeqCst);
        let result = block_on(toolbox.call(&call.name, &call.arguments));
        if !matches!(call.name.as_str(), "get_weather" | "add") {
            assert!(
                matches!(result, Err(ToolError::UnknownTool { .. })),
                "{result:?}"
            );
            assert_eq!(
                RUNS.load(Ordering::SeqCst),
                before,
                "{:?} ran a tool",
                call.name
            );
        }
    }
});
