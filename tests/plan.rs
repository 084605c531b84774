//! Running plans: the λ-Tool support agent through its four paths, traverse's
//! short-circuit, the pure combinators, refusals before anything runs, the
//! approval hook, and the preview.

use std::sync::Mutex;

use futures::executor::block_on;
use serde_json::json;
use typed_tools::effect::EffectSet;
use typed_tools::plan::{
    CallResult, Decision, Expr, Interpreter, Lambda, Limits, Plan, PlanError, Preview, RunError,
    Runs, Value,
};
use typed_tools::{tool, Toolbox};

mod support;

use support::{calls, toolbox, SUPPORT_AGENT};

fn lookup() -> (&'static str, serde_json::Value) {
    ("lookup_account", json!({"id": "cust_12345"}))
}
fn refund() -> (&'static str, serde_json::Value) {
    (
        "issue_refund",
        json!({"account_id": "cust_12345", "amount": 1299}),
    )
}
fn reply() -> (&'static str, serde_json::Value) {
    (
        "send_reply",
        json!({"to": "ana@example.com", "body": "tx_cust_12345_1299"}),
    )
}

fn run_support_agent(
    fail: Option<&'static str>,
) -> (Value, Vec<(&'static str, serde_json::Value)>) {
    let (toolbox, shop) = toolbox(fail);
    let plan = Plan::parse(SUPPORT_AGENT).unwrap();
    let run = block_on(Interpreter::new(&toolbox).run(&plan)).unwrap();
    // The trace and what the tools saw agree.
    let traced: Vec<_> = run
        .trace
        .iter()
        .map(|c| (c.tool().to_owned(), c.args().to_json().unwrap()))
        .collect();
    let seen: Vec<_> = calls(&shop)
        .into_iter()
        .map(|(t, a)| (t.to_owned(), a))
        .collect();
    assert_eq!(traced, seen);
    for call in &run.trace {
        assert_eq!(
            matches!(call.result(), CallResult::Err(_)),
            Some(call.tool()) == fail
        );
    }
    (run.outcome.unwrap(), calls(&shop))
}

#[test]
fn support_agent_all_succeed() {
    let (outcome, calls) = run_support_agent(None);
    assert_eq!(
        outcome,
        Value::String("refund processed and customer notified".into())
    );
    assert_eq!(calls, [lookup(), refund(), reply()]);
}

#[test]
fn support_agent_lookup_fails() {
    let (outcome, calls) = run_support_agent(Some("lookup_account"));
    assert_eq!(outcome, Value::String("account lookup failed".into()));
    assert_eq!(calls, [lookup()]);
}

#[test]
fn support_agent_refund_fails() {
    let (outcome, calls) = run_support_agent(Some("issue_refund"));
    assert_eq!(
        outcome,
        Value::String("refund failed, customer not refunded".into())
    );
    assert_eq!(calls, [lookup(), refund()]);
}

#[test]
fn support_agent_reply_fails() {
    let (outcome, calls) = run_support_agent(Some("send_reply"));
    assert_eq!(
        outcome,
        Value::String("refund succeeded but notification failed".into())
    );
    assert_eq!(calls, [lookup(), refund(), reply()]);
}

#[test]
fn the_err_branch_sees_the_error_as_a_record() {
    let (toolbox, _) = toolbox(Some("issue_refund"));
    let plan = Plan::parse(
        r#"match exec tool issue_refund {account_id = "a", amount = 5} {
  Ok(r) => {tool = "issue_refund", kind = "ok", message = r.tx_id},
  Err(e) => e
}"#,
    )
    .unwrap();
    let run = block_on(Interpreter::new(&toolbox).run(&plan)).unwrap();
    assert_eq!(
        run.outcome.unwrap().to_string(),
        r#"{tool = "issue_refund", kind = "execution", message = "tool `issue_refund` failed: issue_refund is down"}"#
    );
    // Arguments of the wrong shape are the tool's Err too, not a crash: the
    // checker refuses these, so they are run without it, as arguments of a
    // type it does not know (a tool's `Any` output) reach the tool.
    let plan = Plan::parse(
        r#"match traverse (fn id => exec tool issue_refund {account_id = id, amount = 5}) [1] { Ok(r) => "ok", Err(e) => e.kind }"#,
    )
    .unwrap();
    let run = block_on(Interpreter::new(&toolbox).__run_without_type_check(&plan)).unwrap();
    assert_eq!(run.outcome, Ok(Value::String("deserialization".into())));
}

#[test]
fn traverse_stops_at_the_first_err() {
    let (toolbox, shop) = toolbox(None);
    let plan = Plan::parse(
        r#"match traverse (fn o: {id: Int, amount: Int} => exec tool charge o)
  [{id = 1, amount = 100}, {id = 2, amount = -5}, {id = 3, amount = 7}] {
  Ok(receipts) => "done",
  Err(e) => e.message
}"#,
    )
    .unwrap();
    let run = block_on(Interpreter::new(&toolbox).run(&plan)).unwrap();
    assert_eq!(
        run.outcome,
        Ok(Value::String(
            "tool `charge` failed: order 2: negative amount".into()
        ))
    );
    assert_eq!(
        calls(&shop),
        [
            ("charge", json!({"id": 1, "amount": 100})),
            ("charge", json!({"id": 2, "amount": -5}))
        ]
    );
    assert_eq!(run.trace.len(), 2);

    let plan = Plan::parse(
        r#"match traverse (fn o => exec tool charge o) [{id = 4, amount = 1}, {id = 5, amount = 2}] {
  Ok(receipts) => receipts,
  Err(e) => [e.message]
}"#,
    )
    .unwrap();
    let run = block_on(Interpreter::new(&toolbox).run(&plan)).unwrap();
    assert_eq!(run.outcome.unwrap().to_string(), r#"["tx_4", "tx_5"]"#);
}

/// An inner callback reading the outer one's element: two lists walked at once.
const NESTED_MAP: &str = "map (fn row => map (fn x => x + row.base) row.items) [{base = 10, items = [1, 2]}, {base = 20, items = [3]}]";
/// A fold inside a fold's callback, the outer element and accumulator read inside.
const NESTED_FOLD: &str = "fold (fn acc, row => fold (fn a, x => a + x * row.k) acc row.xs) 0 [{k = 2, xs = [1, 2]}, {k = 3, xs = [4]}]";
/// `filter` keeps the elements themselves (records here), in order.
const KEPT_RECORDS: &str =
    "filter (fn r => r.keep) [{keep = true, n = 1}, {keep = false, n = 2}, {keep = true, n = 3}]";

