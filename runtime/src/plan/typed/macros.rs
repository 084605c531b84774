//! The builder's macros: [`field!`](crate::field), [`exec!`](crate::exec),
//! [`input!`](crate::input), [`record!`](crate::record),
//! [`call!`](crate::call) and [`on!`](crate::on). Each writes a call of this
//! module's functions with the checks rustc makes of a struct literal and a
//! field projection, and names binders after the closures' parameters.

/// `field!(account.email)`: the field `email` of the plan value `account`,
/// checked against the value's Rust type; `field!(a.b.c)` chains.
///
/// The plan reads the field by its Rust name. When the output type renames
/// it in JSON (`#[serde(rename_all = "camelCase")]`), give the JSON name:
/// `field!(account.last_charge_cents as "lastChargeCents")`; rustc still
/// checks the Rust field and its type.
///
/// ```
/// use typed_tools::plan::typed::{lit, TypedPlan};
/// use typed_tools::{exec, field, on, tool};
///
/// #[derive(serde::Serialize, schemars::JsonSchema)]
/// #[serde(rename_all = "camelCase")]
/// struct Account { last_charge_cents: i64 }
///
/// /// Look up an account.
/// #[tool(effects = Read)]
/// fn lookup_account(id: String) -> Result<Account, String> { Err(id) }
///
/// let plan = TypedPlan::new(on!(exec!(LookupAccount { id: lit("c") }),
///     Ok(account) => field!(account.last_charge_cents as "lastChargeCents"),
///     Err(e) => lit(0),
/// ));
/// assert!(plan.plan().to_string().contains("Ok(account) => account.lastChargeCents"));
/// ```
#[macro_export]
macro_rules! field {
    ($e:ident . $f:ident as $json:literal) => {
        $e.field($json, |v| &v.$f)
    };
    ($e:ident $(. $f:ident)+) => {
        $e $(.field(::core::stringify!($f), |v| &v.$f))+
    };
}

/// `exec!(Tool { arg: value, ... })`: calls `Tool`, each argument checked
/// against the field of the tool's input it names: an unknown field, a value
/// of the wrong type, a missing or a repeated field is a compile error. Yields
/// an [`Exec`](super::Exec) to match with [`on!`](crate::on).
///
/// An optional argument (an `Option<T>` parameter, or one with
/// `#[serde(default)]`) may be left out: the call's arguments then lack it,
/// as a model's JSON would, and the tool sees `None` (or the default). A
/// required one left out is a compile error naming it. (`#[tool]` tells
/// `exec!` which arguments are optional; for a hand-written [`Tool`](crate::Tool), a
/// required argument left out is refused when the plan is checked, before
/// anything runs.)
///
/// ```
/// use typed_tools::plan::typed::{lit, TypedPlan};
/// use typed_tools::{exec, field, on, tool};
///
/// /// Look up the weather in a city.
/// #[tool(effects = Network)]
/// fn weather(city: String, days: Option<u8>) -> String {
///     format!("sunny in {city} in {} day(s)", days.unwrap_or(0))
/// }
///
/// let today = TypedPlan::new(on!(exec!(Weather { city: lit("Lima") }),
///     Ok(w) => w,
///     Err(e) => field!(e.message),
/// ));
/// assert!(today.plan().to_string().starts_with(r#"match exec tool weather {city = "Lima"}"#));
/// let later = TypedPlan::new(on!(exec!(Weather { city: lit("Lima"), days: lit(Some(2)) }),
///     Ok(w) => w,
///     Err(e) => field!(e.message),
/// ));
/// assert!(later.plan().to_string().starts_with(r#"match exec tool weather {city = "Lima", days = 2}"#));
/// ```
///
/// `exec!(Tool(value))` passes one plan value of the tool's input type as
/// the whole input (an [`input!`](crate::input), or a `traverse` element).
#[macro_export]
macro_rules! exec {
    ($($tool:ident)::+ ( $input:expr )) => {
        $crate::plan::typed::exec_with::<$($tool)::+, _>($input)
    };
    ($tool:ty { $($f:ident : $v:expr),* $(,)? }) => {
        $crate::__plan_tool_args!(exec, $tool { $($f: $v),* })
    };
}

