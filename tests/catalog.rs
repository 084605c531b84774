//! Every catalog format checked against that format's own published rules,
//! written out here with their sources, not against our own output alone.
//!
//! Sources:
//! - [OPENAI-FN] OpenAI API reference, `FunctionDefinition` (Chat Completions
//!   `tools[].function`) and `FunctionTool` (Responses `tools[]`), as generated
//!   into openai-python `types/shared_params/function_definition.py` and
//!   `types/responses/function_tool_param.py`: name "must be a-z, A-Z, 0-9, or
//!   contain underscores and dashes, with a maximum length of 64"; Responses
//!   `strict`: "Default `true`".
//! - [OPENAI-SO] OpenAI guide "Structured Outputs", section "Supported
//!   schemas" (platform.openai.com/docs/guides/structured-outputs#supported-schemas):
//!   supported types string, number, boolean, integer, object, array, enum,
//!   anyOf; string `pattern` and `format` in {date-time, time, date, duration,
//!   email, hostname, ipv4, ipv6, uuid}; number `multipleOf`, `maximum`,
//!   `exclusiveMaximum`, `minimum`, `exclusiveMinimum`; array `minItems`,
//!   `maxItems`; "root objects must not be anyOf and must be an object"; "all
//!   fields must be required" (optional as a union with null);
//!   "additionalProperties: false must always be set in objects"; "up to 5000
//!   object properties total, with up to 10 levels of nesting"; "up to 1000 enum
//!   values"; not supported: allOf, not, dependentRequired, dependentSchemas,
//!   if, then, else; definitions and recursion supported.
//! - [OPENAI-REF] OpenAI's error for strict schemas, "$ref cannot have keywords
//!   {'description'}" (openai/openai-python#1637, pydantic/pydantic-ai#1488):
//!   a `$ref` stands alone.
//! - [ANTHROPIC] Anthropic Messages API reference, `tools[]`: `name` matches
//!   `^[a-zA-Z0-9_-]{1,64}$`, `input_schema` has `"type": "object"`, and the
//!   API answers "JSON schema is invalid. It must match JSON Schema draft
//!   2020-12" otherwise (anthropics/claude-code#7365).
//! - [MCP] Model Context Protocol, revision 2025-11-25: `schema/2025-11-25/schema.ts`
//!   (`ListToolsResult`, `Tool`, `ToolAnnotations`) and
//!   `docs/specification/2025-11-25/server/tools.mdx` ("Tool Names": 1 to 128
//!   characters of A-Z a-z 0-9 _ - .; `inputSchema` a JSON Schema object with
//!   `"type": "object"`, 2020-12 by default; `outputSchema` "restricted to
//!   `type: \"object\"` at the root"); annotation defaults readOnlyHint false,
//!   destructiveHint true, idempotentHint false, openWorldHint true.
//! - [GEMINI] Gemini API reference, `FunctionDeclaration` and `Schema` ("a
//!   select subset of an OpenAPI 3.0 schema object"; fields type, format,
//!   title, description, nullable, enum, maxItems, minItems, properties,
//!   required, minProperties, maxProperties, minLength, maxLength, pattern,
//!   example, anyOf, propertyOrdering, default, items, minimum, maximum; `enum`
//!   is `string[]`); formats for the Gemini Developer API: int32/int64,
//!   float/double, date-time/enum (Firebase AI `SchemaShared.format`); errors
//!   "Unknown name \"$ref\"/\"additionalProperties\"/\"$schema\"/\"const\"",
//!   "Proto field is not repeating" for a list in `type`, and "properties:
//!   should be non-empty for OBJECT type" (google-gemini issues quoted in
//!   router-for-me/CLIProxyAPI#97, zed-industries/zed#44875, agno-agi/agno#2112);
//!   function name: starts with a letter or `_`, then a-z A-Z 0-9 `_` `.` `-`,
//!   at most 64.

use serde_json::{json, Value};
use typed_tools::effect::{Effect, EffectSet};
use typed_tools::{catalog, tool, CatalogFormat, DynamicTool, ToolSpec, Toolbox};

mod provider_rules;
mod support;

use provider_rules::{
    anthropic_shape, assert_gemini, assert_openai_strict, fits, gemini_shape, keys, openai_shape,
};

use support::domain::{
    CountFolders, LookupAccount, ServerTime, ShipOrder, TagItems, UpdateAddress,
};

// ---------------------------------------------------------------- the tools

fn toolbox() -> Toolbox {
    Toolbox::builder()
        .tool(LookupAccount)
        .tool(UpdateAddress)
        .tool(ShipOrder)
        .tool(CountFolders)
        .tool(TagItems)
        .tool(ServerTime)
        .build()
        .expect("the tools build")
}

