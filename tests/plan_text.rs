//! The λ-Tool text form of plans: the printed support agent, printing then
//! parsing round-trips (proptest over generated IR), parse errors with
//! positions, and bounded nesting.

use proptest::prelude::*;
use typed_tools::plan::{
    BinaryOp, Branch, Expr, Lambda, Lambda2, Param, ParseLimit, ParseOptions, Plan, Step, Type,
    MAX_DEPTH,
};

fn exec(tool: &str, arg: Expr) -> Step {
    Step::Exec {
        tool: tool.into(),
        arg: Box::new(arg),
    }
}

/// The support agent of λ-Tool, built as IR.
fn support_agent() -> Plan {
    let account = || Expr::var("account");
    Plan::new(Expr::match_(
        exec(
            "lookup_account",
            Expr::record([("id", Expr::string("cust_12345"))]),
        ),
        "account",
        Expr::match_(
            exec(
                "issue_refund",
                Expr::record([
                    ("account_id", account().get("id")),
                    ("amount", account().get("last_charge_cents")),
                ]),
            ),
            "refund",
            Expr::match_(
                exec(
                    "send_reply",
                    Expr::record([
                        ("to", account().get("email")),
                        ("body", Expr::var("refund").get("tx_id")),
                    ]),
                ),
                "u",
                Expr::string("refund processed and customer notified"),
                "e",
                Expr::string("refund succeeded but notification failed"),
            ),
            "e",
            Expr::string("refund failed, customer not refunded"),
        ),
        "e",
        Expr::string("account lookup failed"),
    ))
}

mod support;

use support::SUPPORT_AGENT;

#[test]
fn the_support_agent_prints_as_lambda_tool() {
    assert_eq!(support_agent().to_string(), SUPPORT_AGENT);
    assert_eq!(Plan::parse(SUPPORT_AGENT).unwrap(), support_agent());
}

#[test]
fn the_seed_traverse_example_parses_with_its_annotation_and_comment() {
    let text = r#"(* charge each order once, stop at the first failure *)
match traverse (fn o: {id: Int, amount: Int} =>
    exec tool charge o
  ) [{id = 1, amount = 100}] {
  Ok(receipts) => "done",
  Err(e) => e
}"#;
    let plan = Plan::parse(text).unwrap();
    let Expr::Match { on, .. } = &plan.body else {
        panic!("a match")
    };
    let Step::Traverse { param, .. } = &**on else {
        panic!("a traverse")
    };
    assert_eq!(
        param.ty,
        Some(Type::Record {
            fields: vec![("id".into(), Type::Int), ("amount".into(), Type::Int)]
        })
    );
    assert_eq!(
        plan.to_string(),
        "match traverse (fn o: {id: Int, amount: Int} => exec tool charge o) [{id = 1, amount = 100}] {\n  Ok(receipts) => \"done\",\n  Err(e) => e\n}"
    );
}

#[test]
fn layout_of_let_if_and_callbacks() {
    let text = "let total = fold (fn acc, x => acc + x) 0 map (fn n => n * 2) filter (fn n => n > 1) [1, 2, 3] in\nif total >= 10 and not false then \"big\" ++ \"!\" else \"small\"";
    let error = Plan::parse(text).unwrap_err();
    // An argument of `fold` is one atom: a nested application must be parenthesized.
    assert_eq!((error.line, error.column), (1, 43));
    assert_eq!(
        error.message,
        "`map` as the list of `fold` must be in parentheses: \
         write `(map (fn n => n * 2) (filter (fn n => n > 1) [1, 2, 3]))`"
    );
    let text = "let total = fold (fn acc, x => acc + x) 0 (map (fn n => n * 2) (filter (fn n => n > 1) [1, 2, 3])) in\nif total >= 10 and not false then \"big\" ++ \"!\" else \"small\"";
    let plan = Plan::parse(text).unwrap();
    assert_eq!(plan.to_string(), text);
}

