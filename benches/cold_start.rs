//! Cold start, in fresh processes: the time to build a toolbox of 50 tools
//! and the time of its first catalog call, against the same 50 tools
//! written by hand (serde and schemars derives, the MCP `tools/list` entries
//! put together from `schema_for!` as a server without this crate does,
//! with the output schema structured results need, each schema cloned into
//! its entry). The first `tools/list` is counted to
//! its bytes on the wire, as a server answers it; the first OpenAI `tools`
//! to the value a client puts in its request.
//!
//! An MCP client starts a stdio server per session, and serverless
//! deployments start one per request, so this is on every user's path.
//! Each figure is taken in a process of its own (the binary runs itself as
//! a child, `RUNS` times, each child measuring one start) and the medians
//! are printed, the ratio to the hand-written baseline beside them:
//!
//! `cargo bench --bench cold_start`

use std::process::Command;
use std::time::Instant;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use typed_tools::{tool, CatalogFormat, Toolbox};

/// Fresh processes per figure.
const RUNS: usize = 15;

/// A record one of the tools returns.
#[derive(Debug, Serialize, JsonSchema)]
struct Record {
    /// Its id.
    id: String,
    /// Its status: `open`, `closed` or `cancelled`.
    status: String,
    /// The amount, in cents.
    amount: i64,
    /// Its lines.
    lines: Vec<Line>,
}

/// One line of a record.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct Line {
    /// What it is.
    sku: String,
    /// How many.
    quantity: u32,
}

/// Fifty tools, each its own fn, of the same shape a real API's are: an id,
/// an amount, an optional note, lines; a record out.
macro_rules! tools {
    ($(($name:ident, $ty:ident, $args:ident)),* $(,)?) => {
        $(
            /// Find or change a record of this kind.
            ///
            /// # Arguments
            /// * `id` - The record's id, like `rec_123`.
            /// * `amount` - An amount in cents.
            /// * `note` - A note to keep with it.
            /// * `lines` - The lines it holds.
            #[tool(effects = Read)]
            fn $name(id: String, amount: i64, note: Option<String>, lines: Vec<Line>) -> Result<Record, String> {
                let _ = note;
                Ok(Record { id, status: "open".into(), amount, lines })
            }

            /// The arguments of the same tool, written by hand.
            #[derive(Deserialize, JsonSchema)]
            #[allow(dead_code, reason = "read by the hand-written dispatch a real server would have")]
            struct $args {
                /// The record's id, like `rec_123`.
                id: String,
                /// An amount in cents.
                amount: i64,
                /// A note to keep with it.
                note: Option<String>,
                /// The lines it holds.
                lines: Vec<Line>,
            }
        )*

        /// The toolbox of the fifty.
        fn ours() -> Toolbox {
            Toolbox::builder()$(.tool($ty))*.build().unwrap()
        }

        /// The fifty written by hand: each tool's name, description, input
        /// and output schemas, kept as a server keeps them.
        fn by_hand() -> Vec<(&'static str, &'static str, Value, Value)> {
            vec![$((
                stringify!($name),
                "Find or change a record of this kind.",
                serde_json::to_value(schemars::schema_for!($args)).unwrap(),
                serde_json::to_value(schemars::schema_for!(Record)).unwrap(),
            )),*]
        }
    };
}

tools!(
    (t01, T01, A01),
    (t02, T02, A02),
    (t03, T03, A03),
    (t04, T04, A04),
    (t05, T05, A05),
    (t06, T06, A06),
    (t07, T07, A07),
    (t08, T08, A08),
    (t09, T09, A09),
    (t10, T10, A10),
    (t11, T11, A11),
    (t12, T12, A12),
    (t13, T13, A13),
    (t14, T14, A14),
    (t15, T15, A15),
    (t16, T16, A16),
    (t17, T17, A17),
    (t18, T18, A18),
    (t19, T19, A19),
    (t20, T20, A20),
    (t21, T21, A21),
    (t22, T22, A22),
    (t23, T23, A23),
    (t24, T24, A24),
    (t25, T25, A25),
    (t26, T26, A26),
    (t27, T27, A27),
    (t28, T28, A28),
    (t29, T29, A29),
    (t30, T30, A30),
    (t31, T31, A31),
    (t32, T32, A32),
    (t33, T33, A33),
    (t34, T34, A34),
    (t35, T35, A35),
    (t36, T36, A36),
    (t37, T37, A37),
    (t38, T38, A38),
    (t39, T39, A39),
    (t40, T40, A40),
    (t41, T41, A41),
    (t42, T42, A42),
    (t43, T43, A43),
    (t44, T44, A44),
    (t45, T45, A45),
    (t46, T46, A46),
    (t47, T47, A47),
    (t48, T48, A48),
    (t49, T49, A49),
    (t50, T50, A50),
);

