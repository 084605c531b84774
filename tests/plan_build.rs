//! The typed builder: the support agent it builds is the IR of the λ-Tool
//! text, runs through the interpreter, and the pure operations and `traverse`
//! build the IR nodes they name.

use futures::executor::block_on;
use typed_tools::effect::{Pure, Read, ReadWrite, Write};
use typed_tools::plan::typed::{filter, fold, if_, let_, list, lit, map, traverse, TypedPlan};
use typed_tools::plan::{Interpreter, Plan, Value};
use typed_tools::{call, exec, field, input, on, tool, Toolbox};

mod support;

use support::{
    toolbox, tools_called, Charge, FormatCents, IssueRefund, LookupAccount, SendReply,
    SUPPORT_AGENT,
};

fn support_agent() -> TypedPlan<&'static str, ReadWrite> {
    TypedPlan::new(on!(exec!(LookupAccount { id: lit("cust_12345") }),
        Ok(account) => on!(exec!(IssueRefund {
                account_id: field!(account.id),
                amount: field!(account.last_charge_cents),
            }),
            Ok(refund) => on!(exec!(SendReply {
                    to: field!(account.email),
                    body: field!(refund.tx_id),
                }),
                Ok(u) => lit("refund processed and customer notified"),
                Err(e) => lit("refund succeeded but notification failed"),
            ),
            Err(e) => lit("refund failed, customer not refunded"),
        ),
        Err(e) => lit("account lookup failed"),
    ))
    .allowing::<ReadWrite>()
}

#[test]
fn the_support_agent_is_the_ir_of_its_text() {
    let built = Plan::from(support_agent());
    let parsed = Plan::parse(SUPPORT_AGENT).unwrap();
    assert_eq!(built, parsed);
    assert_eq!(built.to_string(), parsed.to_string());
    assert_eq!(
        built.tools(),
        ["lookup_account", "issue_refund", "send_reply"]
    );
}

#[test]
fn the_support_agent_runs_through_its_four_paths() {
    let plan = Plan::from(support_agent());
    for (fail, outcome, calls) in [
        (
            None,
            "refund processed and customer notified",
            &["lookup_account", "issue_refund", "send_reply"][..],
        ),
        (
            Some("lookup_account"),
            "account lookup failed",
            &["lookup_account"][..],
        ),
        (
            Some("issue_refund"),
            "refund failed, customer not refunded",
            &["lookup_account", "issue_refund"][..],
        ),
        (
            Some("send_reply"),
            "refund succeeded but notification failed",
            &["lookup_account", "issue_refund", "send_reply"][..],
        ),
    ] {
        let (toolbox, shop) = toolbox(fail);
        let run = block_on(Interpreter::new(&toolbox).run(&plan)).unwrap();
        assert_eq!(run.outcome.unwrap(), Value::String(outcome.into()));
        assert_eq!(tools_called(&shop), calls);
    }
}

#[test]
fn traverse_and_the_error_record() {
    let plan = TypedPlan::new(let_("n", lit(2), |n| {
        on!(traverse(list([lit(1), lit(2), lit(3)]), "o", |o| exec!(Charge {
                id: o.clone(),
                amount: o - n,
            })),
            Ok(txs) => lit("charged"),
            Err(e) => lit("stopped: ").concat(field!(e.message)),
        )
    }))
    .allowing::<Write>();
    let plan = Plan::from(plan);
    assert_eq!(
        plan,
        Plan::parse(
            r#"let n = 2 in match traverse (fn o => exec tool charge {id = o, amount = o - n}) [1, 2, 3] {
  Ok(txs) => "charged",
  Err(e) => "stopped: " ++ e.message
}"#
        )
        .unwrap()
    );
    let (toolbox, shop) = toolbox(None);
    let run = block_on(Interpreter::new(&toolbox).run(&plan)).unwrap();
    assert_eq!(
        run.outcome.unwrap(),
        Value::String("stopped: tool `charge` failed: order 1: negative amount".into())
    );
    assert_eq!(tools_called(&shop), ["charge"]);
}

#[test]
fn pure_operations_build_their_nodes_and_evaluate() {
    let numbers = || list([1, 2, 3, 4, 5].map(lit));
    let odd = filter(numbers(), "n", |n| (n % lit(2)).eq(lit(1)));
    let tens = map(odd, "n", |n| n * lit(10));
    let sum = fold(lit(0), tens, ("acc", "x"), |acc, x| acc + x);
    let body = if_(
        sum.clone()
            .gt(lit(50))
            .and(lit(true).not().or(lit(1).le(lit(2)))),
        sum,
        lit(0) - lit(1),
    );
    let plan = Plan::from(TypedPlan::new(body));
    assert_eq!(
        plan,
        Plan::parse(
            "if fold (fn acc, x => acc + x) 0 (map (fn n => n * 10) (filter (fn n => n % 2 == 1) [1, 2, 3, 4, 5])) > 50 \
             and (not true or 1 <= 2) \
             then fold (fn acc, x => acc + x) 0 (map (fn n => n * 10) (filter (fn n => n % 2 == 1) [1, 2, 3, 4, 5])) \
             else 0 - 1"
        )
        .unwrap()
    );
    let (toolbox, _) = toolbox(None);
    let run = block_on(Interpreter::new(&toolbox).run(&plan)).unwrap();
    assert_eq!(run.outcome.unwrap(), Value::Int(90));
}

