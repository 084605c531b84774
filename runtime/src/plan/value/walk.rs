//! The walks over a whole [`Value`], each with a stack of its own rather than
//! the thread's: equality, `Debug`, `Display`, and the conversions to and
//! from JSON. (Dropping one is [`Node`](super::Node)'s `Drop`.)

use std::fmt;
use std::sync::Arc;

use serde_json::Value as Json;

use super::super::limits::{Limit, Meter};
use super::{List, Node, Record, Value, FIELD, HEADER, SLOT};

/// Equality of two values: a pair of parts still to compare is on `stack`.
pub(super) fn eq_values(a: &Value, b: &Value) -> bool {
    let mut stack: Vec<(&Value, &Value)> = Vec::new();
    let (mut a, mut b) = (a, b);
    loop {
        let same = match (a, b) {
            (Value::Unit, Value::Unit) => true,
            (Value::Bool(x), Value::Bool(y)) => x == y,
            (Value::Int(x), Value::Int(y)) => x == y,
            (Value::Float(x), Value::Float(y)) => x == y,
            (Value::String(x), Value::String(y)) => x == y,
            (Value::List(x), Value::List(y)) => {
                x.ptr_eq(y) || {
                    let same = x.len() == y.len();
                    if same {
                        stack.extend(x.iter().zip(y.iter()));
                    }
                    same
                }
            }
            (Value::Record(x), Value::Record(y)) => {
                x.ptr_eq(y)
                    || x.len() == y.len()
                        && x.iter().zip(y.iter()).all(|((m, v), (n, w))| {
                            stack.push((v, w));
                            m == n
                        })
            }
            _ => false,
        };
        if !same {
            return false;
        }
        match stack.pop() {
            Some((x, y)) => (a, b) = (x, y),
            None => return true,
        }
    }
}

pub(super) fn eq(a: &List, b: &List) -> bool {
    eq_values(&Value::List(a.clone()), &Value::List(b.clone()))
}

pub(super) fn eq_fields(a: &Record, b: &Record) -> bool {
    eq_values(&Value::Record(a.clone()), &Value::Record(b.clone()))
}