#[test]
fn the_json_form_round_trips_too() {
    let plan = support_agent();
    let json = serde_json::to_value(&plan).unwrap();
    assert_eq!(json["kind"], "match");
    assert_eq!(json["on"]["kind"], "exec");
    assert_eq!(json["on"]["arg"]["fields"]["id"]["value"], "cust_12345");
    let back: Plan = serde_json::from_value(json).unwrap();
    assert_eq!(back, plan);
}

fn error(text: &str) -> (usize, usize, String) {
    let e = Plan::parse(text).unwrap_err();
    (e.line, e.column, e.message)
}

#[test]
fn parse_errors_say_where_and_what_was_expected() {
    assert_eq!(
        error("exec tool lookup_account {id = \"x\"}"),
        (1, 1, "`exec` gives a Result, which can only be used by `match`: write `match exec ... { Ok(x) => ..., Err(e) => ... }`".into())
    );
    assert_eq!(
        error("match exec tool t {} {\n  Ok(a) => a\n}"),
        (3, 1, "expected `,` then the `Err(...)` branch (a tool's Result must be matched on both branches), found `}`".into())
    );
    assert_eq!(
        error("match exec tool t {} {\n  Ok(a) => a,\n  Ok(b) => b\n}"),
        (
            4,
            1,
            "two `Ok` branches; a `match` has one `Ok(...)` and one `Err(...)` branch".into()
        )
    );
    assert_eq!(
        error("{id: 1}"),
        (
            1,
            4,
            "expected `=` after the field name (records are written `{name = value}`), found `:`"
                .into()
        )
    );
    assert_eq!(
        error("let x = 1 x"),
        (
            1,
            11,
            "expected `in` after `let NAME = VALUE`, found `x`".into()
        )
    );
    assert_eq!(
        error("\"abc"),
        (1, 1, "unterminated string; close it with `\"`".into())
    );
    assert_eq!(
        error("1 < 2 < 3").2,
        "comparisons do not chain; combine them with `and`"
    );
    assert_eq!(error("  ?").0..=error("  ?").1, 1..=3);
    assert_eq!(
        error("(fn x => x)").2,
        "a lambda can only be the callback of `map`, `filter`, `fold` or `traverse`"
    );
    assert_eq!(
        error("99999999999999999999").2,
        "the number `99999999999999999999` is out of range"
    );
    assert_eq!(
        error("map (fn a, b => a) []").2,
        "this callback takes one parameter; only `fold`'s takes two (`fn acc, x => ...`)"
    );
    assert_eq!(
        error("x y"),
        (
            1,
            3,
            "expected an operator or the end of the plan, found `y`".into()
        )
    );
}

