//! Dispatching a model's calls: what a user checks before trusting the toolbox
//! with a model's output.

#[path = "support/yield_now.rs"]
mod yield_now;
use yield_now::YieldNow;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use futures::executor::block_on;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use typed_tools::effect::{EffectSet, Read};
use typed_tools::schema::Problem;
use typed_tools::{tool, BuildProblem, DynamicTool, NextStep, Tool, ToolError, Toolbox};

/// An account in the in-memory store.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
struct Account {
    id: String,
    email: String,
    last_charge_cents: i64,
}

/// The shared state of the account tools.
#[derive(Default)]
struct Store {
    accounts: Mutex<Vec<Account>>,
    refunds: Mutex<Vec<(String, i64)>>,
    calls: AtomicUsize,
}

impl Store {
    fn with_account() -> Arc<Store> {
        let store = Store::default();
        store.accounts.lock().unwrap().push(Account {
            id: "cust_1".into(),
            email: "ada@example.com".into(),
            last_charge_cents: 1250,
        });
        Arc::new(store)
    }
}

/// Look up a customer account by its id.
///
/// # Arguments
/// * `id` - The account id, like `cust_1`.
#[tool(effects = Read)]
async fn lookup_account(#[state] store: &Store, id: String) -> Result<Account, String> {
    store.calls.fetch_add(1, Ordering::SeqCst);
    let accounts = store.accounts.lock().unwrap();
    accounts
        .iter()
        .find(|a| a.id == id)
        .cloned()
        .ok_or_else(|| format!("no account with id {id}"))
}

/// Refund an amount to an account.
#[tool(effects = Write)]
fn issue_refund(#[state] store: &Store, account_id: String, amount: i64) -> Result<String, String> {
    store.calls.fetch_add(1, Ordering::SeqCst);
    if amount <= 0 {
        return Err(format!("amount must be positive, got {amount}"));
    }
    store.refunds.lock().unwrap().push((account_id, amount));
    Ok(format!("tx_{}", store.refunds.lock().unwrap().len()))
}

/// How to send a message.
#[derive(Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(rename_all = "snake_case")]
enum Channel {
    /// By email.
    Email,
    /// By text message.
    Sms,
}

/// One line of an order.
#[derive(Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
struct Line {
    /// Stock keeping unit.
    sku: String,
    /// How many; at least one.
    quantity: u32,
}

/// Place an order.
#[tool(effects = [Write, Network])]
fn place_order(
    customer: String,
    lines: Vec<Line>,
    channel: Channel,
    note: Option<String>,
) -> usize {
    let _ = (customer, channel, note);
    lines.iter().map(|l| l.quantity as usize).sum()
}

/// Always panics.
#[tool(effects = Pure)]
fn explode() -> u8 {
    panic!("the tool blew up")
}

/// Add two numbers.
#[tool(effects = Pure)]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn toolbox(store: &Arc<Store>) -> Toolbox {
    Toolbox::builder()
        .tool(LookupAccount::new(store.clone()))
        .tool(IssueRefund::new(store.clone()))
        .tool(PlaceOrder)
        .tool(Explode)
        .tool(Add)
        .build()
        .expect("valid toolbox")
}

#[test]
fn the_fn_is_still_an_ordinary_fn() {
    let store = Store::with_account();
    assert_eq!(issue_refund(&store, "cust_1".into(), 5), Ok("tx_1".into()));
    assert_eq!(block_on(add(2, 3)), 5);
    assert_eq!(LookupAccount::NAME, "lookup_account");
}