#[test]
fn nested_callbacks_read_each_lists_own_element() {
    assert_eq!(eval(NESTED_MAP).unwrap().to_string(), "[[11, 12], [23]]");
    assert_eq!(eval(NESTED_FOLD), Ok(Value::Int(18)));
    assert_eq!(
        eval(KEPT_RECORDS).unwrap().to_string(),
        "[{keep = true, n = 1}, {keep = true, n = 3}]"
    );
    // The same walks with tool calls: a traverse inside a traverse.
    let toolbox = Toolbox::builder().tool(EchoInt).build().unwrap();
    let plan = Plan::parse(
        "match traverse (fn row => traverse (fn x => exec tool echo_int {v = x + row.base}) row.items) [{base = 10, items = [1, 2]}, {base = 20, items = [3]}] { Ok(all) => all, Err(e) => [] }",
    )
    .unwrap();
    let run = block_on(Interpreter::new(&toolbox).run(&plan)).unwrap();
    assert_eq!(run.outcome.unwrap().to_string(), "[[11, 12], [23]]");
    let args: Vec<String> = run.trace.iter().map(|c| c.args().to_string()).collect();
    assert_eq!(args, ["{v = 11}", "{v = 12}", "{v = 23}"]);
}

fn eval(text: &str) -> Result<Value, RunError> {
    let (toolbox, _) = toolbox(None);
    let plan = Plan::parse(text).unwrap();
    let run = block_on(Interpreter::new(&toolbox).run(&plan)).unwrap();
    run.outcome
}

