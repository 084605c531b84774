//! Plans written by a model: the prompt (generated, every example in it
//! parsed and checked, its size for 10 and 50 tools), and the
//! fix-and-resubmit loop with scripted replies: a slip fixed on the second
//! attempt, one never fixed, the token budget spent mid-way, the model
//! failing, a JSON answer through the native `submit_plan` tool, and a model
//! that is not a `ScriptedModel`. Nothing runs until a plan checks.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::executor::block_on;
use futures::future::BoxFuture;
use typed_tools::effect::EffectSet;
use typed_tools::model::{
    estimate_tokens, Message, Model, ModelError, Request, Response, Role, ScriptedModel, Usage,
};
use typed_tools::plan::author::{find_plan, read_plan, AnswerError, AuthorError, Written};
use typed_tools::plan::json::{self, SUBMIT_TOOL};
use typed_tools::plan::prompt::{example_toolbox, EXAMPLES, FENCE, SYNTAX};
use typed_tools::plan::{check, Author, Interpreter, ParseOptions, Plan, PlanPrompt};
use typed_tools::{CatalogFormat, ToolCall};

mod support;

#[path = "../benches/support/catalog50.rs"]
mod catalog50;

use support::SUPPORT_AGENT;

const TASK: &str = "Refund customer cust_12345's last charge and tell them.";

fn fenced(plan: &str) -> String {
    format!("Here is the plan.\n\n```{FENCE}\n{plan}\n```\n")
}

/// The support agent with `account.plan`, λ-Tool's own example of a slip.
fn slip() -> String {
    SUPPORT_AGENT.replace(
        "amount = account.last_charge_cents",
        "amount = account.plan",
    )
}

// ---------------------------------------------------------------- the prompt

/// The blocks of the prompt's examples, found as a model's answer is.
fn example_blocks(prompt: &str) -> Vec<&str> {
    let examples = &prompt[prompt.find("# Examples").unwrap()..];
    examples
        .split("\nTask: ")
        .skip(1)
        .map(|example| match find_plan(example) {
            Some(Written::Text(text)) => text,
            other => panic!("{other:?}"),
        })
        .collect()
}

#[test]
fn every_example_in_the_prompt_parses_and_checks_against_its_toolbox() {
    // Whatever toolbox the prompt is for, the examples are the same, over
    // the example toolbox, with their tools declared from its catalog.
    for toolbox in [catalog50::toolbox(10), example_toolbox()] {
        let prompt = PlanPrompt::new(&toolbox).to_string();
        let blocks = example_blocks(&prompt);
        assert_eq!(blocks.len(), EXAMPLES.len());
        let examples = example_toolbox();
        for (block, example) in blocks.iter().zip(EXAMPLES) {
            let plan = Plan::parse(block).unwrap_or_else(|e| panic!("{e}\n{block}"));
            assert_eq!(plan, Plan::parse(example.plan).unwrap());
            check(&plan, &examples).unwrap_or_else(|e| panic!("{e}\n{block}"));
            // The declarations are the example toolbox's own lines.
            for line in block.lines().filter(|l| l.starts_with("tool ")) {
                let name = line["tool ".len()..].split(':').next().unwrap();
                let spec = examples.spec(name).unwrap();
                let own = typed_tools::catalog::render_tool(CatalogFormat::Text, spec);
                assert_eq!(line, own.as_str().unwrap());
            }
        }
        // Every syntax snippet is in the prompt, and parses.
        for (snippet, _) in SYNTAX {
            assert!(prompt.contains(snippet), "{snippet}");
            Plan::parse(snippet).unwrap();
        }
    }
}

