//! Durable agent runs over the in-memory journal: the model's answers and
//! the calls' results replayed, a run cut after each of its records and
//! resumed (a write in doubt stopped and resolved), concurrent calls, a
//! plan the model wrote, a journal failing at each record, changed inputs
//! and tools, a model's outage resumed, typed outputs and native calls.
//! Real process death is in tests/durable_crash.rs.

mod durable_support;

use durable_support::{toolbox, Flaky, World};
use futures::executor::block_on;
use serde_json::json;
use typed_tools::agent::{Agent, Exit};
use typed_tools::catalog::CatalogFormat;
use typed_tools::durable::{
    Durable, DurableError, Journal, MemoryJournal, Record, Resolution, Source, Stage,
};
use typed_tools::model::{Response, ScriptedModel, Usage};
use typed_tools::recover::Policy;
use typed_tools::toolbox::{Approval, ApprovalRequest, Decision};
use typed_tools::{ToolCall, Toolbox};

/// The model's answers, by turn: two reads at once, a charge, then an
/// idempotent put and a second charge in one answer, then the answer.
const SCRIPT: [&str; 4] = [
    r#"[{"name": "read_balance", "arguments": {"n": 1}}, {"name": "read_balance", "arguments": {"n": 2}}]"#,
    r#"{"name": "charge", "arguments": {"n": 10}}"#,
    r#"[{"name": "put", "arguments": {"n": 3}}, {"name": "charge", "arguments": {"n": 20}}]"#,
    "Charged 10 and 20.",
];

const TASK: &str = "Charge what the balances say.";

fn agent(toolbox: &Toolbox) -> Agent<ScriptedModel> {
    Agent::new(toolbox, ScriptedModel::by_turn(SCRIPT))
}

/// A toolbox of `charge` alone, whose calls recovery repairs and coerces.
fn recovering_charge(world: &World) -> Toolbox {
    Toolbox::builder()
        .dynamic(durable_support::tool(
            world,
            "charge",
            typed_tools::effect::EffectSet::WRITE,
            false,
        ))
        .policy(Policy::recover())
        .build()
        .unwrap()
}

/// A copy of run `run`'s first `k` records, as a crash after the `k`-th
/// would leave them.
fn cut(journal: &MemoryJournal, run: &str, k: usize) -> MemoryJournal {
    let copy = MemoryJournal::new();
    for (seq, line) in journal.lines(run).iter().take(k).enumerate() {
        let record = Record::from_json(line).unwrap();
        block_on(copy.append(run, seq as u64, &record)).unwrap();
    }
    copy
}

#[test]
fn a_finished_agent_run_run_again_asks_nothing_and_runs_nothing() {
    let world = World::default();
    let toolbox = toolbox(&world);
    let durable = Durable::new(MemoryJournal::new());
    let agent = agent(&toolbox);
    let first = block_on(durable.run_agent(&agent, "a1", TASK)).unwrap();
    assert_eq!(first.run.exit, Exit::Answer("Charged 10 and 20.".into()));
    assert_eq!(first.answers_asked, 4);
    assert_eq!(first.sources, [Source::Ran; 5]);
    assert_eq!(
        world.log(),
        [
            "read_balance 1",
            "read_balance 2",
            "charge 10",
            "put 3",
            "charge 20"
        ]
    );

    // The same run without a journal: the same transcript and records.
    let plain = block_on(Agent::new(&toolbox, ScriptedModel::by_turn(SCRIPT)).run(TASK));
    assert_eq!(first.run.transcript, plain.transcript);
    assert_eq!(first.run.usage, plain.usage);

    let asked = agent.model().requests().len();
    let again = block_on(durable.run_agent(&agent, "a1", TASK)).unwrap();
    assert_eq!(again.run.transcript, first.run.transcript);
    assert_eq!(again.run.exit, first.run.exit);
    assert_eq!(again.run.usage, first.run.usage);
    assert_eq!(again.run.steps, 4);
    assert_eq!((again.answers_asked, again.answers_replayed), (0, 4));
    assert_eq!(again.sources, [Source::Replayed; 5]);
    assert_eq!(agent.model().requests().len(), asked, "no token paid twice");
    let resumed = block_on(durable.resume_agent(&agent, "a1")).unwrap();
    assert_eq!(resumed.run.transcript, first.run.transcript);
    // Each side effect once, plus the plain run's.
    assert_eq!(world.count("charge"), 4);
    assert_eq!(world.count("put"), 2);
}

