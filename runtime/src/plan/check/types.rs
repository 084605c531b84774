//! The checker's types ([`Ty`]), what it does with them (joins of branches,
//! fits of arguments, annotations), and how it reads a JSON Schema as one.

use std::fmt;

use serde_json::Value as Json;

use crate::plan::ir::{Type, MAX_DEPTH};
use crate::plan::text::FieldName;
use crate::schema::name::notation;

mod reader;

pub(super) use reader::{read, Side};

/// A record or list type the plan builds with more nodes than this is
/// [`Ty::Any`]: `let b = {x = a, y = a} in let c = {x = b, y = b} in ...`
/// doubles at each `let`, and joining records compares their fields pairwise.
const TYPE_NODES: usize = 1_000;

/// `ty`, or `Any` when it has more than [`TYPE_NODES`] nodes.
pub(super) fn bounded(ty: Ty) -> Ty {
    fn count(ty: &Ty, left: &mut usize) -> bool {
        if *left == 0 {
            return false;
        }
        *left -= 1;
        match ty {
            Ty::List(of) | Ty::Nullable(of) => count(of, left),
            Ty::Record(record) => record.fields.iter().all(|f| count(&f.ty, left)),
            _ => true,
        }
    }
    let mut left = TYPE_NODES;
    if count(&ty, &mut left) {
        ty
    } else {
        Ty::Any
    }
}

/// A type as the checker knows it: λ-Tool's types, plus [`Any`](Ty::Any)
/// (not known: anything may be there) and [`Nullable`](Ty::Nullable) (`T` or
/// `()`). `Display` writes λ-Tool notation.
///
/// ```
/// use typed_tools::plan::check::{FieldTy, RecordTy, Ty};
///
/// let account = Ty::Record(RecordTy::closed(vec![
///     FieldTy::new("id", Ty::String, true),
///     FieldTy::new("note", Ty::Nullable(Box::new(Ty::String)), false),
/// ]));
/// assert_eq!(account.to_string(), "{id: String, note?: String?}");
/// assert_eq!(Ty::List(Box::new(Ty::Any)).to_string(), "[Any]");
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Ty {
    /// Not known: any value may be here (a schema λ-Tool cannot express).
    /// It can be returned, compared with `==` and passed to a tool's
    /// `exec`, which checks it; no operation that needs one kind of value
    /// takes it.
    Any,
    /// No value at all: the elements of `[]`. What is done to one never
    /// runs, so nothing about it is refused, and it joins any type.
    Nothing,
    /// `Unit`.
    Unit,
    /// `Bool`.
    Bool,
    /// `Int`.
    Int,
    /// `Float`.
    Float,
    /// `String`.
    String,
    /// `[T]`.
    List(Box<Ty>),
    /// `{name: T, ...}`.
    Record(RecordTy),
    /// `T?`: a `T` or `()` (an `Option`).
    Nullable(Box<Ty>),
}

/// A record type: its fields, and whether it may have others.
///
/// ```
/// use typed_tools::plan::check::{FieldTy, RecordTy, Ty};
///
/// let open = RecordTy::open(vec![FieldTy::new("id", Ty::Int, true)]);
/// assert_eq!(open.field("id").map(|f| &f.ty), Some(&Ty::Int));
/// assert_eq!(Ty::Record(open).to_string(), "{id: Int, ..}");
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct RecordTy {
    /// The fields, in order.
    pub fields: Vec<FieldTy>,
    /// Whether the record may have fields not listed (a tool input that does
    /// not deny unknown fields, a parameter annotation): reading one is not
    /// refused.
    pub open: bool,
}

/// A field of a [`RecordTy`].
///
/// ```
/// use typed_tools::plan::check::{FieldTy, Ty};
///
/// let field = FieldTy::new("amount", Ty::Int, true);
/// assert!(field.required);
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct FieldTy {
    /// The name, as in JSON.
    pub name: String,
    /// Its type.
    pub ty: Ty,
    /// Whether it is always there (in an input: whether it must be given).
    pub required: bool,
}

