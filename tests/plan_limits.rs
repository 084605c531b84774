//! A plan that type-checks cannot take the host down: each class of hostile
//! plan (at most 4 KB of text) stops with the limit it reached named, within
//! a second and 64 MiB, the calls made before it in the trace; a plan within
//! the limits runs as before; each limit can be moved; a `fold` carrying a
//! long list is linear; and every walk over a value, at the depth limit and
//! far past it, fits a 2 MiB thread.
//!
//! Bytes are counted by a counting global allocator (`peak_alloc`), so every
//! test here takes [`LOCK`]: the peak is the whole process's.

use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use futures::executor::block_on;
use peak_alloc::PeakAlloc;
use serde_json::json;
use typed_tools::plan::{check, Interpreter, Limit, Limits, Plan, Run, RunError, Value};
use typed_tools::{tool, Toolbox};

#[global_allocator]
static PEAK: PeakAlloc = PeakAlloc;

/// One test at a time: the allocator's peak is the process's.
static LOCK: Mutex<()> = Mutex::new(());

fn lock() -> MutexGuard<'static, ()> {
    LOCK.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Add one.
#[tool(effects = Pure)]
fn inc(n: i64) -> i64 {
    n + 1
}

/// The numbers from 0 to `n` - 1.
#[tool(effects = Pure)]
fn range(n: i64) -> Vec<i64> {
    (0..n).collect()
}

/// Arrays `levels` deep around a 1.
#[tool(effects = Pure)]
fn nested(levels: u32) -> serde_json::Value {
    (0..levels).fold(json!(1), |inner, _| json!([inner]))
}

/// Wait `ms` milliseconds, then say how long.
#[tool(effects = Pure)]
fn wait(ms: u64) -> u64 {
    std::thread::sleep(Duration::from_millis(ms));
    ms
}

fn toolbox() -> Toolbox {
    Toolbox::builder()
        .tool(Inc)
        .tool(Wait)
        .tool(Range)
        .tool(Nested)
        .build()
        .unwrap()
}

/// A run, how long it took, and the most bytes it held at once beyond what
/// was held before it.
struct Measured {
    run: Run,
    elapsed: Duration,
    peak: usize,
}

fn measure(interpreter: &Interpreter<'_>, text: &str) -> Measured {
    // Some of these plans are ill-typed (a `fold` that wraps its
    // accumulator), which the checker refuses before anything runs
    // (tests/plan_check.rs); the limits are the second line, so they are
    // measured with the type check left out.
    measure_run(interpreter, text, false)
}