/// A `map`, `filter`, `fold`, `call`, `not`, `let` or `if` written as an
/// argument without parentheses: the error says which argument it is and
/// writes the fix, the form read as if parenthesized (and any inside it).
#[test]
fn a_form_used_as_an_argument_is_told_to_take_parentheses() {
    let cases = [
        (
            "map (fn x: Int => x) filter (fn y => y > 1) xs",
            (1, 22),
            "`filter` as the list of `map` must be in parentheses: write `(filter (fn y => y > 1) xs)`",
        ),
        (
            "filter (fn x => x > 1) map (fn x => x * 2) xs",
            (1, 24),
            "`map` as the list of `filter` must be in parentheses: write `(map (fn x => x * 2) xs)`",
        ),
        (
            "fold (fn acc, x => acc + x) 0 map (fn o => o.amount) filter (fn o => o.amount > 0) orders",
            (1, 31),
            "`map` as the list of `fold` must be in parentheses: \
             write `(map (fn o => o.amount) (filter (fn o => o.amount > 0) orders))`",
        ),
        (
            "fold (fn acc, x => acc ++ x) fold (fn a, b => a) \"\" [] names",
            (1, 30),
            "`fold` as the initial value of `fold` must be in parentheses: \
             write `(fold (fn a, b => a) \"\" [])`",
        ),
        (
            "match traverse (fn o => exec tool charge o) filter (fn o => o.amount > 0) orders {\n  Ok(r) => r,\n  Err(e) => []\n}",
            (1, 45),
            "`filter` as the list of `traverse` must be in parentheses: \
             write `(filter (fn o => o.amount > 0) orders)`",
        ),
        (
            "match exec tool charge_all map (fn o => o.id) orders {\n  Ok(r) => r,\n  Err(e) => e\n}",
            (1, 28),
            "`map` as the argument of `exec tool NAME` must be in parentheses: \
             write `(map (fn o => o.id) orders)`",
        ),
        (
            "call tool format_cents fold (fn acc, o => acc + o.amount) 0 orders",
            (1, 24),
            "`fold` as the argument of `call tool NAME` must be in parentheses: \
             write `(fold (fn acc, o => acc + o.amount) 0 orders)`",
        ),
        (
            "map (fn x => x) call tool format_cents 5",
            (1, 17),
            "`call` as the list of `map` must be in parentheses: write `(call tool format_cents 5)`",
        ),
        (
            "not not true",
            (1, 5),
            "`not` as the operand of `not` must be in parentheses: write `(not true)`",
        ),
        (
            "map (fn x => x) let y = [1] in y",
            (1, 17),
            "`let` as the list of `map` must be in parentheses: write `(let y = [1] in y)`",
        ),
        (
            "1 + if c then 1 else 2",
            (1, 5),
            "`if` as the right side of `+` must be in parentheses: write `(if c then 1 else 2)`",
        ),
        // What does not read is given the form's shape.
        (
            "map (fn x => x) filter xs",
            (1, 17),
            "`filter` as the list of `map` must be in parentheses: write `(filter (fn x => ...) LIST)`",
        ),
    ];
    for (text, at, message) in cases {
        assert_eq!(error(text), (at.0, at.1, message.to_owned()), "{text}");
        // And the fix parses.
        let fix = message.rsplit_once("write `").unwrap().1;
        let fix = fix.strip_suffix('`').unwrap();
        if !fix.contains("...") {
            assert!(Plan::parse(fix).is_ok(), "{fix}");
        }
    }
    // A long argument is given the shape, not the whole text.
    let long = format!(
        "map (fn x => x) filter (fn y => y > 1) [{}]",
        "1, ".repeat(100)
    );
    assert_eq!(
        error(&long).2,
        "`filter` as the list of `map` must be in parentheses: write `(filter (fn x => ...) LIST)`"
    );
    // Where an expression is due (a record's field, a list's element, a
    // callback's body, an operand), a form needs no parentheses.
    for text in [
        "{a = map (fn x => x) [1], b = filter (fn x => x > 1) [2]}",
        "[fold (fn a, x => a + x) 0 [1], call tool f 1]",
        "map (fn x => filter (fn y => y > x) [1, 2]) [1]",
        "1 + fold (fn a, x => a + x) 0 [1]",
        "match exec tool f {items = map (fn x => x) [1]} {\n  Ok(a) => a,\n  Err(e) => e\n}",
    ] {
        assert!(Plan::parse(text).is_ok(), "{text}");
    }
}

#[test]
fn hostile_nesting_is_an_error_not_a_stack_overflow() {
    for text in [
        "(".repeat(100_000),
        "[".repeat(100_000),
        format!("x{}", ".a".repeat(100_000)),
        format!("1{}", " + 1".repeat(100_000)),
        format!("{}x", "let a = 1 in ".repeat(100_000)),
        format!(
            "match traverse (fn x => {}",
            "traverse (fn x => ".repeat(100_000)
        ),
    ] {
        // The last is 1.3 MB, past the default limit on a plan's length.
        let options = ParseOptions::default().max_bytes(2 << 20);
        let e = Plan::parse_with(&text, &options).unwrap_err();
        assert!(e.message.contains("nests deeper than"), "{e}");
        assert_eq!(e.limit, Some(ParseLimit::Depth { max: MAX_DEPTH }));
    }
    // Forms without their parentheses, each the list of the one before: read
    // for the fix as deep as the bound allows, then given the form's shape.
    let text = format!("{}[1]", "map (fn x => x) ".repeat(60_000));
    assert_eq!(
        Plan::parse(&text).unwrap_err().message,
        "`map` as the list of `map` must be in parentheses: write `(map (fn x => ...) LIST)`"
    );
    // The bound leaves room for real plans.
    let text = format!("{}1{}", "(".repeat(40), ")".repeat(40));
    assert_eq!(Plan::parse(&text).unwrap(), Plan::new(Expr::int(1)));
}