#[test]
fn a_typed_plan_runs_against_a_toolbox_that_allows_its_effects() {
    let (toolbox, shop) = toolbox(Some("send_reply"));
    // A text literal's plan is read into a `String`.
    let run = block_on(support_agent().returning::<String>().run(&toolbox)).unwrap();
    assert_eq!(
        run.outcome.unwrap(),
        "refund succeeded but notification failed"
    );
    assert_eq!(tools_called(&shop).len(), 3);
}

#[test]
fn an_inner_binder_with_an_outer_name_does_not_capture_the_outer_handle() {
    // For each x in [1, 2]: the sum over y in [10, 20] of x + y. Both callbacks
    // are named "x": the inner one must not capture the outer handle.
    let outer = list([1, 2].map(lit));
    let body = map(outer, "x", |x| {
        fold(
            lit(0),
            map(list([10, 20].map(lit)), "x", move |y| x.clone() + y),
            ("acc", "v"),
            |acc, v| acc + v,
        )
    });
    let plan = Plan::from(TypedPlan::new(body));
    assert!(plan.to_string().contains("fn x_2 =>"), "{plan}");
    let (toolbox, _) = toolbox(None);
    let run = block_on(Interpreter::new(&toolbox).run(&plan)).unwrap();
    assert_eq!(
        run.outcome.unwrap(),
        Value::list([Value::Int(32), Value::Int(34)])
    );
}

#[test]
fn a_pure_tool_is_called_as_a_function_inside_pure_callbacks() {
    // The refund reply states the amount: `format_cents` is pure and cannot
    // fail, so it is a plain value, here inside `map` and in a tool argument.
    let amounts = map(list([lit(1299), lit(5)]), "c", |c| {
        call!(FormatCents { cents: c })
    });
    let plan: TypedPlan<String, Read> =
        TypedPlan::new(on!(exec!(LookupAccount { id: lit("c_1") }),
            Ok(account) => fold(lit(""), amounts, ("all", "a"), |all, a| all.concat(a))
                .concat(lit(" / "))
                .concat(call!(FormatCents { cents: field!(account.last_charge_cents) })),
            Err(e) => field!(e.message),
        ));
    let ir = Plan::from(plan.clone());
    assert_eq!(
        ir,
        Plan::parse(
            r#"match exec tool lookup_account {id = "c_1"} {
  Ok(account) => fold (fn all, a => all ++ a) "" (map (fn c => call tool format_cents {cents = c}) [1299, 5]) ++ " / " ++ call tool format_cents {cents = account.last_charge_cents},
  Err(e) => e.message
}"#
        )
        .unwrap()
    );
    let (toolbox, _) = toolbox(None);
    let run = block_on(plan.run(&toolbox)).unwrap();
    assert_eq!(run.outcome.as_deref(), Ok("$12.99$0.05 / $12.99"));
    let traced: Vec<_> = run.trace.iter().map(|c| c.tool()).collect();
    assert_eq!(
        traced,
        [
            "lookup_account",
            "format_cents",
            "format_cents",
            "format_cents"
        ]
    );
    // A plan of pure calls only has no effects at all.
    let pure: TypedPlan<String, Pure> = TypedPlan::new(call!(FormatCents { cents: lit(7) }));
    assert_eq!(
        block_on(pure.run(&toolbox.restrict(typed_tools::effect::EffectSet::PURE)))
            .unwrap()
            .outcome,
        Ok("$0.07".to_owned())
    );
}

/// Open a support ticket.
#[tool(effects = Write)]
fn open_ticket(#[serde(rename = "customerId")] customer_id: String, r#type: String) -> String {
    format!("{customer_id}/{type}", type = r#type)
}

#[test]
fn arguments_are_written_under_their_json_names() {
    let plan = Plan::from(TypedPlan::new(on!(exec!(OpenTicket {
            customer_id: lit("c_1"),
            r#type: lit("refund"),
        }),
        Ok(t) => t,
        Err(e) => field!(e.message),
    )));
    assert_eq!(
        plan.to_string(),
        r#"match exec tool open_ticket {customerId = "c_1", type = "refund"} {
  Ok(t) => t,
  Err(e) => e.message
}"#
    );
    let toolbox = Toolbox::builder().tool(OpenTicket).build().unwrap();
    let run = block_on(Interpreter::new(&toolbox).run(&plan)).unwrap();
    assert_eq!(run.outcome, Ok(Value::String("c_1/refund".into())));
    // The input as one value names its fields the same way.
    let whole = Plan::from(TypedPlan::new(on!(exec!(OpenTicket(input!(OpenTicket {
            customer_id: lit("c_1"),
            r#type: lit("refund"),
        }))),
        Ok(t) => t,
        Err(e) => field!(e.message),
    )));
    assert_eq!(whole, plan);
}

