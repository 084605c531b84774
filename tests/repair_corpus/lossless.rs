//! The never-lossy check of JSON repair, over real JSON damaged in one place.
//!
//! A document we did not write (`real/`) is valid JSON; [`damage`] applies one
//! [`Damage`] to it (delete, duplicate or swap a character, truncate, insert
//! prose, a fence, a comment or a character), and [`check`] holds the repair of
//! the damaged text to the promise of `typed_tools::repair`: every key,
//! string, number and literal of the document that the damage did not touch is
//! in the output, in order, with the same role (key or value) and the same
//! value, unless the repair record says it was removed (a comment the damage
//! opened) or joined (strings concatenated with `+`, which become parts of
//! one string). Refusing is always allowed; a value that lost or changed an
//! untouched token is not.
//!
//! [`sweep`] applies every damage the fuzz target chooses from at every byte
//! of a document.
//!
//! Shared by `tests/repair_props.rs`, the `repair` fuzz target and
//! `examples/repair_sweep.rs` (the sweep over a folder of documents).

#![allow(dead_code)] // each includer uses a part

use typed_tools::repair::{repair, RepairKind, Repaired};

/// A key, string, number or literal of a JSON text, where it is, and what
/// it holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Atom {
    /// An object's key (else a value).
    pub(crate) key: bool,
    pub(crate) value: Scalar,
    /// Its bytes in the text, quotes included.
    pub(crate) start: usize,
    pub(crate) end: usize,
}

/// What an [`Atom`] holds: a string decoded, a number's text, a literal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Scalar {
    Str(String),
    Num(String),
    Lit(&'static str),
}

/// The atoms of a valid JSON text, in order. Panics on text that is not
/// JSON (callers pass documents and repair output only).
pub(crate) fn atoms(json: &str) -> Vec<Atom> {
    let b = json.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => {
                let start = i;
                i += 1;
                while b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
                // A lone surrogate (`"\ud800"`) is JSON but not a Rust
                // string: compared as written.
                let value: String = serde_json::from_str(&json[start..i])
                    .unwrap_or_else(|_| json[start..i].to_string());
                let mut j = i;
                while j < b.len() && matches!(b[j], b' ' | b'\t' | b'\n' | b'\r') {
                    j += 1;
                }
                out.push(Atom {
                    key: b.get(j) == Some(&b':'),
                    value: Scalar::Str(value),
                    start,
                    end: i,
                });
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                while i < b.len() && matches!(b[i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
                {
                    i += 1;
                }
                out.push(Atom {
                    key: false,
                    value: Scalar::Num(json[start..i].to_string()),
                    start,
                    end: i,
                });
            }
            b't' | b'f' | b'n' => {
                let literal = ["true", "false", "null"]
                    .into_iter()
                    .find(|l| json[i..].starts_with(l))
                    .expect("a literal");
                out.push(Atom {
                    key: false,
                    value: Scalar::Lit(literal),
                    start: i,
                    end: i + literal.len(),
                });
                i += literal.len();
            }
            _ => i += 1,
        }
    }
    out
}

/// One place of damage to a document.
#[derive(Clone, Debug)]
pub(crate) enum Damage {
    /// The character at this byte is deleted.
    Delete(usize),
    /// The character at this byte is written twice.
    Duplicate(usize),
    /// The characters at this byte and the next are swapped.
    Swap(usize),
    /// The text stops at this byte.
    Truncate(usize),
    /// Text is inserted at this byte.
    Insert(usize, String),
    /// The character at this byte is replaced by this text.
    Replace(usize, String),
}

/// Prose, fences and comments that models put around and inside JSON.
pub(crate) const INSERTS: &[&str] = &[
    "Here you go: ",
    "\nSure! Here are the arguments:\n",
    " (see above) ",
    "Note: the values below are approximate.\n",
    "```json\n",
    "\n```\n",
    "```",
    "\n```\nLet me know if you need anything else.",
    "// note\n",
    "/* note */",
    "# note\n",
    "...",
    "…",
];

/// Single characters that stress a JSON reader.
pub(crate) const CHARS: &[&str] = &[
    "{", "}", "[", "]", "\"", "'", ",", ":", " ", "\n", "\\", "/", "*", "#", ".", "`", "(", ")",
    "-", "+", "0", "7", "e", "a", "T", "N", "=", "“", "”", "‘", "’", "´", "\t", "\u{0}",
];

/// Where a damage applies in the original: `removed` bytes from `at`
/// replaced by `inserted` bytes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Edit {
    pub(crate) at: usize,
    pub(crate) removed: usize,
    pub(crate) inserted: usize,
}

