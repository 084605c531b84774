//! The `#[tool]` attribute of [typed-tools](https://docs.rs/typed-tools).
//! Depend on `typed-tools`, which re-exports it with the runtime it expands to.
//!
//! The stages, one file each: `attr` parses the attribute, `check` checks
//! the fn, `model` reads what the expansion needs, `expand` writes the tool,
//! and `fallback` is what is emitted when there are errors.
#![warn(missing_docs)]

use proc_macro::TokenStream;
use syn::ItemFn;

mod attr;
mod check;
mod ctxt;
mod expand;
mod fallback;
mod model;

/// Makes an ordinary fn a tool a language model can call.
///
/// ```
/// use std::collections::HashMap;
/// use typed_tools::{tool, Tool, Toolbox};
///
/// /// An account.
/// #[derive(Clone, serde::Serialize, schemars::JsonSchema)]
/// struct Account { id: String, email: String }
///
/// /// The accounts, by id.
/// struct Db(HashMap<String, Account>);
///
/// /// Look up a customer account by its id.
/// ///
/// /// # Arguments
/// /// * `id` - The account id, like `cust_12345`.
/// #[tool(effects = Read)]
/// async fn lookup_account(#[state] db: &Db, id: String) -> Result<Account, String> {
///     db.0.get(&id).cloned().ok_or_else(|| format!("no account {id}"))
/// }
///
/// let db = Db(HashMap::from([("c1".into(), Account { id: "c1".into(), email: "a@b.c".into() })]));
/// let toolbox = Toolbox::builder().tool(LookupAccount::new(db)).build().unwrap();
/// assert_eq!(LookupAccount::NAME, "lookup_account");
/// let _args = LookupAccountInput { id: "c1".into() };
/// # futures::executor::block_on(async {
/// let account = toolbox.call("lookup_account", r#"{"id": "c1"}"#).await.unwrap();
/// assert_eq!(account.json(), r#"{"id":"c1","email":"a@b.c"}"#);
/// # });
/// ```
///
/// The fn stays as written. Next to it the attribute generates:
/// - a tool type named after the fn in UpperCamelCase (`LookupAccount`): a unit
///   struct, or with a `#[state]` parameter a struct made by `LookupAccount::new(db)`;
/// - its input struct, `LookupAccountInput`, one field per parameter;
/// - an implementation of `typed_tools::Tool`: the name, the doc comment as
///   description, JSON Schemas for input and output, the declared effects.
///
/// Arguments of the attribute:
/// - `effects = Read`, `effects = [Read, Write]`, `effects = Pure`: required;
///   the effects are `Read`, `Write` and `Network`;
/// - `name = "..."`: the name the model calls the tool by (default: the fn's name);
/// - `title = "..."`: a human-readable title, for people choosing or approving
///   tools (MCP's `title`);
/// - `idempotent`: calling twice is the same as calling once, so it may be retried;
/// - `destructive = false`, with `Write`: the tool only adds, never destroys or
///   overwrites (MCP's `destructiveHint`); a writer is destructive unless it
///   says so;
/// - `open_world = false`, with `Network`: the tool reaches a closed, known
///   domain, not the open world (MCP's `openWorldHint`);
/// - `crate = ::path`: where `typed_tools` is, when it is re-exported.
///
/// ```
/// use typed_tools::{tool, ToolSpec};
///
/// /// Add a note; returns its id.
/// #[tool(effects = Write, destructive = false, title = "Add a note")]
/// fn add_note(text: String) -> u32 { text.len() as u32 }
///
/// let spec = ToolSpec::of::<AddNote>();
/// assert_eq!(spec.title(), Some("Add a note"));
/// assert!(!spec.is_destructive());
/// ```
///
/// A parameter of type `Option<T>`, or with `#[serde(default)]`, is optional:
/// a model may leave it out, and so may a typed plan's `exec!`.
///
/// Parameter attributes: `#[state]` on the one `&T` parameter that receives the
/// tool's shared state; `///` (or `#[doc]`), `#[serde(...)]` and
/// `#[schemars(...)]` move to the input struct's field.
///
/// # Sharing state between tools
///
/// A tool with a `#[state] x: &T` parameter holds an `Arc<T>`, and its `new`
/// takes `impl Into<Arc<T>>`: pass a `T` for a tool of its own, or clones of
/// one `Arc<T>` so that several tools share one store. The state is never part
/// of the schema the model sees.
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use typed_tools::{tool, Toolbox};
///
/// /// A note.
/// #[derive(Clone, serde::Serialize, schemars::JsonSchema)]
/// struct Note { id: u32, text: String }
///
/// /// Where the notes live; every tool below sees the same one.
/// #[derive(Default)]
/// struct Store { notes: Mutex<Vec<Note>> }
///
/// /// List every note.
/// #[tool(effects = Read)]
/// fn list_notes(#[state] store: &Store) -> Vec<Note> {
///     store.notes.lock().unwrap().clone()
/// }
///
/// /// Get one note by its id.
/// #[tool(effects = Read)]
/// fn get_note(#[state] store: &Store, id: u32) -> Result<Note, String> {
///     let notes = store.notes.lock().unwrap();
///     notes.iter().find(|n| n.id == id).cloned().ok_or_else(|| format!("no note {id}"))
/// }
///
/// /// Add a note; returns its id.
/// #[tool(effects = Write)]
/// fn add_note(#[state] store: &Store, text: String) -> u32 {
///     let mut notes = store.notes.lock().unwrap();
///     let id = notes.len() as u32 + 1;
///     notes.push(Note { id, text });
///     id
/// }
///
/// /// Delete a note by its id.
/// #[tool(effects = Write)]
/// fn delete_note(#[state] store: &Store, id: u32) -> bool {
///     let mut notes = store.notes.lock().unwrap();
///     let before = notes.len();
///     notes.retain(|n| n.id != id);
///     notes.len() < before
/// }
///
/// let store = Arc::new(Store::default());
/// let toolbox = Toolbox::builder()
///     .tool(ListNotes::new(store.clone()))
///     .tool(GetNote::new(store.clone()))
///     .tool(AddNote::new(store.clone()))
///     .tool(DeleteNote::new(store.clone()))
///     .build()
///     .unwrap();
/// # futures::executor::block_on(async {
/// assert_eq!(toolbox.call("add_note", r#"{"text": "milk"}"#).await.unwrap().json(), "1");
/// assert_eq!(toolbox.call("get_note", r#"{"id": 1}"#).await.unwrap().json(), r#"{"id":1,"text":"milk"}"#);
/// assert_eq!(toolbox.call("delete_note", r#"{"id": 1}"#).await.unwrap().json(), "true");
/// # });
/// // The Rust side sees what the tools did: it holds the same store.
/// assert!(store.notes.lock().unwrap().is_empty());
/// ```
#[proc_macro_attribute]
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    let item2: proc_macro2::TokenStream = item.into();
    let item_fn = match syn::parse2::<ItemFn>(item2.clone()) {
        Ok(item_fn) => item_fn,
        Err(_) => return check::not_a_fn(item2).into(),
    };
    let mut errors = ctxt::Errors::default();
    let attr = attr::parse(attr.into(), &mut errors);
    if !attr.effects_written {
        errors.at_span(
            item_fn.sig.ident.span(),
            "missing `effects`: declare what the tool touches, e.g. `#[tool(effects = Read)]`, `#[tool(effects = [Read, Write])]`, or `#[tool(effects = Pure)]` for none; effects are never assumed",
        );
    }
    check::signature(&item_fn, &mut errors);
    check::documented(&item_fn, &mut errors);
    let krate = attr
        .krate
        .clone()
        .unwrap_or_else(|| syn::parse_quote!(::typed_tools));
    if !errors.is_empty() {
        return fallback::expand(item_fn, &krate, &errors).into();
    }
    let model = model::build(item_fn, &attr);
    expand::expand(&model, &krate).into()
}
