//! The static type checker: λ-Tool's examples (the support agent passes,
//! `account.plan` gives the seed's message), each class of type error refused
//! with the message a model reads and no tool run, every error reported at
//! once, the types it infers, schemas it cannot express accepted, the typed
//! builder's plans, and no false refusal: a proptest runs generated plans
//! through the interpreter with every type hidden from the checker, and any
//! plan that runs without a type error must pass the checker. A plan held
//! to a Rust type (`Interpreter::run_as`) reads into it whenever the check
//! says it gives one, but for parts whose type the checker cannot know.

use futures::executor::block_on;
use proptest::prelude::*;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::json;
use typed_tools::error::ToolError;
use typed_tools::plan::check::{Ty, TypeErrorKind};
use typed_tools::plan::typed::{lit, TypedPlan};
use typed_tools::plan::{
    check, BinaryOp, Branch, CallResult, Expr, Interpreter, Lambda, Lambda2, Param, Plan,
    PlanError, RunError, Step, Value,
};
use typed_tools::{exec, field, on, tool, DynamicTool, Toolbox};

mod support;

use support::{calls, toolbox, SUPPORT_AGENT};

/// The type errors that refuse `text` with the support agent's toolbox, as
/// a model reads them; asserts that nothing ran.
fn refused(text: &str) -> Vec<String> {
    let (toolbox, shop) = toolbox(None);
    let plan = Plan::parse(text).unwrap();
    let error = block_on(Interpreter::new(&toolbox).run(&plan)).unwrap_err();
    assert!(calls(&shop).is_empty(), "nothing ran");
    let PlanError::TypeErrors(errors) = error else {
        panic!("not a type error: {error}")
    };
    errors.iter().map(ToString::to_string).collect()
}

fn ty_of(text: &str) -> Ty {
    let (toolbox, _) = toolbox(None);
    check(&Plan::parse(text).unwrap(), &toolbox).unwrap()
}

#[test]
fn the_support_agent_passes_and_runs() {
    let (toolbox, shop) = toolbox(None);
    let plan = Plan::parse(SUPPORT_AGENT).unwrap();
    assert_eq!(check(&plan, &toolbox), Ok(Ty::String));
    let run = block_on(Interpreter::new(&toolbox).run(&plan)).unwrap();
    assert_eq!(
        run.outcome,
        Ok(Value::String(
            "refund processed and customer notified".into()
        ))
    );
    assert_eq!(calls(&shop).len(), 3);
}

#[test]
fn account_plan_gives_the_seed_message_before_anything_runs() {
    let text = SUPPORT_AGENT.replace(
        "amount = account.last_charge_cents",
        "amount = account.plan",
    );
    let (toolbox, shop) = toolbox(None);
    let error = block_on(Interpreter::new(&toolbox).run(&Plan::parse(&text).unwrap())).unwrap_err();
    let PlanError::TypeErrors(errors) = &error else {
        panic!("{error}")
    };
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].kind, TypeErrorKind::MissingField);
    assert_eq!(errors[0].at, "`account.plan`");
    assert_eq!(
        errors[0].message,
        "field `plan` not found in record type {id: String, subscription_tier: String, email: String, last_charge_cents: Int}"
    );
    assert_eq!(
        error.to_string(),
        "the plan does not type-check, nothing ran; fix it and resubmit:
- `account.plan`: field `plan` not found in record type {id: String, subscription_tier: String, email: String, last_charge_cents: Int}"
    );
    assert!(calls(&shop).is_empty(), "the lookup did not run");
}

