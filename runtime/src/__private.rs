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
//! - The generated `Tool` impl, input struct and schema twin assume the same
//!   bounds through `where for<'__typed_tools> T: ParameterOf<Tool>` clauses.
//!   A bound with a binder is not checked where it is written (it is not
//!   "global", rust-lang/rust#48214), so a bad type does not make the generated
//!   items fail a second time; it is checked where the tool is used, and there
//!   the `*Of<Tool>` traits say which tool and which type, and point back to
//!   the definition.
//!
//! A tool fn's future that is not `Send` is reported at the fn's name by
//! [`send_future`], in rustc's words, which name the value held across `.await`.

use std::fmt::Display;
use std::future::Future;

pub use ::schemars;
use ::schemars::JsonSchema;
pub use ::serde;
use ::serde::de::DeserializeOwned;
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
