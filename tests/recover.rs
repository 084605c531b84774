//! Recovery policies, with tools that fail on demand.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures::executor::block_on;
use typed_tools::model::ScriptedModel;
use typed_tools::recover::{Backoff, Policy, Recovered, Retry};
use typed_tools::repair::{RepairKind, RepairOptions};
use typed_tools::{tool, BuildProblem, NextStep, Severity, ToolError, Toolbox};

/// A flaky service: fails until it has been called `succeed_on` times.
struct Flaky {
    calls: AtomicU32,
    succeed_on: u32,
}

impl Flaky {
    fn new(succeed_on: u32) -> Arc<Flaky> {
        Arc::new(Flaky {
            calls: AtomicU32::new(0),
            succeed_on,
        })
    }

    fn hit(&self) -> Result<u32, String> {
        let n = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        if n < self.succeed_on {
            Err(format!("timeout on attempt {n}"))
        } else {
            Ok(n)
        }
    }
}

/// Read a quote; transiently fails.
#[tool(effects = Network)]
fn fetch_quote(#[state] service: &Flaky, symbol: String) -> Result<String, String> {
    service.hit().map(|n| format!("{symbol}: 42 (attempt {n})"))
}

/// Set a flag; writing it twice is the same as once.
#[tool(effects = Write, idempotent)]
fn set_flag(#[state] service: &Flaky, on: bool) -> Result<bool, String> {
    service.hit().map(|_| on)
}

/// Charge a card: a write that must not happen twice.
#[tool(effects = Write)]
fn charge(#[state] service: &Flaky, cents: u32) -> Result<String, String> {
    service.hit().map(|n| format!("charged {cents} (call {n})"))
}

/// Add two numbers.
#[tool(effects = Pure)]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn fast() -> Retry {
    Retry::exponential(4).with_backoff(Backoff {
        initial: Duration::from_millis(1),
        factor: 2.0,
        max: Duration::from_millis(5),
        jitter: true,
    })
}

#[test]
fn no_policy_means_no_recovery() {
    let toolbox = Toolbox::builder().tool(Add).build().unwrap();
    let error = block_on(toolbox.call("add", "{\"a\": 1, \"b\": 2,}")).unwrap_err();
    assert!(matches!(error, ToolError::InvalidArgs { .. }));
}