/// [`measure`], through `Interpreter::run` (which checks first) when `checked`.
fn measure_run(interpreter: &Interpreter<'_>, text: &str, checked: bool) -> Measured {
    let plan = Plan::parse(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let before = PEAK.current_usage();
    PEAK.reset_peak_usage();
    let started = Instant::now();
    let run = if checked {
        block_on(interpreter.run(&plan))
    } else {
        block_on(interpreter.__run_without_type_check(&plan))
    }
    .unwrap_or_else(|e| panic!("{e}\n{text}"));
    let elapsed = started.elapsed();
    let peak = PEAK.peak_usage().saturating_sub(before);
    Measured { run, elapsed, peak }
}

/// `body` after one call, which the trace must keep.
fn after_a_call(body: &str) -> String {
    format!("let first = match exec tool inc {{n = 1}} {{ Ok(n) => n, Err(e) => 0 }} in\n{body}")
}

/// `[0, 1, ..., 15]`.
fn sixteen() -> String {
    let items: Vec<String> = (0..16).map(|i| i.to_string()).collect();
    format!("[{}]", items.join(", "))
}

/// `let a1 = a0 ++ a0 in ... let aN = a(N-1) ++ a(N-1) in aN`.
fn doublings(n: usize) -> String {
    let mut text = String::from("let a0 = \"0123456789abcdef\" in\n");
    for i in 1..=n {
        text += &format!("let a{i} = a{} ++ a{} in\n", i - 1, i - 1);
    }
    text + &format!("a{n}")
}

/// The hostile plans: a name, the text, and the limit each reaches with the
/// default limits.
fn hostile() -> Vec<(&'static str, String, Limit)> {
    let defaults = (8 << 20, 32 << 20, 64, 1_000_000, 1_000);
    let (value_bytes, memory, depth, steps, calls) = defaults;
    let l = sixteen();
    // Fresh copies of a 1 MiB string, one per `let`.
    let mut copies = doublings(16).replace("\na16", "\n");
    copies += "let c0 = a16 in\n";
    for i in 1..=40 {
        copies += &format!("let c{i} = c{} ++ \"{i}\" in\n", i - 1);
    }
    copies += "c40";
    let literal = "x".repeat(3500);
    let zeros = format!("[{}]", vec!["0"; 100].join(", "));
    let fold_steps = format!(
        "let l = {l} in fold (fn a, x => fold (fn b, y => fold (fn c, z => fold (fn d, w => \
         fold (fn e, v => e + 1) d l) c l) b l) a l) 0 l"
    );
    vec![
        (
            "a string doubled 26 times",
            doublings(26),
            Limit::ValueBytes(value_bytes),
        ),
        (
            "a list multiplied by nested `map`s",
            format!(
                "let l = {l} in map (fn a => map (fn b => map (fn c => map (fn d => map (fn e => l) l) l) l) l) l"
            ),
            Limit::ValueBytes(value_bytes),
        ),
        (
            "a list doubled by a `fold`",
            format!("fold (fn acc, x => [acc, acc]) [0] {zeros}"),
            Limit::ValueBytes(value_bytes),
        ),
        (
            "a `fold` that wraps its accumulator",
            format!("fold (fn acc, x => [acc]) [0] {zeros}"),
            Limit::Depth(depth),
        ),
        (
            // Of a type the checker does not know (free-form JSON): it checks.
            "a `fold` that wraps an accumulator of unknown type",
            format!("fold (fn acc, x => [acc]) (call tool nested {{levels = 0}}) {zeros}"),
            Limit::Depth(depth),
        ),
        (
            "a deep `let` chain of fresh 1 MiB strings",
            copies,
            Limit::Memory(memory),
        ),
        (
            "a 3.5 KB literal copied by nested `map`s",
            format!(
                "let l = {l} in map (fn a => map (fn b => map (fn c => \"{literal}\") l) l) l"
            ),
            Limit::ValueBytes(value_bytes),
        ),
        (
            "nested `fold`s over 16 elements, 16^5 times",
            fold_steps,
            Limit::Steps(steps),
        ),
        (
            "a `traverse` of 2,000 calls",
            "match traverse (fn x => exec tool inc {n = x}) (call tool range {n = 2000}) {\n  \
             Ok(all) => all,\n  Err(e) => []\n}"
                .to_owned(),
            Limit::Calls(calls),
        ),
    ]
}

/// Each hostile plan stops at its limit, within a second and 64 MiB: run
/// without the type check (the limits are the second line), and through
/// `Interpreter::run`, which checks first, the path a model's plan takes:
/// there the plans that type-check (all but those whose `fold` wraps an
/// accumulator of a known type, which the checker refuses) stop the same way.
#[test]
fn each_hostile_plan_stops_at_its_limit_within_a_second_and_64_mib() {
    let _lock = lock();
    let toolbox = toolbox();
    let interpreter = Interpreter::new(&toolbox);
    for checked in [false, true] {
        let mut ran = 0;
        for (name, body, limit) in hostile() {
            let text = after_a_call(&body);
            assert!(text.len() <= 4096, "{name}: {} bytes", text.len());
            if checked && check(&Plan::parse(&text).unwrap(), &toolbox).is_err() {
                assert!(
                    body.contains("fold (fn acc, x => [acc"),
                    "{name} is refused"
                );
                continue;
            }
            ran += 1;
            let Measured { run, elapsed, peak } = measure_run(&interpreter, &text, checked);
            eprintln!(
                "{name} (checked: {checked}): {limit:?} after {elapsed:?}, peak {:.1} MiB, {} bytes of text",
                peak as f64 / f64::from(1 << 20),
                text.len()
            );
            assert_eq!(
                run.outcome,
                Err(RunError::LimitExceeded { limit }),
                "{name}"
            );
            assert!(elapsed < Duration::from_secs(1), "{name}: {elapsed:?}");
            assert!(peak < 64 << 20, "{name}: {peak} bytes");
            // The calls before the limit are kept, and nothing after it ran.
            assert_eq!(run.trace[0].tool(), "inc", "{name}");
            if let Limit::Calls(calls) = limit {
                // `inc` first, `range`, then `inc` until the limit.
                assert_eq!(run.trace.len() as u64, calls, "{name}");
            } else {
                // `inc`, and each `call` of the body (before its loop).
                let calls = 1 + body.matches("call tool").count();
                assert_eq!(run.trace.len(), calls, "{name}");
            }
        }
        let expected = if checked {
            hostile().len() - 2
        } else {
            hostile().len()
        };
        assert_eq!(ran, expected, "checked: {checked}");
    }
}

#[test]
fn the_allocator_sees_what_a_plan_builds_past_its_limits() {
    let _lock = lock();
    let toolbox = toolbox();
    // Without the limits that stop it, a string doubled 23 times is 128 MiB:
    // the measure of the test above would fail.
    let unlimited = Limits::new().value_bytes(usize::MAX).memory(usize::MAX);
    let interpreter = Interpreter::new(&toolbox).limits(unlimited);
    let Measured { run, peak, .. } = measure(&interpreter, &doublings(23));
    assert_eq!(run.outcome.map(|v| v.size()), Ok(64 + (128 << 20)));
    assert!(peak > 128 << 20, "{peak}");
}

#[test]
fn wall_time_stops_a_long_run() {
    let _lock = lock();
    let toolbox = toolbox();
    // 2 ms: unlimited, the plan runs for about 65 ms in an optimized build
    // (170 ms in a debug one); at 100 ms a release build finished it first.
    let wall_time = Duration::from_millis(2);
    let limits = Limits::new().steps(u64::MAX).wall_time(wall_time);
    let interpreter = Interpreter::new(&toolbox).limits(limits);
    let (_, text, _) = hostile()
        .into_iter()
        .find(|(_, _, limit)| matches!(limit, Limit::Steps(_)))
        .unwrap();
    let Measured { run, elapsed, .. } = measure(&interpreter, &after_a_call(&text));
    assert_eq!(
        run.outcome,
        Err(RunError::LimitExceeded {
            limit: Limit::WallTime(wall_time)
        })
    );
    assert!(elapsed < Duration::from_secs(1), "{elapsed:?}");
    assert_eq!(run.trace.len(), 1);
}

#[test]
fn a_call_that_ends_past_the_wall_time_stops_the_run_after_it() {
    let _lock = lock();
    let toolbox = toolbox();
    let limits = Limits::new().wall_time(Duration::from_millis(100));
    let interpreter = Interpreter::new(&toolbox).limits(limits);
    let text = "match traverse (fn ms => exec tool wait {ms = ms}) [60, 60, 60, 60] { Ok(all) => all, Err(e) => [] }";
    let Measured { run, .. } = measure_run(&interpreter, text, true);
    assert_eq!(
        run.outcome,
        Err(RunError::LimitExceeded {
            limit: Limit::WallTime(Duration::from_millis(100))
        })
    );
    // The second call ends past 100 ms: it is in the trace, the third never ran.
    assert_eq!(run.trace.len(), 2);
}

/// Takes five seconds to answer, waiting on a thread of its own (no
/// runtime named).
#[tool(effects = Write)]
async fn slow_write(n: i64) -> i64 {
    let (done, wait) = futures::channel::oneshot::channel();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(5));
        let _ = done.send(());
    });
    let _ = wait.await;
    n
}

