//! What the durable-run tests share: tools whose side effects go to a log
//! outside any journal, the plan they run, and a journal that fails at
//! chosen positions.

// Each test crate uses a part of this module.
#![allow(dead_code)]

pub(crate) mod pg;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use serde_json::{json, Value as Json};
use typed_tools::durable::{Journal, JournalError, MemoryJournal, Record};
use typed_tools::effect::EffectSet;
use typed_tools::plan::{Plan, Value};
use typed_tools::{DynamicTool, Toolbox};

/// The side effects the tools had, in order, outside any journal.
#[derive(Clone, Default)]
pub(crate) struct World(pub(crate) Arc<Mutex<Vec<String>>>);

impl World {
    pub(crate) fn log(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
    pub(crate) fn count(&self, prefix: &str) -> usize {
        self.log().iter().filter(|e| e.starts_with(prefix)).count()
    }
}

pub(crate) fn tool(
    world: &World,
    name: &'static str,
    effects: EffectSet,
    idempotent: bool,
) -> DynamicTool {
    let world = world.clone();
    let output = if name == "read_balance" {
        json!({"type": "integer"})
    } else {
        json!({"type": "string"})
    };
    DynamicTool::new(name)
        .input_schema(n_schema())
        .output_schema(output)
        .effects(effects)
        .idempotent(idempotent)
        .handler(move |args: Json| {
            let world = world.clone();
            async move {
                let n = args["n"].as_i64().unwrap_or(0);
                world.0.lock().unwrap().push(format!("{name} {n}"));
                Ok(if name == "read_balance" {
                    json!(n * 10)
                } else {
                    json!(format!("{name}_{n}"))
                })
            }
        })
}

pub(crate) fn toolbox(world: &World) -> Toolbox {
    Toolbox::builder()
        .dynamic(tool(world, "read_balance", EffectSet::READ, false))
        .dynamic(tool(world, "charge", EffectSet::WRITE, false))
        .dynamic(tool(world, "put", EffectSet::WRITE, true))
        .build()
        .unwrap()
}

pub(crate) const PLAN: &str = r#"match exec tool read_balance {n = 1} {
  Ok(a) => match exec tool charge {n = a} {
    Ok(b) => match exec tool put {n = 3} {
      Ok(c) => b ++ " " ++ c,
      Err(e) => e.message
    },
    Err(e) => e.message
  },
  Err(e) => e.message
}"#;

pub(crate) fn plan() -> Plan {
    Plan::parse(PLAN).unwrap()
}

pub(crate) fn expected() -> Value {
    Value::String("charge_10 put_3".into())
}

/// A journal whose appends fail at chosen positions, as a store that is
/// down (or a process that dies) at that moment.
#[derive(Default)]
pub(crate) struct Flaky {
    pub(crate) inner: MemoryJournal,
    fail_at: Mutex<Option<u64>>,
}

impl Flaky {
    pub(crate) fn fail_at(&self, seq: Option<u64>) {
        *self.fail_at.lock().unwrap() = seq;
    }
}

impl Journal for Flaky {
    fn append<'a>(
        &'a self,
        run: &'a str,
        seq: u64,
        record: &'a Record,
    ) -> BoxFuture<'a, Result<(), JournalError>> {
        if *self.fail_at.lock().unwrap() == Some(seq) {
            return Box::pin(async {
                Err(JournalError::Unavailable {
                    message: "injected".into(),
                })
            });
        }
        self.inner.append(run, seq, record)
    }
    fn load<'a>(&'a self, run: &'a str) -> BoxFuture<'a, Result<Vec<Record>, JournalError>> {
        self.inner.load(run)
    }
}

/// What a tool of [`file_toolbox`] tells when its call is at a moment:
/// `(tool, n, moment)`, the moment `"before"` or `"after"` its effect. The
/// crash tests stop there for the harness to kill the process.
pub(crate) type Moment = Arc<dyn Fn(&str, i64, &str) + Send + Sync>;

/// The tools the tests with real processes share: `read` (`Read`, gives
/// `n * read_factor`), `charge` (`Write`, gives `n + 1`) and `put`
/// (idempotent `Write`, gives `n`), each taking `{"n": integer}`; a write
/// appends `"{tool} {n}"` to the file `log`, outside any journal, as one
/// write (several processes append to it).
pub(crate) fn file_toolbox(log: &Path, read_factor: i64, moment: Moment) -> Toolbox {
    let tool = |name: &'static str, effects: EffectSet, idempotent: bool| {
        let log: Arc<PathBuf> = Arc::new(log.to_owned());
        let moment = Arc::clone(&moment);
        DynamicTool::new(name)
            .input_schema(n_schema())
            .output_schema(json!({"type": "integer"}))
            .effects(effects)
            .idempotent(idempotent)
            .handler(move |args: Json| {
                let log = Arc::clone(&log);
                let moment = Arc::clone(&moment);
                async move {
                    let n = args["n"].as_i64().unwrap_or(0);
                    moment(name, n, "before");
                    if name != "read" {
                        let mut file = std::fs::OpenOptions::new()
                            .create(true)
                            .append(true)
                            .open(&*log)
                            .map_err(|e| e.to_string())?;
                        file.write_all(format!("{name} {n}\n").as_bytes())
                            .map_err(|e| e.to_string())?;
                    }
                    moment(name, n, "after");
                    Ok(json!(match name {
                        "read" => n * read_factor,
                        "charge" => n + 1,
                        _ => n,
                    }))
                }
            })
    };
    Toolbox::builder()
        .dynamic(tool("read", EffectSet::READ, false))
        .dynamic(tool("charge", EffectSet::WRITE, false))
        .dynamic(tool("put", EffectSet::WRITE, true))
        .build()
        .unwrap()
}

/// The input schema of every test tool: `{"n": integer}`.
fn n_schema() -> Json {
    json!({
        "type": "object",
        "properties": {"n": {"type": "integer"}},
        "required": ["n"],
        "additionalProperties": false
    })
}

/// Run `run`'s records in `journal`, as JSON, and each one's kind.
pub(crate) fn records(journal: &MemoryJournal, run: &str) -> (Vec<Json>, Vec<String>) {
    let records: Vec<Json> = journal
        .lines(run)
        .iter()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let kinds = records
        .iter()
        .map(|r| r["record"].as_str().unwrap().to_owned())
        .collect();
    (records, kinds)
}
