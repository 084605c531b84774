//! [`Value`]: what a plan's expressions evaluate to, and the JSON they become
//! when passed to a tool.
//!
//! Strings, lists and records are shared (reference counted), so that reading
//! a variable, or a field of one, is O(1) however large its value: a `fold`
//! that carries a growing value does not copy it at each step. Each list and
//! record knows its [`depth`](Value::depth) and [`size`](Value::size), so
//! that the interpreter checks its [`Limits`](super::Limits) before it builds
//! a value, in time independent of the value's parts. The walks over a whole
//! value (`==`, `Debug`, `Display`, [`to_json`](Value::to_json),
//! [`from_json`](Value::from_json), dropping one) use a stack of their own,
//! not the thread's, so that no value of any depth overflows it.

use std::fmt::{self, Write};
use std::ops::Deref;
use std::sync::Arc;

use serde_json::Value as Json;

use crate::schema::name::notation;

mod walk;

pub(crate) use walk::from_json_within;

use super::limits::{Limit, Meter};

/// A value of a running plan.
///
/// Tools exchange JSON: [`Value::to_json`] writes a tool's arguments and
/// [`Value::from_json`] reads its output (`null` is `()`, an integer that fits
/// `i64` is an `Int`, any other number a `Float`). `Display` writes λ-Tool
/// literal syntax. Cloning one is O(1): strings, lists and records are shared.
///
/// ```
/// use typed_tools::plan::Value;
///
/// let v = Value::from_json(serde_json::json!({"tx_id": "tx_1", "cents": 250}));
/// assert_eq!(v.to_string(), r#"{tx_id = "tx_1", cents = 250}"#);
/// assert_eq!(v.field("cents"), Some(&Value::Int(250)));
/// assert_eq!(v.to_json().unwrap(), serde_json::json!({"tx_id": "tx_1", "cents": 250}));
///
/// let list = Value::list([Value::Int(1), Value::String("two".into())]);
/// assert_eq!(list.to_string(), r#"[1, "two"]"#);
/// assert_eq!(list, Value::list(vec![Value::Int(1), Value::String("two".into())]));
/// let Value::List(items) = &list else { unreachable!() };
/// assert_eq!(items.len(), 2);
/// assert_eq!(list.depth(), 1);
/// ```
#[derive(Clone)]
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
    String(Arc<str>),
    /// A list: its elements ([`List`] dereferences to `[Value]`).
    List(List),
    /// A record: fields in order ([`Record`] dereferences to `[(name, value)]`).
    Record(Record),
}

/// The elements of a [`Value::List`], shared: cloning one is O(1). It
/// dereferences to `[Value]`.
///
/// ```
/// use typed_tools::plan::{List, Value};
///
/// let list: List = vec![Value::Int(1), Value::Int(2)].into();
/// assert_eq!(list.len(), 2);
/// assert_eq!(list[1], Value::Int(2));
/// ```
#[derive(Clone)]
pub struct List(Arc<Node<Value>>);

/// The fields of a [`Value::Record`], in order, shared: cloning one is O(1).
/// It dereferences to `[(name, value)]`.
///
/// ```
/// use typed_tools::plan::{Record, Value};
///
/// let record = Record::new(vec![("id".into(), Value::Int(7))]);
/// assert_eq!(record.len(), 1);
/// assert_eq!(&*record[0].0, "id");
/// ```
#[derive(Clone)]
pub struct Record(Arc<Node<(Arc<str>, Value)>>);

/// A list's or a record's parts, with what the limits read of them.
struct Node<T: Part> {
    items: Vec<T>,
    /// 1 + the depth of the deepest part (a scalar or a string is 0 deep).
    depth: usize,
    /// [`Value::size`].
    size: usize,
}

/// What a [`Node`] holds: a list's element or a record's field.
trait Part {
    fn value(&self) -> &Value;
    fn into_value(self) -> Value;
    /// The bytes of the part's slot, its name included.
    fn slot(&self) -> usize;
}

impl Part for Value {
    fn value(&self) -> &Value {
        self
    }
    fn into_value(self) -> Value {
        self
    }
    fn slot(&self) -> usize {
        SLOT
    }
}

impl Part for (Arc<str>, Value) {
    fn value(&self) -> &Value {
        &self.1
    }
    fn into_value(self) -> Value {
        self.1
    }
    fn slot(&self) -> usize {
        FIELD + self.0.len()
    }
}

/// The bytes of a list element's slot (`size_of::<Value>()`).
pub(crate) const SLOT: usize = 24;
/// The bytes of a record field's slot and its name's header.
pub(crate) const FIELD: usize = 56;
/// The bytes of a list's or record's header, or a string's.
pub(crate) const HEADER: usize = 64;

