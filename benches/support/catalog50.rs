//! A toolbox shaped like a real API's, of up to 50 run-time tools (ten
//! resources, five verbs each: `get_`, `list_`, `create_`, `update_`,
//! `cancel_`), and plans of a given size over it: shared by
//! `benches/plan_check.rs` (parse + check against a 50-tool catalog) and
//! `tests/plan_author.rs` (the prompt's size for 10 and 50 tools).

// Each crate that includes this file uses a part of it.
#![allow(dead_code)]

use serde_json::{json, Value};
use typed_tools::effect::EffectSet;
use typed_tools::plan::{Expr, Plan, Step};
use typed_tools::{DynamicTool, Toolbox};

const RESOURCES: [&str; 10] = [
    "customer",
    "order",
    "invoice",
    "ticket",
    "shipment",
    "product",
    "refund",
    "subscription",
    "payment",
    "address",
];

const VERBS: [&str; 5] = ["get", "list", "create", "update", "cancel"];

/// A record of one resource, as the tools return it.
fn record(resource: &str) -> Value {
    json!({
        "type": "object",
        "properties": {
            "id": { "type": "string", "description": format!("The {resource}'s id.") },
            "customer": { "type": "string" },
            "status": { "type": "string", "description": "`open`, `closed` or `cancelled`." },
            "amount": { "type": "integer", "description": "In cents." },
            "created_at": { "type": "string", "format": "date-time" }
        },
        "required": ["id", "customer", "status", "amount", "created_at"],
        "additionalProperties": false
    })
}

fn input(properties: Value, required: &[&str]) -> Value {
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false
    })
}

/// Tool `i` of the 50, in the order resource by resource.
fn tool(i: usize) -> DynamicTool {
    let resource = RESOURCES[i / VERBS.len()];
    let verb = VERBS[i % VERBS.len()];
    let name = format!("{verb}_{resource}");
    let (description, input_schema, output, effects) = match verb {
        "get" => (
            format!("Get a {resource} by its id."),
            input(json!({ "id": { "type": "string" } }), &["id"]),
            record(resource),
            EffectSet::READ,
        ),
        "list" => (
            format!("List a customer's {resource}s, newest first."),
            input(
                json!({
                    "customer": { "type": "string" },
                    "limit": { "type": "integer", "description": "At most this many; 20 if absent." }
                }),
                &["customer"],
            ),
            json!({ "type": "array", "items": record(resource) }),
            EffectSet::READ,
        ),
        "create" => (
            format!("Create a {resource} for a customer."),
            input(
                json!({
                    "customer": { "type": "string" },
                    "amount": { "type": "integer", "description": "In cents." },
                    "note": { "type": "string" }
                }),
                &["customer", "amount"],
            ),
            record(resource),
            EffectSet::WRITE,
        ),
        "update" => (
            format!("Change a {resource}'s status."),
            input(
                json!({ "id": { "type": "string" }, "status": { "type": "string" } }),
                &["id", "status"],
            ),
            record(resource),
            EffectSet::WRITE,
        ),
        _ => (
            format!("Cancel a {resource}, notifying its customer."),
            input(
                json!({ "id": { "type": "string" }, "reason": { "type": "string" } }),
                &["id"],
            ),
            json!({ "type": "null" }),
            EffectSet::WRITE | EffectSet::NETWORK,
        ),
    };
    DynamicTool::new(name)
        .description(description)
        .input_schema(input_schema)
        .output_schema(output)
        .effects(effects)
}

/// A toolbox of the first `n` tools (at most 50).
pub(crate) fn toolbox(n: usize) -> Toolbox {
    (0..n.min(50))
        .fold(Toolbox::builder(), |builder, i| builder.dynamic(tool(i)))
        .build()
        .expect("50 distinct names")
}

/// One field of a plan: a call of one of the tools with its Result used.
fn part(i: usize) -> String {
    let resource = RESOURCES[i % RESOURCES.len()];
    match i % 4 {
        0 => format!(
            "match exec tool get_{resource} {{id = \"{resource}_{i}\"}} {{ Ok(x) => x.status ++ \" \" ++ x.customer, Err(e) => e.message }}"
        ),
        1 => format!(
            "match exec tool list_{resource} {{customer = \"c{i}\", limit = 10}} {{ Ok(xs) => fold (fn total, x => total + x.amount) 0 (filter (fn x => x.status == \"open\") xs), Err(e) => 0 }}"
        ),
        2 => format!(
            "match exec tool create_{resource} {{customer = \"c{i}\", amount = {}}} {{ Ok(x) => match exec tool update_{resource} {{id = x.id, status = \"open\"}} {{ Ok(y) => y.id, Err(e) => e.message }}, Err(e) => e.kind }}",
            i * 100
        ),
        _ => format!(
            "let ids = [\"a{i}\", \"b{i}\"] in match traverse (fn id => exec tool cancel_{resource} {{id = id}}) ids {{ Ok(done) => true, Err(e) => false }}"
        ),
    }
}

/// A plan over the 50 tools with about `nodes` nodes (at least that many):
/// a record of calls, each its Result matched and used.
pub(crate) fn plan_text(nodes: usize) -> String {
    let mut fields = Vec::new();
    loop {
        let i = fields.len();
        fields.push(format!("f{i} = {}", part(i)));
        let text = format!("{{{}}}", fields.join(",\n "));
        if count_nodes(&Plan::parse(&text).expect("the plan parses")) >= nodes {
            return text;
        }
    }
}

/// The nodes of a plan: every expression and step (a lambda is not a node,
/// its body is), as the interpreter numbers them.
pub(crate) fn count_nodes(plan: &Plan) -> usize {
    fn expr(e: &Expr) -> usize {
        1 + match e {
            Expr::Unit
            | Expr::Bool { .. }
            | Expr::Int { .. }
            | Expr::Float { .. }
            | Expr::String { .. }
            | Expr::Var { .. } => 0,
            Expr::Record { fields } => fields.iter().map(|(_, e)| expr(e)).sum(),
            Expr::List { items } => items.iter().map(expr).sum(),
            Expr::Get { of, .. } => expr(of),
            Expr::Not { operand } => expr(operand),
            Expr::Call { arg, .. } => expr(arg),
            Expr::Match { on, ok, err } => step(on) + expr(&ok.body) + expr(&err.body),
            Expr::Let { value, body, .. } => expr(value) + expr(body),
            Expr::If {
                cond,
                then,
                otherwise,
            } => expr(cond) + expr(then) + expr(otherwise),
            Expr::Binary { left, right, .. } => expr(left) + expr(right),
            Expr::Map { func, list } | Expr::Filter { func, list } => expr(&func.body) + expr(list),
            Expr::Fold { func, init, list } => expr(&func.body) + expr(init) + expr(list),
        }
    }
    fn step(s: &Step) -> usize {
        1 + match s {
            Step::Exec { arg, .. } => expr(arg),
            Step::Traverse { body, list, .. } => step(body) + expr(list),
        }
    }
    expr(&plan.body)
}
