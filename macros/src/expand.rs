//! The expansion: the fn unchanged, a tool type, its input struct, the `Tool`
//! impl, and the bound checks placed on the user's tokens.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;

use crate::model::{Output, ToolFn};

pub fn expand(model: &ToolFn, krate: &syn::Path) -> TokenStream {
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
        let attrs = &param.field_attrs;
        quote!(#(#attrs)* #vis #ident: #ty)
    });

    // The fn's arguments, in its own order, with the state lent from the tool.
    let mut args: Vec<TokenStream> = field_idents.iter().map(|i| i.to_token_stream()).collect();
    if let Some(state) = &model.state {
        args.insert(state.position, quote!(&*self.state));
    }
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

    // Bounds checked at the user's tokens, so that an error points there.
    let mut checks: Vec<TokenStream> = model
        .params
        .iter()
        .map(|p| {
            let ty = &p.ty;
            quote_spanned!(ty.span()=> #private::assert_parameter::<#ty>();)
        })
        .collect();
    match &model.output {
        Output::Plain(ty) => {
            checks.push(quote_spanned!(ty.span()=> #private::assert_output::<#ty>();))
        }
        Output::Result { ok, err } => {
            checks.push(quote_spanned!(ok.span()=> #private::assert_output::<#ok>();));
            checks.push(quote_spanned!(err.span()=> #private::assert_error::<#err>();));
        }
        Output::ResultAlias(_) => {}
    }

    let (tool_struct, tool_ctor) = match &model.state {
        None => (
            quote! {
                #[derive(::core::clone::Clone, ::core::marker::Copy, ::core::fmt::Debug, ::core::default::Default)]
                #vis struct #tool;
            },
            quote!(),
        ),
        Some(state) => {
            let ty = &state.ty;
            checks.push(quote_spanned!(ty.span()=> #private::assert_state::<#ty>();));
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

    let serde_crate = format!("{}::__private::serde", path_string(krate));
    let schemars_crate = format!("{}::__private::schemars", path_string(krate));
    let tool_doc = format!(
        "The `{name}` tool, generated by `#[tool]` from [`{fn_ident}`]; add it to a `Toolbox`."
    );
    let input_doc =
        format!("The arguments of the `{name}` tool: one field per parameter of [`{fn_ident}`].");

    quote! {
        #item

        #[doc = #tool_doc]
        #tool_struct

        #[doc = #input_doc]
        #[derive(#private::serde::Deserialize, #private::schemars::JsonSchema)]
        #[serde(crate = #serde_crate, deny_unknown_fields)]
        #[schemars(crate = #schemars_crate)]
        #vis struct #input {
            #(#fields,)*
        }

        #tool_ctor

        #[automatically_derived]
        impl #private::Tool for #tool {
            type Input = #input;
            type Output = #output_ty;
            type Error = #error_ty;
            type Effects = #effects;
            const NAME: &'static str = #name;
            const DOC: &'static [&'static str] = &[#(#docs),*];
            const IDEMPOTENT: bool = #idempotent;

            fn call(
                &self,
                #input_var: Self::Input,
            ) -> impl ::core::future::Future<
                Output = ::core::result::Result<Self::Output, Self::Error>,
            > + ::core::marker::Send {
                let #input { #(#field_idents),* } = #input_var;
                async move { #body }
            }

            #call_sync
        }

        const _: () = {
            #(#checks)*
        };
    }
}

fn path_string(path: &syn::Path) -> String {
    path.to_token_stream().to_string().replace(' ', "")
}
