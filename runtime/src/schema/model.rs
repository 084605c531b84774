//! The typed model of one JSON Schema ([`SchemaModel`]), built once, and the
//! limits every reader of a schema works within ([`Limits`], [`Budget`]).
//!
//! A schema becomes an arena of [`Node`]s, one per sub-schema, each holding its
//! keywords typed (`type` as [`Types`], `additionalProperties` as
//! [`Additional`], bounds as numbers) and every sub-schema as a [`NodeId`]. A
//! local `$ref` is resolved when the model is built, to the index of its target,
//! so a recursive type is a cycle of indices, and each node knows where its chain
//! of `$ref`s ends ([`SchemaModel::resolved`]). The model is built without
//! recursion (a work list), so no schema is too deep to read; the readers
//! (`check`, `name`, `coerce`, the plan checker's types) bound their own walks
//! with [`Limits`].
//!
//! A node keeps every keyword it has rather than one "kind": a schema written
//! by hand may say `type`, `enum` and `anyOf` at once, and validation applies
//! each of them.

use std::collections::HashMap;

use serde_json::{Number, Value};

/// Where a node is in its model's arena.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct NodeId(u32);

impl NodeId {
    /// The schema the model was built from.
    pub(crate) const ROOT: NodeId = NodeId(0);
}

/// A JSON Schema, read once: its nodes, with `$ref`s resolved to indices.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct SchemaModel {
    nodes: Vec<Node>,
}

/// What a sub-schema is, before its keywords: `false` admits nothing, and a
/// schema that is not an object (`true`, or anything else) admits anything.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Form {
    /// An object of keywords.
    #[default]
    Keywords,
    /// `false`.
    Never,
    /// `true`, or a value that is not a schema: no constraint.
    Anything,
}

/// The `type` keyword.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) enum Types {
    /// No `type`.
    #[default]
    Absent,
    /// `"type": "string"` (the name as written, known or not).
    One(String),
    /// `"type": ["string", "null"]`: the names in the list that are strings.
    Many(Vec<String>),
    /// A `type` that is neither a string nor a list.
    Other,
}

impl Types {
    /// The type names, as [`Types::names`], without allocating (coercion
    /// asks once per value).
    pub(crate) fn list(&self) -> &[String] {
        match self {
            Types::One(t) => std::slice::from_ref(t),
            Types::Many(ts) => ts,
            Types::Absent | Types::Other => &[],
        }
    }

    /// The type names: one, the list's, or none.
    pub(crate) fn names(&self) -> Vec<&str> {
        match self {
            Types::One(t) => vec![t.as_str()],
            Types::Many(ts) => ts.iter().map(String::as_str).collect(),
            Types::Absent | Types::Other => Vec::new(),
        }
    }
}

/// The `additionalProperties` keyword.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Additional {
    /// Not written.
    #[default]
    Absent,
    /// `false`: no field but the listed ones.
    False,
    /// A schema (an object) every other field must fit: a map's values.
    Schema(NodeId),
    /// `true`, or another value: any other field.
    Other,
}

/// A local `$ref`: what it says, and the node it points to (`None` when it
/// points nowhere).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Reference {
    pub(crate) text: String,
    pub(crate) target: Option<NodeId>,
}

impl Reference {
    /// The name of the definition: `#/$defs/Node` -> `Node`.
    pub(crate) fn defined_name(&self) -> Option<&str> {
        self.text
            .rsplit('/')
            .next()
            .filter(|n| !n.is_empty() && *n != "#")
    }
}

/// An object's listed fields, in order, with their schemas.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Properties {
    fields: Vec<(String, NodeId)>,
    /// Indices into `fields`, by name: a lookup is a binary search.
    by_name: Vec<u32>,
}