#[test]
fn repair_then_coercion_with_every_change_recorded() {
    let toolbox = Toolbox::builder()
        .tool(Add)
        .policy(Policy::recover())
        .build()
        .unwrap();
    let output =
        block_on(toolbox.call("add", "Here you go:\n```json\n{\"a\": '2', \"b\": 3,}\n```"))
            .unwrap();
    assert_eq!(output.json(), "5");
    let kinds: Vec<String> = output
        .recovery()
        .iter()
        .map(|r| match r {
            Recovered::Repaired(repair) => format!("{:?}", repair.kind),
            Recovered::Coerced(coercion) => format!("{:?}", coercion.kind),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "SurroundingProse",
            "MarkdownFence",
            "SingleQuotes",
            "TrailingComma",
            "StringToNumber"
        ]
    );
    let note = output.note_for_model().unwrap();
    assert!(
        note.starts_with("Your call was repaired before it ran: "),
        "{note}"
    );
    assert!(
        note.contains("$.a: the string \"2\" was read as the number 2"),
        "{note}"
    );
    // A call that needed nothing has nothing to say.
    assert_eq!(
        block_on(toolbox.call("add", r#"{"a": 1, "b": 1}"#))
            .unwrap()
            .note_for_model(),
        None
    );
}

#[test]
fn strict_repair_refuses_what_is_not_allowed() {
    let strict = Policy::none().fix(typed_tools::recover::Fix::Repair(RepairOptions::strict([
        RepairKind::TrailingComma,
    ])));
    let toolbox = Toolbox::builder().tool(Add).policy(strict).build().unwrap();
    assert_eq!(
        block_on(toolbox.call("add", r#"{"a": 1, "b": 2,}"#))
            .unwrap()
            .json(),
        "3"
    );
    let error = block_on(toolbox.call("add", "{'a': 1, 'b': 2}")).unwrap_err();
    assert!(matches!(error, ToolError::InvalidArgs { .. }), "{error:?}");
}

#[test]
fn a_users_fix_function() {
    let policy = Policy::none().fix_with(|text| text.strip_prefix("ARGS:").map(str::to_owned));
    let toolbox = Toolbox::builder().tool(Add).policy(policy).build().unwrap();
    let output = block_on(toolbox.call("add", r#"ARGS:{"a": 20, "b": 22}"#)).unwrap();
    assert_eq!(output.json(), "42");
    assert_eq!(
        output.recovery(),
        [Recovered::Rewritten {
            by: "function",
            attempt: 1
        }]
    );
}

#[test]
fn a_model_repairs_what_code_cannot_in_a_bounded_number_of_attempts() {
    let model = Arc::new(ScriptedModel::new([
        "still {not json",
        "```json\n{\"a\": 40, \"b\": 2}\n```",
    ]));
    let policy = Policy::none().fix_by_model(model.clone(), 3);
    let toolbox = Toolbox::builder().tool(Add).policy(policy).build().unwrap();
    let output = block_on(toolbox.call("add", "a is forty, b is two")).unwrap();
    assert_eq!(output.json(), "42");
    assert_eq!(model.requests().len(), 2, "asked until it worked, not more");
    let asked = model.requests()[0].messages[1].text().to_owned();
    assert!(asked.contains("Tool `add`"), "{asked}");
    assert!(asked.contains("{a: Int, b: Int}"), "{asked}");
    assert!(asked.contains("a is forty, b is two"), "{asked}");
    assert!(asked.contains("not valid JSON"), "{asked}");
    assert_eq!(
        output
            .recovery()
            .iter()
            .filter(|r| matches!(r, Recovered::Rewritten { by: "model", .. }))
            .count(),
        2
    );

    // When the model never gets it right, the attempts are bounded.
    let model = Arc::new(ScriptedModel::new([
        "nope",
        "nope again",
        "still nope",
        "never asked",
    ]));
    let toolbox = Toolbox::builder()
        .tool(Add)
        .policy(Policy::none().fix_by_model(model.clone(), 3))
        .build()
        .unwrap();
    let error = block_on(toolbox.call("add", "gibberish")).unwrap_err();
    assert_eq!(error.next_step(), NextStep::FixCall);
    assert_eq!(model.remaining(), 1, "three attempts, no more");
}

#[test]
fn a_model_fixes_wrong_shapes_after_coercion() {
    let model = Arc::new(ScriptedModel::new([r#"{"a": 1, "b": 2}"#]));
    let policy = Policy::recover().fix_by_model(model.clone(), 1);
    let toolbox = Toolbox::builder().tool(Add).policy(policy).build().unwrap();
    // "one" cannot be coerced to an integer: the model is asked.
    let output = block_on(toolbox.call("add", r#"{"a": "one", "b": 2}"#)).unwrap();
    assert_eq!(output.json(), "3");
    assert!(model.requests()[0].messages[1]
        .text()
        .contains("$.a: expected Int, found string \"one\""));
}

#[test]
fn a_transient_failure_is_retried_to_success_with_the_attempts_counted() {
    let service = Flaky::new(3);
    let toolbox = Toolbox::builder()
        .tool(FetchQuote::new(service.clone()))
        .retry::<FetchQuote>(fast())
        .build()
        .unwrap();
    let output = block_on(toolbox.call("fetch_quote", r#"{"symbol": "ACME"}"#)).unwrap();
    assert_eq!(output.json(), r#""ACME: 42 (attempt 3)""#);
    let retried: Vec<(u32, &str)> = output
        .recovery()
        .iter()
        .filter_map(|r| match r {
            Recovered::Retried {
                attempt,
                error,
                waited,
            } => {
                assert!(*waited <= Duration::from_millis(5));
                Some((*attempt, error.as_str()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        retried,
        [
            (1, "tool `fetch_quote` failed: timeout on attempt 1"),
            (2, "tool `fetch_quote` failed: timeout on attempt 2")
        ]
    );
    // Retries are the tool's failures, not the model's: nothing to tell it.
    assert_eq!(output.note_for_model(), None);
    assert_eq!(service.calls.load(Ordering::SeqCst), 3);
}

#[test]
fn retries_stop_at_the_maximum_and_escalate_with_their_context() {
    let service = Flaky::new(100);
    let policy = Policy::none().retry(fast()).escalate(Severity::High);
    let toolbox = Toolbox::builder()
        .tool(FetchQuote::new(service.clone()))
        .policy_for("fetch_quote", policy)
        .build()
        .unwrap();
    let error = block_on(toolbox.call("fetch_quote", r#"{"symbol": "ACME"}"#)).unwrap_err();
    let ToolError::Escalation(escalation) = &error else {
        panic!("{error:?}")
    };
    assert_eq!(escalation.source, "recovery of `fetch_quote`");
    assert_eq!(escalation.severity, Severity::High);
    assert_eq!(escalation.attempts, 3, "three retries after the first call");
    assert_eq!(
        escalation.reason,
        "the tool still failed after 4 attempt(s): tool `fetch_quote` failed: timeout on attempt 4"
    );
    assert_eq!(
        escalation.original,
        ToolError::Execution {
            tool: "fetch_quote".into(),
            message: "timeout on attempt 1".into(),
            panicked: false
        }
    );
    assert_eq!(error.next_step(), NextStep::Abort);
    assert_eq!(service.calls.load(Ordering::SeqCst), 4);
}

#[test]
fn an_idempotent_write_may_be_retried_a_plain_write_may_not() {
    let flag = Flaky::new(2);
    let toolbox = Toolbox::builder()
        .tool(SetFlag::new(flag.clone()))
        .retry::<SetFlag>(fast())
        .build()
        .unwrap();
    assert_eq!(
        block_on(toolbox.call("set_flag", r#"{"on": true}"#))
            .unwrap()
            .json(),
        "true"
    );
    assert_eq!(flag.calls.load(Ordering::SeqCst), 2);

    // By name, the toolbox refuses to build; as a default too, naming every such tool.
    let card = Flaky::new(2);
    for builder in [
        Toolbox::builder()
            .tool(Charge::new(card.clone()))
            .policy_for("charge", Policy::none().retry(fast())),
        Toolbox::builder()
            .tool(Charge::new(card.clone()))
            .policy(Policy::recover().retry(fast())),
    ] {
        let error = builder.build().unwrap_err();
        assert_eq!(
            error.problems(),
            [BuildProblem::RetryNotIdempotent {
                name: "charge".into()
            }]
        );
        assert!(error
            .to_string()
            .contains("declare it `#[tool(effects = Write, idempotent)]`"));
    }
    // With no retry, one failed charge is one call, and it is the tool's error.
    let toolbox = Toolbox::builder()
        .tool(Charge::new(card.clone()))
        .policy(Policy::recover())
        .build()
        .unwrap();
    let error = block_on(toolbox.call("charge", r#"{"cents": 500}"#)).unwrap_err();
    assert_eq!(error.next_step(), NextStep::Adapt);
    assert_eq!(
        card.calls.load(Ordering::SeqCst),
        1,
        "never a silent second write"
    );
}

#[test]
fn fixing_and_retrying_stay_apart() {
    let service = Flaky::new(1);
    // A retry policy does not touch bad arguments...
    let toolbox = Toolbox::builder()
        .tool(FetchQuote::new(service.clone()))
        .retry::<FetchQuote>(fast())
        .build()
        .unwrap();
    let error = block_on(toolbox.call("fetch_quote", r#"{"symbol": 1,}"#)).unwrap_err();
    assert!(matches!(error, ToolError::InvalidArgs { .. }));
    // ...and a fix policy does not call a failing tool again.
    let failing = Flaky::new(100);
    let toolbox = Toolbox::builder()
        .tool(FetchQuote::new(failing.clone()))
        .policy(Policy::recover())
        .build()
        .unwrap();
    let error = block_on(toolbox.call("fetch_quote", r#"{"symbol": "X"}"#)).unwrap_err();
    assert!(matches!(error, ToolError::Execution { .. }));
    assert_eq!(failing.calls.load(Ordering::SeqCst), 1);
    // Unknown tools are never guessed at.
    assert!(matches!(
        block_on(toolbox.call("fetch_qoute", "{}")),
        Err(ToolError::UnknownTool { .. })
    ));
}

#[test]
fn escalation_after_a_fix_that_did_not_help_keeps_the_first_error() {
    let policy = Policy::recover().escalate(Severity::Medium);
    let toolbox = Toolbox::builder().tool(Add).policy(policy).build().unwrap();
    let error = block_on(toolbox.call("add", r#"{"a": "x", "b": 2,}"#)).unwrap_err();
    let ToolError::Escalation(escalation) = &error else {
        panic!("{error:?}")
    };
    assert!(
        matches!(escalation.original, ToolError::InvalidArgs { .. }),
        "{:?}",
        escalation.original
    );
    assert!(
        escalation.reason.starts_with(
            "the call could not be fixed in 1 attempt(s): arguments for `add` do not fit"
        ),
        "{}",
        escalation.reason
    );
    assert_eq!(escalation.attempts, 1);
}

#[test]
fn per_tool_policies_override_the_default_and_unknown_names_are_refused() {
    let service = Flaky::new(1);
    let toolbox = Toolbox::builder()
        .tool(Add)
        .tool(FetchQuote::new(service))
        .policy(Policy::recover())
        .policy_for("add", Policy::none())
        .build()
        .unwrap();
    assert!(
        block_on(toolbox.call("add", r#"{"a": 1, "b": 2,}"#)).is_err(),
        "add has no recovery"
    );
    assert!(
        block_on(toolbox.call("fetch_quote", r#"{"symbol": "A",}"#)).is_ok(),
        "the default still applies"
    );
    let error = Toolbox::builder()
        .tool(Add)
        .policy_for("ad", Policy::recover())
        .build()
        .unwrap_err();
    assert_eq!(
        error.problems(),
        [BuildProblem::PolicyForUnknownTool { name: "ad".into() }]
    );
}

#[test]
fn a_model_step_is_asked_at_most_its_attempts_whatever_fails() {
    // The model is asked once for the bad JSON and fails; the function then
    // gives JSON of the wrong shape; the used-up model is not asked again.
    let model = Arc::new(ScriptedModel::new([
        "still not json",
        r#"{"a": 1, "b": 2}"#,
    ]));
    let policy = Policy::none()
        .fix_by_model(model.clone(), 1)
        .fix_with(|_| Some(r#"{"a": "one", "b": 2}"#.to_owned()));
    let toolbox = Toolbox::builder().tool(Add).policy(policy).build().unwrap();
    let error = block_on(toolbox.call("add", "not json")).unwrap_err();
    assert_eq!(
        model.requests().len(),
        1,
        "asked {} times",
        model.requests().len()
    );
    // And the error is about what the model sent.
    assert!(
        matches!(&error, ToolError::InvalidArgs { excerpt, .. } if excerpt == "not json"),
        "{error:?}"
    );
}

#[test]
fn giving_up_reports_what_the_model_sent_not_a_fixers_rewrite() {
    let model = Arc::new(ScriptedModel::new(["%%%"]));
    let toolbox = Toolbox::builder()
        .tool(Add)
        .policy(Policy::none().fix_by_model(model, 1))
        .build()
        .unwrap();
    let error = block_on(toolbox.call("add", "gibberish")).unwrap_err();
    let ToolError::InvalidArgs { excerpt, .. } = &error else {
        panic!("{error:?}")
    };
    assert_eq!(excerpt, "gibberish");
}
