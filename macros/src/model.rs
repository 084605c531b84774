//! The checked model of a tool fn: what the expansion needs, read once.

use proc_macro2::Span;
use syn::{Attribute, Expr, FnArg, Ident, ItemFn, LitStr, Pat, ReturnType, Type};

use crate::attr::Attr;

pub(crate) struct ToolFn {
    /// The fn as the user wrote it, less the attributes this macro consumes.
    pub item: ItemFn,
    /// The tool's name for the model.
    pub name: String,
    /// The generated tool type: the fn name in UpperCamelCase.
    pub tool_ident: Ident,
    /// The generated input struct: `<Tool>Input`.
    pub input_ident: Ident,
    /// The `#[doc]` values, as expressions (so that `include_str!` works).
    pub docs: Vec<Expr>,
    pub params: Vec<Param>,
    pub state: Option<State>,
    /// The `#[context]` parameter: what each call is lent.
    pub context: Option<State>,
    pub output: Output,
    pub effects: Vec<&'static str>,
    pub effects_span: Span,
    pub idempotent: bool,
    pub title: Option<String>,
    pub destructive: Option<bool>,
    pub open_world: Option<bool>,
}

pub(crate) struct Param {
    pub ident: Ident,
    pub ty: Type,
    /// `#[doc]`, `#[serde]` and `#[schemars]` attributes, moved to the input struct's field.
    pub field_attrs: Vec<Attribute>,
    /// The key in the arguments' JSON: the name without `r#`, or what
    /// `#[serde(rename = "...")]` says.
    pub json_name: String,
    /// Whether a call may leave it out: an `Option<T>` (read by serde as
    /// `None` when absent), or `#[serde(default)]`.
    pub optional: bool,
}

/// A parameter the tool lends the fn rather than reads from the arguments:
/// `#[state] x: &T` or `#[context] x: &T`.
pub(crate) struct State {
    /// The position among the fn's parameters.
    pub position: usize,
    /// `T` of `&T`.
    pub ty: Type,
}

pub(crate) enum Output {
    /// `-> T` or nothing: an infallible tool.
    Plain(Type),
    /// `-> Result<T, E>`: a fallible tool.
    Result { ok: Box<Type>, err: Box<Type> },
    /// `-> io::Result<T>` and other one-argument aliases: the types are read
    /// from the alias by a trait.
    ResultAlias(Type),
}

/// Builds the model; the checks have passed.
pub(crate) fn build(mut item: ItemFn, attr: &Attr) -> ToolFn {
    let docs = item
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) => Some(nv.value.clone()),
            _ => None,
        })
        .collect();
    let mut params = Vec::new();
    let mut state = None;
    let mut context = None;
    for (position, input) in item.sig.inputs.iter_mut().enumerate() {
        let FnArg::Typed(param) = input else { continue };
        let (consumed, kept): (Vec<Attribute>, Vec<Attribute>) =
            std::mem::take(&mut param.attrs).into_iter().partition(|a| {
                ["state", "context", "doc", "serde", "schemars"]
                    .iter()
                    .any(|name| a.path().is_ident(name))
            });
        param.attrs = kept;
        let Pat::Ident(pat) = &*param.pat else {
            continue;
        };
        if consumed.iter().any(|a| a.path().is_ident("state")) {
            if let Type::Reference(reference) = &*param.ty {
                state = Some(State {
                    position,
                    ty: (*reference.elem).clone(),
                });
            }
            continue;
        }
        if consumed.iter().any(|a| a.path().is_ident("context")) {
            if let Type::Reference(reference) = &*param.ty {
                context = Some(State {
                    position,
                    ty: (*reference.elem).clone(),
                });
            }
            continue;
        }
        let field_attrs: Vec<Attribute> = consumed.into_iter().collect();
        let serde = serde_keys(&field_attrs);
        params.push(Param {
            ident: pat.ident.clone(),
            ty: (*param.ty).clone(),
            json_name: serde
                .rename
                .clone()
                .unwrap_or_else(|| syn::ext::IdentExt::unraw(&pat.ident).to_string()),
            optional: serde.default || (is_option(&param.ty) && !serde.custom_deserialize),
            field_attrs,
        });
    }
    let output = match &item.sig.output {
        ReturnType::Default => Output::Plain(syn::parse_quote!(())),
        ReturnType::Type(_, ty) => {
            result_parts(ty).unwrap_or_else(|| Output::Plain((**ty).clone()))
        }
    };
    let ident = &item.sig.ident;
    let camel = upper_camel(&ident.to_string());
    let tool_ident = Ident::new(&camel, ident.span());
    let input_ident = Ident::new(&format!("{camel}Input"), ident.span());
    let (effects, effects_span) = attr
        .effects
        .clone()
        .unwrap_or((Vec::new(), Span::call_site()));
    ToolFn {
        name: attr.name.as_ref().map_or_else(
            || syn::ext::IdentExt::unraw(ident).to_string(),
            |n| n.value(),
        ),
        tool_ident,
        input_ident,
        docs,
        params,
        state,
        context,
        output,
        effects,
        effects_span,
        idempotent: attr.idempotent,
        title: attr.title.as_ref().map(LitStr::value),
        destructive: attr.destructive,
        open_world: attr.open_world,
        item,
    }
}

