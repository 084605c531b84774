//! Validation: every way a value breaks a [`SchemaModel`], each with its JSON path.

use serde_json::{Map, Value};

use super::model::{Additional, Budget, Exceeded, Form, Limits, Node, NodeId, SchemaModel, Types};
use super::name::Namer;
use super::{describe_value, PathLink, Problem};

impl SchemaModel {
    /// Every way `value` breaks the schema, in the order met (an object's
    /// fields before its missing fields). Empty when the value fits.
    pub(crate) fn check(&self, value: &Value) -> Vec<Problem> {
        self.check_at(NodeId::ROOT, value)
    }

    /// Whether `value` fits the sub-schema `id`.
    pub(crate) fn fits(&self, id: NodeId, value: &Value) -> bool {
        self.check_at(id, value).is_empty()
    }

    fn check_at(&self, id: NodeId, value: &Value) -> Vec<Problem> {
        let mut problems = Vec::new();
        // The last node of the budget is spent on saying so.
        let limits = Limits::CHECK;
        let mut walker = Walker {
            model: self,
            budget: Budget::new(Limits {
                nodes: limits.nodes - 1,
                ..limits
            }),
            reported: false,
        };
        walker.check(id, 0, value, &PathLink::Root, &mut problems);
        problems
    }
}

struct Walker<'m> {
    model: &'m SchemaModel,
    budget: Budget,
    /// Whether running out of budget was reported.
    reported: bool,
}

impl<'m> Walker<'m> {
    fn check(
        &mut self,
        id: NodeId,
        depth: usize,
        value: &Value,
        path: &PathLink<'_>,
        out: &mut Vec<Problem>,
    ) {
        if self.budget.take() == Err(Exceeded::Nodes) {
            if !self.reported {
                self.reported = true;
                out.push(Problem::Mismatch {
                    path: path.to_json_path(),
                    expected: "arguments small enough to check".into(),
                    found: "more than the checker will read".into(),
                });
            }
            return;
        }
        let max_depth = self.budget.limits().depth;
        if depth >= max_depth {
            out.push(Problem::Mismatch {
                path: path.to_json_path(),
                expected: format!("a value nested at most {} levels deep", max_depth / 4),
                found: "deeper nesting".into(),
            });
            return;
        }
        let inner = depth + 1;
        let id = self.model.resolved(id);
        let node = self.model.node(id);
        match node.form {
            Form::Keywords => {}
            Form::Never => return out.push(self.mismatch(id, value, path)),
            Form::Anything => return,
        }

        for &part in node.all_of.iter().flatten() {
            self.check(part, inner, value, path, out);
        }
        for (options, any) in [(&node.any_of, true), (&node.one_of, false)] {
            let Some(options) = options else { continue };
            // Each option is checked once; its problems are kept for the message.
            let results: Vec<Vec<Problem>> = options
                .iter()
                .map(|&option| {
                    let mut problems = Vec::new();
                    self.check(option, inner, value, path, &mut problems);
                    problems
                })
                .collect();
            let fitting = results.iter().filter(|p| p.is_empty()).count();
            let ok = if any { fitting > 0 } else { fitting == 1 };
            if !ok {
                // When exactly one option has the value's JSON type, its
                // problems say more than "expected A | B".
                let same_type: Vec<usize> = (0..options.len())
                    .filter(|&i| self.accepts_type_of(options[i], value))
                    .collect();
                if let [only] = same_type.as_slice() {
                    out.extend(results.into_iter().nth(*only).unwrap_or_default());
                } else {
                    out.push(self.mismatch(id, value, path));
                }
                return;
            }
        }
        if let Some(allowed) = &node.enum_values {
            if !allowed.iter().any(|a| same_json(a, value)) {
                return out.push(self.mismatch(id, value, path));
            }
        }
        if let Some(constant) = &node.constant {
            if !same_json(constant, value) {
                return out.push(self.mismatch(id, value, path));
            }
        }
        let ok = match &node.types {
            Types::One(t) => type_matches(t, value),
            Types::Many(ts) => ts.iter().any(|t| type_matches(t, value)),
            Types::Absent | Types::Other => true,
        };
        if !ok {
            return out.push(self.mismatch(id, value, path));
        }
        match value {
            Value::Object(fields) => self.check_object(node, inner, fields, path, out),
            Value::Array(items) => self.check_array(node, inner, items, path, out),
            Value::Number(n) => {
                let n = n.as_f64().unwrap_or(f64::NAN);
                let b = &node.bounds;
                let bound = |m: &Option<serde_json::Number>| m.as_ref().and_then(|m| m.as_f64());
                let out_of_range = bound(&b.minimum).is_some_and(|m| n < m)
                    || bound(&b.maximum).is_some_and(|m| n > m)
                    || bound(&b.exclusive_minimum).is_some_and(|m| n <= m)
                    || bound(&b.exclusive_maximum).is_some_and(|m| n >= m);
                if out_of_range {
                    out.push(self.bounded_mismatch(id, value, path));
                }
            }
            Value::String(s) => {
                let len = s.chars().count() as u64;
                let b = &node.bounds;
                if as_u64(&b.min_length).is_some_and(|m| len < m)
                    || as_u64(&b.max_length).is_some_and(|m| len > m)
                {
                    out.push(self.bounded_mismatch(id, value, path));
                }
            }
            Value::Null | Value::Bool(_) => {}
        }
    }

