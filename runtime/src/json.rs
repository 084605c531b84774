//! Walks over `serde_json` values that no depth can overflow, and JSON text
//! read with each key given once.
//!
//! serde_json's own walks (`Clone`, `Drop`, `Serialize`, `PartialEq`) recurse,
//! once per level; its parser stops at 128 levels, so JSON read from text is
//! safe on any thread. A `Value` built in Rust may be deeper: where the
//! library takes one (a run-time tool's schema), it measures the depth here
//! first, without recursion, and refuses what is deeper than [`MAX_DEPTH`].
//!
//! serde_json keeps the last of a key given twice in an object, so what
//! was shown (the first) and what runs (the last) could differ. Text a
//! model wrote (a tool's arguments, a plan in JSON form, calls in text) is
//! read with [`from_str_unique`] (or checked with [`check_unique`], which
//! builds nothing), which refuses such an object and says where the key is.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use crate::schema::{JsonPath, PathSegment};

/// The deepest JSON the library takes: as deep as serde_json's parser reads
/// (its recursion limit, 128), so that a value from text and one built in
/// Rust meet one limit.
pub(crate) const MAX_DEPTH: usize = 128;

/// How deeply `value` nests arrays and objects (a scalar is 0, `[]` is 1),
/// counted without recursion and only up to `max + 1`.
pub(crate) fn depth_up_to(value: &Value, max: usize) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(value, 0usize)];
    while let Some((value, depth)) = stack.pop() {
        let children: Box<dyn Iterator<Item = &Value>> = match value {
            Value::Array(items) => Box::new(items.iter()),
            Value::Object(fields) => Box::new(fields.values()),
            _ => continue,
        };
        let depth = depth + 1;
        deepest = deepest.max(depth);
        if deepest > max {
            return deepest;
        }
        stack.extend(children.map(|child| (child, depth)));
    }
    deepest
}

/// `value` as JSON text, as `Value::to_string` writes it, without recursion
/// when it nests deeper than [`MAX_DEPTH`] (serde_json's writer recurses once
/// a level).
pub(crate) fn to_text(value: &Value) -> String {
    if depth_up_to(value, MAX_DEPTH) <= MAX_DEPTH {
        return value.to_string();
    }
    enum Part<'v> {
        Value(&'v Value),
        Key(&'v str),
        Text(&'static str),
    }
    let mut out = String::new();
    let mut stack = vec![Part::Value(value)];
    while let Some(part) = stack.pop() {
        match part {
            Part::Text(text) => out.push_str(text),
            Part::Key(key) => {
                out.push_str(&Value::from(key).to_string());
                out.push(':');
            }
            Part::Value(Value::Array(items)) => {
                out.push('[');
                stack.push(Part::Text("]"));
                for (i, item) in items.iter().enumerate().rev() {
                    stack.push(Part::Value(item));
                    if i > 0 {
                        stack.push(Part::Text(","));
                    }
                }
            }
            Part::Value(Value::Object(fields)) => {
                out.push('{');
                stack.push(Part::Text("}"));
                for (i, (key, item)) in fields.iter().enumerate().rev() {
                    stack.push(Part::Value(item));
                    stack.push(Part::Key(key));
                    if i > 0 {
                        stack.push(Part::Text(","));
                    }
                }
            }
            Part::Value(scalar) => out.push_str(&scalar.to_string()),
        }
    }
    out
}

/// Drops `value` without recursion (serde_json's `Drop` recurses once a level).
pub(crate) fn drop_deep(value: Value) {
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::Array(items) => stack.extend(items),
            Value::Object(fields) => stack.extend(fields.into_iter().map(|(_, v)| v)),
            _ => {}
        }
    }
}

/// Why JSON text was not read.
#[derive(Debug)]
pub(crate) enum Unread {
    /// Not JSON: serde_json's error, with where.
    Syntax(serde_json::Error),
    /// An object gives a key twice: the path of the key.
    Duplicate(JsonPath),
}

/// `text` as a JSON value, as `serde_json::from_str` reads it, except that
/// an object that gives a key twice is refused with the key's path.
pub(crate) fn from_str_unique(text: &str) -> Result<Value, Unread> {
    read_unique(text, Build)
}

/// Whether `text` is JSON with each key given once in each object, as
/// [`from_str_unique`] says, without building the value.
pub(crate) fn check_unique(text: &str) -> Result<(), Unread> {
    read_unique(text, Check)
}

fn read_unique<K: Keep>(text: &str, keep: K) -> Result<K::Out, Unread> {
    let mut found = None;
    let mut reader = serde_json::Deserializer::from_str(text);
    let read = Unique {
        keep,
        found: &mut found,
    }
    .deserialize(&mut reader)
    .and_then(|value| reader.end().map(|()| value));
    read.map_err(|error| match found {
        Some(mut path) => {
            // Gathered from the key out.
            path.reverse();
            Unread::Duplicate(JsonPath::from_segments(path))
        }
        None => Unread::Syntax(error),
    })
}