#[test]
fn each_class_of_error_is_refused_with_its_message_and_nothing_runs() {
    let lookup = |ok: &str| {
        format!(
            r#"match exec tool lookup_account {{id = "c"}} {{ Ok(account) => {ok}, Err(e) => "no" }}"#
        )
    };
    let cases: Vec<(String, &str)> = vec![
        // Arguments: unknown, missing, wrongly typed, not a record.
        (
            r#"match exec tool issue_refund {account_id = "a", amount = 5, currency = "EUR"} { Ok(r) => r.tx_id, Err(e) => e.message }"#.into(),
            "argument `currency` of `exec tool issue_refund`: `issue_refund` takes no argument `currency`; its arguments are: `account_id`, `amount`",
        ),
        (
            r#"match exec tool issue_refund {account_id = "a"} { Ok(r) => r.tx_id, Err(e) => e.message }"#.into(),
            "`exec tool issue_refund`: missing argument `amount` of type Int; add `amount = ...` to the arguments",
        ),
        (
            lookup(r#"match exec tool issue_refund {account_id = account.id, amount = account.email} { Ok(r) => r.tx_id, Err(e) => e.message }"#),
            "argument `amount` of `exec tool issue_refund`: expected Int, found String",
        ),
        (
            r#"match exec tool issue_refund {account_id = "a", amount = 12.5} { Ok(r) => r.tx_id, Err(e) => e.message }"#.into(),
            "argument `amount` of `exec tool issue_refund`: expected Int, found Float",
        ),
        (
            r#"match exec tool lookup_account "cust_12345" { Ok(a) => a.id, Err(e) => e.message }"#.into(),
            "`exec tool lookup_account`: the arguments are a record {id: String}, found String; write `exec tool lookup_account {name = value, ...}`",
        ),
        (
            r#"call tool format_cents {cents = "12"}"#.into(),
            "argument `cents` of `call tool format_cents`: expected Int, found String",
        ),
        (
            r#"match traverse (fn o => exec tool charge o) [{id = "1", amount = 100}] { Ok(r) => "done", Err(e) => e.message }"#.into(),
            "argument `id` of `exec tool charge`: expected Int, found String",
        ),
        // Fields.
        (
            lookup("account.plan"),
            "`account.plan`: field `plan` not found in record type {id: String, subscription_tier: String, email: String, last_charge_cents: Int}",
        ),
        (
            r#"match exec tool issue_refund {account_id = "a", amount = 5} { Ok(r) => r.tx_id, Err(e) => e.reason }"#.into(),
            "`e.reason`: field `reason` not found in record type {tool: String, kind: String, message: String}",
        ),
        (
            lookup("account.id.length"),
            "`account.id.length`: `.length` reads a field of a record, found String",
        ),
        // Operations.
        (
            r#""a" + 1"#.into(),
            r#"`"a" + 1`: `+` needs an Int on both sides, found String + Int; join text with `++`"#,
        ),
        (
            lookup(r#""refund of " ++ account.last_charge_cents"#),
            r#"`"refund of " ++ account.last_charge_cents`: `++` needs a String on both sides, found String ++ Int; to write a number as text, `call` a pure tool that formats it"#,
        ),
        (
            "1 < 1.5".into(),
            "`1 < 1.5`: `<` compares two Ints, two Floats or two Strings, found Int < Float; write both sides as Int, or both as Float (`1.0`)",
        ),
        ("not 1".into(), "`not 1`: `not` needs a Bool, found Int"),
        (
            r#"true and "yes""#.into(),
            r#"`true and "yes"`: `and` needs a Bool on both sides, found Bool and String"#,
        ),
        (
            lookup(r#"if account.subscription_tier then "pro" else "free""#),
            r#"the condition `account.subscription_tier`: `if` needs a Bool condition (compare with `==`, `<`, ...), found String"#,
        ),
        // Lists and callbacks.
        (
            lookup("map (fn x => x) account.email"),
            "the list of `map` `account.email`: `map` goes over a list, found String",
        ),
        (
            "filter (fn n => n + 1) [1, 2]".into(),
            "the callback of `filter` `n + 1`: the callback of `filter` must give a Bool, found Int",
        ),
        (
            "fold (fn acc, x => acc ++ x) 0 [1, 2]".into(),
            "`acc ++ x`: the step of `fold` gives String; it must give the accumulator's type, Int (the initial value's type): the accumulator, the initial value and the step's result have one type",
        ),
        (
            r#"fold (fn acc, x => acc ++ "a") 0 [1, 2]"#.into(),
            "`acc ++ \"a\"`: the step of `fold` gives String; it must give the accumulator's type, Int (the initial value's type): the accumulator, the initial value and the step's result have one type",
        ),
        (
            r#"fold (fn acc, x => acc + x) "" [1, 2]"#.into(),
            "`acc + x`: the step of `fold` gives Int; it must give the accumulator's type, String (the initial value's type): the accumulator, the initial value and the step's result have one type",
        ),
        (
            "fold (fn acc, x => [acc]) 0 [1, 2]".into(),
            "`[acc]`: the step of `fold` gives a List of the accumulator's type; it must give the accumulator's type, Int (the initial value's type): the accumulator, the initial value and the step's result have one type",
        ),
        (
            "fold (fn acc, x => {a = acc}) 0 [1, 2]".into(),
            "`{a = acc}`: the step of `fold` gives a record holding the accumulator ({a: Int}); it must give the accumulator's type, Int (the initial value's type): the accumulator, the initial value and the step's result have one type",
        ),
        (
            "fold (fn acc, x => [acc]) [] [1, 2]".into(),
            "`[acc]`: the step of `fold` gives a List of the accumulator's type; it must give the accumulator's type, [Nothing] (the initial value's type): the accumulator, the initial value and the step's result have one type",
        ),
        // A list's elements have one type.
        (
            r#"[1, "a"]"#.into(),
            "`[1, \"a\"]`: the elements of a list have one type, found Int and then String (`\"a\"`); make them one type, or use a record to hold values of different types",
        ),
        (
            r#"[{id = 1}, {id = "1"}]"#.into(),
            "`[{id = 1}, {id = \"1\"}]`: the elements of a list have one type, found {id: Int} and then {id: String} (`{id = \"1\"}`); make them one type, or use a record to hold values of different types",
        ),
        // Branches of two types: refused where they are, not used as `Any`.
        (
            r#"(if true then 1 else "a") + 1"#.into(),
            "`if true then 1 else \"a\"`: the branches of this `if` give different types: `then` gives Int, `else` gives String; both give the `if`'s value, so make them one type (the same type in both, or `()` in one for no value); to write a number as text, `call` a pure tool that formats it",
        ),
        (
            r#"match exec tool lookup_account {id = "c"} { Ok(a) => a.last_charge_cents, Err(e) => e }"#.into(),
            "`match exec tool lookup_account {id = \"c\"} { Ok(a) => a.last…`: the branches of this `match` give different types: `Ok(a)` gives Int, `Err(e)` gives {tool: String, kind: String, message: String}; both give the `match`'s value, so make them one type (the same type in both, or `()` in one for no value)",
        ),
        (
            r#"match exec tool lookup_account {id = "c"} { Ok(a) => a.email, Err(e) => e }"#.into(),
            "`match exec tool lookup_account {id = \"c\"} { Ok(a) => a.emai…`: the branches of this `match` give different types: `Ok(a)` gives String, `Err(e)` gives {tool: String, kind: String, message: String}; both give the `match`'s value, so make them one type (the same type in both, or `()` in one for no value); `e` is the error record: `e.message` is its text",
        ),
        (
            r#"match exec tool lookup_account {id = "c"} { Ok(a) => {n = a.last_charge_cents}, Err(e) => {n = 0.5} }"#.into(),
            "`match exec tool lookup_account {id = \"c\"} { Ok(a) => {n = a…`: the branches of this `match` give different types: `Ok(a)` gives {n: Int}, `Err(e)` gives {n: Float}; both give the `match`'s value, so make them one type (the same type in both, or `()` in one for no value)",
        ),
        // A value that is not one kind for sure.
        (
            "(if true then 1 else ()) + 1".into(),
            "`(if true then 1 else ()) + 1`: `+` needs an Int on both sides, found Int? + Int; it may be `()`: bind it with `let` and test it first, `if x == () then ... else ...`, where the `else` branch has the value",
        ),
        (
            "map (fn o: {id: Int} => o.id) [{id = \"1\"}]".into(),
            "parameter `o: {id: Int}` of `map`: the list's elements are {id: String}, not {id: Int}; correct the annotation or leave it out",
        ),
        (
            r#"match traverse (fn o: {id: Int, amount: Int} => exec tool charge o) [{id = 1}] { Ok(r) => "done", Err(e) => e.message }"#.into(),
            "parameter `o: {id: Int, amount: Int}` of `traverse`: the list's elements are {id: Int}, not {id: Int, amount: Int}; correct the annotation or leave it out\n`exec tool charge`: missing argument `amount` of type Int; add `amount = ...` to the arguments",
        ),
        // Scope.
        (
            r#"match exec tool lookup_account {id = "c"} { Ok(account) => "ok", Err(e) => account.email }"#.into(),
            "`account`: variable `account` is not bound here; `account` is the `Ok` binder of a `match` and exists only in its `Ok` branch: move what uses it there, or in the `Err` branch use the error (`{tool, kind, message}`); in scope: `e`",
        ),
        (
            "let xs = map (fn n => n * 2) [1] in n".into(),
            "`n`: variable `n` is not bound here; in scope: `xs`",
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(refused(&text).join("\n"), expected, "{text}");
    }
}

#[test]
fn every_error_is_reported_at_once() {
    let errors = refused(
        r#"match exec tool lookup_account {id = "c"} {
  Ok(account) =>
    match exec tool issue_refund {account_id = account.id, amt = account.plan} {
      Ok(refund) => refund.tx_id ++ 1,
      Err(e) => refund.tx_id
    },
  Err(e) => if e then 1 else 2
}"#,
    );
    assert_eq!(
        errors,
        [
            "`account.plan`: field `plan` not found in record type {id: String, subscription_tier: String, email: String, last_charge_cents: Int}",
            "argument `amt` of `exec tool issue_refund`: `issue_refund` takes no argument `amt`; its arguments are: `account_id`, `amount`",
            "`exec tool issue_refund`: missing argument `amount` of type Int; add `amount = ...` to the arguments",
            "`refund.tx_id ++ 1`: `++` needs a String on both sides, found String ++ Int; to write a number as text, `call` a pure tool that formats it",
            "`refund`: variable `refund` is not bound here; `refund` is the `Ok` binder of a `match` and exists only in its `Ok` branch: move what uses it there, or in the `Err` branch use the error (`{tool, kind, message}`); in scope: `e`, `account`",
            "the condition `e`: `if` needs a Bool condition (compare with `==`, `<`, ...), found {tool: String, kind: String, message: String}",
        ]
    );
}

#[test]
fn the_checker_infers_the_outcome_type() {
    assert_eq!(ty_of("1 + 2"), Ty::Int);
    assert_eq!(
        ty_of(
            r#"match traverse (fn o => exec tool charge o) [{id = 1, amount = 100}] { Ok(receipts) => receipts, Err(e) => [e.message] }"#
        ),
        Ty::List(Box::new(Ty::String))
    );
    assert_eq!(
        ty_of("fold (fn acc, x => acc + x) 0 (map (fn n => n * 10) [1, 2])"),
        Ty::Int
    );
    assert_eq!(
        ty_of(r#"match exec tool lookup_account {id = "c"} { Ok(a) => a, Err(e) => e }"#).to_string(),
        "{id?: String, subscription_tier?: String, email?: String, last_charge_cents?: Int, tool?: String, kind?: String, message?: String}"
    );
    // λ-Tool's traverse example: its branches give a String and the error
    // record, which no one type covers; refused, as the builder refuses it.
    assert_eq!(
        refused(
            r#"match traverse (fn o: {id: Int, amount: Int} => exec tool charge o) [{id = 1, amount = 100}] { Ok(receipts) => "done", Err(e) => e }"#
        ),
        ["`match traverse (fn o: {id: Int, amount: Int} => exec tool c…`: the branches of this `match` give different types: `Ok(receipts)` gives String, `Err(e)` gives {tool: String, kind: String, message: String}; both give the `match`'s value, so make them one type (the same type in both, or `()` in one for no value); `e` is the error record: `e.message` is its text"]
    );
    assert_eq!(
        ty_of(
            r#"match traverse (fn o: {id: Int, amount: Int} => exec tool charge o) [{id = 1, amount = 100}] { Ok(receipts) => "done", Err(e) => e.message }"#
        ),
        Ty::String
    );
    // Records join field by field, as a list's elements do: a field one
    // branch lacks is optional, and so is not read later.
    assert_eq!(
        ty_of(r#"match exec tool lookup_account {id = "c"} { Ok(a) => {found = true, id = a.id}, Err(e) => {found = false} }"#).to_string(),
        "{found: Bool, id?: String}"
    );
    assert_eq!(
        ty_of("if true then () else 5"),
        Ty::Nullable(Box::new(Ty::Int))
    );
    assert_eq!(
        ty_of(r#"call tool format_cents {cents = 1299}"#),
        Ty::String
    );
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ProfileData {
    pub name: String,
    pub nickname: Option<String>,
    pub extra: serde_json::Value,
    pub scores: std::collections::BTreeMap<String, i64>,
    pub shape: Shape,
    pub parent: Option<Box<ProfileData>>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum Shape {
    Circle { r: i64 },
    Label(String),
}

/// Read a profile.
#[tool(effects = Read)]
fn profile(id: String, limit: Option<i64>, ratio: f64) -> ProfileData {
    ProfileData {
        name: id,
        nickname: None,
        extra: json!({"anything": [1, "two"]}),
        scores: [("a".to_owned(), 1)].into_iter().collect(),
        shape: Shape::Label(format!("{limit:?} {ratio}")),
        parent: None,
    }
}

fn profile_toolbox() -> Toolbox {
    let counter = DynamicTool::new("counter")
        .description("A number, as JSON.")
        .effects(typed_tools::effect::EffectSet::READ)
        .output_schema(
            json!({"type": "object", "properties": {"n": {"type": "number"}}, "required": ["n"]}),
        )
        .handler(|_| async { Ok(json!({"n": 5})) });
    let anything = DynamicTool::new("anything")
        .effects(typed_tools::effect::EffectSet::READ)
        .handler(|_| async { Ok(json!({"free": {"form": true}})) });
    Toolbox::builder()
        .tool(Profile)
        .dynamic(counter)
        .dynamic(anything)
        .build()
        .unwrap()
}

#[test]
fn what_schemas_cannot_say_is_passed_along_but_never_used_as_one_kind() {
    let toolbox = profile_toolbox();
    let ok = |text: &str| {
        let plan = Plan::parse(text).unwrap();
        check(&plan, &toolbox).unwrap_or_else(|e| panic!("{text}\n{e}"));
        block_on(Interpreter::new(&toolbox).run(&plan)).unwrap()
    };
    let refused = |text: &str| -> Vec<String> {
        let plan = Plan::parse(text).unwrap();
        let Err(PlanError::TypeErrors(errors)) = check(&plan, &toolbox) else {
            panic!("{text}")
        };
        errors.iter().map(ToString::to_string).collect()
    };
    // Option arguments take `()` or the value; an Int is a Float's argument.
    // Values of unknown type (`extra`: free-form JSON, `scores`: a map,
    // `shape`: an untagged enum) are passed along whole; an `Option` is
    // tested before it is used.
    let run = ok(
        r#"match exec tool profile {id = "p", limit = (), ratio = 1} {
  Ok(p) => let nick = p.nickname in
    [p.name ++ "!", if nick == () then "no nickname" else nick ++ "?"],
  Err(e) => [e.message]
}"#,
    );
    assert_eq!(run.outcome.unwrap().to_string(), r#"["p!", "no nickname"]"#);
    let run = ok(
        r#"match exec tool profile {id = "p", limit = 3, ratio = 0.5} {
  Ok(p) => {extra = p.extra, scores = p.scores, shape = p.shape, no_parent = p.parent == ()},
  Err(e) => {extra = e, scores = e, shape = e, no_parent = false}
}"#,
    );
    assert_eq!(
        run.outcome.unwrap().to_string(),
        r#"{extra = {anything = [1, "two"]}, scores = {a = 1}, shape = "Some(3) 0.5", no_parent = true}"#
    );
    // What is unknown or may be `()` is not used as one kind of value: a
    // run could not go wrong for the plan as checked.
    assert_eq!(
        refused(r#"match exec tool profile {id = "p", ratio = 1.5} { Ok(p) => [p.nickname ++ "?", p.extra.anything, p.parent.name], Err(e) => [e.message] }"#),
        [
            "`p.nickname ++ \"?\"`: `++` needs a String on both sides, found String? ++ String; it may be `()`: bind it with `let` and test it first, `if x == () then ... else ...`, where the `else` branch has the value",
            "`p.extra.anything`: `.anything` reads a field of a record, found Any; its type is not known here (a tool output its schema does not describe), so it cannot be used as one kind of value: return it as it is, or pass it whole to a tool",
            "`p.parent.name`: `.name` reads a field of a record, found {name: String, nickname: String?, extra: Any, scores: Any, shape: Any, parent: Any}?; it may be `()`: bind it with `let` and test it first, `if x == () then ... else ...`, where the `else` branch has the value",
        ]
    );
    // A run-time tool's `number` may come back as an Int or a Float: not
    // known, so not added to; free-form output `{}` has no fields to read.
    assert_eq!(
        refused(r#"match exec tool counter {} { Ok(c) => c.n + 1, Err(e) => 0 }"#),
        ["`c.n + 1`: `+` needs an Int on both sides, found Any + Int; its type is not known here (a tool output its schema does not describe), so it cannot be used as one kind of value: return it as it is, or pass it whole to a tool"]
    );
    let run = ok(r#"match exec tool counter {} { Ok(c) => c.n == 5, Err(e) => false }"#);
    assert_eq!(run.outcome, Ok(Value::Bool(true)));
    assert_eq!(
        refused(r#"match exec tool anything {} { Ok(a) => a.free.form, Err(e) => false }"#).len(),
        1
    );
    // What is certain is refused as before.
    assert_eq!(
        refused(r#"match exec tool profile {id = "p", ratio = "x"} { Ok(p) => p.age, Err(e) => e.message }"#),
        [
            "argument `ratio` of `exec tool profile`: expected Float, found String",
            "`p.age`: field `age` not found in record type {name: String, nickname: String?, extra: Any, scores: Any, shape: Any, parent: {name: String, nickname: String?, extra: Any, scores: Any, shape: Any, parent: Any}?}",
        ]
    );
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CamelAccount {
    pub id: String,
    pub last_charge_cents: i64,
}

/// Look up an account; its JSON is camelCase.
#[tool(effects = Read)]
fn lookup_camel(id: String) -> Result<CamelAccount, String> {
    Ok(CamelAccount {
        id,
        last_charge_cents: 1299,
    })
}

#[test]
fn builder_plans_are_checked_too() {
    let (toolbox, _) = toolbox(None);
    let plan = TypedPlan::new(on!(exec!(support::LookupAccount { id: lit("c") }),
        Ok(account) => field!(account.last_charge_cents),
        Err(e) => lit(0),
    ));
    assert_eq!(check(&Plan::from(plan), &toolbox), Ok(Ty::Int));

    // `field!` writes the Rust name; the JSON has `lastChargeCents`. The
    // checker refuses before the lookup runs, naming the fields there are.
    let toolbox = Toolbox::builder().tool(LookupCamel).build().unwrap();
    let plan = TypedPlan::new(on!(exec!(LookupCamel { id: lit("c") }),
        Ok(account) => field!(account.last_charge_cents),
        Err(e) => lit(0),
    ));
    let error = block_on(plan.run(&toolbox)).unwrap_err();
    assert_eq!(
        error.to_string(),
        "the plan does not type-check, nothing ran; fix it and resubmit:
- `account.last_charge_cents`: field `last_charge_cents` not found in record type {id: String, lastChargeCents: Int}"
    );
}

#[test]
fn hostile_plans_and_schemas_end_without_a_panic() {
    let (toolbox, _) = toolbox(None);
    // As deep as allowed, in records and in folds inside folds.
    let mut record = Expr::int(1);
    let mut folds = Expr::var("acc");
    for _ in 0..30 {
        record = Expr::record([("a", record)]);
        folds = Expr::Fold {
            func: Lambda2 {
                acc: Param {
                    name: "acc".into(),
                    ty: None,
                },
                item: Param {
                    name: "x".into(),
                    ty: None,
                },
                body: Box::new(Expr::List { items: vec![folds] }),
            },
            init: Box::new(Expr::var("acc")),
            list: Box::new(Expr::List {
                items: vec![Expr::int(1)],
            }),
        };
    }
    assert!(check(&Plan::new(record), &toolbox).is_ok());
    let folds = Expr::Let {
        name: "acc".into(),
        value: Box::new(Expr::int(0)),
        body: Box::new(folds),
    };
    // Each step wraps its accumulator: no finite type, refused at once.
    let started = std::time::Instant::now();
    let error = check(&Plan::new(folds), &toolbox).unwrap_err().to_string();
    assert!(
        error.contains("it must give the accumulator's type, Int"),
        "{error}"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    // Types that double at each `let`: bounded, checked at once.
    let mut doubling = Expr::var("a59");
    for i in (1..60).rev() {
        let previous = Expr::var(format!("a{}", i - 1));
        doubling = Expr::Let {
            name: format!("a{i}"),
            value: Box::new(Expr::record([("x", previous.clone()), ("y", previous)])),
            body: Box::new(doubling),
        };
    }
    let doubling = Expr::Let {
        name: "a0".into(),
        value: Box::new(Expr::int(1)),
        body: Box::new(Expr::binary(BinaryOp::Add, doubling, Expr::int(1))),
    };
    let started = std::time::Instant::now();
    let Err(PlanError::TypeErrors(errors)) = check(&Plan::new(doubling), &toolbox) else {
        panic!("a record + 1")
    };
    assert_eq!(errors.len(), 1);
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    // Too deep is refused, not recursed into.
    let mut deep = Expr::int(1);
    for _ in 0..500 {
        deep = Expr::Not {
            operand: Box::new(deep),
        };
    }
    assert_eq!(
        check(&Plan::new(deep), &toolbox),
        Err(PlanError::TooDeep {
            limit: typed_tools::plan::MAX_DEPTH
        })
    );
    // Many errors: at most MAX_TYPE_ERRORS reported.
    let many = Expr::List {
        items: (0..500)
            .map(|_| Expr::binary(BinaryOp::Add, Expr::int(1), Expr::string("a")))
            .collect(),
    };
    let Err(PlanError::TypeErrors(errors)) = check(&Plan::new(many), &toolbox) else {
        panic!()
    };
    assert_eq!(errors.len(), typed_tools::plan::check::MAX_TYPE_ERRORS);
    // A schema whose `$ref`s form a cycle.
    let cyclic = DynamicTool::new("cyclic")
        .input_schema(json!({
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/A"}},
            "$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/A"}}
        }))
        .output_schema(json!({"$ref": "#"}));
    let toolbox = Toolbox::builder().dynamic(cyclic).build().unwrap();
    let plan =
        Plan::parse(r#"match exec tool cyclic {a = 1} { Ok(x) => x, Err(e) => e }"#).unwrap();
    assert!(check(&plan, &toolbox).is_ok());
    // Its output's type is not known: its fields cannot be read.
    let plan =
        Plan::parse(r#"match exec tool cyclic {a = 1} { Ok(x) => x.y.z, Err(e) => 0 }"#).unwrap();
    assert!(check(&plan, &toolbox).is_err());
}

// ---------------------------------------------------------------------------
// Soundness: a generated plan the checker accepts never stops with a type
// error at run time: it gives a value, or stops with what no type can rule
// out (division by zero, overflow), or a tool's error. The plans are random
// compositions of every construct, most of them ill-typed; each is also
// tried with every sub-expression passed through `opaque` (whose output is
// free-form JSON, of a type the checker does not know), which hides the
// types from the checker and shows what a run does.

/// Gives back its argument; its output type is unknown to the checker.
#[tool(effects = Pure)]
fn opaque(v: serde_json::Value) -> serde_json::Value {
    v
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Receipt {
    pub tx_id: String,
    pub cents: i64,
    pub note: Option<String>,
}

/// Place an order; cannot fail on arguments that fit.
#[tool(effects = Write)]
fn place(id: i64, amount: i64, note: Option<String>) -> Receipt {
    Receipt {
        tx_id: format!("tx_{id}"),
        cents: amount,
        note,
    }
}

fn oracle_toolbox() -> Toolbox {
    Toolbox::builder()
        .tool(Opaque)
        .tool(Place)
        .tool(support::FormatCents)
        .build()
        .unwrap()
}

/// `e` with every sub-expression wrapped in `call tool opaque {v = ...}`.
fn erase(e: &Expr) -> Expr {
    let b = |e: &Expr| Box::new(erase(e));
    let inner = match e {
        Expr::Record { fields } => Expr::Record {
            fields: fields.iter().map(|(n, e)| (n.clone(), erase(e))).collect(),
        },
        Expr::List { items } => Expr::List {
            items: items.iter().map(erase).collect(),
        },
        Expr::Get { of, field } => Expr::Get {
            of: b(of),
            field: field.clone(),
        },
        Expr::Match { on, ok, err } => Expr::Match {
            on: Box::new(erase_step(on)),
            ok: Branch {
                bind: ok.bind.clone(),
                body: b(&ok.body),
            },
            err: Branch {
                bind: err.bind.clone(),
                body: b(&err.body),
            },
        },
        Expr::Let { name, value, body } => Expr::Let {
            name: name.clone(),
            value: b(value),
            body: b(body),
        },
        Expr::If {
            cond,
            then,
            otherwise,
        } => Expr::If {
            cond: b(cond),
            then: b(then),
            otherwise: b(otherwise),
        },
        Expr::Not { operand } => Expr::Not {
            operand: b(operand),
        },
        Expr::Binary { op, left, right } => Expr::Binary {
            op: *op,
            left: b(left),
            right: b(right),
        },
        Expr::Map { func, list } => Expr::Map {
            func: Lambda {
                param: untyped(&func.param),
                body: b(&func.body),
            },
            list: b(list),
        },
        Expr::Filter { func, list } => Expr::Filter {
            func: Lambda {
                param: untyped(&func.param),
                body: b(&func.body),
            },
            list: b(list),
        },
        Expr::Fold { func, init, list } => Expr::Fold {
            func: Lambda2 {
                acc: untyped(&func.acc),
                item: untyped(&func.item),
                body: b(&func.body),
            },
            init: b(init),
            list: b(list),
        },
        Expr::Call { tool, arg } => Expr::Call {
            tool: tool.clone(),
            arg: b(arg),
        },
        leaf => leaf.clone(),
    };
    Expr::call("opaque", Expr::record([("v", inner)]))
}

fn erase_step(step: &Step) -> Step {
    match step {
        Step::Exec { tool, arg } => Step::Exec {
            tool: tool.clone(),
            arg: Box::new(erase(arg)),
        },
        Step::Traverse { param, body, list } => Step::Traverse {
            param: untyped(param),
            body: Box::new(erase_step(body)),
            list: Box::new(erase(list)),
        },
    }
}

fn untyped(param: &Param) -> Param {
    Param {
        name: param.name.clone(),
        ty: None,
    }
}

const VARS: [&str; 2] = ["a", "b"];
const FIELDS: [&str; 5] = ["x", "y", "tx_id", "cents", "note"];

fn leaf() -> BoxedStrategy<Expr> {
    prop_oneof![
        Just(Expr::Unit),
        any::<bool>().prop_map(|value| Expr::Bool { value }),
        (0i64..50).prop_map(Expr::int),
        prop_oneof![Just(0.5), Just(2.0)].prop_map(|value| Expr::Float { value }),
        prop_oneof![Just("s"), Just("t")].prop_map(Expr::string),
        prop::sample::select(&VARS[..]).prop_map(Expr::var),
    ]
    .boxed()
}

fn name() -> impl Strategy<Value = String> {
    prop::sample::select(&VARS[..]).prop_map(str::to_owned)
}

fn annotation() -> impl Strategy<Value = Option<typed_tools::plan::Type>> {
    use typed_tools::plan::Type;
    prop_oneof![
        4 => Just(None),
        1 => Just(Some(Type::Int)),
        1 => Just(Some(Type::String)),
        1 => Just(Some(Type::Record { fields: vec![("x".into(), Type::Int)] })),
    ]
}

/// A non-empty list literal: every callback over it runs at least once.
fn list_of(inner: BoxedStrategy<Expr>) -> impl Strategy<Value = Expr> {
    prop::collection::vec(inner, 1..3).prop_map(|items| Expr::List { items })
}

/// Pure expressions in which every part runs: no `if`, `and`/`or` whose
/// right side runs, callbacks over non-empty list literals.
fn pure() -> BoxedStrategy<Expr> {
    leaf()
        .prop_recursive(4, 48, 3, |inner| {
            let op = prop::sample::select(
                BinaryOp::ALL
                    .iter()
                    .copied()
                    .filter(|op| !matches!(op, BinaryOp::And | BinaryOp::Or))
                    .collect::<Vec<_>>(),
            );
            prop_oneof![
                prop::collection::btree_map(
                    prop::sample::select(&FIELDS[..2]),
                    inner.clone(),
                    1..3
                )
                .prop_map(|fields| Expr::record(fields.into_iter())),
                list_of(inner.clone()),
                (inner.clone(), prop::sample::select(&FIELDS[..])).prop_map(|(e, f)| e.get(f)),
                inner.clone().prop_map(|operand| Expr::Not {
                    operand: Box::new(operand)
                }),
                (op, inner.clone(), inner.clone()).prop_map(|(op, l, r)| Expr::binary(op, l, r)),
                (any::<bool>(), inner.clone()).prop_map(|(and, r)| {
                    let (op, left) = if and {
                        (BinaryOp::And, true)
                    } else {
                        (BinaryOp::Or, false)
                    };
                    Expr::binary(op, Expr::Bool { value: left }, r)
                }),
                (name(), inner.clone(), inner.clone()).prop_map(|(name, value, body)| Expr::Let {
                    name,
                    value: Box::new(value),
                    body: Box::new(body),
                }),
                (name(), annotation(), inner.clone(), list_of(inner.clone())).prop_map(
                    |(name, ty, body, list)| Expr::Map {
                        func: Lambda {
                            param: Param { name, ty },
                            body: Box::new(body)
                        },
                        list: Box::new(list),
                    }
                ),
                (name(), inner.clone(), list_of(inner.clone())).prop_map(|(name, body, list)| {
                    Expr::Filter {
                        func: Lambda {
                            param: Param { name, ty: None },
                            body: Box::new(body),
                        },
                        list: Box::new(list),
                    }
                }),
                (
                    name(),
                    name(),
                    inner.clone(),
                    inner.clone(),
                    list_of(inner.clone())
                )
                    .prop_map(|(acc, item, body, init, list)| Expr::Fold {
                        func: Lambda2 {
                            acc: Param {
                                name: acc,
                                ty: None
                            },
                            item: Param {
                                name: item,
                                ty: None
                            },
                            body: Box::new(body),
                        },
                        init: Box::new(init),
                        list: Box::new(list),
                    }),
                inner
                    .clone()
                    .prop_map(|cents| Expr::call("format_cents", Expr::record([("cents", cents)]))),
            ]
        })
        .boxed()
}

/// Arguments for `place`: mostly the right fields, sometimes not.
fn place_args() -> impl Strategy<Value = Expr> {
    let int = prop_oneof![3 => (0i64..50).prop_map(Expr::int), 1 => pure()];
    let note = prop_oneof![Just(Expr::Unit), Just(Expr::string("n")), pure()];
    (
        proptest::option::weighted(0.9, int.clone()),
        proptest::option::weighted(0.9, int),
        proptest::option::of(note),
        proptest::option::weighted(0.1, pure()),
    )
        .prop_map(|(id, amount, note, extra)| {
            let fields = [("id", id), ("amount", amount), ("note", note), ("x", extra)];
            Expr::record(fields.into_iter().filter_map(|(n, e)| Some((n, e?))))
        })
}

/// A plan: `let a = .. in let b = .. in` a pure body, or a `place` (or a
/// `traverse` of it) whose receipt the body reads as `a`; the `Err` branch
/// only runs when the arguments do not fit, a type error.
fn plan() -> impl Strategy<Value = Plan> {
    let body = prop_oneof![
        pure(),
        (place_args(), pure()).prop_map(|(args, body)| {
            Expr::match_(
                Step::Exec {
                    tool: "place".into(),
                    arg: Box::new(args),
                },
                "r",
                Expr::Let {
                    name: "a".into(),
                    value: Box::new(Expr::var("r")),
                    body: Box::new(body),
                },
                "e",
                Expr::var("e").get("message"),
            )
        }),
        (prop::collection::vec(place_args(), 1..3), pure()).prop_map(|(items, body)| {
            Expr::match_(
                Step::Traverse {
                    param: Param {
                        name: "o".into(),
                        ty: None,
                    },
                    body: Box::new(Step::Exec {
                        tool: "place".into(),
                        arg: Box::new(Expr::var("o")),
                    }),
                    list: Box::new(Expr::List { items }),
                },
                "r",
                Expr::Let {
                    name: "a".into(),
                    value: Box::new(Expr::var("r")),
                    body: Box::new(body),
                },
                "e",
                Expr::var("e").get("message"),
            )
        }),
    ];
    (pure(), pure(), body).prop_map(|(a, b, body)| {
        let bind = |name: &str, value: Expr, body: Expr| Expr::Let {
            name: name.into(),
            value: Box::new(value),
            body: Box::new(body),
        };
        // `a` and `b` are always bound: first to an Int and a String.
        let body = bind("a", a, bind("b", b, body));
        Plan::new(bind("a", Expr::int(1), bind("b", Expr::string("s"), body)))
    })
}

/// Whether a run stopped with a type error of the plan itself: what a sound
/// checker rules out. (A tool refusing `exec` arguments is the plan's `Err`
/// branch, a tool's error, and allowed.)
fn stopped_by_a_type_error(outcome: &Result<Value, RunError>) -> bool {
    match outcome {
        Err(
            RunError::TypeMismatch { .. }
            | RunError::MissingField { .. }
            | RunError::Unbound { .. },
        ) => true,
        Err(RunError::CallFailed { error, .. }) => matches!(
            **error,
            ToolError::Deserialization { .. } | ToolError::InvalidArgs { .. }
        ),
        _ => false,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

    #[test]
    fn a_plan_that_checks_never_stops_with_a_type_error(plan in plan()) {
        let toolbox = oracle_toolbox();
        for plan in [plan.clone(), Plan::new(erase(&plan.body))] {
            if check(&plan, &toolbox).is_ok() {
                let run = block_on(Interpreter::new(&toolbox).run(&plan)).unwrap();
                prop_assert!(
                    !stopped_by_a_type_error(&run.outcome),
                    "accepted, then a type error at run time:\n{}\n{:?}", plan, run.outcome
                );
            }
        }
    }
}

#[test]
fn the_checker_refuses_every_generated_plan_that_would_stop_with_a_type_error() {
    // Soundness alone is easy (refuse everything): `well_typed_plans_pass_and_run`
    // shows that it is not what the checker does.
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let toolbox = oracle_toolbox();
    let mut runner = TestRunner::deterministic();
    let mut failing = 0;
    for _ in 0..400 {
        let plan = plan().new_tree(&mut runner).unwrap().current();
        // Run without the type check: the interpreter's own checks show
        // what the plan does.
        let Ok(run) = block_on(Interpreter::new(&toolbox).__run_without_type_check(&plan)) else {
            continue;
        };
        if stopped_by_a_type_error(&run.outcome) {
            failing += 1;
            assert!(
                check(&plan, &toolbox).is_err(),
                "accepted a plan that fails:\n{plan}"
            );
        }
    }
    assert!(failing > 100, "{failing}");
}

// Plans well typed by construction: every expression is built for a type
// (Int, Bool, String, [Int], a receipt record), from literals, variables in
// scope, operators, `let`, `if`, `match` on `exec`, `call`, `map`,
// `filter`, `fold` and `traverse`. The checker must accept each, and its
// run must end without a type error.

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Int,
    Bool,
    Str,
    Ints,
}

type Scope = Vec<(String, Kind)>;

fn variable(scope: &Scope, kind: Kind) -> Option<BoxedStrategy<Expr>> {
    let names: Vec<String> = scope
        .iter()
        .filter(|(_, k)| *k == kind)
        .map(|(n, _)| n.clone())
        .collect();
    (!names.is_empty()).then(|| prop::sample::select(names).prop_map(Expr::var).boxed())
}

/// An expression of `kind` over the variables in `scope`; with `effects`,
/// it may `exec` tools (not inside a `map`/`filter`/`fold` callback).
fn typed(kind: Kind, scope: Scope, depth: u32, effects: bool) -> BoxedStrategy<Expr> {
    let literal = match kind {
        Kind::Int => (-5i64..50).prop_map(Expr::int).boxed(),
        Kind::Bool => any::<bool>().prop_map(|value| Expr::Bool { value }).boxed(),
        Kind::Str => prop::sample::select(vec!["a", "b c", ""])
            .prop_map(Expr::string)
            .boxed(),
        Kind::Ints => prop::collection::vec((0i64..9).prop_map(Expr::int), 0..4)
            .prop_map(|items| Expr::List { items })
            .boxed(),
    };
    let leaf = match variable(&scope, kind) {
        Some(var) => prop_oneof![literal, var].boxed(),
        None => literal,
    };
    if depth == 0 {
        return leaf;
    }
    let d = depth - 1;
    let sub = |k: Kind| typed(k, scope.clone(), d, effects);
    // A name bound again shadows the outer one.
    let with = |name: &str, k: Kind| {
        let mut inner = scope.clone();
        inner.retain(|(n, _)| n != name);
        inner.push((name.to_owned(), k));
        inner
    };
    let bin = |op: BinaryOp, a: Kind, b: Kind| {
        (sub(a), sub(b))
            .prop_map(move |(l, r)| Expr::binary(op, l, r))
            .boxed()
    };
    let if_ = (sub(Kind::Bool), sub(kind), sub(kind))
        .prop_map(|(c, t, e)| Expr::If {
            cond: Box::new(c),
            then: Box::new(t),
            otherwise: Box::new(e),
        })
        .boxed();
    let let_ = {
        let value_kind = prop::sample::select(vec![Kind::Int, Kind::Str, Kind::Ints]);
        let scope = scope.clone();
        value_kind
            .prop_flat_map(move |k| {
                let mut inner = scope.clone();
                inner.retain(|(n, _)| n != "v");
                inner.push(("v".to_owned(), k));
                (
                    typed(k, scope.clone(), d, effects),
                    typed(kind, inner, d, effects),
                )
            })
            .prop_map(|(value, body)| Expr::Let {
                name: "v".into(),
                value: Box::new(value),
                body: Box::new(body),
            })
            .boxed()
    };
    // `match exec tool place {..} { Ok(r) => <kind, with r.cents> , Err(e) => <kind> }`
    let exec = {
        let ok_scope = {
            let mut inner = with("cents", Kind::Int);
            inner.retain(|(n, _)| n != "tx");
            inner.push(("tx".to_owned(), Kind::Str));
            inner
        };
        (sub(Kind::Int), typed(kind, ok_scope, d, effects), sub(kind))
            .prop_map(|(amount, ok, err)| {
                let ok = Expr::Let {
                    name: "cents".into(),
                    value: Box::new(Expr::var("r").get("cents")),
                    body: Box::new(Expr::Let {
                        name: "tx".into(),
                        value: Box::new(Expr::var("r").get("tx_id")),
                        body: Box::new(ok),
                    }),
                };
                Expr::match_(
                    Step::Exec {
                        tool: "place".into(),
                        arg: Box::new(Expr::record([
                            ("id", Expr::int(1)),
                            ("amount", amount),
                            ("note", Expr::Unit),
                        ])),
                    },
                    "r",
                    ok,
                    "e",
                    err,
                )
            })
            .boxed()
    };
    let specific = match kind {
        Kind::Int => prop_oneof![
            bin(BinaryOp::Add, Kind::Int, Kind::Int),
            bin(BinaryOp::Mul, Kind::Int, Kind::Int),
            bin(BinaryOp::Div, Kind::Int, Kind::Int),
            // fold (fn acc, x => acc + <Int with acc, x>) <Int> <[Int]>
            (
                sub(Kind::Int),
                typed(
                    Kind::Int,
                    {
                        let mut s = with("acc", Kind::Int);
                        s.retain(|(n, _)| n != "x");
                        s.push(("x".into(), Kind::Int));
                        s
                    },
                    d,
                    false
                ),
                sub(Kind::Ints)
            )
                .prop_map(|(init, step, list)| Expr::Fold {
                    func: Lambda2 {
                        acc: Param {
                            name: "acc".into(),
                            ty: None
                        },
                        item: Param {
                            name: "x".into(),
                            ty: None
                        },
                        body: Box::new(Expr::binary(BinaryOp::Add, Expr::var("acc"), step)),
                    },
                    init: Box::new(init),
                    list: Box::new(list),
                }),
        ]
        .boxed(),
        Kind::Bool => prop_oneof![
            bin(BinaryOp::Lt, Kind::Int, Kind::Int),
            bin(BinaryOp::Eq, Kind::Str, Kind::Str),
            bin(BinaryOp::And, Kind::Bool, Kind::Bool),
            bin(BinaryOp::Or, Kind::Bool, Kind::Bool),
            sub(Kind::Bool).prop_map(|b| Expr::Not {
                operand: Box::new(b)
            }),
        ]
        .boxed(),
        Kind::Str => prop_oneof![
            bin(BinaryOp::Concat, Kind::Str, Kind::Str),
            sub(Kind::Int)
                .prop_map(|cents| Expr::call("format_cents", Expr::record([("cents", cents)]))),
        ]
        .boxed(),
        Kind::Ints => prop_oneof![
            prop::collection::vec(sub(Kind::Int), 0..4).prop_map(|items| Expr::List { items }),
            (
                typed(Kind::Int, with("n", Kind::Int), d, false),
                sub(Kind::Ints)
            )
                .prop_map(|(body, list)| Expr::Map {
                    func: Lambda {
                        param: Param {
                            name: "n".into(),
                            ty: None
                        },
                        body: Box::new(body)
                    },
                    list: Box::new(list),
                }),
            (
                typed(Kind::Bool, with("n", Kind::Int), d, false),
                sub(Kind::Ints)
            )
                .prop_map(|(keep, list)| Expr::Filter {
                    func: Lambda {
                        param: Param {
                            name: "n".into(),
                            ty: None
                        },
                        body: Box::new(keep)
                    },
                    list: Box::new(list),
                }),
            // match traverse (fn n => exec tool place {..}) <[Int]> { Ok(rs) => map (fn r => r.cents) rs, Err(e) => [] }
            // (in a callback, where no tool runs, just the list)
            sub(Kind::Ints).prop_map(move |list| if !effects {
                list
            } else {
                Expr::match_(
                    Step::Traverse {
                        param: Param {
                            name: "n".into(),
                            ty: None,
                        },
                        body: Box::new(Step::Exec {
                            tool: "place".into(),
                            arg: Box::new(Expr::record([
                                ("id", Expr::var("n")),
                                ("amount", Expr::var("n")),
                                ("note", Expr::Unit),
                            ])),
                        }),
                        list: Box::new(list),
                    },
                    "rs",
                    Expr::Map {
                        func: Lambda {
                            param: Param {
                                name: "r".into(),
                                ty: None,
                            },
                            body: Box::new(Expr::var("r").get("cents")),
                        },
                        list: Box::new(Expr::var("rs")),
                    },
                    "e",
                    Expr::List { items: vec![] },
                )
            }),
        ]
        .boxed(),
    };
    if effects {
        prop_oneof![2 => leaf, 3 => specific, 1 => if_, 1 => let_, 1 => exec].boxed()
    } else {
        prop_oneof![2 => leaf, 3 => specific, 1 => if_, 1 => let_].boxed()
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn well_typed_plans_pass_and_run(
        body in prop::sample::select(vec![Kind::Int, Kind::Bool, Kind::Str, Kind::Ints])
            .prop_flat_map(|kind| typed(kind, Vec::new(), 4, true))
    ) {
        let toolbox = oracle_toolbox();
        let plan = Plan::new(body);
        prop_assert!(check(&plan, &toolbox).is_ok(), "refused a well-typed plan:\n{}\n{}", plan, check(&plan, &toolbox).unwrap_err());
        let run = block_on(Interpreter::new(&toolbox).run(&plan)).unwrap();
        prop_assert!(!stopped_by_a_type_error(&run.outcome), "{}\n{:?}", plan, run.outcome);
    }
}

/// Whether a part of `ty` is not known to the checker.
fn has_any(ty: &Ty) -> bool {
    match ty {
        Ty::Any => true,
        Ty::List(of) | Ty::Nullable(of) => has_any(of),
        Ty::Record(record) => record.fields.iter().any(|f| has_any(&f.ty)),
        _ => false,
    }
}

/// A receipt read back, the way a task would ask for one.
#[derive(Debug, serde::Deserialize, JsonSchema)]
#[allow(dead_code)] // the fields are read by serde only
struct ReceiptRead {
    tx_id: String,
    cents: i64,
    note: Option<String>,
}

/// Runs `plan` to a `T` when the check says it gives one: then the value
/// must read into `T` unless a part of its type is unknown (what
/// `Returns::check` lets through); gives whether it was accepted.
fn reads_as<T: serde::de::DeserializeOwned + JsonSchema + std::fmt::Debug>(
    plan: &Plan,
    toolbox: &Toolbox,
    ty: &Ty,
) -> Result<bool, TestCaseError> {
    match block_on(Interpreter::new(toolbox).run_as::<T>(plan)) {
        Ok(run) => {
            if let Err(RunError::OutcomeType { error, .. }) = &run.outcome {
                prop_assert!(
                    has_any(ty),
                    "checked as a {}, then did not read: {error}\n{plan}",
                    std::any::type_name::<T>()
                );
            }
            Ok(true)
        }
        Err(PlanError::TypeErrors(errors)) => {
            prop_assert!(
                errors.iter().all(|e| e.kind == TypeErrorKind::Returns),
                "{errors:?}"
            );
            Ok(false)
        }
        Err(other) => Err(TestCaseError::fail(format!("{other}"))),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// A plan held to a Rust type before it runs reads into it after: the
    /// required type is as sound as the rest of the check. And a
    /// well-typed plan of each kind is accepted as its Rust type.
    #[test]
    fn a_plan_checked_as_a_rust_type_reads_into_it(
        (kind, body) in prop::sample::select(vec![Kind::Int, Kind::Bool, Kind::Str, Kind::Ints])
            .prop_flat_map(|kind| (Just(kind), typed(kind, Vec::new(), 4, true)))
    ) {
        let toolbox = oracle_toolbox();
        let plan = Plan::new(body);
        let ty = check(&plan, &toolbox).unwrap();
        let accepted = [
            reads_as::<i64>(&plan, &toolbox, &ty)?,
            reads_as::<bool>(&plan, &toolbox, &ty)?,
            reads_as::<String>(&plan, &toolbox, &ty)?,
            reads_as::<Vec<i64>>(&plan, &toolbox, &ty)?,
        ];
        let own = match kind { Kind::Int => 0, Kind::Bool => 1, Kind::Str => 2, Kind::Ints => 3 };
        prop_assert!(accepted[own], "refused as its own type ({kind:?}):\n{plan}");
        reads_as::<f64>(&plan, &toolbox, &ty)?;
        reads_as::<Option<i64>>(&plan, &toolbox, &ty)?;
        reads_as::<Vec<String>>(&plan, &toolbox, &ty)?;
        reads_as::<ReceiptRead>(&plan, &toolbox, &ty)?;
        prop_assert!(reads_as::<serde_json::Value>(&plan, &toolbox, &ty)?);
    }

    /// The same over mostly ill-typed plans, and their erased twins (every
    /// part's type unknown): whatever the check lets through reads.
    #[test]
    fn whatever_checks_as_a_rust_type_reads_into_it(plan in plan()) {
        let toolbox = oracle_toolbox();
        for plan in [plan.clone(), Plan::new(erase(&plan.body))] {
            let Ok(ty) = check(&plan, &toolbox) else { continue };
            reads_as::<i64>(&plan, &toolbox, &ty)?;
            reads_as::<String>(&plan, &toolbox, &ty)?;
            reads_as::<Vec<i64>>(&plan, &toolbox, &ty)?;
            reads_as::<Option<String>>(&plan, &toolbox, &ty)?;
            reads_as::<ReceiptRead>(&plan, &toolbox, &ty)?;
        }
    }
}

#[derive(Serialize, serde::Deserialize, JsonSchema)]
struct Stamp {
    #[serde(rename(serialize = "txId", deserialize = "tx_id"))]
    tx_id: String,
    #[serde(skip_deserializing)]
    issued_by: String,
}

/// Issue a receipt.
#[tool(effects = Pure)]
fn issue_receipt() -> Stamp {
    Stamp {
        tx_id: "tx_1".into(),
        issued_by: "bot".into(),
    }
}

#[test]
fn output_types_are_read_as_they_serialize() {
    // The output schema describes the JSON the tool writes: the fields under
    // their serialized names, `skip_deserializing` ones included.
    let toolbox = Toolbox::builder().tool(IssueReceipt).build().unwrap();
    let plan =
        Plan::parse("let r = call tool issue_receipt {} in r.txId ++ \" by \" ++ r.issued_by")
            .unwrap();
    let run = block_on(Interpreter::new(&toolbox).run(&plan)).unwrap();
    assert_eq!(run.outcome, Ok(Value::String("tx_1 by bot".into())));
}

#[derive(Serialize, JsonSchema)]
enum Method {
    Card { last4: String },
}

#[derive(Serialize, JsonSchema)]
struct Payment {
    id: String,
    #[serde(flatten)]
    method: Method,
}

#[derive(Serialize, JsonSchema)]
struct Leg {
    a: i64,
}

#[derive(Serialize, JsonSchema)]
#[serde(tag = "type")]
enum Trip {
    One(Leg),
}

/// Find a payment.
#[tool(effects = Read)]
fn find_payment(id: String) -> Payment {
    Payment {
        id,
        method: Method::Card {
            last4: "1234".into(),
        },
    }
}

/// Find a trip.
#[tool(effects = Read)]
fn find_trip(id: String) -> Trip {
    let _ = id;
    Trip::One(Leg { a: 1 })
}

#[test]
fn fields_beside_a_combinator_are_the_fields_every_value_has() {
    // schemars writes a flattened enum as `properties` beside `oneOf`, and a
    // tagged newtype variant as `properties` beside `$ref`: the value has
    // the fields listed (and the `$ref`'d record's), which can be read, and
    // maybe a variant's, which cannot: only some values have them.
    let toolbox = Toolbox::builder()
        .tool(FindPayment)
        .tool(FindTrip)
        .build()
        .unwrap();
    for (text, expected) in [
        (
            r#"match exec tool find_payment {id = "p"} { Ok(p) => p.id, Err(e) => e.message }"#,
            json!("p"),
        ),
        (
            r#"match exec tool find_trip {id = "t"} { Ok(t) => t.type, Err(e) => e.message }"#,
            json!("One"),
        ),
        (
            r#"match exec tool find_trip {id = "t"} { Ok(t) => t.a + 1, Err(e) => 0 }"#,
            json!(2),
        ),
    ] {
        let plan = Plan::parse(text).unwrap();
        let run = block_on(Interpreter::new(&toolbox).run(&plan))
            .unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(run.outcome.unwrap().to_json(), Some(expected), "{text}");
    }
    let plan = Plan::parse(
        r#"match exec tool find_payment {id = "p"} { Ok(p) => p.Card.last4, Err(e) => e.message }"#,
    )
    .unwrap();
    let error = check(&plan, &toolbox).unwrap_err().to_string();
    assert!(
        error.contains("`p.Card`: field `Card` is not one of the known fields of {id: String, ..}, so it may be absent"),
        "{error}"
    );
}

/// The largest `u64`: past Int's range.
#[tool(effects = Read)]
fn big_count() -> u64 {
    u64::MAX
}

/// A ratio that is not a number: serde writes NaN as `null`.
#[tool(effects = Read)]
fn broken_ratio() -> f64 {
    f64::NAN
}

/// A run-time tool whose output breaks its declared schema, one whose
/// output is a record missing a required field, and one that writes `2` for
/// a Float.
fn misbehaving_tools() -> Toolbox {
    let declared = |name: &'static str, output: serde_json::Value, gives: serde_json::Value| {
        DynamicTool::new(name)
            .input_schema(json!({"type": "object", "properties": {}}))
            .output_schema(output)
            .handler(move |_| {
                let gives = gives.clone();
                async move { Ok(gives) }
            })
    };
    Toolbox::builder()
        .tool(BigCount)
        .tool(BrokenRatio)
        .dynamic(declared(
            "count_words",
            json!({"type": "integer"}),
            json!("twelve"),
        ))
        .dynamic(declared(
            "get_user",
            json!({"type": "object", "properties": {"id": {"type": "integer"}, "name": {"type": "string"}}, "required": ["id", "name"]}),
            json!({"id": 7}),
        ))
        .dynamic(declared(
            "get_price",
            json!({"type": "number", "format": "double"}),
            json!(2),
        ))
        .build()
        .unwrap()
}

#[test]
fn an_output_that_breaks_its_declared_type_is_the_tools_error_not_a_type_error_later() {
    let toolbox = misbehaving_tools();
    let run = |text: &str| {
        let plan = Plan::parse(text).unwrap();
        block_on(Interpreter::new(&toolbox).run(&plan)).expect("the plan checks")
    };
    // Each plan checks (the schemas say Int, Float, a record), uses the
    // value as that type, and has an `Err` branch: the misfit goes there,
    // with a message saying what came back.
    for (text, says) in [
        (
            r#"match exec tool big_count {} { Ok(n) => if n + 1 > 0 then "more" else "less", Err(e) => e.message }"#,
            "`output` is an integer out of Int's range, where its output type says Int",
        ),
        (
            r#"match exec tool broken_ratio {} { Ok(r) => if r < 1.0 then "small" else "large", Err(e) => e.message }"#,
            "`output` is null, where its output type says Float",
        ),
        (
            r#"match exec tool count_words {} { Ok(n) => if n + 1 > 0 then "more" else "less", Err(e) => e.message }"#,
            "`output` is a String, where its output type says Int",
        ),
        (
            "match exec tool get_user {} { Ok(u) => u.name, Err(e) => e.message }",
            "`output.name` is missing, where its output type says String",
        ),
    ] {
        let outcome = run(text).outcome.unwrap_or_else(|e| panic!("{text}: {e}"));
        let Value::String(message) = &outcome else {
            panic!("{text}: the Err branch was not taken: {outcome:?}")
        };
        assert!(message.contains(says), "{text}: {message}");
        assert!(
            message.contains("does not fit the output type its schema declares"),
            "{message}"
        );
    }
    // The one conversion: an integer where a Float is due is that Float
    // (compared with a Float, an Int would stop the plan).
    let compared = run("match exec tool get_price {} { Ok(p) => p < 2.5, Err(e) => false }");
    assert_eq!(compared.outcome.unwrap(), Value::Bool(true));
    assert!(
        matches!(compared.trace[0].result(), CallResult::Ok(output) if *output == Value::Float(2.0))
    );
    let price = run("match exec tool get_price {} { Ok(p) => p, Err(e) => 0.0 }");
    assert_eq!(price.outcome.unwrap(), Value::Float(2.0));
}

#[derive(Debug, Serialize, serde::Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    Free,
    Pro,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Found {
    pub id: i64,
    /// Left out when there is none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Find a record; `ident` is an alias of `id`.
#[tool(effects = Read)]
fn find(#[serde(alias = "ident")] id: i64) -> Found {
    Found { id, note: None }
}

/// Set an account's tier.
#[tool(effects = Write)]
fn set_tier(tier: Tier) -> String {
    match tier {
        Tier::Free => "free".into(),
        Tier::Pro => "pro".into(),
    }
}

/// Each rule and refusal `plan::check`'s module docs state, one by one (the
/// classes of error are in `each_class_of_error_is_refused_...` above).
#[test]
fn the_rules_the_checkers_docs_state_hold() {
    let toolbox = Toolbox::builder()
        .tool(Opaque)
        .tool(Place)
        .tool(support::FormatCents)
        .tool(Find)
        .tool(SetTier)
        .build()
        .unwrap();
    let checks = |text: &str| {
        check(&Plan::parse(text).unwrap(), &toolbox).unwrap_or_else(|e| panic!("{text}\n{e}"))
    };
    let refused = |text: &str| -> String {
        match check(&Plan::parse(text).unwrap(), &toolbox) {
            Err(PlanError::TypeErrors(errors)) => errors
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("\n"),
            other => panic!("{text}: {other:?}"),
        }
    };
    let run = |text: &str| block_on(Interpreter::new(&toolbox).run(&Plan::parse(text).unwrap()));
    // An unknown value, from a tool whose output is free-form JSON.
    let unknown = "(call tool opaque {v = 5})";

    // "the lists of `map`/`filter`/`fold`/`traverse`" are checked.
    for (text, message) in [
        (
            "filter (fn x => true) 5",
            "the list of `filter` `5`: `filter` goes over a list, found Int",
        ),
        (
            "fold (fn a, x => a) 0 \"abc\"",
            "the list of `fold` `\"abc\"`: `fold` goes over a list, found String",
        ),
        (
            "match traverse (fn x => exec tool place {id = x, amount = 1}) 5 { Ok(r) => 1, Err(e) => 0 }",
            "the list of `traverse` `5`: `traverse` goes over a list, found Int",
        ),
    ] {
        assert_eq!(refused(text), message, "{text}");
    }
    // "the arguments of `exec` and `call` (unknown, missing and mistyped
    // fields)": `call`'s unknown and missing too.
    assert_eq!(
        refused("call tool format_cents {cents = 1, currency = \"EUR\"}"),
        "argument `currency` of `call tool format_cents`: `format_cents` takes no argument `currency`; its arguments are: `cents`"
    );
    assert_eq!(
        refused("call tool format_cents {}"),
        "`call tool format_cents`: missing argument `cents` of type Int; add `cents = ...` to the arguments"
    );

    // "`[]`'s elements are `Nothing`: no value, so they join any type."
    assert_eq!(
        checks("[[], [1]]"),
        Ty::List(Box::new(Ty::List(Box::new(Ty::Int))))
    );
    assert_eq!(
        checks("if true then [] else [\"a\"]"),
        Ty::List(Box::new(Ty::String))
    );
    // "a step that wraps its accumulator ... is refused, unless the
    // accumulator's type is `Any`, which wrapped is `Any` still".
    assert!(refused("fold (fn acc, x => [acc]) 0 [1]").contains("the step of `fold` gives a List"));
    assert_eq!(
        checks(&format!("fold (fn acc, x => [acc]) {unknown} [1]")),
        Ty::Any
    );

    // "An `Any` can be returned, compared with `==`, put in a record and
    // passed to `exec` (the tool checks it: a misfit is its `Err` branch),
    // but not used as one kind of value" (nor passed to `call`, below).
    assert_eq!(checks(unknown), Ty::Any);
    checks(&format!("{unknown} == 5"));
    checks(&format!("{{v = {unknown}}}"));
    let misfit = "match exec tool place {id = (call tool opaque {v = \"x\"}), amount = 1} \
                  { Ok(r) => \"placed\", Err(e) => e.kind }";
    checks(misfit);
    assert_eq!(
        run(misfit).unwrap().outcome,
        Ok(Value::String("deserialization".into()))
    );
    assert!(refused(&format!("{unknown} + 1")).contains("found Any + Int"));

    // "`call` arguments must fit for every value; `exec` arguments are
    // refused only when they surely do not fit."
    assert_eq!(
        refused(&format!("call tool format_cents {{cents = {unknown}}}")),
        "argument `cents` of `call tool format_cents`: expected Int, found Any"
    );
    checks(&format!(
        "match exec tool place {{id = {unknown}, amount = 1}} {{ Ok(r) => r.tx_id, Err(e) => e.message }}"
    ));

    // "A field is read only when every value has it: listed and required":
    // a field the tool leaves out when empty is not.
    assert_eq!(
        refused("match exec tool find {id = 1} { Ok(f) => f.note, Err(e) => () }"),
        "`f.note`: field `note` of {id: Int, note?: String?} may be absent (the tool leaves it out when it has no value), so a plan cannot read it"
    );

    // "A callback's annotation is checked against the list's elements, not
    // trusted: the parameter has the elements' type": a narrower
    // annotation that the elements fit still reads every field they have.
    assert_eq!(
        checks("map (fn o: {id: Int} => o.amount) [{id = 1, amount = 2}]"),
        Ty::List(Box::new(Ty::Int))
    );
    // "(the interpreter does not check annotations)": unchecked, a wrong
    // one runs as if it were not there.
    let wrong = Plan::parse("map (fn o: {id: String} => o.id + 1) [{id = 1}]").unwrap();
    assert!(check(&wrong, &toolbox).is_err());
    let unchecked = block_on(Interpreter::new(&toolbox).__run_without_type_check(&wrong)).unwrap();
    assert_eq!(unchecked.outcome.unwrap().to_string(), "[2]");

    // "code a run may not reach is checked (`if false then "a" + 1 else 0`,
    // the right side of `and`/`or`)".
    let never =
        "`\"a\" + 1`: `+` needs an Int on both sides, found String + Int; join text with `++`";
    assert_eq!(refused("if false then \"a\" + 1 else 0"), never);
    assert_eq!(refused("true or \"a\" + 1 == 1"), never);
    assert_eq!(refused("false and \"a\" + 1 == 1"), never);

    // "argument names are the ones the schema shows, not
    // `#[serde(alias)]`es": the toolbox would take `ident`, the checker not.
    assert_eq!(
        block_on(toolbox.call("find", r#"{"ident": 3}"#))
            .unwrap()
            .json(),
        r#"{"id":3}"#
    );
    assert!(
        refused("match exec tool find {ident = 3} { Ok(f) => f.id, Err(e) => 0 }")
            .starts_with("argument `ident` of `exec tool find`: `find` takes no argument `ident`")
    );

    // "integer ranges and string enums are not types here": a string out of
    // the enum checks, and the `exec` takes the `Err` branch (the `u8` case
    // is the module's doc example).
    let gold = "match exec tool set_tier {tier = \"gold\"} { Ok(t) => t, Err(e) => e.kind }";
    assert_eq!(checks(gold), Ty::String);
    assert_eq!(
        run(gold).unwrap().outcome,
        Ok(Value::String("deserialization".into()))
    );
}
