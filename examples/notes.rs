//! A notes service: the first hour with typed-tools.
//!
//! Four tools share one store (`Arc<Store>`, a `Mutex<Vec<Note>>` inside):
//! `list_notes` and `get_note(id: u32)` read it, `add_note` and
//! `delete_note` write it, `add_note` only adding (`destructive = false`),
//! which the MCP catalog tells apart from `delete_note`. The example prints
//! the catalogs a model is shown, reads a damaged OpenAI reply (single
//! quotes, a trailing comma, an id sent as text) and dispatches its calls
//! with recovery, then builds a typed plan (add a note, read it back by the
//! `u32` id the first call gave, an optional `tag` left out) and runs it,
//! and runs the same plan on a read-only view of the toolbox, which refuses
//! it before anything runs, with the effect-violation message. No network,
//! no API key.
//!
//! Run it with `cargo run --example notes`.

use std::sync::{Arc, Mutex};

use futures::executor::block_on;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use typed_tools::effect::EffectSet;
use typed_tools::plan::typed::{lit, TypedPlan};
use typed_tools::recover::Policy;
use typed_tools::{exec, field, on, tool, CallFormat, CatalogFormat, Toolbox};

/// A note.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
struct Note {
    /// Its id, given when it was added.
    id: u32,
    /// What it says.
    text: String,
    /// A label to group notes by, if any.
    tag: Option<String>,
}

/// Where the notes live. Every tool holds the same one.
#[derive(Default)]
struct Store {
    notes: Mutex<Vec<Note>>,
    next_id: Mutex<u32>,
}

/// List every note, oldest first.
#[tool(effects = Read, title = "List notes")]
fn list_notes(#[state] store: &Store) -> Vec<Note> {
    store
        .notes
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone()
}

/// Get one note by its id.
///
/// # Arguments
/// * `id` - The note's id, as `add_note` gave it.
#[tool(effects = Read, title = "Get a note")]
fn get_note(#[state] store: &Store, id: u32) -> Result<Note, String> {
    let notes = store.notes.lock().unwrap_or_else(|e| e.into_inner());
    notes
        .iter()
        .find(|note| note.id == id)
        .cloned()
        .ok_or_else(|| format!("there is no note {id}"))
}

/// Add a note; returns its id.
///
/// # Arguments
/// * `text` - What the note says.
/// * `tag` - A label to group notes by; none if absent.
#[tool(effects = Write, destructive = false, title = "Add a note")]
fn add_note(#[state] store: &Store, text: String, tag: Option<String>) -> Result<u32, String> {
    if text.trim().is_empty() {
        return Err("a note needs some text".into());
    }
    let mut next = store.next_id.lock().unwrap_or_else(|e| e.into_inner());
    *next += 1;
    let id = *next;
    let mut notes = store.notes.lock().unwrap_or_else(|e| e.into_inner());
    notes.push(Note { id, text, tag });
    Ok(id)
}

/// Delete a note by its id; says whether there was one.
///
/// # Arguments
/// * `id` - The note's id.
#[tool(effects = Write, title = "Delete a note")]
fn delete_note(#[state] store: &Store, id: u32) -> bool {
    let mut notes = store.notes.lock().unwrap_or_else(|e| e.into_inner());
    let before = notes.len();
    notes.retain(|note| note.id != id);
    notes.len() < before
}

/// What a model sent back: an OpenAI Chat Completions response whose tool
/// calls' arguments are damaged the way small models damage them.
const DAMAGED_REPLY: &str = r#"{
  "choices": [{
    "message": {
      "role": "assistant",
      "content": null,
      "tool_calls": [
        {"id": "call_1", "type": "function",
         "function": {"name": "add_note", "arguments": "{'text': 'call the plumber', 'tag': 'home',}"}},
        {"id": "call_2", "type": "function",
         "function": {"name": "get_note", "arguments": "{\"id\": \"1\"}"}}
      ]
    },
    "finish_reason": "tool_calls"
  }]
}"#;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // One store, four tools: `new` takes anything that becomes an
    // `Arc<Store>`, so clones of one `Arc` share it.
    let store = Arc::new(Store::default());
    let toolbox = Toolbox::builder()
        .tool(ListNotes::new(store.clone()))
        .tool(GetNote::new(store.clone()))
        .tool(AddNote::new(store.clone()))
        .tool(DeleteNote::new(store.clone()))
        // Malformed arguments are repaired and coerced towards the schema,
        // every change recorded for the model.
        .policy(Policy::recover())
        .build()?;

    println!("== What the model is shown (compact text)\n");
    println!("{}\n", toolbox.catalog(CatalogFormat::Text));
    println!("== The MCP annotations: an additive writer and a destructive one\n");
    let mcp = toolbox.catalog(CatalogFormat::Mcp).to_json();
    for entry in mcp["tools"].as_array().into_iter().flatten() {
        println!(
            "{:<12} {:<14} {}",
            entry["name"].as_str().unwrap_or(""),
            entry["title"].as_str().unwrap_or(""),
            entry["annotations"]
        );
    }

    println!("\n== A damaged OpenAI reply, read and dispatched\n");
    for call in toolbox.read_calls(CallFormat::OpenAiChat, DAMAGED_REPLY)? {
        println!("{}({})", call.name, call.arguments);
        match block_on(toolbox.call(&call.name, &call.arguments)) {
            Ok(output) => {
                println!("  -> {}", output.json());
                if let Some(note) = output.note_for_model() {
                    println!("  note for the model: {}", note.replace('\n', "\n    "));
                }
            }
            Err(error) => println!("  -> error for the model: {}", error.for_model()),
        }
    }

    println!("\n== A typed plan: add a note, then read it back by its id\n");
    // `add_note`'s output is the new note's `u32` id, which `get_note`
    // takes as it is; `tag` is optional, so it is left out.
    let plan = TypedPlan::new(on!(exec!(AddNote { text: lit("buy milk") }),
        Ok(id) => on!(exec!(GetNote { id: id }),
            Ok(note) => field!(note.text),
            Err(e) => field!(e.message),
        ),
        Err(e) => field!(e.message),
    ));
    println!("{}\n", plan.plan());
    let run = block_on(plan.run(&toolbox))?;
    println!("value: {}", run.outcome?);
    for call in &run.trace {
        println!("  called {} {}", call.tool(), call.args());
    }

    println!("\n== The same plan on a read-only view of the toolbox\n");
    let read_only = toolbox.restrict(EffectSet::READ);
    let before = store.notes.lock().unwrap_or_else(|e| e.into_inner()).len();
    match block_on(plan.run(&read_only)) {
        Ok(run) => println!("ran: {:?}", run.outcome),
        Err(refused) => println!("refused, nothing ran: {refused}"),
    }
    // And a direct call says the same.
    if let Err(error) = block_on(read_only.call("delete_note", r#"{"id": 1}"#)) {
        println!("a direct call:        {error}");
    }
    let after = store.notes.lock().unwrap_or_else(|e| e.into_inner()).len();
    assert_eq!(before, after, "the refused plan changed nothing");

    println!("\n== The notes now\n");
    for note in block_on(read_only.call("list_notes", "{}"))?
        .to_value()
        .as_array()
        .into_iter()
        .flatten()
    {
        println!("  {note}");
    }
    Ok(())
}