#[test]
fn the_prompt_lists_the_allowed_tools_and_says_how_to_answer() {
    let toolbox = example_toolbox();
    let prompt = PlanPrompt::new(&toolbox).to_string();
    let tools = &prompt[prompt.find("# Tools").unwrap()..prompt.find("# Syntax").unwrap()];
    assert_eq!(tools.matches("\ntool ").count(), 6);
    assert!(!prompt.contains(SUBMIT_TOOL));
    let reads = PlanPrompt::new(&toolbox.restrict(EffectSet::READ)).to_string();
    let tools = &reads[reads.find("# Tools").unwrap()..reads.find("# Syntax").unwrap()];
    // The reads, and the pure function.
    assert_eq!(tools.matches("\ntool ").count(), 3, "{tools}");
    assert!(!tools.contains("issue_refund"));
    let offered = PlanPrompt::new(&toolbox).submit_tool(true).to_string();
    assert!(offered.contains(&format!("or call the tool `{SUBMIT_TOOL}`")));
    // The error record the rules describe is the one a run binds.
    assert!(prompt.contains("{tool: String, kind: String, message: String}"));
    let plan = Plan::parse(
        r#"match exec tool issue_refund {account_id = "c1", amount = 1} { Ok(r) => "ok", Err(e) => e.kind }"#,
    )
    .unwrap();
    let interpreter = Interpreter::new(&toolbox)
        .approve_writes(|_| typed_tools::plan::Decision::Refuse("no".into()));
    let outcome = block_on(interpreter.run(&plan)).unwrap().outcome.unwrap();
    assert_eq!(outcome.to_string(), "\"refused\"");
    assert!(prompt.contains("`\"refused\"` when the call was not approved"));
}

/// The prompt's size: bytes / 4 (`estimate_tokens`) and 4 tokens per 3
/// words, for 10 and 50 tools. `cargo test --test plan_author -- --nocapture`
/// prints them.
#[test]
fn the_prompt_for_10_and_50_tools_stays_small() {
    let mut sizes = Vec::new();
    for n in [10, 50] {
        let toolbox = catalog50::toolbox(n);
        let prompt = PlanPrompt::new(&toolbox).to_string();
        let bytes = estimate_tokens(&prompt);
        let words = (prompt.split_whitespace().count() as u64 * 4).div_ceil(3);
        eprintln!(
            "prompt for {n} tools: {} bytes, ~{bytes} tokens (bytes/4), ~{words} tokens (words*4/3)",
            prompt.len()
        );
        sizes.push(bytes);
    }
    assert!(sizes[0] < 3_000, "{sizes:?}");
    assert!(sizes[1] < 7_000, "{sizes:?}");
    // What grows with the toolbox is its catalog, a line a tool.
    let per_tool = (sizes[1] - sizes[0]) / 40;
    assert!(per_tool < 80, "{per_tool} tokens a tool");
}

// ------------------------------------------------------ finding the plan

/// Prose is no plan, however it starts: a numbered list ("1. Create an
/// async ..." had been read as a plan and refused at `an`), lowercase
/// sentences, bullets. The model is told to send a plan.
#[test]
fn prose_and_numbered_lists_are_no_plan() {
    let no_plan = "no plan found in your answer, nothing ran; write the whole plan in one fenced block that starts with ```lambda-tool";
    for answer in [
        "Here is how:\n\n1. Create an async function that looks the account up.\n2. Refund the last charge.\n3. Reply to the customer.",
        "1. Create an async task\n2) Then refund it",
        "  10. Look the account up.",
        "sure, here it is: i'd look the account up first, then refund it.",
        "- look the account up\n- refund it",
    ] {
        assert_eq!(find_plan(answer), None, "{answer}");
        let error = read_plan(answer, &ParseOptions::default()).unwrap_err();
        assert_eq!(error.for_model(), no_plan, "{answer}");
    }
    // A plan after a numbered list is found; so is code that is no prose.
    let answer = format!("The steps:\n1. Look up.\n2. Refund.\n\n{SUPPORT_AGENT}");
    assert_eq!(find_plan(&answer), Some(Written::Text(SUPPORT_AGENT)));
    assert!(find_plan("while true { retry }").is_some());
    assert!(find_plan("for x in [1, 2]: x").is_some());
}

/// A plan written over several lines without a fence is found whole: a
/// line that goes on with it (indented under its first line, inside its
/// brackets, after an operator) is the plan's, whatever list marker it
/// starts with. (`+ 2` and `2)` had ended the plan there, and the model was
/// told "expected `in` ... found the end of the plan".) A list marker where
/// a plan could start still ends it.
#[test]
fn a_wrapped_plan_is_found_whole() {
    let options = ParseOptions::default();
    for (answer, plan) in [
        (
            "let total = 1\n  + 2 in total",
            "let total = 1 + 2 in total",
        ),
        (
            "fold (fn acc, x => acc + x) (0 +\n2) [1]",
            "fold (fn acc, x => acc + x) (0 + 2) [1]",
        ),
        (
            "let total = 1 +\n- 2 in total",
            "let total = 1 + -2 in total",
        ),
    ] {
        assert_eq!(find_plan(answer), Some(Written::Text(answer)), "{answer}");
        let read = read_plan(answer, &options).unwrap_or_else(|e| panic!("{answer}: {e}"));
        assert_eq!(read, Plan::parse(plan).unwrap(), "{answer}");
    }
    // Where a plan could start again, a list marker is prose: the plan
    // ends before it.
    let then_a_list = "let x = 1 in\n  x\n- it returns one\n2. and nothing else";
    assert_eq!(
        find_plan(then_a_list),
        Some(Written::Text("let x = 1 in\n  x\n"))
    );
}

