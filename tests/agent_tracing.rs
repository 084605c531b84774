//! `tracing` spans: an agent run, its steps, each model request, each tool
//! call and each plan run, with their fields and nesting, seen by a
//! subscriber that records them.

mod support;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use futures::executor::block_on;
use serde_json::json;
use support::{IssueRefund, LookupAccount, Shop};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};
use typed_tools::agent::Agent;
use typed_tools::model::{Response, ScriptedModel, Usage};
use typed_tools::toolbox::{Approval, Decision};
use typed_tools::Toolbox;

/// One span seen: its name, its fields as text, and its parent's index.
#[derive(Debug)]
struct Seen {
    name: &'static str,
    fields: BTreeMap<String, String>,
    parent: Option<usize>,
}

#[derive(Default)]
struct State {
    spans: Mutex<Vec<Seen>>,
    stack: Mutex<Vec<usize>>,
}

/// Records every span; shared, so that the test reads what it recorded.
#[derive(Clone, Default)]
struct Recorder(Arc<State>);

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

impl Subscriber for Recorder {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, attrs: &Attributes<'_>) -> Id {
        let mut fields = BTreeMap::new();
        attrs.record(&mut Fields(&mut fields));
        let parent = match attrs.parent() {
            Some(id) => Some(id.into_u64() as usize - 1),
            None if attrs.is_contextual() => self.0.stack.lock().unwrap().last().copied(),
            None => None,
        };
        let mut spans = self.0.spans.lock().unwrap();
        spans.push(Seen {
            name: attrs.metadata().name(),
            fields,
            parent,
        });
        Id::from_u64(spans.len() as u64)
    }
    fn record(&self, id: &Id, values: &Record<'_>) {
        let mut spans = self.0.spans.lock().unwrap();
        values.record(&mut Fields(&mut spans[id.into_u64() as usize - 1].fields));
    }
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, _: &Event<'_>) {}
    fn enter(&self, id: &Id) {
        self.0
            .stack
            .lock()
            .unwrap()
            .push(id.into_u64() as usize - 1);
    }
    fn exit(&self, _: &Id) {
        self.0.stack.lock().unwrap().pop();
    }
}

#[test]
fn spans_for_the_run_its_steps_model_requests_tool_calls_and_plans() {
    let shop = Arc::new(Shop::default());
    let toolbox = Toolbox::builder()
        .tool(LookupAccount::new(Arc::clone(&shop)))
        .tool(IssueRefund::new(Arc::clone(&shop)))
        .build()
        .unwrap();
    let usage = Usage::new(120, 30);
    let model = ScriptedModel::new([
        Response::new(
            json!([
                {"name": "lookup_account", "arguments": {"id": "cust_1"}},
            ])
            .to_string(),
        )
        .usage(usage),
        Response::new(
            json!([
                {"name": "issue_refund", "arguments": {"account_id": "cust_1", "amount": 5}},
            ])
            .to_string(),
        )
        .usage(usage),
        Response::new(
            "```plan\nmatch exec tool lookup_account {id = \"cust_2\"} { Ok(a) => a.email, Err(e) => e.message }\n```",
        )
        .usage(usage),
        Response::new("Done.").usage(usage),
    ]);
    let agent = Agent::new(&toolbox, model)
        .plans(true)
        .approval(Approval::new(|_| Decision::Refuse("no".into())));
    let recorder = Recorder::default();
    let run = tracing::subscriber::with_default(recorder.clone(), || {
        block_on(agent.run("Refund cust_1."))
    });
    assert_eq!(run.answer(), Some("Done."));
    let spans = recorder.0.spans.lock().unwrap();
    let named = |name: &str| -> Vec<(usize, &Seen)> {
        spans
            .iter()
            .enumerate()
            .filter(|(_, s)| s.name == name)
            .collect()
    };
    let field = |seen: &Seen, key: &str| seen.fields.get(key).cloned().unwrap_or_default();

    let runs = named("agent_run");
    assert_eq!(runs.len(), 1);
    let (run_index, agent_run) = runs[0];
    assert_eq!(field(agent_run, "model"), "scripted");
    assert_eq!(field(agent_run, "steps"), "4");
    assert_eq!(field(agent_run, "tool_calls"), "3");
    assert_eq!(field(agent_run, "tokens"), "600");
    assert_eq!(field(agent_run, "exit"), "answer");

    let steps = named("agent_step");
    assert_eq!(steps.len(), 4);
    assert!(steps.iter().all(|(_, s)| s.parent == Some(run_index)));
    let answers: Vec<String> = steps.iter().map(|(_, s)| field(s, "answer")).collect();
    assert_eq!(answers, ["calls", "calls", "plan", "final"]);

    let requests = named("model_request");
    assert_eq!(requests.len(), 4);
    for ((_, request), (step_index, _)) in requests.iter().zip(&steps) {
        assert_eq!(request.parent, Some(*step_index));
        assert_eq!(field(request, "model"), "scripted");
        assert_eq!(field(request, "input_tokens"), "120");
        assert_eq!(field(request, "output_tokens"), "30");
    }

    let calls = named("tool_call");
    assert_eq!(calls.len(), 3);
    let (_, lookup) = calls[0];
    assert_eq!(lookup.parent, Some(steps[0].0));
    assert_eq!(field(lookup, "tool"), "lookup_account");
    assert_eq!(field(lookup, "effects"), "{Read}");
    assert_eq!(field(lookup, "outcome"), "ok");
    assert!(lookup.fields.contains_key("duration_us"));
    assert!(!lookup.fields.contains_key("approval"));
    let (_, refund) = calls[1];
    assert_eq!(field(refund, "tool"), "issue_refund");
    assert_eq!(field(refund, "effects"), "{Write}");
    assert_eq!(field(refund, "outcome"), "refused");
    assert_eq!(field(refund, "approval"), "refused");

    let plans = named("plan_run");
    assert_eq!(plans.len(), 1);
    let (plan_index, plan) = plans[0];
    assert_eq!(plan.parent, Some(steps[2].0));
    assert_eq!(field(plan, "calls"), "1");
    assert_eq!(field(plan, "outcome"), "ok");
    // The plan's call is a child of the plan's run.
    assert_eq!(calls[2].1.parent, Some(plan_index));
}

