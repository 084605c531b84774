#![deny(warnings)]

use std::fmt;
use std::io;

use typed_tools::{tool, Tool, Toolbox};

#[derive(Debug)]
struct NotFound(u32);

impl fmt::Display for NotFound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "no note {}", self.0)
    }
}

/// Read a note.
#[tool(effects = Read)]
fn read_note(id: u32) -> Result<String, NotFound> {
    if id == 0 {
        Err(NotFound(id))
    } else {
        Ok(format!("note {id}"))
    }
}

/// Read a file.
#[tool(effects = Read)]
fn read_file(path: String) -> io::Result<String> {
    if path.is_empty() {
        Err(io::Error::new(io::ErrorKind::NotFound, "empty path"))
    } else {
        Ok(path)
    }
}

/// Read a note, asynchronously.
#[tool(effects = Read)]
async fn read_note_later(id: u32) -> std::result::Result<String, String> {
    Ok(format!("note {id}"))
}

/// Count the words.
#[tool(effects = Pure)]
fn count_words(text: String) -> usize {
    text.split_whitespace().count()
}

fn main() {
    let _: fn() -> <ReadFile as Tool>::Error = || io::Error::other("x");
    let _: fn() -> <CountWords as Tool>::Error = || unreachable!();
    let toolbox = Toolbox::builder()
        .tool(ReadNote)
        .tool(ReadFile)
        .tool(ReadNoteLater)
        .tool(CountWords)
        .build()
        .unwrap();
    futures::executor::block_on(async {
        assert_eq!(
            toolbox.call("read_note", r#"{"id": 7}"#).await.unwrap().json(),
            r#""note 7""#
        );
        assert!(toolbox.call("read_note", r#"{"id": 0}"#).await.is_err());
        assert!(toolbox.call("read_file", r#"{"path": ""}"#).await.is_err());
        assert!(toolbox.call("read_note_later", r#"{"id": 1}"#).await.is_ok());
        assert!(toolbox.call("count_words", r#"{"text": "a b"}"#).await.is_ok());
    });
}