#[test]
fn the_journal_records_each_answer_before_its_calls() {
    let world = World::default();
    let toolbox = toolbox(&world);
    let durable = Durable::new(MemoryJournal::new());
    block_on(durable.run_agent(&agent(&toolbox), "a", TASK)).unwrap();
    let (records, kinds) = durable_support::records(durable.journal(), "a");
    assert_eq!(
        kinds,
        [
            "started",
            "model_answered",
            // The two reads run at once: both started, then both finished.
            "call_started",
            "call_started",
            "call_finished",
            "call_finished",
            "model_answered",
            "call_started",
            "call_finished",
            "model_answered",
            "call_started",
            "call_finished",
            "call_started",
            "call_finished",
            "model_answered",
            "finished"
        ]
    );
    let started = &records[0];
    assert_eq!(started["format"], 2);
    assert_eq!(started["input"]["kind"], "agent");
    assert_eq!(started["input"]["task"], TASK);
    assert!(started["input"]["system"]
        .as_str()
        .unwrap()
        .contains("read_balance"));
    assert_eq!(started["tools"].as_array().unwrap().len(), 3);
    assert_eq!(records[1]["step"], 1);
    assert_eq!(records[1]["response"]["text"], SCRIPT[0]);
    assert_eq!(records[1]["response"]["stop"], "end_turn");
    assert_eq!(records[1]["response"]["usage"]["estimated"], true);
    assert_eq!(records[2]["call"], 0);
    assert_eq!(records[3]["call"], 1);
    assert_eq!(records[3]["args"], json!({"n": 2}));
    assert_eq!(records[5]["result"], json!({"ok": 20}));
    assert_eq!(records[15]["outcome"], json!({"ok": "Charged 10 and 20."}));
}

