//! The type a plan must give: [`Returns`], a Rust type's schema read as a
//! checker type, and the check of a plan's type against it.

use std::borrow::Cow;
use std::fmt;

use schemars::JsonSchema;

use crate::cut::{cut_owned, LINE};
use crate::schema::SchemaModel;

use super::types::{gives, read, unsure, Misfit, Side};
use super::{FieldTy, RecordTy, Ty, TypeError, TypeErrorKind};

/// The type a plan's value must have: a Rust type `T`'s schema read as a
/// checker [`Ty`], as a tool's input is read (a value is given *to* it: an
/// Int is accepted for a Float, `()` for an `Option`, a record may have
/// fields `T` ignores unless `T` denies unknown fields), with `T`'s name.
///
/// [`check`](Self::check) compares a plan's type with it before anything
/// runs, so that a plan a model wrote for a task is refused, with what to
/// write, when it would give another type;
/// [`Interpreter::run_as`](crate::plan::Interpreter::run_as) then reads the
/// value into `T` after the run. [`Preview::check_returns`](crate::plan::Preview::check_returns)
/// takes one; [`Author::returning`](crate::plan::Author::returning) and
/// `run_as` take the type and make it.
///
/// ```
/// use typed_tools::plan::check::{Returns, Ty};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct RestockReport { items: Vec<u32>, total_cost: f64 }
///
/// let returns = Returns::of::<RestockReport>();
/// assert_eq!(returns.name(), "RestockReport");
/// assert_eq!(returns.to_string(), "a RestockReport: {items: [Int], total_cost: Float}");
/// assert_eq!(Returns::of::<Vec<String>>().to_string(), "[String]");
///
/// assert!(returns.check(&Ty::List(Box::new(Ty::String))).is_err());
/// assert_eq!(
///     returns.check(&Ty::List(Box::new(Ty::String))).unwrap_err().to_string(),
///     "the plan's value: the plan gives [String]; the task needs a RestockReport: \
///      {items: [Int], total_cost: Float}; make the plan's value a RestockReport in every branch"
/// );
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Returns {
    name: Cow<'static, str>,
    ty: Ty,
}

impl Returns {
    /// The type of `T`'s values, read from the schema `T` derives (as
    /// deserialized: `#[serde(default)]` fields are optional).
    pub fn of<T: JsonSchema + ?Sized>() -> Returns {
        let schema = schemars::generate::SchemaSettings::draft2020_12()
            .for_deserialize()
            .into_generator()
            .into_root_schema_for::<T>()
            .to_value();
        Returns {
            name: T::schema_name(),
            ty: read(&SchemaModel::new(&schema), Side::Input),
        }
    }

    /// `T`'s schema name (`RestockReport`, `Array_of_string`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The checker type a plan's value must fit (a record is open unless
    /// `T` denies unknown fields: a value may have more, which `T` ignores).
    pub fn ty(&self) -> &Ty {
        &self.ty
    }

    /// How the type is named in a message: a record by its Rust name, any
    /// other type by the type (`Int`, `[String]`).
    pub(crate) fn short(&self) -> String {
        match self.ty {
            Ty::Record(_) => self.name.to_string(),
            _ => self.ty.to_string(),
        }
    }

