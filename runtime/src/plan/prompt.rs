//! What a model reads to write a plan: [`PlanPrompt`], generated from the
//! code, never kept by hand.
//!
//! Each part comes from what it describes: the syntax is a list of snippets
//! that the parser reads ([`SYNTAX`]), the operators and reserved words are
//! the parser's own ([`BinaryOp::ALL`] by precedence, [`KEYWORDS`]), the
//! tools are the toolbox's compact catalog ([`CatalogFormat::Text`]), and the
//! worked examples ([`EXAMPLES`]) are plans that parse and type-check against
//! the toolbox they are shown with ([`example_toolbox`]), their tools
//! declared from that toolbox's catalog. Tests hold every snippet and every
//! example in the prompt to the parser and the checker, so the prompt cannot
//! drift from them.
//!
//! ```
//! use typed_tools::{tool, Toolbox};
//! use typed_tools::model::estimate_tokens;
//! use typed_tools::plan::PlanPrompt;
//!
//! /// Look up a customer's email.
//! #[tool(effects = Read)]
//! fn lookup_email(id: String) -> Result<String, String> { Ok(format!("{id}@example.com")) }
//!
//! let toolbox = Toolbox::builder().tool(LookupEmail).build().unwrap();
//! let prompt = PlanPrompt::new(&toolbox).to_string();
//! assert!(prompt.contains("tool lookup_email: {id: String} -{Read}-> String  -- Look up a customer's email."));
//! assert!(prompt.contains("```lambda-tool"));
//! assert!(estimate_tokens(&prompt) < 2_500);
//! ```

use std::convert::Infallible;
use std::fmt;
use std::future::Future;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::catalog::CatalogFormat;
use crate::effect::{self, Effects};
use crate::tool::Tool;
use crate::toolbox::{Toolbox, ToolboxContext};

use super::check::{Returns, Ty};
use super::ir::BinaryOp;
use super::json::SUBMIT_TOOL;
use super::text::{FieldName, KEYWORDS};

/// The language tag of the fenced block a plan is written in.
pub const FENCE: &str = "lambda-tool";

/// The prompt that teaches a model to write a plan for one toolbox: what the
/// language is, the toolbox's tools, the typing rules, how to answer, and
/// worked examples. `Display` writes it; it goes in the system message.
///
/// ```
/// use typed_tools::plan::PlanPrompt;
/// use typed_tools::plan::prompt::example_toolbox;
///
/// let toolbox = example_toolbox();
/// let prompt = PlanPrompt::new(&toolbox).submit_tool(true).to_string();
/// assert!(prompt.contains("or call the tool `submit_plan`"));
/// assert!(prompt.contains("{tool: String, kind: String, message: String}"));
/// ```
#[derive(Clone, Debug)]
pub struct PlanPrompt {
    catalog: String,
    submit_tool: bool,
    list_tools: bool,
    returns: Option<Returns>,
}

impl PlanPrompt {
    /// The prompt for the tools `toolbox` allows (a restricted view lists
    /// only those), without the JSON tool.
    pub fn new<A: Effects, C: ToolboxContext>(toolbox: &Toolbox<A, C>) -> PlanPrompt {
        PlanPrompt {
            catalog: toolbox.catalog(CatalogFormat::Text).to_string(),
            submit_tool: false,
            list_tools: true,
            returns: None,
        }
    }

    /// Whether the prompt lists the tools (the default): a caller whose
    /// system message lists them already in the compact text form (an agent
    /// describing its tools as text) leaves them out here.
    ///
    /// ```
    /// use typed_tools::plan::PlanPrompt;
    /// use typed_tools::plan::prompt::example_toolbox;
    ///
    /// let toolbox = example_toolbox();
    /// let prompt = PlanPrompt::new(&toolbox).list_tools(false).to_string();
    /// assert!(prompt.contains("the tools listed above"));
    /// assert!(!prompt.contains("# Tools\nEach line"));
    /// ```
    pub fn list_tools(mut self, listed: bool) -> PlanPrompt {
        self.list_tools = listed;
        self
    }