/// The spans carry OpenTelemetry's semantic conventions for generative AI,
/// so that a backend fed by `tracing-opentelemetry` names and reads them.
#[test]
fn spans_carry_opentelemetrys_gen_ai_attributes() {
    let shop = Arc::new(Shop::default());
    let toolbox = Toolbox::builder()
        .tool(LookupAccount::new(Arc::clone(&shop)))
        .build()
        .unwrap();
    let call = typed_tools::ToolCall {
        id: Some("toolu_01A".into()),
        name: "lookup_account".into(),
        arguments: r#"{"id": "cust_1"}"#.into(),
    };
    let model = ScriptedModel::new([
        Response::new("")
            .calls(vec![call])
            .usage(Usage::new(120, 30)),
        Response::new("Found.").usage(Usage::new(150, 5)),
    ])
    .native(typed_tools::CatalogFormat::Anthropic);
    let agent = Agent::new(&toolbox, model);
    let recorder = Recorder::default();
    let run = tracing::subscriber::with_default(recorder.clone(), || {
        block_on(agent.run("Look cust_1 up."))
    });
    assert_eq!(run.answer(), Some("Found."));
    let spans = recorder.0.spans.lock().unwrap();
    let first = |name: &str| spans.iter().find(|s| s.name == name).unwrap();
    let field = |seen: &Seen, key: &str| seen.fields.get(key).cloned().unwrap_or_default();

    let agent_run = first("agent_run");
    assert_eq!(field(agent_run, "otel.name"), "invoke_agent");
    assert_eq!(field(agent_run, "gen_ai.operation.name"), "invoke_agent");
    assert_eq!(field(agent_run, "gen_ai.usage.input_tokens"), "270");
    assert_eq!(field(agent_run, "gen_ai.usage.output_tokens"), "35");

    let request = first("model_request");
    assert_eq!(field(request, "otel.name"), "chat scripted");
    assert_eq!(field(request, "otel.kind"), "client");
    assert_eq!(field(request, "gen_ai.operation.name"), "chat");
    assert_eq!(field(request, "gen_ai.request.model"), "scripted");
    assert_eq!(field(request, "gen_ai.request.max_tokens"), "4096");
    assert_eq!(field(request, "gen_ai.usage.input_tokens"), "120");
    assert_eq!(field(request, "gen_ai.usage.output_tokens"), "30");
    assert_eq!(
        field(request, "gen_ai.response.finish_reasons"),
        r#"["tool_calls"]"#
    );

    let tool_call = first("tool_call");
    assert_eq!(field(tool_call, "otel.name"), "execute_tool lookup_account");
    assert_eq!(field(tool_call, "gen_ai.operation.name"), "execute_tool");
    assert_eq!(field(tool_call, "gen_ai.tool.name"), "lookup_account");
    assert_eq!(field(tool_call, "gen_ai.tool.type"), "function");
    assert_eq!(field(tool_call, "gen_ai.tool.call.id"), "toolu_01A");
    assert!(!tool_call.fields.contains_key("error.type"));
}