/// `input!(Tool { arg: value, ... })`: the input of `Tool` as a plan value
/// (of type `ToolInput`), its arguments checked and named as
/// [`exec!`](crate::exec) names them (`#[serde(rename)]` honoured), for
/// `exec!(Tool(value))`, for instance once per element of a `traverse`.
///
/// ```
/// use typed_tools::plan::typed::{list, lit, traverse, TypedPlan};
/// use typed_tools::{exec, field, input, on, tool};
///
/// /// Charge an order.
/// #[tool(effects = Write)]
/// fn charge(#[serde(rename = "orderId")] id: i64, amount: i64) -> Result<String, String> {
///     Ok(format!("tx_{id}"))
/// }
///
/// // λ-Tool's traverse: each order record is the whole input of `charge`.
/// let orders = list([
///     input!(Charge { id: lit(1), amount: lit(100) }),
///     input!(Charge { id: lit(2), amount: lit(50) }),
/// ]);
/// let plan = TypedPlan::new(on!(traverse(orders, "o", |o| exec!(Charge(o))),
///     Ok(receipts) => lit("done"),
///     Err(e) => field!(e.message),
/// ));
/// assert!(plan.plan().to_string().contains("[{orderId = 1, amount = 100}, {orderId = 2, amount = 50}]"));
/// ```
#[macro_export]
macro_rules! input {
    ($tool:ty { $($f:ident : $v:expr),* $(,)? }) => {
        $crate::__plan_tool_args!(input, $tool { $($f: $v),* })
    };
}

/// `record!(Type { field: value, ... })`: a record plan value of the Rust
/// struct `Type`, every field given once with a value of its type, checked
/// like [`exec!`](crate::exec)'s arguments. Field names are the Rust names
/// (`r#type` is `type`): a struct that renames fields for serde gives no way
/// to read its JSON names, so for a tool's input use [`input!`](crate::input).
///
/// ```
/// use typed_tools::plan::typed::{list, lit, map, TypedPlan};
/// use typed_tools::{field, record};
///
/// struct Order { id: i64, amount: i64 }
///
/// let orders = list([
///     record!(Order { id: lit(1), amount: lit(100) }),
///     record!(Order { id: lit(2), amount: lit(50) }),
/// ]);
/// let plan = TypedPlan::new(map(orders, "o", |o| field!(o.amount)));
/// assert_eq!(
///     plan.plan().to_string(),
///     "map (fn o => o.amount) [{id = 1, amount = 100}, {id = 2, amount = 50}]"
/// );
/// ```
#[macro_export]
macro_rules! record {
    ($ty:ty { $($f:ident : $v:expr),* $(,)? }) => {{
        // Never called: a struct literal, so that rustc reports a missing or
        // repeated field.
        #[allow(unreachable_code, clippy::diverging_sub_expression)]
        let _every_field_once = || {
            type Record = $ty;
            let _ = Record { $($f: ::core::unreachable!()),* };
        };
        $crate::plan::typed::record::<$ty, _>(|fields| {
            fields $(.field(::core::stringify!($f), |r: &$ty| &r.$f).is($v))*
        })
    }};
}

/// `call!(Tool { arg: value, ... })`: calls a [`PureTool`](crate::plan::typed::PureTool)
/// (no effects, cannot fail) as a function, its arguments checked as
/// [`exec!`](crate::exec) checks them. Yields a plain plan value of the
/// tool's output type, usable in `map`, `filter` and `fold` callbacks.
#[macro_export]
macro_rules! call {
    ($tool:ty { $($f:ident : $v:expr),* $(,)? }) => {
        $crate::__plan_tool_args!(call, $tool { $($f: $v),* })
    };
}

/// The arguments of `exec!`, `input!` and `call!`.
#[doc(hidden)]
#[macro_export]
macro_rules! __plan_tool_args {
    ($make:ident, $tool:ty { $($f:ident : $v:expr),* }) => {{
        // Never called: a struct literal of the input type, so that rustc
        // reports a repeated or unknown argument; the arguments left out come
        // from the (never evaluated) base.
        #[allow(unreachable_code, clippy::diverging_sub_expression, clippy::needless_update)]
        let _each_argument_once = || {
            type Input = <$tool as $crate::Tool>::Input;
            let _ = Input { $($f: ::core::unreachable!(),)* ..::core::unreachable!() };
        };
        // Only an optional argument may be left out: a required one left out
        // fails this constant's evaluation with a message naming it.
        const _: () = $crate::__private::required_arguments_given::<$tool>(
            &[$(::core::stringify!($f)),*],
        );
        $crate::plan::typed::$make::<$tool, _>(|args| {
            args $(.field(
                <$tool as $crate::Tool>::__typed_tools_argument(::core::stringify!($f)),
                |i| &i.$f,
            ).is($v))*
        })
    }};
}

/// `on!(step, Ok(x) => ..., Err(e) => ...)`: matches the Result of an
/// [`Exec`](super::Exec) or a [`Traversal`](super::Traversal); the binders' names are the IR's, so Rust's
/// scoping and the plan's agree.
#[macro_export]
macro_rules! on {
    ($step:expr, Ok($ok:ident) => $then:expr, Err($err:ident) => $else:expr $(,)?) => {
        $step.on(
            ::core::stringify!($ok),
            |$ok| {
                let _ = &$ok;
                $then
            },
            ::core::stringify!($err),
            |$err| {
                let _ = &$err;
                $else
            },
        )
    };
}
