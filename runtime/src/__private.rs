//! What `#[tool]` expands to names, and nothing else. Not a public API.
//!
//! A tool's signature is checked against what the runtime needs in two places,
//! so that a mistake is reported once, at the user's token, in our words:
//!
//! - `assert_*` calls in a `const _` block, each spanned at one type of the
//!   signature. Their bounds are one trait per requirement (`ParameterDeserialize`,
//!   `ParameterJsonSchema`, ...), so the error names the missing one. Each trait
//!   has a `#[diagnostic::on_unimplemented]` message and its blanket impl is
//!   `#[diagnostic::do_not_recommend]`, so rustc reports our trait rather than
//!   the serde or schemars bound behind it.
//! - The generated `Tool` impl and the input struct's `Deserialize` and
//!   `JsonSchema` impls (or derives and schema twin) assume the same
//!   bounds through `where for<'__typed_tools> T: ParameterOf<Tool>` clauses.
//!   A bound with a binder is not checked where it is written (it is not
//!   "global", rust-lang/rust#48214), so a bad type does not make the generated
//!   items fail a second time; it is checked where the tool is used, and there
//!   the `*Of<Tool>` traits say which tool and which type, and point back to
//!   the definition.
//!
//! A tool fn's future that is not `Send` is reported at the fn's name by
//! [`send_future`], in rustc's words, which name the value held across `.await`.
//!
//! The input struct of a tool without `#[serde]` or `#[schemars]` on its
//! parameters is described by [`input_schema`] and, in a debug build, read
//! by [`deserialize_input`], generic over the tuple of the parameters' types
//! ([`Fields`]), rather than by derives: less code per tool to expand and
//! compile. An optimized build derives `Deserialize`, whose visitor
//! compares keys with constants: dispatch is measured there.

use std::fmt::{self, Display};
use std::future::Future;
use std::marker::PhantomData;

pub use ::schemars;
use ::schemars::{JsonSchema, Schema, SchemaGenerator};
pub use ::serde;
use ::serde::de::{self, DeserializeOwned, Deserializer, MapAccess, SeqAccess, Visitor};
use ::serde::Serialize;

pub use crate::effect;
pub use crate::recover::Retryable;
pub use crate::tool::Tool;

/// Checks a parameter's type; called with the type's span.
pub const fn assert_parameter<T>()
where
    T: ParameterDeserialize + ParameterJsonSchema + ParameterSend,
{
}

/// Checks a tool's output type; called with the type's span.
pub const fn assert_output<T>()
where
    T: OutputSerialize + OutputJsonSchema + OutputSend,
{
}

/// Checks a fallible tool's error type; called with the type's span.
pub const fn assert_error<E>()
where
    E: ErrorDisplay + ErrorSend,
{
}

/// Checks a `#[state]` parameter's type; called with the type's span.
pub const fn assert_state<S: StateSync>() {}

/// Checks a `#[context]` parameter's type; called with the type's span.
pub const fn assert_context<C: ContextSync>() {}

/// Checks that a return type named `...Result<T>` is a `Result`.
pub const fn assert_result<R: Fallible>() {}

#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool parameter: it does not implement `serde::Deserialize`",
    label = "this parameter's type",
    note = "add `#[derive(serde::Deserialize)]` to the type (for `Vec<T>`, `Option<T>` and the like, to `T`), or use a type that implements it"
)]
pub trait ParameterDeserialize: DeserializeOwned {}
#[diagnostic::do_not_recommend]
impl<T: DeserializeOwned> ParameterDeserialize for T {}

#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool parameter: it does not implement `schemars::JsonSchema` of schemars 1, the version typed-tools uses",
    label = "this parameter's type",
    note = "add `#[derive(schemars::JsonSchema)]` to the type (for `Vec<T>`, `Option<T>` and the like, to `T`), or use a type that implements it",
    note = "if it derives `JsonSchema` already, it derives it from another version of schemars (0.8 is another trait): depend on `schemars = \"1\"`, or derive `typed_tools::schemars::JsonSchema` with `#[schemars(crate = \"typed_tools::schemars\")]`"
)]
pub trait ParameterJsonSchema: JsonSchema {}
#[diagnostic::do_not_recommend]
impl<T: JsonSchema> ParameterJsonSchema for T {}