impl FieldTy {
    /// A field `name` of type `ty`, always there if `required`.
    pub fn new(name: impl Into<String>, ty: Ty, required: bool) -> FieldTy {
        FieldTy {
            name: name.into(),
            ty,
            required,
        }
    }
}

impl RecordTy {
    /// A record type with exactly these fields.
    pub fn closed(fields: Vec<FieldTy>) -> RecordTy {
        RecordTy {
            fields,
            open: false,
        }
    }

    /// A record type with these fields and maybe others.
    pub fn open(fields: Vec<FieldTy>) -> RecordTy {
        RecordTy { fields, open: true }
    }

    /// The field `name`.
    ///
    /// ```
    /// use typed_tools::plan::check::{RecordTy, Ty};
    ///
    /// let empty = RecordTy::closed(vec![]);
    /// assert!(empty.field("id").is_none());
    /// ```
    pub fn field(&self, name: &str) -> Option<&FieldTy> {
        self.fields.iter().find(|f| f.name == name)
    }
}

impl fmt::Display for Ty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ty::Any => f.write_str(notation::ANY),
            Ty::Nothing => f.write_str(notation::NOTHING),
            Ty::Unit => f.write_str(notation::UNIT),
            Ty::Bool => f.write_str(notation::BOOL),
            Ty::Int => f.write_str(notation::INT),
            Ty::Float => f.write_str(notation::FLOAT),
            Ty::String => f.write_str(notation::STRING),
            Ty::List(of) => notation::list(f, of),
            Ty::Nullable(of) => notation::nullable(f, of),
            Ty::Record(record) => notation::record(
                f,
                record
                    .fields
                    .iter()
                    .map(|field| (FieldName(&field.name), field.required, &field.ty)),
                record.open,
            ),
        }
    }
}

/// The type of a `const` or `enum` value.
pub(super) fn literal_ty(value: &Json) -> Ty {
    match value {
        Json::Null => Ty::Unit,
        Json::Bool(_) => Ty::Bool,
        Json::String(_) => Ty::String,
        Json::Number(n) if n.is_i64() => Ty::Int,
        _ => Ty::Any,
    }
}

/// The kinds of value a type may be at run time, as bits.
pub(super) const UNIT: u8 = 1;
pub(super) const BOOL: u8 = 2;
pub(super) const INT: u8 = 4;
pub(super) const FLOAT: u8 = 8;
pub(super) const STRING: u8 = 16;
pub(super) const LIST: u8 = 32;
pub(super) const RECORD: u8 = 64;
const ALL: u8 = 127;

pub(super) fn kinds(ty: &Ty) -> u8 {
    match ty {
        Ty::Any => ALL,
        Ty::Nothing => 0,
        Ty::Unit => UNIT,
        Ty::Bool => BOOL,
        Ty::Int => INT,
        Ty::Float => FLOAT,
        Ty::String => STRING,
        Ty::List(_) => LIST,
        Ty::Record(_) => RECORD,
        Ty::Nullable(of) => kinds(of) | UNIT,
    }
}

/// `T?`, without nesting: `Any?` is `Any`, `Unit?` is `Unit`.
pub(super) fn nullable(ty: Ty) -> Ty {
    match ty {
        Ty::Any | Ty::Unit | Ty::Nullable(_) => ty,
        Ty::Nothing => Ty::Unit,
        other => Ty::Nullable(Box::new(other)),
    }
}