/// An empty fenced block, or a lone fence, holds no plan, and the model is
/// told so (it had been an empty plan: "line 1, column 1: expected an
/// expression"); a plan before a lone closing fence is read.
#[test]
fn an_empty_fence_is_no_plan_and_the_model_is_told_so() {
    let told = "the fenced block in your answer holds no plan (it is empty, or a ``` with nothing after it), nothing ran; write the whole plan inside one fenced block: ```lambda-tool, the plan, then ```";
    for answer in [
        "```",
        "Here it is:\n```lambda-tool\n```",
        "```lambda-tool\n\n```\nDone.",
        "Here:\n```\n",
        "1. Look the account up.\n```",
    ] {
        assert_eq!(find_plan(answer), None, "{answer:?}");
        let error = read_plan(answer, &ParseOptions::default()).unwrap_err();
        assert_eq!(error.for_model(), told, "{answer:?}");
    }
    let answer = format!("{SUPPORT_AGENT}\n```");
    assert_eq!(
        find_plan(&answer),
        Some(Written::Text(&answer[..SUPPORT_AGENT.len() + 1]))
    );
    let plan = read_plan(&answer, &ParseOptions::default()).unwrap();
    assert_eq!(plan, Plan::parse(SUPPORT_AGENT).unwrap());
}

#[test]
fn a_json_plan_is_found_within_the_size_limit_and_refused_past_it_unread() {
    let plan = r#"{"plan": {"kind": "list", "items": [{"kind": "int", "value": 1}]}}"#;
    let answer = format!("Here:\n{plan}\nIt gives [1].");
    assert_eq!(find_plan(&answer), Some(Written::Json(plan)));
    // The end of the JSON is looked for within the limit: past it, the
    // block is the whole of what was found (the JSON and its line's end),
    // and the reader refuses it by its size.
    let small = ParseOptions::default().max_bytes(32);
    let error = read_plan(&answer, &small).unwrap_err();
    assert_eq!(
        error.for_model(),
        "the plan's JSON does not read as a plan, nothing ran; fix it and send the whole plan \
         again:\n- $: the plan is 67 bytes long, more than the 32 allowed; write a shorter plan"
    );
    let within = ParseOptions::default().max_bytes(plan.len());
    assert_eq!(read_plan(&answer, &within).unwrap().to_string(), "[1]");
}

#[test]
fn a_json_plan_that_gives_a_key_twice_is_refused_with_the_keys_path() {
    // The plan shown and the plan run could differ (serde_json keeps the
    // last, another reader the first): refused, whichever key it is.
    for (answer, path) in [
        (
            r#"{"plan": {"kind": "unit"}, "plan": {"kind": "int", "value": 1}}"#,
            "$.plan",
        ),
        (
            r#"{"plan": {"kind": "int", "value": 1, "value": 2}}"#,
            "$.plan.value",
        ),
        (
            r#"{"plan": {"kind": "list", "items": [{"kind": "var", "name": "a", "name": "b"}]}}"#,
            "$.plan.items[0].name",
        ),
    ] {
        let AnswerError::Json(error) = read_plan(answer, &ParseOptions::default()).unwrap_err()
        else {
            panic!("{answer}")
        };
        assert_eq!(error.path, path, "{answer}");
        assert_eq!(
            error.message,
            "this key is given twice in its object; give each key once"
        );
        // Through `submit_plan` too.
        assert_eq!(json::from_str(answer).unwrap_err(), error);
    }
}