#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool parameter: it is not `Send + 'static`",
    label = "this parameter's type",
    note = "the arguments move into the tool's future, which may run on any thread; use an owned, thread-safe type (`Arc` instead of `Rc`, `String` instead of a borrow)"
)]
pub trait ParameterSend: Send + 'static {}
#[diagnostic::do_not_recommend]
impl<T: Send + 'static> ParameterSend for T {}

#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool's output: it does not implement `serde::Serialize`",
    label = "this return type",
    note = "add `#[derive(serde::Serialize)]` to the type (for `Vec<T>`, `Option<T>` and the like, to `T`), or return a type that implements it"
)]
pub trait OutputSerialize: Serialize {}
#[diagnostic::do_not_recommend]
impl<T: Serialize> OutputSerialize for T {}

#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool's output: it does not implement `schemars::JsonSchema` of schemars 1, the version typed-tools uses",
    label = "this return type",
    note = "add `#[derive(schemars::JsonSchema)]` to the type (for `Vec<T>`, `Option<T>` and the like, to `T`), or return a type that implements it",
    note = "if it derives `JsonSchema` already, it derives it from another version of schemars (0.8 is another trait): depend on `schemars = \"1\"`, or derive `typed_tools::schemars::JsonSchema` with `#[schemars(crate = \"typed_tools::schemars\")]`"
)]
pub trait OutputJsonSchema: JsonSchema {}
#[diagnostic::do_not_recommend]
impl<T: JsonSchema> OutputJsonSchema for T {}

#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool's output: it is not `Send + 'static`",
    label = "this return type",
    note = "the output is sent back from the tool's future, which may run on any thread; return an owned, thread-safe type (`Arc` instead of `Rc`, `String` instead of `&str`)"
)]
pub trait OutputSend: Send + 'static {}
#[diagnostic::do_not_recommend]
impl<T: Send + 'static> OutputSend for T {}

#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool's error: it does not implement `std::fmt::Display`",
    label = "this error type",
    note = "the model reads the error's `Display`: implement `std::fmt::Display` for `{Self}` (for example with `thiserror`), or return `Result<T, String>`"
)]
pub trait ErrorDisplay: Display {}
#[diagnostic::do_not_recommend]
impl<E: Display> ErrorDisplay for E {}

#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool's error: it is not `Send + 'static`",
    label = "this error type",
    note = "the error is sent back from the tool's future, which may run on any thread; return an owned, thread-safe error type, or `Result<T, String>`"
)]
pub trait ErrorSend: Send + 'static {}
#[diagnostic::do_not_recommend]
impl<E: Send + 'static> ErrorSend for E {}

#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool's state: it must be `Send + Sync + 'static`, because calls may run on any thread",
    label = "this state type",
    note = "wrap what is not `Sync` in a `Mutex`, or hold an owned handle instead of a borrowed one"
)]
pub trait StateSync: Send + Sync + 'static {}
#[diagnostic::do_not_recommend]
impl<S: Send + Sync + 'static> StateSync for S {}

#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool's context: it must be `Send + Sync + 'static`, because calls may run on any thread",
    label = "this context type",
    note = "wrap what is not `Sync` in a `Mutex`, and own what the context holds (an `Arc`, a `String`) rather than borrow it"
)]
pub trait ContextSync: Send + Sync + 'static {}
#[diagnostic::do_not_recommend]
impl<C: Send + Sync + 'static> ContextSync for C {}

/// The bounds of [`assert_parameter`], as the generated items assume them.
#[diagnostic::on_unimplemented(
    message = "`{T}` is not a valid tool: its parameter type `{Self}` cannot be a tool parameter",
    label = "`{T}` cannot be used here",
    note = "fix the error reported at `{Self}` in the signature of the fn that `#[tool]` made `{T}` from"
)]
pub trait ParameterOf<T>: DeserializeOwned + JsonSchema + Send + 'static {}
#[diagnostic::do_not_recommend]
impl<T, P: ParameterDeserialize + ParameterJsonSchema + ParameterSend> ParameterOf<T> for P {}

