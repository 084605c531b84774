#![deny(warnings)]
// The README's `weather(city, days: Option<u8>)` called from a typed plan
// with `days`, with `None`, and with `days` left out: an optional argument
// (an `Option`, or one with `#[serde(default)]`) may be left out of `exec!`.

use futures::executor::block_on;
use typed_tools::plan::typed::{lit, TypedPlan};
use typed_tools::{exec, field, on, tool, Toolbox};

/// Look up the weather in a city.
#[tool(effects = Network)]
fn weather(
    city: String,
    days: Option<u8>,
    #[serde(default)] unit: String,
) -> Result<String, String> {
    Ok(format!("sunny in {city} in {} day(s){unit}", days.unwrap_or(0)))
}

fn main() {
    let toolbox = Toolbox::builder().tool(Weather).build().unwrap();
    let run = |plan: TypedPlan<String, _>| block_on(plan.run(&toolbox)).unwrap().outcome;

    let given = TypedPlan::new(on!(exec!(Weather { city: lit("Lima"), days: lit(Some(2)), unit: lit(" (C)") }),
        Ok(w) => w,
        Err(e) => field!(e.message),
    ));
    assert_eq!(run(given), Ok("sunny in Lima in 2 day(s) (C)".to_owned()));

    let none = TypedPlan::new(on!(exec!(Weather { city: lit("Lima"), days: lit(None), unit: lit("") }),
        Ok(w) => w,
        Err(e) => field!(e.message),
    ));
    assert!(none.plan().to_string().contains(r#"{city = "Lima", days = (), unit = ""}"#));
    assert_eq!(run(none), Ok("sunny in Lima in 0 day(s)".to_owned()));

    let left_out = TypedPlan::new(on!(exec!(Weather { city: lit("Lima") }),
        Ok(w) => w,
        Err(e) => field!(e.message),
    ));
    assert!(left_out.plan().to_string().contains(r#"exec tool weather {city = "Lima"}"#));
    assert_eq!(run(left_out), Ok("sunny in Lima in 0 day(s)".to_owned()));
}