/// Fences open and close as the call readers read them (CommonMark): a
/// fence closes only at one of its character at least as long, with no
/// info string, and ```` ```x``` ```` on one line is inline code, not a
/// fence. (A one-line ```` ```note``` ```` had opened a block that the
/// plan's own fence closed, and a fence inside a longer one closed it.)
#[test]
fn fences_are_read_as_the_call_readers_read_them() {
    let one_line = "```note```\n```lambda-tool\nlet x = 1 in\n  x + 1\n```\nIt adds one.";
    assert_eq!(
        find_plan(one_line),
        Some(Written::Text("let x = 1 in\n  x + 1\n"))
    );
    let nested = "````lambda-tool\n(* fenced as\n```lambda-tool\n*)\n1 + 2\n````";
    assert_eq!(
        find_plan(nested),
        Some(Written::Text("(* fenced as\n```lambda-tool\n*)\n1 + 2\n"))
    );
    let plan = read_plan(nested, &ParseOptions::default()).unwrap();
    assert_eq!(plan.to_string(), "1 + 2");
}

/// The text at a line and column (both from 1, the column in characters)
/// of `answer`.
fn at(answer: &str, line: usize, column: usize) -> &str {
    let start = answer
        .split_inclusive('\n')
        .take(line - 1)
        .map(str::len)
        .sum::<usize>();
    let rest = &answer[start..];
    let skip = rest
        .char_indices()
        .nth(column - 1)
        .map_or(rest.len(), |(i, _)| i);
    &rest[skip..]
}

/// `line L, column C` (λ-Tool) or `line L column C` (JSON) in a message.
fn position(message: &str) -> (usize, usize) {
    let rest = &message[message.find("line ").unwrap() + 5..];
    let numbers: Vec<usize> = rest
        .split(|c: char| !c.is_ascii_digit())
        .filter(|n| !n.is_empty())
        .take(2)
        .map(|n| n.parse().unwrap())
        .collect();
    (numbers[0], numbers[1])
}

/// Every error's line and column are the answer's, as the model wrote it:
/// not the block's the plan was taken out of (they had counted from the
/// extracted text, which the model never saw).
#[test]
fn errors_point_into_the_answer_as_the_model_wrote_it() {
    let options = ParseOptions::default();
    // λ-Tool text, fenced after prose: `,` on the block's second line.
    let fenced = "Here is the plan:\n\n```lambda-tool\nmatch exec tool lookup_account {id = \"c1\"} {\n  Ok(a) => a.email +,\n  Err(e) => e.message\n}\n```";
    // Unfenced and indented after prose: the end of the plan.
    let indented = "I'll write it:\n\n   let x = 1 in x +";
    // The JSON form, fenced and unfenced: the `}` after a trailing comma.
    let json_fenced = "Here it is:\n```json\n{\"plan\": {\"kind\": \"int\", \"value\": 1,}}\n```";
    let json_indented = "Plan below.\n\n    {\"plan\": {\"kind\": \"int\", \"value\": 1,}}";
    for (answer, expected, there) in [
        (fenced, (5, 21), ","),
        (indented, (3, 20), ""),
        (json_fenced, (3, 37), "}}"),
        (json_indented, (3, 41), "}}"),
    ] {
        let told = read_plan(answer, &options).unwrap_err().for_model();
        assert_eq!(position(&told), expected, "{told}");
        // JSON columns count bytes; these lines are ASCII.
        assert!(
            at(answer, expected.0, expected.1).starts_with(there),
            "{told}"
        );
    }
    // What the author's loop sends is the same.
    let (toolbox, _) = support::toolbox(None);
    let model = ScriptedModel::new([fenced.to_owned(), self::fenced(SUPPORT_AGENT)]);
    let authored = block_on(Author::new(&toolbox).write(&model, TASK)).unwrap();
    let told = model.requests()[1]
        .messages
        .last()
        .unwrap()
        .text()
        .to_owned();
    assert!(told.contains("- line 5, column 21: "), "{told}");
    assert_eq!(authored.attempts.len(), 2);
}

// ---------------------------------------------------------------- the loop