/// The type of a value that has type `a` or type `b` (branches, list
/// elements, options of a schema): the same type, or one that covers both.
pub(super) fn join(a: &Ty, b: &Ty) -> Ty {
    if a == b {
        return a.clone();
    }
    match (a, b) {
        (Ty::Nothing, other) | (other, Ty::Nothing) => other.clone(),
        (Ty::Any, _) | (_, Ty::Any) => Ty::Any,
        (Ty::Unit, other) | (other, Ty::Unit) => nullable(other.clone()),
        (Ty::Nullable(x), Ty::Nullable(y)) => nullable(join(x, y)),
        (Ty::Nullable(x), other) | (other, Ty::Nullable(x)) => nullable(join(x, other)),
        (Ty::List(x), Ty::List(y)) => Ty::List(Box::new(join(x, y))),
        (Ty::Record(x), Ty::Record(y)) => {
            let mut fields: Vec<FieldTy> = x
                .fields
                .iter()
                .map(|f| match y.field(&f.name) {
                    Some(g) => FieldTy {
                        name: f.name.clone(),
                        ty: join(&f.ty, &g.ty),
                        required: f.required && g.required,
                    },
                    None => FieldTy {
                        name: f.name.clone(),
                        ty: if y.open { Ty::Any } else { f.ty.clone() },
                        required: false,
                    },
                })
                .collect();
            for g in &y.fields {
                if x.field(&g.name).is_none() {
                    fields.push(FieldTy {
                        name: g.name.clone(),
                        ty: if x.open { Ty::Any } else { g.ty.clone() },
                        required: false,
                    });
                }
            }
            Ty::Record(RecordTy {
                fields,
                open: x.open || y.open,
            })
        }
        _ => Ty::Any,
    }
}

/// How many parts of `ty` are not known.
pub(super) fn unknowns(ty: &Ty) -> usize {
    match ty {
        Ty::Any => 1,
        Ty::List(of) | Ty::Nullable(of) => unknowns(of),
        Ty::Record(record) => record.fields.iter().map(|f| unknowns(&f.ty)).sum(),
        _ => 0,
    }
}

/// Whether joining `a` and `b` into `joined` lost what they are: a part
/// known on both sides (an Int, a String) became unknown.
pub(super) fn lost(a: &Ty, b: &Ty, joined: &Ty) -> bool {
    unknowns(joined) > unknowns(a) + unknowns(b)
}

/// Whether [`join`] of `a` and `b` makes a part unknown ([`Ty::Any`])
/// that neither side left unknown: two kinds of value where no type covers
/// both (Int and String, a record and a String, Int and Float), found
/// anywhere inside them. What a `match` or an `if` refuses of its branches.
/// Follows `join` case by case, so that it counts what [`lost`] cannot: a
/// part made unknown beside one that was unknown on both sides already.
pub(super) fn loses(a: &Ty, b: &Ty) -> bool {
    if a == b {
        return false;
    }
    match (a, b) {
        (Ty::Nothing | Ty::Any | Ty::Unit, _) | (_, Ty::Nothing | Ty::Any | Ty::Unit) => false,
        (Ty::Nullable(x), Ty::Nullable(y)) => loses(x, y),
        (Ty::Nullable(x), other) | (other, Ty::Nullable(x)) => loses(x, other),
        (Ty::List(x), Ty::List(y)) => loses(x, y),
        (Ty::Record(x), Ty::Record(y)) => {
            // A field one side lacks is `Any` when that side is open.
            let alone = |f: &FieldTy, other: &RecordTy| {
                other.field(&f.name).is_none() && other.open && f.ty != Ty::Any
            };
            x.fields.iter().any(|f| match y.field(&f.name) {
                Some(g) => loses(&f.ty, &g.ty),
                None => alone(f, y),
            }) || y.fields.iter().any(|g| alone(g, x))
        }
        _ => true,
    }
}

/// Whether `outer` holds a value of type `inner` one level down: `[acc]`,
/// `{a = acc}`, a type that grows at every step of a `fold`.
pub(super) fn holds(outer: &Ty, inner: &Ty) -> bool {
    match outer {
        Ty::List(of) | Ty::Nullable(of) => **of == *inner,
        Ty::Record(record) => record.fields.iter().any(|f| f.ty == *inner),
        _ => false,
    }
}

