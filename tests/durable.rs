//! Durable runs over the in-memory journal: replay, calls in doubt, a
//! journal that fails before and after a call, changed tools, the record
//! format. Real process death is in tests/durable_crash.rs.

#[path = "support/yield_now.rs"]
mod yield_now;
use yield_now::YieldNow;

mod durable_support;

use durable_support::{expected, plan, tool, toolbox, Flaky, World, PLAN};
use futures::executor::block_on;
use serde_json::{json, Value as Json};
use typed_tools::durable::{
    Durable, DurableError, Journal, JournalError, MemoryJournal, Record, Resolution, Source, Stage,
};
use typed_tools::effect::EffectSet;
use typed_tools::plan::{Interpreter, Plan, Value};
use typed_tools::Toolbox;

#[test]
fn a_finished_run_resumed_replays_every_call_and_runs_no_tool() {
    let world = World::default();
    let toolbox = toolbox(&world);
    let interpreter = Interpreter::new(&toolbox);
    let durable = Durable::new(MemoryJournal::new());
    let first = block_on(durable.run_plan(&interpreter, "r1", &plan())).unwrap();
    assert_eq!(first.run.outcome, Ok(expected()));
    assert_eq!(first.sources, [Source::Ran; 3]);
    assert_eq!(world.log(), ["read_balance 1", "charge 10", "put 3"]);

    let uninterrupted = block_on(interpreter.run(&plan())).unwrap();
    assert_eq!(first.run, uninterrupted);

    let again = block_on(durable.run_plan(&interpreter, "r1", &plan())).unwrap();
    assert_eq!(again.run, first.run);
    assert_eq!(again.sources, [Source::Replayed; 3]);
    let resumed = block_on(durable.resume_plan(&interpreter, "r1")).unwrap();
    assert_eq!(resumed.run, first.run);
    // Two more runs, and still one of each side effect (plus the plain run's).
    assert_eq!(world.count("charge"), 2);
    assert_eq!(world.count("put"), 2);
}

#[test]
fn the_journal_is_versioned_json_with_each_call_before_and_after() {
    let world = World::default();
    let toolbox = toolbox(&world);
    let durable = Durable::new(MemoryJournal::new());
    block_on(durable.run_plan(&Interpreter::new(&toolbox), "r", &plan())).unwrap();
    let (records, kinds) = durable_support::records(durable.journal(), "r");
    assert_eq!(
        kinds,
        [
            "started",
            "call_started",
            "call_finished",
            "call_started",
            "call_finished",
            "call_started",
            "call_finished",
            "finished"
        ]
    );
    assert_eq!(records[0]["format"], 2);
    assert_eq!(records[0]["input"]["kind"], "plan");
    let tools: Vec<&str> = records[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["read_balance", "charge", "put"]);
    assert_eq!(records[3]["tool"], "charge");
    assert_eq!(records[3]["args"], json!({"n": 10}));
    assert_eq!(records[4]["result"], json!({"ok": "charge_10"}));
    assert_eq!(records[7]["outcome"], json!({"ok": "charge_10 put_3"}));
}

/// Run `r` of the plan, stopped with its charge in doubt: the charge ran,
/// and its result (position 4) could not be recorded. The journal works
/// again after.
fn charge_in_doubt(interpreter: &Interpreter<'_>) -> Durable<Flaky> {
    let durable = Durable::new(Flaky::default());
    durable.journal().fail_at(Some(4));
    block_on(durable.run_plan(interpreter, "r", &plan())).unwrap_err();
    durable.journal().fail_at(None);
    durable
}