/// Runs `text` with `interpreter`, timed.
fn timed(interpreter: &Interpreter<'_>, text: &str) -> (Run, Duration) {
    let plan = Plan::parse(text).unwrap();
    let start = Instant::now();
    let run = block_on(interpreter.run(&plan)).unwrap();
    (run, start.elapsed())
}

#[test]
fn the_interpreter_alone_stops_a_call_at_its_per_call_limit() {
    let _lock = lock();
    let toolbox = Toolbox::builder().tool(SlowWrite).build().unwrap();
    let limits = Limits::new().per_call(Duration::from_secs(1));
    let text = "match exec tool slow_write {n = 1} { Ok(n) => \"done\", Err(e) => e.kind }";
    // The tool takes 5 s; the call is stopped at 1 s and its error goes to
    // the `Err` branch, the run going on.
    let (run, elapsed) = timed(&Interpreter::new(&toolbox).limits(limits), text);
    assert!(elapsed < Duration::from_secs(3), "{elapsed:?}");
    assert_eq!(run.outcome, Ok(Value::String("timed_out".into())));
    assert_eq!(
        run.trace[0].result(),
        &typed_tools::plan::CallResult::Err(typed_tools::ToolError::TimedOut {
            tool: "slow_write".into(),
            after: Duration::from_secs(1),
        })
    );
    // An approval that never answers is stopped the same way, and the
    // tool never runs.
    let never = Interpreter::new(&toolbox)
        .limits(limits)
        .approve_writes_async(|_| futures::future::pending());
    let (run, elapsed) = timed(&never, text);
    assert!(elapsed < Duration::from_secs(3), "{elapsed:?}");
    assert_eq!(run.outcome, Ok(Value::String("timed_out".into())));
    // The run's wall time stops a call in progress too, and the run.
    let short = Limits::new().wall_time(Duration::from_secs(1));
    let (run, elapsed) = timed(&Interpreter::new(&toolbox).limits(short), text);
    assert!(elapsed < Duration::from_secs(3), "{elapsed:?}");
    assert_eq!(
        run.outcome,
        Err(RunError::LimitExceeded {
            limit: Limit::WallTime(Duration::from_secs(1))
        })
    );
    assert_eq!(run.trace.len(), 1);
}