/// What to add to "found T" when `T` is not one kind of value for sure.
pub(super) fn unsure(ty: &Ty) -> &'static str {
    match ty {
        Ty::Any => "; its type is not known here (a tool output its schema does not describe), so it cannot be used as one kind of value: return it as it is, or pass it whole to a tool",
        Ty::Nullable(_) => "; it may be `()`: bind it with `let` and test it first, `if x == () then ... else ...`, where the `else` branch has the value",
        _ => "",
    }
}

/// [`unsure`] for an operator's sides: the left's, else the right's.
pub(super) fn unsure_of(l: &Ty, r: &Ty) -> &'static str {
    match unsure(l) {
        "" => unsure(r),
        hint => hint,
    }
}

/// The element type of a value used as a list.
pub(super) fn element(ty: &Ty) -> Ty {
    match ty {
        Ty::List(of) => (**of).clone(),
        Ty::Nullable(of) => element(of),
        Ty::Nothing => Ty::Nothing,
        _ => Ty::Any,
    }
}

/// The record type of a value whose field is read, if known.
pub(super) fn record(ty: &Ty) -> Option<&RecordTy> {
    match ty {
        Ty::Record(record) => Some(record),
        Ty::Nullable(of) => record(of),
        _ => None,
    }
}

/// The type of the value an `Err` branch binds.
pub(super) fn error_record() -> Ty {
    let field = |name: &str| FieldTy {
        name: name.into(),
        ty: Ty::String,
        required: true,
    };
    Ty::Record(RecordTy {
        fields: vec![field("tool"), field("kind"), field("message")],
        open: false,
    })
}

/// An annotation as a checker type: its records are open (an annotation may
/// name only the fields the callback reads). Deeper than [`MAX_DEPTH`] is `Any`.
pub(super) fn annotation(ty: &Type, depth: usize) -> Ty {
    if depth > MAX_DEPTH {
        return Ty::Any;
    }
    match ty {
        Type::Unit => Ty::Unit,
        Type::Bool => Ty::Bool,
        Type::Int => Ty::Int,
        Type::Float => Ty::Float,
        Type::String => Ty::String,
        Type::List { of } => Ty::List(Box::new(annotation(of, depth + 1))),
        Type::Record { fields } => Ty::Record(RecordTy {
            fields: fields
                .iter()
                .map(|(name, ty)| FieldTy {
                    name: name.clone(),
                    ty: annotation(ty, depth + 1),
                    required: true,
                })
                .collect(),
            open: true,
        }),
    }
}

/// Whether no value of type `actual` has the annotated type: a field it
/// names is certainly absent, or a part is certainly of another kind.
pub(super) fn contradicts(actual: &Ty, annotated: &Ty) -> bool {
    match (actual, annotated) {
        (Ty::Any | Ty::Nothing, _) | (_, Ty::Any) => false,
        (Ty::Nullable(of), _) => contradicts(of, annotated) && contradicts(&Ty::Unit, annotated),
        (Ty::List(a), Ty::List(b)) => contradicts(a, b),
        (Ty::Record(a), Ty::Record(b)) => b.fields.iter().any(|f| match a.field(&f.name) {
            Some(g) => g.required && contradicts(&g.ty, &f.ty),
            None => !a.open,
        }),
        (a, b) => kinds(a) & kinds(b) == 0,
    }
}

/// How an argument fails to fit a tool's input.
pub(super) enum Misfit {
    Unknown {
        path: String,
        expected: Vec<String>,
    },
    Missing {
        path: String,
        ty: String,
    },
    Mismatch {
        path: String,
        expected: String,
        found: String,
    },
}

/// `path.field`, or `field` at the top.
pub(super) fn join_path(path: &str, field: &str) -> String {
    if path.is_empty() {
        field.to_owned()
    } else {
        format!("{path}.{field}")
    }
}