impl Properties {
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&str, NodeId)> {
        self.fields.iter().map(|(name, id)| (name.as_str(), *id))
    }

    pub(crate) fn names(&self) -> impl Iterator<Item = &str> {
        self.fields.iter().map(|(name, _)| name.as_str())
    }

    pub(crate) fn get(&self, name: &str) -> Option<NodeId> {
        self.by_name
            .binary_search_by(|&i| self.fields[i as usize].0.as_str().cmp(name))
            .ok()
            .map(|i| self.fields[self.by_name[i] as usize].1)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }
}

/// The numeric keywords, as written (a non-number is absent).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Bounds {
    pub(crate) minimum: Option<Number>,
    pub(crate) maximum: Option<Number>,
    pub(crate) exclusive_minimum: Option<Number>,
    pub(crate) exclusive_maximum: Option<Number>,
    pub(crate) min_length: Option<Number>,
    pub(crate) max_length: Option<Number>,
    pub(crate) min_items: Option<Number>,
    pub(crate) max_items: Option<Number>,
}

/// Keywords whose mere presence some reader asks about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Key {
    Ref = 1,
    AnyOf = 2,
    OneOf = 4,
    AllOf = 8,
    Type = 16,
    Properties = 32,
    Required = 64,
    AdditionalProperties = 128,
    Items = 256,
    PrefixItems = 512,
    Const = 1024,
    Enum = 2048,
}

const KEYS: [(&str, Key); 12] = [
    ("$ref", Key::Ref),
    ("anyOf", Key::AnyOf),
    ("oneOf", Key::OneOf),
    ("allOf", Key::AllOf),
    ("type", Key::Type),
    ("properties", Key::Properties),
    ("required", Key::Required),
    ("additionalProperties", Key::AdditionalProperties),
    ("items", Key::Items),
    ("prefixItems", Key::PrefixItems),
    ("const", Key::Const),
    ("enum", Key::Enum),
];

/// One sub-schema, its keywords typed. A keyword of the wrong JSON type is
/// absent (an `enum` that is not a list), as every reader treated it.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Node {
    pub(crate) form: Form,
    keys: u16,
    /// `$ref`, when a string.
    pub(crate) reference: Option<Reference>,
    /// Where the chain of `$ref`s from here ends (this node when it has none).
    resolved: Option<NodeId>,
    pub(crate) all_of: Option<Vec<NodeId>>,
    pub(crate) any_of: Option<Vec<NodeId>>,
    pub(crate) one_of: Option<Vec<NodeId>>,
    pub(crate) enum_values: Option<Vec<Value>>,
    pub(crate) constant: Option<Value>,
    pub(crate) types: Types,
    pub(crate) properties: Option<Properties>,
    /// The names in `required` (a list; names that are not strings dropped).
    pub(crate) required: Option<Vec<String>>,
    pub(crate) additional: Additional,
    pub(crate) items: Option<NodeId>,
    pub(crate) prefix_items: Option<Vec<NodeId>>,
    pub(crate) bounds: Bounds,
    pub(crate) description: Option<String>,
    pub(crate) format: Option<String>,
}

impl Node {
    /// Whether the schema has keyword `key`, whatever its value.
    pub(crate) fn has(&self, key: Key) -> bool {
        self.keys & key as u16 != 0
    }

    /// `{"type": "null"}` or `{"const": null}`: only `null`.
    pub(crate) fn is_null(&self) -> bool {
        matches!(&self.types, Types::One(t) if t == "null") || self.constant == Some(Value::Null)
    }

    /// Whether the `required` list names `name`.
    pub(crate) fn requires(&self, name: &str) -> bool {
        self.required
            .as_ref()
            .is_some_and(|r| r.iter().any(|n| n == name))
    }
}

impl SchemaModel {
    /// Reads `schema`, resolving its local `$ref`s against it.
    pub(crate) fn new(schema: &Value) -> SchemaModel {
        Builder::new(schema).build()
    }

