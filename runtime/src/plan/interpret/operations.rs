//! The operations on values that both evaluators share ([`eval`] and
//! [`eval_pure`]): everything that only combines values already evaluated.
//! The evaluators differ only in control flow (a step, `if`, `let`, `and`/
//! `or`, the combinators) and in how they evaluate a sub-expression.
//!
//! [`eval`]: super::Machine::eval
//! [`eval_pure`]: super::Machine::eval_pure

use serde_json::Value as Json;

use crate::error::ToolError;

use super::super::error::RunError;
use super::super::ir::{BinaryOp, Expr};
use super::super::value::Value;

/// The value of `expr` from its children's values, which `operand` gives:
/// it is called once per child, in text order, as the value is built (so an
/// error stops it where evaluation would). For the expressions whose
/// children all run, each once, in order: records, lists, field access,
/// `not` and the operators other than `and`/`or`. The others are control
/// flow, which each evaluator runs itself, or leaves (a literal, a
/// variable), which call no tool, so only
/// [`eval_pure`](super::Machine::eval_pure) meets them.
pub(super) fn combine<'p>(
    expr: &'p Expr,
    mut operand: impl FnMut(&'p Expr) -> Result<Value, RunError>,
) -> Result<Value, RunError> {
    Ok(match expr {
        Expr::Record { fields } => {
            let mut values = Vec::with_capacity(fields.len());
            for (name, e) in fields {
                values.push((name.clone(), operand(e)?));
            }
            Value::Record(values)
        }
        Expr::List { items } => {
            let mut values = Vec::with_capacity(items.len());
            for e in items {
                values.push(operand(e)?);
            }
            Value::List(values)
        }
        Expr::Get { of, field } => field_owned(operand(of)?, field)?,
        Expr::Not { operand: e } => Value::Bool(!truth(operand(e)?, || "`not`".into())?),
        Expr::Binary { op, left, right } => {
            let l = operand(left)?;
            let r = operand(right)?;
            binary(*op, l, r)?
        }
        Expr::Unit
        | Expr::Bool { .. }
        | Expr::Int { .. }
        | Expr::Float { .. }
        | Expr::String { .. }
        | Expr::Var { .. }
        | Expr::Match { .. }
        | Expr::Let { .. }
        | Expr::If { .. }
        | Expr::Map { .. }
        | Expr::Filter { .. }
        | Expr::Fold { .. }
        | Expr::Call { .. } => unreachable!("evaluated by each evaluator itself"),
    })
}

/// `left op right` for `and`/`or` (`op`), once `left` is evaluated: the
/// value when it decides, `None` when `right` is needed (then
/// [`logical_right`]).
pub(super) fn short_circuit(op: BinaryOp, left: Value) -> Result<Option<Value>, RunError> {
    let left = truth(left, || format!("`{}`", op.symbol()))?;
    Ok((left == (op == BinaryOp::Or)).then_some(Value::Bool(left)))
}

/// `left op right` for `and`/`or` when `left` did not decide it.
pub(super) fn logical_right(op: BinaryOp, right: Value) -> Result<Value, RunError> {
    Ok(Value::Bool(truth(right, || format!("`{}`", op.symbol()))?))
}

/// A Bool, or the error of `context` given another value.
pub(super) fn truth(value: Value, context: impl FnOnce() -> String) -> Result<bool, RunError> {
    match value {
        Value::Bool(b) => Ok(b),
        other => Err(RunError::mismatch(context(), "Bool", &other)),
    }
}

/// A list's elements, or the error of `context` given another value.
pub(super) fn items(value: Value, context: &str) -> Result<Vec<Value>, RunError> {
    match value {
        Value::List(items) => Ok(items),
        other => Err(RunError::mismatch(context, "a list", &other)),
    }
}

/// A tool's arguments as JSON.
pub(super) fn json_args(tool: &str, value: &Value) -> Result<Json, RunError> {
    value.to_json().ok_or_else(|| RunError::NotJson {
        tool: tool.to_owned(),
    })
}

/// Field `field` of `record`, or the error of `record.field`.
pub(super) fn field_ref<'v>(record: &'v Value, field: &str) -> Result<&'v Value, RunError> {
    match record {
        Value::Record(_) => record.field(field).ok_or_else(|| RunError::MissingField {
            field: field.to_owned(),
            found: record.type_name(),
        }),
        other => Err(RunError::mismatch(format!("`.{field}`"), "a record", other)),
    }
}

