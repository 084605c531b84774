//! The corpus: answers written the way models slip when they write plans
//! (`tests/plans/NNN_category_what.plan`, each an answer as a model sends
//! it: prose, fences, declarations and all), each with its verdict and the
//! exact message the model is told (`NNN_category_what.expected`, next to
//! it). Categories: a missing `Err` branch, a retry written as a loop,
//! `exec` inside `map`, a misspelled tool, a field of the wrong record, a
//! string where an Int is due, `null`, Python (and JavaScript) mixed in, a
//! plan wrapped in prose or fences, and others.
//!
//! `BLESS=1 cargo test --test plan_corpus` rewrites the `.expected` files
//! from what the code says now; review the diff before committing it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures::executor::block_on;
use schemars::JsonSchema;
use serde::Serialize;
use typed_tools::model::{Response, ScriptedModel};
use typed_tools::plan::author::AnswerError;
use typed_tools::plan::Author;
use typed_tools::{tool, Toolbox};

mod support;

use support::{Charge, FormatCents, IssueRefund, LookupAccount, SendReply, Shop, SUPPORT_AGENT};

#[derive(Serialize, JsonSchema)]
struct Order {
    id: i64,
    amount: i64,
    status: String,
}

/// List a customer's orders; amounts in cents.
#[tool(effects = Read)]
fn list_orders(customer: String) -> Result<Vec<Order>, String> {
    Err(format!("no orders for {customer}"))
}

/// The support agent's tools, `charge`, `format_cents` and `list_orders`.
fn toolbox() -> (Toolbox, Arc<Shop>) {
    let shop = Arc::new(Shop::default());
    let toolbox = Toolbox::builder()
        .tool(LookupAccount::new(Arc::clone(&shop)))
        .tool(IssueRefund::new(Arc::clone(&shop)))
        .tool(SendReply::new(Arc::clone(&shop)))
        .tool(Charge::new(Arc::clone(&shop)))
        .tool(FormatCents)
        .tool(ListOrders)
        .build()
        .unwrap();
    (toolbox, shop)
}

/// Each answer of the corpus: its name (the file stem) and its text.
fn corpus() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/plans");
    let mut answers: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "plan"))
        .map(|path| {
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&path).unwrap())
        })
        .collect();
    answers.sort();
    answers
}

fn expected_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/plans")
        .join(format!("{name}.expected"))
}

/// The kinds of slip the corpus must hold (and those of answers wrapped in
/// prose or fences), each in at least three cases.
const SLIPS: [&str; 9] = [
    "missing_err",
    "loop",
    "exec_in",
    "misspelled_tool",
    "wrong_field",
    "string_for_int",
    "null",
    "python",
    "wrapped",
];

/// The category of a case: what its name says after the number.
fn category(name: &str) -> &str {
    let rest = name.split_once('_').map_or(name, |(_, rest)| rest);
    let mut categories = ["ok", "js", "other"].into_iter().chain(SLIPS);
    categories
        .find(|c| rest.starts_with(c))
        .unwrap_or_else(|| panic!("{name}: no category"))
}

fn kind(error: &AnswerError) -> &'static str {
    match error {
        AnswerError::NoPlan => "no plan",
        AnswerError::EmptyFence => "empty fence",
        AnswerError::Parse { .. } => "parse error",
        AnswerError::Json(_) => "JSON error",
        AnswerError::Refused { .. } => "refused",
        _ => "other",
    }
}

/// The verdict on one answer, as the `.expected` files write it: `ok` with
/// the preview, or the kind of refusal and the message the model is told.
fn verdict(author: &Author<'_>, answer: &str) -> String {
    match author.check_answer(&Response::new(answer)) {
        Ok((_, preview)) => format!("verdict: ok\npreview:\n{preview}"),
        Err(error) => format!(
            "verdict: {}\nthe model is told:\n{}\n",
            kind(&error),
            error.for_model()
        ),
    }
}

