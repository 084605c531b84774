//! Our MCP client against a server written with the official Python SDK
//! (`scripts/mcp_python/server.py`, a weather desk), started as a child
//! process over stdio: its tools imported with declared effects and from its
//! annotations, called, their bad calls refused before they reach the server
//! (which would have coerced some of them: pydantic reads `"2"` as `2`), and
//! plans over them type-checked against the schemas the SDK generated.
//!
//! It needs Python with `mcp` installed, so it is ignored by a plain
//! `cargo test`; `scripts/mcp_python/run.sh` (run by `.ci/run`) makes the
//! virtual environment and runs it with `TYPED_TOOLS_MCP_PYTHON` set to its
//! interpreter.

use std::process::Command;

use serde_json::{json, Value};
use typed_tools::effect::EffectSet;
use typed_tools::mcp::{Import, ImportError, McpClient, Unannotated};
use typed_tools::plan::{Interpreter, Plan, PlanError, Value as PlanValue};
use typed_tools::{CatalogFormat, ToolError};

mod mcp_shared;

use mcp_shared::toolbox_of;

const NEEDS_PYTHON: &str =
    "set TYPED_TOOLS_MCP_PYTHON to a Python with `mcp` installed: scripts/mcp_python/run.sh does";

async fn weather_desk() -> McpClient {
    let python = std::env::var("TYPED_TOOLS_MCP_PYTHON").expect(NEEDS_PYTHON);
    let mut command = Command::new(python);
    command.arg(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/scripts/mcp_python/server.py"
    ));
    McpClient::stdio(command)
        .await
        .expect("the Python server starts")
}

/// The calls that reached the Python server, as it reports them.
async fn calls_seen(client: &McpClient) -> Vec<Value> {
    let result = client.call("calls_seen", json!({})).await.unwrap();
    let structured = result.structured_content.expect("structured content");
    structured["result"].as_array().cloned().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the Python MCP SDK: scripts/mcp_python/run.sh runs it"]
async fn python_sdk_server_tools_are_imported_checked_and_planned_over() {
    let client = weather_desk().await;
    let declared = Import::declared()
        .tool("forecast", EffectSet::READ | EffectSet::NETWORK)
        .tool("save_note", EffectSet::WRITE);
    let toolbox = toolbox_of(client.import(&declared).await.unwrap());
    assert_eq!(
        toolbox.names().collect::<Vec<_>>(),
        ["forecast", "save_note"]
    );
    let text = toolbox.catalog(CatalogFormat::Text).to_string();
    assert!(
        text.contains("tool forecast: {city: String, days?: Int} -{Read, Network}-> {city: String, celsius: Int, summary: String}"),
        "{text}"
    );
    for format in CatalogFormat::ALL {
        assert!(toolbox.catalog(format).to_string().contains("save_note"));
    }

    // A good call.
    let output = toolbox
        .call("forecast", r#"{"city": "Lima", "days": 2}"#)
        .await
        .unwrap();
    assert_eq!(
        output.to_value(),
        json!({"city": "Lima", "celsius": 23, "summary": "sunny in Lima"})
    );

    // Bad calls, refused here; pydantic would have read `"2"` as 2.
    let string_days = toolbox
        .call("forecast", r#"{"city": "Lima", "days": "2"}"#)
        .await
        .unwrap_err();
    assert!(
        string_days
            .for_model()
            .contains("$.days: expected Int, found string \"2\""),
        "{string_days}"
    );
    let missing = toolbox
        .call("save_note", r#"{"city": "Lima"}"#)
        .await
        .unwrap_err();
    assert!(matches!(missing, ToolError::Deserialization { .. }));
    let denied = toolbox
        .restrict(EffectSet::READ | EffectSet::NETWORK)
        .call("save_note", r#"{"city": "Lima", "text": "umbrella"}"#)
        .await
        .unwrap_err();
    assert!(matches!(denied, ToolError::EffectDenied { .. }));
    assert_eq!(
        calls_seen(&client).await,
        [json!({"tool": "forecast", "city": "Lima", "days": 2})]
    );

    // A plan a model wrote with a mistake: refused, nothing sent.
    let interpreter = Interpreter::new(&toolbox);
    let wrong = Plan::parse(
        r#"match exec tool forecast {city = "Lima"} {
  Ok(f) =>
    match exec tool save_note {city = f.city, text = f.rain} {
      Ok(note) => note.text,
      Err(e) => e.message
    },
  Err(e) => e.message
}"#,
    )
    .unwrap();
    let refused = interpreter.run(&wrong).await.unwrap_err();
    assert!(matches!(refused, PlanError::TypeErrors(_)), "{refused}");
    assert!(refused.to_string().contains("rain"), "{refused}");
    assert_eq!(calls_seen(&client).await.len(), 1);

    // The plan fixed: checked, then run, each call once.
    let right = Plan::parse(
        r#"match exec tool forecast {city = "Lima"} {
  Ok(f) =>
    match exec tool save_note {city = f.city, text = f.summary} {
      Ok(note) => note.text,
      Err(e) => e.message
    },
  Err(e) => e.message
}"#,
    )
    .unwrap();
    let run = interpreter.run(&right).await.unwrap();
    assert_eq!(
        run.outcome.unwrap(),
        PlanValue::String("Lima: sunny in Lima".into())
    );
    assert_eq!(
        calls_seen(&client).await,
        [
            json!({"tool": "forecast", "city": "Lima", "days": 2}),
            json!({"tool": "forecast", "city": "Lima", "days": 1}),
            json!({"tool": "save_note", "city": "Lima", "text": "sunny in Lima"}),
        ]
    );

    // Effects from the SDK's annotations; `calls_seen` has none.
    let derived = client.import(&Import::from_annotations()).await.unwrap();
    let effects: Vec<(String, EffectSet)> = derived
        .iter()
        .map(|tool| (tool.spec().name().to_owned(), tool.spec().effects()))
        .collect();
    assert_eq!(
        effects,
        [
            ("forecast".to_owned(), EffectSet::READ | EffectSet::NETWORK),
            ("save_note".to_owned(), EffectSet::READ | EffectSet::WRITE),
            ("calls_seen".to_owned(), EffectSet::ALL),
        ]
    );
    let refused = client
        .import(&Import::from_annotations().unannotated(Unannotated::Refuse))
        .await
        .unwrap_err();
    assert_eq!(
        refused,
        ImportError::Unannotated {
            name: "calls_seen".into()
        }
    );
    client.close().await;
}
