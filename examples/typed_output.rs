//! An agent that answers with a `RestockReport`, not text: the answer is
//! read, repaired, coerced and checked against the struct's schema before
//! the program sees it, and an answer that does not fit goes back to the
//! model, which fixes it. Three ways to ask for it:
//!
//! 1. an **output tool** (the default): `final_result`, shown with the
//!    other tools, whose arguments are the report;
//! 2. **native structured output**: the provider holds the model to the
//!    schema (OpenAI's strict `response_format`, Anthropic's
//!    `output_config`);
//! 3. **prompted**: the schema in the prompt, the JSON found in the text.
//!
//! Offline: the model's answers are a script, and with `--features openai`
//! the second way goes through the real OpenAI-compatible client to a
//! stub server on 127.0.0.1 that this example starts.
//!
//! ```text
//! cargo run --example typed_output
//! cargo run --example typed_output --features openai
//! ```

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use typed_tools::agent::{Agent, OutputMode, Run};
use typed_tools::model::{Message, ScriptedModel};
use typed_tools::{tool, Toolbox};

/// What to restock, and what it costs.
#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)] // Printed with `{:#?}`.
struct RestockReport {
    /// The items to order, by id.
    items: Vec<u32>,
    /// What they cost in all, in dollars.
    total_cost: f64,
    /// Who to order from.
    supplier: String,
}

/// How many of an item are on the shelf.
#[tool(effects = Read)]
fn stock(item: u32) -> u32 {
    item % 3
}

/// The price of one item, in dollars.
#[tool(effects = Read)]
fn price(item: u32) -> f64 {
    12.5 * f64::from(item)
}

/// A call written as a text-tool model writes it.
fn call(name: &str, arguments: serde_json::Value) -> String {
    json!([{"name": name, "arguments": arguments}]).to_string()
}

/// A restock report must name an item, as the program's validator says.
fn names_an_item(report: &RestockReport) -> Result<(), String> {
    match report.items.is_empty() {
        true => Err("a restock report names at least one item to order".into()),
        false => Ok(()),
    }
}

/// Prints what the model said and was told, then the report.
fn show<O: std::fmt::Debug>(run: &Run<O>) {
    let mut asked = false;
    for message in &run.transcript {
        match message {
            Message::Assistant { text, calls, .. } => {
                for call in calls {
                    println!("  model calls  {}({})", call.name, call.arguments);
                }
                if !text.is_empty() {
                    println!("  model says   {}", one_line(text));
                }
            }
            Message::ToolResult(result) => {
                println!("  result       {}", one_line(&result.content))
            }
            // The first is the question; the others tell the model what
            // was wrong with an answer given as text.
            Message::User(text) if asked => println!("  told         {}", one_line(text)),
            Message::User(_) => asked = true,
            _ => {}
        }
    }
    match &run.output {
        Some(report) => println!("  => {report:#?}\n"),
        None => println!("  => no report: {:?}\n", run.exit),
    }
}

fn one_line(text: &str) -> String {
    let line = text.replace('\n', " ");
    match line.char_indices().nth(110) {
        Some((at, _)) => format!("{}...", &line[..at]),
        None => line,
    }
}

fn main() {
    let toolbox = Toolbox::builder().tool(Stock).tool(Price).build().unwrap();

    // 1. The output tool. The first report leaves out the supplier: the
    //    model is told, as for a bad call, and sends it again.
    println!("1. An output tool, `final_result`, whose arguments are the report:");
    let model = ScriptedModel::new([
        call("stock", json!({"item": 2})),
        call("price", json!({"item": 2})),
        call("final_result", json!({"items": [2], "total_cost": 25.0})),
        call(
            "final_result",
            json!({"items": [2], "total_cost": "25.0", "supplier": "Acme"}),
        ),
    ]);
    let agent = Agent::new(&toolbox, model).output::<RestockReport>();
    let run = futures::executor::block_on(agent.run("What should we restock?"));
    show(&run);

    // 2. Native structured output.
    println!("2. Native structured output (the provider holds the model to the schema):");
    native(&toolbox);

    // 3. Prompted: the JSON in the answer's text, fenced, with a trailing
    //    comma (repaired, recorded). The first report names no item: the
    //    program's validator refuses it, and the model fixes it.
    println!("3. Prompted: the schema in the prompt, the JSON found in the text:");
    let model = ScriptedModel::new([
        "Nothing is low, so:\n```json\n{\"items\": [], \"total_cost\": 0, \"supplier\": \"Acme\"}\n```",
        "Then item 5:\n```json\n{\"items\": [5], \"total_cost\": 62.5, \"supplier\": \"Acme\",}\n```",
    ]);
    let agent = Agent::new(&toolbox, model)
        .output::<RestockReport>()
        .output_mode(OutputMode::Prompted)
        .validate(names_an_item);
    let run = futures::executor::block_on(agent.run("What should we restock?"));
    show(&run);
}