/// Every format whose catalog is JSON: all but the compact text.
fn json_formats() -> impl Iterator<Item = CatalogFormat> {
    CatalogFormat::ALL
        .into_iter()
        .filter(|format| *format != CatalogFormat::Text)
}

// ---------------------------------------------------------------- helpers

/// The entries of a JSON catalog: the array, or the array inside.
fn entries(format: CatalogFormat, catalog: &Value) -> Vec<Value> {
    let list = match format {
        CatalogFormat::Mcp => &catalog["tools"],
        CatalogFormat::Gemini => &catalog["functionDeclarations"],
        _ => catalog,
    };
    list.as_array().expect("a list of tools").clone()
}

/// The input schema inside one entry, if it has one.
fn input_schema(format: CatalogFormat, entry: &Value) -> Option<Value> {
    let schema = match format {
        CatalogFormat::OpenAiChat | CatalogFormat::OpenAiChatStrict => {
            entry["function"].get("parameters")
        }
        CatalogFormat::OpenAiResponses | CatalogFormat::OpenAiResponsesStrict => {
            entry.get("parameters")
        }
        CatalogFormat::Anthropic => entry.get("input_schema"),
        CatalogFormat::Mcp => entry.get("inputSchema"),
        CatalogFormat::Gemini => entry.get("parameters"),
        _ => None,
    };
    schema.cloned()
}

// ---------------------------------------------------------------- every format

/// Each input schema (and MCP output schema) is a valid JSON Schema under the
/// meta-schema it declares (2020-12 when it declares none): Anthropic refuses
/// any other, MCP defaults to 2020-12, OpenAI takes "a JSON Schema object".
#[test]
fn every_schema_is_valid_under_its_meta_schema() {
    let toolbox = toolbox();
    for format in json_formats() {
        let catalog = toolbox.catalog(format).to_json();
        for entry in entries(format, &catalog) {
            let mut schemas: Vec<Value> = input_schema(format, &entry).into_iter().collect();
            schemas.extend(entry.get("outputSchema").cloned());
            for schema in schemas {
                if let Err(error) = jsonschema::meta::validate(&schema) {
                    panic!("{format:?}: {error}\n{schema:#}");
                }
            }
        }
    }
}

/// Every tool, in toolbox order, in every JSON format; the `Text` lines too.
#[test]
fn every_format_lists_every_tool_in_order() {
    let toolbox = toolbox();
    let names: Vec<&str> = toolbox.names().collect();
    for format in json_formats() {
        let catalog = toolbox.catalog(format).to_json();
        let listed: Vec<String> = entries(format, &catalog)
            .iter()
            .map(|e| {
                let name = e.get("name").unwrap_or(&e["function"]["name"]);
                name.as_str().expect("a name").to_owned()
            })
            .collect();
        assert_eq!(listed, names, "{format:?}");
    }
    let text = toolbox.catalog(CatalogFormat::Text);
    let lines: Vec<&str> = text.as_text().expect("text").lines().collect();
    assert_eq!(lines.len(), names.len());
}

/// A catalog is computed once per toolbox and leaves the specs as they were.
#[test]
fn catalogs_are_cached_and_leave_specs_alone() {
    let toolbox = toolbox();
    let before: Vec<ToolSpec> = toolbox.specs().cloned().collect();
    for format in CatalogFormat::ALL {
        let first = toolbox.catalog(format);
        let again = toolbox.catalog(format);
        assert_eq!(first, again);
        assert_eq!(first.format(), format);
        let specs: Vec<&ToolSpec> = toolbox.specs().collect();
        assert_eq!(catalog::render(format, &specs), first, "{format:?}");
    }
    let after: Vec<ToolSpec> = toolbox.specs().cloned().collect();
    assert_eq!(before, after);
    assert_eq!(before[0], ToolSpec::of::<LookupAccount>());
}