#[test]
fn a_tool_output_deeper_than_the_limit_stops_the_plan_after_the_call() {
    let _lock = lock();
    let toolbox = toolbox();
    let text = "match exec tool nested {levels = 100} { Ok(d) => [d], Err(e) => [] }";
    let Measured { run, .. } = measure(&Interpreter::new(&toolbox), text);
    assert_eq!(
        run.outcome,
        Err(RunError::LimitExceeded {
            limit: Limit::Depth(64)
        })
    );
    assert_eq!(run.trace.len(), 1);
    let raised = Interpreter::new(&toolbox).limits(Limits::new().depth(101));
    let Measured { run, .. } = measure(&raised, text);
    assert_eq!(run.outcome.unwrap().depth(), 101);
}

#[test]
fn a_plan_within_the_limits_runs_as_before_and_each_limit_moves() {
    let _lock = lock();
    let toolbox = toolbox();
    let defaults = Interpreter::new(&toolbox);
    let small = after_a_call(&doublings(10));
    let Measured { run, .. } = measure(&defaults, &small);
    let Ok(Value::String(s)) = &run.outcome else {
        panic!("{:?}", run.outcome)
    };
    assert_eq!(s.len(), 16 << 10);
    assert_eq!(run.trace.len(), 1);
    // Down: the same plan stops.
    for (limits, limit) in [
        (Limits::new().steps(20), Limit::Steps(20)),
        (Limits::new().value_bytes(1000), Limit::ValueBytes(1000)),
        (Limits::new().memory(10_000), Limit::Memory(10_000)),
        (Limits::new().calls(0), Limit::Calls(0)),
    ] {
        let Measured { run, .. } = measure(&Interpreter::new(&toolbox).limits(limits), &small);
        assert_eq!(run.outcome, Err(RunError::LimitExceeded { limit }));
    }
    let lists = "[[1, 2, 3], [4]]";
    for (limits, limit) in [
        (Limits::new().list_length(2), Limit::ListLength(2)),
        (Limits::new().depth(1), Limit::Depth(1)),
    ] {
        let Measured { run, .. } = measure(&Interpreter::new(&toolbox).limits(limits), lists);
        assert_eq!(run.outcome, Err(RunError::LimitExceeded { limit }));
    }
    let record = "{a = 1, b = 2, c = 3}";
    let fields = Interpreter::new(&toolbox).limits(Limits::new().record_fields(2));
    assert_eq!(
        measure(&fields, record).run.outcome,
        Err(RunError::LimitExceeded {
            limit: Limit::RecordFields(2)
        })
    );
    // Up: a 16 MiB string, past the default 8 MiB, within raised limits.
    let big = after_a_call(&doublings(20));
    assert_eq!(
        measure(&defaults, &big).run.outcome,
        Err(RunError::LimitExceeded {
            limit: Limit::ValueBytes(8 << 20)
        })
    );
    let raised =
        Interpreter::new(&toolbox).limits(Limits::new().value_bytes(32 << 20).memory(64 << 20));
    let Measured { run, .. } = measure(&raised, &big);
    let Ok(Value::String(s)) = &run.outcome else {
        panic!("{:?}", run.outcome)
    };
    assert_eq!(s.len(), 16 << 20);
}