#[test]
fn a_slip_fixed_on_the_second_attempt() {
    let (toolbox, shop) = support::toolbox(None);
    let model = ScriptedModel::new([fenced(&slip()), fenced(SUPPORT_AGENT)]);
    let authored = block_on(Author::new(&toolbox).write(&model, TASK)).unwrap();
    // Nothing ran while the plan was written.
    assert!(support::calls(&shop).is_empty());
    assert_eq!(authored.plan, Plan::parse(SUPPORT_AGENT).unwrap());
    assert_eq!(authored.attempts.len(), 2);
    let refused = authored.attempts[0].error.as_ref().unwrap();
    assert!(matches!(refused, AnswerError::Refused { .. }));
    assert!(authored.attempts[1].error.is_none());
    assert_eq!(
        authored.preview.to_string(),
        "lookup_account {Read}: at most once\nissue_refund {Write}: at most once\nsend_reply {Write}: at most once\nin all: at most 3 calls\n"
    );
    // The conversation: the prompt, the task, the slip, every error at once.
    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    let second = &requests[1].messages;
    let roles: Vec<Role> = second.iter().map(Message::role).collect();
    assert_eq!(
        roles,
        [Role::System, Role::User, Role::Assistant, Role::User]
    );
    assert!(second[0].text().contains("# Tools\n"));
    assert!(second[0]
        .text()
        .contains("tool issue_refund: {account_id: String, amount: Int}"));
    assert_eq!(second[1].text(), TASK);
    assert_eq!(second[2].text(), fenced(&slip()));
    assert_eq!(
        second[3].text(),
        "the plan was refused, nothing ran; fix every error and send the whole plan again:\n\
         - `account.plan`: field `plan` not found in record type {id: String, subscription_tier: String, email: String, last_charge_cents: Int}"
    );
    // The usage is the sum of both answers'.
    let spent: u64 = authored
        .attempts
        .iter()
        .map(|a| a.response.usage.total())
        .sum();
    assert_eq!(authored.usage.total(), spent);
    // Now it runs, once each.
    let run = block_on(Interpreter::new(&toolbox).run(&authored.plan)).unwrap();
    assert_eq!(
        run.outcome.unwrap().to_string(),
        "\"refund processed and customer notified\""
    );
    assert_eq!(
        support::tools_called(&shop),
        ["lookup_account", "issue_refund", "send_reply"]
    );
}

#[test]
fn a_slip_never_fixed_exhausts_the_attempts_and_reports_each() {
    let (toolbox, shop) = support::toolbox(None);
    let answers = [
        fenced(&slip()),
        "```\nwhile true { retry }\n```".to_owned(),
        fenced(&SUPPORT_AGENT.replace("lookup_account", "lookup_acount")),
        fenced(SUPPORT_AGENT),
    ];
    let model = ScriptedModel::new(answers.clone());
    let error = block_on(Author::new(&toolbox).attempts(3).write(&model, TASK)).unwrap_err();
    let AuthorError::Attempts { attempts, usage } = &error else {
        panic!("{error}")
    };
    assert_eq!(attempts.len(), 3);
    for (attempt, answer) in attempts.iter().zip(&answers) {
        assert_eq!(&attempt.response.text, answer);
        assert!(attempt.error.is_some());
    }
    assert!(matches!(attempts[1].error, Some(AnswerError::Parse { .. })));
    assert!(attempts[2]
        .error
        .as_ref()
        .unwrap()
        .for_model()
        .contains("did you mean `lookup_account`?"));
    assert_eq!(
        usage.total(),
        attempts
            .iter()
            .map(|a| a.response.usage.total())
            .sum::<u64>()
    );
    // The fourth answer was never asked for; nothing ran.
    assert_eq!(model.remaining(), 1);
    assert!(support::calls(&shop).is_empty());
    // Each request after the first carries the previous answer's errors.
    let requests = model.requests();
    for (i, request) in requests.iter().enumerate().skip(1) {
        let told = request.messages.last().unwrap().text();
        assert_eq!(told, attempts[i - 1].error.as_ref().unwrap().for_model());
    }
    assert!(error.to_string().starts_with(
        "no plan checked in 3 attempts; the last answer was refused: the plan was refused"
    ));
}

