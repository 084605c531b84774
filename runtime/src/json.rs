//! Walks over `serde_json` values that no depth can overflow.
//!
//! serde_json's own walks (`Clone`, `Drop`, `Serialize`, `PartialEq`) recurse,
//! once per level; its parser stops at 128 levels, so JSON read from text is
//! safe on any thread. A `Value` built in Rust may be deeper: where the
//! library takes one (a run-time tool's schema), it measures the depth here
//! first, without recursion, and refuses what is deeper than [`MAX_DEPTH`].

use serde_json::Value;

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
