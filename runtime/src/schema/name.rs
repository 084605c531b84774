//! λ-Tool notation: how it is written ([`notation`], shared by every type that
//! prints itself in it), and the names of schemas ([`Namer`]).

use std::fmt::{self, Display, Write};

use super::model::{Additional, Budget, Form, Limits, NodeId, SchemaModel, Types};

/// The pieces of λ-Tool notation, written in one place: schema names here,
/// the plan checker's types (`plan::check::Ty`) and plan annotations
/// (`plan::ir::Type`) are written with them.
pub(crate) mod notation {
    use super::*;

    pub(crate) const ANY: &str = "Any";
    pub(crate) const NOTHING: &str = "Nothing";
    pub(crate) const UNIT: &str = "Unit";
    pub(crate) const BOOL: &str = "Bool";
    pub(crate) const INT: &str = "Int";
    pub(crate) const FLOAT: &str = "Float";
    pub(crate) const STRING: &str = "String";
    /// What a cut name ends with.
    pub(crate) const CUT: &str = "…";

    /// `[T]`.
    pub(crate) fn list(f: &mut impl Write, of: impl Display) -> fmt::Result {
        write!(f, "[{of}]")
    }

    /// `T?`.
    pub(crate) fn nullable(f: &mut impl Write, of: impl Display) -> fmt::Result {
        write!(f, "{of}?")
    }

    /// `(A, B)`.
    pub(crate) fn tuple<T: Display>(
        f: &mut impl Write,
        elements: impl IntoIterator<Item = T>,
    ) -> fmt::Result {
        f.write_char('(')?;
        separated(f, elements)?;
        f.write_char(')')
    }

    /// `{a: T, b?: U}`, and `, ..` (or `..` alone) when the record is open.
    /// Each field is its name as it is to be written, whether it is
    /// required, and its type.
    pub(crate) fn record<N: Display, T: Display>(
        f: &mut impl Write,
        fields: impl IntoIterator<Item = (N, bool, T)>,
        open: bool,
    ) -> fmt::Result {
        f.write_char('{')?;
        let mut any = false;
        for (i, (name, required, ty)) in fields.into_iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            any = true;
            let mark = if required { "" } else { "?" };
            write!(f, "{name}{mark}: {ty}")?;
        }
        if open {
            f.write_str(if any { ", .." } else { ".." })?;
        }
        f.write_char('}')
    }

    fn separated<T: Display>(
        f: &mut impl Write,
        items: impl IntoIterator<Item = T>,
    ) -> fmt::Result {
        for (i, item) in items.into_iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{item}")?;
        }
        Ok(())
    }
}

/// Writes schemas in λ-Tool notation. A `$ref` is inlined, except inside
/// itself: a recursive type is written once and named where it recurs
/// (`{name: String, children: [Folder]}`).
pub(crate) struct Namer<'m> {
    model: &'m SchemaModel,
    /// The `$ref`s being inlined, outermost first.
    inlining: Vec<&'m str>,
    budget: Budget,
    depth: usize,
}

