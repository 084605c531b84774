//! A tool's output, read from its JSON text straight into a [`Value`], held
//! to the output type the check gave the tool as it is read, within the
//! run's limits: one pass, no JSON value built in between.
//!
//! The check trusts a tool's output schema; this is where that trust is kept
//! at run time, so that an output that breaks it fails as the tool's error
//! rather than as a type error later in the plan: an integer out of Int's
//! range (a `u64` past `i64::MAX`), a NaN that serde wrote as `null`, a
//! run-time tool's JSON. An integer where a Float is due becomes that Float
//! (the one conversion: a run-time tool may write `2` for `2.0`). Fields a
//! record type does not list are read as they are: nothing reads them by
//! type.

use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use super::super::check::Ty;
use super::super::limits::{Limit, Meter};
use super::super::value::{List, Record, Value, HEADER, SLOT};
use super::operations::Names;

/// Why an output could not be read.
pub(super) enum Unfit {
    /// It does not fit its type: the message says where and how.
    Misfit(String),
    /// Reading it went past one of the run's limits.
    Limit(Limit),
}

/// The value of a tool's output `text`, held to `ty` ([`Ty::Any`] for a run
/// without the check), its parts counted by `meter` as they are read.
pub(super) fn read_output(
    text: &str,
    ty: &Ty,
    meter: &mut Meter,
    names: &mut Names,
) -> Result<Value, Unfit> {
    if let Some(value) = scalar(text, present(ty)) {
        if let Value::String(text) = &value {
            meter.string(text.len()).map_err(Unfit::Limit)?;
        }
        return Ok(value);
    }
    let mut reading = Reading {
        meter,
        names,
        fault: None,
    };
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let read = Typed {
        ty,
        level: 0,
        reading: &mut reading,
    }
    .deserialize(&mut deserializer)
    .and_then(|value| deserializer.end().map(|()| value));
    match (read, reading.fault) {
        (Ok(value), _) => Ok(value),
        (Err(_), Some(Fault::Limit(limit))) => Err(Unfit::Limit(limit)),
        (Err(_), Some(Fault::Misfit(mut misfit))) => {
            misfit.path.reverse();
            let at: String = std::iter::once("output".to_owned())
                .chain(misfit.path)
                .collect();
            Err(Unfit::Misfit(format!(
                "`{at}` is {}, where its output type says {}",
                misfit.found, misfit.ty
            )))
        }
        // The toolbox writes every output with serde_json, so only a
        // nesting past serde_json's own limit gets here.
        (Err(error), None) => Err(Unfit::Misfit(format!("it cannot be read: {error}"))),
    }
}

/// The value of an output that is a lone integer, string or Bool (most
/// are) and fits `ty` as it is, read without a deserializer; `None` for
/// any other, which the deserializer reads (and refuses, if it must).
#[inline]
fn scalar(text: &str, ty: &Ty) -> Option<Value> {
    let bytes = text.as_bytes();
    match (bytes.first()?, ty) {
        (b'"', Ty::Any | Ty::String) => {
            let inner = text.strip_prefix('"')?.strip_suffix('"')?;
            let plain = inner.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\');
            plain.then(|| Value::String(Arc::from(inner)))
        }
        (b'-' | b'0'..=b'9', Ty::Any | Ty::Int | Ty::Float) => {
            let digits = bytes.strip_prefix(b"-").unwrap_or(bytes);
            // At most 18 digits: any such integer fits an i64.
            if digits.is_empty() || digits.len() > 18 || !digits.iter().all(u8::is_ascii_digit) {
                return None;
            }
            let n = digits
                .iter()
                .fold(0i64, |n, d| n * 10 + i64::from(d - b'0'));
            int_as(ty, if bytes[0] == b'-' { -n } else { n })
        }
        (b't' | b'f', Ty::Any | Ty::Bool) => match text {
            "true" => Some(Value::Bool(true)),
            "false" => Some(Value::Bool(false)),
            _ => None,
        },
        _ => None,
    }
}

/// What a read shares across its levels.
struct Reading<'r> {
    meter: &'r mut Meter,
    names: &'r mut Names,
    /// Why the read stopped, when it was this module's choice: serde's
    /// error carries only text, so the reason is kept here.
    fault: Option<Fault>,
}

enum Fault {
    Misfit(Misfit),
    Limit(Limit),
}

