#![deny(warnings)]

use std::sync::{Arc, Mutex};

use typed_tools::toolbox::{Approval, Decision};
use typed_tools::{tool, Toolbox};

/// Who is calling.
struct Caller {
    name: String,
    admin: bool,
}

struct Db {
    notes: Mutex<Vec<(String, String)>>,
}

/// Write a note, signed by the caller.
#[tool(effects = Write)]
fn write_note(#[state] db: &Db, text: String, #[context] caller: &Caller) {
    db.notes.lock().unwrap().push((caller.name.clone(), text));
}

/// Read the caller's notes.
#[tool(effects = Read)]
async fn my_notes(#[context] caller: &Caller, #[state] db: &Db) -> Vec<String> {
    let notes = db.notes.lock().unwrap();
    notes
        .iter()
        .filter(|(author, _)| *author == caller.name)
        .map(|(_, text)| text.clone())
        .collect()
}

/// Add two numbers: needs no context, and joins a toolbox that gives one.
#[tool(effects = Pure)]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {
    let db = Arc::new(Db {
        notes: Mutex::new(Vec::new()),
    });
    let toolbox = Toolbox::builder()
        .context::<Caller>()
        .tool(WriteNote::new(Arc::clone(&db)))
        .tool(MyNotes::new(db))
        .tool(Add)
        .approval(Approval::with_context(|_, caller: &Caller| {
            if caller.admin {
                Decision::Approve
            } else {
                Decision::Refuse(format!("{} may not write", caller.name))
            }
        }))
        .approval(Approval::new(|_| Decision::Approve))
        .build()
        .unwrap();
    let ana = Caller {
        name: "ana".into(),
        admin: true,
    };
    futures::executor::block_on(async {
        toolbox
            .call_in(&ana, "write_note", r#"{"text": "hi"}"#)
            .await
            .unwrap();
        assert_eq!(
            toolbox.call_in(&ana, "my_notes", "{}").await.unwrap().json(),
            r#"["hi"]"#
        );
        assert_eq!(
            toolbox
                .call_in(&ana, "add", r#"{"a": 1, "b": 2}"#)
                .await
                .unwrap()
                .json(),
            "3"
        );
    });
}