/// A restricted view lists only the tools it allows, in every format.
#[test]
fn a_restricted_toolbox_lists_only_what_it_allows() {
    let readonly = toolbox().restrict(EffectSet::READ);
    let mcp = readonly.catalog(CatalogFormat::Mcp).to_json();
    let names: Vec<&str> = mcp["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, ["lookup_account", "count_folders"]);
    let text = readonly.catalog(CatalogFormat::Text).to_string();
    assert!(!text.contains("ship_order"));
}

// ---------------------------------------------------------------- OpenAI

#[test]
fn openai_entries_have_the_published_shape() {
    let toolbox = toolbox();
    for format in [
        CatalogFormat::OpenAiChat,
        CatalogFormat::OpenAiChatStrict,
        CatalogFormat::OpenAiResponses,
        CatalogFormat::OpenAiResponsesStrict,
    ] {
        let shape = openai_shape(format);
        for entry in entries(format, &toolbox.catalog(format).to_json()) {
            assert!(fits(&shape, &entry), "{format:?}: {entry:#}");
        }
    }
}

/// Plain OpenAI parameters are the tool's schema, `$schema` aside; the
/// Responses API gets `"strict": false` written out, since its default is true.
#[test]
fn openai_plain_parameters_are_the_schema() {
    let toolbox = toolbox();
    let chat = toolbox.catalog(CatalogFormat::OpenAiChat).to_json();
    let responses = toolbox.catalog(CatalogFormat::OpenAiResponses).to_json();
    for (i, spec) in toolbox.specs().enumerate() {
        let mut expected = spec.input_schema().clone();
        expected
            .as_object_mut()
            .expect("an object")
            .remove("$schema");
        assert_eq!(chat[i]["function"]["parameters"], expected);
        assert_eq!(chat[i]["function"].get("strict"), None);
        assert_eq!(responses[i]["parameters"], expected);
        assert_eq!(responses[i]["strict"], false);
    }
}

#[test]
fn openai_strict_follows_structured_outputs_rules() {
    let toolbox = toolbox();
    for format in [
        CatalogFormat::OpenAiChatStrict,
        CatalogFormat::OpenAiResponsesStrict,
    ] {
        let catalog = toolbox.catalog(format).to_json();
        for (entry, spec) in entries(format, &catalog).iter().zip(toolbox.specs()) {
            let strict = entry.get("strict").unwrap_or(&entry["function"]["strict"]);
            let parameters = input_schema(format, entry).expect("parameters");
            if spec.name() == "tag_items" {
                // A map cannot be strict: said so, and sent as it is.
                assert_eq!(strict, false, "{format:?}");
                let mut plain = spec.input_schema().clone();
                plain.as_object_mut().expect("an object").remove("$schema");
                assert_eq!(parameters, plain);
                continue;
            }
            assert_eq!(strict, true, "{format:?} {}", spec.name());
            assert_openai_strict(spec.name(), &parameters);
            // An `Option` parameter is required and nullable instead of absent.
            for name in spec.parameters() {
                let property = &parameters["properties"][name];
                if !spec.is_required(name) {
                    let mut root = parameters.clone();
                    root["properties"] = json!({ name: property });
                    root["required"] = json!([name]);
                    assert!(
                        fits(&root, &json!({ name: null })),
                        "{}.{name} takes null",
                        spec.name()
                    );
                }
            }
        }
    }
}

/// Past OpenAI's nesting limit, or with a keyword strict mode lacks, a tool is
/// sent as it is with `"strict": false` rather than rejected.
#[test]
fn openai_strict_falls_back_when_it_must() {
    let mut deep = json!({ "type": "string" });
    for _ in 0..11 {
        deep = json!({
            "type": "object",
            "properties": { "inner": deep },
            "required": ["inner"],
            "additionalProperties": false
        });
    }
    let cases = [
        ("too_deep", deep.clone()),
        (
            "negated",
            json!({ "type": "object", "properties": { "x": { "not": { "type": "string" } } } }),
        ),
        (
            "tuple",
            json!({ "type": "object", "properties": { "pair": { "type": "array", "prefixItems": [{ "type": "integer" }, { "type": "string" }] } } }),
        ),
        (
            "anything",
            json!({ "type": "object", "properties": { "x": true } }),
        ),
    ];
    for (name, schema) in cases {
        let tool = DynamicTool::new(name).input_schema(schema.clone());
        let entry = catalog::render_tool(CatalogFormat::OpenAiResponsesStrict, tool.spec());
        assert_eq!(entry["strict"], false, "{name}");
        assert_eq!(entry["parameters"], schema, "{name}");
    }
    // Ten levels are allowed.
    let ten = deep["properties"]["inner"].clone();
    let tool = DynamicTool::new("ten_deep").input_schema(ten);
    let entry = catalog::render_tool(CatalogFormat::OpenAiResponsesStrict, tool.spec());
    assert_eq!(entry["strict"], true);
    assert_openai_strict("ten_deep", &entry["parameters"]);
}

// ---------------------------------------------------------------- Anthropic

#[test]
fn anthropic_entries_follow_the_messages_api() {
    let shape = anthropic_shape();
    let toolbox = toolbox();
    let catalog = toolbox.catalog(CatalogFormat::Anthropic).to_json();
    for (entry, spec) in entries(CatalogFormat::Anthropic, &catalog)
        .iter()
        .zip(toolbox.specs())
    {
        assert!(fits(&shape, entry), "{entry:#}");
        assert_eq!(&entry["input_schema"], spec.input_schema());
        assert!(jsonschema::draft202012::meta::is_valid(
            &entry["input_schema"]
        ));
    }
}

// ---------------------------------------------------------------- MCP

/// [MCP] `Tool`, transcribed from `schema.ts` (2025-11-25) with the fields
/// this crate may write; no others.
fn mcp_tool_shape() -> Value {
    let object_schema = json!({
        "type": "object",
        "required": ["type"],
        "properties": {
            "$schema": { "type": "string" },
            "type": { "const": "object" },
            "properties": { "type": "object", "additionalProperties": { "type": "object" } },
            "required": { "type": "array", "items": { "type": "string" } }
        }
    });
    json!({
        "type": "object",
        "required": ["name", "inputSchema"],
        "additionalProperties": false,
        "properties": {
            "name": { "type": "string", "pattern": "^[A-Za-z0-9_.-]{1,128}$" },
            "title": { "type": "string" },
            "description": { "type": "string" },
            "inputSchema": object_schema,
            "outputSchema": object_schema,
            "annotations": {
                "type": "object",
                "additionalProperties": false,
                "properties": {
                    "title": { "type": "string" },
                    "readOnlyHint": { "type": "boolean" },
                    "destructiveHint": { "type": "boolean" },
                    "idempotentHint": { "type": "boolean" },
                    "openWorldHint": { "type": "boolean" }
                }
            }
        }
    })
}

#[test]
fn mcp_tools_list_follows_the_2025_11_25_schema() {
    let toolbox = toolbox();
    let catalog = toolbox.catalog(CatalogFormat::Mcp).to_json();
    assert_eq!(keys(&catalog), ["tools"]);
    let shape = mcp_tool_shape();
    for (entry, spec) in entries(CatalogFormat::Mcp, &catalog)
        .iter()
        .zip(toolbox.specs())
    {
        assert!(fits(&shape, entry), "{entry:#}");
        assert_eq!(&entry["inputSchema"], spec.input_schema());
        // An output schema exactly when the output is an object (a struct).
        let object_output = spec.output_schema()["type"] == "object";
        assert_eq!(
            entry.get("outputSchema").is_some(),
            object_output,
            "{}",
            spec.name()
        );
        if object_output {
            assert_eq!(&entry["outputSchema"], spec.output_schema());
        }
    }
}

/// The four hints, always written (MCP's defaults assume the worst), from the
/// effects: read-only = no Write, destructive = Write, idempotent = declared
/// or read-only, open world = Network.
#[test]
fn mcp_annotations_are_explicit_and_follow_the_effects() {
    let toolbox = toolbox();
    let catalog = toolbox.catalog(CatalogFormat::Mcp).to_json();
    let hints: Vec<(String, [bool; 4])> = entries(CatalogFormat::Mcp, &catalog)
        .iter()
        .map(|t| {
            let a = &t["annotations"];
            assert_eq!(keys(a).len(), 4, "{a}");
            let hint = |k: &str| a[k].as_bool().unwrap_or_else(|| panic!("{k} is a boolean"));
            (
                t["name"].as_str().unwrap_or("").to_owned(),
                [
                    hint("readOnlyHint"),
                    hint("destructiveHint"),
                    hint("idempotentHint"),
                    hint("openWorldHint"),
                ],
            )
        })
        .collect();
    let expected: Vec<(String, [bool; 4])> = [
        ("lookup_account", [true, false, true, false]),
        ("update_address", [false, true, true, false]),
        ("ship_order", [false, true, false, true]),
        ("count_folders", [true, false, true, false]),
        ("tag_items", [false, true, false, false]),
        ("server_time", [true, false, true, true]),
    ]
    .iter()
    .map(|(n, h)| (n.to_string(), *h))
    .collect();
    assert_eq!(hints, expected);
    // And the same rule for every effect set, idempotent or not.
    for bits in 0..8u8 {
        let effects: EffectSet = Effect::ALL
            .into_iter()
            .enumerate()
            .filter(|(i, _)| bits & (1 << i) != 0)
            .map(|(_, e)| e)
            .collect();
        for idempotent in [false, true] {
            let tool = DynamicTool::new("t")
                .effects(effects)
                .idempotent(idempotent);
            let a = catalog::render_tool(CatalogFormat::Mcp, tool.spec())["annotations"].clone();
            let writes = effects.contains(Effect::Write);
            assert_eq!(
                a,
                json!({
                    "readOnlyHint": !writes,
                    "destructiveHint": writes,
                    "idempotentHint": !writes || idempotent,
                    "openWorldHint": effects.contains(Effect::Network),
                }),
                "{effects} idempotent={idempotent}"
            );
        }
    }
}

/// The notes tools: an additive writer (`add_note`, `destructive = false`,
/// with a title), a destructive one (`delete_note`), a reader and a closed
/// network tool. MCP tells them apart; the other formats have no place for
/// the hints or the title and render the two writers alike.
mod notes {
    use typed_tools::tool;

    /// Add a note; returns its id.
    #[tool(effects = Write, destructive = false, title = "New note")]
    pub(crate) fn add_note(text: String) -> u32 {
        text.len() as u32
    }

    /// Delete a note by its id.
    #[tool(effects = Write)]
    pub(crate) fn delete_note(id: u32) -> bool {
        id > 0
    }

    /// Get one note by its id.
    #[tool(effects = Read, title = "Open note")]
    pub(crate) fn get_note(id: u32) -> String {
        id.to_string()
    }

    /// Sync the notes with the company's own server.
    #[tool(effects = [Write, Network], open_world = false, idempotent)]
    pub(crate) fn sync_notes() -> u32 {
        0
    }
}

#[test]
fn mcp_tells_an_additive_writer_from_a_destructive_one() {
    let toolbox = Toolbox::builder()
        .tool(notes::AddNote)
        .tool(notes::DeleteNote)
        .tool(notes::GetNote)
        .tool(notes::SyncNotes)
        .build()
        .unwrap();
    let catalog = toolbox.catalog(CatalogFormat::Mcp).to_json();
    let shape = mcp_tool_shape();
    let tools = entries(CatalogFormat::Mcp, &catalog);
    for entry in &tools {
        assert!(fits(&shape, entry), "{entry:#}");
    }
    assert_eq!(tools[0]["title"], "New note");
    assert_eq!(
        tools[0]["annotations"],
        json!({
            "readOnlyHint": false,
            "destructiveHint": false,
            "idempotentHint": false,
            "openWorldHint": false,
            "title": "New note",
        })
    );
    assert_eq!(tools[1].get("title"), None);
    assert_eq!(
        tools[1]["annotations"],
        json!({
            "readOnlyHint": false,
            "destructiveHint": true,
            "idempotentHint": false,
            "openWorldHint": false,
        })
    );
    assert_eq!(tools[2]["title"], "Open note");
    assert_eq!(tools[2]["annotations"]["destructiveHint"], false);
    assert_eq!(tools[2]["annotations"]["title"], "Open note");
    assert_eq!(
        tools[3]["annotations"],
        json!({
            "readOnlyHint": false,
            "destructiveHint": true,
            "idempotentHint": true,
            "openWorldHint": false,
        })
    );
    // Elsewhere the two writers differ only by name, description and schema.
    for format in json_formats().filter(|f| *f != CatalogFormat::Mcp) {
        let rendered = toolbox.catalog(format).to_json();
        let text = rendered.to_string();
        assert!(!text.contains("New note"), "{format:?}: {text}");
        assert!(!text.contains("destructive"), "{format:?}: {text}");
    }
}

/// A run-time tool takes the same annotations; what it leaves unset follows
/// its effects, whichever order the setters come in.
#[test]
fn dynamic_tools_take_the_annotations_too() {
    let additive = DynamicTool::new("append_log")
        .destructive(false)
        .effects(EffectSet::WRITE | EffectSet::NETWORK)
        .title("Append to the log")
        .open_world(false);
    let spec = additive.spec();
    assert_eq!(spec.title(), Some("Append to the log"));
    assert!(!spec.is_destructive());
    assert!(!spec.is_open_world());
    let entry = catalog::render_tool(CatalogFormat::Mcp, spec);
    assert_eq!(entry["title"], "Append to the log");
    assert_eq!(entry["annotations"]["destructiveHint"], false);
    assert_eq!(entry["annotations"]["openWorldHint"], false);

    let plain = DynamicTool::new("fetch").effects(EffectSet::NETWORK);
    assert!(plain.spec().is_open_world());
    assert!(!plain.spec().is_destructive());
    assert_eq!(plain.spec().title(), None);
    // `destructive(true)` on a reader changes nothing: it destroys nothing.
    let reader = DynamicTool::new("read")
        .effects(EffectSet::READ)
        .destructive(true);
    assert!(!reader.spec().is_destructive());
}

// ---------------------------------------------------------------- Gemini

#[test]
fn gemini_declarations_use_the_openapi_subset() {
    let shape = gemini_shape();
    let toolbox = toolbox();
    let catalog = toolbox.catalog(CatalogFormat::Gemini).to_json();
    assert_eq!(keys(&catalog), ["functionDeclarations"]);
    for (entry, spec) in entries(CatalogFormat::Gemini, &catalog)
        .iter()
        .zip(toolbox.specs())
    {
        assert!(fits(&shape, entry), "{entry:#}");
        match entry.get("parameters") {
            // "For function with no parameters, this can be left unset."
            None => assert_eq!(spec.parameters().count(), 0, "{}", spec.name()),
            Some(parameters) => {
                assert_gemini(spec.name(), parameters);
                let required: Vec<&str> =
                    spec.parameters().filter(|p| spec.is_required(p)).collect();
                assert_eq!(parameters["required"], json!(required), "{}", spec.name());
            }
        }
    }
}

/// `Option` fields are nullable, recursive types are cut with a note, and the
/// whole stays finite.
#[test]
fn gemini_inlines_definitions_and_cuts_recursion() {
    let entry = catalog::render_tool(CatalogFormat::Gemini, &ToolSpec::of::<CountFolders>());
    let root = &entry["parameters"]["properties"]["root"];
    assert_eq!(root["type"], "object");
    assert_eq!(root["description"], "A folder and its subfolders.");
    let link = &root["properties"]["link"];
    assert_eq!(link["nullable"], true);
    assert_eq!(
        link["description"],
        "The folder it links to, if it is a link."
    );
    // One level down the type is shown once more, then cut.
    let child = &root["properties"]["children"]["items"];
    assert_eq!(child["type"], "object");
    let cut = &child["properties"]["children"]["items"];
    assert_eq!(
        cut,
        &json!({ "description": "A folder and its subfolders. (Same shape as the enclosing `Folder`.)" })
    );
    let cut_link = &child["properties"]["link"];
    assert_eq!(
        cut_link,
        &json!({
            "description": "The folder it links to, if it is a link. (Same shape as the enclosing `Folder`.)",
            "nullable": true
        })
    );
    assert!(entry.to_string().len() < 5_000);
}

/// A `format` survives where its target lists it, and goes where it does not
/// (`uint8` is schemars', not OpenAI's or Gemini's).
#[test]
fn formats_each_target_knows_are_kept() {
    let schema = json!({
        "type": "object",
        "properties": {
            "when": { "type": "string", "format": "date-time" },
            "mail": { "type": "string", "format": "email" },
            "count": { "type": "integer", "format": "uint8", "minimum": 0, "maximum": 255 },
            "ratio": { "type": "number", "format": "double" }
        },
        "required": ["when", "mail", "count", "ratio"],
        "additionalProperties": false
    });
    let tool = DynamicTool::new("formats").input_schema(schema);
    let strict = catalog::render_tool(CatalogFormat::OpenAiResponsesStrict, tool.spec());
    let properties = &strict["parameters"]["properties"];
    assert_eq!(strict["strict"], true);
    assert_eq!(properties["when"]["format"], "date-time");
    assert_eq!(properties["mail"]["format"], "email");
    assert_eq!(
        properties["count"],
        json!({ "type": "integer", "minimum": 0, "maximum": 255 })
    );
    assert_eq!(properties["ratio"], json!({ "type": "number" }));
    let gemini = catalog::render_tool(CatalogFormat::Gemini, tool.spec());
    let properties = &gemini["parameters"]["properties"];
    assert_eq!(properties["when"]["format"], "date-time");
    assert_eq!(properties["mail"], json!({ "type": "string" }));
    assert_eq!(
        properties["count"],
        json!({ "type": "integer", "minimum": 0, "maximum": 255 })
    );
    assert_eq!(
        properties["ratio"],
        json!({ "type": "number", "format": "double" })
    );
}

// ---------------------------------------------------------------- odd schemas

/// Whatever the schema, rendering neither panics nor loops, and the Gemini
/// and strict forms keep their rules (strict by falling back).
#[test]
fn odd_schemas_render_in_every_format() {
    let recursive = json!({
        "type": "object",
        "properties": { "node": { "$ref": "#/$defs/Node", "description": "A node." } },
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {
                    "next": { "$ref": "#/$defs/Node", "description": "The next one." },
                    "other": { "$ref": "#/$defs/Other" }
                },
                "required": ["next"]
            },
            "Other": { "$ref": "#/$defs/Node", "title": "Alias" }
        }
    });
    let schemas = [
        json!(true),
        json!(false),
        json!({}),
        json!({ "type": "object" }),
        json!({ "type": "object", "properties": { "any": true, "none": false, "items": { "type": "array", "items": false } } }),
        json!({ "type": "object", "properties": { "lost": { "$ref": "#/$defs/Missing" }, "odd": { "$ref": 5 } } }),
        json!({ "type": "object", "properties": { "loop": { "$ref": "#/properties/loop" } } }),
        json!({ "type": "object", "properties": { "root": { "$ref": "#", "description": "The root again." } } }),
        json!({ "type": "object", "properties": { "both": { "allOf": [{ "type": "string" }, { "minLength": 2 }] } } }),
        json!({ "type": "object", "properties": { "n": { "type": ["integer", "string", "null"], "enum": [1, "a", null] } } }),
        recursive,
    ];
    // Which of them OpenAI's strict mode can take: an object whose every node
    // says what it is.
    let strict_ok = [
        false, false, false, false, false, false, false, true, true, true, true,
    ];
    for (i, schema) in schemas.iter().enumerate() {
        let tool = DynamicTool::new(format!("odd_{i}")).input_schema(schema.clone());
        for format in CatalogFormat::ALL {
            let rendered = catalog::render(format, &[tool.spec()]);
            assert_eq!(rendered.format(), format);
        }
        let gemini = catalog::render_tool(CatalogFormat::Gemini, tool.spec());
        if let Some(parameters) = gemini.get("parameters") {
            assert_gemini(&format!("odd_{i}"), parameters);
        }
        let strict = catalog::render_tool(CatalogFormat::OpenAiResponsesStrict, tool.spec());
        assert_eq!(strict["strict"], strict_ok[i], "odd_{i}: {strict}");
        if strict["strict"] == true {
            assert_openai_strict(&format!("odd_{i}"), &strict["parameters"]);
        }
    }
}