/// Below this depth a value is dropped by the compiler's recursive drop, and
/// written as JSON by a recursive function (at most this many frames deep);
/// from it on, with a stack of their own.
const SHALLOW: usize = 32;

impl<T: Part> Node<T> {
    fn new(items: Vec<T>) -> Node<T> {
        let mut depth = 0;
        let mut size = HEADER;
        for item in &items {
            depth = depth.max(item.value().depth());
            size = size
                .saturating_add(item.slot())
                .saturating_add(item.value().size());
        }
        Node {
            items,
            depth: depth + 1,
            size,
        }
    }
}

impl<T: Part> Drop for Node<T> {
    /// A deep value is taken apart with a stack of its own: the compiler's
    /// drop recurses once per level, and a value thousands of levels deep
    /// would overflow a small thread's stack.
    fn drop(&mut self) {
        if self.depth < SHALLOW {
            return;
        }
        let mut stack: Vec<Value> = self.items.drain(..).map(Part::into_value).collect();
        while let Some(value) = stack.pop() {
            match value {
                Value::List(List(node)) => {
                    if let Some(mut node) = Arc::into_inner(node) {
                        stack.append(&mut node.items);
                    }
                }
                Value::Record(Record(node)) => {
                    if let Some(mut node) = Arc::into_inner(node) {
                        stack.extend(node.items.drain(..).map(Part::into_value));
                    }
                }
                _ => {}
            }
        }
    }
}

impl List {
    /// A list of `items`.
    pub fn new(items: Vec<Value>) -> List {
        List(Arc::new(Node::new(items)))
    }

    /// A list of `items` whose depth and size its builder counted already.
    pub(crate) fn counted(items: Vec<Value>, depth: usize, size: usize) -> List {
        List(Arc::new(Node { items, depth, size }))
    }

    /// Whether `self` and `other` are the same shared list (not only equal).
    pub fn ptr_eq(&self, other: &List) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Record {
    /// A record of `fields`, in order.
    pub fn new(fields: Vec<(Arc<str>, Value)>) -> Record {
        Record(Arc::new(Node::new(fields)))
    }

    /// A record of `fields`, refused when its depth or size is past the
    /// limits: counted once, before it is shared.
    pub(crate) fn within(fields: Vec<(Arc<str>, Value)>, meter: &Meter) -> Result<Record, Limit> {
        let node = Node::new(fields);
        meter.nest(node.depth)?;
        meter.size(node.size)?;
        Ok(Record(Arc::new(node)))
    }

    /// Whether `self` and `other` are the same shared record (not only equal).
    pub fn ptr_eq(&self, other: &Record) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Deref for List {
    type Target = [Value];
    fn deref(&self) -> &[Value] {
        &self.0.items
    }
}

impl Deref for Record {
    type Target = [(Arc<str>, Value)];
    fn deref(&self) -> &[(Arc<str>, Value)] {
        &self.0.items
    }
}

impl From<Vec<Value>> for List {
    fn from(items: Vec<Value>) -> List {
        List::new(items)
    }
}

impl FromIterator<Value> for List {
    fn from_iter<I: IntoIterator<Item = Value>>(items: I) -> List {
        List::new(items.into_iter().collect())
    }
}

impl From<Vec<(Arc<str>, Value)>> for Record {
    fn from(fields: Vec<(Arc<str>, Value)>) -> Record {
        Record::new(fields)
    }
}

impl PartialEq for List {
    fn eq(&self, other: &List) -> bool {
        walk::eq(self, other)
    }
}

impl PartialEq for Record {
    fn eq(&self, other: &Record) -> bool {
        walk::eq_fields(self, other)
    }
}

impl fmt::Debug for List {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        walk::debug(&Value::List(self.clone()), f)
    }
}

impl fmt::Debug for Record {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        walk::debug(&Value::Record(self.clone()), f)
    }
}

/// Writes `value`, less than [`SHALLOW`] levels deep, as JSON text at the
/// end of `out`, recursively, as serde_json writes it; `false` at a Float
/// that is not finite.
fn write_shallow(value: &Value, out: &mut String) -> bool {
    match value {
        Value::Unit => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Int(i) => write_int(*i, out),
        Value::Float(f) => match serde_json::Number::from_f64(*f) {
            Some(number) => {
                let _ = write!(out, "{number}");
            }
            None => return false,
        },
        Value::String(text) => write_str(text, out),
        Value::List(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                if !write_shallow(item, out) {
                    return false;
                }
            }
            out.push(']');
        }
        Value::Record(fields) => {
            out.push('{');
            for (i, (name, value)) in fields.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_str(name, out);
                out.push(':');
                if !write_shallow(value, out) {
                    return false;
                }
            }
            out.push('}');
        }
    }
    true
}

