//! The function's return type as the expansion names it: the fake return
//! edge, the result check, and `impl Trait` and lifetimes erased.
use super::*;

/// `if false { return never::<R>(); }` with `impl Trait` in `R` replaced
/// by `_`: types the closure or async block as the function.
pub(super) fn fake_return_edge(output: &ReturnType, private: &Trees) -> TokenStream {
    let ty = nameable_return_type(output);
    quote! {
        if false {
            return #private::never::<#ty>();
        }
    }
}

/// The check that the function returns a `Result`, spanned on the return
/// type: a type position (no "required by a bound in" an internal
/// function), the same obligation at the same span as the loop's own, which
/// rustc then reports once.
///
/// None when the type holds `impl Trait` (erased to `_`, which such a check
/// cannot infer): the loop's own bound then reports it.
pub(super) fn result_check(private: &Trees, return_type: &TokenStream, span: Span) -> TokenStream {
    if has_placeholder(return_type) {
        return TokenStream::new();
    }
    let return_type = erase_lifetimes(return_type);
    let check = respan_exactly(
        quote!(::core::marker::PhantomData<<#return_type as #private::RetryResult>::Ok>),
        span,
    );
    quote! { let _: #check; }
}

/// Whether `tokens` hold a `_` (an erased `impl Trait`).
pub(super) fn has_placeholder(tokens: &TokenStream) -> bool {
    tokens.clone().into_iter().any(|token| match token {
        proc_macro2::TokenTree::Ident(ident) => ident == "_",
        proc_macro2::TokenTree::Group(group) => has_placeholder(&group.stream()),
        _ => false,
    }) || tokens.to_string().split_whitespace().any(|word| word == "_")
}

/// `ty` with every lifetime `'_` (see [`LifetimeEraser`]).
pub(super) fn erase_lifetimes(ty: &TokenStream) -> TokenStream {
    match syn::parse2::<Type>(ty.clone()) {
        Ok(mut ty) => {
            LifetimeEraser.visit_type_mut(&mut ty);
            quote!(#ty)
        }
        Err(_) => ty.clone(),
    }
}

/// [`nameable_return_type`] of the return type of an `#[async_trait]` block.
pub(super) fn ret_type_tokens(ty: &Type) -> TokenStream {
    nameable_return_type(&ReturnType::Type(Default::default(), Box::new(ty.clone())))
}

/// Replaces every lifetime with `'_`: the check respans the type with
/// mixed-site hygiene, under which the function's lifetimes do not resolve.
pub(super) struct LifetimeEraser;

impl VisitMut for LifetimeEraser {
    fn visit_lifetime_mut(&mut self, lifetime: &mut syn::Lifetime) {
        lifetime.ident = Ident::new("_", lifetime.ident.span());
    }
}

/// The function's return type as the generated code may name it: `impl
/// Trait` replaced by `_`, `()` when none is written.
pub(crate) fn nameable_return_type(output: &ReturnType) -> TokenStream {
    match output {
        ReturnType::Type(_, ty) => {
            let mut ty = (**ty).clone();
            ImplTraitEraser.visit_type_mut(&mut ty);
            quote!(#ty)
        }
        ReturnType::Default => quote!(()),
    }
}

/// Replaces every `impl Trait` with `_`, as tracing-attributes does.
pub(super) struct ImplTraitEraser;

impl VisitMut for ImplTraitEraser {
    fn visit_type_mut(&mut self, ty: &mut Type) {
        if let Type::ImplTrait(impl_trait) = ty {
            *ty = Type::Infer(syn::TypeInfer {
                attrs: Vec::new(),
                underscore_token: syn::Token![_](impl_trait.impl_token.span),
            });
            return;
        }
        syn::visit_mut::visit_type_mut(self, ty);
    }
}
