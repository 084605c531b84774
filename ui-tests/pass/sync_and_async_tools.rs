#![deny(warnings)]

use typed_tools::{tool, Tool, Toolbox};

/// Add two numbers.
#[tool(effects = Pure)]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Wait, then greet.
#[tool(effects = Pure)]
async fn greet(name: String) -> String {
    format!("hello {name}")
}

/// Do nothing at all.
#[tool(effects = Pure)]
fn nothing() {}

fn main() {
    assert_eq!(add(2, 3), 5);
    assert_eq!(Add::NAME, "add");
    assert_eq!(Greet::NAME, "greet");
    let toolbox = Toolbox::builder()
        .tool(Add)
        .tool(Greet)
        .tool(Nothing)
        .build()
        .unwrap();
    futures::executor::block_on(async {
        assert_eq!(toolbox.call("add", r#"{"a": 2, "b": 3}"#).await.unwrap().json(), "5");
        assert_eq!(greet("Ada".to_owned()).await, "hello Ada");
        assert_eq!(
            toolbox.call("greet", r#"{"name": "Ada"}"#).await.unwrap().json(),
            r#""hello Ada""#
        );
        assert_eq!(toolbox.call("nothing", "{}").await.unwrap().json(), "null");
    });
}
