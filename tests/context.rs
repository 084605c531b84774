//! A per-run context: tools that take one, toolboxes that give one per call
//! and per plan run, approvals that decide by it, and runs made at once
//! with different contexts, each seeing its own.

#[path = "support/yield_now.rs"]
mod yield_now;
use yield_now::YieldNow;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use futures::executor::block_on;
use typed_tools::plan::typed::{lit, TypedPlan};
use typed_tools::plan::{Interpreter, Plan, Value};
use typed_tools::recover::Policy;
use typed_tools::toolbox::{Approval, Decision};
use typed_tools::{exec, on, tool, DynamicTool, ToolError, Toolbox};

/// Who is calling, and for which request.
#[derive(Debug)]
struct Caller {
    name: String,
    admin: bool,
    request: u64,
}

fn caller(name: &str, admin: bool, request: u64) -> Caller {
    Caller {
        name: name.into(),
        admin,
        request,
    }
}

/// The notes, by author.
#[derive(Default)]
struct Notes(Mutex<Vec<(String, String)>>);

/// Say who is calling, after giving way to the other calls in flight.
#[tool(effects = Read)]
async fn whoami(#[context] caller: &Caller) -> String {
    YieldNow::once().await;
    format!("{} (request {})", caller.name, caller.request)
}

/// Write a note, signed by the caller.
#[tool(effects = Write)]
fn write_note(#[state] notes: &Notes, text: String, #[context] caller: &Caller) -> usize {
    let mut notes = notes.0.lock().unwrap();
    notes.push((caller.name.clone(), text));
    notes.len()
}

/// Delete every note of an author.
#[tool(effects = Write)]
fn delete_notes(#[context] caller: &Caller, #[state] notes: &Notes, author: String) -> String {
    notes.0.lock().unwrap().retain(|(by, _)| *by != author);
    format!("{} deleted {author}'s notes", caller.name)
}

/// Add two numbers: needs no context.
#[tool(effects = Pure)]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn toolbox(
    notes: &Arc<Notes>,
) -> Toolbox<typed_tools::effect::ReadWriteNetwork, typed_tools::toolbox::WithContext<Caller>> {
    Toolbox::builder()
        .context::<Caller>()
        .tool(Whoami)
        .tool(WriteNote::new(Arc::clone(notes)))
        .tool(DeleteNotes::new(Arc::clone(notes)))
        .tool(Add)
        .dynamic(DynamicTool::new("ping").handler(|_| async { Ok("pong".into()) }))
        .build()
        .unwrap()
}