    fn check_object(
        &mut self,
        node: &'m Node,
        depth: usize,
        fields: &Map<String, Value>,
        path: &PathLink<'_>,
        out: &mut Vec<Problem>,
    ) {
        let properties = node.properties.as_ref();
        for (name, field) in fields {
            match properties.and_then(|p| p.get(name)) {
                Some(property) => self.check(property, depth, field, &path.field(name), out),
                None => match node.additional {
                    Additional::False => out.push(Problem::Unknown {
                        path: path.field(name).to_json_path(),
                        expected: properties
                            .map(|p| p.names().map(str::to_owned).collect())
                            .unwrap_or_default(),
                    }),
                    Additional::Schema(values) => {
                        self.check(values, depth, field, &path.field(name), out)
                    }
                    Additional::Absent | Additional::Other => {}
                },
            }
        }
        for name in node.required.iter().flatten() {
            if !fields.contains_key(name) {
                let expected = properties
                    .and_then(|p| p.get(name))
                    .map_or_else(|| "Any".to_owned(), |s| self.name(Some(s)));
                out.push(Problem::Missing {
                    path: path.field(name).to_json_path(),
                    expected,
                });
            }
        }
    }

    fn check_array(
        &mut self,
        node: &'m Node,
        depth: usize,
        items: &[Value],
        path: &PathLink<'_>,
        out: &mut Vec<Problem>,
    ) {
        let len = items.len() as u64;
        let (min, max) = (
            as_u64(&node.bounds.min_items),
            as_u64(&node.bounds.max_items),
        );
        if min.is_some_and(|m| len < m) || max.is_some_and(|m| len > m) {
            let item = self.name(node.items);
            let expected = match (min, max) {
                (Some(a), Some(b)) if a == b => format!("[{item}] of exactly {a} element(s)"),
                (min, max) => format!(
                    "[{item}] of {}{} element(s)",
                    min.map(|m| format!("at least {m}")).unwrap_or_default(),
                    max.map(|m| format!("{}at most {m}", if min.is_some() { ", " } else { "" }))
                        .unwrap_or_default()
                ),
            };
            out.push(Problem::Mismatch {
                path: path.to_json_path(),
                expected,
                found: format!("an array of {} element(s)", items.len()),
            });
        }
        for (i, item) in items.iter().enumerate() {
            let prefix = node.prefix_items.as_ref().and_then(|p| p.get(i).copied());
            if let Some(schema) = prefix.or(node.items) {
                self.check(schema, depth, item, &path.index(i), out);
            }
        }
    }

    /// Whether the schema's `type` (if any) admits the value's JSON type.
    fn accepts_type_of(&self, id: NodeId, value: &Value) -> bool {
        let node = self.model.target(id);
        match &node.types {
            Types::One(t) => type_matches(t, value) || (t == "number" && value.is_number()),
            Types::Many(ts) => ts.iter().any(|t| type_matches(t, value)),
            Types::Absent | Types::Other => {
                let example = node
                    .constant
                    .as_ref()
                    .or_else(|| node.enum_values.as_ref().and_then(|e| e.first()));
                example.is_some_and(|e| std::mem::discriminant(e) == std::mem::discriminant(value))
            }
        }
    }

    /// The schema in λ-Tool notation, for "expected ..."; `None` is `Any`.
    fn name(&self, id: Option<NodeId>) -> String {
        id.map_or_else(|| "Any".to_owned(), |id| Namer::new(self.model).name(id))
    }

    fn mismatch(&self, id: NodeId, value: &Value, path: &PathLink<'_>) -> Problem {
        Problem::Mismatch {
            path: path.to_json_path(),
            expected: self.name(Some(id)),
            found: describe_value(value),
        }
    }

    /// A mismatch of range or length: "Int >= 1 and <= 50", "String of 1 to 8 characters".
    fn bounded_mismatch(&self, id: NodeId, value: &Value, path: &PathLink<'_>) -> Problem {
        let mut expected = self.name(Some(id));
        let b = &self.model.node(id).bounds;
        let number = |n: &Option<serde_json::Number>| n.as_ref().map(ToString::to_string);
        let bounds: Vec<String> = [
            (&b.minimum, ">="),
            (&b.exclusive_minimum, ">"),
            (&b.maximum, "<="),
            (&b.exclusive_maximum, "<"),
        ]
        .iter()
        .filter_map(|(n, op)| number(n).map(|n| format!("{op} {n}")))
        .collect();
        if !bounds.is_empty() {
            expected = format!("{expected} {}", bounds.join(" and "));
        }
        match (number(&b.min_length), number(&b.max_length)) {
            (Some(min), Some(max)) => expected = format!("{expected} of {min} to {max} characters"),
            (Some(min), None) => expected = format!("{expected} of at least {min} characters"),
            (None, Some(max)) => expected = format!("{expected} of at most {max} characters"),
            (None, None) => {}
        }
        Problem::Mismatch {
            path: path.to_json_path(),
            expected,
            found: describe_value(value),
        }
    }
}

fn as_u64(n: &Option<serde_json::Number>) -> Option<u64> {
    n.as_ref().and_then(serde_json::Number::as_u64)
}

/// Whether a value of JSON type `t` (a `type` keyword's name) is `value`;
/// integers follow serde: `5.0` is not one.
pub(crate) fn type_matches(t: &str, value: &Value) -> bool {
    match (t, value) {
        ("null", Value::Null)
        | ("boolean", Value::Bool(_))
        | ("number", Value::Number(_))
        | ("string", Value::String(_))
        | ("array", Value::Array(_))
        | ("object", Value::Object(_)) => true,
        ("integer", Value::Number(n)) => n.is_i64() || n.is_u64(),
        _ => false,
    }
}

/// JSON equality where `1` and `1.0` are the same number.
fn same_json(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x == y || x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}
