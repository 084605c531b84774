//! [`Value`]: what a plan's expressions evaluate to, and the JSON they become
//! when passed to a tool.

use std::fmt::{self, Write};

use serde_json::Value as Json;

use crate::schema::name::notation;

/// A value of a running plan.
///
/// Tools exchange JSON: [`Value::to_json`] writes a tool's arguments and
/// [`Value::from_json`] reads its output (`null` is `()`, an integer that fits
/// `i64` is an `Int`, any other number a `Float`). `Display` writes λ-Tool
/// literal syntax.
///
/// ```
/// use typed_tools::plan::Value;
///
/// let v = Value::from_json(serde_json::json!({"tx_id": "tx_1", "cents": 250}));
/// assert_eq!(v.to_string(), r#"{tx_id = "tx_1", cents = 250}"#);
/// assert_eq!(v.field("cents"), Some(&Value::Int(250)));
/// assert_eq!(v.to_json().unwrap(), serde_json::json!({"tx_id": "tx_1", "cents": 250}));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// `()`, JSON `null`.
    Unit,
    /// A Bool.
    Bool(bool),
    /// An Int.
    Int(i64),
    /// A Float.
    Float(f64),
    /// A String.
    String(String),
    /// A list.
    List(Vec<Value>),
    /// A record: fields in order.
    Record(Vec<(String, Value)>),
}

impl Value {
    /// The value of a JSON value.
    pub fn from_json(json: Json) -> Value {
        match json {
            Json::Null => Value::Unit,
            Json::Bool(b) => Value::Bool(b),
            Json::Number(n) => match n.as_i64() {
                Some(i) => Value::Int(i),
                None => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
            },
            Json::String(s) => Value::String(s),
            Json::Array(items) => Value::List(items.into_iter().map(Value::from_json).collect()),
            Json::Object(fields) => Value::Record(
                fields
                    .into_iter()
                    .map(|(k, v)| (k, Value::from_json(v)))
                    .collect(),
            ),
        }
    }

    /// The value of a JSON value it does not own: [`from_json`](Self::from_json)
    /// without cloning the JSON first.
    pub(crate) fn from_json_ref(json: &Json) -> Value {
        match json {
            Json::Null => Value::Unit,
            Json::Bool(b) => Value::Bool(*b),
            Json::Number(n) => match n.as_i64() {
                Some(i) => Value::Int(i),
                None => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
            },
            Json::String(s) => Value::String(s.clone()),
            Json::Array(items) => Value::List(items.iter().map(Value::from_json_ref).collect()),
            Json::Object(fields) => Value::Record(
                fields
                    .iter()
                    .map(|(k, v)| (k.clone(), Value::from_json_ref(v)))
                    .collect(),
            ),
        }
    }

    /// The value as JSON; `None` when it holds a Float that is not finite.
    pub fn to_json(&self) -> Option<Json> {
        // Loops rather than collecting into `Option<_>`, whose size hint
        // would not reserve the room known here.
        Some(match self {
            Value::Unit => Json::Null,
            Value::Bool(b) => Json::Bool(*b),
            Value::Int(i) => Json::from(*i),
            Value::Float(f) => Json::Number(serde_json::Number::from_f64(*f)?),
            Value::String(s) => Json::String(s.clone()),
            Value::List(items) => {
                let mut array = Vec::with_capacity(items.len());
                for item in items {
                    array.push(item.to_json()?);
                }
                Json::Array(array)
            }
            Value::Record(fields) => {
                let mut object = serde_json::Map::with_capacity(fields.len());
                for (name, value) in fields {
                    object.insert(name.clone(), value.to_json()?);
                }
                Json::Object(object)
            }
        })
    }

    /// The field `name` of a record.
    pub fn field(&self, name: &str) -> Option<&Value> {
        match self {
            Value::Record(fields) => fields.iter().find(|(n, _)| n == name).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The value's type in λ-Tool notation, for error messages: `Int`,
    /// `{id: String}`, `[Int]` (a list is named by its first element).
    pub fn type_name(&self) -> String {
        let mut out = String::new();
        let _ = match self {
            Value::Unit => out.write_str(notation::UNIT),
            Value::Bool(_) => out.write_str(notation::BOOL),
            Value::Int(_) => out.write_str(notation::INT),
            Value::Float(_) => out.write_str(notation::FLOAT),
            Value::String(_) => out.write_str(notation::STRING),
            Value::List(items) => match items.first() {
                Some(first) => notation::list(&mut out, first.type_name()),
                None => out.write_str("[]"),
            },
            Value::Record(fields) => notation::record(
                &mut out,
                fields.iter().map(|(n, v)| (n, true, v.type_name())),
                false,
            ),
        };
        out
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Unit => f.write_str("()"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) => write!(f, "{x:?}"),
            Value::String(s) => super::text::write_string(f, s),
            Value::List(items) => {
                f.write_str("[")?;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{item}")?;
                }
                f.write_str("]")
            }
            Value::Record(fields) => {
                f.write_str("{")?;
                for (i, (name, value)) in fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    super::text::write_field_name(f, name)?;
                    write!(f, " = {value}")?;
                }
                f.write_str("}")
            }
        }
    }
}