#[test]
fn sync_async_stateful_and_stateless_tools_run() {
    let store = Store::with_account();
    let tools = toolbox(&store);
    block_on(async {
        let account = tools
            .call("lookup_account", r#"{"id": "cust_1"}"#)
            .await
            .unwrap();
        assert_eq!(account.to_value()["email"], "ada@example.com");
        let tx = tools
            .call(
                "issue_refund",
                r#"{"account_id": "cust_1", "amount": 1250}"#,
            )
            .await
            .unwrap();
        assert_eq!(tx.json(), r#""tx_1""#);
        assert_eq!(
            *store.refunds.lock().unwrap(),
            [("cust_1".to_owned(), 1250)]
        );
        let order = json!({
            "customer": "cust_1",
            "lines": [{"sku": "A", "quantity": 2}, {"sku": "B", "quantity": 3}],
            "channel": "sms"
        });
        assert_eq!(
            tools
                .call_value("place_order", &order)
                .await
                .unwrap()
                .json(),
            "5"
        );
        assert_eq!(
            tools
                .call("add", r#"{"a": -2, "b": 3}"#)
                .await
                .unwrap()
                .json(),
            "1"
        );
    });
}

#[test]
fn unknown_tool_names_the_nearest_and_the_available() {
    let store = Store::with_account();
    let tools = toolbox(&store);
    let error = block_on(tools.call("lookupAccount", r#"{"id": "cust_1"}"#)).unwrap_err();
    let ToolError::UnknownTool {
        name,
        suggestions,
        available,
    } = &error
    else {
        panic!("{error:?}")
    };
    assert_eq!(name, "lookupAccount");
    assert_eq!(suggestions, &["lookup_account"]);
    assert_eq!(available.len(), 5);
    assert_eq!(error.next_step(), NextStep::FixCall);
    // The model is told the nearest name, not the whole list.
    assert_eq!(
        error.for_model(),
        "There is no tool named `lookupAccount`. Did you mean `lookup_account`?"
    );
    // With no name near, the tools it may call.
    let error = block_on(tools.call("weather", "{}")).unwrap_err();
    assert!(
        error.for_model().starts_with(
            "There is no tool named `weather`. Available tools: `lookup_account`, `issue_refund`"
        ),
        "{}",
        error.for_model()
    );
    assert_eq!(store.calls.load(Ordering::SeqCst), 0, "nothing ran");
}

#[test]
fn invalid_json_says_where_and_what_to_send() {
    let store = Store::with_account();
    let tools = toolbox(&store);
    for bad in [
        r#"{"account_id": "cust_1", "amount": 5,"#,
        "",
        "```json\n{}\n```",
        "{'a': 1}",
    ] {
        let error = block_on(tools.call("issue_refund", bad)).unwrap_err();
        let ToolError::InvalidArgs {
            message, expected, ..
        } = &error
        else {
            panic!("{bad}: {error:?}")
        };
        assert!(
            message.contains("line 1") || message.contains("line 2"),
            "{message}"
        );
        assert_eq!(expected, "{account_id: String, amount: Int}");
        assert_eq!(error.next_step(), NextStep::FixCall);
        assert!(error
            .for_model()
            .contains("Send a JSON object of type {account_id: String, amount: Int}"));
    }
    assert_eq!(store.calls.load(Ordering::SeqCst), 0);
    assert!(store.refunds.lock().unwrap().is_empty());
}

#[test]
fn wrong_shapes_name_every_problem_with_its_path() {
    let store = Store::with_account();
    let tools = toolbox(&store);
    let args = json!({
        "customer": 42,
        "lines": [{"sku": "A", "quantity": 1}, {"sku": "B", "quantity": "two"}],
        "channel": "pigeon",
        "gift": true
    });
    let error = block_on(tools.call_value("place_order", &args)).unwrap_err();
    let ToolError::Deserialization { problems, .. } = &error else {
        panic!("{error:?}")
    };
    let text: Vec<String> = problems.iter().map(ToString::to_string).collect();
    assert_eq!(
        text,
        [
            "$.customer: expected String, found integer 42",
            "$.lines[1].quantity: expected Int, found string \"two\"",
            "$.channel: expected \"email\" | \"sms\", found string \"pigeon\"",
            "$.gift: unknown field; expected one of: `customer`, `lines`, `channel`, `note`",
        ]
    );
    assert!(error.for_model().contains(
        "Send the call again with arguments of type {customer: String, lines: [{sku: String, quantity: Int}], channel: \"email\" | \"sms\", note?: String}"
    ));
}

#[test]
fn missing_fields_are_all_named() {
    let store = Store::with_account();
    let tools = toolbox(&store);
    let error = block_on(tools.call("issue_refund", "{}")).unwrap_err();
    let ToolError::Deserialization { problems, .. } = &error else {
        panic!("{error:?}")
    };
    assert_eq!(problems.len(), 2);
    assert!(problems
        .iter()
        .all(|p| matches!(p, Problem::Missing { .. })));
    assert_eq!(problems[0].path().to_string(), "$.account_id");
    assert_eq!(problems[1].path().to_string(), "$.amount");
    // Not an object at all.
    let error = block_on(tools.call("issue_refund", "[1, 2]")).unwrap_err();
    assert!(
        error.to_string().contains("found an array of 2 element(s)"),
        "{error}"
    );
    // Positional arguments that would fit the fields in order: the schema says
    // object, so the dispatcher refuses them too (serde alone would take them).
    let error = block_on(tools.call("issue_refund", r#" ["cust_1", 5]"#)).unwrap_err();
    let ToolError::Deserialization { problems, .. } = &error else {
        panic!("{error:?}")
    };
    assert_eq!(
        problems[0].to_string(),
        "$: expected {account_id: String, amount: Int}, found an array of 2 element(s)"
    );
    assert_eq!(store.calls.load(Ordering::SeqCst), 0);
    // An object after JSON's whitespace is an object like any other.
    let output = block_on(tools.call(
        "issue_refund",
        "\r\n\t {\"account_id\": \"cust_1\", \"amount\": 5}",
    ));
    assert!(output.is_ok(), "{output:?}");
    assert_eq!(store.calls.load(Ordering::SeqCst), 1);
}

#[test]
fn optional_parameters_may_be_absent_or_null() {
    let store = Store::with_account();
    let tools = toolbox(&store);
    let base = json!({"customer": "c", "lines": [], "channel": "email"});
    assert!(block_on(tools.call_value("place_order", &base)).is_ok());
    let mut with_null = base.clone();
    with_null["note"] = Value::Null;
    assert!(block_on(tools.call_value("place_order", &with_null)).is_ok());
}

#[test]
fn tool_errors_and_panics_are_execution_errors_and_the_toolbox_lives_on() {
    let store = Store::with_account();
    let tools = toolbox(&store);
    let error = block_on(tools.call("lookup_account", r#"{"id": "nobody"}"#)).unwrap_err();
    assert_eq!(
        error,
        ToolError::Execution {
            tool: "lookup_account".into(),
            message: "no account with id nobody".into(),
            panicked: false
        }
    );
    assert_eq!(error.next_step(), NextStep::Adapt);
    assert!(error.for_model().contains("do not resend it unchanged"));

    let error = block_on(tools.call("explode", "{}")).unwrap_err();
    assert!(
        matches!(&error, ToolError::Execution { panicked: true, message, .. } if message == "the tool blew up")
    );

    // The toolbox and its state are intact after both.
    assert_eq!(
        block_on(tools.call("add", r#"{"a": 1, "b": 1}"#))
            .unwrap()
            .json(),
        "2"
    );
    assert!(block_on(tools.call("lookup_account", r#"{"id": "cust_1"}"#)).is_ok());
}

#[test]
fn restrict_gives_least_privilege_and_never_runs_denied_tools() {
    let store = Store::with_account();
    let tools = toolbox(&store);
    let read_only = tools.restrict(EffectSet::READ);
    assert_eq!(
        read_only.names().collect::<Vec<_>>(),
        ["lookup_account", "explode", "add"]
    );
    let error =
        block_on(read_only.call("issue_refund", r#"{"account_id": "cust_1", "amount": 1}"#))
            .unwrap_err();
    assert_eq!(
        error,
        ToolError::EffectDenied {
            tool: "issue_refund".into(),
            effects: EffectSet::WRITE,
            allowed: EffectSet::READ
        }
    );
    assert_eq!(error.next_step(), NextStep::Adapt);
    assert!(store.refunds.lock().unwrap().is_empty());
    // Restricting twice only narrows.
    let none = read_only.restrict(EffectSet::ALL);
    assert_eq!(none.allowed(), EffectSet::READ);
    // The unknown-tool list of a restricted view names only what it allows.
    let ToolError::UnknownTool { available, .. } =
        block_on(read_only.call("nope", "{}")).unwrap_err()
    else {
        panic!()
    };
    assert_eq!(available, ["lookup_account", "explode", "add"]);
}

#[test]
fn a_typed_read_only_toolbox_takes_read_and_pure_tools() {
    let store = Store::with_account();
    let tools = Toolbox::allowing::<Read>()
        .tool(LookupAccount::new(store))
        .tool(Add)
        .build()
        .unwrap();
    assert_eq!(tools.allowed(), EffectSet::READ);
    assert_eq!(tools.names().count(), 2);
}

#[test]
fn duplicate_and_invalid_names_are_build_errors_all_reported() {
    /// Add, under another name that is not valid everywhere.
    #[tool(effects = Pure, name = "add")]
    fn add_again(a: i64) -> i64 {
        a
    }
    let odd = DynamicTool::new("has space").description("Odd.");
    let writer = DynamicTool::new("writer").effects(EffectSet::WRITE);
    let not_object = DynamicTool::new("scalar").input_schema(json!({"type": "string"}));
    let error = Toolbox::allowing::<Read>()
        .tool(Add)
        .tool(AddAgain)
        .dynamic(odd)
        .dynamic(writer)
        .dynamic(not_object)
        .build()
        .unwrap_err();
    assert!(
        matches!(error.problems()[0], BuildProblem::DuplicateName { ref name } if name == "add")
    );
    assert!(
        matches!(error.problems()[1], BuildProblem::InvalidName { ref name, .. } if name == "has space")
    );
    assert!(
        matches!(error.problems()[2], BuildProblem::EffectNotAllowed { ref name, .. } if name == "writer")
    );
    assert!(
        matches!(error.problems()[3], BuildProblem::InputNotObject { ref name } if name == "scalar")
    );
    assert_eq!(error.problems().len(), 4);
    assert!(error
        .to_string()
        .contains("effect violation: allowed {Read} but got {Write} (tool `writer`)"));
}

#[test]
fn dynamic_tools_share_the_gate_the_checks_and_the_errors() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let search = DynamicTool::new("search_docs")
        .description("Search the documentation.")
        .input_schema(json!({
            "type": "object",
            "properties": {
                "query": {"type": "string"},
                "limit": {"type": "integer", "minimum": 1, "maximum": 50}
            },
            "required": ["query"],
            "additionalProperties": false
        }))
        .effects(EffectSet::READ | EffectSet::NETWORK)
        .handler(move |args: Value| {
            let log = log.clone();
            async move {
                log.lock().unwrap().push(args.clone());
                match args["query"].as_str() {
                    Some("") => Err("the query is empty".to_owned()),
                    Some(q) => Ok(json!([format!("result for {q}")])),
                    None => unreachable!("checked against the schema"),
                }
            }
        });
    let tools = Toolbox::builder().dynamic(search).build().unwrap();
    block_on(async {
        let ok = tools
            .call("search_docs", r#"{"query": "effects", "limit": 5}"#)
            .await
            .unwrap();
        assert_eq!(ok.to_value(), json!(["result for effects"]));

        let error = tools
            .call("search_docs", r#"{"limit": 500, "extra": 1}"#)
            .await
            .unwrap_err();
        let ToolError::Deserialization {
            problems, expected, ..
        } = &error
        else {
            panic!("{error:?}")
        };
        let text: Vec<String> = problems.iter().map(ToString::to_string).collect();
        assert_eq!(
            text,
            [
                "$.limit: expected Int >= 1 and <= 50, found integer 500",
                "$.extra: unknown field; expected one of: `query`, `limit`",
                "$.query: missing required field of type String",
            ]
        );
        assert_eq!(expected, "{query: String, limit?: Int}");

        let error = tools
            .call("search_docs", r#"{"query": ""}"#)
            .await
            .unwrap_err();
        assert_eq!(error.next_step(), NextStep::Adapt);

        let denied = tools
            .restrict(EffectSet::READ)
            .call("search_docs", r#"{"query": "x"}"#)
            .await;
        assert!(matches!(denied, Err(ToolError::EffectDenied { .. })));
    });
    // The handler saw only the two calls that passed the gate and the schema.
    assert_eq!(seen.lock().unwrap().len(), 2);
}

/// Tag a document; `fields` is free-form.
#[tool(effects = Write)]
fn tag(
    #[state] ran: &AtomicUsize,
    tags: std::collections::HashMap<String, u32>,
    fields: Option<Value>,
) -> usize {
    ran.fetch_add(1, Ordering::SeqCst);
    tags.len() + usize::from(fields.is_some())
}

/// The one problem of a call refused for a key given twice: its path.
fn duplicate(error: &ToolError) -> String {
    match error {
        ToolError::Deserialization {
            problems, message, ..
        } if problems.len() == 1 && message.is_none() => match &problems[0] {
            Problem::Duplicate { path } => path.to_string(),
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    }
}

/// One rule on every path, in debug builds (a generic reader) and release
/// builds (serde's derive) alike: an object that gives a key twice is
/// refused, with the key's path, and nothing runs.
#[test]
fn a_key_given_twice_is_refused_with_its_path_on_every_path() {
    let store = Store::with_account();
    let ran = Arc::new(AtomicUsize::new(0));
    let tools = Toolbox::builder()
        .tool(LookupAccount::new(store.clone()))
        .tool(PlaceOrder)
        .tool(Tag::new(ran.clone()))
        .dynamic(
            DynamicTool::new("search_docs")
                .input_schema(json!({
                    "type": "object",
                    "properties": {"query": {"type": "string"}, "filters": {"type": "object"}},
                    "required": ["query"]
                }))
                .effects(EffectSet::READ)
                .handler(|_| async { Ok(json!([])) }),
        )
        .build()
        .unwrap();
    block_on(async {
        let refused = |name: &'static str, args: &'static str| {
            let tools = &tools;
            async move { tools.call(name, args).await.unwrap_err() }
        };
        // A parameter, a struct's field, a map's key, a key in free-form
        // JSON, a run-time tool's argument.
        for (name, args, path) in [
            (
                "lookup_account",
                r#"{"id": "cust_1", "id": "cust_2"}"#,
                "$.id",
            ),
            (
                "place_order",
                r#"{"customer": "c", "channel": "email", "lines": [{"sku": "a", "quantity": 1, "sku": "b"}]}"#,
                "$.lines[0].sku",
            ),
            ("tag", r#"{"tags": {"red": 1, "red": 2}}"#, "$.tags.red"),
            (
                "tag",
                r#"{"tags": {}, "fields": {"a": [{"k": 1, "k": 2}]}}"#,
                "$.fields.a[0].k",
            ),
            (
                "search_docs",
                r#"{"query": "q", "filters": {"x": 1, "x": 2}}"#,
                "$.filters.x",
            ),
        ] {
            let error = refused(name, args).await;
            assert_eq!(duplicate(&error), path, "{name} {args}");
            assert_eq!(error.next_step(), NextStep::FixCall);
        }
        let error = refused("lookup_account", r#"{"id": "cust_1", "id": "cust_2"}"#).await;
        assert_eq!(
            error.for_model(),
            "Invalid arguments for `lookup_account`:\n\
             - $.id: the key is given twice; give each key once\n\
             Send the call again with arguments of type {id: String}."
        );
        assert_eq!(store.calls.load(Ordering::SeqCst), 0);
        assert_eq!(ran.load(Ordering::SeqCst), 0);
        // Each key once: the map tool runs.
        tools
            .call("tag", r#"{"tags": {"red": 1, "blue": 2}}"#)
            .await
            .unwrap();
        assert_eq!(ran.load(Ordering::SeqCst), 1);
    });
    // Recovery does not pick one of the two: repair keeps both (it never
    // drops a value), coercion does not read them, and the call is refused.
    let policy = typed_tools::recover::Policy::recover();
    let recovering = Toolbox::builder()
        .tool(LookupAccount::new(store.clone()))
        .policy(policy.clone())
        .build()
        .unwrap();
    let error =
        block_on(recovering.call("lookup_account", r#"{"id": "cust_1", "id": 2}"#)).unwrap_err();
    assert_eq!(duplicate(&error), "$.id");
    let escalating = Toolbox::builder()
        .tool(LookupAccount::new(store.clone()))
        .policy(policy.escalate(typed_tools::Severity::Medium))
        .build()
        .unwrap();
    let error = block_on(escalating.call("lookup_account", r#"{'id': 'cust_1', 'id': 'cust_2'}"#))
        .unwrap_err();
    let ToolError::Escalation(escalation) = &error else {
        panic!("{error:?}")
    };
    assert!(
        escalation.reason.contains("$.id: the key is given twice"),
        "{escalation:?}"
    );
    assert_eq!(store.calls.load(Ordering::SeqCst), 0);
}

#[test]
fn no_input_panics_the_dispatcher() {
    let store = Store::with_account();
    let tools = toolbox(&store);
    let deep = "[".repeat(10_000);
    let inputs = [
        "",
        "null",
        "0",
        "\"x\"",
        "{",
        "}",
        "{\"a\":",
        "\u{0}",
        "{\"a\": 1e999}",
        &deep,
        "{\"customer\": \"\u{1F600}\", \"lines\": [null], \"channel\": {}}",
    ];
    for name in [
        "lookup_account",
        "issue_refund",
        "place_order",
        "add",
        "nope",
        "",
    ] {
        for input in inputs {
            let result = block_on(tools.call(name, input));
            assert!(result.is_err(), "{name} {input:?}");
        }
    }
    assert!(store.refunds.lock().unwrap().is_empty());
}

/// Wait, then count a visit.
#[tool(effects = Write)]
async fn slow_visit(#[state] visits: &AtomicUsize, fail: bool) -> Result<usize, String> {
    YieldNow::once().await;
    if fail {
        panic!("failed after waiting");
    }
    Ok(visits.fetch_add(1, Ordering::SeqCst) + 1)
}

#[test]
fn async_tools_that_wait_are_polled_to_completion_and_their_panics_caught() {
    let visits = Arc::new(AtomicUsize::new(0));
    let tools = Toolbox::builder()
        .tool(SlowVisit::new(visits.clone()))
        .build()
        .unwrap();
    let mut call = tools.call("slow_visit", r#"{"fail": false}"#);
    // The first poll meets the tool's await point.
    assert!(block_on(async { futures::poll!(&mut call) }).is_pending());
    assert_eq!(block_on(call).unwrap().json(), "1");
    let error = block_on(tools.call("slow_visit", r#"{"fail": true}"#)).unwrap_err();
    assert!(
        matches!(&error, ToolError::Execution { panicked: true, message, .. } if message == "failed after waiting")
    );
    assert_eq!(visits.load(Ordering::SeqCst), 1);
}

#[test]
fn a_call_that_is_never_awaited_runs_nothing() {
    let visits = Arc::new(AtomicUsize::new(0));
    let tools = Toolbox::builder()
        .tool(SlowVisit::new(visits.clone()))
        .build()
        .unwrap();
    let call = tools.call("slow_visit", r#"{"fail": false}"#);
    drop(call);
    assert_eq!(visits.load(Ordering::SeqCst), 0);
}

#[test]
fn large_toolboxes_find_tools_by_name_too() {
    let tools = (0..40)
        .fold(Toolbox::builder(), |builder, i| {
            builder.dynamic(
                DynamicTool::new(format!("tool_{i}")).handler(move |_| async move { Ok(json!(i)) }),
            )
        })
        .build()
        .unwrap();
    for i in [0, 7, 8, 39] {
        let output = block_on(tools.call(&format!("tool_{i}"), "{}")).unwrap();
        assert_eq!(output.to_value(), json!(i));
    }
    let error = block_on(tools.call("tool_40", "{}")).unwrap_err();
    assert!(
        matches!(error, ToolError::UnknownTool { ref suggestions, .. } if suggestions.contains(&"tool_4".to_owned()))
    );
}

#[test]
fn hostile_sizes_give_short_errors() {
    let store = Store::with_account();
    let tools = toolbox(&store);
    // 40,000 wrong lines (880 KB): the message lists twenty and counts the rest.
    let lines: Vec<Value> = (0..40_000)
        .map(|_| json!({"sku": 1, "quantity": 1}))
        .collect();
    let args = json!({"customer": "c", "lines": lines, "channel": "sms"});
    let error = block_on(tools.call_value("place_order", &args)).unwrap_err();
    let message = error.for_model();
    assert!(message.len() < 4_000, "{} bytes", message.len());
    assert!(message.contains(" more like these"), "{message}");
    // 100,000 (2.2 MB): past the toolbox's 1 MiB, refused unread.
    let lines: Vec<Value> = (0..100_000)
        .map(|_| json!({"sku": 1, "quantity": 1}))
        .collect();
    let args = json!({"customer": "c", "lines": lines, "channel": "sms"});
    let error = block_on(tools.call_value("place_order", &args)).unwrap_err();
    assert!(
        matches!(error, ToolError::ArgsTooLarge { max: 1_048_576, .. }),
        "{error}"
    );
    assert!(error.for_model().len() < 200, "{}", error.for_model());
    // A 200 KB tool name is neither searched for near names nor echoed whole.
    let name = "x".repeat(200_000);
    let ToolError::UnknownTool {
        name: echoed,
        suggestions,
        ..
    } = block_on(tools.call(&name, "{}")).unwrap_err()
    else {
        panic!()
    };
    assert!(suggestions.is_empty());
    assert!(echoed.len() < 200, "{}", echoed.len());
}

#[test]
fn run_time_tools_check_deep_values_too() {
    // A list of lists of integers; a leaf 40 levels down is an object.
    let writes = Arc::new(AtomicUsize::new(0));
    let seen = writes.clone();
    let tool = DynamicTool::new("store_tree")
        .input_schema(json!({
            "type": "object",
            "properties": { "tree": { "$ref": "#/$defs/Tree" } },
            "required": ["tree"],
            "$defs": { "Tree": { "anyOf": [ { "type": "integer" }, { "type": "array", "items": { "$ref": "#/$defs/Tree" } } ] } }
        }))
        .effects(EffectSet::WRITE)
        .handler(move |_| {
            seen.fetch_add(1, Ordering::SeqCst);
            async { Ok(Value::Null) }
        });
    let tools = Toolbox::builder().dynamic(tool).build().unwrap();
    let mut tree = json!({"evil": true});
    for _ in 0..40 {
        tree = json!([1, tree]);
    }
    let error = block_on(tools.call_value("store_tree", &json!({"tree": tree}))).unwrap_err();
    assert!(
        matches!(error, ToolError::Deserialization { .. }),
        "{error:?}"
    );
    assert_eq!(writes.load(Ordering::SeqCst), 0, "the handler never saw it");
}

#[test]
fn call_is_send_and_unpin() {
    fn assert_send_unpin<T: Send + Unpin>(_: &T) {}
    let store = Store::with_account();
    let tools = toolbox(&store);
    let call = tools.call("add", r#"{"a": 1, "b": 2}"#);
    assert_send_unpin(&call);
    assert_eq!(block_on(call).unwrap().json(), "3");
}

#[test]
fn arguments_nested_too_deep_are_told_so() {
    let store = Store::with_account();
    let tools = toolbox(&store);
    let deep = format!("{{\"customer\": {}1{}}}", "[".repeat(200), "]".repeat(200));
    let error = block_on(tools.call("place_order", &deep)).unwrap_err();
    let ToolError::InvalidArgs { message, .. } = &error else {
        panic!("{error:?}")
    };
    assert!(
        message.starts_with("nested more than 128 levels deep at line 1"),
        "{message}"
    );
}