/// The damaged text and where the damage is. Positions are moved back to a
/// character boundary; a position past the end is the end.
pub(crate) fn damage(doc: &str, damage: &Damage) -> (String, Edit) {
    let boundary = |mut at: usize| {
        at = at.min(doc.len());
        while !doc.is_char_boundary(at) {
            at -= 1;
        }
        at
    };
    let char_len = |at: usize| doc[at..].chars().next().map_or(0, char::len_utf8);
    let splice = |at: usize, removed: usize, with: &str| {
        let mut text = String::with_capacity(doc.len() + with.len());
        text.push_str(&doc[..at]);
        text.push_str(with);
        text.push_str(&doc[at + removed..]);
        (
            text,
            Edit {
                at,
                removed,
                inserted: with.len(),
            },
        )
    };
    match damage {
        Damage::Delete(at) => {
            let at = boundary(*at);
            splice(at, char_len(at), "")
        }
        Damage::Duplicate(at) => {
            let at = boundary(*at);
            let c = &doc[at..at + char_len(at)];
            splice(at, 0, c)
        }
        Damage::Swap(at) => {
            let at = boundary(*at);
            let first = char_len(at);
            let second = char_len(at + first);
            let swapped = format!(
                "{}{}",
                &doc[at + first..at + first + second],
                &doc[at..at + first]
            );
            splice(at, first + second, &swapped)
        }
        Damage::Truncate(at) => {
            let at = boundary(*at);
            splice(at, doc.len() - at, "")
        }
        Damage::Insert(at, text) => splice(boundary(*at), 0, text),
        Damage::Replace(at, text) => {
            let at = boundary(*at);
            splice(at, char_len(at), text)
        }
    }
}

/// The comments the repair record says were removed, as byte ranges of
/// `text`: a `//` or `#` comment to the end of its line, a `/* */` comment
/// to its end.
fn removed_comments(text: &str, repaired: &Repaired<'_>) -> Vec<(usize, usize)> {
    repaired
        .repairs()
        .iter()
        .filter(|r| r.kind == RepairKind::Comment)
        .map(|r| {
            let rest = &text[r.at..];
            let len = if let Some(body) = rest.strip_prefix("/*") {
                body.find("*/").map_or(rest.len(), |p| p + 4)
            } else {
                rest.find(['\n', '\r']).unwrap_or(rest.len())
            };
            (r.at, r.at + len)
        })
        .collect()
}

/// Checks the repair of `damaged` (made from `doc` by `edit`): every atom of
/// `doc` the edit did not touch is in the output, in order, as the same key
/// or value, unless it lies in a comment the record says was removed. An
/// atom is touched when the edit overlaps it or ends next to it (deleting
/// the comma of `[1,2]` makes `12`).
pub(crate) fn check(
    doc: &str,
    edit: Edit,
    damaged: &str,
    repaired: &Repaired<'_>,
) -> Result<(), String> {
    let comments = removed_comments(damaged, repaired);
    let wanted: Vec<Atom> = atoms(doc)
        .into_iter()
        .filter(|a| a.end < edit.at || a.start > edit.at + edit.removed)
        .map(|mut a| {
            if a.start > edit.at {
                a.start = a.start - edit.removed + edit.inserted;
                a.end = a.end - edit.removed + edit.inserted;
            }
            a
        })
        .filter(|a| {
            !comments
                .iter()
                .any(|&(from, to)| a.start >= from && a.end <= to)
        })
        .collect();
    // A string whose whole content is JSON comes back decoded when the
    // record says so (`"[\"a\"]"` is `["a"]`): its atoms are its content's.
    let stringified = repaired
        .repairs()
        .iter()
        .any(|r| r.kind == RepairKind::StringifiedJson);
    let wanted: Vec<Atom> = wanted
        .into_iter()
        .flat_map(|atom| match &atom.value {
            Scalar::Str(text) if stringified && !atom.key && holds_container(text) => atoms(text)
                .into_iter()
                .map(|inner| Atom {
                    start: atom.start,
                    end: atom.end,
                    ..inner
                })
                .collect(),
            _ => vec![atom],
        })
        .collect();
    let got = atoms(repaired.json());
    // Strings joined with `+` are in the output as parts of one string.
    let joined = repaired
        .repairs()
        .iter()
        .any(|r| r.kind == RepairKind::StringConcatenation);
    let matches = |g: &Atom, atom: &Atom| {
        g.key == atom.key
            && (g.value == atom.value
                || match (&g.value, &atom.value) {
                    (Scalar::Str(whole), Scalar::Str(part)) => {
                        joined && whole.contains(part.as_str())
                    }
                    _ => false,
                })
    };
    // A `{` the damage wrote before a value makes that value the key of an
    // object cut short (`{"a"` is `{"a": null}`, as truncation asks): the
    // first atom after the damage may change its role.
    let opened = damaged
        .get(edit.at..edit.at + edit.inserted)
        .is_some_and(|inserted| inserted.contains('{'));
    let after_edit = wanted
        .iter()
        .position(|a| a.start >= edit.at + edit.inserted);
    let mut next = 0;
    for (i, atom) in wanted.iter().enumerate() {
        let either_role = opened && after_edit == Some(i);
        let found = got[next..].iter().position(|g| {
            matches(g, atom) || (either_role && g.key != atom.key && g.value == atom.value)
        });
        match found {
            Some(p) => next += p + 1,
            None => {
                return Err(format!(
                    "lost the {} {:?} at byte {} of the damaged text",
                    if atom.key { "key" } else { "value" },
                    atom.value,
                    atom.start
                ))
            }
        }
    }
    Ok(())
}

