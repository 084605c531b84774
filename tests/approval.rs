//! Approval in dispatch: the hook sees exactly the arguments a tool runs
//! with, after every rewrite recovery makes; it fails closed; it covers
//! direct calls, plans and every view of a toolbox; a refusal is a
//! `ToolError` the model can read.

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::executor::block_on;
use serde_json::{json, Value};
use support::{calls, tools_called, Charge, IssueRefund, LookupAccount, SendReply, Shop};
use typed_tools::effect::{Effect, EffectSet};
use typed_tools::model::ScriptedModel;
use typed_tools::plan::{CallResult, Interpreter, Plan, Value as PlanValue};
use typed_tools::recover::{Backoff, Policy, Retry};
use typed_tools::toolbox::{Approval, ApprovalRequest, Decision};
use typed_tools::{tool, DynamicTool, NextStep, ToolError, Toolbox, ToolboxBuilder};

/// The support shop's tools over a fresh shop, with `policy` for every tool.
fn shop_tools(policy: Policy) -> (ToolboxBuilder, Arc<Shop>) {
    let shop = Arc::new(Shop::default());
    let builder = Toolbox::builder()
        .tool(LookupAccount::new(Arc::clone(&shop)))
        .tool(IssueRefund::new(Arc::clone(&shop)))
        .tool(SendReply::new(Arc::clone(&shop)))
        .tool(Charge::new(Arc::clone(&shop)))
        .policy(policy);
    (builder, shop)
}

/// A hook that records what it was shown and answers with `decide`.
fn recording(
    decide: impl Fn(&ApprovalRequest) -> Decision + Send + Sync + 'static,
) -> (Approval<'static>, Arc<Mutex<Vec<ApprovalRequest>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    let approval = Approval::new(move |request| {
        log.lock().unwrap().push(request.clone());
        decide(request)
    });
    (approval, seen)
}

fn refuse(reason: &str) -> impl Fn(&ApprovalRequest) -> Decision + Send + Sync + 'static {
    let reason = reason.to_owned();
    move |_| Decision::Refuse(reason.clone())
}

#[test]
fn the_hook_sees_a_models_rewrite_and_refusing_it_means_the_tool_never_runs() {
    // The model's call is not JSON; the policy asks a (scripted) model to fix
    // it, and the fixer writes a much larger amount than the call had.
    let fixer = Arc::new(ScriptedModel::new([
        r#"{"account_id": "cust_1", "amount": 99999}"#,
    ]));
    let (builder, shop) = shop_tools(Policy::none().fix_by_model(fixer.clone(), 1));
    let (approval, seen) = recording(|request| {
        if request.args["amount"].as_i64() > Some(10_000) {
            Decision::Refuse("over $100 needs a manager".into())
        } else {
            Decision::Approve
        }
    });
    let toolbox = builder.approval(approval).build().unwrap();
    let error = block_on(toolbox.call("issue_refund", r#"{"account_id": "cust_1", amount: 50"#))
        .unwrap_err();
    assert_eq!(
        error,
        ToolError::Refused {
            tool: "issue_refund".into(),
            reason: "over $100 needs a manager".into()
        }
    );
    assert_eq!(fixer.requests().len(), 1, "the fixer was asked");
    // Asked once, about the rewritten arguments, not the model's.
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].tool, "issue_refund");
    assert_eq!(seen[0].effects, EffectSet::WRITE);
    assert_eq!(
        seen[0].args,
        json!({"account_id": "cust_1", "amount": 99999})
    );
    assert!(calls(&shop).is_empty(), "the refund never ran");
    // The model is told to change course.
    assert_eq!(error.next_step(), NextStep::Adapt);
    assert_eq!(
        error.for_model(),
        "The call to `issue_refund` was refused and did not run: over $100 needs a manager. \
         Do not send it again unchanged; change course: do something else, or answer without it."
    );
}