/// The bounds of [`assert_output`], as the generated items assume them.
#[diagnostic::on_unimplemented(
    message = "`{T}` is not a valid tool: its output type `{Self}` cannot be a tool's output",
    label = "`{T}` cannot be used here",
    note = "fix the error reported at `{Self}` in the signature of the fn that `#[tool]` made `{T}` from"
)]
pub trait OutputOf<T>: Serialize + JsonSchema + Send + 'static {}
#[diagnostic::do_not_recommend]
impl<T, O: OutputSerialize + OutputJsonSchema + OutputSend> OutputOf<T> for O {}

/// The bounds of [`assert_error`], as the generated items assume them.
#[diagnostic::on_unimplemented(
    message = "`{T}` is not a valid tool: its error type `{Self}` cannot be a tool's error",
    label = "`{T}` cannot be used here",
    note = "fix the error reported at `{Self}` in the signature of the fn that `#[tool]` made `{T}` from"
)]
pub trait ErrorOf<T>: Display + Send + 'static {}
#[diagnostic::do_not_recommend]
impl<T, E: ErrorDisplay + ErrorSend> ErrorOf<T> for E {}

/// The bounds of [`assert_state`], as the generated items assume them.
#[diagnostic::on_unimplemented(
    message = "`{T}` is not a valid tool: its state type `{Self}` cannot be a tool's state",
    label = "`{T}` cannot be used here",
    note = "fix the error reported at `{Self}` in the signature of the fn that `#[tool]` made `{T}` from"
)]
pub trait StateOf<T>: Send + Sync + 'static {}
#[diagnostic::do_not_recommend]
impl<T, S: StateSync> StateOf<T> for S {}

/// The bounds of [`assert_context`], as the generated items assume them.
#[diagnostic::on_unimplemented(
    message = "`{T}` is not a valid tool: its context type `{Self}` cannot be a tool's context",
    label = "`{T}` cannot be used here",
    note = "fix the error reported at `{Self}` in the signature of the fn that `#[tool]` made `{T}` from"
)]
pub trait ContextOf<T>: Send + Sync + 'static {}
#[diagnostic::do_not_recommend]
impl<T, C: ContextSync> ContextOf<T> for C {}

/// Evaluated in a constant by `exec!`, `input!` and `call!`: each required
/// argument of `T` must be among `given`, else the evaluation fails with the
/// message `#[tool]` wrote for it, naming the argument. Nothing is checked
/// for a hand-written tool, which does not say which arguments it requires.
pub const fn required_arguments_given<T: Tool>(given: &[&str]) {
    let Some(required) = T::__TYPED_TOOLS_REQUIRED else {
        return;
    };
    let mut r = 0;
    while r < required.len() {
        let (name, message) = required[r];
        let mut g = 0;
        let mut found = false;
        while g < given.len() {
            if same_text(given[g], name) {
                found = true;
            }
            g += 1;
        }
        if !found {
            panic!("{}", message);
        }
        r += 1;
    }
}

/// `a == b`, in a constant.
const fn same_text(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Makes a tool fn's future the `Send` future `Tool::call` returns. The
/// macro calls it with the fn's name as span, so that a future that is not
/// `Send` is reported there, once. No `on_unimplemented` here: for a future,
/// rustc's own message wins, and it is good (it names the value held across
/// the `.await`).
pub fn send_future<F: Future + Send>(future: F) -> impl Future<Output = F::Output> + Send {
    future
}

/// The parts of a `Result` named by an alias (`io::Result<T>`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a `Result`: a tool returns `T`, `Result<T, E>` or an alias of `Result` such as `io::Result<T>`",
    label = "this return type is named `Result` but is not one",
    note = "return `std::result::Result<T, E>`, or a type that is not named `Result`"
)]
pub trait Fallible {
    /// The success type.
    type Ok;
    /// The error type.
    type Err;
    /// The value as a `Result`.
    fn into_result(self) -> Result<Self::Ok, Self::Err>;
}
impl<T, E> Fallible for Result<T, E> {
    type Ok = T;
    type Err = E;
    fn into_result(self) -> Result<T, E> {
        self
    }
}