    /// Whether the model is offered the [`SUBMIT_TOOL`] to hand in the
    /// plan's JSON form: the prompt then says it may.
    pub fn submit_tool(mut self, offered: bool) -> PlanPrompt {
        self.submit_tool = offered;
        self
    }

    /// Says the type the plan's value must have, which the check holds it
    /// to ([`Author::returning`](super::Author::returning) sets it).
    ///
    /// ```
    /// use typed_tools::plan::PlanPrompt;
    /// use typed_tools::plan::check::Returns;
    /// use typed_tools::plan::prompt::example_toolbox;
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct RestockReport { items: Vec<i64>, total_cost: f64 }
    ///
    /// let toolbox = example_toolbox();
    /// let prompt = PlanPrompt::new(&toolbox).returns(Returns::of::<RestockReport>()).to_string();
    /// assert!(prompt.contains("The plan's value must be a RestockReport: {items: [Int], total_cost: Float}. \
    ///     Every branch that gives it, an `Err` branch too, gives that type, or the plan is refused: \
    ///     a record, `{items = ..., total_cost = ...}`."));
    /// ```
    pub fn returns(mut self, returns: Returns) -> PlanPrompt {
        self.returns = Some(returns);
        self
    }
}

/// A worked example: a task and the plan that does it, over the tools of
/// [`example_toolbox`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Example {
    /// What the plan is asked to do.
    pub task: &'static str,
    /// The plan, in λ-Tool text.
    pub plan: &'static str,
}

/// The worked examples the prompt shows, each checked against
/// [`example_toolbox`] by the tests: nested matches (λ-Tool's support agent),
/// `traverse` with `filter` and `fold`, and a read-only plan whose branches
/// give one type.
pub const EXAMPLES: [Example; 3] = [
    Example {
        task: "Refund the last charge of customer cust_12345 and tell them.",
        plan: r#"match exec tool lookup_account {id = "cust_12345"} {
  Ok(account) =>
    match exec tool issue_refund {account_id = account.id, amount = account.last_charge_cents} {
      Ok(refund) =>
        match exec tool send_reply {to = account.email, body = "We refunded " ++ call tool format_cents {cents = account.last_charge_cents} ++ ", transaction " ++ refund.tx_id} {
          Ok(sent) => "refund processed and customer notified",
          Err(e) => "refund succeeded but notification failed: " ++ e.message
        },
      Err(e) => "refund failed, customer not refunded: " ++ e.message
    },
  Err(e) => "account lookup failed: " ++ e.message
}"#,
    },
    Example {
        task: "Charge every open order of customer cust_12345 and say how much was charged.",
        plan: r#"match exec tool list_orders {customer = "cust_12345"} {
  Ok(orders) =>
    let open = filter (fn o => o.status == "open") orders in
    match traverse (fn o => exec tool charge {id = o.id, amount = o.amount}) open {
      Ok(receipts) => "charged " ++ call tool format_cents {cents = fold (fn total, o => total + o.amount) 0 open},
      Err(e) => "stopped at the first failed charge: " ++ e.message
    },
  Err(e) => "could not list the orders: " ++ e.message
}"#,
    },
    Example {
        task: "Which orders of customer cust_12345 are over $50? Give their ids and how many.",
        plan: r#"match exec tool list_orders {customer = "cust_12345"} {
  Ok(orders) =>
    let big = filter (fn o => o.amount > 5000) orders in
    {ids = map (fn o => o.id) big, count = fold (fn n, o => n + 1) 0 big},
  Err(e) => {ids = [], count = 0}
}"#,
    },
];

