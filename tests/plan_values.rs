//! The JSON a plan writes for a tool's arguments, and the values it reads
//! from a tool's output, against serde_json's own writer and reader on
//! arbitrary JSON: the interpreter writes and reads without building a
//! `serde_json::Value` in between, and must agree with one.

use futures::executor::block_on;
use proptest::prelude::*;
use serde_json::{json, Value as Json};
use typed_tools::plan::{CallResult, Interpreter, Plan, Value};
use typed_tools::{DynamicTool, Toolbox};

/// Arbitrary JSON: every kind of string (control characters, quotes,
/// backslashes, any Unicode), integers over the whole of `i64`, finite
/// floats, and lists and objects nested a few levels.
fn json() -> impl Strategy<Value = Json> {
    let leaf = prop_oneof![
        Just(Json::Null),
        any::<bool>().prop_map(Json::Bool),
        any::<i64>().prop_map(Json::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Json::from),
        any::<String>().prop_map(Json::String),
        "[\"\\\\\\x00-\\x1f/a-z\u{7f}\u{2028}]{0,12}".prop_map(Json::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Json::Array),
            prop::collection::vec((any::<String>(), inner), 0..6)
                .prop_map(|fields| Json::Object(fields.into_iter().collect())),
        ]
    })
}

/// A value as deep as `levels` lists, one inside the other, around `inner`.
fn nested(levels: usize, inner: Json) -> Json {
    (0..levels).fold(inner, |json, _| Json::Array(vec![json]))
}

/// A toolbox with one tool that returns `output` and accepts anything.
fn returning(output: Json) -> Toolbox {
    let tool = DynamicTool::new("give")
        .effects(typed_tools::effect::EffectSet::READ)
        .input_schema(json!({"type": "object", "properties": {"v": {}}}))
        .handler(move |_| {
            let output = output.clone();
            async move { Ok(output) }
        });
    Toolbox::builder().dynamic(tool).build().unwrap()
}

/// What a plan reads from `output` as a tool's output (of no declared
/// type), and the argument text it writes when passing the value on.
fn through_a_plan(output: Json) -> (Value, String) {
    let toolbox = returning(output);
    let plan = Plan::parse(
        "match exec tool give {} { Ok(v) => match exec tool give {v = v} { Ok(w) => v, Err(e) => e }, Err(e) => e }",
    )
    .unwrap();
    let run = block_on(Interpreter::new(&toolbox).run(&plan)).unwrap();
    assert!(
        matches!(run.trace[0].result(), CallResult::Ok(_)),
        "{:?}",
        run.trace[0]
    );
    let args = run.trace[1].args().to_json_text().unwrap();
    (run.outcome.unwrap(), args)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn a_value_is_written_as_serde_json_writes_its_json(json in json()) {
        let value = Value::from_json(json.clone());
        prop_assert_eq!(value.to_json_text().unwrap(), serde_json::to_string(&json).unwrap());
        prop_assert_eq!(value.to_json().unwrap(), json);
    }

    #[test]
    fn a_tools_output_is_read_as_serde_json_reads_it(json in json()) {
        let (read, args) = through_a_plan(json.clone());
        prop_assert_eq!(&read, &Value::from_json(json.clone()));
        prop_assert_eq!(args, serde_json::to_string(&json!({"v": json})).unwrap());
    }
}

#[test]
fn deep_values_are_written_and_read_alike() {
    // Past 32 levels the writer is iterative; outputs are read up to the
    // plan's depth limit (64 by default).
    for levels in [0, 1, 31, 32, 33, 60] {
        let json = nested(levels, json!({"a\n\"b": [1.5, -0.0, "\u{1}"]}));
        let value = Value::from_json(json.clone());
        assert_eq!(
            value.to_json_text().unwrap(),
            serde_json::to_string(&json).unwrap(),
            "{levels}"
        );
        let (read, _) = through_a_plan(json.clone());
        assert_eq!(read, value, "{levels}");
    }
}

#[test]
fn numbers_keep_their_kind() {
    for (json, value) in [
        (json!(0), Value::Int(0)),
        (json!(i64::MIN), Value::Int(i64::MIN)),
        (json!(i64::MAX), Value::Int(i64::MAX)),
        (json!(u64::MAX), Value::Float(u64::MAX as f64)),
        (json!(1.0), Value::Float(1.0)),
        (json!(-0.0), Value::Float(-0.0)),
        (json!(1e300), Value::Float(1e300)),
    ] {
        let (read, _) = through_a_plan(json.clone());
        assert_eq!(read, value, "{json}");
    }
    assert_eq!(
        Value::Int(i64::MIN).to_json_text().unwrap(),
        "-9223372036854775808"
    );
    assert_eq!(Value::Float(f64::INFINITY).to_json_text(), None);
}