// ---- generated IR ----

fn name() -> BoxedStrategy<String> {
    "[a-z_][a-z0-9_]{0,4}"
        .prop_filter("not a keyword", |n| {
            !typed_tools::plan::text::KEYWORDS.contains(&n.as_str())
        })
        .boxed()
}

fn field() -> impl Strategy<Value = String> {
    prop_oneof![3 => name(), 1 => any::<String>(), 1 => Just("match".to_owned())]
}

fn tool_name() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z_][a-z0-9_]{0,6}",
        "[a-z][a-z0-9]{0,3}-[a-z][a-z0-9_]{0,3}"
    ]
}

fn ty() -> impl Strategy<Value = Type> {
    let leaf = prop_oneof![
        Just(Type::Unit),
        Just(Type::Bool),
        Just(Type::Int),
        Just(Type::Float),
        Just(Type::String)
    ];
    leaf.prop_recursive(3, 8, 3, |inner| {
        prop_oneof![
            inner.clone().prop_map(|t| Type::List { of: Box::new(t) }),
            proptest::collection::vec((field(), inner), 0..3).prop_map(|fields| Type::Record {
                fields: dedup(fields)
            }),
        ]
    })
}

fn param() -> impl Strategy<Value = Param> {
    (name(), proptest::option::of(ty())).prop_map(|(name, ty)| Param { name, ty })
}

fn dedup<T>(fields: Vec<(String, T)>) -> Vec<(String, T)> {
    let mut out: Vec<(String, T)> = Vec::new();
    for (name, value) in fields {
        if !out.iter().any(|(n, _)| *n == name) {
            out.push((name, value));
        }
    }
    out
}

fn step(expr: BoxedStrategy<Expr>) -> BoxedStrategy<Step> {
    let exec = (tool_name(), expr.clone())
        .prop_map(|(tool, arg)| Step::Exec {
            tool,
            arg: Box::new(arg),
        })
        .boxed();
    exec.clone()
        .prop_recursive(2, 4, 1, move |inner| {
            prop_oneof![
                exec.clone(),
                (param(), inner, expr.clone()).prop_map(|(param, body, list)| Step::Traverse {
                    param,
                    body: Box::new(body),
                    list: Box::new(list),
                })
            ]
        })
        .boxed()
}