    /// Checks that a plan of type `ty` (what [`check`](super::check())
    /// gives) gives a value of this type for every run: refused with a
    /// [`TypeError`] of kind [`TypeErrorKind::Returns`] otherwise, written
    /// for the model that wrote the plan. A part of `ty` that is not known
    /// ([`Ty::Any`]) passes, and is held to the type when the value is read.
    ///
    /// ```
    /// use typed_tools::plan::check::{Returns, Ty, TypeErrorKind};
    ///
    /// let returns = Returns::of::<i64>();
    /// assert!(returns.check(&Ty::Int).is_ok());
    /// assert!(returns.check(&Ty::Any).is_ok());
    /// let error = returns.check(&Ty::Nullable(Box::new(Ty::Int))).unwrap_err();
    /// assert_eq!(error.kind, TypeErrorKind::Returns);
    /// assert!(error.message.starts_with("the plan gives Int?; the task needs Int; it may be `()`"), "{}", error.message);
    /// ```
    pub fn check(&self, ty: &Ty) -> Result<(), TypeError> {
        let mut misfits = Vec::new();
        gives(ty, &self.ty, &mut misfits);
        if misfits.is_empty() {
            return Ok(());
        }
        let mut details = Vec::new();
        for misfit in misfits {
            details.push(match misfit {
                Misfit::Unknown { path, expected } => {
                    let fields: Vec<String> = expected.iter().map(|f| format!("`{f}`")).collect();
                    format!("`{path}` is not among its fields ({})", fields.join(", "))
                }
                Misfit::Missing { path, ty: needed } => match field_at(ty, &path) {
                    Some(_) => format!("`{path}` ({needed}) may be missing"),
                    None => format!("`{path}` ({needed}) is missing"),
                },
                // At the top, or its elements (`[]`): said by the types.
                Misfit::Mismatch { path, .. } if path.replace("[]", "").is_empty() => continue,
                Misfit::Mismatch {
                    path,
                    expected,
                    found,
                } => format!("`{path}`: expected {expected}, found {found}"),
            });
        }
        let mut message = format!("the plan gives {ty}; the task needs {self}");
        if !details.is_empty() {
            message.push_str(" (");
            message.push_str(&details.join("; "));
            message.push(')');
        }
        message.push_str(unsure(ty));
        message.push_str("; make the plan's value ");
        match self.ty {
            Ty::Record(_) => message.push_str(article(&self.name)),
            _ => message.push_str("of type "),
        }
        message.push_str(&self.short());
        message.push_str(" in every branch");
        // A type a model reads in one line, as the checker's messages are.
        cut_owned(&mut message, LINE);
        Err(TypeError {
            kind: TypeErrorKind::Returns,
            at: "the plan's value".to_owned(),
            message,
        })
    }
}

/// `a RestockReport: {items: [Int], total_cost: Float}` for a record,
/// the type alone for any other (`[String]`).
/// Its records are written without `..`: the fields a value may have
/// beside them are ignored, and are none of the task's.
impl fmt::Display for Returns {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ty = closed(&self.ty);
        match ty {
            Ty::Record(_) => write!(f, "{}{}: {ty}", article(&self.name), self.name),
            _ => write!(f, "{ty}"),
        }
    }
}

/// `ty` with every record closed, to be written.
fn closed(ty: &Ty) -> Ty {
    match ty {
        Ty::List(of) => Ty::List(Box::new(closed(of))),
        Ty::Nullable(of) => Ty::Nullable(Box::new(closed(of))),
        Ty::Record(record) => Ty::Record(RecordTy::closed(
            record
                .fields
                .iter()
                .map(|f| FieldTy::new(f.name.clone(), closed(&f.ty), f.required))
                .collect(),
        )),
        other => other.clone(),
    }
}

/// `an ` before a name that starts with a vowel, else `a `.
fn article(name: &str) -> &'static str {
    match name.chars().next().map(|c| c.to_ascii_lowercase()) {
        Some('a' | 'e' | 'i' | 'o' | 'u') => "an ",
        _ => "a ",
    }
}

/// The field of `ty` at `path` (`a.b`, `items[].id`, as [`Misfit`]s name
/// them), when `ty` has one there.
fn field_at<'t>(ty: &'t Ty, path: &str) -> Option<&'t FieldTy> {
    let mut ty = ty;
    let mut found = None;
    for step in path.split('.') {
        let mut name = step;
        let mut lists = 0;
        while let Some(inner) = name.strip_suffix("[]") {
            name = inner;
            lists += 1;
        }
        let record = match ty {
            Ty::Record(record) => record,
            Ty::Nullable(of) => match &**of {
                Ty::Record(record) => record,
                _ => return None,
            },
            _ => return None,
        };
        let field = record.field(name)?;
        found = Some(field);
        ty = &field.ty;
        for _ in 0..lists {
            ty = match ty {
                Ty::List(of) => of,
                _ => return None,
            };
        }
    }
    found
}
