//! A tool's schema, read as a checker type: from the schema's model
//! ([`SchemaModel`]), which resolved its `$ref`s once.

use super::{join, literal_ty, FieldTy, RecordTy, Ty};
use crate::schema::model::{Additional, Budget, Form, Key, Limits, Node, Types};
use crate::schema::{NodeId, SchemaModel};

/// Which way a schema is read: what a tool accepts, or what it gives.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(in crate::plan::check) enum Side {
    /// An input record without `additionalProperties: false` ignores unknown
    /// fields; a JSON number may be given an Int.
    Input,
    /// A typed tool's output record has exactly its properties (schemars
    /// writes `additionalProperties` only for maps and flattened maps); a
    /// `number` may come back as an integer (a run-time tool's JSON), so it
    /// is `Any`.
    Output,
}

/// The type of a model's whole schema; `$ref` cycles become `Any` where they
/// recur, and past [`Limits::TYPES`] (nodes, depth) the rest is `Any`.
pub(in crate::plan::check) fn read(model: &SchemaModel, side: Side) -> Ty {
    Walk {
        model,
        side,
        refs: Vec::new(),
        budget: Budget::new(Limits::TYPES),
    }
    .at_depth(NodeId::ROOT, 0)
}

struct Walk<'m> {
    model: &'m SchemaModel,
    side: Side,
    refs: Vec<&'m str>,
    budget: Budget,
}

/// Whether a schema node combines `$ref`/`anyOf`/`oneOf`/`allOf` with
/// keywords of its own that constrain the value.
fn mixes_combinator_and_shape(node: &Node) -> bool {
    let has = |keys: &[Key]| keys.iter().any(|k| node.has(*k));
    has(&[Key::Ref, Key::AnyOf, Key::OneOf, Key::AllOf])
        && has(&[
            Key::Type,
            Key::Properties,
            Key::Required,
            Key::AdditionalProperties,
            Key::Items,
            Key::PrefixItems,
            Key::Const,
            Key::Enum,
        ])
}

fn join_all(tys: impl IntoIterator<Item = Ty>) -> Ty {
    tys.into_iter()
        .reduce(|a, b| join(&a, &b))
        .unwrap_or(Ty::Any)
}

impl<'m> Walk<'m> {
    fn at_depth(&mut self, id: NodeId, depth: usize) -> Ty {
        if self.budget.enter(depth).is_err() {
            return Ty::Any;
        }
        let d = depth + 1;
        let model = self.model;
        let node = model.node(id);
        if mixes_combinator_and_shape(node) {
            // `{properties: .., oneOf: [..]}` (a flattened enum) or `{$ref: ..,
            // properties: ..}` (a tagged newtype variant): an output has the
            // fields listed (and a `$ref`'d record's), and maybe more, which
            // cannot be read; anything else is not known.
            if self.side == Side::Output && node.properties.is_some() {
                return self.listed_fields(node, d);
            }
            return Ty::Any;
        }
        if let Some(reference) = &node.reference {
            if self.refs.contains(&reference.text.as_str()) {
                return Ty::Any;
            }
            let Some(target) = reference.target else {
                return Ty::Any;
            };
            self.refs.push(&reference.text);
            let ty = self.at_depth(target, d);
            self.refs.pop();
            return ty;
        }
        if node.form != Form::Keywords {
            return Ty::Any;
        }
        if let Some(constant) = &node.constant {
            return literal_ty(constant);
        }
        if let Some(values) = &node.enum_values {
            return join_all(values.iter().map(literal_ty));
        }
        if let Some(options) = node.any_of.as_ref().or(node.one_of.as_ref()) {
            let tys: Vec<Ty> = options.iter().map(|&o| self.at_depth(o, d)).collect();
            return join_all(tys);
        }
        if let Some(all) = &node.all_of {
            return match all.as_slice() {
                [only] => self.at_depth(*only, d),
                _ => Ty::Any,
            };
        }
        let types: Vec<&str> = match &node.types {
            Types::One(_) | Types::Many(_) => node.types.names(),
            Types::Absent if node.has(Key::Properties) => vec!["object"],
            Types::Absent | Types::Other => return Ty::Any,
        };
        let tys: Vec<Ty> = types.iter().map(|t| self.of_type(t, node, d)).collect();
        join_all(tys)
    }

    /// The fields an output beside a combinator surely has: its own listed
    /// ones, and those of the record its `$ref` names; open, since a
    /// variant may add more.
    fn listed_fields(&mut self, node: &'m Node, d: usize) -> Ty {
        let Ty::Record(mut record) = self.of_type("object", node, d) else {
            return Ty::Any;
        };
        record.open = true;
        if let Some(reference) = &node.reference {
            if let (Some(target), false) = (
                reference.target,
                self.refs.contains(&reference.text.as_str()),
            ) {
                self.refs.push(&reference.text);
                let referenced = self.at_depth(target, d);
                self.refs.pop();
                if let Ty::Record(other) = referenced {
                    for field in other.fields {
                        if record.field(&field.name).is_none() {
                            record.fields.push(field);
                        }
                    }
                }
            }
        }
        Ty::Record(record)
    }

    fn of_type(&mut self, t: &str, node: &'m Node, d: usize) -> Ty {
        match t {
            "string" => Ty::String,
            "integer" => Ty::Int,
            // serde writes an `f32`/`f64` (schemars: `format: double`) as a Float always.
            "number"
                if self.side == Side::Input
                    || matches!(node.format.as_deref(), Some("double" | "float")) =>
            {
                Ty::Float
            }
            "boolean" => Ty::Bool,
            "null" => Ty::Unit,
            "array" if !node.has(Key::PrefixItems) => match node.items {
                Some(items) => Ty::List(Box::new(self.at_depth(items, d))),
                None => Ty::List(Box::new(Ty::Any)),
            },
            "object" => {
                let Some(properties) = &node.properties else {
                    return Ty::Any;
                };
                let fields = properties
                    .iter()
                    .map(|(name, schema)| FieldTy {
                        name: name.to_owned(),
                        ty: self.at_depth(schema, d),
                        required: node.requires(name),
                    })
                    .collect();
                let open = match (self.side, node.additional) {
                    (_, Additional::False) => false,
                    (Side::Input, _) => true,
                    (Side::Output, Additional::Absent) => false,
                    (Side::Output, _) => true,
                };
                Ty::Record(RecordTy { fields, open })
            }
            _ => Ty::Any,
        }
    }
}