// ---------------------------------------------------------------- snapshots

/// `update_address` in every format, exactly, so that any change shows.
#[test]
fn snapshot_of_one_tool_in_every_format() {
    let spec = ToolSpec::of::<UpdateAddress>();
    let description = "Change the address of an account.\n\nCalling it twice with the same address changes nothing more.";
    let address = json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "street": { "type": "string", "description": "Street and number." },
            "city": { "type": "string", "description": "City." },
            "postcode": { "type": ["string", "null"], "description": "Postal code, when known." }
        },
        "required": ["street", "city"],
        "description": "A postal address."
    });
    let priority = json!({
        "type": "string",
        "enum": ["low", "normal", "high"],
        "description": "How urgent a change is."
    });
    let canonical = json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "account_id": { "type": "string", "description": "The account to change." },
            "address": { "$ref": "#/$defs/Address" },
            "priority": { "$ref": "#/$defs/Priority" },
            "note": { "type": ["string", "null"], "description": "Why, for the audit log." }
        },
        "required": ["account_id", "address", "priority"],
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$defs": { "Address": address, "Priority": priority }
    });
    assert_eq!(spec.input_schema(), &canonical);
    let mut plain = canonical.clone();
    plain.as_object_mut().expect("an object").remove("$schema");

    let mut strict_address = address.clone();
    strict_address["required"] = json!(["street", "city", "postcode"]);
    let strict = json!({
        "type": "object",
        "properties": {
            "account_id": { "type": "string", "description": "The account to change." },
            "address": { "$ref": "#/$defs/Address" },
            "priority": { "$ref": "#/$defs/Priority" },
            "note": { "type": ["string", "null"], "description": "Why, for the audit log." }
        },
        "required": ["account_id", "address", "priority", "note"],
        "additionalProperties": false,
        "$defs": { "Address": strict_address, "Priority": priority }
    });

    let render = |format| catalog::render_tool(format, &spec);
    assert_eq!(
        render(CatalogFormat::OpenAiChat),
        json!({ "type": "function", "function": {
            "name": "update_address", "description": description, "parameters": plain
        } })
    );
    assert_eq!(
        render(CatalogFormat::OpenAiChatStrict),
        json!({ "type": "function", "function": {
            "name": "update_address", "description": description, "parameters": strict, "strict": true
        } })
    );
    assert_eq!(
        render(CatalogFormat::OpenAiResponses),
        json!({ "type": "function", "name": "update_address", "description": description,
                "parameters": plain, "strict": false })
    );
    assert_eq!(
        render(CatalogFormat::OpenAiResponsesStrict),
        json!({ "type": "function", "name": "update_address", "description": description,
                "parameters": strict, "strict": true })
    );
    assert_eq!(
        render(CatalogFormat::Anthropic),
        json!({ "name": "update_address", "description": description, "input_schema": canonical })
    );
    assert_eq!(
        render(CatalogFormat::Mcp),
        json!({
            "name": "update_address",
            "description": description,
            "inputSchema": canonical,
            "annotations": {
                "readOnlyHint": false,
                "destructiveHint": true,
                "idempotentHint": true,
                "openWorldHint": false
            }
        })
    );
    assert_eq!(
        render(CatalogFormat::Gemini),
        json!({
            "name": "update_address",
            "description": description,
            "parameters": {
                "type": "object",
                "properties": {
                    "account_id": { "type": "string", "description": "The account to change." },
                    "address": {
                        "type": "object",
                        "properties": {
                            "street": { "type": "string", "description": "Street and number." },
                            "city": { "type": "string", "description": "City." },
                            "postcode": { "type": "string", "nullable": true, "description": "Postal code, when known." }
                        },
                        "propertyOrdering": ["street", "city", "postcode"],
                        "required": ["street", "city"],
                        "description": "A postal address."
                    },
                    "priority": {
                        "type": "string",
                        "enum": ["low", "normal", "high"],
                        "description": "How urgent a change is."
                    },
                    "note": { "type": "string", "nullable": true, "description": "Why, for the audit log." }
                },
                "propertyOrdering": ["account_id", "address", "priority", "note"],
                "required": ["account_id", "address", "priority"]
            }
        })
    );
    assert_eq!(
        render(CatalogFormat::Text),
        json!("tool update_address: {account_id: String, address: {street: String, city: String, postcode?: String}, priority: \"low\" | \"normal\" | \"high\", note?: String} -{Write}-> Bool  -- Change the address of an account.")
    );
}