/// An integer in decimal, without `fmt`'s machinery.
fn write_int(i: i64, out: &mut String) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut n = i.unsigned_abs();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if i < 0 {
        out.push('-');
    }
    for &digit in &digits[at..] {
        out.push(char::from(digit));
    }
}

/// A JSON string, escaped as serde_json escapes: `"` and `\`, control
/// characters (`\n` and the like, else `\u00XX`), nothing else.
fn write_str(text: &str, out: &mut String) {
    out.push('"');
    let mut plain = 0;
    for (at, byte) in text.bytes().enumerate() {
        let escape = match byte {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            0..0x20 => "",
            _ => continue,
        };
        out.push_str(&text[plain..at]);
        plain = at + 1;
        if escape.is_empty() {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.push_str("\\u00");
            out.push(char::from(HEX[usize::from(byte >> 4)]));
            out.push(char::from(HEX[usize::from(byte & 0xf)]));
        } else {
            out.push_str(escape);
        }
    }
    out.push_str(&text[plain..]);
    out.push('"');
}

impl Value {
    /// A list of `items`.
    pub fn list(items: impl IntoIterator<Item = Value>) -> Value {
        Value::List(items.into_iter().collect())
    }

    /// A record of `fields`, in order.
    ///
    /// ```
    /// use typed_tools::plan::Value;
    ///
    /// let record = Value::record([("id", Value::Int(7)), ("name", Value::String("Ana".into()))]);
    /// assert_eq!(record.to_string(), r#"{id = 7, name = "Ana"}"#);
    /// ```
    pub fn record<N: Into<Arc<str>>>(fields: impl IntoIterator<Item = (N, Value)>) -> Value {
        Value::Record(Record::new(
            fields.into_iter().map(|(n, v)| (n.into(), v)).collect(),
        ))
    }

    /// The value of a JSON value. Iterative: any depth is read without
    /// recursion.
    pub fn from_json(json: Json) -> Value {
        let value = Value::from_json_ref(&json);
        if value.depth() >= SHALLOW {
            walk::drop_json(json);
        }
        value
    }

    /// The value of a JSON value it does not own: [`from_json`](Self::from_json)
    /// without cloning the JSON first.
    pub(crate) fn from_json_ref(json: &Json) -> Value {
        match from_json_within(json, &mut Meter::unlimited()) {
            Ok(value) => value,
            Err(_) => unreachable!("no bounds, no error"),
        }
    }

    /// The value as JSON text, as [`to_json`](Self::to_json) and
    /// `serde_json::to_string` would write it but without building the JSON
    /// (how a plan writes a tool's arguments); `None` when it holds a Float
    /// that is not finite. Iterative past 32 levels, as `to_json` is.
    ///
    /// ```
    /// use typed_tools::plan::Value;
    ///
    /// let v = Value::record([("id", Value::Int(7)), ("tags", Value::list([Value::String("a\"b".into())]))]);
    /// assert_eq!(v.to_json_text().unwrap(), r#"{"id":7,"tags":["a\"b"]}"#);
    /// assert_eq!(Value::Float(f64::NAN).to_json_text(), None);
    /// ```
    pub fn to_json_text(&self) -> Option<String> {
        let mut text = String::new();
        self.write_json(&mut text).then_some(text)
    }

    /// Writes [`to_json_text`](Self::to_json_text) at the end of `out`;
    /// `false` (and `out` holding part of it) for a Float that is not finite.
    pub(crate) fn write_json(&self, out: &mut String) -> bool {
        if self.depth() < SHALLOW {
            return write_shallow(self, out);
        }
        let Some(json) = walk::to_json(self) else {
            return false;
        };
        out.push_str(&crate::json::to_text(&json));
        walk::drop_json(json);
        true
    }

    /// The value as JSON; `None` when it holds a Float that is not finite.
    /// Iterative: any depth is written without recursion (but serde_json's
    /// own walks over the JSON, dropping it included, recurse).
    pub fn to_json(&self) -> Option<Json> {
        if self.depth() < SHALLOW {
            self.to_json_shallow()
        } else {
            walk::to_json(self)
        }
    }