/// Field `field` taken out of `record`, or the error of `record.field`.
pub(super) fn field_owned(record: Value, field: &str) -> Result<Value, RunError> {
    match record {
        Value::Record(mut fields) => match fields.iter().position(|(n, _)| n == field) {
            Some(index) => Ok(fields.swap_remove(index).1),
            None => Err(RunError::MissingField {
                field: field.to_owned(),
                found: Value::Record(fields).type_name(),
            }),
        },
        other => Err(RunError::mismatch(
            format!("`.{field}`"),
            "a record",
            &other,
        )),
    }
}

/// The value an `Err` branch binds: `{tool: String, kind: String, message: String}`.
pub(super) fn error_value(tool: &str, kind: &str, message: &str) -> Value {
    Value::Record(vec![
        ("tool".into(), Value::String(tool.into())),
        ("kind".into(), Value::String(kind.into())),
        ("message".into(), Value::String(message.into())),
    ])
}

pub(super) fn kind(error: &ToolError) -> &'static str {
    match error {
        ToolError::UnknownTool { .. } => "unknown_tool",
        ToolError::EffectDenied { .. } => "effect_denied",
        ToolError::ArgsTooLarge { .. } => "args_too_large",
        ToolError::InvalidArgs { .. } => "invalid_args",
        ToolError::Deserialization { .. } => "deserialization",
        ToolError::Execution { .. } => "execution",
        ToolError::Escalation(_) => "escalation",
    }
}

/// `l op r`, both sides evaluated: the operations other than `and`/`or`.
fn binary(op: BinaryOp, l: Value, r: Value) -> Result<Value, RunError> {
    use std::cmp::Ordering;
    // Written only for an error message.
    let context = || format!("`{}`", op.symbol());
    let order =
        |l: &Value, r: &Value| -> Result<Ordering, RunError> {
            match (l, r) {
                (Value::Int(a), Value::Int(b)) => Ok(a.cmp(b)),
                (Value::String(a), Value::String(b)) => Ok(a.cmp(b)),
                (Value::Float(a), Value::Float(b)) => {
                    a.partial_cmp(b).ok_or_else(|| RunError::TypeMismatch {
                        context: context(),
                        expected: "comparable numbers",
                        found: "NaN".into(),
                    })
                }
                (Value::Int(_) | Value::String(_) | Value::Float(_), other) => Err(
                    RunError::mismatch(context(), "a value of the left side's type", other),
                ),
                (other, _) => Err(RunError::mismatch(context(), "Int, Float or String", other)),
            }
        };
    let ints = |l: &Value, r: &Value| match (l, r) {
        (Value::Int(a), Value::Int(b)) => Ok((*a, *b)),
        (Value::Int(_), other) | (other, _) => Err(RunError::mismatch(context(), "Int", other)),
    };
    let overflow = RunError::Overflow { op };
    Ok(match op {
        BinaryOp::Eq => Value::Bool(l == r),
        BinaryOp::Ne => Value::Bool(l != r),
        BinaryOp::Lt => Value::Bool(order(&l, &r)? == Ordering::Less),
        BinaryOp::Le => Value::Bool(order(&l, &r)? != Ordering::Greater),
        BinaryOp::Gt => Value::Bool(order(&l, &r)? == Ordering::Greater),
        BinaryOp::Ge => Value::Bool(order(&l, &r)? != Ordering::Less),
        BinaryOp::Add => {
            let (a, b) = ints(&l, &r)?;
            Value::Int(a.checked_add(b).ok_or(overflow)?)
        }
        BinaryOp::Sub => {
            let (a, b) = ints(&l, &r)?;
            Value::Int(a.checked_sub(b).ok_or(overflow)?)
        }
        BinaryOp::Mul => {
            let (a, b) = ints(&l, &r)?;
            Value::Int(a.checked_mul(b).ok_or(overflow)?)
        }
        BinaryOp::Div | BinaryOp::Rem => {
            let (a, b) = ints(&l, &r)?;
            if b == 0 {
                return Err(RunError::DivisionByZero);
            }
            let result = if op == BinaryOp::Div {
                a.checked_div(b)
            } else {
                a.checked_rem(b)
            };
            Value::Int(result.ok_or(overflow)?)
        }
        BinaryOp::Concat => match (l, r) {
            (Value::String(a), Value::String(b)) => Value::String(a + &b),
            (Value::String(_), other) | (other, _) => {
                return Err(RunError::mismatch(context(), "String", &other))
            }
        },
        BinaryOp::And | BinaryOp::Or => {
            unreachable!("`and`/`or` short-circuit: see `short_circuit`")
        }
    })
}