/// Every certain misfit of a value of type `actual` for the input type
/// `expected`, by the rules of serde's deserializers: an Int is accepted for
/// a Float, `()` for an `Option`.
pub(super) fn fit(actual: &Ty, expected: &Ty, path: &str, out: &mut Vec<Misfit>) {
    match (actual, expected) {
        (Ty::Any | Ty::Nothing, _) | (_, Ty::Any) | (Ty::Int, Ty::Float) => {}
        (Ty::Nullable(of), _) => {
            let mut some = Vec::new();
            fit(of, expected, path, &mut some);
            let mut none = Vec::new();
            fit(&Ty::Unit, expected, path, &mut none);
            if !some.is_empty() && !none.is_empty() {
                out.extend(some);
            }
        }
        (Ty::Unit, Ty::Nullable(_)) => {}
        (_, Ty::Nullable(of)) => fit(actual, of, path, out),
        (Ty::List(a), Ty::List(b)) => fit(a, b, &format!("{path}[]"), out),
        (Ty::Record(a), Ty::Record(b)) => {
            for f in &a.fields {
                if f.required && !b.open && b.field(&f.name).is_none() {
                    out.push(Misfit::Unknown {
                        path: join_path(path, &f.name),
                        expected: b.fields.iter().map(|g| g.name.clone()).collect(),
                    });
                }
            }
            for g in &b.fields {
                match a.field(&g.name) {
                    None if g.required && !a.open => out.push(Misfit::Missing {
                        path: join_path(path, &g.name),
                        ty: g.ty.to_string(),
                    }),
                    Some(f) if f.required || g.required => {
                        fit(&f.ty, &g.ty, &join_path(path, &g.name), out)
                    }
                    _ => {}
                }
            }
        }
        (a, b) if kinds(a) & kinds(b) == 0 || matches!((a, b), (Ty::Float, Ty::Int)) => {
            out.push(Misfit::Mismatch {
                path: path.to_owned(),
                expected: b.to_string(),
                found: a.to_string(),
            })
        }
        _ => {}
    }
}

/// Every way a value of type `actual` may fail to fit the input type
/// `expected`: what [`fit`] finds, and also what only some values of `actual`
/// break (`Any`, an `Option` where a value is due, a field that may be
/// absent). For `call`, whose failure stops the plan: it must surely fit.
pub(super) fn surely_fit(actual: &Ty, expected: &Ty, path: &str, out: &mut Vec<Misfit>) {
    surely(actual, expected, path, false, out);
}

/// Every way a plan's value of type `actual` may fail to be read into a Rust
/// type read as `expected` ([`Returns`](super::Returns)): as [`surely_fit`],
/// but a part whose type is not known ([`Ty::Any`], what schemas cannot
/// say) is left to the reading after the run, which holds it to the type;
/// refusing it would leave a model no plan to write.
pub(super) fn gives(actual: &Ty, expected: &Ty, out: &mut Vec<Misfit>) {
    surely(actual, expected, "", true, out);
}

