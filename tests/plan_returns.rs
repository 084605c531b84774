//! Typed plan results: a plan runs to a Rust value, read by the library
//! (`TypedPlan::run`, `Interpreter::run_as`), with a typed error when the
//! value does not fit; a plan a model writes can be required to give a type
//! (`Author::returning`, `Preview::check_returns`), compared with the type's
//! schema before anything runs and sent back through the resubmit loop when
//! it gives another, in λ-Tool text and in the JSON form alike.

use std::cell::Cell;

use futures::executor::block_on;
use serde::Deserialize;
use serde_json::json;
use typed_tools::effect::{EffectSet, Read};
use typed_tools::model::{Message, Response, ScriptedModel};
use typed_tools::plan::author::AnswerError;
use typed_tools::plan::check::{Returns, Ty, TypeErrorKind};
use typed_tools::plan::json::{self, SUBMIT_TOOL};
use typed_tools::plan::prompt::FENCE;
use typed_tools::plan::typed::{lit, TypedPlan};
use typed_tools::plan::{Author, Interpreter, Plan, PlanError, Preview, Run, RunError, Value};
use typed_tools::{exec, field, on, record, tool, CatalogFormat, DynamicTool, ToolCall, Toolbox};

// ------------------------------------------------------------- the shop

/// An item in the inventory.
#[derive(Clone, Debug, serde::Serialize, Deserialize, schemars::JsonSchema)]
struct Item {
    id: i64,
    name: String,
    on_hand: i64,
}

/// What the task needs: the items to reorder and what that costs.
#[derive(Debug, PartialEq, Deserialize, schemars::JsonSchema)]
struct RestockReport {
    items: Vec<i64>,
    total_cost: f64,
}

thread_local! {
    /// The calls made on this thread: each test runs its plans with
    /// `block_on` on its own.
    static CALLS: Cell<usize> = const { Cell::new(0) };
}

/// The items low on stock.
#[tool(effects = Read)]
fn low_stock() -> Result<Vec<Item>, String> {
    CALLS.set(CALLS.get() + 1);
    Ok(vec![
        Item {
            id: 1,
            name: "tea".into(),
            on_hand: 2,
        },
        Item {
            id: 3,
            name: "rice".into(),
            on_hand: 0,
        },
    ])
}

/// What reordering the items costs, in dollars.
#[tool(effects = Read)]
fn price_restock(ids: Vec<i64>) -> Result<f64, String> {
    CALLS.set(CALLS.get() + 1);
    Ok(ids.len() as f64 * 31.25)
}

fn shop() -> Toolbox<Read> {
    Toolbox::allowing::<Read>()
        .tool(LowStock)
        .tool(PriceRestock)
        .build()
        .unwrap()
}

const TASK: &str = "Which items should be reordered, and what does it cost?";

/// The names, where the task needs a `RestockReport`.
const NAMES: &str = "match exec tool low_stock {} {
  Ok(items) => map (fn i => i.name) items,
  Err(e) => []
}";

/// The report: the ids, and the cost the tool gives.
const REPORT: &str = "match exec tool low_stock {} {
  Ok(items) =>
    let ids = map (fn i => i.id) items in
    match exec tool price_restock {ids = ids} {
      Ok(cost) => {items = ids, total_cost = cost},
      Err(e) => {items = ids, total_cost = 0.0}
    },
  Err(e) => {items = [], total_cost = 0.0}
}";

const REFUSED_NAMES: &str = "the plan was refused, nothing ran; fix every error and send the whole plan again:\n\
    - the plan's value: the plan gives [String]; the task needs a RestockReport: {items: [Int], total_cost: Float}; \
    make the plan's value a RestockReport in every branch";

fn fenced(plan: &str) -> String {
    format!("Here is the plan.\n\n```{FENCE}\n{plan}\n```\n")
}

fn calls() -> usize {
    CALLS.get()
}

// ------------------------------------------------------ typed outcomes