    pub(crate) fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id.0 as usize]
    }

    /// Where `id`'s chain of `$ref`s ends (at most [`Limits::REF_CHAIN`] of them).
    pub(crate) fn resolved(&self, id: NodeId) -> NodeId {
        self.node(id).resolved.unwrap_or(id)
    }

    /// The node at the end of `id`'s chain of `$ref`s.
    pub(crate) fn target(&self, id: NodeId) -> &Node {
        self.node(self.resolved(id))
    }

    /// Whether a value of this schema may hold an object that no derived
    /// struct reads: a map (`additionalProperties` a schema or `true`),
    /// free-form JSON (`true`, `{}`, an object with no `properties`). A
    /// derived struct refuses a field given twice; those take the last of
    /// a key given twice, so a typed tool whose input has one has its
    /// argument text checked for that before it is read.
    pub(crate) fn has_free_objects(&self) -> bool {
        const SHAPED: [Key; 9] = [
            Key::Type,
            Key::Properties,
            Key::Ref,
            Key::AnyOf,
            Key::OneOf,
            Key::AllOf,
            Key::Enum,
            Key::Const,
            Key::Items,
        ];
        self.nodes.iter().any(|node| match node.form {
            Form::Never => false,
            Form::Anything => true,
            Form::Keywords => {
                let object = match &node.types {
                    Types::Absent => true,
                    types => types.list().iter().any(|t| t == "object"),
                };
                matches!(node.additional, Additional::Schema(_) | Additional::Other)
                    || (object && node.properties.is_none() && node.has(Key::Type))
                    || !SHAPED.iter().any(|&key| node.has(key))
            }
        })
    }
}

/// Builds a model: one node per JSON value read as a schema (a value reached
/// twice, by a `$ref` and in place, is one node), from a work list.
struct Builder<'j> {
    root: &'j Value,
    nodes: Vec<Node>,
    ids: HashMap<*const Value, NodeId>,
    pending: Vec<(&'j Value, NodeId)>,
}