/// Where an output does not fit: the path to it, innermost first (built on
/// the way out, so that an output that fits allocates nothing), what is
/// there, and the type due there.
struct Misfit {
    path: Vec<String>,
    found: &'static str,
    ty: String,
}

impl Reading<'_> {
    /// Stops the read: `value` (described by `found`) is not a `ty`.
    #[cold]
    fn misfit<E: de::Error>(&mut self, ty: &Ty, found: &'static str) -> E {
        self.fault = Some(Fault::Misfit(Misfit {
            path: Vec::new(),
            found,
            ty: ty.to_string(),
        }));
        E::custom("the output does not fit its type")
    }

    /// A part below the current level failed: say where, on the way out.
    fn at(&mut self, place: impl FnOnce() -> String) {
        if let Some(Fault::Misfit(misfit)) = &mut self.fault {
            misfit.path.push(place());
        }
    }
}

/// Stops the read at a limit (kept in `fault`), or goes on with what was
/// within it.
fn within<T, E: de::Error>(fault: &mut Option<Fault>, result: Result<T, Limit>) -> Result<T, E> {
    result.map_err(|limit| {
        *fault = Some(Fault::Limit(limit));
        E::custom("the output is past a limit")
    })
}

/// One value of the output, due to be a `ty`, `level` lists and records deep.
struct Typed<'a, 'r> {
    ty: &'a Ty,
    level: usize,
    reading: &'a mut Reading<'r>,
}

/// The type due for a value that is not `null`: an optional's inner type.
fn present(mut ty: &Ty) -> &Ty {
    while let Ty::Nullable(inner) = ty {
        ty = inner;
    }
    ty
}

/// An integer as the value `ty` (an optional's inner type) is due to be:
/// an Int, or a Float where one is due; `None` where neither fits.
fn int_as(ty: &Ty, i: i64) -> Option<Value> {
    match ty {
        Ty::Any | Ty::Int => Some(Value::Int(i)),
        // Exact up to 2^53; past it, the nearest Float.
        Ty::Float => Some(Value::Float(i as f64)),
        _ => None,
    }
}

impl Typed<'_, '_> {
    fn int<E: de::Error>(self, i: i64) -> Result<Value, E> {
        let ty = present(self.ty);
        int_as(ty, i).ok_or_else(|| self.reading.misfit(ty, "an Int"))
    }
}