/// Look up a customer account by its id; returns the
/// account with its email, or an error when there is
/// none.
///
/// Reads only: safe to call
/// as often as needed.
///
/// # Arguments
/// * `id` - The account id, like
///   `cust_123`.
#[tool(effects = Read)]
fn find_account(
    id: String,
    /// Only these fields,
    /// when given.
    fields: Option<Vec<String>>,
) -> String {
    let _ = fields;
    id
}

/// A doc comment wrapped over several lines, as rustfmt and editors wrap
/// them, is read as rustdoc renders it: each paragraph one line of text, in
/// every format; the compact catalog shows the first paragraph whole.
#[test]
fn a_wrapped_doc_comment_reads_as_rustdoc_renders_it_in_every_format() {
    let toolbox = Toolbox::builder().tool(FindAccount).build().unwrap();
    let description = "Look up a customer account by its id; returns the account with its email, \
                       or an error when there is none.\n\nReads only: safe to call as often as needed.";
    for format in json_formats() {
        let catalog = toolbox.catalog(format).to_json();
        let entry = &entries(format, &catalog)[0];
        let written = match format {
            CatalogFormat::OpenAiChat | CatalogFormat::OpenAiChatStrict => {
                &entry["function"]["description"]
            }
            _ => &entry["description"],
        };
        assert_eq!(written, description, "{format:?}");
        let schema = input_schema(format, entry).expect("an input schema");
        let properties = &schema["properties"];
        assert_eq!(
            properties["id"]["description"], "The account id, like `cust_123`.",
            "{format:?}"
        );
        assert_eq!(
            properties["fields"]["description"], "Only these fields, when given.",
            "{format:?}"
        );
    }
    assert_eq!(
        toolbox.catalog(CatalogFormat::Text).to_string(),
        "tool find_account: {id: String, fields?: [String]} -{Read}-> String  \
         -- Look up a customer account by its id; returns the account with its email, \
         or an error when there is none."
    );
}