/// What a unique read keeps: the value ([`Build`]), or nothing ([`Check`]).
trait Keep: Copy {
    type Out;
    type Keys<'de>: Default;
    fn scalar(value: Value) -> Self::Out;
    fn string(value: &str) -> Self::Out;
    fn array(items: Vec<Self::Out>) -> Self::Out;
    /// Whether `key` was given already; else it is noted.
    fn seen(keys: &mut Self::Keys<'_>, key: &str) -> bool;
    fn insert<'de>(keys: &mut Self::Keys<'de>, key: Cow<'de, str>, value: Self::Out);
    fn object(keys: Self::Keys<'_>) -> Self::Out;
}

/// Keeps the value.
#[derive(Clone, Copy)]
struct Build;

impl Keep for Build {
    type Out = Value;
    type Keys<'de> = Map<String, Value>;

    fn scalar(value: Value) -> Value {
        value
    }

    fn string(value: &str) -> Value {
        Value::String(value.to_owned())
    }

    fn array(items: Vec<Value>) -> Value {
        Value::Array(items)
    }

    fn seen(keys: &mut Map<String, Value>, key: &str) -> bool {
        keys.contains_key(key)
    }

    fn insert<'de>(keys: &mut Map<String, Value>, key: Cow<'de, str>, value: Value) {
        keys.insert(key.into_owned(), value);
    }

    fn object(keys: Map<String, Value>) -> Value {
        Value::Object(keys)
    }
}

/// Keeps nothing but each object's keys while it is read (borrowed from
/// the text where they have no escapes).
#[derive(Clone, Copy)]
struct Check;

impl Keep for Check {
    type Out = ();
    type Keys<'de> = Vec<Cow<'de, str>>;

    fn scalar(_: Value) {}

    fn string(_: &str) {}

    fn array(_: Vec<()>) {}

    fn seen(keys: &mut Vec<Cow<'_, str>>, key: &str) -> bool {
        // Objects of arguments are small; a large one is sorted once.
        if keys.len() < 32 {
            return keys.iter().any(|k| k == key);
        }
        keys.binary_search_by(|k| k.as_ref().cmp(key)).is_ok()
    }

    fn insert<'de>(keys: &mut Vec<Cow<'de, str>>, key: Cow<'de, str>, (): ()) {
        if keys.len() < 32 {
            keys.push(key);
            if keys.len() == 32 {
                keys.sort_unstable();
            }
        } else if let Err(at) = keys.binary_search(&key) {
            keys.insert(at, key);
        }
    }

    fn object(_: Vec<Cow<'_, str>>) {}
}

/// A value read with each key once; `found` is the path of a key given
/// twice, set where it is found and filled in on the way out.
struct Unique<'f, K> {
    keep: K,
    found: &'f mut Option<Vec<PathSegment>>,
}

impl<'de, K: Keep> DeserializeSeed<'de> for Unique<'_, K> {
    type Value = K::Out;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<K::Out, D::Error> {
        deserializer.deserialize_any(self)
    }
}

/// A key, borrowed from the text when it can be.
struct Key;

impl<'de> DeserializeSeed<'de> for Key {
    type Value = Cow<'de, str>;

    fn deserialize<D: de::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Key {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a key")
    }

    fn visit_borrowed_str<E: de::Error>(self, key: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(key))
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(key.to_owned()))
    }

    fn visit_string<E: de::Error>(self, key: String) -> Result<Self::Value, E> {
        Ok(Cow::Owned(key))
    }
}