#[test]
fn records_as_whole_inputs_the_seed_traverse() {
    // λ-Tool's `traverse (fn o => exec tool charge o) [...]`: each order is a
    // typed record of the tool's input type.
    let order = |id, amount| {
        input!(Charge {
            id: lit(id),
            amount: lit(amount)
        })
    };
    let plan = TypedPlan::new(
        on!(traverse(list([order(1, 100), order(2, -5), order(3, 7)]), "o", |o| {
                exec!(Charge(o))
            }),
            Ok(receipts) => lit("done"),
            Err(e) => field!(e.message),
        ),
    )
    .allowing::<Write>();
    let plan = Plan::from(plan);
    assert_eq!(
        plan,
        Plan::parse(
            r#"match traverse (fn o => exec tool charge o) [{id = 1, amount = 100}, {id = 2, amount = -5}, {id = 3, amount = 7}] {
  Ok(receipts) => "done",
  Err(e) => e.message
}"#
        )
        .unwrap()
    );
    let (toolbox, shop) = toolbox(None);
    let run = block_on(Interpreter::new(&toolbox).run(&plan)).unwrap();
    assert_eq!(
        run.outcome.unwrap(),
        Value::String("tool `charge` failed: order 2: negative amount".into())
    );
    // The third order never ran.
    assert_eq!(tools_called(&shop), ["charge", "charge"]);
}

#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Ticket {
    ticket_id: String,
    r#type: String,
}

/// Find a ticket.
#[tool(effects = Read)]
fn find_ticket(id: String) -> Ticket {
    Ticket {
        ticket_id: id,
        r#type: "refund".into(),
    }
}