#[test]
fn map_filter_fold_and_pure_operations() {
    assert_eq!(
        eval("fold (fn acc, x => acc + x) 0 (map (fn n => n * 10) (filter (fn n => n % 2 == 1) [1, 2, 3, 4, 5]))"),
        Ok(Value::Int(90))
    );
    assert_eq!(
        eval(
            r#"let tier = "pro" in if tier == "pro" and not (3 > 4) then "vip: " ++ tier else "basic""#
        ),
        Ok(Value::String("vip: pro".into()))
    );
    assert_eq!(
        eval("[7 / 2, 7 % 2, 0 - 3]").unwrap().to_string(),
        "[3, 1, -3]"
    );
    assert_eq!(
        eval("[2 <= 2, \"a\" < \"b\", 1.5 > 0.5]")
            .unwrap()
            .to_string(),
        "[true, true, true]"
    );
    assert_eq!(
        eval("{a = 1}.a != 2 or 1 / 0 == 0"),
        Ok(Value::Bool(true)),
        "`or` short-circuits"
    );
    // Run-time errors of the plan itself are values, not panics.
    assert_eq!(eval("1 / 0"), Err(RunError::DivisionByZero));
    assert_eq!(
        eval("9223372036854775807 + 1"),
        Err(RunError::Overflow {
            op: typed_tools::plan::BinaryOp::Add
        })
    );
    // Type errors are refused before the run (tests/plan_check.rs has the
    // rules); the interpreter still reports them for values of unknown type.
    assert_eq!(
        refused(r#"{id = "x"}.plan"#),
        "`{id = \"x\"}.plan`: field `plan` not found in record type {id: String}"
    );
    assert_eq!(
        refused("1 ++ \"a\""),
        "`1 ++ \"a\"`: `++` needs a String on both sides, found Int ++ String; to write a number as text, `call` a pure tool that formats it"
    );
    assert_eq!(
        refused("if 1 then 2 else 3"),
        "the condition `1`: `if` needs a Bool condition (compare with `==`, `<`, ...), found Int"
    );
    assert_eq!(
        refused("map (fn x => x) 5"),
        "the list of `map` `5`: `map` goes over a list, found Int"
    );
    assert_eq!(
        refused("x"),
        "`x`: variable `x` is not bound here; no variable is bound here"
    );
    // A list's elements have one type: a list of mixed elements is refused
    // before it could make a callback fail at run time.
    assert_eq!(
        refused(r#"map (fn r => r.plan) [{id = "x"}, 1]"#),
        "`[{id = \"x\"}, 1]`: the elements of a list have one type, found {id: String} and then Int (`1`); make them one type, or use a record to hold values of different types"
    );
    assert_eq!(
        refused(r#"map (fn v => v ++ "a") [1, "b"]"#),
        "`[1, \"b\"]`: the elements of a list have one type, found Int and then String (`\"b\"`); make them one type, or use a record to hold values of different types"
    );
    assert_eq!(
        refused("map (fn v => if v then 2 else 3) [1, true]"),
        "`[1, true]`: the elements of a list have one type, found Int and then Bool (`true`); make them one type, or use a record to hold values of different types"
    );
    assert_eq!(
        refused("map (fn v => map (fn x => x) v) [5, [1]]"),
        "`[5, [1]]`: the elements of a list have one type, found Int and then [Int] (`[1]`); make them one type, or use a record to hold values of different types"
    );
}

/// The one type error that refused `text`, as a model reads it; nothing ran.
fn refused(text: &str) -> String {
    let (toolbox, shop) = toolbox(None);
    let plan = Plan::parse(text).unwrap();
    let error = block_on(Interpreter::new(&toolbox).run(&plan)).unwrap_err();
    // A `PlanError` is a refusal: nothing ran (`RunError` is the other kind).
    assert!(calls(&shop).is_empty());
    let PlanError::TypeErrors(errors) = error else {
        panic!("{error}")
    };
    assert_eq!(errors.len(), 1, "{errors:?}");
    errors[0].to_string()
}

/// Returns its Int.
#[tool(effects = Pure)]
fn echo_int(v: i64) -> i64 {
    v
}

/// Returns its Float.
#[tool(effects = Pure)]
fn echo_float(v: f64) -> f64 {
    v
}

/// Returns its String.
#[tool(effects = Pure)]
fn echo_string(v: String) -> String {
    v
}

/// Returns its Bool.
#[tool(effects = Pure)]
fn echo_bool(v: bool) -> bool {
    v
}

/// `expr` with each literal replaced by a `call` of a pure tool that gives
/// it back, of the literal's own type (`echo_int`, ...): every expression
/// around it then holds a call, and runs through the interpreter's async
/// path instead of the pure one (callbacks included: a pure tool may be
/// called there), with the types the checker sees unchanged.
fn through_calls(expr: Expr) -> Expr {
    on_literals(expr, &|literal| {
        let echo = match &literal {
            Expr::Int { .. } => "echo_int",
            Expr::Float { .. } => "echo_float",
            Expr::String { .. } => "echo_string",
            Expr::Bool { .. } => "echo_bool",
            _ => return literal,
        };
        Expr::call(echo, Expr::record([("v", literal)]))
    })
}

/// `expr` with each literal replaced by what `f` makes of it, callbacks
/// included; nothing else changes.
fn on_literals(expr: Expr, f: &dyn Fn(Expr) -> Expr) -> Expr {
    let wrap = |e: Box<Expr>| Box::new(on_literals(*e, f));
    let callback = |mut func: Lambda| {
        func.body = wrap(func.body);
        func
    };
    match expr {
        Expr::Unit
        | Expr::Bool { .. }
        | Expr::Int { .. }
        | Expr::Float { .. }
        | Expr::String { .. } => f(expr),
        Expr::Record { fields } => Expr::Record {
            fields: fields
                .into_iter()
                .map(|(name, e)| (name, on_literals(e, f)))
                .collect(),
        },
        Expr::List { items } => Expr::List {
            items: items.into_iter().map(|e| on_literals(e, f)).collect(),
        },
        Expr::Get { of, field } => Expr::Get {
            of: wrap(of),
            field,
        },
        Expr::Let { name, value, body } => Expr::Let {
            name,
            value: wrap(value),
            body: wrap(body),
        },
        Expr::If {
            cond,
            then,
            otherwise,
        } => Expr::If {
            cond: wrap(cond),
            then: wrap(then),
            otherwise: wrap(otherwise),
        },
        Expr::Not { operand } => Expr::Not {
            operand: wrap(operand),
        },
        Expr::Binary { op, left, right } => Expr::Binary {
            op,
            left: wrap(left),
            right: wrap(right),
        },
        Expr::Map { func, list } => Expr::Map {
            func: callback(func),
            list: wrap(list),
        },
        Expr::Filter { func, list } => Expr::Filter {
            func: callback(func),
            list: wrap(list),
        },
        Expr::Fold {
            mut func,
            init,
            list,
        } => {
            func.body = wrap(func.body);
            Expr::Fold {
                func,
                init: wrap(init),
                list: wrap(list),
            }
        }
        other => other,
    }
}

#[test]
fn expressions_give_the_same_values_and_errors_with_and_without_calls_inside() {
    let toolbox = Toolbox::builder()
        .tool(EchoInt)
        .tool(EchoFloat)
        .tool(EchoString)
        .tool(EchoBool)
        .build()
        .unwrap();
    let interpreter = Interpreter::new(&toolbox);
    let texts = [
        "fold (fn acc, x => acc + x) 0 (map (fn n => n * 10) (filter (fn n => n % 2 == 1) [1, 2, 3, 4, 5]))",
        r#"let tier = "pro" in if tier == "pro" and not (3 > 4) then "vip: " ++ tier else "basic""#,
        "[7 / 2, 7 % 2, 0 - 3]",
        r#"[2 <= 2, "a" < "b", 1.5 > 0.5, 2 >= 3, 1.5 != 1.5, () == ()]"#,
        "{a = 1}.a != 2 or 1 / 0 == 0",
        "false and 1 / 0 == 0",
        r#"{a = 1, b = [1, (), 3], c = {d = 2.5, e = "x"}}"#,
        "let r = {a = {b = 2}} in [r.a.b, r.a.b * 3]",
        "(if true then {a = 1} else {a = 2}).a",
        r#"fold (fn acc, s => acc ++ s) "" ["a", "b"]"#,
        "1 / 0",
        "7 % 0",
        "9223372036854775807 + 1",
        "0 - 9223372036854775807 - 2",
        "9223372036854775807 * 2",
        r#"{id = "x"}.plan"#,
        "let r = {a = 1} in r.b",
        "let r = 1 in r.a",
        "5.a",
        r#"1 ++ "a""#,
        r#""a" ++ 1"#,
        r#"2 < "a""#,
        "true < false",
        "if 1 then 2 else 3",
        "not 3",
        "3 and true",
        "true and 3",
        "false or 3",
        "map (fn x => x) 5",
        "filter (fn x => x) [true, 1]",
        "filter (fn x => x) 3",
        "fold (fn a, x => a) 0 1",
        "fold (fn a, x => a + x) 0 [1, true]",
        "[1, x]",
        "let y = 2 in {a = y, b = z}",
        NESTED_MAP,
        NESTED_FOLD,
        KEPT_RECORDS,
    ];
    let mut compared = 0;
    for text in texts {
        let plan = Plan::parse(text).unwrap();
        // Run without the type check, so that the interpreter's own checks
        // (which a checked plan never meets) are compared too.
        let pure = plan.clone();
        let called = Plan::new(through_calls(plan.body.clone()));
        match (
            block_on(interpreter.__run_without_type_check(&pure)),
            block_on(interpreter.__run_without_type_check(&called)),
        ) {
            (Ok(pure), Ok(run)) => {
                assert!(pure.trace.is_empty());
                assert!(!run.trace.is_empty(), "{text}");
                assert_eq!(run.outcome, pure.outcome, "{text}");
                compared += 1;
            }
            // What the checker refuses either way (a field a record literal
            // lacks, an unbound variable) never runs.
            (Err(PlanError::TypeErrors(_)), Err(PlanError::TypeErrors(_))) => {}
            other => panic!("{text}: {other:?}"),
        }
    }
    assert!(compared >= 28, "{compared} of {} compared", texts.len());
}

static ORDERS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Order a quantity.
#[tool(effects = Pure)]
fn order(customer: String, quantity: u32, note: Option<String>) -> u32 {
    ORDERS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let _ = (customer, note);
    quantity
}

/// Keep any JSON.
#[tool(effects = Pure)]
fn keep(tree: serde_json::Value) -> bool {
    tree.is_array()
}

/// Arrays `levels` deep.
#[tool(effects = Pure)]
fn nested(levels: u32) -> serde_json::Value {
    (0..levels).fold(json!(1), |inner, _| json!([inner]))
}

#[test]
fn a_plan_call_gives_what_call_value_gives_and_runs_the_tool_once() {
    use std::sync::atomic::Ordering;
    use typed_tools::recover::Policy;
    use typed_tools::DynamicTool;

    let dynamic = || {
        DynamicTool::new("count")
            .input_schema(json!({
                "type": "object",
                "properties": {"n": {"type": "integer"}},
                "required": ["n"]
            }))
            .effects(EffectSet::PURE)
            .handler(|args| async move { Ok(args) })
    };
    let plain = Toolbox::builder()
        .tool(Order)
        .tool(Keep)
        .tool(Nested)
        .dynamic(dynamic())
        .build()
        .unwrap();
    // Recovery coerces and repairs argument text: it must still get text.
    let recovering = Toolbox::builder()
        .tool(Order)
        .tool(Keep)
        .tool(Nested)
        .dynamic(dynamic())
        .policy(Policy::recover())
        .build()
        .unwrap();
    let cases = [
        ("order", json!({"customer": "c", "quantity": 2})),
        (
            "order",
            json!({"customer": "c", "quantity": 2, "note": null}),
        ),
        ("order", json!({"customer": "c", "quantity": "2"})),
        ("order", json!({"customer": 42, "quantity": -1})),
        ("order", json!({"customer": "c"})),
        (
            "order",
            json!({"customer": "c", "quantity": 2, "extra": true}),
        ),
        ("order", json!({"customer": "c", "quantity": 1.5})),
        (
            "order",
            json!({"customer": "c", "quantity": 4_294_967_296_u64}),
        ),
        ("order", json!({})),
        ("order", json!([1, 2])),
        ("order", json!(["c", "d"])),
        ("order", json!(5)),
        ("order", json!("text")),
        ("order", json!(null)),
        ("keep", json!({"tree": [{"a": [2.5, null]}, {"a": []}]})),
        ("count", json!({"n": 1})),
        ("count", json!({"n": "x"})),
        ("count", json!({})),
        ("count", json!([1])),
    ];
    for toolbox in [&plain, &recovering] {
        let interpreter = Interpreter::new(toolbox);
        for (tool, args) in &cases {
            // The arguments as they are, run without the type check (which
            // refuses the wrong ones), so that wrong ones reach the tool.
            let text = format!(
                "match exec tool {tool} ({}) {{ Ok(x) => x, Err(e) => e }}",
                Value::from_json(args.clone())
            );
            let plan = Plan::parse(&text).unwrap();
            let before = ORDERS.load(Ordering::SeqCst);
            let run = block_on(interpreter.__run_without_type_check(&plan)).unwrap();
            let ran = ORDERS.load(Ordering::SeqCst) - before;
            let expected = match block_on(toolbox.call_value(tool, args)) {
                Ok(output) => CallResult::Ok(Value::from_json(output.to_value())),
                Err(error) => CallResult::Err(error),
            };
            assert_eq!(ORDERS.load(Ordering::SeqCst) - before - ran, ran, "{text}");
            assert!(ran <= 1, "{text}");
            assert_eq!(run.trace.len(), 1, "{text}");
            assert_eq!(&run.trace[0].args().to_json().unwrap(), args, "{text}");
            assert_eq!(*run.trace[0].result(), expected, "{text}");
        }
        // Arguments nested deeper than serde_json parses text (128 levels):
        // a tool's output 120 deep, wrapped in 10 more lists by the plan,
        // past the default depth limit (64), raised here.
        let interpreter = interpreter.limits(Limits::new().depth(200));
        for (tool, arg) in [("keep", "tree"), ("order", "quantity")] {
            for (levels, wraps) in [(90, 0), (99, 0), (120, 0), (120, 10)] {
                let wrapped = format!("{}d{}", "[".repeat(wraps), "]".repeat(wraps));
                let text = format!(
                    "match exec tool nested {{levels = {levels}}} {{ Ok(d) => match exec tool {tool} {{{arg} = {wrapped}}} {{ Ok(x) => x, Err(e) => e }}, Err(e) => e }}"
                );
                let plan = Plan::parse(&text).unwrap();
                let run = block_on(interpreter.__run_without_type_check(&plan)).unwrap();
                assert_eq!(run.trace.len(), 2, "{text}");
                let expected = match block_on(
                    toolbox.call(tool, &run.trace[1].args().to_json_text().unwrap()),
                ) {
                    Ok(output) => CallResult::Ok(Value::from_json(output.to_value())),
                    Err(error) => CallResult::Err(error),
                };
                assert_eq!(*run.trace[1].result(), expected, "{text}");
            }
        }
    }
}

#[test]
fn the_ok_binder_does_not_exist_in_the_err_branch() {
    let (toolbox, shop) = toolbox(Some("lookup_account"));
    let plan = Plan::parse(
        r#"match exec tool lookup_account {id = "c"} { Ok(account) => "ok", Err(e) => account.email }"#,
    )
    .unwrap();
    // Refused before the lookup runs.
    let error = block_on(Interpreter::new(&toolbox).run(&plan)).unwrap_err();
    assert_eq!(
        error.to_string(),
        "the plan does not type-check, nothing ran; fix it and resubmit:
- `account`: variable `account` is not bound here; `account` is the `Ok` binder of a `match` and exists only in its `Ok` branch: move what uses it there, or in the `Err` branch use the error (`{tool, kind, message}`); in scope: `e`"
    );
    assert!(calls(&shop).is_empty());
}

#[test]
fn missing_tools_and_disallowed_effects_are_refused_before_anything_runs() {
    let (toolbox, shop) = toolbox(None);
    let missing = Plan::parse(
        r#"match exec tool lookup_account {id = "c"} {
  Ok(a) => match exec tool delete_account {id = a.id} { Ok(x) => "gone", Err(e) => "kept" },
  Err(e) => "no account"
}"#,
    )
    .unwrap();
    let error = block_on(Interpreter::new(&toolbox).run(&missing)).unwrap_err();
    assert!(matches!(&error, PlanError::UnknownTool { name, .. } if name == "delete_account"));
    // A `PlanError` is a refusal: nothing ran (`RunError` is the other kind).

    // Refused for its effects, in one wording, however the reads-only rule
    // is set: on the interpreter, or on a restricted view of the toolbox
    // (which does not list the Write tools, but does not call them unknown).
    let plan = Plan::parse(SUPPORT_AGENT).unwrap();
    let denied = "effect violation: tool `issue_refund` has effects {Write}, but only {Read} are allowed here";
    let read_only = Interpreter::new(&toolbox).restrict(EffectSet::READ);
    let error = block_on(read_only.run(&plan)).unwrap_err();
    assert_eq!(error.to_string(), denied);
    let read_only = toolbox.restrict(EffectSet::READ);
    let error = block_on(Interpreter::new(&read_only).run(&plan)).unwrap_err();
    assert_eq!(
        error,
        PlanError::EffectViolation {
            tool: "issue_refund".into(),
            effects: EffectSet::WRITE,
            allowed: EffectSet::READ,
        }
    );
    assert_eq!(error.to_string(), denied);
    // What the plan may call, when it names a tool that is not there: the
    // tools of the view.
    let error = block_on(Interpreter::new(&read_only).run(&missing)).unwrap_err();
    assert_eq!(
        error.to_string(),
        "unknown tool `delete_account`; the plan may call: `lookup_account`, `format_cents`"
    );

    // A tool call inside a pure callback (IR from data, not checked by rustc).
    let impure = Plan::parse(
        r#"map (fn o => match exec tool charge o { Ok(t) => t, Err(e) => "x" }) [{id = 1, amount = 100}]"#,
    )
    .unwrap();
    let error = block_on(Interpreter::new(&toolbox).run(&impure)).unwrap_err();
    assert_eq!(
        error.to_string(),
        "effect violation: the callback of `map` must be pure but calls `charge`; use `traverse` for effectful iteration"
    );
    assert!(calls(&shop).is_empty(), "nothing ran");
}

#[test]
fn the_approval_hook_refuses_a_refund() {
    let (toolbox, shop) = toolbox(None);
    let asked = Mutex::new(Vec::new());
    let interpreter = Interpreter::new(&toolbox)
        .time_calls(true)
        .approve_writes(|request| {
            asked
                .lock()
                .unwrap()
                .push((request.tool.clone(), request.args.clone()));
            if request.tool == "issue_refund" {
                Decision::Refuse("refunds need a human".into())
            } else {
                Decision::Approve
            }
        });
    let plan = Plan::parse(SUPPORT_AGENT).unwrap();
    let run = block_on(interpreter.run(&plan)).unwrap();
    assert_eq!(
        run.outcome,
        Ok(Value::String("refund failed, customer not refunded".into()))
    );
    // The Read call is not asked about; the refund never ran.
    assert_eq!(
        asked.lock().unwrap().clone(),
        [("issue_refund".to_owned(), refund().1)]
    );
    assert_eq!(calls(&shop), [lookup()]);
    assert_eq!(
        *run.trace[1].result(),
        CallResult::Refused("refunds need a human".into())
    );
    // A refused call did not run: it took no time.
    assert_eq!(run.trace[1].duration(), Some(std::time::Duration::ZERO));
}

#[test]
fn preview_lists_tools_effects_and_counts() {
    let (toolbox, _) = toolbox(None);
    let plan = Plan::parse(SUPPORT_AGENT).unwrap();
    let preview = Preview::check(&plan, &toolbox, EffectSet::ALL).unwrap();
    assert_eq!(preview.effects, EffectSet::READ | EffectSet::WRITE);
    assert_eq!(
        preview.to_string(),
        "lookup_account {Read}: at most once\nissue_refund {Write}: at most once\nsend_reply {Write}: at most once\nin all: at most 3 calls\n"
    );

    let plan = Plan::parse(
        r#"let orders = [{id = 1, amount = 1}, {id = 2, amount = 2}, {id = 3, amount = 3}] in
match exec tool lookup_account {id = "c"} {
  Ok(a) =>
    match traverse (fn o => exec tool charge o) (filter (fn o => o.amount > 1) orders) {
      Ok(r) => match traverse (fn o => exec tool charge o) (if a.id == "c" then [{id = 9, amount = 9}] else []) { Ok(x) => 1, Err(e) => 2 },
      Err(e) => match exec tool charge {id = 0, amount = 0} { Ok(x) => 3, Err(e) => 4 }
    },
  Err(e) => 0
}"#,
    )
    .unwrap();
    let preview = Interpreter::new(&toolbox).preview(&plan).unwrap();
    assert_eq!(preview.calls[1].tool, "charge");
    assert_eq!(preview.calls[1].runs, Runs::PerElement);
    let plan = Plan::parse(
        r#"let orders = [{id = 1, amount = 1}, {id = 2, amount = 2}, {id = 3, amount = 3}] in
match traverse (fn o => exec tool charge o) (filter (fn o => o.amount > 1) orders) {
  Ok(r) => 1,
  Err(e) => match exec tool charge {id = 0, amount = 0} { Ok(x) => 3, Err(e) => 4 }
}"#,
    )
    .unwrap();
    let preview = Interpreter::new(&toolbox).preview(&plan).unwrap();
    assert_eq!(preview.calls[0].runs, Runs::AtMost(4));
}

#[test]
fn a_deep_plan_runs_and_a_too_deep_one_is_refused() {
    let (toolbox, _) = toolbox(None);
    let deep = format!("{}1{}", "(0 + ".repeat(30), ")".repeat(30));
    let plan = Plan::parse(&deep).unwrap();
    let run = block_on(Interpreter::new(&toolbox).run(&plan)).unwrap();
    assert_eq!(run.outcome, Ok(Value::Int(1)));

    // Built in code, as deep as the limit allows: runs within a test thread's stack.
    let mut body = typed_tools::plan::Expr::int(1);
    for _ in 0..typed_tools::plan::MAX_DEPTH {
        body = typed_tools::plan::Expr::binary(
            typed_tools::plan::BinaryOp::Add,
            body,
            typed_tools::plan::Expr::int(1),
        );
    }
    let run = block_on(Interpreter::new(&toolbox).run(&Plan::new(body))).unwrap();
    assert_eq!(run.outcome, Ok(Value::Int(65)));

    let mut body = typed_tools::plan::Expr::int(1);
    for _ in 0..200 {
        body = typed_tools::plan::Expr::binary(
            typed_tools::plan::BinaryOp::Add,
            body,
            typed_tools::plan::Expr::int(1),
        );
    }
    let error = block_on(Interpreter::new(&toolbox).run(&Plan::new(body))).unwrap_err();
    assert_eq!(
        error,
        PlanError::TooDeep {
            limit: typed_tools::plan::MAX_DEPTH
        }
    );
}

/// Parse an amount like `12.99` into cents.
#[typed_tools::tool(effects = Pure)]
fn parse_cents(text: String) -> Result<i64, String> {
    let (dollars, cents) = text.split_once('.').ok_or("no `.`")?;
    let number = |s: &str| s.parse::<i64>().map_err(|e| e.to_string());
    Ok(number(dollars)? * 100 + number(cents)?)
}

#[test]
fn a_pure_infallible_tool_is_a_function_inside_map() {
    let (toolbox, shop) = toolbox(None);
    let plan = Plan::parse(
        r#"match exec tool lookup_account {id = "c"} {
  Ok(account) => "refund of " ++ call tool format_cents {cents = account.last_charge_cents},
  Err(e) => e.message
}"#,
    )
    .unwrap();
    let run = block_on(Interpreter::new(&toolbox).run(&plan)).unwrap();
    assert_eq!(run.outcome, Ok(Value::String("refund of $12.99".into())));
    let traced: Vec<_> = run
        .trace
        .iter()
        .map(|c| (c.tool(), c.args().to_json().unwrap()))
        .collect();
    assert_eq!(
        traced,
        [
            ("lookup_account", json!({"id": "c"})),
            ("format_cents", json!({"cents": 1299}))
        ]
    );

    let plan =
        Plan::parse("map (fn c => call tool format_cents {cents = c}) [5, -1250, 100]").unwrap();
    let preview = Interpreter::new(&toolbox).preview(&plan).unwrap();
    assert_eq!(preview.to_string(), "format_cents {}: at most 3 times\n");
    let run = block_on(Interpreter::new(&toolbox).run(&plan)).unwrap();
    assert_eq!(
        run.outcome,
        Ok(Value::list(
            ["$0.05", "-$12.50", "$1.00"].map(|s| Value::String(s.into()))
        ))
    );
    assert_eq!(run.trace.len(), 3);
    // A pure tool needs no effect: it runs where nothing is allowed.
    let run = block_on(
        Interpreter::new(&toolbox)
            .restrict(EffectSet::PURE)
            .run(&plan),
    )
    .unwrap();
    assert!(run.outcome.is_ok());
    assert_eq!(calls(&shop).len(), 1, "only the lookup touched the shop");
}

#[test]
fn call_of_a_tool_with_effects_or_that_can_fail_is_refused_before_anything_runs() {
    let (toolbox, shop) = toolbox(None);
    let write = Plan::parse(
        r#"match exec tool lookup_account {id = "c"} {
  Ok(a) => call tool issue_refund {account_id = a.id, amount = 100},
  Err(e) => e.message
}"#,
    )
    .unwrap();
    let error = block_on(Interpreter::new(&toolbox).run(&write)).unwrap_err();
    // A `PlanError` is a refusal: nothing ran (`RunError` is the other kind).
    assert_eq!(
        error.to_string(),
        "`call tool issue_refund` is refused: `issue_refund` has effects {Write} and can fail; \
         only a pure tool that cannot fail is called with `call`: \
         write `match exec tool issue_refund ARGS { Ok(x) => ..., Err(e) => ... }`"
    );
    assert!(calls(&shop).is_empty(), "nothing ran, not even the lookup");

    let fallible = Toolbox::builder().tool(ParseCents).build().unwrap();
    let plan = Plan::parse(r#"map (fn s => call tool parse_cents {text = s}) ["1.50"]"#).unwrap();
    let error = block_on(Interpreter::new(&fallible).run(&plan)).unwrap_err();
    assert_eq!(
        error,
        PlanError::NotAFunction {
            tool: "parse_cents".into(),
            effects: EffectSet::PURE,
            fallible: true
        }
    );
    assert!(error
        .to_string()
        .starts_with("`call tool parse_cents` is refused: `parse_cents` can fail;"));
    // `exec` of the same tool in `traverse` is the way.
    let plan = Plan::parse(
        r#"match traverse (fn s => exec tool parse_cents {text = s}) ["1.50", "x"] {
  Ok(all) => "parsed",
  Err(e) => e.message
}"#,
    )
    .unwrap();
    let run = block_on(Interpreter::new(&fallible).run(&plan)).unwrap();
    assert_eq!(
        run.outcome,
        Ok(Value::String("tool `parse_cents` failed: no `.`".into()))
    );
}