/// `Result<T, E>` (any path ending in `Result`) into its parts.
fn result_parts(ty: &Type) -> Option<Output> {
    let Type::Path(path) = ty else { return None };
    let last = path.path.segments.last()?;
    if last.ident != "Result" {
        return None;
    }
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    let types: Vec<&Type> = args
        .args
        .iter()
        .filter_map(|a| match a {
            syn::GenericArgument::Type(t) => Some(t),
            _ => None,
        })
        .collect();
    match types.as_slice() {
        [ok, err] => Some(Output::Result {
            ok: Box::new((*ok).clone()),
            err: Box::new((*err).clone()),
        }),
        [_] => Some(Output::ResultAlias(ty.clone())),
        _ => None,
    }
}

/// `lookup_account` -> `LookupAccount`; `r#type` -> `Type`.
pub(crate) fn upper_camel(snake: &str) -> String {
    let snake = snake.strip_prefix("r#").unwrap_or(snake);
    let mut out = String::new();
    let mut upper = true;
    for c in snake.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    if out.is_empty() {
        out.push_str("Tool");
    }
    out
}

/// Whether a type is written `Option<..>` (any path ending in `Option`):
/// serde reads an absent `Option` field as `None`. An alias of `Option` is
/// not seen, and is then required, which is safe.
fn is_option(ty: &Type) -> bool {
    let Type::Path(path) = ty else { return false };
    path.qself.is_none()
        && path.path.segments.last().is_some_and(|last| {
            last.ident == "Option"
                && matches!(last.arguments, syn::PathArguments::AngleBracketed(_))
        })
}

/// What the expansion reads of a parameter's `#[serde(..)]` attributes.
#[derive(Default)]
struct SerdeKeys {
    /// What `rename = "x"` or `rename(deserialize = "x")` names the field.
    rename: Option<String>,
    /// `default` or `default = "..."`: an absent field is the default.
    default: bool,
    /// `deserialize_with` or `with`: an absent `Option` is then an error.
    custom_deserialize: bool,
}

/// The serde keys the expansion needs. Other keys are serde's business.
fn serde_keys(attrs: &[Attribute]) -> SerdeKeys {
    let mut keys = SerdeKeys::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        // A malformed attribute is reported by serde's derive, on its token.
        let _ = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("default") {
                keys.default = true;
            }
            if meta.path.is_ident("deserialize_with") || meta.path.is_ident("with") {
                keys.custom_deserialize = true;
            }
            if meta.path.is_ident("rename") {
                if meta.input.peek(syn::Token![=]) {
                    keys.rename = Some(meta.value()?.parse::<syn::LitStr>()?.value());
                } else {
                    meta.parse_nested_meta(|inner| {
                        let value = inner.value()?.parse::<syn::LitStr>()?.value();
                        if inner.path.is_ident("deserialize") {
                            keys.rename = Some(value);
                        }
                        Ok(())
                    })?;
                }
            } else if meta.input.peek(syn::Token![=]) {
                meta.value()?.parse::<syn::Expr>()?;
            } else if meta.input.peek(syn::token::Paren) {
                meta.input.parse::<proc_macro2::Group>()?;
            }
            Ok(())
        });
    }
    keys
}