#[test]
fn a_fold_carrying_a_long_list_is_linear() {
    let _lock = lock();
    let toolbox = toolbox();
    let text = "let xs = call tool range {n = 10000} in
fold (fn acc, x => {items = acc.items, total = acc.total + x, last = acc.items}) {items = xs, total = 0, last = xs} xs";
    let Measured { run, elapsed, peak } = measure(&Interpreter::new(&toolbox), text);
    eprintln!(
        "a fold carrying 10,000 elements: {elapsed:?}, peak {:.1} MiB",
        peak as f64 / f64::from(1 << 20)
    );
    let outcome = run.outcome.unwrap();
    assert_eq!(outcome.field("total"), Some(&Value::Int(49_995_000)));
    let Some(Value::List(items)) = outcome.field("items") else {
        panic!("{outcome:?}")
    };
    assert_eq!(items.len(), 10_000);
    // Reading `acc.items` shares the list: the record and the list are the
    // same at each step, not copies.
    let Some(Value::List(last)) = outcome.field("last") else {
        panic!("{outcome:?}")
    };
    assert!(items.ptr_eq(last));
    assert!(elapsed < Duration::from_millis(500), "{elapsed:?}");
}

/// `[[...[0]...]]`, `levels` deep, built without recursion.
fn deep_json(levels: usize) -> serde_json::Value {
    let mut json = json!(0);
    for _ in 0..levels {
        json = serde_json::Value::Array(vec![json]);
    }
    json
}