/// The text catalog, whole: one line a tool, in toolbox order.
#[test]
fn snapshot_of_the_text_catalog() {
    let text = toolbox().catalog(CatalogFormat::Text).to_string();
    let expected = [
        "tool lookup_account: {id: String, fields?: [String]} -{Read}-> {id: String, email: String, address: {street: String, city: String, postcode: String?}?}  -- Look up a customer account by its id.",
        "tool update_address: {account_id: String, address: {street: String, city: String, postcode?: String}, priority: \"low\" | \"normal\" | \"high\", note?: String} -{Write}-> Bool  -- Change the address of an account.",
        "tool ship_order: {order_id: Int, delivery: \"pickup\" | {courier: {address: {street: String, city: String, postcode?: String}, express: Bool}} | {locker: String}, payment: {method: \"card\", last4: String} | {method: \"invoice\", days: Int}, gift?: Bool} -{Write, Network}-> String  -- Ship an order to the customer.",
        // A recursive type is written once, then named where it recurs.
        "tool count_folders: {root: {name: String, children: [Folder], link?: Folder}, max_depth?: Int} -{}-> Int  -- Count the folders in a tree.",
        "tool tag_items: {tags: Map[String, String]} -{Write}-> Unit  -- Tag items with free-form labels.",
        "tool server_time: {} -{Read, Network}-> String  -- The time on the server.",
    ]
    .join("\n");
    assert_eq!(text, expected);
}
