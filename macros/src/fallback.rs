//! What is emitted when the attribute or the fn has errors: the errors, the fn
//! as written (so that its body is still checked and its callers still resolve),
//! and a placeholder tool type (so that code naming it does not add errors of
//! its own). One mistake gives its own errors, not a cascade.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{FnArg, ItemFn};

use crate::ctxt::Errors;
use crate::model::upper_camel;

pub(crate) fn expand(mut item: ItemFn, krate: &syn::Path, errors: &Errors) -> TokenStream {
    // The parameter attributes only this macro understands would add errors.
    for input in item.sig.inputs.iter_mut() {
        if let FnArg::Typed(param) = input {
            param.attrs.retain(|a| {
                !["state", "context", "doc", "serde", "schemars"]
                    .iter()
                    .any(|name| a.path().is_ident(name))
            });
        }
    }
    // A C-variadic fn only compiles as a foreign fn; emitting it would add
    // rustc's errors about `...` to ours.
    if item.sig.variadic.take().is_some() {
        item.sig.inputs.pop_punct();
    }
    let errors = errors.to_compile_errors();
    // With `self` the fn is in an `impl` or a trait, where a struct cannot go.
    if item.sig.receiver().is_some() {
        return quote! {
            #errors
            #[allow(dead_code)]
            #item
        };
    }
    let vis = &item.vis;
    let tool = syn::Ident::new(
        &upper_camel(&item.sig.ident.to_string()),
        item.sig.ident.span(),
    );
    let private = quote!(#krate::__private);
    quote! {
        #errors

        // Unused only because the errors above stopped the expansion.
        #[allow(dead_code)]
        #item

        #[allow(dead_code)]
        #vis struct #tool;

        impl #private::Tool for #tool {
            type Input = ();
            type Output = ();
            type Error = ::core::convert::Infallible;
            type Effects = #private::effect::Pure;
            type Context = ();
            const NAME: &'static str = "";
            const DOC: &'static [&'static str] = &[];
            fn call(&self, _: &(), _: ()) -> impl ::core::future::Future<
                Output = ::core::result::Result<(), ::core::convert::Infallible>,
            > + ::core::marker::Send {
                async { ::core::result::Result::Ok(()) }
            }
        }
    }
}
