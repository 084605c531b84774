//! Properties of JSON repair over generated input: valid JSON is never changed,
//! nothing panics, what comes out is JSON, and repairs that have a right answer
//! lose nothing.

use proptest::prelude::*;
use serde::de::IgnoredAny;
use serde_json::{Map, Number, Value};
use typed_tools::repair::{repair, repair_with, RepairErrorKind, RepairKind, RepairOptions};

/// Strings with the characters that stress a JSON writer and the repairer's
/// quote rule: quotes of every kind, backslashes, control characters, commas,
/// brackets, `...`, and some non-ASCII text.
fn tricky_string() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z ]{0,12}",
        r#"[a-zA-Z0-9 "'\\,:{}\[\]./#*\n\t\u{1}“”‘’é😀-]{0,16}"#,
        any::<String>(),
    ]
}

fn number() -> impl Strategy<Value = Number> {
    prop_oneof![
        any::<i64>().prop_map(Number::from),
        any::<u64>().prop_map(Number::from),
        (prop::num::f64::NORMAL | prop::num::f64::SUBNORMAL | prop::num::f64::ZERO)
            .prop_filter_map("finite", Number::from_f64),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        number().prop_map(Value::Number),
        tricky_string().prop_map(Value::String),
    ];
    leaf.prop_recursive(5, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((tricky_string(), inner), 0..6)
                .prop_map(|members| Value::Object(members.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// A JSON string that holds a JSON object or array is decoded by design
/// (`StringifiedJson`); every other valid JSON text is left alone.
fn is_stringified(value: &Value) -> bool {
    match value {
        Value::String(s) => matches!(s.trim_start().as_bytes().first(), Some(b'{' | b'[')),
        _ => false,
    }
}

fn assert_json(text: &str) -> Result<(), TestCaseError> {
    prop_assert!(
        serde_json::from_str::<IgnoredAny>(text).is_ok(),
        "not JSON: {text:?}"
    );
    Ok(())
}

/// Writes a value as JSON with the mistakes models make that have exactly one
/// right reading: trailing commas, comments, Python literals, single quotes,
/// unquoted keys. `choices` picks, per place, which mistake (if any).
fn write_sloppy(value: &Value, choices: &mut impl Iterator<Item = u8>, out: &mut String) {
    fn pick(choices: &mut impl Iterator<Item = u8>) -> u8 {
        choices.next().unwrap_or(0)
    }
    fn coin(choices: &mut impl Iterator<Item = u8>) -> bool {
        pick(choices) & 1 == 0
    }
    fn gap(out: &mut String, choice: u8) {
        match choice % 8 {
            0 => out.push_str(" /* note */ "),
            1 => out.push_str(" // note\n"),
            2 => out.push_str(" # note\n"),
            3 => out.push_str("\n  "),
            _ => {}
        }
    }
    match value {
        Value::Null if coin(choices) => out.push_str("None"),
        Value::Bool(true) if coin(choices) => out.push_str("True"),
        Value::Bool(false) if coin(choices) => out.push_str("False"),
        Value::String(s) if !s.contains(['\'', '"', '\\']) && coin(choices) => {
            let json = serde_json::to_string(s).unwrap();
            out.push('\'');
            out.push_str(&json[1..json.len() - 1]);
            out.push('\'');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                gap(out, pick(choices));
                write_sloppy(item, choices, out);
                gap(out, pick(choices));
            }
            if !items.is_empty() && coin(choices) {
                out.push(',');
            }
            out.push(']');
        }
        Value::Object(members) => {
            out.push('{');
            for (i, (key, member)) in members.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                gap(out, pick(choices));
                let identifier = key.starts_with(|c: char| c.is_ascii_alphabetic())
                    && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
                if identifier && coin(choices) {
                    out.push_str(key);
                } else {
                    out.push_str(&serde_json::to_string(key).unwrap());
                }
                out.push_str(": ");
                write_sloppy(member, choices, out);
                gap(out, pick(choices));
            }
            if !members.is_empty() && coin(choices) {
                out.push(',');
            }
            out.push('}');
        }
        _ => out.push_str(&serde_json::to_string(value).unwrap()),
    }
}

/// Applies byte-level damage to a JSON text at char boundaries.
fn mutate(text: &str, edits: &[(usize, u8, char)]) -> String {
    let mut text = text.to_string();
    for &(at, op, c) in edits {
        let mut at = at % (text.len() + 1);
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        match op % 4 {
            0 => text.truncate(at),
            1 => text.insert(at, c),
            2 => {
                let next = text[at..].chars().next().map_or(0, char::len_utf8);
                text.replace_range(at..at + next, "");
            }
            _ => {
                let next = text[at..].chars().next().map_or(0, char::len_utf8);
                text.replace_range(at..at + next, c.encode_utf8(&mut [0; 4]));
            }
        }
    }
    text
}

fn json_char() -> impl Strategy<Value = char> {
    prop_oneof![
        prop::sample::select(vec![
            '{', '}', '[', ']', '"', '\'', ',', ':', ' ', '\n', '\\', '/', '*', '#', '.', '`', '(',
            ')', '-', '0', 'e', 'a', 'T', 'N', '“', '”', '…'
        ]),
        any::<char>(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn valid_json_is_returned_unchanged_without_repairs(value in value()) {
        prop_assume!(!is_stringified(&value));
        for text in [serde_json::to_string(&value).unwrap(), serde_json::to_string_pretty(&value).unwrap()] {
            let repaired = repair(&text).unwrap();
            prop_assert_eq!(repaired.json(), text.as_str());
            prop_assert!(repaired.is_unchanged());
            // Strict mode with nothing allowed accepts all valid JSON.
            prop_assert!(repair_with(&text, &RepairOptions::strict([])).unwrap().is_unchanged());
        }
    }

    #[test]
    fn arbitrary_text_never_panics_and_ok_means_json(text in prop_oneof![
        any::<String>(),
        r#"[\[\]{}"',: \n\\/*#.`()a-zTNu0-9“”‘’…-]{0,40}"#,
    ]) {
        if let Ok(repaired) = repair(&text) {
            assert_json(repaired.json())?;
            if repaired.is_unchanged() {
                prop_assert_eq!(repaired.json(), text.as_str());
            }
            for r in repaired.repairs() {
                prop_assert!(r.at <= text.len());
            }
        }
    }

    /// A text that looks like one string literal comes back unchanged
    /// exactly when it is JSON: the check that decodes a top-level string
    /// in one pass agrees with serde_json on escapes (`\u+abc`, lone
    /// surrogates), raw quotes and control characters.
    #[test]
    fn a_string_literal_is_unchanged_exactly_when_it_is_json(
        content in prop::collection::vec(prop_oneof![
            r#"\\u[+\-0-9a-fA-FdD]{0,4}"#,
            r#"\\[ "\\/bfnrtux]"#,
            r#"[a-z{}\[\]:, é"\n\t\x00]"#,
        ], 0..6).prop_map(|pieces| pieces.concat()),
        pad in r#"[ \n\t\x0c]{0,2}"#,
    ) {
        let text = format!("{pad}\"{content}\"{pad}");
        let valid = serde_json::from_str::<serde::de::IgnoredAny>(&text).is_ok();
        match repair(&text) {
            Ok(repaired) if repaired.is_unchanged() => {
                prop_assert!(valid, "{:?} came back unchanged but is not JSON", text);
                prop_assert_eq!(repaired.json(), text.as_str());
            }
            Ok(repaired) => {
                assert_json(repaired.json())?;
                let stringified = repaired.repairs().iter().all(|r| r.kind == RepairKind::StringifiedJson);
                prop_assert!(!valid || stringified, "valid {:?} changed: {}", text, repaired);
            }
            Err(_) => prop_assert!(!valid, "valid {:?} refused", text),
        }
    }

    #[test]
    fn damaged_json_never_panics_and_ok_means_json(
        value in value(),
        edits in prop::collection::vec((any::<usize>(), any::<u8>(), json_char()), 1..4),
        pretty in any::<bool>(),
    ) {
        let text = if pretty { serde_json::to_string_pretty(&value) } else { serde_json::to_string(&value) }.unwrap();
        let damaged = mutate(&text, &edits);
        if let Ok(repaired) = repair(&damaged) {
            assert_json(repaired.json())?;
            if repaired.is_unchanged() {
                prop_assert_eq!(repaired.json(), damaged.as_str());
            }
        }
    }

    #[test]
    fn sloppy_json_repairs_to_the_same_value(value in value(), choices in prop::collection::vec(any::<u8>(), 64)) {
        prop_assume!(!is_stringified(&value));
        let mut sloppy = String::new();
        write_sloppy(&value, &mut choices.into_iter().cycle(), &mut sloppy);
        let repaired = repair(&sloppy).unwrap();
        let back: Value = serde_json::from_str(repaired.json()).unwrap();
        prop_assert_eq!(&back, &value, "from {:?} to {:?}", sloppy, repaired.json());
        // Wrapped in a fence with prose around, the same value.
        let fenced = format!("Here are the arguments:\n```json\n{sloppy}\n```\nDone.");
        let repaired = repair(&fenced).unwrap();
        let back: Value = serde_json::from_str(repaired.json()).unwrap();
        prop_assert_eq!(&back, &value, "from {:?} to {:?}", fenced, repaired.json());
        prop_assert!(repaired.repairs().iter().any(|r| r.kind == RepairKind::MarkdownFence));
    }

    #[test]
    fn truncated_json_keeps_every_finished_member(
        members in prop::collection::vec(("[a-z]{1,6}", value()), 1..6),
        cut in any::<prop::sample::Index>(),
    ) {
        // A truncated object: each member the text finished (its `,` or `}` is
        // there) is kept with its value; the key the text stopped in or after
        // is kept as far as it goes, with null if its value never began; no
        // other key is made up.
        let object: Map<String, Value> = members.into_iter().collect();
        let mut text = String::from("{");
        let mut ends = Vec::new();
        for (i, (key, member)) in object.iter().enumerate() {
            if i > 0 {
                text.push(',');
            }
            let key_at = text.len();
            text.push_str(&serde_json::to_string(key).unwrap());
            text.push(':');
            text.push_str(&serde_json::to_string(member).unwrap());
            ends.push((key, member, key_at, text.len()));
        }
        text.push('}');
        let mut cut = cut.index(text.len()) + 1;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        // A cut inside a string whose text reads as JSON (`"a\": \"}`) has
        // two readings, a string cut short or one that lacks its quote: that
        // is refused, never guessed (rare: none in 12,000 cases, one in 20,000;
        // `tests/repair_agreement.rs` holds every truncation of its corpus
        // to a repair). Any other error, or a lost member, fails.
        let repaired = match repair(&text[..cut]) {
            Ok(repaired) => repaired,
            Err(e) if e.kind() == RepairErrorKind::Unrepairable => return Ok(()),
            Err(e) => panic!("{:?}: {e}", &text[..cut]),
        };
        let back: Value = serde_json::from_str(repaired.json()).unwrap();
        let back = back.as_object().unwrap();
        // The one unfinished member: its key, or the part of it the text has.
        let unfinished = ends.iter().find(|&&(_, _, key_at, end)| key_at < cut && cut <= end);
        for &(key, member, _, end) in &ends {
            // A key cut short to an earlier key (`{"z": 1, "z` of `"za"`)
            // is that key again, whose last value a map keeps.
            let shadowed = unfinished.is_some_and(|&(cut_key, ..)| cut_key.starts_with(key.as_str()));
            if cut > end && !shadowed {
                prop_assert_eq!(back.get(key), Some(member), "{:?} lost {:?}", &text[..cut], key);
            }
        }
        for got in back.keys() {
            let finished = object.contains_key(got);
            let cut_short = unfinished.is_some_and(|&(key, ..)| key.starts_with(got.as_str()));
            prop_assert!(finished || cut_short, "{:?} invented {:?}", &text[..cut], got);
        }
    }
}

#[path = "repair_corpus/lossless.rs"]
mod lossless;
mod support;

use lossless::{Damage, CHARS, INSERTS};
use support::rng::Rng;

/// Documents we did not write: real payloads and test data of other
/// projects (sources and licences in `tests/repair_corpus/README.md`).
const REAL: &[(&str, &str)] = &[
    (
        "rmcp list_tools_result",
        include_str!("repair_corpus/real/rmcp_list_tools_result.json"),
    ),
    (
        "idna punycode_tests",
        include_str!("repair_corpus/real/idna_punycode_tests.json"),
    ),
    (
        "schemars main.schema",
        include_str!("repair_corpus/real/schemars_main.schema.json"),
    ),
    (
        "url setters_tests",
        include_str!("repair_corpus/real/url_setters_tests.json"),
    ),
    (
        "json_repair valid (head)",
        include_str!("repair_corpus/real/json_repair_valid_head.json"),
    ),
    (
        "octokit commit_comment.created",
        include_str!("repair_corpus/real/octokit_commit_comment_created.json"),
    ),
];

/// The document on one line: whitespace outside strings removed, so that a
/// `//` comment runs to the end of the text.
fn minified(doc: &str) -> String {
    let mut out = String::with_capacity(doc.len());
    let (mut in_string, mut escaped) = (false, false);
    for c in doc.chars() {
        if in_string {
            out.push(c);
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
        } else if !c.is_whitespace() {
            in_string = c == '"';
            out.push(c);
        }
    }
    out
}

fn random_damage(rng: &mut Rng, len: usize) -> Damage {
    let at = rng.below(len + 1);
    let kind = rng.below(8);
    let char = CHARS[rng.below(CHARS.len())].to_string();
    match kind {
        0 => Damage::Delete(at),
        1 => Damage::Duplicate(at),
        2 => Damage::Swap(at),
        3 => Damage::Truncate(at),
        4 | 5 => Damage::Insert(at, INSERTS[rng.below(INSERTS.len())].to_string()),
        6 => Damage::Insert(at, char),
        _ => Damage::Replace(at, char),
    }
}

/// Real JSON damaged in one place, in ways no generator of ours designed:
/// every key, string, number and literal the damage did not touch comes
/// back, in order, as the same key or value, or the text is refused; the
/// output is JSON; most damage is repaired rather than refused.
///
/// 3,000 damages from a fixed seed; `REPAIR_DAMAGES=20000
/// REPAIR_DAMAGE_SEED=7 cargo test --release --test repair_props` runs
/// more, from another seed.
#[test]
fn damaged_real_json_loses_no_untouched_token() {
    let docs: Vec<(&str, String)> = REAL
        .iter()
        .flat_map(|&(name, doc)| [(name, doc.to_string()), (name, minified(doc))])
        .collect();
    let seed = std::env::var("REPAIR_DAMAGE_SEED").map_or(0x1055_1E55, |s| s.parse().unwrap());
    let mut rng = Rng(seed);
    let (mut repaired, mut refused) = (0usize, 0usize);
    let mut failures = Vec::new();
    let damages: usize = std::env::var("REPAIR_DAMAGES").map_or(3_000, |s| s.parse().unwrap());
    for _ in 0..damages {
        let (name, doc) = &docs[rng.below(docs.len())];
        let damage = random_damage(&mut rng, doc.len());
        let (damaged, edit) = lossless::damage(doc, &damage);
        match repair(&damaged) {
            Ok(output) => {
                repaired += 1;
                assert_json(output.json()).unwrap();
                if let Err(lost) = lossless::check(doc, edit, &damaged, &output) {
                    let from = edit.at.saturating_sub(40);
                    let mut from = from.min(damaged.len());
                    while !damaged.is_char_boundary(from) {
                        from -= 1;
                    }
                    let mut to = (edit.at + 60).min(damaged.len());
                    while !damaged.is_char_boundary(to) {
                        to -= 1;
                    }
                    failures.push(format!(
                        "{name}, {damage:?}: {lost}\n  near {:?}\n  record: {output}",
                        &damaged[from..to]
                    ));
                }
            }
            Err(error) => {
                refused += 1;
                assert!(error.at() <= damaged.len());
            }
        }
    }
    eprintln!("damaged real JSON: {repaired} repaired, {refused} refused");
    no_lossy_repairs(&failures);
    assert!(
        repaired * 2 > refused * 3,
        "{repaired} repaired, {refused} refused"
    );
}

/// The objects and arrays inside `value` (itself too) whose JSON, compact
/// or pretty-printed, is 20 to 120 bytes long.
fn small_parts(value: &Value, out: &mut Vec<String>) {
    let items: Vec<&Value> = match value {
        Value::Array(items) => items.iter().collect(),
        Value::Object(members) => members.values().collect(),
        _ => return,
    };
    for text in [
        serde_json::to_string(value).unwrap(),
        serde_json::to_string_pretty(value).unwrap(),
    ] {
        if (20..=120).contains(&text.len()) {
            out.push(text);
        }
    }
    for item in items {
        small_parts(item, out);
    }
}

/// Every damage the fuzz target chooses from (each kind, each insert and
/// character), at every byte, of small parts of the real documents (every
/// 12th object or array of 20 to 120 bytes, compact and pretty-printed):
/// no repair loses an untouched token. Random damage rarely hits the one
/// byte that matters, such as the closing bracket of a pretty-printed
/// object (`"x"\n}` with the `}` replaced: the quote before the line break
/// was once taken for text).
#[test]
fn every_single_damage_to_small_real_values_loses_no_token() {
    let mut parts = Vec::new();
    for (_, doc) in REAL {
        small_parts(&serde_json::from_str(doc).unwrap(), &mut parts);
    }
    parts.sort();
    parts.dedup();
    let (repaired, refused, failures) = every_single_damage(parts.iter().step_by(12));
    eprintln!("every single damage: {repaired} repaired, {refused} refused");
    no_lossy_repairs(&failures);
    assert!(
        repaired > refused * 2,
        "{repaired} repaired, {refused} refused"
    );
}

/// Every single damage, at every byte, to each fuzz seed of the repair
/// target (`fuzz/seeds/repair/`) that is a JSON document (with the eight
/// bytes the target reads its damage from, or without): no repair loses an
/// untouched token. The seeds are the repair corpus's inputs and the
/// fuzzer's findings; run over the fuzzer's grown corpus (`fuzz/corpus/`,
/// not committed), the same sweep found the lossy repairs now refused in
/// `tests/repair.rs`.
#[test]
fn every_single_damage_to_the_fuzz_seeds_loses_no_token() {
    let mut docs = std::collections::BTreeSet::new();
    for entry in std::fs::read_dir("fuzz/seeds/repair").unwrap() {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        for cut in [0, 8] {
            let Some(doc) = bytes.len().checked_sub(cut).map(|len| &bytes[..len]) else {
                continue;
            };
            if let Ok(doc) = std::str::from_utf8(doc) {
                if (1..=160).contains(&doc.len()) && serde_json::from_str::<IgnoredAny>(doc).is_ok()
                {
                    docs.insert(doc.to_owned());
                }
            }
        }
    }
    assert!(
        docs.len() >= 15,
        "{} JSON documents among the seeds",
        docs.len()
    );
    let (_, _, failures) = every_single_damage(&docs);
    no_lossy_repairs(&failures);
}

/// Every damage the fuzz target chooses from (each kind, each insert and
/// character) at every byte of each of `docs` ([`lossless::sweep`]): how
/// many repairs were made and refused, and the lossy ones.
fn every_single_damage<'a>(
    docs: impl IntoIterator<Item = &'a String>,
) -> (usize, usize, Vec<String>) {
    let (mut repaired, mut refused) = (0usize, 0usize);
    let mut failures = Vec::new();
    for doc in docs {
        let swept = lossless::sweep(doc);
        repaired += swept.repaired;
        refused += swept.refused;
        for lossy in swept.lossy {
            failures.push(format!(
                "{:?} of {doc:?}: {}\n  output: {:?}",
                lossy.damage, lossy.lost, lossy.output
            ));
        }
    }
    (repaired, refused, failures)
}

/// Fails with the first 25 of `failures`, the lossy repairs found, if any.
fn no_lossy_repairs(failures: &[String]) {
    assert!(
        failures.is_empty(),
        "{} lossy repairs:\n{}",
        failures.len(),
        failures[..failures.len().min(25)].join("\n")
    );
}
