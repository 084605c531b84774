//! The schema a model is shown and the deserializer that reads its answer must
//! never disagree.
//!
//! Arguments are generated as Rust values and serialized by serde, the way a
//! well-behaved model would write them; then mutated the ways a model goes
//! wrong (a field left out, a wrong type, an unknown key, a wrong enum
//! variant, `null` for a field). The judge of the schema is the `jsonschema`
//! crate, the judge of the deserializer is `Toolbox::call`, the real
//! dispatcher. For each value:
//!
//! - the canonical schema (what Anthropic and MCP get, and OpenAI without
//!   `$schema`) accepts it exactly when the dispatcher does;
//! - OpenAI's strict schema accepts only what the dispatcher accepts, and
//!   accepts every well-formed call written with explicit `null`s (strict mode
//!   requires every key; an absent `Option` becomes `null`);
//! - Gemini's schema (read with `nullable: true` as "or null") accepts all the
//!   dispatcher accepts: it is looser (no `additionalProperties`, recursion
//!   cut), never tighter.
//!
//! Known gaps, kept out of the generators and pinned by `known_gaps` below:
//! JSON Schema counts `5.0` as an integer, serde does not; serde reads a nested
//! struct from a JSON array (`["1 Main St", "Lima", null]`), the schema says
//! object. (At the root the dispatcher refuses a non-object itself.)

use futures::executor::block_on;
use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde::Serialize;
use serde_json::{json, Map, Value};
use typed_tools::{CatalogFormat, ToolError, Toolbox};

mod support;

use support::domain::{
    Address, CountFolders, Delivery, Folder, LookupAccount, Payment, Priority, ShipOrder,
    UpdateAddress,
};

// ---------------------------------------------------------------- the tools

fn toolbox() -> Toolbox {
    Toolbox::builder()
        .tool(LookupAccount)
        .tool(UpdateAddress)
        .tool(ShipOrder)
        .tool(CountFolders)
        .build()
        .expect("the tools build")
}

// ---------------------------------------------------------------- generated calls

/// A call as Rust values, before it is JSON.
#[derive(Clone, Debug)]
enum Call {
    Lookup {
        id: String,
        fields: Option<Vec<String>>,
    },
    Update {
        account_id: String,
        address: Address,
        priority: Priority,
        note: Option<String>,
    },
    Ship {
        order_id: u32,
        delivery: Delivery,
        payment: Payment,
        gift: Option<bool>,
    },
    Count {
        root: Folder,
        max_depth: Option<u8>,
    },
}

impl Call {
    fn tool(&self) -> &'static str {
        match self {
            Call::Lookup { .. } => "lookup_account",
            Call::Update { .. } => "update_address",
            Call::Ship { .. } => "ship_order",
            Call::Count { .. } => "count_folders",
        }
    }

    /// The arguments object; an absent `Option` parameter left out, or
    /// written as `null` when `explicit`. (Nested `Option` fields are always
    /// written, as serde writes them: `null`.)
    fn args(&self, explicit: bool) -> Value {
        let mut args = Map::new();
        let mut put = |name: &str, value: Value| {
            if explicit || !value.is_null() {
                args.insert(name.to_owned(), value);
            }
        };
        match self {
            Call::Lookup { id, fields } => {
                put("id", json(id));
                put("fields", json(fields));
            }
            Call::Update {
                account_id,
                address,
                priority,
                note,
            } => {
                put("account_id", json(account_id));
                put("address", json(address));
                put("priority", json(priority));
                put("note", json(note));
            }
            Call::Ship {
                order_id,
                delivery,
                payment,
                gift,
            } => {
                put("order_id", json(order_id));
                put("delivery", json(delivery));
                put("payment", json(payment));
                put("gift", json(gift));
            }
            Call::Count { root, max_depth } => {
                put("root", json(root));
                put("max_depth", json(max_depth));
            }
        }
        Value::Object(args)
    }
}

/// A value as serde writes it.
fn json<T: Serialize>(value: &T) -> Value {
    serde_json::to_value(value).expect("serializable")
}