#[test]
fn the_token_budget_spent_mid_way_stops_the_loop() {
    let (toolbox, shop) = support::toolbox(None);
    let spend = |tokens| Usage::new(tokens, 100);
    // Each answer costs 4,100 tokens; the budget is 8,000: the second
    // answer spends it, and no third request is sent.
    let model = ScriptedModel::new([
        Response::new(fenced(&slip())).usage(spend(4_000)),
        Response::new(fenced(&slip())).usage(spend(4_000)),
        Response::new(fenced(SUPPORT_AGENT)).usage(spend(4_000)),
    ]);
    let author = Author::new(&toolbox).attempts(5).token_budget(8_000);
    let error = block_on(author.write(&model, TASK)).unwrap_err();
    let AuthorError::Budget {
        budget,
        usage,
        attempts,
    } = &error
    else {
        panic!("{error}")
    };
    assert_eq!((*budget, usage.total(), attempts.len()), (8_000, 8_200, 2));
    assert!(attempts.iter().all(|a| a.error.is_some()));
    assert_eq!(model.requests().len(), 2);
    assert_eq!(model.remaining(), 1);
    assert!(support::calls(&shop).is_empty());
    // Each request's answer may take only what is left.
    let requests = model.requests();
    let asked = |r: &Request| -> u64 { r.messages.iter().map(|m| estimate_tokens(m.text())).sum() };
    assert_eq!(
        requests[0].max_tokens,
        Some((8_000 - asked(&requests[0])) as u32)
    );
    assert_eq!(
        requests[1].max_tokens,
        Some((8_000 - 4_100 - asked(&requests[1])) as u32)
    );

    // Spent so far and the next request's messages past the budget: the
    // request is not sent.
    let model = ScriptedModel::new([
        Response::new(fenced(&slip())).usage(spend(4_000)),
        Response::new(fenced(SUPPORT_AGENT)),
    ]);
    let author = Author::new(&toolbox).attempts(5).token_budget(5_000);
    let error = block_on(author.write(&model, TASK)).unwrap_err();
    assert!(matches!(&error, AuthorError::Budget { attempts, .. } if attempts.len() == 1));
    assert_eq!(model.requests().len(), 1);

    // A budget the prompt alone goes past: nothing is asked.
    let model = ScriptedModel::new([fenced(SUPPORT_AGENT)]);
    let error = block_on(Author::new(&toolbox).token_budget(100).write(&model, TASK)).unwrap_err();
    assert!(matches!(&error, AuthorError::Budget { attempts, .. } if attempts.is_empty()));
    assert!(model.requests().is_empty());
}

#[test]
fn a_model_that_fails_ends_the_loop_with_the_attempts_so_far() {
    let (toolbox, _) = support::toolbox(None);
    let model = ScriptedModel::new([fenced(&slip())]).then_error(ModelError::Timeout {
        after: std::time::Duration::from_secs(30),
    });
    let error = block_on(Author::new(&toolbox).write(&model, TASK)).unwrap_err();
    let AuthorError::Model {
        error: cause,
        attempts,
        ..
    } = &error
    else {
        panic!("{error}")
    };
    assert!(matches!(cause, ModelError::Timeout { .. }));
    assert_eq!(attempts.len(), 1);
    assert_eq!(error.attempts().len(), 1);
}

#[test]
fn a_native_model_answers_in_json_through_submit_plan() {
    let (toolbox, shop) = support::toolbox(None);
    let plan = Plan::parse(SUPPORT_AGENT).unwrap();
    let mut slipped = json::to_value(&plan);
    slipped["plan"]["err"]["body"] = serde_json::json!({"kind": "var", "name": "null"});
    let call = |id: &str, arguments: String| ToolCall {
        id: Some(id.into()),
        name: SUBMIT_TOOL.into(),
        arguments,
    };
    let model = ScriptedModel::new([
        Response::new("").calls(vec![call("call_1", slipped.to_string())]),
        Response::new("").calls(vec![call("call_2", json::to_value(&plan).to_string())]),
    ])
    .native(CatalogFormat::OpenAiChatStrict);
    let authored = block_on(Author::new(&toolbox).write(&model, TASK)).unwrap();
    assert_eq!(authored.plan, plan);
    let requests = model.requests();
    // The submit tool is offered natively, strict, and the prompt says so.
    let tools = requests[0].tools.as_ref().unwrap().to_json();
    assert_eq!(tools[0]["function"]["name"], SUBMIT_TOOL);
    assert_eq!(tools[0]["function"]["strict"], true);
    assert!(requests[0].messages[0]
        .text()
        .contains("or call the tool `submit_plan`"));
    // The errors answer the call, by its id.
    let Message::ToolResult(result) = requests[1].messages.last().unwrap() else {
        panic!("{:?}", requests[1].messages)
    };
    assert_eq!(result.call_id.as_deref(), Some("call_1"));
    assert!(result.is_error);
    assert!(
        result.content.contains("variable `null` is not bound here"),
        "{}",
        result.content
    );
    assert!(result.content.contains("hint: λ-Tool has no null"));
    assert!(support::calls(&shop).is_empty());
}

/// A model that answers its first request with a slip, and never answers
/// the next.
struct Stalls {
    asked: AtomicUsize,
}