/// A crash after each record: the copy of the journal up to it is resumed.
/// The world has the side effects of every call finished before the cut;
/// a call in doubt is tried both ways (its effect happened, or not).
#[test]
fn an_agent_run_cut_after_each_record_resumes_to_the_same_run_without_repeating_a_write() {
    let world = World::default();
    let toolbox = toolbox(&world);
    let full = Durable::new(MemoryJournal::new());
    let baseline = block_on(full.run_agent(&agent(&toolbox), "r", TASK)).unwrap();
    let lines = full.journal().lines("r");
    let records: Vec<Record> = lines
        .iter()
        .map(|l| Record::from_json(l).unwrap())
        .collect();
    let mut in_doubt = 0;
    for k in 1..records.len() {
        // The calls started and finished before the cut, and the one in doubt.
        let mut started: Vec<(u64, String, i64)> = Vec::new();
        let mut finished: Vec<u64> = Vec::new();
        for record in &records[..k] {
            match record {
                Record::CallStarted {
                    call, tool, args, ..
                } => started.push((*call, tool.clone(), args["n"].as_i64().unwrap())),
                Record::CallFinished { call, .. } => finished.push(*call),
                _ => {}
            }
        }
        let answered = records[..k]
            .iter()
            .filter(|r| matches!(r, Record::ModelAnswered { .. }))
            .count();
        let open: Vec<_> = started
            .iter()
            .filter(|(call, ..)| !finished.contains(call))
            .cloned()
            .collect();
        for happened in [false, true] {
            let world = World::default();
            for (call, tool, n) in &started {
                if finished.contains(call) || happened {
                    world.0.lock().unwrap().push(format!("{tool} {n}"));
                }
            }
            let toolbox = durable_support::toolbox(&world);
            let agent = agent(&toolbox);
            let durable = Durable::new(cut(full.journal(), "r", k));
            let when =
                format!("cut after record {k}, the call in doubt's effect happened: {happened}");
            let mut done = block_on(durable.run_agent(&agent, "r", TASK));
            if let Some((_, tool, n)) = open.iter().find(|(_, tool, _)| tool == "charge") {
                let Err(DurableError::InDoubt(doubt)) = &done else {
                    panic!("{when}: expected the charge in doubt, got {done:?}");
                };
                assert_eq!(doubt.tool, *tool, "{when}");
                assert_eq!(doubt.args, json!({"n": n}), "{when}");
                in_doubt += 1;
                let resolution = match happened {
                    true => Resolution::Done {
                        output: json!(format!("charge_{n}")),
                    },
                    false => Resolution::Retry,
                };
                block_on(durable.resolve("r", resolution)).unwrap();
                done = block_on(durable.run_agent(&agent, "r", TASK));
            }
            let done = done.unwrap_or_else(|e| panic!("{when}: {e}"));
            assert_eq!(done.run.transcript, baseline.run.transcript, "{when}");
            assert_eq!(done.run.exit, baseline.run.exit, "{when}");
            assert_eq!(done.run.usage, baseline.run.usage, "{when}");
            assert_eq!(done.run.steps, baseline.run.steps, "{when}");
            // Only the answers not recorded were asked for.
            assert_eq!(done.answers_asked, 4 - answered, "{when}");
            assert_eq!(agent.model().requests().len(), 4 - answered, "{when}");
            for n in [10, 20] {
                assert_eq!(world.count(&format!("charge {n}")), 1, "{when}");
            }
            assert!(world.count("put 3") >= 1, "{when}");
        }
    }
    // The two charges, each in doubt from its start to its result, tried
    // both ways.
    assert_eq!(in_doubt, 4);
}