/// `std::borrow::Cow`, for the generated `JsonSchema` impls.
pub use std::borrow::Cow;

/// `Result`, named without the user's aliases of it in scope.
pub type Result<T, E> = core::result::Result<T, E>;

/// The parameter types of a tool, as a tuple, for the input struct's
/// `Deserialize` and `JsonSchema` impls that `#[tool]` writes when no
/// parameter has `#[serde]` or `#[schemars]`: one generic visitor and one generic schema
/// writer, compiled once per tuple of types rather than derived per tool
/// (serde's and schemars' derives are an expansion each, and each tool's
/// visitor is code of its own). They read and describe what the derives
/// would: `deny_unknown_fields`, an absent `Option` is `None`, a duplicate
/// key is refused, the fields in order from a sequence; `type: object`,
/// `additionalProperties: false`, `properties` in order, `required`.
pub trait Fields: Sized {
    /// One `Option` per field, filled as the keys come.
    #[doc(hidden)]
    type Slots;
    /// Every slot empty.
    #[doc(hidden)]
    fn empty() -> Self::Slots;
    /// Reads the value of field `index` into its slot, or gives `false`
    /// (nothing read) when the slot is full: a duplicate key.
    #[doc(hidden)]
    fn read<'de, A: MapAccess<'de>>(
        slots: &mut Self::Slots,
        index: usize,
        map: &mut A,
    ) -> Result<bool, A::Error>;
    /// The fields, an absent one read as serde reads a missing field.
    #[doc(hidden)]
    fn finish<E: de::Error>(slots: Self::Slots, names: &'static [&'static str]) -> Result<Self, E>;
    /// The fields in order from a sequence.
    #[doc(hidden)]
    fn from_seq<'de, A: SeqAccess<'de>>(
        seq: &mut A,
        expected: &dyn de::Expected,
    ) -> Result<Self, A::Error>;
    /// Adds each field's property to an object schema, with its doc
    /// comment (`docs`, by field; none when shorter).
    #[doc(hidden)]
    fn properties(
        generator: &mut SchemaGenerator,
        schema: &mut Schema,
        names: &[&str],
        docs: &[&str],
    );
}

/// Reads a tool's input struct `name`, whose fields, named `names`, are of
/// the types `F`.
pub fn deserialize_input<'de, D: Deserializer<'de>, F: Fields>(
    deserializer: D,
    name: &'static str,
    names: &'static [&'static str],
) -> Result<F, D::Error> {
    deserializer.deserialize_struct(
        name,
        names,
        InputVisitor {
            name,
            names,
            fields: PhantomData,
        },
    )
}

/// The JSON Schema of a tool's input struct whose fields, named `names` and
/// documented by `docs` (the lines of each field's doc comment joined as
/// schemars' derive joins them; none when `docs` is shorter), are of the
/// types `F`: what schemars derives for it with `deny_unknown_fields`.
pub fn input_schema<F: Fields>(
    generator: &mut SchemaGenerator,
    names: &[&str],
    docs: &[&str],
) -> Schema {
    let mut schema = Schema::default();
    schema.insert("type".to_owned(), "object".into());
    schema.insert("additionalProperties".to_owned(), false.into());
    F::properties(generator, &mut schema, names, docs);
    schema
}

/// Adds property `name` to an object schema, required unless `optional`:
/// what the derive's `insert_object_property` does.
fn insert_property(schema: &mut Schema, name: &str, optional: bool, property: Schema) {
    let object = schema.ensure_object();
    if let Some(properties) = object
        .entry("properties")
        .or_insert_with(|| serde_json::Value::Object(serde_json::Map::new()))
        .as_object_mut()
    {
        properties.insert(name.to_owned(), property.into());
    }
    if !optional {
        if let Some(required) = object
            .entry("required")
            .or_insert_with(|| serde_json::Value::Array(Vec::new()))
            .as_array_mut()
        {
            required.push(name.into());
        }
    }
}