#[test]
fn a_typed_plan_runs_to_its_rust_type() {
    let toolbox = shop();
    // A tool's output, as it is.
    let plan = TypedPlan::new(on!(exec!(LowStock {}),
        Ok(items) => items,
        Err(e) => lit(Vec::<Item>::new()),
    ));
    let run: Run<Vec<Item>> = block_on(plan.run(&toolbox)).unwrap();
    let items = run.outcome.unwrap();
    assert_eq!(items.iter().map(|i| i.id).collect::<Vec<_>>(), [1, 3]);
    assert_eq!(run.trace.len(), 1);

    // A record of the user's own type, built in the plan.
    let plan = TypedPlan::new(on!(exec!(LowStock {}),
        Ok(items) => record!(RestockReport { items: lit(vec![1i64, 3]), total_cost: lit(62.5) }),
        Err(e) => record!(RestockReport { items: lit(Vec::<i64>::new()), total_cost: lit(0.0) }),
    ));
    let report = block_on(plan.run(&toolbox)).unwrap().outcome.unwrap();
    assert_eq!(
        report,
        RestockReport {
            items: vec![1, 3],
            total_cost: 62.5
        }
    );

    // A text literal is `&'static str`, taken as a `String`.
    let plan = TypedPlan::new(on!(exec!(LowStock {}),
        Ok(items) => lit("listed"),
        Err(e) => field!(e.message),
    ))
    .returning::<String>();
    assert_eq!(
        block_on(plan.run(&toolbox)).unwrap().outcome.unwrap(),
        "listed"
    );

    // A run-time error of the plan stays the run's error.
    let plan = TypedPlan::new(lit(1i64) / lit(0i64));
    assert_eq!(
        block_on(plan.run(&toolbox)).unwrap().outcome,
        Err(RunError::DivisionByZero)
    );
}