fn text() -> impl Strategy<Value = String> {
    "[a-z0-9 _]{0,6}"
}

fn address() -> impl Strategy<Value = Address> {
    (text(), text(), option::of(text())).prop_map(|(street, city, postcode)| Address {
        street,
        city,
        postcode,
    })
}

fn priority() -> impl Strategy<Value = Priority> {
    prop_oneof![
        Just(Priority::Low),
        Just(Priority::Normal),
        Just(Priority::High)
    ]
}

fn delivery() -> impl Strategy<Value = Delivery> {
    prop_oneof![
        Just(Delivery::Pickup),
        (address(), any::<bool>())
            .prop_map(|(address, express)| Delivery::Courier { address, express }),
        text().prop_map(Delivery::Locker),
    ]
}

fn payment() -> impl Strategy<Value = Payment> {
    prop_oneof![
        text().prop_map(|last4| Payment::Card { last4 }),
        any::<u8>().prop_map(|days| Payment::Invoice { days }),
    ]
}

fn folder() -> impl Strategy<Value = Folder> {
    let leaf = text().prop_map(|name| Folder {
        name,
        children: Vec::new(),
        link: None,
    });
    leaf.prop_recursive(4, 16, 3, |inner| {
        (
            text(),
            vec(inner.clone(), 0..3),
            option::of(inner.prop_map(Box::new)),
        )
            .prop_map(|(name, children, link)| Folder {
                name,
                children,
                link,
            })
    })
}

fn call() -> impl Strategy<Value = Call> {
    prop_oneof![
        (text(), option::of(vec(text(), 0..3)))
            .prop_map(|(id, fields)| Call::Lookup { id, fields }),
        (text(), address(), priority(), option::of(text())).prop_map(
            |(account_id, address, priority, note)| Call::Update {
                account_id,
                address,
                priority,
                note,
            }
        ),
        (
            any::<u32>(),
            delivery(),
            payment(),
            option::of(any::<bool>())
        )
            .prop_map(|(order_id, delivery, payment, gift)| Call::Ship {
                order_id,
                delivery,
                payment,
                gift,
            }),
        (folder(), option::of(any::<u8>()))
            .prop_map(|(root, max_depth)| Call::Count { root, max_depth }),
    ]
}

// ---------------------------------------------------------------- mutations

/// The ways a model's arguments go wrong.
#[derive(Clone, Copy, Debug)]
enum Mutation {
    /// A key removed from some object (a required field, or an optional one).
    RemoveField,
    /// A value replaced by one of another JSON type.
    WrongType,
    /// A key the type does not have, added to some object.
    UnknownKey,
    /// A string replaced by one no enum has.
    WrongVariant,
    /// A value replaced by `null`.
    Null,
}

type Path = Vec<PathStep>;

#[derive(Clone, Debug)]
enum PathStep {
    Key(String),
    Index(usize),
}