/// Adds the property of field `index`, of type `T`: optional as the derive
/// decides it (an `Option`, for the deserialize contract).
fn property<T: JsonSchema>(
    generator: &mut SchemaGenerator,
    schema: &mut Schema,
    names: &[&str],
    docs: &[&str],
    index: usize,
) {
    // `_schemars_private_is_option` is what schemars' derive calls here.
    let optional = generator.contract().is_deserialize() && T::_schemars_private_is_option();
    let mut property = generator.subschema_for::<T>();
    if let Some(doc) = docs.get(index) {
        document(&mut property, doc);
    }
    let name = names.get(index).copied().unwrap_or("");
    insert_property(schema, name, optional, property);
}

/// A field's doc comment on its schema, as schemars' derive puts it: a
/// first line starting with `#` is the title (less the `#`s), the rest the
/// description; each only when not empty.
fn document(schema: &mut Schema, doc: &str) {
    let doc = doc.trim_ascii();
    let (title, description) = match doc.strip_prefix('#') {
        Some(_) => {
            let end = doc.find('\n').unwrap_or(doc.len());
            (
                doc[..end].trim_start_matches('#').trim_ascii(),
                doc[end..].trim_ascii(),
            )
        }
        None => ("", doc),
    };
    for (key, text) in [("title", title), ("description", description)] {
        if !text.is_empty() {
            schema.insert(key.to_owned(), text.into());
        }
    }
}

struct InputVisitor<F> {
    name: &'static str,
    names: &'static [&'static str],
    fields: PhantomData<F>,
}

impl<'de, F: Fields> Visitor<'de> for InputVisitor<F> {
    type Value = F;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "struct {}", self.name)
    }

    #[inline]
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<F, A::Error> {
        let mut slots = F::empty();
        while let Some(index) = map.next_key_seed(Key::<F>(self.names, PhantomData))? {
            if !F::read(&mut slots, index, &mut map)? {
                return Err(de::Error::duplicate_field(self.names[index]));
            }
        }
        F::finish(slots, self.names)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<F, A::Error> {
        F::from_seq(&mut seq, &Length(self.name, self.names.len()))
    }
}

/// What a sequence too short for a struct was expected to be.
struct Length(&'static str, usize);

impl de::Expected for Length {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let plural = if self.1 == 1 { "" } else { "s" };
        write!(f, "struct {} with {} element{plural}", self.0, self.1)
    }
}

/// A key of the input object: the index of its field among `names`; any
/// other key is refused (`deny_unknown_fields`). Generic over the fields, so
/// that each input's visitor has its own copy of the deserializer's
/// `next_key_seed`, which the optimizer then inlines (one copy shared by
/// every input was a call per key: 9% more instructions to read `add`'s).
struct Key<F>(&'static [&'static str], PhantomData<F>);

impl<'de, F> de::DeserializeSeed<'de> for Key<F> {
    type Value = usize;

    #[inline]
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<usize, D::Error> {
        deserializer.deserialize_identifier(self)
    }
}

impl<'de, F> Visitor<'de> for Key<F> {
    type Value = usize;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("field identifier")
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<usize, E> {
        match usize::try_from(value) {
            Ok(index) if index < self.0.len() => Ok(index),
            _ => Err(E::invalid_value(
                de::Unexpected::Unsigned(value),
                &FieldIndex(self.0.len()),
            )),
        }
    }

    #[inline]
    fn visit_str<E: de::Error>(self, value: &str) -> Result<usize, E> {
        match self
            .0
            .iter()
            .position(|name| same(name.as_bytes(), value.as_bytes()))
        {
            Some(index) => Ok(index),
            None => Err(E::unknown_field(value, self.0)),
        }
    }

    fn visit_bytes<E: de::Error>(self, value: &[u8]) -> Result<usize, E> {
        match self.0.iter().position(|name| name.as_bytes() == value) {
            Some(index) => Ok(index),
            None => Err(E::unknown_field(&String::from_utf8_lossy(value), self.0)),
        }
    }
}

