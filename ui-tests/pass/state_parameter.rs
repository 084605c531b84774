#![deny(warnings)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use typed_tools::{tool, Toolbox};

struct Db {
    notes: Mutex<HashMap<u32, String>>,
}

/// Write a note.
#[tool(effects = Write)]
fn write_note(id: u32, #[state] db: &Db, text: String) {
    db.notes.lock().unwrap().insert(id, text);
}

/// Read a note.
#[tool(effects = Read)]
async fn read_note(#[state] db: &Db, id: u32) -> Option<String> {
    db.notes.lock().unwrap().get(&id).cloned()
}

fn main() {
    let db = Arc::new(Db {
        notes: Mutex::new(HashMap::new()),
    });
    let toolbox = Toolbox::builder()
        .tool(WriteNote::new(Arc::clone(&db)))
        .tool(ReadNote::new(db))
        .build()
        .unwrap();
    futures::executor::block_on(async {
        toolbox
            .call("write_note", r#"{"id": 1, "text": "hi"}"#)
            .await
            .unwrap();
        assert_eq!(
            toolbox.call("read_note", r#"{"id": 1}"#).await.unwrap().json(),
            r#""hi""#
        );
    });
}
