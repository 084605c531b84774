//! The domain types of the catalog and agreement tests: nested structs,
//! enums of every serde shape, options, and a recursive type.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A postal address.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Address {
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
pub enum Priority {
    Low,
    Normal,
    High,
}

/// How an order reaches the customer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Delivery {
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
pub enum Payment {
    /// By card.
    Card { last4: String },
    /// On invoice, due in so many days.
    Invoice { days: u8 },
}

/// A folder and its subfolders.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Folder {
    /// Its name.
    pub name: String,
    /// The folders inside it.
    pub children: Vec<Folder>,
    /// The folder it links to, if it is a link.
    pub link: Option<Box<Folder>>,
}