impl<'m> Namer<'m> {
    pub(crate) fn new(model: &'m SchemaModel) -> Namer<'m> {
        Namer {
            model,
            inlining: Vec::new(),
            budget: Budget::new(Limits::NAME),
            depth: 0,
        }
    }

    pub(crate) fn name(&mut self, id: NodeId) -> String {
        if self.budget.enter(self.depth).is_err() {
            return notation::CUT.into();
        }
        self.depth += 1;
        let name = self.name_inner(id);
        self.depth -= 1;
        name
    }

    fn name_inner(&mut self, id: NodeId) -> String {
        let model = self.model;
        let node = model.node(id);
        if let Some(reference) = &node.reference {
            let defined = reference.defined_name();
            // A type inside itself (a recursive type) is named, not unfolded again.
            if self.inlining.contains(&reference.text.as_str())
                || self.inlining.len() >= Limits::INLINED
            {
                return defined.unwrap_or("Self").to_owned();
            }
            let Some(target) = reference.target else {
                return defined.unwrap_or(notation::ANY).to_owned();
            };
            self.inlining.push(&reference.text);
            let name = self.name(target);
            self.inlining.pop();
            return name;
        }
        match node.form {
            Form::Keywords => {}
            Form::Never => return "Never".into(),
            Form::Anything => return notation::ANY.into(),
        }
        if let Some(constant) = &node.constant {
            return constant.to_string();
        }
        if let Some(values) = &node.enum_values {
            return values
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(" | ");
        }
        if let Some(options) = node.any_of.as_ref().or(node.one_of.as_ref()) {
            let (nulls, others): (Vec<NodeId>, Vec<NodeId>) =
                options.iter().partition(|&&o| model.target(o).is_null());
            let names: Vec<String> = others.iter().map(|&o| self.name(o)).collect();
            let joined = if names.len() == 1 {
                names[0].clone()
            } else {
                names
                    .iter()
                    .map(|n| {
                        if n.contains(' ') && !n.starts_with('{') {
                            format!("({n})")
                        } else {
                            n.clone()
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(" | ")
            };
            return if nulls.is_empty() || names.is_empty() {
                if names.is_empty() {
                    notation::UNIT.into()
                } else {
                    joined
                }
            } else if names.len() == 1 && !joined.contains(" | ") {
                nullable(&joined)
            } else {
                nullable(&format!("({joined})"))
            };
        }
        if let Some([only]) = node.all_of.as_deref() {
            return self.name(*only);
        }
        let (types, nullable_types): (Vec<&str>, bool) = match &node.types {
            Types::One(t) => (vec![t.as_str()], false),
            Types::Many(ts) => {
                let nullable = ts.iter().any(|t| t == "null") && ts.len() > 1;
                (
                    ts.iter()
                        .map(String::as_str)
                        .filter(|t| !nullable || *t != "null")
                        .collect(),
                    nullable,
                )
            }
            _ if node.has(super::model::Key::Properties) => (vec!["object"], false),
            _ => (vec![], false),
        };
        let names: Vec<String> = types.iter().map(|t| self.name_of_type(t, id)).collect();
        let joined = match names.len() {
            0 => notation::ANY.to_owned(),
            1 => names[0].clone(),
            _ => names.join(" | "),
        };
        match (nullable_types, names.len()) {
            (false, _) => joined,
            (true, 1) => nullable(&joined),
            (true, _) => nullable(&format!("({joined})")),
        }
    }

    fn name_of_type(&mut self, t: &str, id: NodeId) -> String {
        let node = self.model.node(id);
        let mut out = String::new();
        match t {
            "string" => notation::STRING.into(),
            "integer" => notation::INT.into(),
            "number" => notation::FLOAT.into(),
            "boolean" => notation::BOOL.into(),
            "null" => notation::UNIT.into(),
            "array" => {
                if let Some(prefix) = &node.prefix_items {
                    let names: Vec<String> = prefix.iter().map(|&p| self.name(p)).collect();
                    let _ = notation::tuple(&mut out, names);
                } else {
                    let item = node
                        .items
                        .map_or_else(|| notation::ANY.to_owned(), |items| self.name(items));
                    let _ = notation::list(&mut out, item);
                }
                out
            }
            "object" => match &node.properties {
                Some(properties) if !properties.is_empty() => {
                    let fields: Vec<(&str, bool, String)> = properties
                        .iter()
                        .map(|(name, schema)| {
                            let ty = self.name(schema);
                            if node.requires(name) {
                                (name, true, ty)
                            } else {
                                // `note?: String`, not `note?: String?`: absent and null mean the same.
                                let ty = ty.strip_suffix('?').unwrap_or(&ty).to_owned();
                                (name, false, ty)
                            }
                        })
                        .collect();
                    let _ = notation::record(&mut out, fields, false);
                    out
                }
                _ => match node.additional {
                    Additional::Schema(values) => format!("Map[String, {}]", self.name(values)),
                    _ => "{}".into(),
                },
            },
            other => other.to_owned(),
        }
    }
}

fn nullable(of: &str) -> String {
    let mut out = String::new();
    let _ = notation::nullable(&mut out, of);
    out
}