/// What is left to write of a value: a part, or punctuation.
enum Token<'v> {
    Value(&'v Value),
    Text(&'static str),
    /// A record field's name, before its value.
    Name(&'v str),
}

/// How [`write_tokens`] punctuates lists and records.
struct Style {
    list: [&'static str; 2],
    record: [&'static str; 2],
    between: &'static str,
    /// After a field's value.
    after_field: &'static str,
    leaf: fn(&Value, &mut fmt::Formatter<'_>) -> fmt::Result,
    /// A record field's name, before its value.
    name: fn(&str, &mut fmt::Formatter<'_>) -> fmt::Result,
}

/// Writes `value` in `style`, from a stack of what is left to write.
fn write_tokens(value: &Value, f: &mut fmt::Formatter<'_>, style: &Style) -> fmt::Result {
    let mut stack = vec![Token::Value(value)];
    while let Some(token) = stack.pop() {
        match token {
            Token::Text(text) => f.write_str(text)?,
            Token::Name(n) => (style.name)(n, f)?,
            Token::Value(Value::List(items)) => {
                f.write_str(style.list[0])?;
                stack.push(Token::Text(style.list[1]));
                for (i, item) in items.iter().enumerate().rev() {
                    stack.push(Token::Value(item));
                    if i > 0 {
                        stack.push(Token::Text(style.between));
                    }
                }
            }
            Token::Value(Value::Record(fields)) => {
                f.write_str(style.record[0])?;
                stack.push(Token::Text(style.record[1]));
                for (i, (n, v)) in fields.iter().enumerate().rev() {
                    stack.push(Token::Text(style.after_field));
                    stack.push(Token::Value(v));
                    stack.push(Token::Name(n));
                    if i > 0 {
                        stack.push(Token::Text(style.between));
                    }
                }
            }
            Token::Value(other) => (style.leaf)(other, f)?,
        }
    }
    Ok(())
}

/// `Display`: λ-Tool literal syntax.
pub(super) fn display(value: &Value, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    write_tokens(
        value,
        f,
        &Style {
            list: ["[", "]"],
            record: ["{", "}"],
            between: ", ",
            after_field: "",
            leaf: |leaf, f| match leaf {
                Value::Unit => f.write_str("()"),
                Value::Bool(b) => write!(f, "{b}"),
                Value::Int(i) => write!(f, "{i}"),
                Value::Float(x) => write!(f, "{x:?}"),
                Value::String(s) => super::super::text::write_string(f, s),
                Value::List(_) | Value::Record(_) => unreachable!("written part by part"),
            },
            name: |name, f| {
                super::super::text::write_field_name(f, name)?;
                f.write_str(" = ")
            },
        },
    )
}

/// `Debug`: as `#[derive(Debug)]` would write it, on one line.
pub(super) fn debug(value: &Value, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    write_tokens(
        value,
        f,
        &Style {
            list: ["List([", "])"],
            record: ["Record([", "])"],
            between: ", ",
            after_field: ")",
            leaf: |leaf, f| match leaf {
                Value::Unit => f.write_str("Unit"),
                Value::Bool(b) => write!(f, "Bool({b:?})"),
                Value::Int(i) => write!(f, "Int({i:?})"),
                Value::Float(x) => write!(f, "Float({x:?})"),
                Value::String(s) => write!(f, "String({:?})", &**s),
                Value::List(_) | Value::Record(_) => unreachable!("written part by part"),
            },
            name: |name, f| write!(f, "({name:?}, "),
        },
    )
}

/// A list or record half converted to JSON: its parts so far, and the rest.
enum ToJson<'v> {
    List(std::slice::Iter<'v, Value>, Vec<Json>),
    Record(
        std::slice::Iter<'v, (Arc<str>, Value)>,
        serde_json::Map<String, Json>,
        Option<&'v str>,
    ),
}

/// [`Value::to_json`].
pub(super) fn to_json(value: &Value) -> Option<Json> {
    let mut stack: Vec<ToJson<'_>> = Vec::new();
    let mut next = value;
    loop {
        // Down: a leaf's JSON, or a list or record to fill.
        let mut done = match next {
            Value::Unit => Some(Json::Null),
            Value::Bool(b) => Some(Json::Bool(*b)),
            Value::Int(i) => Some(Json::from(*i)),
            Value::Float(f) => Some(Json::Number(serde_json::Number::from_f64(*f)?)),
            Value::String(s) => Some(Json::String(String::from(&**s))),
            Value::List(items) => {
                stack.push(ToJson::List(items.iter(), Vec::with_capacity(items.len())));
                None
            }
            Value::Record(fields) => {
                let map = serde_json::Map::with_capacity(fields.len());
                stack.push(ToJson::Record(fields.iter(), map, None));
                None
            }
        };
        // Up: hand the finished JSON to its parent, until one has a part left.
        loop {
            let Some(top) = stack.last_mut() else {
                return done;
            };
            let part = match top {
                ToJson::List(rest, out) => {
                    out.extend(done.take());
                    rest.next()
                }
                ToJson::Record(rest, out, name) => {
                    if let (Some(json), Some(name)) = (done.take(), name.take()) {
                        out.insert(name.to_owned(), json);
                    }
                    rest.next().map(|(n, v)| {
                        *name = Some(n);
                        v
                    })
                }
            };
            if let Some(part) = part {
                next = part;
                break;
            }
            done = Some(match stack.pop() {
                Some(ToJson::List(_, out)) => Json::Array(out),
                Some(ToJson::Record(_, out, _)) => Json::Object(out),
                None => unreachable!("the top was just read"),
            });
        }
    }
}

/// An integer that fits `i64` is an Int, any other number a Float.
fn number(n: &serde_json::Number) -> Value {
    match n.as_i64() {
        Some(i) => Value::Int(i),
        None => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
    }
}

/// Drops `json` with a stack of its own: serde_json's drop recurses once per
/// level.
pub(super) fn drop_json(json: Json) {
    crate::json::drop_deep(json);
}

/// A JSON array or object half read: its parts so far, and the rest, with
/// the depth and size of the parts read.
enum FromJson<'j> {
    Array(std::slice::Iter<'j, Json>, Vec<Value>, usize, usize),
    Object(
        serde_json::map::Iter<'j>,
        Vec<(Arc<str>, Value)>,
        usize,
        usize,
    ),
}

/// The value of `json`, within the limits `meter` enforces (none, for
/// [`Value::from_json`]): each array's length and each object's field count
/// checked before it is read, each string's bytes before it is copied, depth
/// and size as the parts come in.
pub(crate) fn from_json_within(json: &Json, meter: &mut Meter) -> Result<Value, Limit> {
    match json {
        Json::Null => return Ok(Value::Unit),
        Json::Bool(b) => return Ok(Value::Bool(*b)),
        Json::Number(n) => return Ok(number(n)),
        _ => {}
    }
    let mut stack: Vec<FromJson<'_>> = Vec::new();
    let mut next = json;
    loop {
        let mut done = match next {
            Json::Null => Some(Value::Unit),
            Json::Bool(b) => Some(Value::Bool(*b)),
            Json::Number(n) => Some(number(n)),
            Json::String(s) => {
                meter.string(s.len())?;
                Some(Value::String(Arc::from(s.as_str())))
            }
            Json::Array(items) => {
                meter.nest(stack.len() + 1)?;
                meter.list(items.len())?;
                let out = Vec::with_capacity(items.len());
                stack.push(FromJson::Array(items.iter(), out, 0, HEADER));
                None
            }
            Json::Object(fields) => {
                meter.nest(stack.len() + 1)?;
                meter.record(fields.len())?;
                let out = Vec::with_capacity(fields.len());
                stack.push(FromJson::Object(fields.iter(), out, 0, HEADER));
                None
            }
        };
        loop {
            let Some(top) = stack.last_mut() else {
                return Ok(done.expect("a value is read before the stack empties"));
            };
            let part = match top {
                FromJson::Array(rest, out, depth, size) => {
                    if let Some(value) = done.take() {
                        *depth = (*depth).max(value.depth());
                        *size = size.saturating_add(SLOT + value.size());
                        meter.size(*size)?;
                        out.push(value);
                    }
                    rest.next()
                }
                FromJson::Object(rest, out, depth, size) => {
                    if let Some(value) = done.take() {
                        let name = out.last_mut().expect("a field's name is pushed first");
                        *depth = (*depth).max(value.depth());
                        *size = size.saturating_add(FIELD + name.0.len() + value.size());
                        meter.size(*size)?;
                        name.1 = value;
                    }
                    match rest.next() {
                        Some((name, json)) => {
                            meter.name(name.len())?;
                            out.push((Arc::from(name.as_str()), Value::Unit));
                            Some(json)
                        }
                        None => None,
                    }
                }
            };
            if let Some(part) = part {
                next = part;
                break;
            }
            done = Some(match stack.pop() {
                Some(FromJson::Array(_, items, depth, size)) => Value::List(List(Arc::new(Node {
                    items,
                    depth: depth + 1,
                    size,
                }))),
                Some(FromJson::Object(_, fields, depth, size)) => {
                    Value::Record(Record(Arc::new(Node {
                        items: fields,
                        depth: depth + 1,
                        size,
                    })))
                }
                None => unreachable!("the top was just read"),
            });
        }
    }
}
