#![deny(warnings)]
// A user's struct, enums, `Vec` and `Option` as plan literals: checked against
// the tool's parameter types by rustc, written as serde_json writes them (a
// record, a variant's name or `{Variant = value}`, an internally tagged
// variant as a record), accepted by the plan check and read back by the tool.

use futures::executor::block_on;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use typed_tools::plan::typed::{lit, TypedPlan};
use typed_tools::{exec, field, on, tool, Toolbox};

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Reminder {
    note_id: u32,
    day: u8,
    repeat: Option<Repeat>,
}

/// Internally tagged: every variant is a record, so a list of them has one
/// plan type.
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(tag = "every")]
enum Repeat {
    Day,
    Days { n: u16 },
    Week { weekday: String },
}

#[derive(Serialize, Deserialize, JsonSchema)]
enum Urgency {
    Low,
    High { by_hour: u8 },
}

/// Schedule reminders.
#[tool(effects = Write)]
fn schedule(reminders: Vec<Reminder>, urgency: Urgency, tags: Vec<String>) -> Result<String, String> {
    let described: Vec<String> = reminders
        .iter()
        .map(|r| {
            let repeat = match &r.repeat {
                None => "once".to_owned(),
                Some(Repeat::Day) => "daily".to_owned(),
                Some(Repeat::Days { n }) => format!("every {n} days"),
                Some(Repeat::Week { weekday }) => format!("on {weekday}s"),
            };
            format!("{} on day {} {repeat}", r.note_id, r.day)
        })
        .collect();
    let urgency = match urgency {
        Urgency::Low => "low".to_owned(),
        Urgency::High { by_hour } => format!("high, by {by_hour}h"),
    };
    Ok(format!("{} ({urgency}) [{}]", described.join(", "), tags.join(" ")))
}

fn main() {
    let reminders = vec![
        Reminder { note_id: 1, day: 3, repeat: None },
        Reminder { note_id: 2, day: 4, repeat: Some(Repeat::Day) },
        Reminder { note_id: 3, day: 5, repeat: Some(Repeat::Days { n: 2 }) },
        Reminder { note_id: 4, day: 6, repeat: Some(Repeat::Week { weekday: "Monday".into() }) },
    ];
    let plan = TypedPlan::new(on!(exec!(Schedule {
            reminders: lit(reminders),
            urgency: lit(Urgency::High { by_hour: 9 }),
            tags: lit(vec!["home", "work"]),
        }),
        Ok(done) => done,
        Err(e) => field!(e.message),
    ));
    assert!(plan.plan().to_string().contains(
        r#"{reminders = [{noteId = 1, day = 3, repeat = ()}, {noteId = 2, day = 4, repeat = {every = "Day"}}, {noteId = 3, day = 5, repeat = {every = "Days", n = 2}}, {noteId = 4, day = 6, repeat = {every = "Week", weekday = "Monday"}}], urgency = {High = {by_hour = 9}}, tags = ["home", "work"]}"#
    ), "{}", plan.plan());
    let toolbox = Toolbox::builder().tool(Schedule).build().unwrap();
    let run = block_on(plan.run(&toolbox)).unwrap();
    assert_eq!(
        run.outcome,
        Ok("1 on day 3 once, 2 on day 4 daily, 3 on day 5 every 2 days, 4 on day 6 on Mondays (high, by 9h) [home work]".to_owned())
    );
    // A unit variant is its name.
    let low = TypedPlan::new(on!(exec!(Schedule { reminders: lit(vec![]), urgency: lit(Urgency::Low), tags: lit(Vec::<String>::new()) }),
        Ok(done) => done,
        Err(e) => field!(e.message),
    ));
    assert!(low.plan().to_string().contains(r#"{reminders = [], urgency = "Low", tags = []}"#));
    assert_eq!(block_on(low.run(&toolbox)).unwrap().outcome, Ok(" (low) []".to_owned()));
}