#[test]
fn output_fields_under_their_json_names() {
    let plan = Plan::from(TypedPlan::new(on!(exec!(FindTicket { id: lit("t_1") }),
        Ok(t) => field!(t.ticket_id as "ticketId").concat(lit(":")).concat(field!(t.r#type)),
        Err(e) => field!(e.message),
    )));
    let toolbox = Toolbox::builder().tool(FindTicket).build().unwrap();
    let run = block_on(Interpreter::new(&toolbox).run(&plan)).unwrap();
    assert_eq!(run.outcome, Ok(Value::String("t_1:refund".into())));
}

/// The README's tool: a city, and an optional number of days.
#[tool(effects = Network)]
async fn weather(city: String, days: Option<u8>) -> Result<String, String> {
    match city.as_str() {
        "" => Err("the city is empty".into()),
        _ => Ok(format!("sunny in {city} in {} day(s)", days.unwrap_or(0))),
    }
}

/// The README's `weather` from a typed plan, with `days`, with `None` and
/// with `days` left out: the plan's text, what the checker accepts, and what
/// the tool got.
#[test]
fn the_readme_weather_tool_with_and_without_days() {
    let toolbox = Toolbox::builder().tool(Weather).build().unwrap();
    let cases = [
        (
            TypedPlan::new(
                on!(exec!(Weather { city: lit("Lima"), days: lit(Some(3)) }),
                    Ok(w) => w,
                    Err(e) => field!(e.message),
                ),
            ),
            r#"{city = "Lima", days = 3}"#,
            "sunny in Lima in 3 day(s)",
        ),
        (
            TypedPlan::new(on!(exec!(Weather { city: lit("Lima"), days: lit(None) }),
                Ok(w) => w,
                Err(e) => field!(e.message),
            )),
            r#"{city = "Lima", days = ()}"#,
            "sunny in Lima in 0 day(s)",
        ),
        (
            TypedPlan::new(on!(exec!(Weather { city: lit("Lima") }),
                Ok(w) => w,
                Err(e) => field!(e.message),
            )),
            r#"{city = "Lima"}"#,
            "sunny in Lima in 0 day(s)",
        ),
    ];
    for (plan, args, answer) in cases {
        let text = plan.plan().to_string();
        assert!(
            text.starts_with(&format!("match exec tool weather {args} {{")),
            "{text}"
        );
        // The text form, as a model would send it, is the same plan.
        assert_eq!(&Plan::parse(&text).unwrap(), plan.plan());
        let run = block_on(plan.run(&toolbox)).unwrap();
        assert_eq!(run.outcome.as_deref(), Ok(answer));
        assert_eq!(run.trace.len(), 1);
    }
    // A `u8` literal out of its range does not compile; one the tool cannot
    // take at run time (an Int past 255 written in the text form) is the
    // tool's error, for the `Err` branch.
    let text =
        r#"match exec tool weather {city = "Lima", days = 300} { Ok(w) => w, Err(e) => e.kind }"#;
    let run = block_on(Interpreter::new(&toolbox).run(&Plan::parse(text).unwrap())).unwrap();
    assert_eq!(run.outcome, Ok(Value::String("deserialization".into())));
}

/// A hand-written tool does not tell `exec!` which arguments it requires,
/// so leaving one out compiles; the plan check refuses it before anything
/// runs.
#[test]
fn a_hand_written_tool_left_without_a_required_argument_is_refused_before_running() {
    use std::future::Future;
    use std::sync::atomic::{AtomicBool, Ordering};
    use typed_tools::plan::PlanError;

    static RAN: AtomicBool = AtomicBool::new(false);

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Query {
        text: String,
        limit: u32,
    }

    struct Search;

    impl typed_tools::Tool for Search {
        type Input = Query;
        type Output = Vec<String>;
        type Error = String;
        type Effects = Read;
        type Context = ();
        const NAME: &'static str = "search";
        const DOC: &'static [&'static str] = &["Search the notes."];

        fn call(
            &self,
            _: &(),
            input: Query,
        ) -> impl Future<Output = Result<Vec<String>, String>> + Send {
            RAN.store(true, Ordering::SeqCst);
            async move { Ok(vec![input.text; input.limit as usize]) }
        }
    }

    let plan = TypedPlan::new(on!(exec!(Search { text: lit("milk") }),
        Ok(found) => found,
        Err(e) => lit(vec![]),
    ));
    let toolbox = Toolbox::builder().tool(Search).build().unwrap();
    let refused = block_on(plan.run(&toolbox)).unwrap_err();
    let PlanError::TypeErrors(errors) = &refused else {
        panic!("{refused:?}")
    };
    assert_eq!(
        errors[0].to_string(),
        "`exec tool search`: missing argument `limit` of type Int; add `limit = ...` to the arguments"
    );
    assert!(!RAN.load(Ordering::SeqCst), "nothing ran");
}

/// Any JSON value, as a literal: serde_json's own `Value` is
/// `Serialize + JsonSchema`, so random values of any shape (not designed
/// here) go through `try_lit`. Each comes back from a run as the same JSON,
/// and its text parses back to the same plan; integers past `i64` are the
/// one refusal.
#[test]
fn any_json_value_is_a_literal_that_runs_back_to_itself() {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};
    use serde_json::{Map, Number, Value as Json};
    use typed_tools::plan::typed::{try_lit, LiteralError};

    let leaf = prop_oneof![
        Just(Json::Null),
        any::<bool>().prop_map(Json::Bool),
        any::<i64>().prop_map(Json::from),
        any::<u64>().prop_map(Json::from),
        (-1e12f64..1e12).prop_map(|f| Json::Number(Number::from_f64(f).unwrap())),
        "[a-z\"\\\\ é\n]{0,8}".prop_map(Json::String),
    ];
    let json = leaf.prop_recursive(4, 64, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Json::Array),
            proptest::collection::vec(("[a-z_]{1,6}", inner), 0..6)
                .prop_map(|fields| Json::Object(fields.into_iter().collect::<Map<_, _>>())),
        ]
    });
    fn too_big(json: &Json) -> bool {
        match json {
            Json::Number(n) => n.as_i64().is_none() && n.as_u64().is_some(),
            Json::Array(items) => items.iter().any(too_big),
            Json::Object(fields) => fields.values().any(too_big),
            _ => false,
        }
    }
    let toolbox = Toolbox::builder().build().unwrap();
    let mut runner = TestRunner::new(Config {
        cases: 512,
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&json, |json| {
            match try_lit(json.clone()) {
                Err(LiteralError::OutOfRange { .. }) => prop_assert!(too_big(&json)),
                Err(other) => prop_assert!(false, "{other} for {json}"),
                Ok(literal) => {
                    prop_assert!(!too_big(&json));
                    let plan = Plan::from(TypedPlan::new(literal));
                    prop_assert_eq!(&Plan::parse(&plan.to_string()).unwrap(), &plan);
                    // Lists of several types are the checker's to refuse;
                    // the value itself is what matters here.
                    let run = block_on(Interpreter::new(&toolbox).__run_without_type_check(&plan))
                        .unwrap();
                    prop_assert_eq!(run.outcome.unwrap().to_json(), Some(json));
                }
            }
            Ok(())
        })
        .unwrap();
}
