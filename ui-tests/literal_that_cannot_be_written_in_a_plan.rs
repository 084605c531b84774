// A literal's type must be `Serialize + JsonSchema`, as a tool's types are.
use typed_tools::plan::typed::lit;

struct Secret {
    key: String,
}

fn plan() {
    let _ = lit(Secret { key: "k".into() });
}

fn main() {}