impl Model for Stalls {
    fn complete(&self, _: Request) -> BoxFuture<'_, Result<Response, ModelError>> {
        if self.asked.fetch_add(1, Ordering::SeqCst) == 0 {
            Box::pin(async { Ok(Response::new(fenced(&slip()))) })
        } else {
            Box::pin(futures::future::pending())
        }
    }
}

/// The author has a deadline of its own, as the agent does: a request in
/// progress when it passes is stopped, and the error holds the attempts so
/// far. (It had none: a model that never answered held `write` forever.)
#[test]
fn the_author_stops_at_its_wall_time_with_the_attempts_so_far() {
    let (toolbox, shop) = support::toolbox(None);
    let limit = Duration::from_millis(100);
    let model = Stalls {
        asked: AtomicUsize::new(0),
    };
    let started = Instant::now();
    let author = Author::new(&toolbox).wall_time(limit);
    let error = block_on(author.write(&model, TASK)).unwrap_err();
    let elapsed = started.elapsed();
    assert!(
        elapsed >= limit && elapsed < Duration::from_secs(10),
        "{elapsed:?}"
    );
    let AuthorError::Deadline {
        limit: reached,
        attempts,
        ..
    } = &error
    else {
        panic!("{error}")
    };
    assert_eq!(*reached, limit);
    assert_eq!(attempts.len(), 1);
    assert!(attempts[0].error.is_some());
    assert_eq!(model.asked.load(Ordering::SeqCst), 2);
    assert!(
        error
            .to_string()
            .starts_with("the wall time of 100ms ran out after 1 attempt(s) before a plan checked; the last answer was refused: "),
        "{error}"
    );

    // A limit already reached: nothing is asked.
    let model = ScriptedModel::new([fenced(SUPPORT_AGENT)]);
    let author = Author::new(&toolbox).wall_time(Duration::ZERO);
    let error = block_on(author.write(&model, TASK)).unwrap_err();
    assert!(matches!(&error, AuthorError::Deadline { attempts, .. } if attempts.is_empty()));
    assert!(model.requests().is_empty());
    assert!(support::calls(&shop).is_empty());
}

/// A model that is not scripted: it reads what it is told and fixes the
/// field it is told about, as a model would.
struct Fixer {
    seen: Mutex<Vec<String>>,
}

impl Model for Fixer {
    fn complete(&self, request: Request) -> BoxFuture<'_, Result<Response, ModelError>> {
        let last = request
            .messages
            .last()
            .map(|m| m.text().to_owned())
            .unwrap_or_default();
        self.seen.lock().unwrap().push(last.clone());
        let answer = if last.contains("field `plan` not found") {
            fenced(SUPPORT_AGENT)
        } else {
            fenced(&slip())
        };
        Box::pin(async move { Ok(Response::new(answer)) })
    }
}

#[test]
fn any_model_can_write_the_plan() {
    let (toolbox, _) = support::toolbox(None);
    let model = Arc::new(Fixer {
        seen: Mutex::new(Vec::new()),
    });
    let dynamic: Arc<dyn Model> = model.clone();
    let authored = block_on(Author::new(&toolbox).write(&dynamic, TASK)).unwrap();
    assert_eq!(authored.attempts.len(), 2);
    assert_eq!(model.seen.lock().unwrap()[0], TASK);
    // Usage a model does not report counts as nothing spent.
    assert_eq!(authored.usage, Usage::default());
}

#[test]
fn a_restricted_author_refuses_what_it_does_not_allow() {
    let (toolbox, shop) = support::toolbox(None);
    let reads = Author::new(&toolbox).restrict(EffectSet::READ);
    let prompt = reads.prompt(false).to_string();
    let tools = &prompt[..prompt.find("# Syntax").unwrap()];
    assert!(tools.contains("tool lookup_account:"));
    assert!(!tools.contains("tool issue_refund:"));
    let model = ScriptedModel::new([fenced(SUPPORT_AGENT)]);
    let error = block_on(reads.attempts(1).write(&model, TASK)).unwrap_err();
    let told = error.attempts()[0].error.as_ref().unwrap().for_model();
    assert_eq!(
        told,
        "the plan was refused, nothing ran; fix every error and send the whole plan again:\n\
         - effect violation: tool `issue_refund` has effects {Write}, but only {Read} are allowed here\n\
         - effect violation: tool `send_reply` has effects {Write}, but only {Read} are allowed here"
    );
    assert!(support::calls(&shop).is_empty());
}