/// The syntax, one snippet a form: each is a whole expression the parser
/// reads (the tests parse every one), with what it means.
pub const SYNTAX: [(&str, &str); 13] = [
    (
        r#"{count = -7, rate = 1.5, name = "text", open = true, nothing = ()}"#,
        "Int, Float, String (escapes \\\" \\\\ \\n), Bool, and `()`, the unit value; there is no null",
    ),
    ("[1, 2, 3]", "a list; its elements have one type"),
    (r#"{id = "c1", amount = 100}"#, "a record"),
    ("account.email", "a field of a record"),
    ("let total = 1 + 2 in total * 3", "name a value"),
    (r#"if n > 0 then "some" else "none""#, "both branches are required"),
    (
        r#"match exec tool lookup_account {id = "c1"} { Ok(account) => account.email, Err(e) => e.message }"#,
        "call a tool once and match its Result",
    ),
    (
        "call tool format_cents {cents = 4900}",
        "a pure tool that cannot fail, used as a function",
    ),
    ("map (fn o => o.amount * 2) orders", "each element; the callback is pure"),
    ("filter (fn o => o.amount > 0) orders", "the elements whose callback is true"),
    (
        "fold (fn total, o => total + o.amount) 0 orders",
        "from the left, starting at 0",
    ),
    (
        "match traverse (fn o => exec tool charge {id = o.id, amount = o.amount}) orders { Ok(receipts) => receipts, Err(e) => [] }",
        "a tool per element, in order, stopping at the first Err",
    ),
    ("(* a comment *) 1", "comments"),
];

impl fmt::Display for PlanPrompt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(
            "You write plans in λ-Tool, a small typed language of tool calls. A plan is one \
             expression; its value is the result. It is type-checked against the tools before \
             anything runs: if it does not check, nothing runs, you get every error, and you \
             send the whole plan again.\n\n",
        )?;
        if self.list_tools {
            f.write_str(
                "# Tools\nEach line: `tool NAME: INPUT -{EFFECTS}-> OUTPUT  -- what it does`. \
                 `name?: T` is an optional argument; `T?` is a value that may be `()`.\n",
            )?;
            writeln!(f, "{}\n", self.catalog)?;
        } else {
            f.write_str(
                "# Tools\nA plan calls the tools listed above, by those names and types. \
                 `name?: T` is an optional argument; `T?` is a value that may be `()`.\n\n",
            )?;
        }

        f.write_str("# Syntax\n")?;
        for (snippet, meaning) in SYNTAX {
            writeln!(f, "{snippet}    (* {meaning} *)")?;
        }
        f.write_str("Operators, loosest first: ")?;
        write_operators(f)?;
        f.write_str(". Reserved words: ")?;
        f.write_str(&KEYWORDS.join(" "))?;
        f.write_str(".\n\n")?;

        f.write_str(
            "# Rules\n\
             - `exec tool NAME ARGS` calls a tool once and gives a Result. The only use of a Result \
             is `match ... { Ok(x) => ..., Err(e) => ... }`, with both branches; `x` exists only in \
             the `Ok` branch.\n\
             - `traverse` calls a tool per element of a list, in order, and stops at the first \
             `Err`; `Ok` holds the list of outputs.\n\
             - The callbacks of `map`, `filter` and `fold` are pure: no `exec` in them (use \
             `traverse`). `call tool NAME ARGS` is for a pure tool that cannot fail (effects {}); \
             it gives a plain value and may stand anywhere.\n\
             - There are no loops, no recursion, no retries, no exceptions and no null: each \
             `exec` in the plan runs at most once.\n\
             - In `Err(e)`, `e` is a record {tool: String, kind: String, message: String}: the \
             tool's name; `\"execution\"` when the tool failed, `\"refused\"` when the call was not \
             approved, `\"deserialization\"` when its arguments did not fit; and what went wrong.\n\
             - Both branches of a `match` (or an `if`) give one type: if `Ok` gives a String, `Err` \
             gives a String too (`e.message`); `()` in one branch for no value makes it `T?`.\n\
             - Arguments are a record of the tool's parameters: give each required one, with its \
             type. Read only fields that an output's type lists.\n\
             - Test a value of type `T?` before using it: `if x == () then ... else ...`.\n\
             - Arithmetic is on Int (money in cents). To write a number as text, `call` a pure tool \
             that formats it.\n\n",
        )?;

        write!(
            f,
            "# Answer\nWrite the plan, and nothing else that runs, in one fenced block:\n```{FENCE}\n\
             match exec tool ... {{\n  Ok(x) => ...,\n  Err(e) => ...\n}}\n```\n"
        )?;
        if self.submit_tool {
            writeln!(
                f,
                "or call the tool `{SUBMIT_TOOL}` with the same plan in its JSON form."
            )?;
        }
        if let Some(returns) = &self.returns {
            write!(
                f,
                "The plan's value must be {returns}. Every branch that gives it, an `Err` branch \
                 too, gives that type, or the plan is refused"
            )?;
            match returns.ty() {
                Ty::Record(record) => {
                    let fields: Vec<String> = record
                        .fields
                        .iter()
                        .map(|field| format!("{} = ...", FieldName(&field.name)))
                        .collect();
                    writeln!(f, ": a record, `{{{}}}`.", fields.join(", "))?;
                }
                _ => writeln!(f, ".")?,
            }
        }

        f.write_str(
            "\n# Examples\nThese use example tools, declared at the top of each block; your plan \
             may call only the tools under # Tools.\n",
        )?;
        let examples = example_toolbox();
        for example in EXAMPLES {
            write!(f, "\nTask: {}\n```{FENCE}\n", example.task)?;
            for spec in examples.specs() {
                if mentions(example.plan, spec.name()) {
                    writeln!(
                        f,
                        "{}",
                        crate::catalog::render_tool(CatalogFormat::Text, spec)
                            .as_str()
                            .unwrap_or_default()
                    )?;
                }
            }
            writeln!(f, "\n{}\n```", example.plan)?;
        }
        Ok(())
    }
}

