//! A `#[tool]` whose parameters carry no attribute reads its input with the
//! runtime's generic visitor (`__private::Fields`) and describes it with the
//! runtime's generic schema writer, not with serde's and schemars' derives.
//! Both must do exactly what the derives do: here each tool's input is read
//! side by side with a struct of the same name and fields that derives
//! `Deserialize` and `JsonSchema` (`deny_unknown_fields`), on inputs made by
//! mutating valid ones the ways a model goes wrong and by proptest's arbitrary
//! JSON, from text and from a `serde_json::Value`; the value or the error's
//! text must be the same, and so must the schemas.

// An empty doc comment is one of the docs compared (`blank` below).
#![allow(clippy::empty_docs)]

use proptest::prelude::*;
use serde::de::DeserializeOwned;
use serde_json::{json, Map, Value};
use std::fmt::Debug;
use typed_tools::{tool, ToolSpec};

/// A parameter type of the user's.
#[derive(Debug, PartialEq, serde::Deserialize, schemars::JsonSchema)]
pub struct Address {
    /// The street.
    pub street: String,
    /// The city, if known.
    pub city: Option<String>,
}

/// Forecast.
#[tool(effects = Network)]
pub fn weather(city: String, days: Option<u8>) -> String {
    format!("{city} {days:?}")
}

/// Add.
#[tool(effects = Pure)]
pub fn add(a: i64, b: i64) -> i64 {
    a.wrapping_add(b)
}

/// One note.
#[tool(effects = Read)]
pub fn note(id: u32) -> Result<String, String> {
    Ok(format!("note {id}"))
}

/// Nothing to give.
#[tool(effects = Read)]
pub fn now() -> u64 {
    0
}

/// One of each kind.
#[tool(effects = Write)]
pub fn file(
    r#type: String,
    tags: Vec<String>,
    pinned: bool,
    at: Option<Address>,
    ratio: f64,
    note: Option<Option<String>>,
) -> u64 {
    let _ = (r#type, tags, pinned, at, ratio, note);
    0
}

/// Parameters with doc comments, which go to their schemas as schemars'
/// derive puts them: a `#` first line is a title.
#[tool(effects = Read)]
pub fn documented(
    /// The city, like `Lima`.
    city: String,
    /// # Days
    ///
    /// How many days ahead,
    /// today if absent.
    days: Option<u8>,
    #[doc = "  spaced out  "] level: u8,
    /// Where, if anywhere.
    at: Option<Address>,
    #[doc = ""] blank: bool,
) -> String {
    format!("{city} {days:?} {level} {at:?} {blank}")
}

/// Sixteen, the most the generic visitor takes.
#[tool(effects = Pure)]
#[allow(clippy::too_many_arguments)]
pub fn wide(
    a0: u8,
    a1: u8,
    a2: u8,
    a3: u8,
    a4: u8,
    a5: u8,
    a6: u8,
    a7: u8,
    a8: u8,
    a9: u8,
    a10: u8,
    a11: u8,
    a12: u8,
    a13: u8,
    a14: u8,
    a15: Option<u8>,
) -> u8 {
    [
        a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14,
    ]
    .iter()
    .fold(a15.unwrap_or(0), |s, x| s.wrapping_add(*x))
}

/// The same inputs, derived. Same names, so that messages naming the
/// struct (`expected struct AddInput`) can be compared.
mod derived {
    #![allow(dead_code)]
    use super::Address;

    #[derive(Debug, PartialEq, serde::Deserialize, schemars::JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub(crate) struct WeatherInput {
        pub(crate) city: String,
        pub(crate) days: Option<u8>,
    }

    #[derive(Debug, PartialEq, serde::Deserialize, schemars::JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub(crate) struct AddInput {
        pub(crate) a: i64,
        pub(crate) b: i64,
    }

    #[derive(Debug, PartialEq, serde::Deserialize, schemars::JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub(crate) struct NoteInput {
        pub(crate) id: u32,
    }

    #[derive(Debug, PartialEq, serde::Deserialize, schemars::JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub(crate) struct NowInput {}

    #[derive(Debug, PartialEq, serde::Deserialize, schemars::JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub(crate) struct FileInput {
        pub(crate) r#type: String,
        pub(crate) tags: Vec<String>,
        pub(crate) pinned: bool,
        pub(crate) at: Option<Address>,
        pub(crate) ratio: f64,
        pub(crate) note: Option<Option<String>>,
    }

    #[derive(Debug, PartialEq, serde::Deserialize, schemars::JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub(crate) struct DocumentedInput {
        /// The city, like `Lima`.
        pub(crate) city: String,
        /// # Days
        ///
        /// How many days ahead,
        /// today if absent.
        pub(crate) days: Option<u8>,
        #[doc = "  spaced out  "]
        pub(crate) level: u8,
        /// Where, if anywhere.
        pub(crate) at: Option<Address>,
        #[doc = ""]
        pub(crate) blank: bool,
    }

    #[derive(Debug, PartialEq, serde::Deserialize, schemars::JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub(crate) struct WideInput {
        pub(crate) a0: u8,
        pub(crate) a1: u8,
        pub(crate) a2: u8,
        pub(crate) a3: u8,
        pub(crate) a4: u8,
        pub(crate) a5: u8,
        pub(crate) a6: u8,
        pub(crate) a7: u8,
        pub(crate) a8: u8,
        pub(crate) a9: u8,
        pub(crate) a10: u8,
        pub(crate) a11: u8,
        pub(crate) a12: u8,
        pub(crate) a13: u8,
        pub(crate) a14: u8,
        pub(crate) a15: Option<u8>,
    }
}

