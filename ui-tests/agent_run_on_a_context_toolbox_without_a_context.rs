use typed_tools::agent::Agent;
use typed_tools::model::ScriptedModel;
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
    let agent = Agent::new(&toolbox, ScriptedModel::new(["done"]));
    let _ = agent.run("Who am I?").await;
}

fn main() {}