fn expr() -> impl Strategy<Value = Expr> {
    let leaf = prop_oneof![
        Just(Expr::Unit),
        any::<bool>().prop_map(|value| Expr::Bool { value }),
        any::<i64>().prop_map(Expr::int),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|value| Expr::Float { value }),
        any::<String>().prop_map(Expr::string),
        name().prop_map(Expr::var),
    ];
    leaf.prop_recursive(5, 48, 4, |inner| {
        let b = |e: Expr| Box::new(e);
        let lambda = (param(), inner.clone())
            .prop_map(move |(param, body)| Lambda {
                param,
                body: Box::new(body),
            })
            .boxed();
        prop_oneof![
            proptest::collection::vec((field(), inner.clone()), 0..3).prop_map(|fields| {
                Expr::Record {
                    fields: dedup(fields),
                }
            }),
            proptest::collection::vec(inner.clone(), 0..3).prop_map(|items| Expr::List { items }),
            (inner.clone(), field()).prop_map(|(e, f)| e.get(f)),
            (
                step(inner.clone().boxed()),
                name(),
                inner.clone(),
                name(),
                inner.clone()
            )
                .prop_map(move |(on, ok, then, err, otherwise)| Expr::Match {
                    on: Box::new(on),
                    ok: Branch {
                        bind: ok,
                        body: b(then)
                    },
                    err: Branch {
                        bind: err,
                        body: b(otherwise)
                    },
                }),
            (name(), inner.clone(), inner.clone()).prop_map(move |(name, value, body)| Expr::Let {
                name,
                value: b(value),
                body: b(body),
            }),
            (inner.clone(), inner.clone(), inner.clone()).prop_map(move |(c, t, o)| Expr::If {
                cond: b(c),
                then: b(t),
                otherwise: b(o),
            }),
            inner.clone().prop_map(move |e| Expr::Not { operand: b(e) }),
            (tool_name(), inner.clone()).prop_map(|(tool, arg)| Expr::call(tool, arg)),
            (
                proptest::sample::select(BinaryOp::ALL.to_vec()),
                inner.clone(),
                inner.clone()
            )
                .prop_map(|(op, l, r)| Expr::binary(op, l, r)),
            (lambda.clone(), inner.clone()).prop_map(move |(func, list)| Expr::Map {
                func,
                list: b(list)
            }),
            (lambda, inner.clone()).prop_map(move |(func, list)| Expr::Filter {
                func,
                list: b(list)
            }),
            (param(), param(), inner.clone(), inner.clone(), inner).prop_map(
                move |(acc, item, body, init, list)| Expr::Fold {
                    func: Lambda2 {
                        acc,
                        item,
                        body: b(body)
                    },
                    init: b(init),
                    list: b(list),
                }
            ),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn printing_then_parsing_round_trips(body in expr()) {
        let plan = Plan::new(body);
        let text = plan.to_string();
        let parsed = Plan::parse(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(&parsed, &plan, "{}", text);
        // Printing is stable: the parsed plan prints the same text.
        prop_assert_eq!(parsed.to_string(), text);
    }

    #[test]
    fn the_parser_never_panics(text in "[ -~\n]{0,200}") {
        let _ = Plan::parse(&text);
    }

    #[test]
    fn declarations_never_panic(text in "((\\(\\*|tool|[ \n;{}\"\\\\-]|.){0,12}){1,4}") {
        let _ = Plan::parse(&text);
    }

    #[test]
    fn json_round_trips(body in expr()) {
        let plan = Plan::new(body);
        let json = serde_json::to_string(&plan).unwrap();
        let back: Plan = serde_json::from_str(&json).unwrap();
        prop_assert_eq!(back, plan);
    }
}

#[test]
fn leading_tool_declarations_are_read_and_skipped() {
    // λ-Tool's support agent exactly as the seed writes it, declarations and all.
    let seed = format!(
        "tool lookup_account: String -{{Read}}-> {{id: String, subscription_tier: String,
                                       email: String, last_charge_cents: Int}};
tool issue_refund: {{account_id: String, amount: Int}} -{{Write}}-> {{tx_id: String}};
tool send_reply: {{to: String, body: String}} -{{Write}}-> Unit;

{SUPPORT_AGENT}"
    );
    assert_eq!(
        Plan::parse(&seed).unwrap(),
        Plan::parse(SUPPORT_AGENT).unwrap()
    );

    // Lines copied from the compact catalog: no `;`, a `--` description
    // (with brackets and quotes that do not balance).
    let copied = r#"(* the tools *)
tool lookup_account: {id: String} -{Read}-> {id: String, email: String}  -- Look up (an account "by id.
tool send_reply: {to: String, body: String} -{Write}-> Unit  -- Send a reply; [sic
match exec tool lookup_account {id = "c"} {
  Ok(a) => a.email,
  Err(e) => e.message
}"#;
    let plan = Plan::parse(copied).unwrap();
    assert_eq!(plan.tools(), ["lookup_account"]);

    // Errors after declarations point at the right line and column.
    let error =
        Plan::parse("tool f: Int -{}-> Int;\ntool g: Int -{}-> Int\n  match 1").unwrap_err();
    assert_eq!((error.line, error.column), (3, 9), "{error}");

    // Only at the start: `tool` inside a plan is still an error.
    assert!(Plan::parse("1 + 2\ntool f: Int -{}-> Int;").is_err());
}

/// The grammar in `plan::text`'s module docs, production by production:
/// what it says parses, parses to what it says (printed back in the
/// printer's form), and its `keyword` production is the parser's list.
#[test]
fn the_grammar_in_the_module_docs_is_what_the_parser_reads() {
    for (text, printed) in [
        // decl: read, not checked; ends at `;` or at the end of a line, and
        // `--` starts a description.
        ("tool a: {x: Int} -{Read}-> Int;\ntool b: {} -{}-> {y: [String]}  -- Bee.\n1", "1"),
        // Comments between tokens.
        ("(* a *) 1 (* b *) + (* c *) 2", "1 + 2"),
        // Precedence, low to high: or, and, comparison, ++, + -, * / %.
        ("a or b and c", "a or b and c"),
        ("(a or b) and c", "(a or b) and c"),
        ("x ++ y == z", "x ++ y == z"),
        ("1 + 2 * 3 - 4 / 2 % 3", "1 + 2 * 3 - 4 / 2 % 3"),
        ("1 != 2", "1 != 2"),
        // app: `not` and the combinators take postfix arguments; a field of
        // an argument is part of it.
        ("not x.ok", "not x.ok"),
        ("map (fn o => o.id) xs.items", "map (fn o => o.id) xs.items"),
        ("fold (fn acc, x => acc + x) 0 xs", "fold (fn acc, x => acc + x) 0 xs"),
        // atom: literals, unit, a parenthesized expression.
        ("[true, false, (), 1.5, -2, -0.5]", "[true, false, (), 1.5, -2, -0.5]"),
        // float: an exponent, with or without a fraction.
        ("[2e3, 1.5E-2, 1e+2]", "[2000.0, 0.015, 100.0]"),
        // record and list: a trailing comma.
        ("{a = 1, b = [1, 2,],}", "{a = 1, b = [1, 2]}"),
        // field: a keyword, or a string.
        (r#"{"two words" = 1}."two words" + e.tool"#, r#"{"two words" = 1}."two words" + e.tool"#),
        // string: every escape.
        (r#""q\" b\\ n\n r\r t\t u\u{e9}\u{7}""#, r#""q\" b\\ n\n r\r t\t ué\u{7}""#),
        // match: `Err` first, and a trailing comma.
        (
            "match exec tool t {} { Err(e) => 0, Ok(x) => x, }",
            "match exec tool t {} {\n  Ok(x) => x,\n  Err(e) => 0\n}",
        ),
        // toolname: `-` between parts, written without spaces.
        (
            "match exec tool get-weather-2 {} { Ok(x) => x, Err(e) => e }",
            "match exec tool get-weather-2 {} {\n  Ok(x) => x,\n  Err(e) => e\n}",
        ),
        // step: traverse's body is a step; a param's type annotation.
        (
            "match traverse (fn o: {id: Int, tags: [String]} => exec tool t o) xs { Ok(r) => r, Err(e) => [] }",
            "match traverse (fn o: {id: Int, tags: [String]} => exec tool t o) xs {\n  Ok(r) => r,\n  Err(e) => []\n}",
        ),
        // type: every kind.
        (
            "map (fn x: {u: Unit, b: Bool, i: Int, f: Float, s: String, l: [{}]} => x) []",
            "map (fn x: {u: Unit, b: Bool, i: Int, f: Float, s: String, l: [{}]} => x) []",
        ),
    ] {
        let plan = Plan::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(plan.to_string(), printed, "{text}");
    }
    // Spaces around `-` make it subtraction, not part of a tool name.
    assert!(Plan::parse("match exec tool get - weather {} { Ok(x) => x, Err(e) => e }").is_err());
    // ident = word - keyword.
    for keyword in typed_tools::plan::text::KEYWORDS {
        assert!(
            Plan::parse(&format!("let {keyword} = 1 in 2")).is_err(),
            "{keyword}"
        );
    }

    // The docs' `keyword` production lists the parser's keywords, in order.
    let docs = include_str!("../runtime/src/plan/text.rs");
    let production: String = docs
        .lines()
        .skip_while(|line| !line.starts_with("//! keyword  ="))
        .take_while(|line| line.starts_with("//! keyword") || line.starts_with("//!          |"))
        .collect();
    let listed: Vec<&str> = production.split('"').skip(1).step_by(2).collect();
    assert_eq!(listed, typed_tools::plan::text::KEYWORDS);
}
