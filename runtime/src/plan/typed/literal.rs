//! A Rust value written as a plan literal: serde's data model into the IR,
//! exactly as serde_json writes the value, so that the tool that reads the
//! plan's arguments as JSON reads what the value would have given it. The
//! shapes are listed in [`Literal`](super::Literal)'s docs.

use std::collections::HashSet;
use std::fmt;

use serde::ser::{self, Serialize};

use crate::plan::ir::Expr;

/// Why a value cannot be written as a plan literal.
///
/// ```
/// use typed_tools::plan::typed::{try_lit, LiteralError};
///
/// let error = try_lit(u64::MAX).unwrap_err();
/// assert_eq!(error, LiteralError::OutOfRange { value: u64::MAX.to_string() });
/// assert_eq!(
///     error.to_string(),
///     "the integer 18446744073709551615 is outside a plan's Int (a 64-bit signed integer)"
/// );
/// assert!(matches!(try_lit(f64::NAN), Err(LiteralError::NotFinite { .. })));
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum LiteralError {
    /// An integer outside `i64`, a plan's Int.
    OutOfRange {
        /// The integer, in decimal.
        value: String,
    },
    /// `NaN` or an infinity: a plan's Float is finite, as JSON's numbers are.
    NotFinite {
        /// The value.
        value: f64,
    },
    /// A map key that is not text, a `char` or an integer: a record's field
    /// names are text.
    KeyNotText,
    /// A field written twice (a hand-written `Serialize`, or two keys that
    /// read the same as text).
    DuplicateField {
        /// The field.
        name: String,
    },
    /// The value's `Serialize` failed.
    Custom(String),
}

impl fmt::Display for LiteralError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LiteralError::OutOfRange { value } => write!(
                f,
                "the integer {value} is outside a plan's Int (a 64-bit signed integer)"
            ),
            LiteralError::NotFinite { value } => {
                write!(
                    f,
                    "the float {value} is not finite; a plan's Float is, as JSON's numbers are"
                )
            }
            LiteralError::KeyNotText => f.write_str(
                "a map key is not text, a `char` or an integer; a record's field names are text",
            ),
            LiteralError::DuplicateField { name } => {
                write!(f, "the field `{name}` is written twice")
            }
            LiteralError::Custom(message) => write!(f, "the value cannot be serialized: {message}"),
        }
    }
}

impl std::error::Error for LiteralError {}

impl ser::Error for LiteralError {
    fn custom<T: fmt::Display>(message: T) -> Self {
        LiteralError::Custom(message.to_string())
    }
}

/// `value` as an IR literal.
pub(super) fn to_expr<T: Serialize + ?Sized>(value: &T) -> Result<Expr, LiteralError> {
    value.serialize(ToExpr)
}

fn int<N: TryInto<i64> + ToString + Copy>(value: N) -> Result<Expr, LiteralError> {
    value
        .try_into()
        .map(Expr::int)
        .map_err(|_| LiteralError::OutOfRange {
            value: value.to_string(),
        })
}

/// An integer key in decimal, as serde_json writes it.
fn decimal<N: ToString>(value: N) -> Result<String, LiteralError> {
    Ok(value.to_string())
}

/// The `serialize_*` method of every integer width, each calling `$to`.
macro_rules! integers {
    ($to:ident) => {
        integers!($to; serialize_i8: i8, serialize_i16: i16, serialize_i32: i32,
            serialize_i64: i64, serialize_i128: i128, serialize_u8: u8, serialize_u16: u16,
            serialize_u32: u32, serialize_u64: u64, serialize_u128: u128);
    };
    ($to:ident; $($method:ident: $t:ty),*) => {$(
        fn $method(self, v: $t) -> Result<Self::Ok, LiteralError> {
            $to(v)
        }
    )*};
}

fn float(value: f64) -> Result<Expr, LiteralError> {
    if value.is_finite() {
        Ok(Expr::Float { value })
    } else {
        Err(LiteralError::NotFinite { value })
    }
}

/// A record's fields, each name once.
#[derive(Default)]
struct Fields {
    fields: Vec<(String, Expr)>,
    names: HashSet<String>,
    /// A map's key, until its value comes.
    key: Option<String>,
}