impl<'j> Builder<'j> {
    fn new(root: &'j Value) -> Builder<'j> {
        Builder {
            root,
            nodes: Vec::new(),
            ids: HashMap::new(),
            pending: Vec::new(),
        }
    }

    fn build(mut self) -> SchemaModel {
        self.id(self.root);
        while let Some((schema, id)) = self.pending.pop() {
            let node = self.read(schema);
            self.nodes[id.0 as usize] = node;
        }
        let mut model = SchemaModel { nodes: self.nodes };
        let ends: Vec<Option<NodeId>> = (0..model.nodes.len())
            .map(|i| chain_end(&model, NodeId(i as u32)))
            .collect();
        for (node, end) in model.nodes.iter_mut().zip(ends) {
            node.resolved = end;
        }
        model
    }

    /// The node of `schema`, made (and queued to be read) on first sight.
    fn id(&mut self, schema: &'j Value) -> NodeId {
        let key: *const Value = schema;
        if let Some(&id) = self.ids.get(&key) {
            return id;
        }
        let id = NodeId(u32::try_from(self.nodes.len()).unwrap_or(u32::MAX));
        self.nodes.push(Node::default());
        self.ids.insert(key, id);
        self.pending.push((schema, id));
        id
    }

    fn ids(&mut self, schemas: Option<&'j Value>) -> Option<Vec<NodeId>> {
        let list = schemas?.as_array()?;
        Some(list.iter().map(|s| self.id(s)).collect())
    }

    fn read(&mut self, schema: &'j Value) -> Node {
        let Value::Object(keywords) = schema else {
            let form = if schema == &Value::Bool(false) {
                Form::Never
            } else {
                Form::Anything
            };
            return Node {
                form,
                ..Node::default()
            };
        };
        let keys = KEYS
            .iter()
            .filter(|(name, _)| keywords.contains_key(*name))
            .fold(0, |keys, (_, key)| keys | *key as u16);
        let reference = keywords.get("$ref").and_then(Value::as_str).map(|text| {
            let target = super::resolve(self.root, text).map(|t| self.id(t));
            Reference {
                text: text.to_owned(),
                target,
            }
        });
        let properties = keywords
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| {
                let fields: Vec<(String, NodeId)> = p
                    .iter()
                    .map(|(name, s)| (name.clone(), self.id(s)))
                    .collect();
                let mut by_name: Vec<u32> = (0..fields.len() as u32).collect();
                by_name.sort_by(|&a, &b| fields[a as usize].0.cmp(&fields[b as usize].0));
                Properties { fields, by_name }
            });
        let additional = match keywords.get("additionalProperties") {
            None => Additional::Absent,
            Some(Value::Bool(false)) => Additional::False,
            Some(values @ Value::Object(_)) => Additional::Schema(self.id(values)),
            Some(_) => Additional::Other,
        };
        let number = |key: &str| match keywords.get(key) {
            Some(Value::Number(n)) => Some(n.clone()),
            _ => None,
        };
        let text = |key: &str| keywords.get(key).and_then(Value::as_str).map(str::to_owned);
        Node {
            form: Form::Keywords,
            keys,
            reference,
            resolved: None,
            all_of: self.ids(keywords.get("allOf")),
            any_of: self.ids(keywords.get("anyOf")),
            one_of: self.ids(keywords.get("oneOf")),
            enum_values: keywords.get("enum").and_then(Value::as_array).cloned(),
            constant: keywords.get("const").cloned(),
            types: match keywords.get("type") {
                None => Types::Absent,
                Some(Value::String(t)) => Types::One(t.clone()),
                Some(Value::Array(ts)) => Types::Many(
                    ts.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect(),
                ),
                Some(_) => Types::Other,
            },
            properties,
            required: keywords.get("required").and_then(Value::as_array).map(|r| {
                r.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            }),
            additional,
            items: keywords.get("items").map(|items| self.id(items)),
            prefix_items: self.ids(keywords.get("prefixItems")),
            bounds: Bounds {
                minimum: number("minimum"),
                maximum: number("maximum"),
                exclusive_minimum: number("exclusiveMinimum"),
                exclusive_maximum: number("exclusiveMaximum"),
                min_length: number("minLength"),
                max_length: number("maxLength"),
                min_items: number("minItems"),
                max_items: number("maxItems"),
            },
            description: text("description"),
            format: text("format"),
        }
    }
}

/// Where the chain of `$ref`s from `id` ends, if it has any.
fn chain_end(model: &SchemaModel, id: NodeId) -> Option<NodeId> {
    let mut at = id;
    for _ in 0..Limits::REF_CHAIN {
        match model.node(at).reference.as_ref().and_then(|r| r.target) {
            Some(next) => at = next,
            None => break,
        }
    }
    (at != id).then_some(at)
}

/// How far each reader of a schema goes, defined once. The values are those
/// each reader has always had: they differ because what is cut differs (a
/// type written for a model, a value being checked).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Limits {
    /// How many nodes deep a walk goes.
    pub(crate) depth: usize,
    /// How many nodes a walk visits.
    pub(crate) nodes: usize,
}