/// Whether `text` is a JSON object or array, whole.
fn holds_container(text: &str) -> bool {
    matches!(text.trim_start().as_bytes().first(), Some(b'{' | b'['))
        && serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok()
}

/// Every damage the fuzz target chooses from at byte `at`: each kind, each
/// insert and character.
pub(crate) fn damages_at(at: usize) -> Vec<Damage> {
    let mut damages = vec![
        Damage::Delete(at),
        Damage::Duplicate(at),
        Damage::Swap(at),
        Damage::Truncate(at),
    ];
    for text in INSERTS.iter().chain(CHARS) {
        damages.push(Damage::Insert(at, text.to_string()));
    }
    for text in CHARS {
        damages.push(Damage::Replace(at, text.to_string()));
    }
    damages
}

/// A repair a sweep found that lost a token the damage did not touch.
#[derive(Debug)]
pub(crate) struct Lossy {
    pub(crate) damage: Damage,
    /// The damaged text.
    pub(crate) damaged: String,
    /// Where the damage is in it.
    pub(crate) edit: Edit,
    /// What was lost.
    pub(crate) lost: String,
    /// The repair's output.
    pub(crate) output: String,
}

impl Lossy {
    /// The damaged text from `before` bytes before the damage to `after`
    /// bytes after it.
    pub(crate) fn near(&self, before: usize, after: usize) -> &str {
        let text = &self.damaged;
        let mut from = self.edit.at.saturating_sub(before).min(text.len());
        while !text.is_char_boundary(from) {
            from -= 1;
        }
        let mut to = (self.edit.at + self.edit.inserted + after).min(text.len());
        while !text.is_char_boundary(to) {
            to += 1;
        }
        &text[from..to]
    }

    /// The output from `before` bytes before where the damage is in the
    /// text to `after` bytes after it: roughly what the repair made of the
    /// text around the damage (the output is shorter or longer by the
    /// repairs before it).
    pub(crate) fn output_near(&self, before: usize, after: usize) -> &str {
        let text = &self.output;
        let mut from = self.edit.at.saturating_sub(before).min(text.len());
        while !text.is_char_boundary(from) {
            from -= 1;
        }
        let mut to = (self.edit.at + self.edit.inserted + after).min(text.len());
        while !text.is_char_boundary(to) {
            to += 1;
        }
        &text[from..to]
    }
}

/// What a sweep of one document found.
#[derive(Debug, Default)]
pub(crate) struct Swept {
    /// Damaged texts repaired (losing nothing, or in `lossy`).
    pub(crate) repaired: usize,
    /// Damaged texts refused.
    pub(crate) refused: usize,
    /// The repairs that lost a token.
    pub(crate) lossy: Vec<Lossy>,
}

/// Every damage the fuzz target chooses from ([`damages_at`]) at every
/// byte of `doc`, a JSON document, each repaired and held to [`check`].
pub(crate) fn sweep(doc: &str) -> Swept {
    let mut swept = Swept::default();
    for at in (0..=doc.len()).filter(|&at| doc.is_char_boundary(at)) {
        for damage in damages_at(at) {
            let (damaged, edit) = self::damage(doc, &damage);
            match repair(&damaged) {
                Ok(output) => {
                    swept.repaired += 1;
                    if let Err(lost) = check(doc, edit, &damaged, &output) {
                        let output = output.json().to_string();
                        swept.lossy.push(Lossy {
                            damage,
                            damaged,
                            edit,
                            lost,
                            output,
                        });
                    }
                }
                Err(_) => swept.refused += 1,
            }
        }
    }
    swept
}