/// The first answer's `total_cost` is text that is no number: refused,
/// told, fixed.
const NATIVE_ANSWERS: [&str; 2] = [
    r#"{"items": [2, 3], "total_cost": "about sixty", "supplier": "Acme"}"#,
    r#"{"items": [2, 3], "total_cost": 62.5, "supplier": "Acme"}"#,
];

/// Native output from a scripted model: the request carries the schema,
/// which a provider's client sends as its structured-output setting.
#[cfg(not(feature = "openai"))]
fn native(toolbox: &Toolbox) {
    let model = ScriptedModel::new(NATIVE_ANSWERS).native(typed_tools::CatalogFormat::OpenAiChat);
    let agent = Agent::new(toolbox, model)
        .output::<RestockReport>()
        .output_mode(OutputMode::Native);
    let run = futures::executor::block_on(agent.run("What should we restock?"));
    let requests = agent.model().requests();
    if let Some(output) = &requests[0].output {
        println!(
            "  the request asks for `{}`: {}",
            output.name,
            one_line(&output.schema.to_string())
        );
    }
    println!("  (build with `--features openai` to send it through the OpenAI client)");
    show(&run);
}

/// Native output through the OpenAI-compatible client, to a stub server on
/// 127.0.0.1 that answers as OpenAI does and prints what it was asked.
#[cfg(feature = "openai")]
fn native(toolbox: &Toolbox) {
    use typed_tools::provider::OpenAi;
    let url = stub::start(&NATIVE_ANSWERS);
    let model = OpenAi::new("gpt-4o-mini").base_url(format!("{url}/v1"));
    let agent = Agent::new(toolbox, model)
        .output::<RestockReport>()
        .output_mode(OutputMode::Native);
    let run = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime")
        .block_on(agent.run("What should we restock?"));
    show(&run);
}

/// An OpenAI-compatible server on 127.0.0.1, on a thread of its own: each
/// request gets the next answer, as a Chat Completions body.
#[cfg(feature = "openai")]
mod stub {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::TcpListener;

    pub(crate) fn start(answers: &'static [&'static str]) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a port on 127.0.0.1");
        let url = format!("http://{}", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            for (answer, stream) in answers.iter().zip(listener.incoming()) {
                let Ok(mut stream) = stream else { return };
                let mut reader = BufReader::new(&mut stream);
                let mut length = 0;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    if let Some((name, value)) = line.split_once(':') {
                        if name.eq_ignore_ascii_case("content-length") {
                            length = value.trim().parse().unwrap_or(0);
                        }
                    }
                }
                let mut body = vec![0; length];
                if reader.read_exact(&mut body).is_err() {
                    return;
                }
                let request: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
                let format = &request["response_format"];
                println!(
                    "  the server was asked for a {} named `{}`, strict: {}",
                    format["type"].as_str().unwrap_or("?"),
                    format["json_schema"]["name"].as_str().unwrap_or("?"),
                    format["json_schema"]["strict"]
                );
                let reply = serde_json::json!({
                    "id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4o-mini",
                    "choices": [{"index": 0, "finish_reason": "stop",
                        "message": {"role": "assistant", "content": answer}}],
                    "usage": {"prompt_tokens": 120, "completion_tokens": 24, "total_tokens": 144}
                })
                .to_string();
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
                     connection: close\r\n\r\n{reply}",
                    reply.len()
                );
            }
        });
        url
    }
}