/// The generated input as the derived one, field by field, for comparison.
trait IntoDerived {
    type Derived: DeserializeOwned + Debug + PartialEq + schemars::JsonSchema;
    fn into_derived(self) -> Self::Derived;
}

/// `IntoDerived` for an input, moving each field.
macro_rules! into_derived {
    ($($input:ident { $($field:ident),* })*) => {$(
        impl IntoDerived for $input {
            type Derived = derived::$input;
            fn into_derived(self) -> Self::Derived {
                let $input { $($field),* } = self;
                derived::$input { $($field),* }
            }
        }
    )*};
}

into_derived! {
    WeatherInput { city, days }
    AddInput { a, b }
    NoteInput { id }
    NowInput {}
    FileInput { r#type, tags, pinned, at, ratio, note }
    DocumentedInput { city, days, level, at, blank }
    WideInput { a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15 }
}

/// Reads `text` both ways, from text and from a `Value`: the same value,
/// or the same error.
fn same_reading<I: IntoDerived + DeserializeOwned>(text: &str) {
    let ours = serde_json::from_str::<I>(text).map(IntoDerived::into_derived);
    let theirs = serde_json::from_str::<I::Derived>(text);
    match (&ours, &theirs) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "{text}"),
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{text}"),
        _ => panic!("{text}: generic {ours:?}, derived {theirs:?}"),
    }
    if let Ok(value) = serde_json::from_str::<Value>(text) {
        let ours = serde_json::from_value::<I>(value.clone()).map(IntoDerived::into_derived);
        let theirs = serde_json::from_value::<I::Derived>(value);
        match (&ours, &theirs) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "{text}"),
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{text}"),
            _ => panic!("{text} as a value: generic {ours:?}, derived {theirs:?}"),
        }
    }
}

/// Values a model writes where another was due.
fn wrong_values() -> Vec<Value> {
    vec![
        Value::Null,
        json!(true),
        json!(0),
        json!(-1),
        json!(300),
        json!(1.5),
        json!("x"),
        json!([]),
        json!(["a"]),
        json!({}),
        json!({"street": "Main"}),
    ]
}

