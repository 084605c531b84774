#![deny(warnings)]
// `lit(..)` of every integer and float width, given where a tool takes that
// width: an unsuffixed literal takes the width expected, a suffixed one must
// be that width. Each is a plan Int (or Float), and the tool gets its value.

use futures::executor::block_on;
use typed_tools::plan::typed::{lit, TypedPlan};
use typed_tools::{exec, field, on, tool, Toolbox};

/// Add up one number of each width.
#[tool(effects = Pure)]
#[allow(clippy::too_many_arguments)]
fn widths(
    a: i8,
    b: i16,
    c: i32,
    d: i64,
    e: i128,
    f: isize,
    g: u8,
    h: u16,
    i: u32,
    j: u64,
    k: u128,
    l: usize,
    x: f32,
    y: f64,
) -> Result<String, String> {
    let ints = a as i128 + b as i128 + c as i128 + d as i128 + e + f as i128;
    let unsigned = g as u128 + h as u128 + i as u128 + j as u128 + k + l as u128;
    Ok(format!("{ints} {unsigned} {}", x as f64 + y))
}

fn main() {
    let plan = TypedPlan::new(on!(exec!(Widths {
            a: lit(-1),
            b: lit(-2i16),
            c: lit(-3),
            d: lit(-4i64),
            e: lit(-5),
            f: lit(-6isize),
            g: lit(1u8),
            h: lit(2),
            i: lit(3u32),
            j: lit(4),
            k: lit(5u128),
            l: lit(6),
            x: lit(0.5f32),
            y: lit(0.25),
        }),
        Ok(sum) => sum,
        Err(e) => field!(e.message),
    ));
    assert!(plan.plan().to_string().contains(
        "{a = -1, b = -2, c = -3, d = -4, e = -5, f = -6, g = 1, h = 2, i = 3, j = 4, k = 5, l = 6, x = 0.5, y = 0.25}"
    ));
    let toolbox = Toolbox::builder().tool(Widths).build().unwrap();
    let run = block_on(plan.run(&toolbox)).unwrap();
    assert_eq!(run.outcome, Ok("-21 21 0.75".to_owned()));
}