#[test]
fn a_failed_call_records_its_error_type() {
    let shop = Arc::new(Shop::default());
    let toolbox = Toolbox::builder()
        .tool(LookupAccount::new(Arc::clone(&shop)))
        .build()
        .unwrap();
    let recorder = Recorder::default();
    let error = tracing::subscriber::with_default(recorder.clone(), || {
        block_on(toolbox.call("lookup_account", r#"{"id": 7}"#)).unwrap_err()
    });
    let spans = recorder.0.spans.lock().unwrap();
    let call = spans.iter().find(|s| s.name == "tool_call").unwrap();
    assert_eq!(
        call.fields.get("error.type"),
        Some(&error.kind().to_owned())
    );
    // Called directly, not by an agent: no call id.
    assert!(!call.fields.contains_key("gen_ai.tool.call.id"));
}

/// Who is asking, for the test of a context in spans.
struct Caller {
    name: &'static str,
    admin: bool,
}

/// Delete a note, after giving way once (so that the other run asks the
/// model meanwhile, and each run takes one call from the shared script).
#[typed_tools::tool(effects = Write)]
async fn delete_note(#[context] caller: &Caller, id: u32) -> String {
    let mut yielded = false;
    futures::future::poll_fn(|cx| {
        if yielded {
            return std::task::Poll::Ready(());
        }
        yielded = true;
        cx.waker().wake_by_ref();
        std::task::Poll::Pending
    })
    .await;
    format!("{} deleted note {id}", caller.name)
}

/// The run's context in spans, as the user chooses: each run instrumented
/// with a span of the user's that records what it wants of the context
/// (here the caller's name); every span the run opens, each call's
/// included, is its child. Two runs at once, each call's span under its own
/// run's, and the approval's answer (made from the context) on it.
#[test]
fn a_runs_context_is_in_the_span_the_run_is_instrumented_with() {
    use tracing::Instrument;

    let toolbox = Toolbox::builder()
        .context::<Caller>()
        .tool(DeleteNote)
        .approval(Approval::with_context(|_, caller: &Caller| {
            match caller.admin {
                true => Decision::Approve,
                false => Decision::Refuse(format!("{} is no admin", caller.name)),
            }
        }))
        .build()
        .unwrap();
    let call = r#"[{"name": "delete_note", "arguments": {"id": 1}}]"#;
    let agent = Agent::new(&toolbox, ScriptedModel::new([call, call, "done", "done"]));
    let ana = Caller {
        name: "ana",
        admin: true,
    };
    let bob = Caller {
        name: "bob",
        admin: false,
    };
    let recorder = Recorder::default();
    tracing::subscriber::with_default(recorder.clone(), || {
        let run = |caller: &'static Caller| {
            let span = tracing::info_span!("request", user = caller.name);
            agent.run_in(caller, "delete note 1").instrument(span)
        };
        // `'static` callers, for the closure: leaked, in a test.
        let (ana, bob) = (&*Box::leak(Box::new(ana)), &*Box::leak(Box::new(bob)));
        block_on(async { futures::join!(run(ana), run(bob)) })
    });
    let spans = recorder.0.spans.lock().unwrap();
    let user_of = |mut at: usize| loop {
        let seen = &spans[at];
        if seen.name == "request" {
            return seen.fields["user"].clone();
        }
        at = seen
            .parent
            .expect("every span of a run is under its request's");
    };
    let mut calls: Vec<(String, String)> = spans
        .iter()
        .enumerate()
        .filter(|(_, seen)| seen.name == "tool_call")
        .map(|(at, seen)| (user_of(at), seen.fields["approval"].clone()))
        .collect();
    calls.sort();
    assert_eq!(
        calls,
        [
            ("ana".to_owned(), "approved".to_owned()),
            ("bob".to_owned(), "refused".to_owned())
        ]
    );
}