/// Whether `plan` names the tool `name` (`exec tool NAME` or `call tool NAME`).
fn mentions(plan: &str, name: &str) -> bool {
    plan.match_indices(name).any(|(at, _)| {
        plan[..at].ends_with("tool ")
            && !plan[at + name.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
    })
}

/// The binary operators by precedence, loosest first, each level separated
/// by `;`, then `not`.
fn write_operators(f: &mut impl fmt::Write) -> fmt::Result {
    let mut levels: Vec<(u8, Vec<&str>)> = Vec::new();
    for op in BinaryOp::ALL {
        match levels.iter_mut().find(|(p, _)| *p == op.precedence()) {
            Some((_, symbols)) => symbols.push(op.symbol()),
            None => levels.push((op.precedence(), vec![op.symbol()])),
        }
    }
    levels.sort_by_key(|(p, _)| *p);
    for (i, (_, symbols)) in levels.iter().enumerate() {
        if i > 0 {
            f.write_str("; ")?;
        }
        f.write_str(&symbols.join(" "))?;
    }
    f.write_str("; then `not` and field access bind tightest")
}

// ------------------------------------------------------------ example tools

/// A customer account.
#[derive(Clone, Debug, Serialize, JsonSchema)]
struct Account {
    id: String,
    subscription_tier: String,
    email: String,
    last_charge_cents: i64,
}

/// An order.
#[derive(Clone, Debug, Serialize, JsonSchema)]
struct Order {
    id: i64,
    amount: i64,
    status: String,
}

/// A payment that went through.
#[derive(Clone, Debug, Serialize, JsonSchema)]
struct Receipt {
    tx_id: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ById {
    id: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Refund {
    account_id: String,
    amount: i64,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Reply {
    to: String,
    body: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ByCustomer {
    customer: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Charge {
    id: i64,
    amount: i64,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Cents {
    cents: i64,
}

/// Defines an example tool by hand (`#[tool]` is not available inside the
/// runtime): the tools only need to be real for their types; each answers
/// from fixed data, so that the examples also run.
macro_rules! example_tool {
    ($ty:ident, $name:literal, $doc:literal, $effects:ty, $input:ty => $output:ty, $error:ty, |$arg:ident| $body:expr) => {
        #[derive(Debug)]
        struct $ty;

        impl Tool for $ty {
            type Input = $input;
            type Output = $output;
            type Error = $error;
            type Effects = $effects;
            type Context = ();
            const NAME: &'static str = $name;
            const DOC: &'static [&'static str] = &[$doc];

            fn call(
                &self,
                _: &(),
                $arg: $input,
            ) -> impl Future<Output = Result<$output, $error>> + Send {
                futures::future::ready($body)
            }
        }
    };
}

example_tool!(LookupAccount, "lookup_account", " Look up a customer account by its id.", effect::Read,
ById => Account, String, |input| Ok(Account {
    email: format!("{}@example.com", input.id),
    id: input.id,
    subscription_tier: "pro".into(),
    last_charge_cents: 4900,
}));
example_tool!(IssueRefund, "issue_refund", " Refund an amount, in cents, to an account.", effect::Write,
    Refund => Receipt, String, |input| Ok(Receipt { tx_id: format!("tx_{}_{}", input.account_id, input.amount) }));
example_tool!(SendReply, "send_reply", " Send a reply to a customer.", effect::Write,
    Reply => (), String, |input| { let _ = (input.to, input.body); Ok(()) });
example_tool!(ListOrders, "list_orders", " List a customer's orders; amounts in cents.", effect::Read,
    ByCustomer => Vec<Order>, String, |input| { let _ = input.customer; Ok(vec![
        Order { id: 1, amount: 12_000, status: "open".into() },
        Order { id: 2, amount: 2_500, status: "open".into() },
        Order { id: 3, amount: 9_900, status: "shipped".into() },
    ]) });
example_tool!(ChargeOrder, "charge", " Charge an order.", effect::Write,
    Charge => Receipt, String, |input| Ok(Receipt { tx_id: format!("tx_{}_{}", input.id, input.amount) }));
example_tool!(FormatCents, "format_cents", " Write an amount in cents as dollars, like `$49.00`.", effect::Pure,
Cents => String, Infallible, |input| {
    let sign = if input.cents < 0 { "-" } else { "" };
    let cents = input.cents.unsigned_abs();
    Ok(format!("{sign}${}.{:02}", cents / 100, cents % 100))
});

/// The toolbox the worked examples are written against: λ-Tool's support
/// agent (`lookup_account`, `issue_refund`, `send_reply`), `list_orders`,
/// `charge` and the pure `format_cents`. Its tools answer from fixed data.
///
/// ```
/// use typed_tools::plan::{check, Plan};
/// use typed_tools::plan::prompt::{example_toolbox, EXAMPLES};
///
/// let toolbox = example_toolbox();
/// for example in EXAMPLES {
///     check(&Plan::parse(example.plan).unwrap(), &toolbox).unwrap();
/// }
/// ```
pub fn example_toolbox() -> Toolbox {
    Toolbox::builder()
        .tool(LookupAccount)
        .tool(IssueRefund)
        .tool(SendReply)
        .tool(ListOrders)
        .tool(ChargeOrder)
        .tool(FormatCents)
        .build()
        .expect("the example tools have distinct names")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{check, Plan};

    #[test]
    fn every_syntax_snippet_parses() {
        for (snippet, _) in SYNTAX {
            Plan::parse(snippet).unwrap_or_else(|e| panic!("{snippet}: {e}"));
        }
    }

    #[test]
    fn every_example_checks_against_its_toolbox() {
        let toolbox = example_toolbox();
        for example in EXAMPLES {
            let plan = Plan::parse(example.plan).unwrap_or_else(|e| panic!("{e}"));
            check(&plan, &toolbox).unwrap_or_else(|e| panic!("{}: {e}", example.task));
        }
    }

    #[test]
    fn operators_are_listed_loosest_first() {
        let mut out = String::new();
        write_operators(&mut out).unwrap();
        assert!(
            out.starts_with("or; and; == != < <= > >=; ++; + -; * / %"),
            "{out}"
        );
    }

    #[test]
    fn a_tool_is_mentioned_only_by_its_whole_name() {
        assert!(mentions("exec tool charge {id = 1}", "charge"));
        assert!(!mentions("exec tool charge_all {id = 1}", "charge"));
        assert!(!mentions("let charge = 1 in charge", "charge"));
    }
}