#[test]
fn a_value_that_does_not_fit_is_a_typed_error_holding_the_value() {
    let toolbox = shop();
    let interpreter = Interpreter::new(&toolbox);
    // Ranges and enums are not plan types: the check passes, the reading does not.
    let run = block_on(interpreter.run_as::<u8>(&Plan::parse("300").unwrap())).unwrap();
    let (expected, error, value) = misfit(run.outcome);
    assert_eq!(expected, "Int");
    assert_eq!(error, "invalid value: integer `300`, expected u8");
    assert_eq!(value, Value::Int(300));

    #[derive(Debug, Deserialize, schemars::JsonSchema)]
    #[serde(rename_all = "lowercase")]
    enum Tier {
        Free,
        Pro,
    }
    let run = block_on(interpreter.run_as::<Tier>(&Plan::parse(r#""gold""#).unwrap())).unwrap();
    assert_eq!(
        run.outcome.unwrap_err().to_string(),
        "the plan's value does not fit String: unknown variant `gold`, expected `free` or `pro`; the value: \"gold\""
    );
    assert!(matches!(
        block_on(interpreter.run_as::<Tier>(&Plan::parse(r#""pro""#).unwrap()))
            .unwrap()
            .outcome,
        Ok(Tier::Pro)
    ));

    // What a run-time tool's schema cannot say is left to the reading.
    let loose = DynamicTool::new("stock_report")
        .output_schema(json!({}))
        .handler(|_| async { Ok(json!({"items": ["tea"], "total_cost": 1.5})) });
    let toolbox = Toolbox::builder().dynamic(loose).build().unwrap();
    let plan = Plan::parse(
        "match exec tool stock_report {} { Ok(r) => r, Err(e) => {items = [], total_cost = 0} }",
    )
    .unwrap();
    let run = block_on(Interpreter::new(&toolbox).run_as::<RestockReport>(&plan)).unwrap();
    let (expected, error, value) = misfit(run.outcome);
    assert_eq!(expected, "RestockReport");
    assert_eq!(error, "invalid type: string \"tea\", expected i64");
    assert_eq!(value.to_string(), r#"{items = ["tea"], total_cost = 1.5}"#);
    // The untyped run is still there.
    let run = block_on(Interpreter::new(&toolbox).run(&plan)).unwrap();
    assert_eq!(run.outcome.unwrap(), value);
}

#[test]
fn a_plan_that_gives_another_type_is_refused_before_anything_runs() {
    let toolbox = shop();
    let interpreter = Interpreter::new(&toolbox);
    let before = calls();
    let refused = block_on(interpreter.run_as::<RestockReport>(&Plan::parse(NAMES).unwrap()));
    let Err(PlanError::TypeErrors(errors)) = refused else {
        panic!("{refused:?}")
    };
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].kind, TypeErrorKind::Returns);
    assert_eq!(calls(), before, "nothing ran");
    // The same through the preview, and through a plan that checks.
    assert!(Preview::check_returns(
        &Plan::parse(NAMES).unwrap(),
        &toolbox,
        EffectSet::ALL,
        &Returns::of::<RestockReport>()
    )
    .is_err());
    let run = block_on(interpreter.run_as::<RestockReport>(&Plan::parse(REPORT).unwrap())).unwrap();
    assert_eq!(
        run.outcome,
        Ok(RestockReport {
            items: vec![1, 3],
            total_cost: 62.5
        })
    );
    assert_eq!(run.trace.len(), 2);
}

#[test]
fn a_prepared_plan_checked_once_runs_typed_each_time() {
    let toolbox = shop();
    let plan = Plan::parse(REPORT).unwrap();
    let report = Returns::of::<RestockReport>();
    Preview::check_returns(&plan, &toolbox, EffectSet::ALL, &report).unwrap();
    let interpreter = Interpreter::new(&toolbox);
    let prepared = interpreter.prepare(&plan).unwrap();
    for _ in 0..2 {
        let run: Run<RestockReport> = block_on(prepared.run()).into_typed();
        assert_eq!(run.outcome.unwrap().items, [1, 3]);
    }
    // With no check before, a misfit is the run's error.
    let run = block_on(prepared.run()).into_typed::<Vec<String>>();
    assert!(
        matches!(run.outcome, Err(RunError::OutcomeType { ref expected, .. }) if expected == "[String]")
    );
}

/// What `Returns::of::<T>().check` says of a plan's type, "" when it fits.
fn verdict<T: schemars::JsonSchema>(plan: &str) -> String {
    let toolbox = shop();
    let ty = typed_tools::plan::check(&Plan::parse(plan).unwrap(), &toolbox).unwrap();
    match Returns::of::<T>().check(&ty) {
        Ok(()) => String::new(),
        Err(error) => error.message,
    }
}

#[test]
fn the_plans_type_is_held_to_the_types_schema() {
    #[allow(dead_code)] // read by its schema only
    #[derive(Deserialize, schemars::JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct Strict {
        items: Vec<i64>,
    }
    #[allow(dead_code)] // read by its schema only
    #[derive(Deserialize, schemars::JsonSchema)]
    struct Optional {
        items: Vec<i64>,
        #[serde(default)]
        note: Option<String>,
    }
    // Fits: the same type; an Int for a Float; `()` for an `Option`;
    // extra fields for a struct that ignores them; a part not known.
    assert_eq!(
        verdict::<RestockReport>("{items = [1], total_cost = 62}"),
        ""
    );
    assert_eq!(
        verdict::<RestockReport>("{items = [1], total_cost = 6.5, why = \"low\"}"),
        ""
    );
    assert_eq!(verdict::<Option<i64>>("if true then 1 else ()"), "");
    assert_eq!(verdict::<Optional>("{items = []}"), "");
    assert_eq!(verdict::<f64>("3"), "");
    assert_eq!(
        verdict::<Vec<Item>>("match exec tool low_stock {} { Ok(i) => i, Err(e) => [] }"),
        ""
    );
    // Does not.
    assert_eq!(
        verdict::<RestockReport>("{items = [1]}"),
        "the plan gives {items: [Int]}; the task needs a RestockReport: {items: [Int], total_cost: Float} \
         (`total_cost` (Float) is missing); make the plan's value a RestockReport in every branch"
    );
    assert_eq!(
        verdict::<RestockReport>("if true then {items = [1], total_cost = 2} else {items = []}"),
        "the plan gives {items: [Int], total_cost?: Int}; the task needs a RestockReport: {items: [Int], total_cost: Float} \
         (`total_cost` (Float) may be missing); make the plan's value a RestockReport in every branch"
    );
    assert_eq!(
        verdict::<RestockReport>(r#"{items = ["tea"], total_cost = 2.5}"#),
        "the plan gives {items: [String], total_cost: Float}; the task needs a RestockReport: {items: [Int], total_cost: Float} \
         (`items[]`: expected Int, found String); make the plan's value a RestockReport in every branch"
    );
    assert_eq!(
        verdict::<Strict>("{items = [1], why = \"low\"}"),
        "the plan gives {items: [Int], why: String}; the task needs a Strict: {items: [Int]} \
         (`why` is not among its fields (`items`)); make the plan's value a Strict in every branch"
    );
    assert!(verdict::<i64>("if true then 1 else ()")
        .starts_with("the plan gives Int?; the task needs Int; it may be `()`"));
    assert_eq!(
        verdict::<i64>("2.5"),
        "the plan gives Float; the task needs Int; make the plan's value of type Int in every branch"
    );
    assert_eq!(
        verdict::<Vec<String>>("[1, 2]"),
        "the plan gives [Int]; the task needs [String]; make the plan's value of type [String] in every branch"
    );
}

// ------------------------------------------------ through the resubmit loop

#[test]
fn a_model_plan_refused_for_its_type_is_fixed_through_the_resubmit_loop() {
    let toolbox = shop();
    let model = ScriptedModel::new([fenced(NAMES), fenced(REPORT)]);
    let before = calls();
    let author = Author::new(&toolbox).returning::<RestockReport>();
    let authored = block_on(author.write(&model, TASK)).unwrap();
    assert_eq!(calls(), before, "nothing ran while the plan was written");
    assert_eq!(authored.plan, Plan::parse(REPORT).unwrap());
    assert_eq!(authored.attempts.len(), 2);
    let Some(AnswerError::Refused { errors, .. }) = &authored.attempts[0].error else {
        panic!("{:?}", authored.attempts[0].error)
    };
    assert!(
        matches!(&errors[..], [PlanError::TypeErrors(e)] if e[0].kind == TypeErrorKind::Returns)
    );
    let requests = model.requests();
    // The prompt says the type, and the refusal says what was given.
    assert!(requests[0].messages[0].text().contains(
        "The plan's value must be a RestockReport: {items: [Int], total_cost: Float}. Every branch"
    ));
    assert_eq!(requests[1].messages.last().unwrap().text(), REFUSED_NAMES);
    // The plan that checked runs to the report.
    let run = block_on(Interpreter::new(&toolbox).run_as::<RestockReport>(&authored.plan)).unwrap();
    assert_eq!(
        run.outcome.unwrap(),
        RestockReport {
            items: vec![1, 3],
            total_cost: 62.5
        }
    );
    // Without the requirement, the names are a plan like any other.
    let model = ScriptedModel::new([fenced(NAMES)]);
    let authored = block_on(Author::new(&toolbox).write(&model, TASK)).unwrap();
    assert_eq!(authored.attempts.len(), 1);
    assert!(!model.requests()[0].messages[0]
        .text()
        .contains("The plan's value must be"));
}

#[test]
fn a_type_never_given_exhausts_the_attempts() {
    let toolbox = shop();
    let model = ScriptedModel::new([fenced(NAMES), fenced(NAMES)]);
    let error = block_on(
        Author::new(&toolbox)
            .returning::<RestockReport>()
            .attempts(2)
            .write(&model, TASK),
    )
    .unwrap_err();
    assert_eq!(error.attempts().len(), 2);
    assert!(error.to_string().ends_with(REFUSED_NAMES), "{error}");
}

#[test]
fn the_type_is_told_with_every_other_error_at_once() {
    let toolbox = shop();
    let plan =
        Plan::parse("match exec tool low_stok {} { Ok(items) => \"listed\", Err(e) => e.message }")
            .unwrap();
    let error = typed_tools::plan::author::check_plan(&plan, &toolbox, EffectSet::ALL).unwrap_err();
    // Without a type required, only the unknown tool.
    assert_eq!(error.for_model().matches("\n- ").count(), 1);
    let model = ScriptedModel::new([fenced(&plan.to_string())]);
    let error = block_on(
        Author::new(&toolbox)
            .returning::<RestockReport>()
            .attempts(1)
            .write(&model, TASK),
    )
    .unwrap_err();
    let told = error.attempts()[0].error.as_ref().unwrap().for_model();
    assert_eq!(
        told,
        "the plan was refused, nothing ran; fix every error and send the whole plan again:\n\
         - unknown tool `low_stok`; the plan may call: `low_stock`, `price_restock`\n  \
         hint: did you mean `low_stock`?\n\
         - the plan's value: the plan gives String; the task needs a RestockReport: {items: [Int], total_cost: Float}; \
         make the plan's value a RestockReport in every branch"
    );
}

// ----------------------------------------------------------- the JSON form

#[test]
fn the_json_form_is_held_to_the_type_alike() {
    let toolbox = shop();
    let names = json::to_value(&Plan::parse(NAMES).unwrap());
    let report = json::to_value(&Plan::parse(REPORT).unwrap());
    // In a fence, as text.
    let model = ScriptedModel::new([
        format!("```json\n{names}\n```"),
        format!("```json\n{report}\n```"),
    ]);
    let authored = block_on(
        Author::new(&toolbox)
            .returning::<RestockReport>()
            .write(&model, TASK),
    )
    .unwrap();
    assert_eq!(authored.plan, Plan::parse(REPORT).unwrap());
    assert_eq!(
        model.requests()[1].messages.last().unwrap().text(),
        REFUSED_NAMES
    );
    // Through the native `submit_plan` tool: the refusal answers the call.
    let call = |id: &str, arguments: String| ToolCall {
        id: Some(id.into()),
        name: SUBMIT_TOOL.into(),
        arguments,
    };
    let model = ScriptedModel::new([
        Response::new("").calls(vec![call("call_1", names.to_string())]),
        Response::new("").calls(vec![call("call_2", report.to_string())]),
    ])
    .native(CatalogFormat::OpenAiChatStrict);
    let authored = block_on(
        Author::new(&toolbox)
            .returning::<RestockReport>()
            .write(&model, TASK),
    )
    .unwrap();
    assert_eq!(authored.attempts.len(), 2);
    let Message::ToolResult(result) = model.requests()[1].messages.last().unwrap().clone() else {
        panic!()
    };
    assert_eq!(result.call_id.as_deref(), Some("call_1"));
    assert_eq!(result.content, REFUSED_NAMES);
    let run = block_on(Interpreter::new(&toolbox).run_as::<RestockReport>(&authored.plan)).unwrap();
    assert_eq!(run.outcome.unwrap().items, [1, 3]);
    // And a JSON plan run directly.
    let plan = json::from_str(&report.to_string()).unwrap();
    let run = block_on(Interpreter::new(&toolbox).run_as::<RestockReport>(&plan)).unwrap();
    assert_eq!(run.outcome.unwrap().total_cost, 62.5);
    let plan = json::from_str(&names.to_string()).unwrap();
    assert!(matches!(
        block_on(Interpreter::new(&toolbox).run_as::<RestockReport>(&plan)),
        Err(PlanError::TypeErrors(_))
    ));
}

#[test]
fn returns_reads_the_types_schema() {
    // Open: a value may have more fields, which serde ignores; written
    // without them for the model.
    let returns = Returns::of::<RestockReport>();
    assert_eq!(
        returns.ty().to_string(),
        "{items: [Int], total_cost: Float, ..}"
    );
    assert_eq!(
        returns.to_string(),
        "a RestockReport: {items: [Int], total_cost: Float}"
    );
    assert_eq!(
        Returns::of::<Option<String>>().ty(),
        &Ty::Nullable(Box::new(Ty::String))
    );
    assert_eq!(
        Returns::of::<Item>().to_string(),
        "an Item: {id: Int, name: String, on_hand: Int}"
    );
}

/// The parts of a run's `OutcomeType` error: the type expected, the
/// reading's error, and the value kept.
fn misfit<T: std::fmt::Debug>(outcome: Result<T, RunError>) -> (String, String, Value) {
    match outcome {
        Err(RunError::OutcomeType {
            expected,
            error,
            value,
        }) => (expected, error, value),
        other => panic!("{other:?}"),
    }
}