#[test]
fn every_answer_gets_its_verdict_and_message() {
    let (toolbox, shop) = toolbox();
    let author = Author::new(&toolbox);
    let bless = std::env::var_os("BLESS").is_some();
    let mut wrong = Vec::new();
    for (name, answer) in corpus() {
        let got = verdict(&author, &answer);
        let path = expected_path(&name);
        if bless {
            std::fs::write(&path, &got).unwrap();
            continue;
        }
        let expected = std::fs::read_to_string(&path)
            .unwrap_or_else(|_| panic!("{name}: no {name}.expected; run with BLESS=1"));
        if got != expected {
            wrong.push(format!("--- {name}\nexpected:\n{expected}\ngot:\n{got}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // Reading and checking ran nothing.
    assert!(support::calls(&shop).is_empty());
}

#[test]
fn the_corpus_has_sixty_slips_in_every_category() {
    let corpus = corpus();
    let (toolbox, _) = toolbox();
    let author = Author::new(&toolbox);
    let slips = corpus
        .iter()
        .filter(|(_, answer)| {
            author
                .check_answer(&Response::new(answer.as_str()))
                .is_err()
        })
        .count();
    assert!(slips >= 60, "{slips} refused answers");
    for wanted in SLIPS {
        let cases = corpus
            .iter()
            .filter(|(name, _)| category(name) == wanted)
            .count();
        assert!(cases >= 3, "{wanted}: {cases} cases");
    }
    // Each `.expected` file belongs to an answer.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/plans");
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "expected") {
            let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
            assert!(corpus.iter().any(|(name, _)| *name == stem), "{stem}");
        }
    }
}

/// The loop on every refused answer of the corpus, with scripted replies:
/// the slip, then the support agent. The first attempt is refused with the
/// corpus's message, which is exactly what the model is sent; the second
/// checks; nothing ran.
#[test]
fn each_slip_is_fixed_on_the_second_attempt() {
    let (toolbox, shop) = toolbox();
    let author = Author::new(&toolbox);
    let fixed = format!("Fixed:\n```lambda-tool\n{SUPPORT_AGENT}\n```");
    let mut slips = 0;
    for (name, answer) in corpus() {
        let Err(error) = author.check_answer(&Response::new(answer.as_str())) else {
            continue;
        };
        slips += 1;
        let model = ScriptedModel::new([answer.as_str(), fixed.as_str()]);
        let authored = block_on(author.write(&model, "Refund customer cust_12345's last charge."))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(authored.attempts.len(), 2, "{name}");
        assert_eq!(authored.attempts[0].error.as_ref(), Some(&error), "{name}");
        assert!(authored.attempts[1].error.is_none(), "{name}");
        let requests = model.requests();
        let sent = requests[1].messages.last().unwrap().text();
        assert_eq!(sent, error.for_model(), "{name}");
        let expected = std::fs::read_to_string(expected_path(&name)).unwrap();
        assert!(expected.ends_with(&format!("{sent}\n")), "{name}");
        // The slip itself is in the conversation, as the model wrote it.
        assert_eq!(requests[1].messages[2].text(), answer, "{name}");
    }
    assert!(slips >= 60);
    assert!(support::calls(&shop).is_empty());
}

/// A `map` written as `fold`'s list without its parentheses: the message
/// writes the argument as it must be, and that text, put in place of what
/// the model wrote, makes a plan that checks. What the model needs to fix
/// it on the next attempt is in the message.
#[test]
fn the_parenthesized_argument_a_parse_error_writes_makes_the_plan_check() {
    let (toolbox, shop) = toolbox();
    let author = Author::new(&toolbox);
    let (_, answer) = corpus()
        .into_iter()
        .find(|(name, _)| name == "123_other_combinator_as_argument")
        .expect("the case");
    let told = author
        .check_answer(&Response::new(answer.as_str()))
        .unwrap_err()
        .for_model();
    let fix = told
        .trim_end()
        .rsplit_once("write `")
        .and_then(|(_, fix)| fix.strip_suffix('`'))
        .expect("a fix in the message");
    let wrote = "map (fn o: {id: Int, amount: Int, status: String} => o.amount) \
                 filter (fn o => o.status == \"paid\") orders";
    assert!(answer.contains(wrote));
    let fixed = answer.replace(wrote, fix);
    let (plan, _) = author
        .check_answer(&Response::new(fixed.as_str()))
        .unwrap_or_else(|error| panic!("{}", error.for_model()));
    assert!(plan.to_string().contains(
        "fold (fn total, n => total + n) 0 (map (fn o: {id: Int, amount: Int, status: String} => o.amount) \
         (filter (fn o => o.status == \"paid\") orders))"
    ));
    assert!(support::calls(&shop).is_empty());
}