impl<'de, K: Keep> Visitor<'de> for Unique<'_, K> {
    type Value = K::Out;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E: de::Error>(self, value: bool) -> Result<K::Out, E> {
        Ok(K::scalar(Value::Bool(value)))
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<K::Out, E> {
        Ok(K::scalar(Value::from(value)))
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<K::Out, E> {
        Ok(K::scalar(Value::from(value)))
    }

    fn visit_f64<E: de::Error>(self, value: f64) -> Result<K::Out, E> {
        Ok(K::scalar(
            serde_json::Number::from_f64(value).map_or(Value::Null, Value::Number),
        ))
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<K::Out, E> {
        Ok(K::string(value))
    }

    fn visit_string<E: de::Error>(self, value: String) -> Result<K::Out, E> {
        Ok(K::scalar(Value::String(value)))
    }

    fn visit_unit<E: de::Error>(self) -> Result<K::Out, E> {
        Ok(K::scalar(Value::Null))
    }

    fn visit_none<E: de::Error>(self) -> Result<K::Out, E> {
        Ok(K::scalar(Value::Null))
    }

    fn visit_some<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<K::Out, D::Error> {
        self.deserialize(deserializer)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<K::Out, A::Error> {
        let mut items = Vec::new();
        loop {
            let next = Unique {
                keep: self.keep,
                found: &mut *self.found,
            };
            match seq.next_element_seed(next) {
                Ok(Some(item)) => items.push(item),
                Ok(None) => return Ok(K::array(items)),
                Err(error) => {
                    if let Some(path) = self.found.as_mut() {
                        path.push(PathSegment::Index(items.len()));
                    }
                    return Err(error);
                }
            }
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<K::Out, A::Error> {
        let mut keys = K::Keys::default();
        while let Some(key) = map.next_key_seed(Key)? {
            if K::seen(&mut keys, &key) {
                *self.found = Some(vec![PathSegment::Field(key.into_owned())]);
                return Err(de::Error::custom("a key is given twice"));
            }
            let next = Unique {
                keep: self.keep,
                found: &mut *self.found,
            };
            match map.next_value_seed(next) {
                Ok(value) => K::insert(&mut keys, key, value),
                Err(error) => {
                    if let Some(path) = self.found.as_mut() {
                        path.push(PathSegment::Field(key.into_owned()));
                    }
                    return Err(error);
                }
            }
        }
        Ok(K::object(keys))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nested(levels: usize) -> Value {
        let mut value = Value::Null;
        for i in 0..levels {
            value = if i % 2 == 0 {
                Value::Array(vec![Value::Bool(true), value])
            } else {
                // Not `json!`, which copies `value` by serializing it.
                let mut fields = serde_json::Map::new();
                fields.insert("a".into(), Value::from(1));
                fields.insert("b".into(), value);
                Value::Object(fields)
            };
        }
        value
    }

    #[test]
    fn unique_reads_read_what_serde_json_reads_and_refuse_a_key_given_twice() {
        let many: Vec<String> = (0..40).map(|i| format!("\"k{i}\": {i}")).collect();
        let many = format!("{{{}}}", many.join(", "));
        for text in [
            "1",
            "-2.5e3",
            "\"s\\u00e9\"",
            "null",
            "[true, {\"a\": [1, {\"a\": 2}], \"b\": {}}]",
            &many,
        ] {
            let expected: Value = serde_json::from_str(text).unwrap();
            assert_eq!(from_str_unique(text).unwrap(), expected, "{text}");
            assert!(check_unique(text).is_ok(), "{text}");
        }
        let twice_in_many = format!("{}, \"k7\": 0}}", &many[..many.len() - 1]);
        for (text, path) in [
            (r#"{"a": 1, "a": 2}"#, "$.a"),
            // The same key, escaped.
            (r#"{"a": 1, "\u0061": 2}"#, "$.a"),
            (r#"[0, {"x": [{"k": 1, "k": 2}]}]"#, "$[1].x[0].k"),
            (r#"{"a b": {"c": 1, "c": 1}}"#, r#"$["a b"].c"#),
            (&twice_in_many, "$.k7"),
        ] {
            for unread in [from_str_unique(text).map(drop), check_unique(text)] {
                match unread {
                    Err(Unread::Duplicate(found)) => assert_eq!(found.to_string(), path, "{text}"),
                    other => panic!("{text}: {other:?}"),
                }
            }
        }
        // Not JSON: serde_json's own error.
        let Err(Unread::Syntax(error)) = from_str_unique("{\"a\": 1} x") else {
            panic!()
        };
        assert_eq!(error.to_string(), "trailing characters at line 1 column 10");
    }

    #[test]
    fn depth_counts_levels_and_stops_past_the_limit() {
        assert_eq!(depth_up_to(&Value::Null, 10), 0);
        assert_eq!(depth_up_to(&serde_json::json!([]), 10), 1);
        assert_eq!(
            depth_up_to(&serde_json::json!({"a": [1, {"b": 2}], "c": 3}), 10),
            3
        );
        assert_eq!(depth_up_to(&nested(7), 10), 7);
        assert_eq!(depth_up_to(&nested(100), 10), 11);
    }

    #[test]
    fn deep_values_are_written_as_serde_json_writes_them() {
        for levels in [0, 1, 5, 130, 131] {
            let value = nested(levels);
            let text = to_text(&value);
            // serde_json writes it the same (on a stack large enough).
            let expected = std::thread::Builder::new()
                .stack_size(64 << 20)
                .spawn(move || value.to_string())
                .unwrap()
                .join()
                .unwrap();
            assert_eq!(text, expected);
        }
        let odd = serde_json::json!({"q\"uote": ["a\nb", 1.5, null, {}, []], "": {"x": true}});
        assert_eq!(to_text(&odd), odd.to_string());
    }

    #[test]
    fn a_deep_value_is_measured_and_dropped_on_a_small_stack() {
        std::thread::Builder::new()
            .stack_size(64 << 10)
            .spawn(|| {
                let value = nested(100_000);
                assert_eq!(depth_up_to(&value, MAX_DEPTH), MAX_DEPTH + 1);
                let text = to_text(&value);
                assert!(
                    text.starts_with("{\"a\":1,\"b\":[true,{\"a\":1,"),
                    "{}",
                    &text[..40]
                );
                drop_deep(value);
            })
            .unwrap()
            .join()
            .unwrap();
    }
}
