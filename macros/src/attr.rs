//! Parsing `#[tool(...)]`: `effects`, `name`, `title`, `idempotent`,
//! `destructive`, `open_world`, `crate`.

use proc_macro2::{Span, TokenStream};
use syn::ext::IdentExt;
use syn::parse::{ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::{Expr, Ident, Lit, LitStr, Token};

use crate::ctxt::Errors;

pub(crate) const KEYS: &[&str] = &[
    "effects",
    "name",
    "title",
    "idempotent",
    "destructive",
    "open_world",
    "crate",
];
pub(crate) const EFFECTS: &[&str] = &["Pure", "Read", "Write", "Network"];

/// The attribute's arguments, each checked; absent or invalid ones are `None`.
#[derive(Default)]
pub(crate) struct Attr {
    /// The declared effects, canonical order, with the span of the declaration.
    pub effects: Option<(Vec<&'static str>, Span)>,
    pub name: Option<LitStr>,
    /// A human-readable title, for people.
    pub title: Option<LitStr>,
    pub idempotent: bool,
    /// `destructive = false`: a writer that only adds. `None`: not written.
    pub destructive: Option<bool>,
    /// `open_world = false`: a `Network` tool whose world is closed.
    pub open_world: Option<bool>,
    pub krate: Option<syn::Path>,
    /// Whether `effects` was written at all (even if invalid), so that a bad
    /// value does not also report "missing `effects`".
    pub effects_written: bool,
}

struct Arg {
    key: Ident,
    value: Option<Expr>,
}

fn parse_arg(input: ParseStream) -> syn::Result<Arg> {
    let key = Ident::parse_any(input)?;
    let value = if input.peek(Token![=]) {
        input.parse::<Token![=]>()?;
        Some(input.parse::<Expr>()?)
    } else {
        None
    };
    Ok(Arg { key, value })
}

pub(crate) fn parse(tokens: TokenStream, errors: &mut Errors) -> Attr {
    let mut attr = Attr::default();
    let parser = Punctuated::<Arg, Token![,]>::parse_terminated_with;
    let args = match (|input: ParseStream| parser(input, parse_arg)).parse2(tokens) {
        Ok(args) => args,
        Err(error) => {
            errors.push(syn::Error::new(
                error.span(),
                format!(
                    "{error}; `tool` takes `key = value` arguments, for example `#[tool(effects = Read)]`"
                ),
            ));
            // Do not also say that `effects` is missing.
            attr.effects_written = true;
            return attr;
        }
    };
    let mut seen: Vec<String> = Vec::new();
    // `destructive` and `open_world`, with the effect each describes.
    let mut flag_spans: Vec<(Ident, &'static str)> = Vec::new();
    for Arg { key, value } in args {
        let key_name = key.unraw().to_string();
        if seen.contains(&key_name) {
            errors.at(
                &key,
                format!("duplicate `tool` argument `{key_name}`; remove one of them"),
            );
            if key_name == "effects" {
                attr.effects_written = true;
            }
            continue;
        }
        seen.push(key_name.clone());
        match key_name.as_str() {
            "effects" => {
                attr.effects_written = true;
                match value {
                    Some(value) => attr.effects = parse_effects(&value, errors),
                    None => errors.at(
                        &key,
                        "`effects` needs a value: `effects = Read`, `effects = [Read, Write]`, or `effects = Pure`",
                    ),
                }
            }
            "name" => match value {
                Some(Expr::Lit(syn::ExprLit {
                    lit: Lit::Str(name),
                    ..
                })) => {
                    if let Err(reason) = check_name(&name.value()) {
                        errors.at(
                            &name,
                            format!(
                                "tool name {reason}; write for example `name = \"{}\"`",
                                valid_name(&name.value())
                            ),
                        );
                    } else {
                        attr.name = Some(name);
                    }
                }
                Some(other) => errors.at(
                    other,
                    "`name` takes a string literal: `name = \"lookup_account\"`",
                ),
                None => errors.at(&key, "`name` needs a value: `name = \"lookup_account\"`"),
            },
            "title" => match value {
                Some(Expr::Lit(syn::ExprLit {
                    lit: Lit::Str(title),
                    ..
                })) => {
                    if title.value().trim().is_empty() {
                        errors.at(
                            &title,
                            "`title` is empty; write a short name for people, `title = \"Look up an account\"`, or leave `title` out",
                        );
                    } else {
                        attr.title = Some(title);
                    }
                }
                Some(other) => errors.at(
                    other,
                    "`title` takes a string literal: `title = \"Look up an account\"`",
                ),
                None => errors.at(
                    &key,
                    "`title` needs a value: `title = \"Look up an account\"`",
                ),
            },
            "idempotent" => {
                if let Some(flag) = flag(&key, value.as_ref(), "Write, idempotent", errors) {
                    attr.idempotent = flag;
                }
            }
            "destructive" => {
                attr.destructive = flag(&key, value.as_ref(), "Write, destructive = false", errors);
                if attr.destructive.is_some() {
                    flag_spans.push((key.clone(), "Write"));
                }
            }
            "open_world" => {
                attr.open_world = flag(&key, value.as_ref(), "Network, open_world = false", errors);
                if attr.open_world.is_some() {
                    flag_spans.push((key.clone(), "Network"));
                }
            }
            "crate" => match value {
                Some(Expr::Path(path)) if path.qself.is_none() => attr.krate = Some(path.path),
                Some(other) => errors.at(other, "`crate` takes a path: `crate = ::typed_tools`"),
                None => errors.at(&key, "`crate` needs a value: `crate = ::typed_tools`"),
            },
            _ => {
                let closest = closest(&key_name, KEYS);
                // A misspelt `effects` is one mistake: do not also say it is missing.
                if closest == Some("effects") {
                    attr.effects_written = true;
                }
                let hint = closest
                    .map(|k| format!(" (did you mean `{k}`?)"))
                    .unwrap_or_default();
                errors.at(
                    &key,
                    format!(
                        "unknown `tool` argument `{key_name}`{hint}; expected one of: {}",
                        list(KEYS)
                    ),
                );
            }
        }
    }
    if let Some((effects, _)) = &attr.effects {
        for (key, effect) in flag_spans {
            if !effects.contains(&effect) {
                let (what, default) = match effect {
                    "Write" => (
                        "may destroy what it writes",
                        "a tool that does not write destroys nothing",
                    ),
                    _ => (
                        "reaches an open world",
                        "a tool without `Network` has a closed world",
                    ),
                };
                errors.at(
                    &key,
                    format!(
                        "`{key}` says whether the tool {what}, which only a tool with the `{effect}` effect does; {default}: remove `{key}`, or add `{effect}` to `effects`"
                    ),
                );
            }
        }
    }
    attr
}

/// A flag's value: none (`true`), or `true` / `false`; `None` after an error.
fn flag(key: &Ident, value: Option<&Expr>, example: &str, errors: &mut Errors) -> Option<bool> {
    match value {
        None => Some(true),
        Some(Expr::Lit(syn::ExprLit {
            lit: Lit::Bool(b), ..
        })) => Some(b.value),
        Some(other) => {
            errors.at(
                other,
                format!(
                    "`{key}` takes no value, or `true` / `false`: `#[tool(effects = {example})]`"
                ),
            );
            None
        }
    }
}

fn parse_effects(value: &Expr, errors: &mut Errors) -> Option<(Vec<&'static str>, Span)> {
    let items: Vec<&Expr> = match value {
        Expr::Array(array) => array.elems.iter().collect(),
        single => vec![single],
    };
    if items.is_empty() {
        errors.at(value, "an empty effect list is written `effects = Pure`");
        return None;
    }
    let mut found: Vec<(&'static str, &Expr)> = Vec::new();
    let mut ok = true;
    for item in &items {
        let name = match item {
            Expr::Path(path) if path.qself.is_none() => {
                path.path.get_ident().map(|i| i.to_string())
            }
            _ => None,
        };
        let Some(name) = name else {
            errors.at(
                item,
                format!(
                    "an effect is written as its name; write one of: {}",
                    list(EFFECTS)
                ),
            );
            ok = false;
            continue;
        };
        match EFFECTS.iter().find(|e| **e == name) {
            Some(effect) => {
                if found.iter().any(|(f, _)| f == effect) {
                    errors.at(item, format!("effect `{name}` is listed twice; remove one"));
                    ok = false;
                } else {
                    found.push((effect, item));
                }
            }
            None => {
                let hint = closest(&name, EFFECTS)
                    .map(|e| format!(" (did you mean `{e}`?)"))
                    .unwrap_or_default();
                errors.at(
                    item,
                    format!(
                        "unknown effect `{name}`{hint}; expected one of: {}",
                        list(EFFECTS)
                    ),
                );
                ok = false;
            }
        }
    }
    if found.len() > 1 {
        if let Some((_, pure)) = found.iter().find(|(f, _)| *f == "Pure") {
            errors.at(
                pure,
                "`Pure` means no effect and cannot be combined with others; remove `Pure`",
            );
            ok = false;
        }
    }
    if !ok {
        return None;
    }
    let mut effects: Vec<&'static str> = found
        .into_iter()
        .map(|(e, _)| e)
        .filter(|e| *e != "Pure")
        .collect();
    effects.sort_by_key(|e| EFFECTS.iter().position(|x| x == e));
    Some((effects, syn::spanned::Spanned::span(value)))
}

/// The same rule as the runtime's: every provider accepts such a name.
fn check_name(name: &str) -> Result<(), &'static str> {
    let mut chars = name.chars();
    match chars.next() {
        None => return Err("is empty: a model calls a tool by a name of 1 to 64 characters"),
        Some(c) if !(c.is_ascii_alphabetic() || c == '_') => {
            return Err("must start with an ASCII letter or `_`, as every provider requires")
        }
        _ => {}
    }
    if !chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
        return Err("may hold only ASCII letters, digits, `_` and `-`, as every provider requires");
    }
    if name.len() > 64 {
        return Err("is longer than 64 characters, the most some providers accept");
    }
    Ok(())
}

/// `name` made acceptable to every provider, for the error's example.
fn valid_name(name: &str) -> String {
    let mut valid: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if !valid.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        valid.insert(0, '_');
    }
    if valid == "_" {
        valid = "my_tool".to_owned();
    }
    valid.truncate(64);
    valid
}

pub(crate) fn list(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A known word within two edits, or equal but for case.
fn closest(word: &str, known: &[&'static str]) -> Option<&'static str> {
    known
        .iter()
        .map(|k| (distance(&word.to_lowercase(), &k.to_lowercase()), *k))
        .filter(|(d, _)| *d <= 2)
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (row[j + 1] + 1)
                .min(row[j] + 1)
                .min(previous + usize::from(ca != *cb));
            previous = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}
