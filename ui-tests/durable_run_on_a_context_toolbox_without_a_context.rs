use typed_tools::agent::Agent;
use typed_tools::durable::{Durable, MemoryJournal};
use typed_tools::model::ScriptedModel;
use typed_tools::plan::{Interpreter, Plan};
use typed_tools::{tool, Toolbox};

/// Who is asking.
struct User {
    name: String,
}

/// The name of the user asking.
#[tool(effects = Read)]
fn whoami(#[context] user: &User) -> String {
    user.name.clone()
}

async fn run() {
    let toolbox = Toolbox::builder().context::<User>().tool(Whoami).build().unwrap();
    let durable = Durable::new(MemoryJournal::new());
    let plan = Plan::parse("match exec tool whoami {} { Ok(n) => n, Err(e) => e.message }").unwrap();
    let _ = durable.run_plan(&Interpreter::new(&toolbox), "plan-1", &plan).await;
    let agent = Agent::new(&toolbox, ScriptedModel::new(["done"]));
    let _ = durable.run_agent(&agent, "agent-1", "Who am I?").await;
}

fn main() {}