/// Halves an even number; an odd one is a bug of the tool (it panics).
#[tool(effects = Pure)]
fn halve(n: i64) -> i64 {
    assert!(n % 2 == 0, "{n} is odd");
    n / 2
}

#[test]
fn a_call_whose_arguments_do_not_fit_is_refused_before_anything_runs() {
    let (toolbox, shop) = toolbox(None);
    let plan =
        Plan::parse(r#"map (fn c => call tool format_cents {cents = c}) [1, "two", 3]"#).unwrap();
    let error = block_on(Interpreter::new(&toolbox).run(&plan)).unwrap_err();
    assert!(calls(&shop).is_empty());
    assert!(
        error
            .to_string()
            .contains("the elements of a list have one type, found Int and then String"),
        "{error}"
    );
}

#[test]
fn a_pure_call_that_fails_stops_the_plan() {
    let toolbox = Toolbox::builder().tool(Halve).build().unwrap();
    let plan = Plan::parse("map (fn c => call tool halve {n = c}) [2, 3, 4]").unwrap();
    let run = block_on(Interpreter::new(&toolbox).run(&plan)).unwrap();
    let Err(RunError::CallFailed { tool, error }) = &run.outcome else {
        panic!("{:?}", run.outcome);
    };
    assert_eq!(tool, "halve");
    assert!(
        error.to_string().contains("3 is odd"),
        "the error says why: {error}"
    );
    // The first element's call ran; the third never did.
    assert_eq!(run.trace.len(), 2);
    assert!(matches!(run.trace[0].result(), CallResult::Ok(_)));
    assert!(matches!(run.trace[1].result(), CallResult::Err(_)));
}

#[test]
fn an_async_approval_hook_is_awaited_before_each_write() {
    let (toolbox, shop) = toolbox(None);
    let asked = std::sync::Arc::new(Mutex::new(Vec::new()));
    let seen = std::sync::Arc::clone(&asked);
    let interpreter = Interpreter::new(&toolbox).approve_writes_async(move |request| {
        let seen = std::sync::Arc::clone(&seen);
        async move {
            // Answers later: pending once, as a reviewer would be.
            let mut waited = false;
            futures::future::poll_fn(|cx| {
                if waited {
                    std::task::Poll::Ready(())
                } else {
                    waited = true;
                    cx.waker().wake_by_ref();
                    std::task::Poll::Pending
                }
            })
            .await;
            seen.lock().unwrap().push(request.tool.clone());
            match request.tool.as_str() {
                "send_reply" => Decision::Refuse("replies are sent by a human".into()),
                _ => Decision::Approve,
            }
        }
    });
    let plan = Plan::parse(SUPPORT_AGENT).unwrap();
    let run = interpreter.run(&plan);
    fn assert_send<T: Send>(_: &T) {}
    assert_send(&run);
    let run = block_on(run).unwrap();
    assert_eq!(
        run.outcome,
        Ok(Value::String(
            "refund succeeded but notification failed".into()
        ))
    );
    assert_eq!(*asked.lock().unwrap(), ["issue_refund", "send_reply"]);
    assert_eq!(calls(&shop), [lookup(), refund()]);
    assert_eq!(
        *run.trace[2].result(),
        CallResult::Refused("replies are sent by a human".into())
    );
}

/// Wait, then answer.
#[tool(effects = Read)]
fn slow_lookup(id: String) -> String {
    std::thread::sleep(std::time::Duration::from_millis(20));
    id
}

#[test]
fn the_trace_records_each_calls_duration() {
    let toolbox = Toolbox::builder().tool(SlowLookup).build().unwrap();
    let plan = Plan::parse(
        r#"match exec tool slow_lookup {id = "a"} { Ok(x) => x, Err(e) => e.message }"#,
    )
    .unwrap();
    let run = block_on(Interpreter::new(&toolbox).time_calls(true).run(&plan)).unwrap();
    // At least the time the tool spent: the duration is the call's own.
    let duration = run.trace[0].duration().expect("calls are timed");
    assert!(
        duration >= std::time::Duration::from_millis(20),
        "{duration:?}"
    );
    // Not timed unless asked.
    let run = block_on(Interpreter::new(&toolbox).run(&plan)).unwrap();
    assert_eq!(run.trace[0].duration(), None);
}

/// Notes tools over one shared store, for the refusals below.
mod notes {
    use std::sync::{Arc, Mutex};

    use typed_tools::{tool, Toolbox};

    /// Where the notes are: every tool sees the same one.
    #[derive(Default)]
    pub(crate) struct Store(pub Mutex<Vec<String>>);

    /// List every note.
    #[tool(effects = Read)]
    pub(crate) fn list_notes(#[state] store: &Store) -> Vec<String> {
        store.0.lock().unwrap().clone()
    }

    /// Add a note; returns its id.
    #[tool(effects = Write, destructive = false)]
    pub(crate) fn add_note(#[state] store: &Store, text: String) -> u32 {
        let mut notes = store.0.lock().unwrap();
        notes.push(text);
        notes.len() as u32
    }

    pub(crate) fn toolbox() -> (Toolbox, Arc<Store>) {
        let store = Arc::new(Store::default());
        let toolbox = Toolbox::builder()
            .tool(ListNotes::new(store.clone()))
            .tool(AddNote::new(store.clone()))
            .build()
            .unwrap();
        (toolbox, store)
    }
}

/// A call refused for its effects is said in one wording on every path: a
/// direct call, a plan checked or run on a restricted view, a plan run by an
/// interpreter narrowed with `restrict`, a typed plan. The tool exists; the
/// message says its effects and what is allowed, and nothing ran.
#[test]
fn a_call_refused_for_its_effects_is_said_one_way_on_every_path() {
    use typed_tools::plan::typed::{lit, TypedPlan};
    use typed_tools::{exec, on, ToolError};

    let (toolbox, store) = notes::toolbox();
    let read_only = toolbox.restrict(EffectSet::READ);
    let denied =
        "effect violation: tool `add_note` has effects {Write}, but only {Read} are allowed here";
    let refused = PlanError::EffectViolation {
        tool: "add_note".into(),
        effects: EffectSet::WRITE,
        allowed: EffectSet::READ,
    };

    // A direct call.
    let error = block_on(read_only.call("add_note", r#"{"text": "milk"}"#)).unwrap_err();
    assert_eq!(
        error,
        ToolError::EffectDenied {
            tool: "add_note".into(),
            effects: EffectSet::WRITE,
            allowed: EffectSet::READ,
        }
    );
    assert_eq!(error.to_string(), denied);
    assert_eq!(
        error.for_model(),
        format!("{denied}. Do not call it again; use another tool or answer without it.")
    );

    // A plan: checked, and run, on the restricted view.
    let plan =
        Plan::parse(r#"match exec tool add_note {text = "milk"} { Ok(id) => id, Err(e) => 0 }"#)
            .unwrap();
    let checked = Preview::check(&plan, &read_only, EffectSet::ALL).unwrap_err();
    assert_eq!(
        (&checked, checked.to_string()),
        (&refused, denied.to_owned())
    );
    let ran = block_on(Interpreter::new(&read_only).run(&plan)).unwrap_err();
    assert_eq!((&ran, ran.to_string()), (&refused, denied.to_owned()));
    // Checked with a narrower set than the toolbox's, and run by a narrowed
    // interpreter.
    let checked = Preview::check(&plan, &toolbox, EffectSet::READ).unwrap_err();
    assert_eq!(checked.to_string(), denied);
    let ran = block_on(
        Interpreter::new(&toolbox)
            .restrict(EffectSet::READ)
            .run(&plan),
    )
    .unwrap_err();
    assert_eq!(ran.to_string(), denied);

    // A typed plan, run on the restricted view (its `Toolbox<A>` type still
    // admits `Write`, so the view is checked when it runs).
    let typed = TypedPlan::new(on!(exec!(notes::AddNote { text: lit("milk") }),
        Ok(id) => id,
        Err(e) => lit(0),
    ));
    let ran = block_on(typed.run(&read_only)).unwrap_err();
    assert_eq!((&ran, ran.to_string()), (&refused, denied.to_owned()));

    // Nothing was added; the same plan runs where writes are allowed.
    assert!(store.0.lock().unwrap().is_empty());
    let run = block_on(typed.run(&toolbox)).unwrap();
    assert_eq!(run.outcome, Ok(1));
}

#[test]
fn a_prepared_plan_runs_again_and_again_as_run_would_under_the_same_approval() {
    let (shop_toolbox, shop) = toolbox(None);
    let asked = Mutex::new(0);
    let interpreter = Interpreter::new(&shop_toolbox).approve_writes(|_| {
        *asked.lock().unwrap() += 1;
        Decision::Approve
    });
    let plan = Plan::parse(SUPPORT_AGENT).unwrap();
    let fresh = block_on(interpreter.run(&plan)).unwrap();
    let prepared = interpreter.prepare(&plan).unwrap();
    assert_eq!(
        prepared.preview(),
        &interpreter.preview(&plan).unwrap(),
        "the preview of its check"
    );
    for _ in 0..3 {
        // Each run from the start, its own trace, the same outcome.
        let run = block_on(prepared.run());
        assert_eq!(run.outcome, fresh.outcome);
        let calls = |run: &typed_tools::plan::Run| {
            let trace = run.trace.iter();
            trace
                .map(|c| {
                    (
                        c.tool().to_owned(),
                        c.args().to_json().unwrap(),
                        c.result().clone(),
                    )
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(calls(&run), calls(&fresh));
    }
    assert_eq!(calls(&shop).len(), 4 * 3, "four runs of three calls");
    assert_eq!(
        *asked.lock().unwrap(),
        2 * 4,
        "the two Write calls (refund, reply) asked about in each run"
    );

    // What `run` refuses, `prepare` refuses: nothing runs.
    let (fresh_toolbox, shop) = toolbox(None);
    let interpreter = Interpreter::new(&fresh_toolbox);
    let wrong = Plan::parse(
        r#"match exec tool lookup_account {id = 7} { Ok(a) => a.plan, Err(e) => e.message }"#,
    )
    .unwrap();
    assert_eq!(
        interpreter.prepare(&wrong).unwrap_err(),
        block_on(interpreter.run(&wrong)).unwrap_err()
    );
    let read_only = Interpreter::new(&fresh_toolbox).restrict(EffectSet::READ);
    assert!(matches!(
        read_only.prepare(&plan),
        Err(PlanError::EffectViolation { .. })
    ));
    assert!(calls(&shop).is_empty());
}

#[test]
fn a_prepared_plan_builds_its_constants_once_and_fails_where_a_run_would() {
    let toolbox = Toolbox::builder().tool(EchoInt).build().unwrap();
    let interpreter = Interpreter::new(&toolbox);
    let plan = Plan::parse(
        "match traverse (fn x => exec tool echo_int x) [{v = 1}, {v = 2}] { Ok(all) => all, Err(e) => [] }",
    )
    .unwrap();
    let prepared = interpreter.prepare(&plan).unwrap();
    let (first, second) = (block_on(prepared.run()), block_on(prepared.run()));
    let fresh = block_on(interpreter.run(&plan)).unwrap();
    assert_eq!(first.outcome, fresh.outcome);
    assert_eq!(second.outcome, fresh.outcome);
    assert_eq!(
        first.outcome,
        Ok(Value::list([Value::Int(1), Value::Int(2)]))
    );
    // The literal list was built when the plan was prepared: each run
    // passes the same shared records, where a fresh run builds its own.
    let record = |run: &typed_tools::plan::Run| match run.trace[0].args() {
        Value::Record(record) => record.clone(),
        other => panic!("arguments are a record: {other:?}"),
    };
    assert!(record(&first).ptr_eq(&record(&second)));
    assert!(!record(&first).ptr_eq(&record(&fresh)));

    // A constant whose evaluation fails is not folded: it fails where a run
    // reaches it, with the run's error, and not where it is not reached.
    let limits = Limits::new().list_length(3);
    let interpreter = Interpreter::new(&toolbox).limits(limits);
    for (text, fails) in [
        ("if 1 < 2 then [1, 2] else [1 / 0]", false),
        ("if 1 < 2 then [1 / 0] else [1, 2]", true),
        ("if 1 < 2 then [1, 2, 3, 4] else [1]", true),
        ("if 1 > 2 then [1, 2, 3, 4] else [1]", false),
    ] {
        let plan = Plan::parse(text).unwrap();
        let prepared = interpreter.prepare(&plan).unwrap();
        let fresh = block_on(interpreter.run(&plan)).unwrap();
        assert_eq!(fresh.outcome.is_err(), fails, "{text}: {:?}", fresh.outcome);
        for _ in 0..2 {
            assert_eq!(block_on(prepared.run()).outcome, fresh.outcome, "{text}");
        }
    }
}

/// Gives `n` back after waiting once (pending, then woken), writing down
/// when it starts and ends.
#[tool(effects = Write)]
async fn slow_echo(#[state] log: &Mutex<Vec<String>>, n: i64) -> i64 {
    log.lock().unwrap().push(format!("start {n}"));
    let mut waited = false;
    futures::future::poll_fn(|cx| {
        if waited {
            std::task::Poll::Ready(())
        } else {
            waited = true;
            cx.waker().wake_by_ref();
            std::task::Poll::Pending
        }
    })
    .await;
    log.lock().unwrap().push(format!("end {n}"));
    n
}

/// `plan::interpret`'s docs: the interpreter "awaits each tool call in turn
/// (a plan is sequential: the order of calls is the order of the text)":
/// in a list, a record, an operator's operands and a `traverse`, each call
/// ends before the next starts, in the order written.
#[test]
fn calls_run_one_at_a_time_in_the_order_of_the_text() {
    let log = std::sync::Arc::new(Mutex::new(Vec::new()));
    let toolbox = Toolbox::builder()
        .tool(SlowEcho::new(std::sync::Arc::clone(&log)))
        .build()
        .unwrap();
    let echo =
        |n: i64| format!("(match exec tool slow_echo {{n = {n}}} {{ Ok(v) => v, Err(e) => 0 }})");
    let text = format!(
        "{{b = [{}, {}], a = {} + {}, c = match traverse (fn n => exec tool slow_echo {{n = n}}) [7, 6] {{ Ok(all) => all, Err(e) => [] }}}}",
        echo(2),
        echo(1),
        echo(4),
        echo(3),
    );
    let run = block_on(Interpreter::new(&toolbox).run(&Plan::parse(&text).unwrap())).unwrap();
    assert_eq!(
        run.outcome.unwrap().to_string(),
        "{b = [2, 1], a = 7, c = [7, 6]}"
    );
    let expected: Vec<String> = [2, 1, 4, 3, 7, 6]
        .iter()
        .flat_map(|n| [format!("start {n}"), format!("end {n}")])
        .collect();
    assert_eq!(*log.lock().unwrap(), expected);
    let order: Vec<String> = run
        .trace
        .iter()
        .map(|call| call.args().to_string())
        .collect();
    assert_eq!(
        order,
        ["{n = 2}", "{n = 1}", "{n = 4}", "{n = 3}", "{n = 7}", "{n = 6}"]
    );
}
