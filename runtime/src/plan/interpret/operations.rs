//! The operations on values that both evaluators share ([`eval`] and
//! [`eval_pure`]): everything that only combines values already evaluated.
//! The evaluators differ only in control flow (a step, `if`, `let`, `and`/
//! `or`, the combinators) and in how they evaluate a sub-expression.
//!
//! [`eval`]: super::Machine::eval
//! [`eval_pure`]: super::Machine::eval_pure

use std::sync::Arc;

use super::super::error::RunError;
use super::super::ir::{BinaryOp, Expr};
use super::super::limits::{Limit, Meter};
use super::super::value::{List, Record, Value, HEADER, SLOT};

/// What [`combine`] asks of its evaluator: each child's value, and the
/// meter that counts what is built.
pub(super) trait Operands<'p> {
    /// The value of `expr`, a child of the expression being combined.
    fn value(&mut self, expr: &'p Expr) -> Result<Value, RunError>;
    /// The run's meter.
    fn meter(&mut self) -> &mut Meter;
    /// A record field's name from the plan, shared by every record built
    /// with it.
    fn name(&mut self, name: &'p str) -> Result<Arc<str>, Limit>;
}

/// The field names of the plan's records, each made once per run and shared
/// by the records built with it: `[{n = 1}, {n = 2}]` makes one `n`.
#[derive(Default)]
pub(super) struct Names {
    made: Vec<Arc<str>>,
}

/// Names kept at most: a lookup is a scan.
const NAMES: usize = 32;

impl Names {
    pub(super) fn get(&mut self, name: &str, meter: &mut Meter) -> Result<Arc<str>, Limit> {
        if let Some(made) = self.made.iter().find(|made| ***made == *name) {
            return Ok(made.clone());
        }
        meter.name(name.len())?;
        let made: Arc<str> = Arc::from(name);
        if self.made.len() < NAMES {
            self.made.push(made.clone());
        }
        Ok(made)
    }
}

/// The value of `expr` from its children's values, which `operands` gives:
/// it is asked once per child, in text order, as the value is built (so an
/// error stops it where evaluation would); what is built is counted by its
/// meter, before it is built. For the expressions whose
/// children all run, each once, in order: records, lists, field access,
/// `not` and the operators other than `and`/`or`. The others are control
/// flow, which each evaluator runs itself, or leaves (a literal, a
/// variable), which call no tool, so only
/// [`eval_pure`](super::Machine::eval_pure) meets them.
pub(super) fn combine<'p>(
    expr: &'p Expr,
    operands: &mut impl Operands<'p>,
) -> Result<Value, RunError> {
    Ok(match expr {
        Expr::Record { fields } => {
            operands.meter().record(fields.len())?;
            let mut values: Vec<(Arc<str>, Value)> = Vec::with_capacity(fields.len());
            for (name, e) in fields {
                let value = operands.value(e)?;
                values.push((operands.name(name)?, value));
            }
            Value::Record(Record::within(values, operands.meter())?)
        }
        Expr::List { items } => {
            let mut list = Building::new(items.len(), operands.meter())?;
            for e in items {
                let value = operands.value(e)?;
                list.push(value, operands.meter())?;
            }
            list.finish()
        }
        Expr::Get { of, field } => field_owned(operands.value(of)?, field)?,
        Expr::Not { operand: e } => Value::Bool(!truth(operands.value(e)?, || "`not`".into())?),
        Expr::Binary { op, left, right } => {
            let l = operands.value(left)?;
            let r = operands.value(right)?;
            binary(*op, l, r, operands.meter())?
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

/// A list being built element by element, within the limits: its length
/// counted before it is allocated, its depth and size as each element comes.
pub(super) struct Building {
    items: Vec<Value>,
    depth: usize,
    size: usize,
}

impl Building {
    /// A list of at most `capacity` elements.
    #[inline]
    pub(super) fn new(capacity: usize, meter: &mut Meter) -> Result<Building, Limit> {
        meter.list(capacity)?;
        Ok(Building {
            items: Vec::with_capacity(capacity),
            depth: 0,
            size: HEADER,
        })
    }

    /// A list of at most `capacity` elements, allocated as they come.
    pub(super) fn growing(capacity: usize, meter: &mut Meter) -> Result<Building, Limit> {
        meter.list(capacity)?;
        Ok(Building {
            items: Vec::new(),
            depth: 0,
            size: HEADER,
        })
    }

    #[inline]
    pub(super) fn push(&mut self, value: Value, meter: &Meter) -> Result<(), Limit> {
        self.depth = self.depth.max(value.depth());
        self.size = self.size.saturating_add(SLOT).saturating_add(value.size());
        meter.size(self.size)?;
        meter.nest(self.depth + 1)?;
        self.items.push(value);
        Ok(())
    }

    pub(super) fn finish(self) -> Value {
        Value::List(List::counted(self.items, self.depth + 1, self.size))
    }
}

/// A list's elements, or the error of `context` given another value.
pub(super) fn items(value: Value, context: &str) -> Result<List, RunError> {
    match value {
        Value::List(items) => Ok(items),
        other => Err(RunError::mismatch(context, "a list", &other)),
    }
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

/// Field `field` of `record`, which it may own, or the error of
/// `record.field`: the field's value is shared, not copied.
pub(super) fn field_owned(record: Value, field: &str) -> Result<Value, RunError> {
    field_ref(&record, field).cloned()
}

/// The value an `Err` branch binds: `{tool: String, kind: String, message: String}`.
pub(super) fn error_value(
    tool: &str,
    kind: &str,
    message: &str,
    meter: &mut Meter,
) -> Result<Value, Limit> {
    meter.record(3)?;
    for part in [tool, kind, message] {
        meter.string(part.len())?;
    }
    let value = Value::record([
        ("tool", Value::String(tool.into())),
        ("kind", Value::String(kind.into())),
        ("message", Value::String(message.into())),
    ]);
    meter.size(value.size())?;
    Ok(value)
}

/// `l op r`, both sides evaluated: the operations other than `and`/`or`.
fn binary(op: BinaryOp, l: Value, r: Value, meter: &mut Meter) -> Result<Value, RunError> {
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
            (Value::String(a), Value::String(b)) => {
                // Counted before the bytes are copied.
                meter.string(a.len().saturating_add(b.len()))?;
                let mut s = String::with_capacity(a.len() + b.len());
                s.push_str(&a);
                s.push_str(&b);
                Value::String(s.into())
            }
            (Value::String(_), other) | (other, _) => {
                return Err(RunError::mismatch(context(), "String", &other))
            }
        },
        BinaryOp::And | BinaryOp::Or => {
            unreachable!("`and`/`or` short-circuit: see `short_circuit`")
        }
    })
}