    /// [`to_json`](Self::to_json) of a value less than [`SHALLOW`] deep,
    /// recursively: no stack to allocate for a tool's usual arguments.
    fn to_json_shallow(&self) -> Option<Json> {
        // Loops rather than collecting into `Option<_>`, whose size hint
        // would not reserve the room known here.
        Some(match self {
            Value::Unit => Json::Null,
            Value::Bool(b) => Json::Bool(*b),
            Value::Int(i) => Json::from(*i),
            Value::Float(f) => Json::Number(serde_json::Number::from_f64(*f)?),
            Value::String(s) => Json::String(String::from(&**s)),
            Value::List(items) => {
                let mut array = Vec::with_capacity(items.len());
                for item in items.iter() {
                    array.push(item.to_json_shallow()?);
                }
                Json::Array(array)
            }
            Value::Record(fields) => {
                let mut object = serde_json::Map::with_capacity(fields.len());
                for (name, value) in fields.iter() {
                    object.insert(String::from(&**name), value.to_json_shallow()?);
                }
                Json::Object(object)
            }
        })
    }

    /// The field `name` of a record.
    pub fn field(&self, name: &str) -> Option<&Value> {
        match self {
            Value::Record(fields) => fields.iter().find(|(n, _)| &**n == name).map(|(_, v)| v),
            _ => None,
        }
    }

    /// How deeply lists and records nest in the value: 0 for a scalar or a
    /// string, 1 for a list or record of those, and so on. O(1): each list
    /// and record knows its own.
    ///
    /// ```
    /// use typed_tools::plan::Value;
    ///
    /// let v = Value::from_json(serde_json::json!({"items": [[1], []]}));
    /// assert_eq!(v.depth(), 3);
    /// ```
    pub fn depth(&self) -> usize {
        match self {
            Value::List(List(node)) => node.depth,
            Value::Record(Record(node)) => node.depth,
            _ => 0,
        }
    }

    /// The value's size in bytes, as the [limits](super::Limits) count it: 64
    /// for each string, list and record, a string's bytes, 24 for each
    /// element of a list, 56 for each field of a record plus its name's
    /// bytes. A part shared several times (`[s, s]`) counts each time: it
    /// is written that many times when the value becomes JSON. O(1): each
    /// list and record knows its own.
    ///
    /// ```
    /// use typed_tools::plan::Value;
    ///
    /// assert_eq!(Value::Int(7).size(), 0);
    /// assert_eq!(Value::String("abc".into()).size(), 64 + 3);
    /// assert_eq!(Value::list([Value::Int(1), Value::Int(2)]).size(), 64 + 2 * 24);
    /// ```
    pub fn size(&self) -> usize {
        match self {
            Value::Unit | Value::Bool(_) | Value::Int(_) | Value::Float(_) => 0,
            Value::String(s) => HEADER.saturating_add(s.len()),
            Value::List(List(node)) => node.size,
            Value::Record(Record(node)) => node.size,
        }
    }

    /// The value's type in λ-Tool notation, for error messages: `Int`,
    /// `{id: String}`, `[Int]` (a list is named by its first element). Past
    /// 16 levels, a part is written `..`.
    pub fn type_name(&self) -> String {
        let mut out = String::new();
        let _ = self.write_type(&mut out, 16);
        out
    }

    fn write_type(&self, out: &mut String, levels: usize) -> fmt::Result {
        if levels == 0 {
            return out.write_str("..");
        }
        match self {
            Value::Unit => out.write_str(notation::UNIT),
            Value::Bool(_) => out.write_str(notation::BOOL),
            Value::Int(_) => out.write_str(notation::INT),
            Value::Float(_) => out.write_str(notation::FLOAT),
            Value::String(_) => out.write_str(notation::STRING),
            Value::List(items) => match items.first() {
                Some(first) => {
                    let mut inner = String::new();
                    first.write_type(&mut inner, levels - 1)?;
                    notation::list(out, inner)
                }
                None => out.write_str("[]"),
            },
            Value::Record(fields) => notation::record(
                out,
                fields.iter().map(|(n, v)| {
                    let mut inner = String::new();
                    let _ = v.write_type(&mut inner, levels - 1);
                    (n, true, inner)
                }),
                false,
            ),
        }
    }
}

impl From<List> for Value {
    fn from(list: List) -> Value {
        Value::List(list)
    }
}

impl From<Record> for Value {
    fn from(record: Record) -> Value {
        Value::Record(record)
    }
}

impl PartialEq for Value {
    /// Structural equality, iterative; a part shared by both sides is equal
    /// without a look inside.
    fn eq(&self, other: &Value) -> bool {
        walk::eq_values(self, other)
    }
}

impl fmt::Debug for Value {
    /// As `#[derive(Debug)]` would write it (`List([Int(1)])`,
    /// `Record([("id", Int(1))])`), without recursion.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        walk::debug(self, f)
    }
}

impl fmt::Display for Value {
    /// λ-Tool literal syntax, without recursion.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        walk::display(self, f)
    }
}
