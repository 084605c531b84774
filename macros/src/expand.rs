//! The expansion: the fn unchanged, a tool type, its input struct, the `Tool`
//! impl, and the bound checks placed on the user's tokens.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;

use crate::model::{Output, ToolFn};

pub(crate) fn expand(model: &ToolFn, krate: &syn::Path) -> TokenStream {
    let item = &model.item;
    let vis = &item.vis;
    let fn_ident = &item.sig.ident;
    let tool = &model.tool_ident;
    let input = &model.input_ident;
    let private = quote!(#krate::__private);
    let name = &model.name;
    let docs = &model.docs;
    let idempotent = model.idempotent;

    let marker = if model.effects.is_empty() {
        "Pure".to_owned()
    } else {
        model.effects.concat()
    };
    let marker = syn::Ident::new(&marker, model.effects_span);
    let effects = quote_spanned!(model.effects_span=> #private::effect::#marker);

    let field_idents: Vec<_> = model.params.iter().map(|p| &p.ident).collect();
    let fields = model.params.iter().map(|param| {
        let ident = &param.ident;
        let ty = &param.ty;
        // `#[schemars]` is read by the schema twin, which derives `JsonSchema`.
        let attrs = param
            .field_attrs
            .iter()
            .filter(|a| !a.path().is_ident("schemars"));
        // A field is public with its tool, so it needs a doc (`missing_docs`);
        // only the twin's docs are in the schema.
        let doc = (!param.field_attrs.iter().any(|a| a.path().is_ident("doc"))).then(|| {
            let doc = format!("The `{}` argument.", syn::ext::IdentExt::unraw(ident));
            quote!(#[doc = #doc])
        });
        quote!(#doc #(#attrs)* #vis #ident: #ty)
    });

    // The fn's arguments, in its own order, with the state lent from the
    // tool and the context from the call.
    let context_var = format_ident!("__typed_tools_context");
    let mut args: Vec<TokenStream> = field_idents.iter().map(|i| i.to_token_stream()).collect();
    let mut lent = Vec::new();
    if let Some(state) = &model.state {
        lent.push((state.position, quote!(&*self.state)));
    }
    if let Some(context) = &model.context {
        lent.push((context.position, context_var.to_token_stream()));
    }
    lent.sort_by_key(|(position, _)| *position);
    for (position, arg) in lent {
        args.insert(position, arg);
    }
    // The call's context: the parameter's, or `_` when the fn takes none.
    let context_param = match &model.context {
        Some(_) => context_var.to_token_stream(),
        None => quote!(_),
    };
    let await_ = item.sig.asyncness.map(|_| quote!(.await));
    let call = quote!(#fn_ident(#(#args),*) #await_);
    let (output_ty, error_ty, body) = match &model.output {
        Output::Plain(ty) => (
            ty.to_token_stream(),
            quote!(::core::convert::Infallible),
            quote!(::core::result::Result::Ok(#call)),
        ),
        Output::Result { ok, err } => (ok.to_token_stream(), err.to_token_stream(), call),
        Output::ResultAlias(ty) => (
            quote!(<#ty as #private::Fallible>::Ok),
            quote!(<#ty as #private::Fallible>::Err),
            quote!(#private::Fallible::into_result(#call)),
        ),
    };

    // The bounds the runtime needs, checked once, at the user's tokens (see
    // `__private`): `checks` are the `assert_*` calls that report a bad type;
    // `assumed` are the same bounds as `where` clauses of the generated items,
    // which do not fail a second time.
    let mut checks: Vec<TokenStream> = Vec::new();
    let mut assumed: Vec<TokenStream> = Vec::new();
    // Spanned at the type, so that where the tool is used, rustc's "unsatisfied
    // trait bound introduced here" points at the type too.
    let assume = |ty: TokenStream, span: Span, bound: &str| {
        let bound = format_ident!("{bound}", span = span);
        let private = respan(private.clone(), span);
        // The binder at the macro's call site: rustc does not lint macro
        // output for `unused_lifetimes`, only the user's tokens.
        let binder = quote!(for<'__typed_tools>);
        quote_spanned!(span=> #binder #ty: #private::#bound<#tool>)
    };
    let mut parameter_bounds: Vec<TokenStream> = Vec::new();
    for param in &model.params {
        let ty = &param.ty;
        let span = ty.span();
        checks.push(quote_spanned!(span=> #private::assert_parameter::<#ty>();));
        parameter_bounds.push(assume(ty.to_token_stream(), span, "ParameterOf"));
    }
    match &model.output {
        Output::Plain(ty) => {
            let span = ty.span();
            checks.push(quote_spanned!(span=> #private::assert_output::<#ty>();));
            assumed.push(assume(ty.to_token_stream(), span, "OutputOf"));
        }
        Output::Result { ok, err } => {
            checks.push(quote_spanned!(ok.span()=> #private::assert_output::<#ok>();));
            checks.push(quote_spanned!(err.span()=> #private::assert_error::<#err>();));
            assumed.push(assume(ok.to_token_stream(), ok.span(), "OutputOf"));
            assumed.push(assume(err.to_token_stream(), err.span(), "ErrorOf"));
        }
        Output::ResultAlias(ty) => {
            let span = ty.span();
            let ok = quote_spanned!(span=> <#ty as #private::Fallible>::Ok);
            let err = quote_spanned!(span=> <#ty as #private::Fallible>::Err);
            checks.push(quote_spanned!(span=>
                #private::assert_result::<#ty>();
                #private::assert_output::<#ok>();
                #private::assert_error::<#err>();
            ));
            let binder = quote!(for<'__typed_tools>);
            assumed.push(quote_spanned!(span=> #binder #ty: #private::Fallible));
            assumed.push(assume(ok, span, "OutputOf"));
            assumed.push(assume(err, span, "ErrorOf"));
        }
    }

    let context_ty = match &model.context {
        Some(context) => {
            let ty = &context.ty;
            checks.push(quote_spanned!(ty.span()=> #private::assert_context::<#ty>();));
            assumed.push(assume(ty.to_token_stream(), ty.span(), "ContextOf"));
            ty.to_token_stream()
        }
        None => quote!(()),
    };

    let (tool_struct, tool_ctor) = match &model.state {
        // The impls the four derives would write, written out: a derive is
        // an expansion of its own, four per tool.
        None => (
            quote! {
                #vis struct #tool;
            },
            quote! {
                #[automatically_derived]
                impl ::core::clone::Clone for #tool {
                    #[inline]
                    fn clone(&self) -> Self {
                        *self
                    }
                }
                #[automatically_derived]
                impl ::core::marker::Copy for #tool {}
                #[automatically_derived]
                impl ::core::default::Default for #tool {
                    #[inline]
                    fn default() -> Self {
                        #tool
                    }
                }
                #[automatically_derived]
                impl ::core::fmt::Debug for #tool {
                    fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                        f.write_str(::core::stringify!(#tool))
                    }
                }
            },
        ),
        Some(state) => {
            let ty = &state.ty;
            checks.push(quote_spanned!(ty.span()=> #private::assert_state::<#ty>();));
            assumed.push(assume(ty.to_token_stream(), ty.span(), "StateOf"));
            (
                quote! {
                    #[derive(::core::clone::Clone)]
                    #vis struct #tool {
                        state: ::std::sync::Arc<#ty>,
                    }
                },
                quote! {
                    impl #tool {
                        #[doc = ::core::concat!("The `", #name, "` tool, calling [`", ::core::stringify!(#fn_ident), "`] with this state.")]
                        #vis fn new(state: impl ::core::convert::Into<::std::sync::Arc<#ty>>) -> Self {
                            #tool { state: state.into() }
                        }
                    }
                    impl ::core::fmt::Debug for #tool {
                        fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                            f.write_str(::core::stringify!(#tool))
                        }
                    }
                },
            )
        }
    };

    let input_var = format_ident!("__typed_tools_input");
    // A sync fn runs without a future: the dispatcher's fast path allocates nothing.
    let call_sync = match item.sig.asyncness {
        Some(_) => quote!(),
        None => quote! {
            fn __typed_tools_call_sync(
                &self,
                #context_param: &Self::Context,
                #input_var: Self::Input,
            ) -> ::core::result::Result<
                ::core::result::Result<Self::Output, Self::Error>,
                Self::Input,
            > {
                let #input { #(#field_idents),* } = #input_var;
                ::core::result::Result::Ok(#body)
            }
        },
    };

    // The JSON key of each argument `#[serde(rename)]` renames, for the plan
    // builder's `exec!`.
    // Keyed by the name as `stringify!` writes it (`r#type`); a raw name
    // alone needs no entry (the builder drops `r#` itself).
    let renamed: Vec<_> = model
        .params
        .iter()
        .filter(|p| syn::ext::IdentExt::unraw(&p.ident) != p.json_name)
        .map(|p| (p.ident.to_string(), &p.json_name))
        .collect();
    let argument_names = if renamed.is_empty() {
        quote!()
    } else {
        let (rust, json): (Vec<_>, Vec<_>) = renamed.into_iter().unzip();
        quote! {
            fn __typed_tools_argument(name: &'static str) -> &'static str {
                match name {
                    #(#rust => #json,)*
                    other => other,
                }
            }
        }
    };

    // What `exec!` needs to let optional arguments be left out: the required
    // ones by their Rust names, each with the message for leaving it out.
    let required = model.params.iter().filter(|p| !p.optional).map(|p| {
        let rust = p.ident.to_string();
        let shown = syn::ext::IdentExt::unraw(&p.ident).to_string();
        let message = format!(
            "missing argument `{shown}` of tool `{name}`: give it a value (`{shown}: lit(..)`, or a field, `field!(x.f)`); only an optional argument, an `Option<T>` or one with `#[serde(default)]`, may be left out"
        );
        quote!((#rust, #message))
    });
    let annotations = {
        let title = model
            .title
            .as_ref()
            .map(|title| quote!(const TITLE: ::core::option::Option<&'static str> = ::core::option::Option::Some(#title);));
        let destructive = model
            .destructive
            .map(|flag| quote!(const DESTRUCTIVE: bool = #flag;));
        let open_world = model
            .open_world
            .map(|flag| quote!(const OPEN_WORLD: bool = #flag;));
        quote!(#title #destructive #open_world)
    };

    let serde_crate = format!("{}::__private::serde", path_string(krate));
    let schemars_crate = format!("{}::__private::schemars", path_string(krate));
    assumed.extend(parameter_bounds.iter().cloned());
    // An async fn's future, made `Send` at the fn's name: there a future
    // that is not `Send` is reported. A sync fn's is its result, ready:
    // no state machine per tool (the toolbox runs it through
    // `__typed_tools_call_sync` anyway).
    let future = match item.sig.asyncness {
        Some(_) => {
            let span = fn_ident.span();
            let private = respan(private.clone(), span);
            quote_spanned!(span=> #private::send_future(async move { #body }))
        }
        None => quote!(::core::future::ready(#body)),
    };
    // At the fn's name, where rustc shows "the trait `Tool` is implemented
    // for `LookupAccount`" (not at the whole attribute).
    let impl_header = {
        let span = fn_ident.span();
        let private = respan(private.clone(), span);
        quote_spanned!(span=> #[automatically_derived] impl #private::Tool for #tool)
    };
    // A retry cannot write twice: tools without `Write`, or declared idempotent.
    let retryable = if model.idempotent || !model.effects.contains(&"Write") {
        quote! {
            #[automatically_derived]
            impl #private::Retryable for #tool where #(#assumed,)* {}
        }
    } else {
        quote!()
    };
    let tool_doc = format!(
        "The `{name}` tool, generated by `#[tool]` from [`{fn_ident}`]; add it to a `Toolbox`."
    );
    let input_doc =
        format!("The arguments of the `{name}` tool: one field per parameter of [`{fn_ident}`].");
    // Parameters with no attribute but doc comments: the input's
    // `Deserialize` and `JsonSchema` are generic runtime code over the tuple
    // of their types (`__private::Fields`); any `#[serde]` or `#[schemars]`
    // on a parameter is the derives' to read, so then they are derived.
    let field_docs: Option<Vec<String>> = (model.params.len() <= MAX_GENERIC_FIELDS)
        .then(|| model.params.iter().map(field_doc).collect())
        .flatten();
    // The derives' own bounds: what the impls assume of the fields' types.
    let parameter_bounds_str = parameter_bounds
        .iter()
        .map(|b| b.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let (input_derive, input_impls) = if let Some(field_docs) = field_docs {
        // In an optimized build the input is still read by serde's derive:
        // its visitor compares keys with constants, where the generic one
        // calls out per key (6% more instructions to dispatch `add`).
        (
            quote! {
                #[cfg_attr(not(debug_assertions), derive(#private::serde::Deserialize))]
                #[cfg_attr(not(debug_assertions), serde(crate = #serde_crate, deny_unknown_fields, bound(deserialize = #parameter_bounds_str)))]
            },
            input_impls(model, &private, &parameter_bounds, &field_docs),
        )
    } else {
        (
            quote! {
                #[derive(#private::serde::Deserialize)]
                #[serde(crate = #serde_crate, deny_unknown_fields, bound(deserialize = #parameter_bounds_str))]
            },
            schema_twin(
                model,
                &private,
                &schemars_crate,
                &parameter_bounds,
                &parameter_bounds_str,
            ),
        )
    };

    quote! {
        #item

        #[doc = #tool_doc]
        #tool_struct

        #[doc = #input_doc]
        #input_derive
        #vis struct #input {
            #(#fields,)*
        }

        #input_impls

        #tool_ctor

        #impl_header
        where
            #(#assumed,)*
        {
            type Input = #input;
            type Output = #output_ty;
            type Error = #error_ty;
            type Effects = #effects;
            type Context = #context_ty;
            const NAME: &'static str = #name;
            const DOC: &'static [&'static str] = &[#(#docs),*];
            const IDEMPOTENT: bool = #idempotent;
            #annotations
            const __TYPED_TOOLS_REQUIRED: ::core::option::Option<&'static [(&'static str, &'static str)]> =
                ::core::option::Option::Some(&[#(#required),*]);

            fn call(
                &self,
                #context_param: &Self::Context,
                #input_var: Self::Input,
            ) -> impl ::core::future::Future<
                Output = ::core::result::Result<Self::Output, Self::Error>,
            > + ::core::marker::Send {
                let #input { #(#field_idents),* } = #input_var;
                #future
            }

            #call_sync

            #argument_names
        }

        #retryable

        const _: () = {
            #(#checks)*
        };
    }
}

/// The most parameters the runtime's `Fields` takes as a tuple.
const MAX_GENERIC_FIELDS: usize = 16;

/// The input struct's `JsonSchema`, and in a debug build its `Deserialize`,
/// by the runtime's generic functions over the tuple of the parameters'
/// types. They assume the parameters' bounds, as the `Tool` impl does, so
/// that a bad type is reported once, by `assert_parameter`.
fn input_impls(
    model: &ToolFn,
    private: &TokenStream,
    bounds: &[TokenStream],
    docs: &[String],
) -> TokenStream {
    let input = &model.input_ident;
    let name = input.to_string();
    let idents: Vec<_> = model.params.iter().map(|p| &p.ident).collect();
    let types = model.params.iter().map(|p| &p.ty);
    let names = model.params.iter().map(|p| &p.json_name);
    // None at all is written as no list.
    let docs = if docs.iter().all(String::is_empty) {
        &[][..]
    } else {
        docs
    };
    quote! {
        const _: () = {
            const __TYPED_TOOLS_NAMES: &[&str] = &[#(#names),*];
            #[cfg(debug_assertions)]
            #[automatically_derived]
            impl<'de> #private::serde::Deserialize<'de> for #input
            where
                #(#bounds,)*
            {
                fn deserialize<__D: #private::serde::Deserializer<'de>>(d: __D) -> #private::Result<Self, __D::Error> {
                    let (#(#idents,)*) = #private::deserialize_input(d, #name, __TYPED_TOOLS_NAMES)?;
                    #private::Result::Ok(#input { #(#idents),* })
                }
            }
            #[automatically_derived]
            impl #private::schemars::JsonSchema for #input
            where
                #(#bounds,)*
            {
                fn schema_name() -> #private::Cow<'static, str> {
                    #private::Cow::Borrowed(#name)
                }
                fn schema_id() -> #private::Cow<'static, str> {
                    #private::Cow::Borrowed(::core::concat!(::core::module_path!(), "::", #name))
                }
                fn json_schema(g: &mut #private::schemars::SchemaGenerator) -> #private::schemars::Schema {
                    #private::input_schema::<(#(#types,)*)>(g, __TYPED_TOOLS_NAMES, &[#(#docs),*])
                }
            }
        };
    }
}

/// A parameter's doc comment as schemars' derive reads it (each line less
/// one leading space, joined by newlines), when the parameter has no other
/// attribute and its docs are literal strings; `None` otherwise.
fn field_doc(param: &crate::model::Param) -> Option<String> {
    let mut lines = Vec::new();
    for attr in &param.field_attrs {
        let syn::Meta::NameValue(doc) = &attr.meta else {
            return None;
        };
        let syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(line),
            ..
        }) = &doc.value
        else {
            return None;
        };
        if !doc.path.is_ident("doc") {
            return None;
        }
        let line = line.value();
        lines.push(line.strip_prefix(' ').map(str::to_owned).unwrap_or(line));
    }
    Some(lines.join("\n"))
}

/// The input struct's `JsonSchema`, derived on a private twin. schemars takes a
/// `bound` only on a generic struct, so the twin has an (unused) const
/// parameter; with the bound, a parameter type that is not `JsonSchema` is
/// reported once, by `assert_parameter`, not again inside the derived code.
fn schema_twin(
    model: &ToolFn,
    private: &TokenStream,
    schemars_crate: &str,
    bounds: &[TokenStream],
    bounds_str: &str,
) -> TokenStream {
    let input = &model.input_ident;
    let twin = format_ident!("__typed_tools_{}", input);
    let fields = model.params.iter().map(|param| {
        let ident = &param.ident;
        let ty = &param.ty;
        let attrs = &param.field_attrs;
        quote!(#(#attrs)* #ident: #ty)
    });
    let name = input.to_string();
    let schemars = quote!(#private::schemars);
    quote! {
        #[doc(hidden)]
        #[allow(dead_code, non_camel_case_types)]
        #[derive(#schemars::JsonSchema)]
        #[serde(deny_unknown_fields)]
        #[schemars(crate = #schemars_crate, rename = #name, bound = #bounds_str)]
        struct #twin<const __TYPED_TOOLS: u8> {
            #(#fields,)*
        }

        #[automatically_derived]
        impl #schemars::JsonSchema for #input
        where
            #(#bounds,)*
        {
            // Written here, not forwarded: the twin's id is formatted at run
            // time (it is generic), this one is a literal.
            fn schema_name() -> ::std::borrow::Cow<'static, str> {
                ::std::borrow::Cow::Borrowed(#name)
            }
            fn schema_id() -> ::std::borrow::Cow<'static, str> {
                ::std::borrow::Cow::Borrowed(::core::concat!(::core::module_path!(), "::", #name))
            }
            fn json_schema(generator: &mut #schemars::SchemaGenerator) -> #schemars::Schema {
                <#twin<0> as #schemars::JsonSchema>::json_schema(generator)
            }
        }
    }
}

/// `tokens` with every span set to `span`.
fn respan(tokens: TokenStream, span: Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut token| {
            if let proc_macro2::TokenTree::Group(group) = &token {
                let mut inner =
                    proc_macro2::Group::new(group.delimiter(), respan(group.stream(), span));
                inner.set_span(span);
                token = proc_macro2::TokenTree::Group(inner);
            } else {
                token.set_span(span);
            }
            token
        })
        .collect()
}

fn path_string(path: &syn::Path) -> String {
    path.to_token_stream().to_string().replace(' ', "")
}
