//! The checks on the fn: everything that would make a tool the model cannot
//! call, or a schema that lies. Each error is put on the offending token and
//! says what to write instead.

use quote::ToTokens;
use syn::spanned::Spanned;
use syn::{FnArg, ItemFn, Pat, ReturnType, Type};

use crate::ctxt::Errors;

pub(crate) fn signature(item: &ItemFn, errors: &mut Errors) {
    let sig = &item.sig;
    if let Some(constness) = &sig.constness {
        errors.at(constness, "a tool cannot be a `const fn`; remove `const`");
    }
    if let Some(unsafety) = &sig.unsafety {
        errors.at(
            unsafety,
            "a tool cannot be an `unsafe fn`: a model cannot uphold its safety contract; remove `unsafe` and check the arguments inside the fn",
        );
    }
    if let Some(abi) = &sig.abi {
        errors.at(
            abi,
            "a tool cannot be an `extern` fn; remove the ABI, and call the foreign function from the tool's body",
        );
    }
    if let Some(variadic) = &sig.variadic {
        errors.at(
            variadic,
            "a tool cannot be variadic: each argument needs a name and a type in the schema; take a `Vec<T>` parameter instead",
        );
    }
    if !sig.generics.params.is_empty() {
        errors.at(
            &sig.generics,
            "a tool cannot be generic: the model needs one concrete schema for its arguments; use concrete types (for example `String` instead of `T: Into<String>`)",
        );
    } else if let Some(where_clause) = &sig.generics.where_clause {
        errors.at(
            where_clause,
            "a tool cannot have a `where` clause; use concrete types",
        );
    }
    let mut state_seen = false;
    let mut context_seen = false;
    for input in &sig.inputs {
        match input {
            FnArg::Receiver(receiver) => errors.at(
                receiver,
                "a tool cannot take `self`: write a free fn, and take shared state as a `#[state]` parameter (`#[state] db: &Db`)",
            ),
            FnArg::Typed(param) => {
                let is_state = param.attrs.iter().any(|a| a.path().is_ident("state"));
                let is_context = param.attrs.iter().any(|a| a.path().is_ident("context"));
                if !matches!(&*param.pat, Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none()) {
                    errors.at(
                        &param.pat,
                        "a tool parameter must be a plain name, because the name is the argument's key in the schema; write `name: Type` and destructure it in the body",
                    );
                }
                if is_state && is_context {
                    errors.at(
                        param,
                        "a parameter cannot be both `#[state]` and `#[context]`: the tool holds its `#[state]` for every call, each call lends its `#[context]`; keep one of the two",
                    );
                } else if is_context {
                    if context_seen {
                        errors.at(param, "a tool takes at most one `#[context]` parameter: each call is given one context; put what the tool needs in one type");
                    }
                    context_seen = true;
                    if let Some(context) = lent(&param.ty) {
                        let context = context.to_token_stream().to_string().replace(' ', "");
                        errors.at(
                            &param.ty,
                            format!("a `#[context]` parameter must be a shared reference: each call lends the tool its context, and calls made at once may share it; write `&{context}`, and change what it holds through interior mutability (a `Mutex`, an atomic)"),
                        );
                    }
                } else if is_state {
                    if state_seen {
                        errors.at(param, "a tool takes at most one `#[state]` parameter; put the shared state in one type");
                    }
                    state_seen = true;
                    if let Some(state) = lent(&param.ty) {
                        let state = state.to_token_stream().to_string().replace(' ', "");
                        errors.at(
                            &param.ty,
                            format!("a `#[state]` parameter must be a shared reference: the tool holds the state in an `Arc` and lends it to each call; write `&{state}`, and change the state through interior mutability (a `Mutex`, an atomic)"),
                        );
                    }
                } else {
                    parameter_type(&param.ty, errors);
                }
            }
        }
    }
    if let ReturnType::Type(_, ty) = &sig.output {
        if contains_impl_trait(ty) {
            errors.at(
                ty,
                "a tool cannot return `impl Trait`: its output schema needs a concrete type; return the type itself (for example `Vec<Item>`)",
            );
        } else if let Some(borrow) = borrow(ty) {
            errors.at(
                borrow,
                "a tool cannot return a borrow: its output is sent to the model after the call; return an owned type (for example `String` instead of `&str`)",
            );
        }
    }
}

/// What a `#[state]` or `#[context]` parameter's type should be a shared
/// reference to, when it is not one: `None` for `&T`.
fn lent(ty: &Type) -> Option<&Type> {
    match ty {
        Type::Reference(r) if r.mutability.is_none() => None,
        Type::Reference(r) => Some(&*r.elem),
        other => Some(other),
    }
}

