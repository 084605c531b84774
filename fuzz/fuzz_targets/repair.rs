//! JSON repair on text from the fuzzer. The oracle, for every input: repair
//! never panics; what it returns is JSON; valid JSON comes back byte for
//! byte (or, a string holding a JSON object or array that parses, as that
//! value); an error points inside the text. And the never-lossy promise:
//! when the input minus its last 8 bytes is a JSON document, those 8 bytes
//! choose one damage to it (delete, duplicate or swap a character, truncate,
//! insert prose, a fence, a comment or a character), and the repair of the
//! damaged text keeps every token the damage did not touch, in order and in
//! its role, or refuses (`tests/repair_corpus/lossless.rs`, shared with
//! `tests/repair_props.rs`).
#![no_main]

#[path = "../../tests/repair_corpus/lossless.rs"]
mod lossless;

use libfuzzer_sys::fuzz_target;
use lossless::{Damage, CHARS, INSERTS};
use serde::de::IgnoredAny;
use typed_tools::repair::{repair, RepairKind};

fn is_json(text: &str) -> bool {
    serde_json::from_str::<IgnoredAny>(text).is_ok()
}

/// Repairs `text` and checks what holds for any input.
fn repaired_as_promised(text: &str) {
    match repair(text) {
        Ok(repaired) => {
            assert!(
                is_json(repaired.json()),
                "not JSON from {text:?}: {:?}",
                repaired.json()
            );
            if is_json(text) {
                let unwrapped = repaired
                    .repairs()
                    .iter()
                    .any(|r| r.kind == RepairKind::StringifiedJson);
                if unwrapped {
                    let inner: String = serde_json::from_str(text).expect("a string");
                    assert_eq!(repaired.json(), inner, "from {text:?}");
                } else {
                    assert!(repaired.is_unchanged(), "{text:?} changed: {repaired}");
                    assert_eq!(repaired.json(), text);
                }
            }
            assert!(repaired.repairs().iter().all(|r| r.at <= text.len()));
        }
        Err(error) => {
            assert!(!is_json(text), "valid JSON refused: {text:?}: {error}");
            assert!(
                error.at() <= text.len(),
                "{error:?} past the end of {text:?}"
            );
        }
    }
}

/// The damage the 8 bytes choose.
fn damage(doc: &str, choice: [u8; 8]) -> Damage {
    let n = u64::from_le_bytes(choice);
    let at = (n >> 8) as usize % (doc.len() + 1);
    let pick = (n >> 40) as usize;
    match choice[0] % 8 {
        0 => Damage::Delete(at),
        1 => Damage::Duplicate(at),
        2 => Damage::Swap(at),
        3 => Damage::Truncate(at),
        4 | 5 => Damage::Insert(at, INSERTS[pick % INSERTS.len()].to_string()),
        6 => Damage::Insert(at, CHARS[pick % CHARS.len()].to_string()),
        _ => Damage::Replace(at, CHARS[pick % CHARS.len()].to_string()),
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    repaired_as_promised(text);
    if data.len() < 8 {
        return;
    }
    let (doc, choice) = data.split_at(data.len() - 8);
    let Ok(doc) = std::str::from_utf8(doc) else {
        return;
    };
    if !is_json(doc) {
        return;
    }
    let damage = damage(doc, choice.try_into().expect("8 bytes"));
    let (damaged, edit) = lossless::damage(doc, &damage);
    repaired_as_promised(&damaged);
    if let Ok(output) = repair(&damaged) {
        if let Err(lost) = lossless::check(doc, edit, &damaged, &output) {
            panic!("{damage:?} of {doc:?}: {lost}\n  damaged: {damaged:?}\n  output: {:?}\n  record: {output}", output.json());
        }
    }
});