impl Fields {
    fn push(&mut self, name: String, value: Expr) -> Result<(), LiteralError> {
        if !self.names.insert(name.clone()) {
            return Err(LiteralError::DuplicateField { name });
        }
        self.fields.push((name, value));
        Ok(())
    }

    fn end(self) -> Expr {
        Expr::Record {
            fields: self.fields,
        }
    }
}

/// A list's elements.
#[derive(Default)]
struct Items(Vec<Expr>);

/// A variant other than a unit one: `{Variant = value}`.
struct Variant<P> {
    name: &'static str,
    parts: P,
}

fn tagged(name: &str, value: Expr) -> Expr {
    Expr::record([(name, value)])
}

struct ToExpr;

impl ser::Serializer for ToExpr {
    type Ok = Expr;
    type Error = LiteralError;
    type SerializeSeq = Items;
    type SerializeTuple = Items;
    type SerializeTupleStruct = Items;
    type SerializeTupleVariant = Variant<Items>;
    type SerializeMap = Fields;
    type SerializeStruct = Fields;
    type SerializeStructVariant = Variant<Fields>;

    fn serialize_bool(self, v: bool) -> Result<Expr, LiteralError> {
        Ok(Expr::Bool { value: v })
    }
    integers!(int);
    fn serialize_f32(self, v: f32) -> Result<Expr, LiteralError> {
        float(f64::from(v))
    }
    fn serialize_f64(self, v: f64) -> Result<Expr, LiteralError> {
        float(v)
    }
    fn serialize_char(self, v: char) -> Result<Expr, LiteralError> {
        Ok(Expr::string(v))
    }
    fn serialize_str(self, v: &str) -> Result<Expr, LiteralError> {
        Ok(Expr::string(v))
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<Expr, LiteralError> {
        Ok(Expr::List {
            items: v.iter().map(|&b| Expr::int(i64::from(b))).collect(),
        })
    }
    fn serialize_none(self) -> Result<Expr, LiteralError> {
        Ok(Expr::Unit)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<Expr, LiteralError> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<Expr, LiteralError> {
        Ok(Expr::Unit)
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<Expr, LiteralError> {
        Ok(Expr::Unit)
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<Expr, LiteralError> {
        Ok(Expr::string(variant))
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<Expr, LiteralError> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<Expr, LiteralError> {
        Ok(tagged(variant, value.serialize(self)?))
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<Items, LiteralError> {
        Ok(Items(Vec::with_capacity(len.unwrap_or(0))))
    }
    fn serialize_tuple(self, len: usize) -> Result<Items, LiteralError> {
        Ok(Items(Vec::with_capacity(len)))
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        len: usize,
    ) -> Result<Items, LiteralError> {
        Ok(Items(Vec::with_capacity(len)))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Variant<Items>, LiteralError> {
        Ok(Variant {
            name: variant,
            parts: Items(Vec::with_capacity(len)),
        })
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Fields, LiteralError> {
        Ok(Fields::default())
    }
    fn serialize_struct(self, _name: &'static str, _len: usize) -> Result<Fields, LiteralError> {
        Ok(Fields::default())
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Variant<Fields>, LiteralError> {
        Ok(Variant {
            name: variant,
            parts: Fields::default(),
        })
    }
}

impl ser::SerializeSeq for Items {
    type Ok = Expr;
    type Error = LiteralError;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), LiteralError> {
        self.0.push(to_expr(value)?);
        Ok(())
    }
    fn end(self) -> Result<Expr, LiteralError> {
        Ok(Expr::List { items: self.0 })
    }
}

impl ser::SerializeTuple for Items {
    type Ok = Expr;
    type Error = LiteralError;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), LiteralError> {
        ser::SerializeSeq::serialize_element(self, value)
    }
    fn end(self) -> Result<Expr, LiteralError> {
        ser::SerializeSeq::end(self)
    }
}

impl ser::SerializeTupleStruct for Items {
    type Ok = Expr;
    type Error = LiteralError;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), LiteralError> {
        ser::SerializeSeq::serialize_element(self, value)
    }
    fn end(self) -> Result<Expr, LiteralError> {
        ser::SerializeSeq::end(self)
    }
}

impl ser::SerializeTupleVariant for Variant<Items> {
    type Ok = Expr;
    type Error = LiteralError;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), LiteralError> {
        ser::SerializeSeq::serialize_element(&mut self.parts, value)
    }
    fn end(self) -> Result<Expr, LiteralError> {
        Ok(tagged(self.name, ser::SerializeSeq::end(self.parts)?))
    }
}

impl ser::SerializeMap for Fields {
    type Ok = Expr;
    type Error = LiteralError;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), LiteralError> {
        self.key = Some(key.serialize(KeyText)?);
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), LiteralError> {
        let key = self
            .key
            .take()
            .ok_or_else(|| ser::Error::custom("a map value came before its key"))?;
        let value = to_expr(value)?;
        self.push(key, value)
    }
    fn end(self) -> Result<Expr, LiteralError> {
        Ok(Fields::end(self))
    }
}

impl ser::SerializeStruct for Fields {
    type Ok = Expr;
    type Error = LiteralError;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), LiteralError> {
        let value = to_expr(value)?;
        self.push(key.to_owned(), value)
    }
    fn end(self) -> Result<Expr, LiteralError> {
        Ok(Fields::end(self))
    }
}

impl ser::SerializeStructVariant for Variant<Fields> {
    type Ok = Expr;
    type Error = LiteralError;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), LiteralError> {
        ser::SerializeStruct::serialize_field(&mut self.parts, key, value)
    }
    fn end(self) -> Result<Expr, LiteralError> {
        Ok(tagged(self.name, self.parts.end()))
    }
}

/// A map key as text, as serde_json writes it: text and `char` as they
/// are, integers in decimal, a unit variant by its name.
struct KeyText;

fn not_text<T>() -> Result<T, LiteralError> {
    Err(LiteralError::KeyNotText)
}

impl ser::Serializer for KeyText {
    type Ok = String;
    type Error = LiteralError;
    type SerializeSeq = ser::Impossible<String, LiteralError>;
    type SerializeTuple = ser::Impossible<String, LiteralError>;
    type SerializeTupleStruct = ser::Impossible<String, LiteralError>;
    type SerializeTupleVariant = ser::Impossible<String, LiteralError>;
    type SerializeMap = ser::Impossible<String, LiteralError>;
    type SerializeStruct = ser::Impossible<String, LiteralError>;
    type SerializeStructVariant = ser::Impossible<String, LiteralError>;

    fn serialize_bool(self, _: bool) -> Result<String, LiteralError> {
        not_text()
    }
    integers!(decimal);
    fn serialize_f32(self, _: f32) -> Result<String, LiteralError> {
        not_text()
    }
    fn serialize_f64(self, _: f64) -> Result<String, LiteralError> {
        not_text()
    }
    fn serialize_char(self, v: char) -> Result<String, LiteralError> {
        Ok(v.to_string())
    }
    fn serialize_str(self, v: &str) -> Result<String, LiteralError> {
        Ok(v.to_owned())
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<String, LiteralError> {
        not_text()
    }
    fn serialize_none(self) -> Result<String, LiteralError> {
        not_text()
    }
    fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Result<String, LiteralError> {
        not_text()
    }
    fn serialize_unit(self) -> Result<String, LiteralError> {
        not_text()
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<String, LiteralError> {
        not_text()
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<String, LiteralError> {
        Ok(variant.to_owned())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<String, LiteralError> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<String, LiteralError> {
        not_text()
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, LiteralError> {
        not_text()
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, LiteralError> {
        not_text()
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, LiteralError> {
        not_text()
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, LiteralError> {
        not_text()
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, LiteralError> {
        not_text()
    }
    fn serialize_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStruct, LiteralError> {
        not_text()
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, LiteralError> {
        not_text()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde::Serialize;
    use serde_json::json;

    use super::*;
    use crate::plan::{Interpreter, Plan};
    use crate::toolbox::Toolbox;

    /// The literal run as a plan, its value written as JSON: what a tool
    /// reading the plan's arguments gets. Its text parses back to it.
    fn run<T: Serialize>(value: &T) -> serde_json::Value {
        let plan = Plan::new(to_expr(value).expect("a literal"));
        assert_eq!(
            Plan::parse(&plan.to_string()).expect("parses"),
            plan,
            "{plan}"
        );
        let toolbox = Toolbox::builder().build().expect("no tools");
        let run =
            futures::executor::block_on(Interpreter::new(&toolbox).run(&plan)).expect("checks");
        run.outcome.expect("runs").to_json().expect("finite")
    }

    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Note {
        id: u32,
        due_day: Option<u8>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tags: Vec<String>,
        kind: Kind,
    }

    #[derive(Serialize)]
    enum Kind {
        Plain,
        Checklist(Vec<bool>),
        Linked { url: String },
        Pair(u8, u8),
    }

    #[test]
    fn values_are_written_as_serde_json_writes_them() {
        let notes = [
            Note {
                id: 7,
                due_day: None,
                tags: vec![],
                kind: Kind::Plain,
            },
            Note {
                id: u32::MAX,
                due_day: Some(3),
                tags: vec!["a".into()],
                kind: Kind::Checklist(vec![true, false]),
            },
            Note {
                id: 0,
                due_day: None,
                tags: vec![],
                kind: Kind::Linked { url: "u".into() },
            },
            Note {
                id: 1,
                due_day: Some(0),
                tags: vec![],
                kind: Kind::Pair(2, 3),
            },
        ];
        for note in &notes {
            assert_eq!(run(note), serde_json::to_value(note).unwrap());
        }
        assert_eq!(
            Plan::new(to_expr(&notes[0]).unwrap()).to_string(),
            r#"{id = 7, dueDay = (), kind = "Plain"}"#
        );
        let map = BTreeMap::from([(1u8, 'a'), (2, 'b')]);
        assert_eq!(run(&map), json!({"1": "a", "2": "b"}));
        assert_eq!(run(&(1i8, -2i128, 3u64)), json!([1, -2, 3]));
        assert_eq!(run(&[1.5f32, -0.25]), json!([1.5, -0.25]));
        // A tuple of several types is a list of several types, which the
        // plan check refuses (a list's elements have one type); as text:
        assert_eq!(
            Plan::new(to_expr(&(1u8, 'x', (), "y")).unwrap()).to_string(),
            r#"[1, "x", (), "y"]"#
        );
        assert_eq!(run(&serde_bytes_like()), json!([0, 255]));
    }

    /// Bytes, as a `Serialize` that calls `serialize_bytes`.
    fn serde_bytes_like() -> impl Serialize {
        struct Bytes;
        impl Serialize for Bytes {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_bytes(&[0, 255])
            }
        }
        Bytes
    }

    #[test]
    fn what_a_plan_cannot_hold_is_refused() {
        assert_eq!(
            to_expr(&(i64::MAX as u64 + 1)),
            Err(LiteralError::OutOfRange {
                value: "9223372036854775808".into()
            })
        );
        assert_eq!(to_expr(&(i64::MAX as u64)), Ok(Expr::int(i64::MAX)));
        assert_eq!(
            to_expr(&i128::MIN).unwrap_err().to_string(),
            format!(
                "the integer {} is outside a plan's Int (a 64-bit signed integer)",
                i128::MIN
            )
        );
        assert!(matches!(
            to_expr(&f32::INFINITY),
            Err(LiteralError::NotFinite { .. })
        ));
        assert!(matches!(
            to_expr(&vec![1.0, f64::NAN]),
            Err(LiteralError::NotFinite { .. })
        ));
        let map = BTreeMap::from([((1, 2), "pair key")]);
        assert_eq!(to_expr(&map), Err(LiteralError::KeyNotText));
        // Two keys that read the same as text.
        struct Twice;
        impl Serialize for Twice {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                use serde::ser::SerializeMap;
                let mut map = s.serialize_map(Some(2))?;
                map.serialize_entry(&1u8, &true)?;
                map.serialize_entry("1", &false)?;
                map.end()
            }
        }
        assert_eq!(
            to_expr(&Twice),
            Err(LiteralError::DuplicateField { name: "1".into() })
        );
    }
}