/// `a == b`, byte by byte: keys are short, and a call of `memcmp` costs
/// more than comparing them.
#[inline]
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

/// What a field index was expected to be.
struct FieldIndex(usize);

impl de::Expected for FieldIndex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "field index 0 <= i < {}", self.0)
    }
}

/// A field absent from the input, read as serde's derive reads it: an
/// `Option` is `None`, anything else is the error "missing field".
struct Missing<E>(&'static str, PhantomData<E>);

impl<'de, E: de::Error> Deserializer<'de> for Missing<E> {
    type Error = E;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, E> {
        Err(E::missing_field(self.0))
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, E> {
        visitor.visit_none()
    }

    ::serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

/// Field `index`'s value: the one read, or the missing one's.
#[inline]
fn field<T: DeserializeOwned, E: de::Error>(
    slot: Option<T>,
    names: &'static [&'static str],
    index: usize,
) -> Result<T, E> {
    match slot {
        Some(value) => Ok(value),
        None => T::deserialize(Missing(
            names.get(index).copied().unwrap_or(""),
            PhantomData,
        )),
    }
}

/// Element `index` of a sequence read as the input struct.
fn element<'de, T: DeserializeOwned, A: SeqAccess<'de>>(
    seq: &mut A,
    index: usize,
    expected: &dyn de::Expected,
) -> Result<T, A::Error> {
    seq.next_element()?
        .ok_or_else(|| de::Error::invalid_length(index, expected))
}

macro_rules! fields {
    ($($T:ident $i:tt),*) => {
        impl<$($T: DeserializeOwned + JsonSchema),*> Fields for ($($T,)*) {
            type Slots = ($(Option<$T>,)*);

            #[allow(clippy::unused_unit)]
            fn empty() -> Self::Slots {
                ($(None::<$T>,)*)
            }

            #[allow(unused_variables)]
            #[inline]
            fn read<'de, Map: MapAccess<'de>>(
                slots: &mut Self::Slots,
                index: usize,
                map: &mut Map,
            ) -> Result<bool, Map::Error> {
                match index {
                    $($i => {
                        if slots.$i.is_some() {
                            return Ok(false);
                        }
                        slots.$i = Some(map.next_value()?);
                        Ok(true)
                    })*
                    // `Key` gives only the index of a name, and the macro
                    // writes one name per field. (Not `IgnoredAny`: that is
                    // the deserializer's whole skipping code, compiled in
                    // every user crate.)
                    _ => Err(de::Error::custom("a key past the input's fields")),
                }
            }

            #[allow(unused_variables)]
            #[inline]
            fn finish<Error: de::Error>(
                slots: Self::Slots,
                names: &'static [&'static str],
            ) -> Result<Self, Error> {
                Ok(($(field(slots.$i, names, $i)?,)*))
            }

            #[allow(unused_variables)]
            fn from_seq<'de, Seq: SeqAccess<'de>>(
                seq: &mut Seq,
                expected: &dyn de::Expected,
            ) -> Result<Self, Seq::Error> {
                Ok(($(element(seq, $i, expected)?,)*))
            }

            #[allow(unused_variables)]
            fn properties(
                generator: &mut SchemaGenerator,
                schema: &mut Schema,
                names: &[&str],
                docs: &[&str],
            ) {
                $(property::<$T>(generator, schema, names, docs, $i);)*
            }
        }
    };
}

fields!();
fields!(A 0);
fields!(A 0, B 1);
fields!(A 0, B 1, C 2);
fields!(A 0, B 1, C 2, D 3);
fields!(A 0, B 1, C 2, D 3, E 4);
fields!(A 0, B 1, C 2, D 3, E 4, F 5);
fields!(A 0, B 1, C 2, D 3, E 4, F 5, G 6);
fields!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);
fields!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8);
fields!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9);
fields!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10);
fields!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11);
fields!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12);
fields!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12, N 13);
fields!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12, N 13, O 14);
fields!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12, N 13, O 14, P 15);