fn parameter_type(ty: &Type, errors: &mut Errors) {
    match ty {
        Type::Reference(reference) => {
            let instead = match &*reference.elem {
                Type::Path(path) if path.path.is_ident("str") => "`String` instead of `&str`".to_owned(),
                Type::Slice(slice) => {
                    format!("`Vec<{}>` instead of `&[{0}]`", quote::ToTokens::to_token_stream(&slice.elem))
                }
                elem => format!(
                    "`{}` instead of `&{0}`",
                    quote::ToTokens::to_token_stream(elem).to_string().replace(' ', "")
                ),
            };
            errors.at(
                ty,
                format!(
                    "a tool cannot take a reference parameter: its arguments are deserialized into owned values; use {instead}, or mark shared state `#[state]` (or the run's context, `#[context]`)"
                ),
            );
        }
        _ if contains_impl_trait(ty) => errors.at(
            ty,
            "a tool cannot take an `impl Trait` parameter: the model's arguments are deserialized into one concrete type; use a concrete type such as `String` or `Vec<T>`",
        ),
        _ => {
            if let Some(borrow) = borrow(ty) {
                errors.at(
                    borrow,
                    "a tool parameter cannot borrow: its arguments are deserialized into owned values; use an owned type (for example `String` instead of `Cow<'_, str>`), or mark shared state `#[state]`",
                );
            }
        }
    }
}

/// The first borrow in a type: a reference or a lifetime other than `'static`.
fn borrow(ty: &Type) -> Option<proc_macro2::TokenStream> {
    match ty {
        Type::Reference(r) => match &r.lifetime {
            Some(lifetime) if lifetime.ident == "static" => borrow(&r.elem),
            _ => Some(r.to_token_stream()),
        },
        Type::Array(a) => borrow(&a.elem),
        Type::Slice(s) => borrow(&s.elem),
        Type::Paren(p) => borrow(&p.elem),
        Type::Group(g) => borrow(&g.elem),
        Type::Tuple(t) => t.elems.iter().find_map(borrow),
        Type::Path(p) => p
            .path
            .segments
            .iter()
            .find_map(|segment| match &segment.arguments {
                syn::PathArguments::AngleBracketed(args) => {
                    args.args.iter().find_map(|arg| match arg {
                        syn::GenericArgument::Lifetime(l) if l.ident != "static" => {
                            Some(l.to_token_stream())
                        }
                        syn::GenericArgument::Type(t) => borrow(t),
                        _ => None,
                    })
                }
                _ => None,
            }),
        _ => None,
    }
}

fn contains_impl_trait(ty: &Type) -> bool {
    match ty {
        Type::ImplTrait(_) => true,
        Type::Array(a) => contains_impl_trait(&a.elem),
        Type::Slice(s) => contains_impl_trait(&s.elem),
        Type::Paren(p) => contains_impl_trait(&p.elem),
        Type::Group(g) => contains_impl_trait(&g.elem),
        Type::Reference(r) => contains_impl_trait(&r.elem),
        Type::Tuple(t) => t.elems.iter().any(contains_impl_trait),
        Type::Path(p) => p
            .path
            .segments
            .iter()
            .any(|segment| match &segment.arguments {
                syn::PathArguments::AngleBracketed(args) => args.args.iter().any(|arg| match arg {
                    syn::GenericArgument::Type(t) => contains_impl_trait(t),
                    _ => false,
                }),
                _ => false,
            }),
        _ => false,
    }
}

/// `#[tool]` on an item that is not a fn: the error, at the item's keyword,
/// and the item unchanged.
pub(crate) fn not_a_fn(item: proc_macro2::TokenStream) -> proc_macro2::TokenStream {
    let error = syn::Error::new(
        item_keyword(item.clone()),
        "`#[tool]` goes on a fn (`fn`, `async fn`); for a tool defined by a type, implement `typed_tools::Tool` for it",
    )
    .to_compile_error();
    quote::quote!(#error #item)
}

/// The span of an item's keyword (`struct`, `impl`, ...): its first token after
/// the attributes and the visibility.
fn item_keyword(item: proc_macro2::TokenStream) -> proc_macro2::Span {
    use proc_macro2::TokenTree;
    let mut tokens = item.into_iter().peekable();
    let mut first = None;
    while let Some(token) = tokens.next() {
        first.get_or_insert_with(|| token.span());
        match &token {
            // `#[...]`, including `///` comments.
            TokenTree::Punct(p) if p.as_char() == '#' => {
                tokens.next();
            }
            // `pub`, `pub(crate)`.
            TokenTree::Ident(i) if i == "pub" => {
                if matches!(tokens.peek(), Some(TokenTree::Group(g)) if g.delimiter() == proc_macro2::Delimiter::Parenthesis)
                {
                    tokens.next();
                }
            }
            _ => return token.span(),
        }
    }
    first.unwrap_or_else(proc_macro2::Span::call_site)
}

/// A tool needs a description: the model reads it to decide when to call the tool.
pub(crate) fn documented(item: &ItemFn, errors: &mut Errors) {
    let has_doc = item.attrs.iter().any(|attr| attr.path().is_ident("doc"));
    if !has_doc {
        errors.at_span(
            item.sig.ident.span(),
            format!(
                "a tool needs a doc comment: the model reads it to decide when to call the tool; add `/// What {} does.` above the fn",
                item.sig.ident
            ),
        );
    }
    let _ = item.span();
}