fn surely(actual: &Ty, expected: &Ty, path: &str, any_fits: bool, out: &mut Vec<Misfit>) {
    let mismatch = |out: &mut Vec<Misfit>| {
        out.push(Misfit::Mismatch {
            path: path.to_owned(),
            expected: expected.to_string(),
            found: actual.to_string(),
        })
    };
    match (actual, expected) {
        (Ty::Nothing, _) | (_, Ty::Any) | (Ty::Int, Ty::Float) | (Ty::Unit, Ty::Nullable(_)) => {}
        (Ty::Nullable(a), Ty::Nullable(b)) => surely(a, b, path, any_fits, out),
        (Ty::Any, _) if any_fits => {}
        (Ty::Nullable(_) | Ty::Any, _) => mismatch(out),
        (_, Ty::Nullable(of)) => surely(actual, of, path, any_fits, out),
        (Ty::List(a), Ty::List(b)) => surely(a, b, &format!("{path}[]"), any_fits, out),
        (Ty::Record(a), Ty::Record(b)) => {
            for f in &a.fields {
                if !b.open && b.field(&f.name).is_none() {
                    out.push(Misfit::Unknown {
                        path: join_path(path, &f.name),
                        expected: b.fields.iter().map(|g| g.name.clone()).collect(),
                    });
                }
            }
            for g in &b.fields {
                match a.field(&g.name) {
                    Some(f) if f.required || !g.required => {
                        surely(&f.ty, &g.ty, &join_path(path, &g.name), any_fits, out)
                    }
                    None if !g.required => {}
                    _ => out.push(Misfit::Missing {
                        path: join_path(path, &g.name),
                        ty: g.ty.to_string(),
                    }),
                }
            }
        }
        (a, b) if kinds(a) & !kinds(b) != 0 || matches!((a, b), (Ty::Float, Ty::Int)) => {
            mismatch(out)
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(schema: Json, side: Side) -> String {
        super::read(&crate::schema::SchemaModel::new(&schema), side).to_string()
    }

    #[test]
    fn schemas_become_types() {
        let account = json!({
            "type": "object",
            "properties": {
                "id": {"type": "string"},
                "tier": {"enum": ["free", "pro"]},
                "note": {"type": ["string", "null"]},
                "owner": {"anyOf": [{"$ref": "#/$defs/Owner"}, {"type": "null"}]},
                "tags": {"type": "array", "items": {"type": "string"}},
                "pair": {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}]},
                "extra": {"type": "object", "additionalProperties": {"type": "integer"}},
                "either": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
                "price": {"type": "number"}
            },
            "required": ["id", "tier", "tags"],
            "$defs": {"Owner": {"type": "object", "properties": {"email": {"type": "string"}}, "required": ["email"]}}
        });
        assert_eq!(
            read(account.clone(), Side::Output),
            "{id: String, tier: String, note?: String?, owner?: {email: String}?, tags: [String], pair?: Any, extra?: Any, either?: Any, price?: Any}"
        );
        assert!(read(account, Side::Input).ends_with("price?: Float, ..}"));
    }

    #[test]
    fn recursive_and_huge_schemas_end() {
        let schema = json!({
            "$ref": "#/$defs/Node",
            "$defs": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}, "required": ["next"]}}
        });
        assert_eq!(read(schema, Side::Output), "{next: Any}");
        // Each level names the next twice: 2^40 nodes if inlined.
        let mut defs = serde_json::Map::new();
        for i in 0..40 {
            let next = json!({"$ref": format!("#/$defs/T{}", i + 1)});
            defs.insert(
                format!("T{i}"),
                json!({"type": "object", "properties": {"a": next, "b": next}}),
            );
        }
        let schema = json!({"$ref": "#/$defs/T0", "$defs": defs});
        let ty = super::read(&crate::schema::SchemaModel::new(&schema), Side::Output);
        assert!(ty.to_string().contains("Any"));
    }

    #[test]
    fn joins_cover_both_sides() {
        assert_eq!(join(&Ty::Int, &Ty::Unit), Ty::Nullable(Box::new(Ty::Int)));
        assert_eq!(join(&Ty::Int, &Ty::String), Ty::Any);
        let a = Ty::Record(RecordTy {
            fields: vec![FieldTy {
                name: "a".into(),
                ty: Ty::Int,
                required: true,
            }],
            open: false,
        });
        let b = Ty::Record(RecordTy {
            fields: vec![],
            open: false,
        });
        assert_eq!(join(&a, &b).to_string(), "{a?: Int}");
    }

    #[test]
    fn fit_follows_serde() {
        let misfits = |a: Ty, e: Ty| {
            let mut out = Vec::new();
            fit(&a, &e, "x", &mut out);
            out.len()
        };
        assert_eq!(misfits(Ty::Int, Ty::Float), 0);
        assert_eq!(misfits(Ty::Float, Ty::Int), 1);
        assert_eq!(misfits(Ty::Unit, Ty::Nullable(Box::new(Ty::Int))), 0);
        assert_eq!(misfits(Ty::Nullable(Box::new(Ty::Int)), Ty::Int), 0);
        assert_eq!(misfits(Ty::Nullable(Box::new(Ty::Int)), Ty::String), 1);
        assert_eq!(misfits(Ty::String, Ty::Any), 0);
    }
}
