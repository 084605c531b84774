//! The domain types of the catalog and agreement tests: nested structs,
//! enums of every serde shape, options, and a recursive type.

use std::collections::HashMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use typed_tools::tool;

/// A postal address.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Address {
    /// Street and number.
    pub street: String,
    /// City.
    pub city: String,
    /// Postal code, when known.
    pub postcode: Option<String>,
}

/// How urgent a change is.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Priority {
    Low,
    Normal,
    High,
}

/// How an order reaches the customer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Delivery {
    /// The customer picks it up.
    Pickup,
    /// A courier brings it.
    Courier {
        /// Where to.
        address: Address,
        /// Same day.
        express: bool,
    },
    /// A parcel locker, by its code.
    Locker(String),
}

/// A payment.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "method", rename_all = "snake_case")]
pub(crate) enum Payment {
    /// By card.
    Card { last4: String },
    /// On invoice, due in so many days.
    Invoice { days: u8 },
}

/// A folder and its subfolders.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Folder {
    /// Its name.
    pub name: String,
    /// The folders inside it.
    pub children: Vec<Folder>,
    /// The folder it links to, if it is a link.
    pub link: Option<Box<Folder>>,
}

// ---------------------------------------------------------------- the tools

/// A customer account.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Account {
    /// The account id.
    pub id: String,
    /// Where to write to.
    pub email: String,
    /// Where to ship to.
    pub address: Option<Address>,
}

/// Look up a customer account by its id.
///
/// # Arguments
/// * `id` - The account id, like `cust_123`.
/// * `fields` - Only these fields, when given.
#[tool(effects = Read)]
pub(crate) fn lookup_account(id: String, fields: Option<Vec<String>>) -> Account {
    let _ = fields;
    Account {
        id,
        email: "ada@example.com".into(),
        address: None,
    }
}

/// Change the address of an account.
///
/// Calling it twice with the same address changes nothing more.
///
/// # Arguments
/// * `account_id` - The account to change.
/// * `note` - Why, for the audit log.
#[tool(effects = Write, idempotent)]
pub(crate) fn update_address(
    account_id: String,
    address: Address,
    priority: Priority,
    note: Option<String>,
) -> bool {
    let _ = (account_id, address, priority, note);
    true
}

/// Ship an order to the customer.
#[tool(effects = [Write, Network])]
pub(crate) fn ship_order(
    order_id: u32,
    delivery: Delivery,
    payment: Payment,
    gift: Option<bool>,
) -> Result<String, String> {
    let _ = (delivery, payment, gift);
    Ok(format!("order {order_id} shipped"))
}

/// Count the folders in a tree.
#[tool(effects = Pure)]
pub(crate) fn count_folders(root: Folder, max_depth: Option<u8>) -> u32 {
    let _ = max_depth;
    1 + root.children.len() as u32
}

/// Tag items with free-form labels.
#[tool(effects = Write)]
pub(crate) fn tag_items(tags: HashMap<String, String>) {
    let _ = tags;
}

/// The time on the server.
#[tool(effects = [Read, Network])]
pub(crate) fn server_time() -> String {
    "12:00".into()
}
