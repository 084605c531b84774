//! What the integration tests share: the λ-Tool support agent (its tools over
//! a shop that records every call and fails the one it is told to, and its
//! text), the catalog tests' domain types ([`domain`]), the fuzz RNG ([`rng`]).

// Each test crate uses a part of this module.
#![allow(dead_code)]

pub(crate) mod domain;
pub(crate) mod rng;

use std::sync::{Arc, Mutex};

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::json;
use typed_tools::{tool, Toolbox};

/// What the tools saw, and which one should fail.
#[derive(Default)]
pub(crate) struct Shop {
    pub fail: Option<&'static str>,
    pub calls: Mutex<Vec<(&'static str, serde_json::Value)>>,
}

impl Shop {
    fn record(&self, tool: &'static str, args: serde_json::Value) -> Result<(), String> {
        self.calls.lock().unwrap().push((tool, args));
        if self.fail == Some(tool) {
            return Err(format!("{tool} is down"));
        }
        Ok(())
    }
}

#[derive(Serialize, JsonSchema)]
pub(crate) struct Account {
    pub id: String,
    pub subscription_tier: String,
    pub email: String,
    pub last_charge_cents: i64,
}

#[derive(Serialize, JsonSchema)]
pub(crate) struct Refund {
    pub tx_id: String,
}

/// Look up a customer account.
#[tool(effects = Read)]
pub(crate) fn lookup_account(#[state] shop: &Shop, id: String) -> Result<Account, String> {
    shop.record("lookup_account", json!({ "id": id }))?;
    Ok(Account {
        id,
        subscription_tier: "pro".into(),
        email: "ana@example.com".into(),
        last_charge_cents: 1299,
    })
}

/// Refund an amount to an account.
#[tool(effects = Write)]
pub(crate) fn issue_refund(
    #[state] shop: &Shop,
    account_id: String,
    amount: i64,
) -> Result<Refund, String> {
    shop.record(
        "issue_refund",
        json!({ "account_id": account_id, "amount": amount }),
    )?;
    Ok(Refund {
        tx_id: format!("tx_{account_id}_{amount}"),
    })
}

/// Send a reply to a customer.
#[tool(effects = Write)]
pub(crate) fn send_reply(#[state] shop: &Shop, to: String, body: String) -> Result<(), String> {
    shop.record("send_reply", json!({ "to": to, "body": body }))
}

/// Charge an order.
#[tool(effects = Write)]
pub(crate) fn charge(#[state] shop: &Shop, id: i64, amount: i64) -> Result<String, String> {
    shop.record("charge", json!({ "id": id, "amount": amount }))?;
    if amount < 0 {
        return Err(format!("order {id}: negative amount"));
    }
    Ok(format!("tx_{id}"))
}

/// Format an amount in cents as dollars, `$12.99`.
#[tool(effects = Pure)]
pub(crate) fn format_cents(cents: i64) -> String {
    let sign = if cents < 0 { "-" } else { "" };
    let cents = cents.unsigned_abs();
    format!("{sign}${}.{:02}", cents / 100, cents % 100)
}

pub(crate) fn toolbox(fail: Option<&'static str>) -> (Toolbox, Arc<Shop>) {
    let shop = Arc::new(Shop {
        fail,
        ..Shop::default()
    });
    let toolbox = Toolbox::builder()
        .tool(LookupAccount::new(Arc::clone(&shop)))
        .tool(IssueRefund::new(Arc::clone(&shop)))
        .tool(SendReply::new(Arc::clone(&shop)))
        .tool(Charge::new(Arc::clone(&shop)))
        .tool(FormatCents)
        .build()
        .unwrap();
    (toolbox, shop)
}

pub(crate) const SUPPORT_AGENT: &str = r#"match exec tool lookup_account {id = "cust_12345"} {
  Ok(account) =>
    match exec tool issue_refund {account_id = account.id, amount = account.last_charge_cents} {
      Ok(refund) =>
        match exec tool send_reply {to = account.email, body = refund.tx_id} {
          Ok(u) => "refund processed and customer notified",
          Err(e) => "refund succeeded but notification failed"
        },
      Err(e) => "refund failed, customer not refunded"
    },
  Err(e) => "account lookup failed"
}"#;

pub(crate) fn calls(shop: &Shop) -> Vec<(&'static str, serde_json::Value)> {
    shop.calls.lock().unwrap().clone()
}

/// The tools called, in order, without their arguments.
pub(crate) fn tools_called(shop: &Shop) -> Vec<&'static str> {
    calls(shop).into_iter().map(|(tool, _)| tool).collect()
}