#[test]
fn each_call_is_lent_its_own_context() {
    let notes = Arc::new(Notes::default());
    let toolbox = toolbox(&notes);
    let ana = caller("ana", true, 1);
    let bob = caller("bob", false, 2);
    block_on(async {
        assert_eq!(
            toolbox.call_in(&ana, "whoami", "{}").await.unwrap().json(),
            r#""ana (request 1)""#
        );
        toolbox
            .call_in(&ana, "write_note", r#"{"text": "milk"}"#)
            .await
            .unwrap();
        toolbox
            .call_in(&bob, "write_note", r#"{"text": "eggs"}"#)
            .await
            .unwrap();
        // Tools that take no context, typed or run-time, are called the same way.
        let sum = toolbox.call_in(&bob, "add", r#"{"a": 1, "b": 2}"#).await;
        assert_eq!(sum.unwrap().json(), "3");
        let pong = toolbox
            .call_value_in(&bob, "ping", &serde_json::json!({}))
            .await;
        assert_eq!(pong.unwrap().json(), r#""pong""#);
    });
    assert_eq!(
        *notes.0.lock().unwrap(),
        [
            ("ana".to_owned(), "milk".to_owned()),
            ("bob".to_owned(), "eggs".to_owned())
        ]
    );
}

#[test]
fn calls_made_at_once_with_different_contexts_each_see_their_own() {
    let notes = Arc::new(Notes::default());
    let toolbox = toolbox(&notes);
    let callers: Vec<Caller> = (0..8)
        .map(|i| caller(&format!("caller{i}"), false, i))
        .collect();
    // In one task, interleaved: each call gives way once while the others run.
    let outputs = block_on(futures::future::join_all(
        callers
            .iter()
            .map(|caller| toolbox.call_in(caller, "whoami", "{}")),
    ));
    for (i, output) in outputs.into_iter().enumerate() {
        assert_eq!(
            output.unwrap().into_json(),
            format!(r#""caller{i} (request {i})""#)
        );
    }
    // On threads, the toolbox shared, each call's context its own.
    let toolbox = Arc::new(toolbox);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .build()
        .unwrap();
    let handles: Vec<_> = (0..64u64)
        .map(|i| {
            let toolbox = Arc::clone(&toolbox);
            runtime.spawn(async move {
                let caller = caller(&format!("caller{i}"), false, i);
                let output = toolbox.call_in(&caller, "whoami", "{}").await.unwrap();
                (i, output.into_json())
            })
        })
        .collect();
    for handle in handles {
        let (i, json) = runtime.block_on(handle).unwrap();
        assert_eq!(json, format!(r#""caller{i} (request {i})""#));
    }
}

#[test]
fn plan_runs_made_at_once_with_different_contexts_each_see_their_own() {
    let notes = Arc::new(Notes::default());
    let toolbox = toolbox(&notes);
    let plan = Plan::parse(
        r#"match exec tool whoami {} {
  Ok(me) => match exec tool whoami {} { Ok(again) => me ++ " / " ++ again, Err(e) => e.message },
  Err(e) => e.message
}"#,
    )
    .unwrap();
    let interpreter = Interpreter::new(&toolbox);
    let ana = caller("ana", true, 1);
    let bob = caller("bob", false, 2);
    let (for_ana, for_bob) = block_on(async {
        futures::join!(
            interpreter.run_in(&ana, &plan),
            interpreter.run_in(&bob, &plan)
        )
    });
    assert_eq!(
        for_ana.unwrap().outcome,
        Ok(Value::String("ana (request 1) / ana (request 1)".into()))
    );
    assert_eq!(
        for_bob.unwrap().outcome,
        Ok(Value::String("bob (request 2) / bob (request 2)".into()))
    );
    // A plan checked once, run for each caller at once.
    let prepared = interpreter.prepare(&plan).unwrap();
    let (for_ana, for_bob) =
        block_on(async { futures::join!(prepared.run_in(&ana), prepared.run_in(&bob)) });
    assert_eq!(
        for_ana.outcome,
        Ok(Value::String("ana (request 1) / ana (request 1)".into()))
    );
    assert_eq!(
        for_bob.outcome,
        Ok(Value::String("bob (request 2) / bob (request 2)".into()))
    );
    // The typed builder's plans too.
    let typed = TypedPlan::new(on!(exec!(WriteNote { text: lit("from a plan") }),
        Ok(count) => count,
        Err(e) => lit(0),
    ));
    let run = block_on(typed.run_in(&toolbox, &bob)).unwrap();
    assert_eq!(run.outcome, Ok(1));
    assert_eq!(
        *notes.0.lock().unwrap(),
        [("bob".to_owned(), "from a plan".to_owned())]
    );
}

/// Refuses a destructive call unless the caller is an admin.
fn admins_only() -> Approval<'static, Caller> {
    Approval::with_context(|request, caller: &Caller| {
        if caller.admin {
            Decision::Approve
        } else {
            Decision::Refuse(format!("{} may not call `{}`", caller.name, request.tool))
        }
    })
    .tools(["delete_notes"])
}

#[test]
fn an_approval_decides_by_who_is_asking() {
    let notes = Arc::new(Notes::default());
    let toolbox = toolbox(&notes).approve(admins_only());
    let ana = caller("ana", true, 1);
    let bob = caller("bob", false, 2);
    block_on(async {
        toolbox
            .call_in(&bob, "write_note", r#"{"text": "eggs"}"#)
            .await
            .unwrap();
        let refused = toolbox
            .call_in(&bob, "delete_notes", r#"{"author": "bob"}"#)
            .await
            .unwrap_err();
        assert_eq!(
            refused,
            ToolError::Refused {
                tool: "delete_notes".into(),
                reason: "bob may not call `delete_notes`".into()
            }
        );
        assert_eq!(notes.0.lock().unwrap().len(), 1, "nothing was deleted");
        // Approved, the tool runs lent the same context.
        let deleted = toolbox
            .call_in(&ana, "delete_notes", r#"{"author": "bob"}"#)
            .await
            .unwrap();
        assert_eq!(deleted.json(), r#""ana deleted bob's notes""#);
    });
    assert!(notes.0.lock().unwrap().is_empty());

    // In a plan, the run's context is what the approval sees, whether it is
    // the toolbox's or the run's own.
    let plan = Plan::parse(
        r#"match exec tool delete_notes {author = "ana"} { Ok(done) => done, Err(e) => e.kind ++ ": " ++ e.message }"#,
    )
    .unwrap();
    let refused = Value::String("refused: bob may not call `delete_notes`".into());
    let run = block_on(Interpreter::new(&toolbox).run_in(&bob, &plan)).unwrap();
    assert_eq!(run.outcome, Ok(refused.clone()));
    let unguarded = self::toolbox(&notes);
    let interpreter = Interpreter::new(&unguarded).approval(admins_only());
    let run = block_on(interpreter.run_in(&bob, &plan)).unwrap();
    assert_eq!(run.outcome, Ok(refused));
    let run = block_on(interpreter.run_in(&ana, &plan)).unwrap();
    assert_eq!(
        run.outcome,
        Ok(Value::String("ana deleted ana's notes".into()))
    );
}

#[test]
fn an_async_approval_is_given_the_context_before_it_waits() {
    let notes = Arc::new(Notes::default());
    let asked = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&asked);
    let toolbox = toolbox(&notes).approve(Approval::with_context_async(
        move |request, caller: &Caller| {
            counted.fetch_add(1, Ordering::SeqCst);
            let admin = caller.admin;
            let name = caller.name.clone();
            async move {
                YieldNow::once().await;
                if admin {
                    Decision::Approve
                } else {
                    Decision::Refuse(format!("{name} may not call `{}`", request.tool))
                }
            }
        },
    ));
    let ana = caller("ana", true, 1);
    let bob = caller("bob", false, 2);
    let (for_ana, for_bob) = block_on(async {
        futures::join!(
            toolbox.call_in(&ana, "write_note", r#"{"text": "milk"}"#),
            toolbox.call_in(&bob, "write_note", r#"{"text": "eggs"}"#),
        )
    });
    assert_eq!(for_ana.unwrap().json(), "1");
    assert_eq!(
        for_bob.unwrap_err().to_string(),
        "the call to `write_note` was refused: bob may not call `write_note`"
    );
    assert_eq!(asked.load(Ordering::SeqCst), 2);
}

#[test]
fn recovery_calls_again_with_the_same_context() {
    let notes = Arc::new(Notes::default());
    let toolbox = Toolbox::builder()
        .context::<Caller>()
        .tool(WriteNote::new(Arc::clone(&notes)))
        .policy(Policy::recover())
        .build()
        .unwrap();
    let ana = caller("ana", true, 1);
    // Single quotes and a trailing comma: repaired, then run lent `ana`.
    let output = block_on(toolbox.call_in(&ana, "write_note", "{'text': 'milk',}")).unwrap();
    assert_eq!(output.json(), "1");
    assert!(output.note_for_model().is_some());
    // And through the gated path: approved, repaired, run lent `ana`.
    let guarded = toolbox.approve(Approval::with_context(|_, caller: &Caller| {
        if caller.admin {
            Decision::Approve
        } else {
            Decision::Refuse("no".into())
        }
    }));
    let output = block_on(guarded.call_in(&ana, "write_note", "{'text': 'eggs'}")).unwrap();
    assert_eq!(output.json(), "2");
    assert_eq!(
        *notes.0.lock().unwrap(),
        [
            ("ana".to_owned(), "milk".to_owned()),
            ("ana".to_owned(), "eggs".to_owned())
        ]
    );
}

#[test]
fn a_toolbox_without_context_is_called_as_before() {
    let toolbox = Toolbox::builder().tool(Add).build().unwrap();
    block_on(async {
        assert_eq!(
            toolbox
                .call("add", r#"{"a": 2, "b": 3}"#)
                .await
                .unwrap()
                .json(),
            "5"
        );
        // Generic code may give `&()` to any toolbox without context.
        assert_eq!(
            toolbox
                .call_in(&(), "add", r#"{"a": 2, "b": 3}"#)
                .await
                .unwrap()
                .json(),
            "5"
        );
    });
}

/// Two runs of one agent at once, for two callers: each run's calls, a
/// plan's included, are lent its own caller, and so is the agent's approval.
#[test]
fn agent_runs_made_at_once_with_different_contexts_each_see_their_own() {
    use typed_tools::agent::{Agent, CallOutcome, Exit};
    use typed_tools::model::ScriptedModel;

    let notes = Arc::new(Notes::default());
    // The script is shared by the two runs, which take its answers in turn:
    // both first ask for `whoami` (which gives way, so the other run asks
    // meanwhile), then both answer.
    let model = ScriptedModel::new([
        r#"[{"name": "whoami", "arguments": {}}]"#,
        r#"[{"name": "whoami", "arguments": {}}]"#,
        "done",
        "done",
    ]);
    let agent = Agent::new(&toolbox(&notes), model);
    let ana = caller("ana", true, 1);
    let bob = caller("bob", false, 2);
    let (for_ana, for_bob) = block_on(async {
        futures::join!(
            agent.run_in(&ana, "who am I?"),
            agent.run_in(&bob, "who am I?")
        )
    });
    for (run, expected) in [(for_ana, "ana (request 1)"), (for_bob, "bob (request 2)")] {
        assert_eq!(run.exit, Exit::Answer("done".into()));
        let CallOutcome::Ok(output) = &run.calls[0].outcome else {
            panic!("whoami ran: {:?}", run.calls[0].outcome)
        };
        assert_eq!(output.to_value(), serde_json::json!(expected));
    }

    // A plan the agent runs, and the agent's approval, see the run's caller.
    let plan = r#"match exec tool delete_notes {author = "carl"} {
  Ok(done) => done,
  Err(e) => e.kind ++ ": " ++ e.message
}"#;
    let agent = Agent::new(
        &toolbox(&notes),
        ScriptedModel::new([plan, "done", plan, "done"]),
    )
    .plans(true)
    .approval(admins_only());
    let by_bob = block_on(agent.run_in(&bob, "clean up"));
    let by_ana = block_on(agent.run_in(&ana, "clean up"));
    let outcome = |run: &typed_tools::agent::Run| {
        run.plans[0]
            .outcome
            .as_ref()
            .unwrap()
            .outcome
            .clone()
            .unwrap()
    };
    assert_eq!(
        outcome(&by_bob),
        Value::String("refused: bob may not call `delete_notes`".into())
    );
    assert_eq!(
        outcome(&by_ana),
        Value::String("ana deleted carl's notes".into())
    );
}
