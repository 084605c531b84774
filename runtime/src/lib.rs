//! The runtime of [typed-tools](https://docs.rs/typed-tools): effects, tools,
//! toolboxes, catalogs and dispatch. Depend on the `typed-tools` crate, which
//! re-exports all of this together with the `#[tool]` attribute.
#![warn(missing_docs)]

pub mod catalog;
pub mod doc;
pub mod effect;
pub mod error;
pub mod repair;
pub mod schema;
pub mod tool;
pub mod toolbox;

pub use catalog::{Catalog, CatalogFormat};
pub use error::{Escalation, NextStep, Severity, ToolError};
pub use tool::{DynamicTool, Tool, ToolOutput, ToolSpec};
pub use toolbox::{BuildError, BuildProblem, Call, Toolbox, ToolboxBuilder};

/// What `#[tool]` expands to names, and nothing else. Not a public API.
#[doc(hidden)]
pub mod __private {
    pub use ::schemars;
    pub use ::serde;

    pub use crate::effect;
    pub use crate::tool::Tool;

    /// Checks that a parameter's type can be deserialized and described; the
    /// macro calls it with the parameter's span, so that an error points there.
    pub const fn assert_parameter<T: Parameter>() {}

    /// A type a tool can take as a parameter.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` cannot be a tool parameter: it must implement `serde::Deserialize` and `schemars::JsonSchema`",
        label = "this parameter's type",
        note = "add `#[derive(serde::Deserialize, schemars::JsonSchema)]` to `{Self}`, or use a type that has both"
    )]
    pub trait Parameter {}
    impl<T: ::serde::de::DeserializeOwned + ::schemars::JsonSchema> Parameter for T {}

    /// Checks that a tool's shared state can be shared across calls and threads.
    pub const fn assert_state<S: State>() {}

    /// A type a tool can hold as its `#[state]`.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` cannot be a tool's state: it must be `Send + Sync + 'static`, because calls may run on any thread",
        label = "this state type",
        note = "wrap what is not `Sync` in a `Mutex`, or hold an owned handle instead of a borrowed one"
    )]
    pub trait State {}
    impl<S: Send + Sync + 'static> State for S {}

    /// The parts of a `Result` named by an alias (`io::Result<T>`).
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

    /// Checks that a tool's output can be serialized and described.
    pub const fn assert_output<T: Output>() {}

    /// A type a tool can return.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` cannot be a tool's output: it must implement `serde::Serialize` and `schemars::JsonSchema`",
        label = "this return type",
        note = "add `#[derive(serde::Serialize, schemars::JsonSchema)]` to `{Self}`, or return a type that has both"
    )]
    pub trait Output {}
    impl<T: ::serde::Serialize + ::schemars::JsonSchema> Output for T {}

    /// Checks that a fallible tool's error type can be shown to the model.
    pub const fn assert_error<E: ToolFnError>() {}

    /// A type a fallible tool can return as its error.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` cannot be a tool's error: it must implement `std::fmt::Display` (the model reads it) and `Send`",
        label = "this error type",
        note = "implement `Display` for `{Self}` (for example with `thiserror`), or return `Result<T, String>`"
    )]
    pub trait ToolFnError {}
    impl<E: ::core::fmt::Display + Send + 'static> ToolFnError for E {}
}