impl<'de> DeserializeSeed<'de> for Typed<'_, '_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Typed<'_, '_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("JSON")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        match self.ty {
            Ty::Any | Ty::Unit | Ty::Nullable(_) => Ok(Value::Unit),
            ty => Err(self.reading.misfit(ty, "null")),
        }
    }

    fn visit_bool<E: de::Error>(self, b: bool) -> Result<Value, E> {
        match present(self.ty) {
            Ty::Any | Ty::Bool => Ok(Value::Bool(b)),
            ty => Err(self.reading.misfit(ty, "a Bool")),
        }
    }

    fn visit_i64<E: de::Error>(self, i: i64) -> Result<Value, E> {
        self.int(i)
    }

    fn visit_u64<E: de::Error>(self, u: u64) -> Result<Value, E> {
        if let Ok(i) = i64::try_from(u) {
            return self.int(i);
        }
        match present(self.ty) {
            Ty::Any | Ty::Float => Ok(Value::Float(u as f64)),
            ty => Err(self.reading.misfit(ty, "an integer out of Int's range")),
        }
    }

    fn visit_f64<E: de::Error>(self, f: f64) -> Result<Value, E> {
        match present(self.ty) {
            Ty::Any | Ty::Float => Ok(Value::Float(f)),
            ty => Err(self.reading.misfit(ty, "a Float")),
        }
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Value, E> {
        match present(self.ty) {
            Ty::Any | Ty::String => {
                within(
                    &mut self.reading.fault,
                    self.reading.meter.string(text.len()),
                )?;
                Ok(Value::String(Arc::from(text)))
            }
            ty => Err(self.reading.misfit(ty, "a String")),
        }
    }

    fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<Value, S::Error> {
        let of = match present(self.ty) {
            Ty::Any => &Ty::Any,
            Ty::List(of) => &**of,
            ty => return Err(self.reading.misfit(ty, "a List")),
        };
        let level = self.level + 1;
        let reading = self.reading;
        within(&mut reading.fault, reading.meter.nest(level))?;
        within(&mut reading.fault, reading.meter.list(0))?;
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
        let (mut depth, mut size) = (0, HEADER);
        loop {
            let part = Typed {
                ty: of,
                level,
                reading: &mut *reading,
            };
            let item = match seq.next_element_seed(part) {
                Ok(Some(item)) => item,
                Ok(None) => break,
                Err(error) => {
                    let i = items.len();
                    reading.at(|| format!("[{i}]"));
                    return Err(error);
                }
            };
            depth = item.depth().max(depth);
            size = size.saturating_add(SLOT).saturating_add(item.size());
            within(&mut reading.fault, reading.meter.element(items.len() + 1))?;
            within(&mut reading.fault, reading.meter.size(size))?;
            items.push(item);
        }
        Ok(Value::List(List::counted(items, depth + 1, size)))
    }

    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Value, M::Error> {
        let record = match present(self.ty) {
            Ty::Any => None,
            Ty::Record(record) => Some(record),
            ty => return Err(self.reading.misfit(ty, "a record")),
        };
        let level = self.level + 1;
        let reading = self.reading;
        within(&mut reading.fault, reading.meter.nest(level))?;
        within(&mut reading.fault, reading.meter.record(0))?;
        let mut fields: Vec<(Arc<str>, Value)> = Vec::new();
        // The names of a large record, to find a repeated key in O(1).
        let mut large: Option<HashSet<Arc<str>>> = None;
        while let Some(key) = map.next_key::<KeyText<'_>>()? {
            let key = key.as_str();
            let ty = record
                .and_then(|record| record.field(key))
                .map_or(&Ty::Any, |field| &field.ty);
            let part = Typed {
                ty,
                level,
                reading: &mut *reading,
            };
            let value = match map.next_value_seed(part) {
                Ok(value) => value,
                Err(error) => {
                    reading.at(|| format!(".{key}"));
                    return Err(error);
                }
            };
            let repeated = match &large {
                None => fields.iter().position(|(name, _)| **name == *key),
                Some(names) if names.contains(key) => {
                    fields.iter().position(|(name, _)| **name == *key)
                }
                Some(_) => None,
            };
            if let Some(at) = repeated {
                // A repeated key: the last value, where the first was (as
                // serde_json's own map reads it).
                fields[at].1 = value;
                continue;
            }
            let name = within(&mut reading.fault, reading.names.get(key, reading.meter))?;
            within(&mut reading.fault, reading.meter.field(fields.len() + 1))?;
            match &mut large {
                Some(names) => {
                    names.insert(name.clone());
                }
                None if fields.len() == SCANNED => {
                    let names = fields.iter().map(|(name, _)| name.clone());
                    large = Some(names.chain([name.clone()]).collect());
                }
                None => {}
            }
            fields.push((name, value));
        }
        if let Some(record) = record {
            let missing = record
                .fields
                .iter()
                .find(|due| due.required && !fields.iter().any(|(name, _)| **name == *due.name));
            if let Some(due) = missing {
                let error = reading.misfit(&due.ty, "missing");
                reading.at(|| format!(".{}", due.name));
                return Err(error);
            }
        }
        let record = within(&mut reading.fault, Record::within(fields, reading.meter))?;
        Ok(Value::Record(record))
    }
}

/// Up to this many fields, a repeated key is found by a scan; past it, the
/// names go in a set.
const SCANNED: usize = 16;

/// A key of an output's object, borrowed from the text when it has no
/// escapes.
enum KeyText<'de> {
    Borrowed(&'de str),
    Owned(String),
}

impl KeyText<'_> {
    fn as_str(&self) -> &str {
        match self {
            KeyText::Borrowed(text) => text,
            KeyText::Owned(text) => text,
        }
    }
}

impl<'de> de::Deserialize<'de> for KeyText<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Key;
        impl<'de> Visitor<'de> for Key {
            type Value = KeyText<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_borrowed_str<E: de::Error>(self, text: &'de str) -> Result<KeyText<'de>, E> {
                Ok(KeyText::Borrowed(text))
            }
            fn visit_str<E: de::Error>(self, text: &str) -> Result<KeyText<'de>, E> {
                Ok(KeyText::Owned(text.to_owned()))
            }
        }
        deserializer.deserialize_str(Key)
    }
}