/// The hand-written `tools/list` result: what an MCP server sends.
fn by_hand_list(tools: &[(&str, &str, Value, Value)]) -> Value {
    let tools: Vec<Value> = tools
        .iter()
        .map(|(name, description, schema, output)| {
            let mut entry = serde_json::Map::new();
            entry.insert("name".into(), json!(name));
            entry.insert("description".into(), json!(description));
            entry.insert("inputSchema".into(), schema.clone());
            entry.insert("outputSchema".into(), output.clone());
            entry.insert("annotations".into(), json!({"readOnlyHint": true}));
            Value::Object(entry)
        })
        .collect();
    let mut list = serde_json::Map::new();
    list.insert("tools".into(), Value::Array(tools));
    Value::Object(list)
}

/// One start, measured in this process: microseconds to build, and to the
/// first catalog (MCP's `tools/list`, then OpenAI's `tools`) after it.
fn child(which: &str) {
    let start = Instant::now();
    let (build, mcp, openai) = match which {
        "ours" => {
            let toolbox = ours();
            let built = start.elapsed();
            let mcp = toolbox.catalog(CatalogFormat::Mcp);
            let mcp = serde_json::to_vec(mcp.as_json().unwrap()).unwrap();
            let mcp_at = start.elapsed();
            let openai = toolbox.catalog(CatalogFormat::OpenAiChat);
            let openai_at = start.elapsed();
            std::hint::black_box((mcp, openai));
            (built, mcp_at - built, openai_at - mcp_at)
        }
        _ => {
            let tools = by_hand();
            let built = start.elapsed();
            let list = serde_json::to_vec(&by_hand_list(&tools)).unwrap();
            let mcp_at = start.elapsed();
            let openai: Vec<Value> = tools
                .iter()
                .map(|(name, description, schema, _)| {
                    let mut function = serde_json::Map::new();
                    function.insert("name".into(), json!(name));
                    function.insert("description".into(), json!(description));
                    function.insert("parameters".into(), schema.clone());
                    let mut entry = serde_json::Map::new();
                    entry.insert("type".into(), json!("function"));
                    entry.insert("function".into(), Value::Object(function));
                    Value::Object(entry)
                })
                .collect();
            let openai_at = start.elapsed();
            std::hint::black_box((list, openai));
            (built, mcp_at - built, openai_at - mcp_at)
        }
    };
    println!(
        "{} {} {}",
        build.as_secs_f64() * 1e6,
        mcp.as_secs_f64() * 1e6,
        openai.as_secs_f64() * 1e6
    );
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    if let Ok(which) = std::env::var("COLD_START_CHILD") {
        return child(&which);
    }
    // `cargo bench` passes `--bench`; nothing else is read.
    let exe = std::env::current_exe().expect("this binary");
    let mut figures = Vec::new();
    for which in ["ours", "by_hand"] {
        let mut runs: [Vec<f64>; 3] = Default::default();
        for _ in 0..RUNS {
            let output = Command::new(&exe)
                .env("COLD_START_CHILD", which)
                .output()
                .expect("a child");
            let text = String::from_utf8(output.stdout).unwrap();
            for (i, number) in text.split_whitespace().enumerate() {
                runs[i].push(number.parse().unwrap());
            }
        }
        figures.push(runs.map(median));
    }
    println!("cold start, 50 tools, median of {RUNS} fresh processes (µs):");
    println!(
        "{:<28}{:>12}{:>12}{:>8}",
        "", "typed-tools", "by hand", "ratio"
    );
    for (i, what) in ["build", "first MCP tools/list, bytes", "first OpenAI tools"]
        .iter()
        .enumerate()
    {
        let (ours, hand) = (figures[0][i], figures[1][i]);
        println!("{what:<28}{ours:>12.1}{hand:>12.1}{:>8.2}", ours / hand);
    }
}
