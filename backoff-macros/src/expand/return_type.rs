//! The function's return type as the expansion names it.
//!
//! The fake return edge, the result check, and `impl Trait` and lifetimes
//! erased.
use super::*;

/// The function's return type as the expansion writes it, worked out once.
pub(super) struct NamedReturn {
    /// `impl Trait` replaced by `_`, `()` when none is written.
    pub(super) nameable: TokenStream,
    /// The same with every lifetime `'_` (see [`LifetimeEraser`]).
    pub(super) erased: TokenStream,
    /// Whether it holds a `_` ([`PlaceholderFinder`]): a check that would
    /// have to infer it is left out.
    pub(super) infers: bool,
}

impl NamedReturn {
    /// The names of `output`.
    pub(super) fn of(output: &ReturnType) -> NamedReturn {
        let mut ty = match output {
            ReturnType::Type(_, ty) => (**ty).clone(),
            ReturnType::Default => syn::parse_quote!(()),
        };
        ImplTraitEraser.visit_type_mut(&mut ty);
        let nameable = quote!(#ty);
        let mut finder = PlaceholderFinder(false);
        finder.visit_type_mut(&mut ty);
        let infers = finder.0;
        LifetimeEraser.visit_type_mut(&mut ty);
        let erased = quote!(#ty);
        NamedReturn {
            nameable,
            erased,
            infers,
        }
    }
}

/// `if false { return never::<R>(); }` with `impl Trait` in `R` replaced
/// by `_`: types the closure or async block as the function.
pub(super) fn fake_return_edge(return_type: &NamedReturn, private: &Trees) -> TokenStream {
    let ty = &return_type.nameable;
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
pub(super) fn result_check(private: &Trees, return_type: &NamedReturn, span: Span) -> TokenStream {
    if return_type.infers {
        return TokenStream::new();
    }
    let return_type = &return_type.erased;
    let check = respan_exactly(quote!(<#return_type as #private::RetryResult>::Ok), span);
    quote! { let _: #check; }
}

/// Finds a `_` in a type (an erased `impl Trait`, or one written): on the
/// parsed type, where reading its tokens would send them across the
/// proc-macro bridge.
struct PlaceholderFinder(bool);

impl VisitMut for PlaceholderFinder {
    fn visit_type_mut(&mut self, ty: &mut Type) {
        match ty {
            Type::Infer(_) => self.0 = true,
            // A macro's tokens are not parsed: read them.
            Type::Macro(mac) => self.0 |= has_placeholder(&mac.mac.tokens),
            _ => syn::visit_mut::visit_type_mut(self, ty),
        }
    }

    fn visit_expr_mut(&mut self, expr: &mut syn::Expr) {
        if matches!(expr, syn::Expr::Infer(_)) {
            self.0 = true;
        } else {
            syn::visit_mut::visit_expr_mut(self, expr);
        }
    }
}

/// Whether `tokens` hold a `_` (an erased `impl Trait`).
pub(super) fn has_placeholder(tokens: &TokenStream) -> bool {
    tokens.clone().into_iter().any(|token| match token {
        proc_macro2::TokenTree::Ident(ident) => ident == "_",
        proc_macro2::TokenTree::Group(group) => has_placeholder(&group.stream()),
        _ => false,
    }) || tokens.to_string().split_whitespace().any(|word| word == "_")
}

/// Replaces every lifetime with `'_`: the check respans the type with
/// mixed-site hygiene, under which the function's lifetimes do not resolve.
pub(super) struct LifetimeEraser;

impl VisitMut for LifetimeEraser {
    fn visit_lifetime_mut(&mut self, lifetime: &mut syn::Lifetime) {
        lifetime.ident = Ident::new("_", lifetime.ident.span());
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