/// Every value inside `value` with its path, the root first.
fn paths(value: &Value) -> Vec<(Path, &Value)> {
    fn walk<'v>(path: Path, value: &'v Value, out: &mut Vec<(Path, &'v Value)>) {
        out.push((path.clone(), value));
        match value {
            Value::Object(fields) => {
                for (key, child) in fields {
                    let mut deeper = path.clone();
                    deeper.push(PathStep::Key(key.clone()));
                    walk(deeper, child, out);
                }
            }
            Value::Array(items) => {
                for (i, child) in items.iter().enumerate() {
                    let mut deeper = path.clone();
                    deeper.push(PathStep::Index(i));
                    walk(deeper, child, out);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(Vec::new(), value, &mut out);
    out
}

fn at_mut<'v>(value: &'v mut Value, path: &[PathStep]) -> &'v mut Value {
    path.iter().fold(value, |value, step| match step {
        PathStep::Key(key) => &mut value[key.as_str()],
        PathStep::Index(i) => &mut value[*i],
    })
}

/// `value` with `mutation` applied at the `pick`-th place it can be, or
/// `None` when there is no such place.
fn mutate(value: &Value, mutation: Mutation, pick: usize) -> Option<Value> {
    let all = paths(value);
    let places: Vec<(Path, &Value)> = match mutation {
        Mutation::RemoveField | Mutation::UnknownKey => {
            all.into_iter().filter(|(_, v)| v.is_object()).collect()
        }
        Mutation::WrongVariant => all.into_iter().filter(|(_, v)| v.is_string()).collect(),
        // Not the root: an arguments value that is not an object is a
        // different story (see `known_gaps`).
        Mutation::WrongType | Mutation::Null => {
            all.into_iter().filter(|(p, _)| !p.is_empty()).collect()
        }
    };
    if places.is_empty() {
        return None;
    }
    let (path, target) = places[pick % places.len()].clone();
    let mut out = value.clone();
    match mutation {
        Mutation::RemoveField => {
            let fields = target.as_object()?;
            let key = fields
                .keys()
                .nth(pick / places.len() % fields.len().max(1))?
                .clone();
            at_mut(&mut out, &path).as_object_mut()?.remove(&key);
        }
        Mutation::UnknownKey => {
            at_mut(&mut out, &path)
                .as_object_mut()?
                .insert("unexpected".into(), json!(1));
        }
        Mutation::WrongVariant => *at_mut(&mut out, &path) = json!("no_such_variant"),
        Mutation::Null => *at_mut(&mut out, &path) = Value::Null,
        Mutation::WrongType => {
            *at_mut(&mut out, &path) = match target {
                Value::String(_) => json!(7),
                Value::Number(_) => json!("7"),
                Value::Bool(_) => json!("yes"),
                Value::Null => json!({ "a": 1 }),
                Value::Array(_) => json!({ "a": 1 }),
                Value::Object(_) => json!(7),
            }
        }
    }
    Some(out)
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        Just(Mutation::RemoveField),
        Just(Mutation::WrongType),
        Just(Mutation::UnknownKey),
        Just(Mutation::WrongVariant),
        Just(Mutation::Null),
    ]
}

// ---------------------------------------------------------------- the judges

/// One tool's three schemas, compiled once.
struct Judges {
    canonical: jsonschema::Validator,
    strict: jsonschema::Validator,
    gemini: jsonschema::Validator,
}

/// Gemini's `nullable: true` in JSON Schema terms: the schema, or `null`.
fn gemini_as_json_schema(schema: &Value) -> Value {
    match schema {
        Value::Object(fields) => {
            let mut out: Map<String, Value> = fields
                .iter()
                .filter(|(k, _)| *k != "nullable")
                .map(|(k, v)| {
                    let v = match k.as_str() {
                        "properties" => Value::Object(
                            v.as_object()
                                .into_iter()
                                .flatten()
                                .map(|(n, s)| (n.clone(), gemini_as_json_schema(s)))
                                .collect(),
                        ),
                        "items" => gemini_as_json_schema(v),
                        "anyOf" => Value::Array(
                            v.as_array()
                                .into_iter()
                                .flatten()
                                .map(gemini_as_json_schema)
                                .collect(),
                        ),
                        _ => v.clone(),
                    };
                    (k.clone(), v)
                })
                .collect();
            if fields.get("nullable") == Some(&Value::Bool(true)) {
                out = Map::from_iter([(
                    "anyOf".to_owned(),
                    json!([Value::Object(out), { "type": "null" }]),
                )]);
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

fn judges(toolbox: &Toolbox) -> Vec<(String, Judges)> {
    let strict = toolbox
        .catalog(CatalogFormat::OpenAiResponsesStrict)
        .to_json();
    let gemini = toolbox.catalog(CatalogFormat::Gemini).to_json();
    toolbox
        .specs()
        .enumerate()
        .map(|(i, spec)| {
            assert_eq!(strict[i]["strict"], true, "{} is strict", spec.name());
            let compile = |schema: &Value| {
                jsonschema::validator_for(schema).unwrap_or_else(|e| panic!("{}: {e}", spec.name()))
            };
            let gemini_parameters =
                gemini_as_json_schema(&gemini["functionDeclarations"][i]["parameters"]);
            let judges = Judges {
                canonical: compile(spec.input_schema()),
                strict: compile(&strict[i]["parameters"]),
                gemini: compile(&gemini_parameters),
            };
            (spec.name().to_owned(), judges)
        })
        .collect()
}

/// The dispatcher's verdict: did the arguments deserialize?
fn deserializes(toolbox: &Toolbox, tool: &str, args: &Value) -> bool {
    match block_on(toolbox.call(tool, &args.to_string())) {
        Ok(_) => true,
        Err(ToolError::Deserialization { .. } | ToolError::InvalidArgs { .. }) => false,
        Err(other) => panic!("{tool}: {other}"),
    }
}

/// Every rule of the module docs, for one value.
fn agree(
    toolbox: &Toolbox,
    judges: &Judges,
    tool: &str,
    args: &Value,
) -> Result<(), TestCaseError> {
    let accepted = deserializes(toolbox, tool, args);
    let canonical = judges.canonical.is_valid(args);
    prop_assert_eq!(
        canonical,
        accepted,
        "{}: schema says {}, deserializer says {}, for {}",
        tool,
        canonical,
        accepted,
        args
    );
    if judges.strict.is_valid(args) {
        prop_assert!(
            accepted,
            "{}: the strict schema takes what serde refuses: {}",
            tool,
            args
        );
    }
    if accepted {
        prop_assert!(
            judges.gemini.is_valid(args),
            "{}: Gemini's schema refuses {}",
            tool,
            args
        );
    }
    Ok(())
}

fn runner() -> TestRunner {
    TestRunner::new(Config {
        cases: 512,
        failure_persistence: None,
        ..Config::default()
    })
}

fn judges_for<'j>(judges: &'j [(String, Judges)], tool: &str) -> &'j Judges {
    &judges
        .iter()
        .find(|(name, _)| name == tool)
        .expect("a judge")
        .1
}

// ---------------------------------------------------------------- the properties

/// Well-formed calls: every schema and the deserializer accept them, with
/// absent optionals left out or written as `null`; the strict schema accepts
/// the explicit form.
#[test]
fn well_formed_calls_are_accepted_everywhere() {
    let toolbox = toolbox();
    let judges = judges(&toolbox);
    runner()
        .run(&call(), |call| {
            let judge = judges_for(&judges, call.tool());
            for explicit in [false, true] {
                let args = call.args(explicit);
                prop_assert!(deserializes(&toolbox, call.tool(), &args), "{}", args);
                agree(&toolbox, judge, call.tool(), &args)?;
            }
            let explicit = call.args(true);
            prop_assert!(
                judge.strict.is_valid(&explicit),
                "strict refuses {}",
                explicit
            );
            Ok(())
        })
        .unwrap();
}

/// Mutated calls: the canonical schema and the deserializer give the same
/// verdict, the strict schema is never looser than the deserializer, Gemini's
/// never tighter.
#[test]
fn mutated_calls_get_one_verdict() {
    let toolbox = toolbox();
    let judges = judges(&toolbox);
    let strategy = (
        call(),
        any::<bool>(),
        mutation(),
        any::<usize>(),
        mutation(),
        any::<usize>(),
    );
    runner()
        .run(
            &strategy,
            |(call, explicit, first, at, second, at_second)| {
                let judge = judges_for(&judges, call.tool());
                let Some(once) = mutate(&call.args(explicit), first, at) else {
                    return Ok(());
                };
                agree(&toolbox, judge, call.tool(), &once)?;
                if let Some(twice) = mutate(&once, second, at_second) {
                    agree(&toolbox, judge, call.tool(), &twice)?;
                }
                Ok(())
            },
        )
        .unwrap();
}

/// Each mutation, aimed by hand, is one the schema and serde both reject, so
/// the properties above are not passing on mutations that change nothing.
#[test]
fn aimed_mutations_are_rejected_by_both() {
    let toolbox = toolbox();
    let judges = judges(&toolbox);
    let call = Call::Ship {
        order_id: 7,
        delivery: Delivery::Courier {
            address: Address {
                street: "1 Main St".into(),
                city: "Lima".into(),
                postcode: None,
            },
            express: true,
        },
        payment: Payment::Invoice { days: 30 },
        gift: None,
    };
    let args = call.args(false);
    let judge = judges_for(&judges, "ship_order");
    let wrong = [
        (
            "a required field removed",
            json!({ "order_id": 7, "payment": args["payment"] }),
        ),
        (
            "a wrong type",
            json!({ "order_id": "7", "delivery": "pickup", "payment": args["payment"] }),
        ),
        (
            "an unknown key",
            json!({ "order_id": 7, "delivery": "pickup", "payment": args["payment"], "rush": true }),
        ),
        (
            "an unknown key in a nested struct",
            json!({ "order_id": 7, "payment": args["payment"], "delivery": { "courier": {
                "express": true,
                "address": { "street": "a", "city": "b", "floor": 3 }
            } } }),
        ),
        (
            "a wrong enum variant",
            json!({ "order_id": 7, "delivery": "drone", "payment": args["payment"] }),
        ),
        (
            "a wrong tag",
            json!({ "order_id": 7, "delivery": "pickup", "payment": { "method": "cash" } }),
        ),
        (
            "null for a required field",
            json!({ "order_id": null, "delivery": "pickup", "payment": args["payment"] }),
        ),
        (
            "out of range",
            json!({ "order_id": 7, "delivery": "pickup", "payment": { "method": "invoice", "days": 256 } }),
        ),
    ];
    assert!(deserializes(&toolbox, "ship_order", &args));
    for (what, value) in wrong {
        assert!(
            !deserializes(&toolbox, "ship_order", &value),
            "serde takes {what}"
        );
        assert!(!judge.canonical.is_valid(&value), "the schema takes {what}");
        assert!(
            !judge.strict.is_valid(&value),
            "the strict schema takes {what}"
        );
    }
    // `null` for an `Option` and a key left out are fine, except in strict
    // mode, which wants every key.
    let absent = json!({ "order_id": 7, "delivery": "pickup", "payment": args["payment"] });
    let null =
        json!({ "order_id": 7, "delivery": "pickup", "payment": args["payment"], "gift": null });
    for value in [&absent, &null] {
        assert!(deserializes(&toolbox, "ship_order", value));
        assert!(judge.canonical.is_valid(value));
        assert!(judge.gemini.is_valid(value));
    }
    assert!(!judge.strict.is_valid(&absent));
    assert!(judge.strict.is_valid(&null));
}

/// The disagreements known and kept out of the generators, pinned so that a
/// change on either side shows here.
#[test]
fn known_gaps() {
    let toolbox = toolbox();
    let judges = judges(&toolbox);
    // JSON Schema: "5.0" is an integer (a number with a zero fractional part);
    // serde_json will not read it into a `u32`.
    let float = json!({ "order_id": 5.0, "delivery": "pickup", "payment": { "method": "card", "last4": "1234" } });
    assert!(judges_for(&judges, "ship_order").canonical.is_valid(&float));
    assert!(!deserializes(&toolbox, "ship_order", &float));
    // serde derives read a struct from a sequence of its fields in order. At
    // the root the dispatcher refuses anything but an object, as the schema does...
    let sequence = json!(["cust_1", null]);
    assert!(!judges_for(&judges, "lookup_account")
        .canonical
        .is_valid(&sequence));
    assert!(!deserializes(&toolbox, "lookup_account", &sequence));
    // ...but a nested struct is still read from an array by the user's own derive.
    let nested = json!({
        "order_id": 5,
        "delivery": { "courier": { "address": ["1 Main St", "Lima", null], "express": true } },
        "payment": { "method": "card", "last4": "1234" }
    });
    assert!(!judges_for(&judges, "ship_order")
        .canonical
        .is_valid(&nested));
    assert!(deserializes(&toolbox, "ship_order", &nested));
}