#[test]
fn the_hook_sees_repaired_and_coerced_arguments_and_the_tool_runs_with_them() {
    let (builder, shop) = shop_tools(Policy::recover());
    let (approval, seen) = recording(|_| Decision::Approve);
    let toolbox = builder.approval(approval).build().unwrap();
    // Single quotes and a trailing comma (repair), an amount as a string (coercion).
    let output = block_on(toolbox.call(
        "issue_refund",
        "{'account_id': 'cust_1', 'amount': '4900',}",
    ))
    .unwrap();
    assert_eq!(output.json(), r#"{"tx_id":"tx_cust_1_4900"}"#);
    assert!(output.note_for_model().is_some());
    let seen = seen.lock().unwrap();
    // Not the broken text, not the repaired text with a string: what ran.
    assert_eq!(seen.len(), 1);
    assert_eq!(
        seen[0].args,
        json!({"account_id": "cust_1", "amount": 4900})
    );
    assert_eq!(
        calls(&shop),
        [(
            "issue_refund",
            json!({"account_id": "cust_1", "amount": 4900})
        )]
    );
}

#[test]
fn arguments_that_cannot_be_read_are_refused_before_anyone_is_asked() {
    let (builder, shop) = shop_tools(Policy::none());
    let (approval, seen) = recording(|_| Decision::Approve);
    let toolbox = builder.approval(approval).build().unwrap();
    for (args, kind) in [
        (r#"{"account_id": "cust_1", "amount": 5"#, "invalid"),
        (r#"{"account_id": "cust_1", "amount": "5"}"#, "shape"),
        (r#"{"account_id": "cust_1"}"#, "shape"),
        (
            r#"{"account_id": "cust_1", "amount": 5, "extra": 1}"#,
            "shape",
        ),
        (r#"["cust_1", 5]"#, "shape"),
        ("", "invalid"),
    ] {
        let error = block_on(toolbox.call("issue_refund", args)).unwrap_err();
        match kind {
            "invalid" => assert!(
                matches!(error, ToolError::InvalidArgs { .. }),
                "{args}: {error}"
            ),
            _ => assert!(
                matches!(error, ToolError::Deserialization { .. }),
                "{args}: {error}"
            ),
        }
    }
    // Too large: refused before it is read, let alone shown.
    let toolbox = {
        let (builder, _) = shop_tools(Policy::none());
        let (approval, _) = recording(|_| Decision::Approve);
        builder
            .max_argument_bytes(64)
            .approval(approval)
            .build()
            .unwrap()
    };
    let long = format!(r#"{{"account_id": "{}", "amount": 1}}"#, "x".repeat(100));
    assert!(matches!(
        block_on(toolbox.call("issue_refund", &long)),
        Err(ToolError::ArgsTooLarge { .. })
    ));
    assert!(seen.lock().unwrap().is_empty(), "no one was asked");
    assert!(calls(&shop).is_empty());
}

#[test]
fn a_recovery_that_cannot_fix_the_call_asks_no_one() {
    // The fixer answers with something that still does not fit.
    let fixer = Arc::new(ScriptedModel::new([r#"{"account_id": 7}"#]));
    let (builder, shop) = shop_tools(Policy::none().fix_by_model(fixer, 1));
    let (approval, seen) = recording(|_| Decision::Approve);
    let toolbox = builder.approval(approval).build().unwrap();
    let error = block_on(toolbox.call("issue_refund", "{account_id")).unwrap_err();
    assert!(matches!(error, ToolError::InvalidArgs { .. }), "{error}");
    assert!(seen.lock().unwrap().is_empty());
    assert!(calls(&shop).is_empty());
}

#[test]
fn write_tools_by_default_or_by_name_or_by_predicate() {
    let (builder, shop) = shop_tools(Policy::none());
    let toolbox = builder.build().unwrap();
    let lookup = r#"{"id": "cust_1"}"#;
    let reply = r#"{"to": "a@b.c", "body": "hi"}"#;

    // By default: Write tools only.
    let (approval, seen) = recording(refuse("no writes today"));
    let guarded = toolbox.approve(approval);
    assert!(block_on(guarded.call("lookup_account", lookup)).is_ok());
    assert!(matches!(
        block_on(guarded.call("send_reply", reply)),
        Err(ToolError::Refused { .. })
    ));
    assert_eq!(seen.lock().unwrap().len(), 1);

    // By name: a Read tool asked about, a Write tool not.
    let (approval, seen) = recording(refuse("lookups are audited"));
    let guarded = toolbox.approve(approval.tools(["lookup_account"]));
    assert!(matches!(
        block_on(guarded.call("lookup_account", lookup)),
        Err(ToolError::Refused { .. })
    ));
    assert!(block_on(guarded.call("send_reply", reply)).is_ok());
    assert_eq!(seen.lock().unwrap()[0].tool, "lookup_account");

    // By predicate on the spec.
    let (approval, seen) = recording(refuse("no"));
    let guarded = toolbox.approve(approval.when(|spec| spec.name().starts_with("send")));
    assert!(block_on(guarded.call("issue_refund", r#"{"account_id": "a", "amount": 1}"#)).is_ok());
    assert!(block_on(guarded.call("send_reply", reply)).is_err());
    assert_eq!(seen.lock().unwrap().len(), 1);

    assert_eq!(
        tools_called(&shop),
        ["lookup_account", "send_reply", "issue_refund"]
    );
}

#[test]
fn a_view_never_asks_less_than_the_one_it_came_from() {
    let (builder, shop) = shop_tools(Policy::none());
    let toolbox = builder.build().unwrap();
    let (first, first_seen) = recording(|_| Decision::Approve);
    let (second, second_seen) = recording(refuse("second says no"));
    let guarded = toolbox.approve(first).approve(second);
    // Both asked, in order; the second refuses.
    let error = block_on(guarded.call("send_reply", r#"{"to": "a", "body": "b"}"#)).unwrap_err();
    assert_eq!(
        error.to_string(),
        "the call to `send_reply` was refused: second says no"
    );
    assert_eq!(first_seen.lock().unwrap().len(), 1);
    assert_eq!(second_seen.lock().unwrap().len(), 1);
    // `restrict` keeps the approvals.
    let narrowed = guarded.restrict(EffectSet::READ | EffectSet::WRITE);
    assert!(block_on(narrowed.call("send_reply", r#"{"to": "a", "body": "b"}"#)).is_err());
    assert!(calls(&shop).is_empty());
}

#[test]
fn an_async_hook_is_awaited_and_a_panicking_hook_refuses() {
    let (builder, shop) = shop_tools(Policy::none());
    let toolbox = builder.build().unwrap();
    let later = toolbox.approve(Approval::new_async(|request: ApprovalRequest| async move {
        // Pending once, as a person answering later would be.
        let mut waited = false;
        futures::future::poll_fn(|cx| {
            if waited {
                std::task::Poll::Ready(())
            } else {
                waited = true;
                cx.waker().wake_by_ref();
                std::task::Poll::Pending
            }
        })
        .await;
        if request.args["amount"] == json!(1) {
            Decision::Approve
        } else {
            Decision::Refuse("only one cent".into())
        }
    }));
    assert!(block_on(later.call("issue_refund", r#"{"account_id": "a", "amount": 1}"#)).is_ok());
    assert!(block_on(later.call("issue_refund", r#"{"account_id": "a", "amount": 2}"#)).is_err());

    let broken = toolbox.approve(Approval::new(|_| panic!("the reviewer crashed")));
    let error =
        block_on(broken.call("issue_refund", r#"{"account_id": "a", "amount": 3}"#)).unwrap_err();
    assert_eq!(
        error.to_string(),
        "the call to `issue_refund` was refused: the approval hook for `issue_refund` failed (the reviewer crashed), so the call was not run"
    );
    let broken_later = toolbox.approve(Approval::new_async(|_| async {
        panic!("the reviewer crashed later")
    }));
    assert!(matches!(
        block_on(broken_later.call("issue_refund", r#"{"account_id": "a", "amount": 4}"#)),
        Err(ToolError::Refused { .. })
    ));
    assert_eq!(
        calls(&shop),
        [("issue_refund", json!({"account_id": "a", "amount": 1}))]
    );
}

/// Set a flag; fails the first `fail` times.
#[tool(effects = Write, idempotent)]
fn set_flag(#[state] attempts: &Mutex<u32>, on: bool) -> Result<bool, String> {
    let mut attempts = attempts.lock().unwrap();
    *attempts += 1;
    if *attempts < 3 {
        return Err(format!("busy (attempt {attempts})"));
    }
    Ok(on)
}

#[test]
fn a_retry_with_the_same_arguments_is_not_asked_about_again() {
    let attempts = Arc::new(Mutex::new(0));
    let (approval, seen) = recording(|_| Decision::Approve);
    let toolbox = Toolbox::builder()
        .tool(SetFlag::new(Arc::clone(&attempts)))
        .retry::<SetFlag>(Retry::exponential(3).with_backoff(Backoff {
            initial: Duration::ZERO,
            factor: 1.0,
            max: Duration::ZERO,
            jitter: false,
        }))
        .approval(approval)
        .build()
        .unwrap();
    let output = block_on(toolbox.call("set_flag", r#"{"on": true}"#)).unwrap();
    assert_eq!(output.json(), "true");
    assert_eq!(*attempts.lock().unwrap(), 3);
    assert_eq!(
        seen.lock().unwrap().len(),
        1,
        "approved once for three runs"
    );
}

#[test]
fn run_time_tools_are_gated_too() {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&ran);
    let tool = DynamicTool::new("delete_file")
        .description("Delete a file.")
        .input_schema(json!({
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"]
        }))
        .effects(EffectSet::WRITE)
        .handler(move |args: Value| {
            log.lock().unwrap().push(args.clone());
            async move { Ok(json!(null)) }
        });
    let (approval, seen) = recording(|request| match request.args["path"].as_str() {
        Some(path) if path.starts_with("/tmp/") => Decision::Approve,
        _ => Decision::Refuse("only /tmp".into()),
    });
    let toolbox = Toolbox::builder()
        .dynamic(tool)
        .approval(approval)
        .build()
        .unwrap();
    assert!(block_on(toolbox.call("delete_file", r#"{"path": "/tmp/x"}"#)).is_ok());
    assert!(block_on(toolbox.call("delete_file", r#"{"path": "/etc/passwd"}"#)).is_err());
    // Breaks the schema: refused before the hook.
    assert!(matches!(
        block_on(toolbox.call("delete_file", r#"{"path": 7}"#)),
        Err(ToolError::Deserialization { .. })
    ));
    assert_eq!(seen.lock().unwrap().len(), 2);
    assert_eq!(*ran.lock().unwrap(), [json!({"path": "/tmp/x"})]);
}

#[test]
fn a_plan_passes_the_toolbox_views_approval_and_its_own() {
    let (builder, shop) = shop_tools(Policy::none());
    let toolbox = builder.build().unwrap();
    let (approval, seen) = recording(|request| {
        if request.tool == "send_reply" {
            Decision::Refuse("replies are sent by a person".into())
        } else {
            Decision::Approve
        }
    });
    let guarded = toolbox.approve(approval);
    let plan = Plan::parse(support::SUPPORT_AGENT).unwrap();
    // The toolbox's own approval covers a plan with no hook of its own.
    let run = block_on(Interpreter::new(&guarded).run(&plan)).unwrap();
    assert_eq!(
        run.outcome,
        Ok(PlanValue::String(
            "refund succeeded but notification failed".into()
        ))
    );
    assert_eq!(
        *run.trace[2].result(),
        CallResult::Refused("replies are sent by a person".into())
    );
    let asked: Vec<String> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|r| r.tool.clone())
        .collect();
    assert_eq!(asked, ["issue_refund", "send_reply"]);
    // An interpreter's hook is asked after the view's, and can refuse too.
    let interpreter = Interpreter::new(&guarded).approve_writes(|request| {
        if request.tool == "issue_refund" {
            Decision::Refuse("not this month".into())
        } else {
            Decision::Approve
        }
    });
    let run = block_on(interpreter.run(&plan)).unwrap();
    assert_eq!(
        run.outcome,
        Ok(PlanValue::String(
            "refund failed, customer not refunded".into()
        ))
    );
    assert_eq!(
        tools_called(&shop),
        ["lookup_account", "issue_refund", "lookup_account"]
    );
}

/// Log a line.
#[tool(effects = Write)]
fn log_line(#[state] lines: &Mutex<Vec<String>>, line: String) {
    lines.lock().unwrap().push(line);
}

#[test]
fn calls_of_tools_no_approval_asks_about_run_as_before() {
    let lines = Arc::new(Mutex::new(Vec::new()));
    let toolbox = Toolbox::builder()
        .tool(LogLine::new(Arc::clone(&lines)))
        .build()
        .unwrap()
        .approve(
            Approval::new(refuse("never")).when(|spec| !spec.effects().contains(Effect::Write)),
        );
    // A sync tool no approval asks about is ready on the first poll, as without approval.
    use futures::FutureExt;
    let output = toolbox
        .call("log_line", r#"{"line": "hello"}"#)
        .now_or_never()
        .expect("ready at once");
    assert!(output.is_ok());
    assert_eq!(*lines.lock().unwrap(), ["hello"]);
}