#[test]
fn a_plan_the_model_writes_is_journaled_with_the_run() {
    let world = World::default();
    let toolbox = toolbox(&world);
    let plan = "```plan\nmatch exec tool read_balance {n = 4} {\n  Ok(a) => match exec tool charge {n = a} { Ok(c) => c, Err(e) => e.message },\n  Err(e) => e.message\n}\n```";
    let script = [plan, "Charged 40."];
    let agent = Agent::new(&toolbox, ScriptedModel::by_turn(script)).plans(true);
    let full = Durable::new(MemoryJournal::new());
    let first = block_on(full.run_agent(&agent, "p", TASK)).unwrap();
    assert_eq!(first.run.answer(), Some("Charged 40."));
    assert_eq!(first.run.plans.len(), 1);
    assert_eq!(first.sources, [Source::Ran; 2]);
    assert_eq!(world.log(), ["read_balance 4", "charge 40"]);

    // Cut inside the charge: the plan's write is in doubt, and not repeated.
    let lines = full.journal().lines("p");
    let k = lines
        .iter()
        .position(|l| l.contains(r#""tool":"charge""#))
        .unwrap()
        + 1;
    let durable = Durable::new(cut(full.journal(), "p", k));
    let agent = Agent::new(&toolbox, ScriptedModel::by_turn(script)).plans(true);
    let stopped = block_on(durable.run_agent(&agent, "p", TASK)).unwrap_err();
    assert!(
        matches!(&stopped, DurableError::InDoubt(d) if d.tool == "charge"),
        "{stopped}"
    );
    assert_eq!(world.count("charge"), 1);
    block_on(durable.resolve(
        "p",
        Resolution::Done {
            output: json!("charge_40"),
        },
    ))
    .unwrap();
    let done = block_on(durable.run_agent(&agent, "p", TASK)).unwrap();
    assert_eq!(done.run.transcript, first.run.transcript);
    assert_eq!(done.sources, [Source::Replayed, Source::Resolved]);
    assert_eq!(world.count("charge"), 1);
    assert_eq!(agent.model().requests().len(), 1, "only the last answer");
}

#[test]
fn a_journal_that_fails_at_any_record_stops_the_run_and_a_resume_finishes_it() {
    let world = World::default();
    let toolbox = toolbox(&world);
    let full = Durable::new(MemoryJournal::new());
    let baseline = block_on(full.run_agent(&agent(&toolbox), "f", TASK)).unwrap();
    let records = full.journal().lines("f").len() as u64;
    for seq in 0..records {
        let world = World::default();
        let toolbox = durable_support::toolbox(&world);
        let agent = agent(&toolbox);
        let durable = Durable::new(Flaky::default());
        durable.journal().fail_at(Some(seq));
        let error = block_on(durable.run_agent(&agent, "f", TASK)).unwrap_err();
        let DurableError::Journal { stage, .. } = &error else {
            panic!("record {seq}: {error}");
        };
        let effects = world.log().len();
        match stage {
            Stage::Start | Stage::Answer { .. } | Stage::CallStart { .. } | Stage::Finish => {}
            Stage::CallResult { tool, .. } => assert!(
                world.log().last().unwrap().starts_with(tool.as_str()),
                "record {seq}: {error}"
            ),
            other => panic!("record {seq}: {other:?}"),
        }
        // Back: the run finishes as the uninterrupted one, each charge once.
        durable.journal().fail_at(None);
        let mut done = block_on(durable.run_agent(&agent, "f", TASK));
        if let Err(DurableError::InDoubt(doubt)) = &done {
            // The charge ran, and its result was not recorded.
            assert!(matches!(stage, Stage::CallResult { .. }), "record {seq}");
            let n = doubt.args["n"].as_i64().unwrap();
            let output = json!(format!("charge_{n}"));
            block_on(durable.resolve("f", Resolution::Done { output })).unwrap();
            done = block_on(durable.run_agent(&agent, "f", TASK));
        }
        let done = done.unwrap_or_else(|e| panic!("record {seq}: {e}"));
        assert_eq!(done.run.transcript, baseline.run.transcript, "record {seq}");
        assert!(world.log().len() >= effects);
        for n in [10, 20] {
            assert_eq!(
                world.count(&format!("charge {n}")),
                1,
                "record {seq}: {:?}",
                world.log()
            );
        }
    }
}

#[test]
fn another_task_or_changed_tool_is_refused_before_anything_runs() {
    let world = World::default();
    let toolbox = toolbox(&world);
    let durable = Durable::new(MemoryJournal::new());
    block_on(durable.run_agent(&agent(&toolbox), "t", TASK)).unwrap();
    let before = world.log().len();
    let other = block_on(durable.run_agent(&agent(&toolbox), "t", "Something else.")).unwrap_err();
    assert!(
        matches!(other, DurableError::InputChanged { .. }),
        "{other}"
    );
    let instructed = agent(&toolbox).system("Be brief.");
    let other = block_on(durable.run_agent(&instructed, "t", TASK)).unwrap_err();
    assert!(
        matches!(other, DurableError::InputChanged { .. }),
        "{other}"
    );

    // `charge` made idempotent: its stamp changed.
    let changed = Toolbox::builder()
        .dynamic(durable_support::tool(
            &world,
            "read_balance",
            typed_tools::effect::EffectSet::READ,
            false,
        ))
        .dynamic(durable_support::tool(
            &world,
            "charge",
            typed_tools::effect::EffectSet::WRITE,
            true,
        ))
        .dynamic(durable_support::tool(
            &world,
            "put",
            typed_tools::effect::EffectSet::WRITE,
            true,
        ))
        .build()
        .unwrap();
    let error = block_on(durable.resume_agent(&agent(&changed), "t")).unwrap_err();
    assert!(
        matches!(&error, DurableError::ToolChanged { tool, .. } if tool == "charge"),
        "{error}"
    );
    assert_eq!(world.log().len(), before);
    let error = block_on(durable.resume_agent(&agent(&toolbox), "nope")).unwrap_err();
    assert!(matches!(error, DurableError::NotFound { .. }));
    let error = block_on(durable.run_agent(&agent(&toolbox), "", TASK)).unwrap_err();
    assert!(matches!(error, DurableError::BadRunId { .. }));
}

#[test]
fn a_run_that_ended_on_the_models_outage_goes_on_when_run_again() {
    let world = World::default();
    let toolbox = toolbox(&world);
    let durable = Durable::new(MemoryJournal::new());
    // The model answers twice, then is down.
    let failing = Agent::new(
        &toolbox,
        ScriptedModel::new(SCRIPT[..2].iter().copied()).then_fail("overloaded"),
    );
    let first = block_on(durable.run_agent(&failing, "o", TASK)).unwrap();
    assert!(
        matches!(first.run.exit, Exit::ModelFailed(_)),
        "{:?}",
        first.run.exit
    );
    assert_eq!(world.log().len(), 3);
    let last = durable.journal().lines("o").last().cloned().unwrap();
    assert!(last.contains(r#""exit":"model_failed""#), "{last}");

    // Back up: the two answers and three calls replayed, the rest asked.
    let agent = agent(&toolbox);
    let done = block_on(durable.run_agent(&agent, "o", TASK)).unwrap();
    assert_eq!(done.run.answer(), Some("Charged 10 and 20."));
    assert_eq!((done.answers_replayed, done.answers_asked), (2, 2));
    assert_eq!(done.replayed(), 3);
    assert_eq!(done.ran(), 2);
    assert_eq!(world.count("charge 10"), 1);
    let plain = block_on(Agent::new(&toolbox, ScriptedModel::by_turn(SCRIPT)).run(TASK));
    assert_eq!(done.run.transcript, plain.transcript);
    // The journal's end says how it ended the second time.
    let last = durable.journal().lines("o").last().cloned().unwrap();
    assert!(last.contains(r#""ok":"Charged 10 and 20.""#), "{last}");
}

#[test]
fn native_calls_keep_their_ids_and_a_repaired_call_its_note_when_replayed() {
    let world = World::default();
    let toolbox = recovering_charge(&world);
    let call = ToolCall {
        id: Some("call_7".into()),
        name: "charge".into(),
        // A string where a number goes: coerced, and the model told.
        arguments: r#"{"n": "5"}"#.into(),
    };
    let answers = || {
        [
            Response::new("")
                .calls(vec![call.clone()])
                .usage(Usage::new(40, 9)),
            Response::new("Charged 5.").usage(Usage::new(60, 3)),
        ]
    };
    let model = || ScriptedModel::by_turn(answers()).native(CatalogFormat::OpenAiChat);
    let durable = Durable::new(MemoryJournal::new());
    let agent = Agent::new(&toolbox, model());
    let first = block_on(durable.run_agent(&agent, "n", TASK)).unwrap();
    let result = first.run.transcript[3].text();
    assert!(result.contains("Your call was repaired"), "{result}");

    // Cut before the last answer: the call replayed with its note.
    let k = durable.journal().lines("n").len() - 2;
    let resumed = Durable::new(cut(durable.journal(), "n", k));
    let agent = Agent::new(&toolbox, model());
    let done = block_on(resumed.run_agent(&agent, "n", TASK)).unwrap();
    assert_eq!(done.run.transcript, first.run.transcript);
    assert_eq!(done.run.usage, Usage::new(100, 12));
    assert_eq!(done.sources, [Source::Replayed]);
    assert_eq!(world.count("charge 5"), 1);
    let asked = agent.model().requests();
    assert_eq!(asked.len(), 1);
    assert_eq!(
        asked[0].messages[2].calls()[0].id.as_deref(),
        Some("call_7")
    );
}

#[test]
fn a_typed_output_is_read_again_from_the_replayed_answer() {
    #[derive(Debug, PartialEq, serde::Deserialize, schemars::JsonSchema)]
    struct Report {
        charged: Vec<u32>,
    }
    let world = World::default();
    let toolbox = toolbox(&world);
    let script = [
        r#"{"name": "charge", "arguments": {"n": 10}}"#,
        r#"{"name": "final_result", "arguments": {"charged": [10]}}"#,
    ];
    let durable = Durable::new(MemoryJournal::new());
    let agent = Agent::new(&toolbox, ScriptedModel::by_turn(script)).output::<Report>();
    let first = block_on(durable.run_agent(&agent, "typed", TASK)).unwrap();
    assert_eq!(first.run.output, Some(Report { charged: vec![10] }));
    let again = block_on(durable.run_agent(&agent, "typed", TASK)).unwrap();
    assert_eq!(again.run.output, first.run.output);
    assert_eq!(again.answers_asked, 0);
    assert_eq!(world.count("charge"), 1);
}

/// The charges an approval was asked about, in order.
#[derive(Clone, Default)]
struct Asked(std::sync::Arc<std::sync::Mutex<Vec<String>>>);

impl Asked {
    /// An approval hook that notes each request and approves it.
    fn hook(&self) -> impl Fn(&ApprovalRequest) -> Decision + Send + Sync + 'static {
        let asked = self.clone();
        move |request| {
            asked
                .0
                .lock()
                .unwrap()
                .push(format!("{} {}", request.tool, request.args["n"]));
            Decision::Approve
        }
    }
    fn approval(&self) -> Approval<'static> {
        Approval::new(self.hook()).tools(["charge"])
    }
    fn count(&self, call: &str) -> usize {
        self.0.lock().unwrap().iter().filter(|c| *c == call).count()
    }
}

#[test]
fn a_call_still_waiting_for_its_approval_is_asked_about_again_not_left_in_doubt() {
    let world = World::default();
    let asked = Asked::default();
    let toolbox = toolbox(&world).approve(asked.approval());
    let full = Durable::new(MemoryJournal::new());
    let baseline = block_on(full.run_agent(&agent(&toolbox), "ap", TASK)).unwrap();
    let (records, kinds) = durable_support::records(full.journal(), "ap");
    // Each charge: started (an approval asks about it), approved, finished.
    let charge = records
        .iter()
        .position(|r| r["record"] == "call_started" && r["tool"] == "charge")
        .unwrap();
    assert_eq!(records[charge]["approval"], true);
    assert_eq!(kinds[charge + 1], "approved");
    assert_eq!(records[charge + 1]["call"], records[charge]["call"]);
    assert_eq!(kinds.iter().filter(|k| *k == "approved").count(), 2);
    // A call no approval asks about says nothing of one.
    assert!(records[2].get("approval").is_none(), "{}", records[2]);
    assert_eq!(asked.count("charge 10"), 1);

    // Cut while the first charge waited for its approval: it did not run,
    // so it is asked about again and run, not left in doubt.
    let asked = Asked::default();
    let world = World::default();
    world
        .0
        .lock()
        .unwrap()
        .extend(["read_balance 1".to_owned(), "read_balance 2".to_owned()]);
    let toolbox = durable_support::toolbox(&world).approve(asked.approval());
    let durable = Durable::new(cut(full.journal(), "ap", charge + 1));
    let done = block_on(durable.run_agent(&agent(&toolbox), "ap", TASK)).unwrap();
    assert_eq!(done.run.transcript, baseline.run.transcript);
    assert_eq!(done.sources[2], Source::Rerun);
    assert_eq!((asked.count("charge 10"), world.count("charge 10")), (1, 1));
    // Nothing in doubt to resolve there.
    let durable = Durable::new(cut(full.journal(), "ap", charge + 1));
    let none = block_on(durable.resolve("ap", Resolution::Retry)).unwrap_err();
    assert!(
        matches!(none, DurableError::NothingInDoubt { .. }),
        "{none}"
    );

    // Cut after the approval was recorded: the charge may have run.
    let durable = Durable::new(cut(full.journal(), "ap", charge + 2));
    let stopped = block_on(durable.run_agent(&agent(&toolbox), "ap", TASK)).unwrap_err();
    assert!(
        matches!(&stopped, DurableError::InDoubt(d) if d.tool == "charge"),
        "{stopped}"
    );
}

#[test]
fn an_approval_the_journal_cannot_record_stops_the_run_before_the_call() {
    let world = World::default();
    let asked = Asked::default();
    let toolbox = toolbox(&world).approve(asked.approval());
    let full = Durable::new(MemoryJournal::new());
    let baseline = block_on(full.run_agent(&agent(&toolbox), "af", TASK)).unwrap();
    let (_, kinds) = durable_support::records(full.journal(), "af");
    let at = kinds.iter().position(|k| k == "approved").unwrap() as u64;

    let world = World::default();
    let asked = Asked::default();
    let toolbox = durable_support::toolbox(&world).approve(asked.approval());
    let durable = Durable::new(Flaky::default());
    durable.journal().fail_at(Some(at));
    let stopped = block_on(durable.run_agent(&agent(&toolbox), "af", TASK)).unwrap_err();
    assert!(
        matches!(&stopped, DurableError::Journal { stage: Stage::Approval { tool, .. }, .. } if tool == "charge"),
        "{stopped}"
    );
    assert!(
        stopped.to_string().contains("the call did not run"),
        "{stopped}"
    );
    assert_eq!((asked.count("charge 10"), world.count("charge")), (1, 0));
    // Nothing was recorded after the failed approval.
    let after: Vec<String> = durable.journal().inner.lines("af");
    assert_eq!(after.len() as u64, at);

    durable.journal().fail_at(None);
    let done = block_on(durable.run_agent(&agent(&toolbox), "af", TASK)).unwrap();
    assert_eq!(done.run.transcript, baseline.run.transcript);
    assert_eq!((asked.count("charge 10"), world.count("charge 10")), (2, 1));
}

#[test]
fn a_plan_call_waiting_for_the_interpreters_approval_is_asked_about_again() {
    use typed_tools::plan::Interpreter;
    let world = World::default();
    let toolbox = toolbox(&world);
    let asked = Asked::default();
    let interpreter = Interpreter::new(&toolbox).approve_writes(asked.hook());
    let full = Durable::new(MemoryJournal::new());
    let first = block_on(full.run_plan(&interpreter, "pa", &durable_support::plan())).unwrap();
    let (records, _) = durable_support::records(full.journal(), "pa");
    let charge = records
        .iter()
        .position(|r| r["record"] == "call_started" && r["tool"] == "charge")
        .unwrap();
    assert_eq!(records[charge]["approval"], true);

    let world = World::default();
    world.0.lock().unwrap().push("read_balance 1".to_owned());
    let toolbox = durable_support::toolbox(&world);
    let asked = Asked::default();
    let interpreter = Interpreter::new(&toolbox).approve_writes(asked.hook());
    let durable = Durable::new(cut(full.journal(), "pa", charge + 1));
    let done = block_on(durable.run_plan(&interpreter, "pa", &durable_support::plan())).unwrap();
    assert_eq!(done.run, first.run);
    assert_eq!(done.sources, [Source::Replayed, Source::Rerun, Source::Ran]);
    assert_eq!((asked.count("charge 10"), world.count("charge 10")), (1, 1));
}

#[test]
fn a_call_repaired_before_its_approval_is_recorded_as_approved() {
    let world = World::default();
    let asked = Asked::default();
    let toolbox = recovering_charge(&world).approve(asked.approval());
    // The amount as a string: coerced to a number, then asked about.
    let script = [
        r#"{"name": "charge", "arguments": {"n": "10"}}"#,
        "Charged.",
    ];
    let full = Durable::new(MemoryJournal::new());
    let agent = Agent::new(&toolbox, ScriptedModel::by_turn(script));
    block_on(full.run_agent(&agent, "rep", TASK)).unwrap();
    let (records, kinds) = durable_support::records(full.journal(), "rep");
    let started = kinds.iter().position(|k| k == "call_started").unwrap();
    assert_eq!(records[started]["args"], json!({"n": "10"}));
    assert_eq!(kinds[started + 1], "approved");
    assert_eq!(asked.count("charge 10"), 1);

    // Cut after the approval: the charge ran, or may have: in doubt, not
    // run again.
    let durable = Durable::new(cut(full.journal(), "rep", started + 2));
    let agent = Agent::new(&toolbox, ScriptedModel::by_turn(script));
    let stopped = block_on(durable.run_agent(&agent, "rep", TASK)).unwrap_err();
    assert!(matches!(stopped, DurableError::InDoubt(_)), "{stopped}");
    assert_eq!(world.count("charge 10"), 1);
}

/// A journal damaged in ways no crash makes (a record lost, doubled, out
/// of order, a field changed): a resume never panics, and either finishes
/// or stops with a typed error (a lost record is lost data: what it
/// recorded may be done again, which no journal can prevent).
#[test]
fn a_damaged_journal_is_refused_or_resumed_never_a_panic() {
    let world = World::default();
    let toolbox = toolbox(&world);
    let full = Durable::new(MemoryJournal::new());
    block_on(full.run_agent(&agent(&toolbox), "d", TASK)).unwrap();
    let lines = full.journal().lines("d");
    let values: Vec<serde_json::Value> = lines
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut damaged: Vec<Vec<serde_json::Value>> = Vec::new();
    for i in 0..values.len() {
        let mut dropped = values.clone();
        dropped.remove(i);
        damaged.push(dropped);
        let mut doubled = values.clone();
        doubled.insert(i, values[i].clone());
        damaged.push(doubled);
        if i + 1 < values.len() {
            let mut swapped = values.clone();
            swapped.swap(i, i + 1);
            damaged.push(swapped);
        }
        for (key, junk) in [
            ("call", json!(u64::MAX)),
            ("call", json!(999)),
            ("step", json!(0)),
            ("step", json!(u32::MAX)),
            ("format", json!(u32::MAX)),
            ("args", json!("not an object")),
            ("tool", json!("no_such_tool")),
            (
                "response",
                json!({"text": 5, "calls": [1, "x", null], "usage": "many", "stop": []}),
            ),
            (
                "result",
                json!({"err": {"kind": "nonsense", "message": "?"}}),
            ),
        ] {
            if values[i].get(key).is_some() {
                let mut changed = values.clone();
                changed[i][key] = junk;
                damaged.push(changed);
            }
        }
    }
    let (mut finished, mut refused) = (0, 0);
    for records in &damaged {
        let journal = MemoryJournal::new();
        let mut seq = 0;
        for value in records {
            // A record the format cannot read is the store's `Corrupt`.
            if let Ok(record) = Record::from_json(&value.to_string()) {
                block_on(journal.append("d", seq, &record)).unwrap();
                seq += 1;
            }
        }
        let world = World::default();
        let toolbox = durable_support::toolbox(&world);
        let durable = Durable::new(journal);
        match block_on(durable.run_agent(&agent(&toolbox), "d", TASK)) {
            Ok(_) => finished += 1,
            Err(error) => {
                assert!(!error.to_string().is_empty());
                refused += 1;
            }
        }
    }
    // Both happen: damage after the run's end changes nothing; damage to
    // its start or order is refused.
    assert!(
        finished > 0 && refused > 0,
        "{finished} finished, {refused} refused"
    );
    eprintln!(
        "{} damaged journals: {finished} finished, {refused} refused",
        damaged.len()
    );
}