/// A valid input and its mutations: each key left out, written twice,
/// given each wrong value; an unknown key; the values as an array, whole,
/// short and long; a key escaped; not an object at all.
fn mutations(valid: &Value) -> Vec<String> {
    let object = valid.as_object().expect("an object");
    let mut out = vec![valid.to_string()];
    for key in object.keys() {
        let mut less = object.clone();
        less.remove(key);
        out.push(Value::Object(less).to_string());
        let text = valid.to_string();
        out.push(format!(
            "{}, \"{key}\": {}}}",
            &text[..text.len() - 1],
            object[key]
        ));
        for wrong in wrong_values() {
            let mut other = object.clone();
            other.insert(key.clone(), wrong);
            out.push(Value::Object(other).to_string());
        }
        let escaped: String = key
            .chars()
            .map(|c| format!("\\u{:04x}", c as u32))
            .collect();
        let text = valid.to_string();
        out.push(text.replacen(&format!("\"{key}\""), &format!("\"{escaped}\""), 1));
    }
    let mut unknown = object.clone();
    unknown.insert("extra".into(), json!(1));
    out.push(Value::Object(unknown).to_string());
    let values: Vec<Value> = object.values().cloned().collect();
    out.push(Value::Array(values.clone()).to_string());
    if !values.is_empty() {
        out.push(Value::Array(values[..values.len() - 1].to_vec()).to_string());
    }
    let mut long = values;
    long.push(json!(1));
    out.push(Value::Array(long).to_string());
    for other in wrong_values() {
        out.push(other.to_string());
    }
    out.push("{".into());
    out.push(r#"{"a" 1}"#.into());
    out.push(r#"{1: 2}"#.into());
    out
}

#[test]
fn reading_is_the_derives_on_mutated_inputs() {
    for text in mutations(&json!({"city": "Lima", "days": 3})) {
        same_reading::<WeatherInput>(&text);
    }
    for text in mutations(&json!({"a": 2, "b": -3})) {
        same_reading::<AddInput>(&text);
    }
    for text in mutations(&json!({"id": 7})) {
        same_reading::<NoteInput>(&text);
    }
    for text in mutations(&json!({})) {
        same_reading::<NowInput>(&text);
    }
    let file = json!({
        "type": "memo", "tags": ["a", "b"], "pinned": true,
        "at": {"street": "Main", "city": null}, "ratio": 0.5, "note": "hi",
    });
    for text in mutations(&file) {
        same_reading::<FileInput>(&text);
    }
    let documented = json!({"city": "Lima", "days": 1, "level": 2, "at": null, "blank": false});
    for text in mutations(&documented) {
        same_reading::<DocumentedInput>(&text);
    }
    let wide: Map<String, Value> = (0..16).map(|i| (format!("a{i}"), json!(i))).collect();
    for text in mutations(&Value::Object(wide)) {
        same_reading::<WideInput>(&text);
    }
}

/// Arbitrary JSON, its object keys drawn mostly from the tools' own names.
fn arbitrary_json() -> impl Strategy<Value = Value> {
    let key = prop_oneof![
        Just("city".to_owned()),
        Just("days".to_owned()),
        Just("a".to_owned()),
        Just("b".to_owned()),
        Just("type".to_owned()),
        Just("tags".to_owned()),
        Just("at".to_owned()),
        Just("street".to_owned()),
        "[a-z]{0,3}",
    ];
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        (0u16..400).prop_map(Value::from),
        any::<f64>().prop_map(|f| json!(f)),
        "[a-z ]{0,4}".prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 5, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec((key.clone(), inner), 0..5)
                .prop_map(|entries| Value::Object(entries.into_iter().collect())),
        ]
    })
}

proptest! {
    #[test]
    fn reading_is_the_derives_on_arbitrary_json(value in arbitrary_json()) {
        let text = value.to_string();
        same_reading::<WeatherInput>(&text);
        same_reading::<AddInput>(&text);
        same_reading::<NoteInput>(&text);
        same_reading::<NowInput>(&text);
        same_reading::<FileInput>(&text);
    }
}

#[test]
fn schemas_are_the_derives() {
    fn same<I: IntoDerived + schemars::JsonSchema>() {
        for settings in [
            schemars::generate::SchemaSettings::draft2020_12(),
            schemars::generate::SchemaSettings::draft2020_12().for_serialize(),
            schemars::generate::SchemaSettings::draft07(),
            schemars::generate::SchemaSettings::openapi3(),
        ] {
            let ours = settings
                .clone()
                .into_generator()
                .into_root_schema_for::<I>();
            let theirs = settings
                .into_generator()
                .into_root_schema_for::<I::Derived>();
            assert_eq!(
                serde_json::to_string(&ours).unwrap(),
                serde_json::to_string(&theirs).unwrap()
            );
        }
    }
    same::<WeatherInput>();
    same::<AddInput>();
    same::<NoteInput>();
    same::<NowInput>();
    same::<FileInput>();
    same::<DocumentedInput>();
    same::<WideInput>();
    // And what a toolbox shows: required and optional as the derive says.
    let spec = ToolSpec::of::<File>();
    assert_eq!(
        spec.input_schema()["required"],
        json!(["type", "tags", "pinned", "ratio"])
    );
    assert_eq!(spec.input_schema()["additionalProperties"], json!(false));
    // The input's schema keeps schemars' line breaks; the tool's shows the
    // lines of a paragraph joined, as its description does.
    let input = schemars::schema_for!(DocumentedInput);
    assert_eq!(
        input.as_value()["properties"]["days"]["description"],
        "How many days ahead,\ntoday if absent."
    );
    let spec = ToolSpec::of::<Documented>();
    let days = &spec.input_schema()["properties"]["days"];
    assert_eq!(days["title"], "Days");
    assert_eq!(days["description"], "How many days ahead, today if absent.");
    let level = &spec.input_schema()["properties"]["level"];
    assert_eq!(level["description"], "spaced out");
}