#[test]
fn a_write_in_doubt_stops_the_run_and_is_never_repeated_until_resolved() {
    let world = World::default();
    let toolbox = toolbox(&world);
    let interpreter = Interpreter::new(&toolbox);
    let durable = Durable::new(Flaky::default());
    // The charge's result (position 4) cannot be recorded: it ran, the run
    // stops, and the charge is in doubt.
    durable.journal().fail_at(Some(4));
    let stopped = block_on(durable.run_plan(&interpreter, "r", &plan())).unwrap_err();
    assert!(
        matches!(&stopped, DurableError::Journal { stage: Stage::CallResult { call: 1, tool }, .. } if tool == "charge"),
        "{stopped}"
    );
    assert_eq!(world.log(), ["read_balance 1", "charge 10"]);
    durable.journal().fail_at(None);

    // Resuming (twice) stops at the charge, which does not run again.
    for _ in 0..2 {
        let error = block_on(durable.run_plan(&interpreter, "r", &plan())).unwrap_err();
        let DurableError::InDoubt(doubt) = &error else {
            panic!("{error}")
        };
        assert_eq!((doubt.tool.as_str(), doubt.call), ("charge", 1));
        assert_eq!(doubt.args, json!({"n": 10}));
        assert!(doubt.started_at_ms > 0);
        let message = error.to_string();
        assert!(
            message.starts_with(r#"in doubt: `charge` {"n":10} started at 20"#),
            "{message}"
        );
    }
    assert_eq!(world.count("charge"), 1);

    // A person says it took effect: the run goes on with that output.
    let decided = block_on(durable.resolve(
        "r",
        Resolution::Done {
            output: json!("charge_10"),
        },
    ))
    .unwrap();
    assert_eq!(decided.tool, "charge");
    let done = block_on(durable.run_plan(&interpreter, "r", &plan())).unwrap();
    assert_eq!(done.run.outcome, Ok(expected()));
    assert_eq!(
        done.sources,
        [Source::Replayed, Source::Resolved, Source::Ran]
    );
    assert_eq!(world.log(), ["read_balance 1", "charge 10", "put 3"]);
    assert!(matches!(
        block_on(durable.resolve("r", Resolution::Retry)),
        Err(DurableError::NothingInDoubt { .. })
    ));
}

#[test]
fn a_write_in_doubt_allowed_a_retry_runs_once_more() {
    let world = World::default();
    let toolbox = toolbox(&world);
    let interpreter = Interpreter::new(&toolbox);
    let durable = charge_in_doubt(&interpreter);
    block_on(durable.resolve("r", Resolution::Retry)).unwrap();
    let done = block_on(durable.run_plan(&interpreter, "r", &plan())).unwrap();
    assert_eq!(done.run.outcome, Ok(expected()));
    assert_eq!(done.sources, [Source::Replayed, Source::Rerun, Source::Ran]);
    assert_eq!(world.count("charge"), 2);
}

#[test]
fn a_write_resolved_as_failed_takes_the_err_branch() {
    let world = World::default();
    let toolbox = toolbox(&world);
    let interpreter = Interpreter::new(&toolbox);
    let durable = charge_in_doubt(&interpreter);
    let failed = Resolution::Failed {
        message: "the bank says no".into(),
    };
    block_on(durable.resolve("r", failed)).unwrap();
    let done = block_on(durable.run_plan(&interpreter, "r", &plan())).unwrap();
    assert_eq!(
        done.run.outcome,
        Ok(Value::String(
            "tool `charge` failed: the bank says no".into()
        ))
    );
    assert_eq!(world.log(), ["read_balance 1", "charge 10"]);
}

#[test]
fn reads_and_idempotent_writes_in_doubt_run_again() {
    // Position 2 is the read's result, 6 the idempotent put's.
    for (fail, rerun, tool) in [(2, 0, "read_balance"), (6, 2, "put")] {
        let world = World::default();
        let toolbox = toolbox(&world);
        let interpreter = Interpreter::new(&toolbox);
        let durable = Durable::new(Flaky::default());
        durable.journal().fail_at(Some(fail));
        block_on(durable.run_plan(&interpreter, "r", &plan())).unwrap_err();
        durable.journal().fail_at(None);
        let done = block_on(durable.run_plan(&interpreter, "r", &plan())).unwrap();
        assert_eq!(done.run.outcome, Ok(expected()));
        assert_eq!(done.sources[rerun], Source::Rerun);
        assert_eq!(world.count(tool), 2, "{tool}");
        assert_eq!(world.count("charge"), 1);
    }
}

#[test]
fn a_journal_that_cannot_record_a_start_stops_the_run_before_the_call() {
    // Positions 1, 3, 5: the starts of the read, the charge, the put.
    for (fail, call, tool, before) in [
        (1, 0, "read_balance", 0),
        (3, 1, "charge", 1),
        (5, 2, "put", 2),
    ] {
        let world = World::default();
        let toolbox = toolbox(&world);
        let interpreter = Interpreter::new(&toolbox);
        let durable = Durable::new(Flaky::default());
        durable.journal().fail_at(Some(fail));
        let error = block_on(durable.run_plan(&interpreter, "r", &plan())).unwrap_err();
        match &error {
            DurableError::Journal {
                stage: Stage::CallStart { call: c, tool: t },
                error: JournalError::Unavailable { .. },
                ..
            } => assert_eq!((*c, t.as_str()), (call, tool)),
            other => panic!("{other}"),
        }
        assert!(
            error.to_string().contains("the call did not run"),
            "{error}"
        );
        // The call did not run: only those before it did.
        assert_eq!(world.log().len(), before, "{:?}", world.log());
        // The store is back: the run resumes and each call happens once.
        durable.journal().fail_at(None);
        let done = block_on(durable.run_plan(&interpreter, "r", &plan())).unwrap();
        assert_eq!(done.run.outcome, Ok(expected()));
        assert_eq!(world.log(), ["read_balance 1", "charge 10", "put 3"]);
        assert_eq!(done.replayed(), before);
    }
}

#[test]
fn a_store_that_is_down_stops_the_run_before_anything() {
    let world = World::default();
    let toolbox = toolbox(&world);
    let interpreter = Interpreter::new(&toolbox);
    let durable = Durable::new(MemoryJournal::new());
    durable.journal().set_failing(true);
    let error = block_on(durable.run_plan(&interpreter, "r", &plan())).unwrap_err();
    assert!(matches!(
        error,
        DurableError::Journal {
            stage: Stage::Load,
            ..
        }
    ));
    assert!(world.log().is_empty());
    // Down after the run's end could not be recorded: a resume replays all.
    durable.journal().set_failing(false);
    let durable = Durable::new(Flaky::default());
    durable.journal().fail_at(Some(7));
    let error = block_on(durable.run_plan(&interpreter, "r", &plan())).unwrap_err();
    assert!(matches!(
        error,
        DurableError::Journal {
            stage: Stage::Finish,
            ..
        }
    ));
    durable.journal().fail_at(None);
    let done = block_on(durable.run_plan(&interpreter, "r", &plan())).unwrap();
    assert_eq!(done.sources, [Source::Replayed; 3]);
    assert_eq!(world.count("charge"), 1);
}

#[test]
fn a_changed_tool_stops_a_resume_naming_the_tool() {
    let world = World::default();
    let toolbox = toolbox(&world);
    let durable = charge_in_doubt(&Interpreter::new(&toolbox));

    // `charge` now takes a string: toolbox calls under the run id are
    // refused before any runs (the plan would no longer type-check).
    let changed = Toolbox::builder()
        .dynamic(tool(&world, "read_balance", EffectSet::READ, false))
        .dynamic(
            tool(&world, "charge", EffectSet::WRITE, false).input_schema(json!({
                "type": "object", "properties": {"n": {"type": "string"}}, "required": ["n"]
            })),
        )
        .build()
        .unwrap();
    let calls = Durable::new(MemoryJournal::new());
    block_on(
        block_on(calls.calls(&toolbox, "c"))
            .unwrap()
            .call("charge", r#"{"n": 1}"#),
    )
    .unwrap()
    .unwrap();
    match block_on(calls.calls(&changed, "c")) {
        Err(DurableError::ToolChanged {
            tool,
            current: Some(_),
            ..
        }) => assert_eq!(tool, "charge"),
        other => panic!("{other:?}"),
    }
    let gone = Toolbox::builder().build().unwrap();
    match block_on(calls.calls(&gone, "c")) {
        Err(error @ DurableError::ToolChanged { current: None, .. }) => {
            assert!(
                error
                    .to_string()
                    .contains("tool `charge`, which the run used, is not in the toolbox"),
                "{error}"
            )
        }
        other => panic!("{other:?}"),
    }
    let plan = plan();

    // Declared idempotent now: another stamp, so refused too, by name.
    let relabeled = Toolbox::builder()
        .dynamic(tool(&world, "read_balance", EffectSet::READ, false))
        .dynamic(tool(&world, "charge", EffectSet::WRITE, true))
        .dynamic(tool(&world, "put", EffectSet::WRITE, true))
        .build()
        .unwrap();
    let error = block_on(durable.run_plan(&Interpreter::new(&relabeled), "r", &plan)).unwrap_err();
    match &error {
        DurableError::ToolChanged { tool, current, .. } => {
            assert_eq!(tool, "charge");
            assert!(current.is_some());
        }
        other => panic!("{other}"),
    }
    assert!(
        error.to_string().contains("tool `charge` has changed"),
        "{error}"
    );
    // One charge by the plan run, one by the calls under "c".
    assert_eq!(world.count("charge"), 2);
}

#[test]
fn another_plan_under_a_used_id_or_a_bad_id_is_refused() {
    let world = World::default();
    let toolbox = toolbox(&world);
    let interpreter = Interpreter::new(&toolbox);
    let durable = Durable::new(MemoryJournal::new());
    block_on(durable.run_plan(&interpreter, "r", &plan())).unwrap();
    let other = Plan::parse(&PLAN.replace("{n = 3}", "{n = 4}")).unwrap();
    assert!(matches!(
        block_on(durable.run_plan(&interpreter, "r", &other)),
        Err(DurableError::InputChanged { .. })
    ));
    for bad in ["", "a\nb", &"x".repeat(257)] {
        assert!(matches!(
            block_on(durable.run_plan(&interpreter, bad, &plan())),
            Err(DurableError::BadRunId { .. })
        ));
    }
    assert_eq!(world.count("put"), 1);
}

#[test]
fn a_journal_from_a_newer_format_or_out_of_order_is_refused() {
    let world = World::default();
    let toolbox = toolbox(&world);
    let interpreter = Interpreter::new(&toolbox);
    let journal = MemoryJournal::new();
    let newer = Record::from_json(&format!(
        r#"{{"record":"started","format":3,"at_ms":0,"input":{{"kind":"plan","text":{}}},"tools":[]}}"#,
        serde_json::to_string(&plan().to_string()).unwrap()
    ))
    .unwrap();
    block_on(journal.append("r", 0, &newer)).unwrap();
    let finished =
        Record::from_json(r#"{"record":"call_finished","call":5,"result":{"ok":1},"at_ms":0}"#)
            .unwrap();
    let durable = Durable::new(journal);
    let error = block_on(durable.run_plan(&interpreter, "r", &plan())).unwrap_err();
    assert!(error.to_string().contains("record format 3"), "{error}");
    let started =
        Record::from_json(&durable.journal().lines("r")[0].replace("\"format\":3", "\"format\":1"))
            .unwrap();
    let journal = MemoryJournal::new();
    block_on(journal.append("r", 0, &started)).unwrap();
    block_on(journal.append("r", 1, &finished)).unwrap();
    let durable = Durable::new(journal);
    let error = block_on(durable.run_plan(&interpreter, "r", &plan())).unwrap_err();
    assert!(matches!(error, DurableError::Unreadable { .. }), "{error}");
    assert!(world.log().is_empty());
}

#[test]
fn a_run_that_asks_for_another_call_than_recorded_is_stopped() {
    let world = World::default();
    let toolbox = toolbox(&world);
    let durable = Durable::new(MemoryJournal::new());
    let calls = block_on(durable.calls(&toolbox, "c")).unwrap();
    block_on(calls.call("charge", r#"{"n": 1}"#))
        .unwrap()
        .unwrap();
    let again = block_on(durable.calls(&toolbox, "c")).unwrap();
    let error = block_on(again.call("charge", r#"{"n": 2}"#)).unwrap_err();
    assert!(
        matches!(error, DurableError::Diverged { call: 0, .. }),
        "{error}"
    );
    // Every later call gets the same answer, and nothing ran.
    assert!(block_on(again.call("charge", r#"{"n": 1}"#)).is_err());
    assert_eq!(world.count("charge"), 1);
}

#[test]
fn toolbox_calls_under_a_run_id_replay_and_go_on() {
    let world = World::default();
    let toolbox = toolbox(&world);
    let durable = Durable::new(Flaky::default());
    let calls = block_on(durable.calls(&toolbox, "c")).unwrap();
    let first = block_on(calls.call("charge", r#"{"n": 1}"#))
        .unwrap()
        .unwrap();
    assert_eq!(first.json(), r#""charge_1""#);
    // An error is recorded and replayed like an output.
    let refused = block_on(calls.call("charge", r#"{"n": "x"}"#)).unwrap();
    assert!(refused.is_err());
    // The next call's result cannot be recorded (positions: 0 start, 1-4 two calls).
    durable.journal().fail_at(Some(6));
    assert!(block_on(calls.call("charge", r#"{"n": 2}"#)).is_err());
    durable.journal().fail_at(None);

    let again = block_on(durable.calls(&toolbox, "c")).unwrap();
    assert_eq!(
        block_on(again.call("charge", r#"{"n": 1}"#))
            .unwrap()
            .unwrap(),
        first
    );
    assert_eq!(
        block_on(again.call("charge", r#"{"n": "x"}"#)).unwrap(),
        refused
    );
    let error = block_on(again.call("charge", r#"{"n": 2}"#)).unwrap_err();
    assert!(matches!(error, DurableError::InDoubt(_)), "{error}");
    assert_eq!(again.sources(), [Source::Replayed, Source::Replayed]);
    assert_eq!(world.log(), ["charge 1", "charge 2"]);
}

#[test]
fn every_kind_of_tool_error_is_replayed_as_it_was() {
    use std::time::Duration;
    use typed_tools::durable::RecordedError;
    use typed_tools::schema::{JsonPath, Problem};
    use typed_tools::{Escalation, Severity, ToolError};

    let path = JsonPath::root().field("items").index(2).field("n");
    let deserialization = ToolError::Deserialization {
        tool: "t".into(),
        problems: vec![
            Problem::Missing {
                path: path.clone(),
                expected: "Int".into(),
            },
            Problem::Unknown {
                path: path.clone(),
                expected: vec!["a".into(), "b".into()],
            },
            Problem::Mismatch {
                path: path.clone(),
                expected: "Int".into(),
                found: "string".into(),
            },
            Problem::Duplicate { path },
        ],
        message: Some("no".into()),
        expected: "{n: Int}".into(),
    };
    let errors = [
        ToolError::UnknownTool {
            name: "x".into(),
            suggestions: vec!["t".into()],
            available: vec!["t".into(), "u".into()],
        },
        ToolError::EffectDenied {
            tool: "t".into(),
            effects: EffectSet::WRITE,
            allowed: EffectSet::READ,
        },
        ToolError::ArgsTooLarge {
            tool: "t".into(),
            bytes: 10,
            max: 5,
        },
        ToolError::InvalidArgs {
            tool: "t".into(),
            message: "eof".into(),
            excerpt: "{".into(),
            expected: "{}".into(),
        },
        deserialization.clone(),
        ToolError::Execution {
            tool: "t".into(),
            message: "boom".into(),
            panicked: true,
        },
        ToolError::Escalation(Box::new(Escalation {
            source: "recovery".into(),
            reason: "gave up".into(),
            severity: Severity::High,
            original: deserialization,
            attempts: 3,
        })),
        ToolError::Refused {
            tool: "t".into(),
            reason: "no".into(),
        },
        ToolError::TimedOut {
            tool: "t".into(),
            after: Duration::from_millis(1500),
        },
    ];
    for error in errors {
        let text = serde_json::to_string(&RecordedError::of(&error)).unwrap();
        let read: RecordedError = serde_json::from_str(&text).unwrap();
        assert_eq!(read.to_error("t"), error, "{text}");
    }
}

#[test]
fn calls_made_at_once_are_each_recorded_as_their_own() {
    // Tools that wait once inside the call: without one call at a time,
    // the second call would start while the first is in the tool.
    let echo = |name: &'static str| {
        typed_tools::DynamicTool::new(name)
            .input_schema(json!({"type": "object", "properties": {"n": {"type": "integer"}}}))
            .effects(EffectSet::WRITE)
            .handler(move |args: Json| async move {
                YieldNow::once().await;
                Ok(json!(format!("{name}_{}", args["n"])))
            })
    };
    let toolbox = Toolbox::builder()
        .dynamic(echo("charge"))
        .dynamic(echo("put"))
        .dynamic(echo("send"))
        .build()
        .unwrap();
    let durable = Durable::new(MemoryJournal::new());
    let calls = block_on(durable.calls(&toolbox, "c")).unwrap();
    let (a, b, c) = block_on(futures::future::join3(
        calls.call("charge", r#"{"n": 1}"#),
        calls.call("put", r#"{"n": 2}"#),
        calls.call("send", r#"{"n": 3}"#),
    ));
    let outputs = [a, b, c].map(|r| r.unwrap().unwrap().json().to_owned());
    assert_eq!(outputs, [r#""charge_1""#, r#""put_2""#, r#""send_3""#]);
    // Replayed in the same order, each with its own result.
    let again = block_on(durable.calls(&toolbox, "c")).unwrap();
    for (tool, args, output) in [
        ("charge", r#"{"n": 1}"#, r#""charge_1""#),
        ("put", r#"{"n": 2}"#, r#""put_2""#),
        ("send", r#"{"n": 3}"#, r#""send_3""#),
    ] {
        let result = block_on(again.call(tool, args)).unwrap().unwrap();
        assert_eq!(result.json(), output, "{tool}");
    }
    assert_eq!(again.sources(), [Source::Replayed; 3]);
}