/// Runs `f` on a thread with a 2 MiB stack, the default for spawned threads
/// and tokio's workers.
fn on_a_small_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn every_walk_over_a_value_at_the_depth_limit_fits_a_2_mib_thread() {
    let _lock = lock();
    on_a_small_stack(|| {
        let toolbox = toolbox();
        // The interpreter builds a value as deep as allowed, one level per
        // element of a `fold` (which the checker refuses: the type check is
        // left out to reach the limit behind it)...
        let wrap = |n: usize| format!("fold (fn acc, x => [acc]) 0 [{}]", vec!["0"; n].join(", "));
        let run = block_on(
            Interpreter::new(&toolbox).__run_without_type_check(&Plan::parse(&wrap(64)).unwrap()),
        )
        .unwrap();
        let value = run.outcome.unwrap();
        assert_eq!(value.depth(), 64);
        // ... and no more.
        let run = block_on(
            Interpreter::new(&toolbox).__run_without_type_check(&Plan::parse(&wrap(65)).unwrap()),
        )
        .unwrap();
        assert_eq!(
            run.outcome,
            Err(RunError::LimitExceeded {
                limit: Limit::Depth(64)
            })
        );
        let json = value.to_json().unwrap();
        assert_eq!(Value::from_json(json.clone()), value);
        assert_eq!(value.to_string().len(), 64 * 2 + 1);
        assert!(format!("{value:?}").starts_with("List([List(["));
        assert_eq!(value, value.clone());
        drop(value);

        // Far past the limit: what the public constructors and `from_json`
        // can build (the plan's values to 100,000 levels, JSON to 10,000).
        let value = Value::from_json(deep_json(10_000));
        assert_eq!(value.depth(), 10_000);
        // serde_json's own walks recurse: the JSON is compared and dropped
        // on a large stack.
        let json = value.to_json().unwrap();
        std::thread::Builder::new()
            .stack_size(256 << 20)
            .spawn(move || assert_eq!(json, deep_json(10_000)))
            .unwrap()
            .join()
            .unwrap();
        drop(value);
        let deep = |levels: usize| {
            let mut value = Value::Int(0);
            for i in 0..levels {
                value = if i % 2 == 0 {
                    Value::list([value])
                } else {
                    Value::record([("a", value)])
                };
            }
            value
        };
        let (a, b) = (deep(100_000), deep(100_000));
        assert_eq!(a.depth(), 100_000);
        assert_eq!(a, b);
        assert_ne!(a, deep(99_999));
        assert!(a.to_string().starts_with("{a = [{a = ["));
        assert!(format!("{a:?}").starts_with(r#"Record([("a", List([Record([("a", "#));
        assert_eq!(a.type_name().matches('[').count(), 8);
        drop((a, b));
        // A raised limit: a 10,000-level value built by a plan.
        let deep_plan = "fold (fn acc, x => [acc]) 0 (call tool range {n = 10000})";
        let interpreter = Interpreter::new(&toolbox).limits(Limits::new().depth(10_000));
        let run = block_on(interpreter.__run_without_type_check(&Plan::parse(deep_plan).unwrap()))
            .unwrap();
        let value = run.outcome.unwrap();
        assert_eq!(value.depth(), 10_000);
        assert_eq!(value, value.clone());
        assert!(value.to_string().starts_with("[[[["));
    });
}

#[test]
fn a_tool_output_past_a_limit_is_stopped_as_it_is_read_and_the_call_stays_in_the_trace() {
    use typed_tools::plan::CallResult;
    use typed_tools::DynamicTool;
    let fields: serde_json::Map<String, serde_json::Value> =
        (0..10).map(|i| (format!("f{i}"), json!(i))).collect();
    let tools = Toolbox::builder()
        .dynamic(
            DynamicTool::new("list")
                .handler(|_| async { Ok(json!([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])) }),
        )
        .dynamic(DynamicTool::new("record").handler(move |_| {
            let fields = fields.clone();
            async move { Ok(serde_json::Value::Object(fields)) }
        }))
        // A lone string is read without the deserializer, and as strictly.
        .dynamic(DynamicTool::new("text").handler(|_| async { Ok(json!("x".repeat(500))) }))
        .build()
        .unwrap();
    for (tool, limits, limit) in [
        ("list", Limits::new().list_length(5), Limit::ListLength(5)),
        (
            "record",
            Limits::new().record_fields(5),
            Limit::RecordFields(5),
        ),
        (
            "text",
            Limits::new().value_bytes(200),
            Limit::ValueBytes(200),
        ),
    ] {
        let text = format!("match exec tool {tool} {{}} {{ Ok(v) => v, Err(e) => e }}");
        let plan = Plan::parse(&text).unwrap();
        let run = block_on(Interpreter::new(&tools).limits(limits).run(&plan)).unwrap();
        assert_eq!(
            run.outcome,
            Err(RunError::LimitExceeded { limit }),
            "{tool}"
        );
        assert_eq!(run.trace.len(), 1, "{tool}");
        let CallResult::Err(error) = run.trace[0].result() else {
            panic!("{tool}: {:?}", run.trace[0])
        };
        assert!(
            error.to_string().contains("its output was not read"),
            "{error}"
        );
        // Within the limits, the same output is read whole.
        let run = block_on(Interpreter::new(&tools).run(&plan)).unwrap();
        assert!(run.outcome.is_ok(), "{tool}: {:?}", run.outcome);
    }
}