impl Limits {
    /// Validation: deeper than any value serde_json parses (it stops at 128
    /// levels, and a level of a value is at most a few levels of the walk),
    /// so a value nested deeper is a problem, never passed unchecked; and a
    /// bound on the options (`anyOf`) tried, each of which is checked, so that
    /// hostile arguments against a schema of nested options cannot cost time
    /// exponential in their depth.
    pub(crate) const CHECK: Limits = Limits {
        depth: 512,
        nodes: 200_000,
    };
    /// λ-Tool names: past these, a name is cut short with `…`.
    pub(crate) const NAME: Limits = Limits {
        depth: 512,
        nodes: 2_000,
    };
    /// Coercion: deep enough for any real schema; deeper values are left as they are.
    pub(crate) const COERCE: Limits = Limits {
        depth: 64,
        nodes: usize::MAX,
    };
    /// The plan checker's types: past these, the rest is `Any`. They bound
    /// the work on large or recursive schemas.
    pub(crate) const TYPES: Limits = Limits {
        depth: 32,
        nodes: 1_000,
    };
    /// Gemini's inlined parameters: `$ref`s deeper are cut, and every one
    /// once the nodes are spent (inlining can grow a schema exponentially).
    pub(crate) const GEMINI: Limits = Limits {
        depth: 32,
        nodes: 10_000,
    };
    /// How many times Gemini expands one definition on one path.
    pub(crate) const GEMINI_REPEATS: usize = 2;
    /// How many `$ref`s one chain follows (`A` -> `B` -> ...).
    pub(crate) const REF_CHAIN: usize = 512;
    /// How many `$ref`s may be inlined inside one another when a type is
    /// written out (a λ-Tool name, an OpenAI strict schema).
    pub(crate) const INLINED: usize = 32;
}

/// Why a walk stopped: too deep, or too many nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Exceeded {
    Depth,
    Nodes,
}

/// A walk's budget against its [`Limits`]: nodes left, shared by the whole walk.
#[derive(Clone, Debug)]
pub(crate) struct Budget {
    limits: Limits,
    left: usize,
}

impl Budget {
    pub(crate) fn new(limits: Limits) -> Budget {
        Budget {
            limits,
            left: limits.nodes,
        }
    }

    /// Takes one node at `depth`, or says which limit stops it (then nothing is taken).
    pub(crate) fn enter(&mut self, depth: usize) -> Result<(), Exceeded> {
        self.allows(depth)?;
        self.take()
    }

    /// Whether a node at `depth` would be taken, taking none.
    pub(crate) fn allows(&self, depth: usize) -> Result<(), Exceeded> {
        if depth >= self.limits.depth {
            return Err(Exceeded::Depth);
        }
        if self.left == 0 {
            return Err(Exceeded::Nodes);
        }
        Ok(())
    }

    /// Takes one node, whatever the depth.
    pub(crate) fn take(&mut self) -> Result<(), Exceeded> {
        if self.left == 0 {
            return Err(Exceeded::Nodes);
        }
        self.left -= 1;
        Ok(())
    }

    pub(crate) fn limits(&self) -> Limits {
        self.limits
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn references_are_indices_and_recursion_ends() {
        let schema = json!({
            "$ref": "#/$defs/Node",
            "$defs": { "Node": { "type": "object", "properties": {
                "next": { "$ref": "#/$defs/Node" }, "x": { "$ref": "#/$defs/Missing" }
            } } }
        });
        let model = SchemaModel::new(&schema);
        let node = model.target(NodeId::ROOT);
        let properties = node.properties.as_ref().unwrap();
        let next = properties.get("next").unwrap();
        assert_eq!(model.resolved(next), model.resolved(NodeId::ROOT));
        let missing = model.node(properties.get("x").unwrap());
        assert_eq!(missing.reference.as_ref().unwrap().target, None);
        assert_eq!(
            missing.reference.as_ref().unwrap().defined_name(),
            Some("Missing")
        );
        assert_eq!(properties.names().collect::<Vec<_>>(), ["next", "x"]);
    }

    #[test]
    fn deep_schemas_build_without_recursion() {
        let mut schema = json!({"type": "integer"});
        for _ in 0..500 {
            schema = json!({"type": "array", "items": schema});
        }
        assert_eq!(SchemaModel::new(&schema).nodes.len(), 501);
    }

    #[test]
    fn cyclic_reference_chains_stop() {
        let schema = json!({"$ref": "#/$defs/A", "$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/A"}}});
        let model = SchemaModel::new(&schema);
        assert!(model.target(NodeId::ROOT).reference.is_some());
    }
}
