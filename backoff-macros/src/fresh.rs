//! `mut` arguments start every attempt from what the caller passed.
//!
//! The signature binds them without `mut`, and each attempt rebinds a fresh
//! copy (`let mut x = fresh_copy(&x);`). A type that is not `Copy` cannot be
//! copied per attempt: the runtime's `FreshCopy` bound reports it on the
//! argument, saying why and what to do.

use crate::expand::Trees;
use proc_macro2::TokenStream;
use quote::quote;
use syn::visit_mut::VisitMut;
use syn::{FnArg, Ident, Signature, Stmt, Token};

/// One `mut` binding of an argument.
struct MutBinding {
    mutability: Token![mut],
    ident: Ident,
}

/// Collects and strips the `mut` of every by-value binding in a pattern.
#[derive(Default)]
struct StripMut(Vec<MutBinding>);

impl VisitMut for StripMut {
    fn visit_pat_ident_mut(&mut self, pat: &mut syn::PatIdent) {
        if pat.by_ref.is_none() {
            if let Some(mutability) = pat.mutability.take() {
                self.0.push(MutBinding {
                    mutability,
                    ident: pat.ident.clone(),
                });
            }
        }
        syn::visit_mut::visit_pat_ident_mut(self, pat);
    }
}

/// The statements that give each attempt a fresh copy of `bindings`.
fn rebind(bindings: &[MutBinding], private: &Trees) -> TokenStream {
    bindings
        .iter()
        .map(|MutBinding { mutability, ident }| {
            // Located at the argument, so a type that is not `Copy` is
            // reported there.
            let fresh_copy = crate::expand::respan(quote!(#private::FreshCopy::fresh_copy(&#ident)), ident.span());
            quote! { let #mutability #ident = #fresh_copy; }
        })
        .collect()
}

/// Strips `mut` from the arguments of `sig`; returns the per-attempt rebinding.
pub(crate) fn strip_mut_args(sig: &mut Signature, private: &Trees) -> TokenStream {
    let mut strip = StripMut::default();
    for arg in &mut sig.inputs {
        if let FnArg::Typed(arg) = arg {
            strip.visit_pat_mut(&mut arg.pat);
        }
    }
    rebind(&strip.0, private)
}

/// The names the function's arguments bind (`self` included): a hook or a
/// `budget =` written as one of these reads an argument.
pub(crate) fn argument_names(sig: &Signature) -> Vec<syn::Ident> {
    #[derive(Default)]
    struct Names(Vec<syn::Ident>);
    impl VisitMut for Names {
        fn visit_pat_ident_mut(&mut self, pat: &mut syn::PatIdent) {
            self.0.push(pat.ident.clone());
            syn::visit_mut::visit_pat_ident_mut(self, pat);
        }
    }
    let mut names = Names::default();
    for arg in &sig.inputs {
        match arg {
            FnArg::Receiver(receiver) => names.0.push(syn::Ident::new("self", receiver.self_token.span)),
            FnArg::Typed(arg) => names.visit_pat_mut(&mut arg.pat.clone()),
        }
    }
    names.0
}

/// In a body `#[async_trait]` wrote, its `let mut x = x;` statements (the
/// `mut` arguments it moved into its block): strips their `mut` and returns
/// the per-attempt rebinding.
pub(crate) fn strip_async_trait_rebinds(stmts: &mut [Stmt], private: &Trees) -> TokenStream {
    let mut bindings = Vec::new();
    for stmt in stmts {
        let Stmt::Local(local) = stmt else { continue };
        let syn::Pat::Ident(pat) = &mut local.pat else {
            continue;
        };
        let moves_itself = local
            .init
            .as_ref()
            .is_some_and(|init| matches!(&*init.expr, syn::Expr::Path(path) if path.path.is_ident(&pat.ident)));
        if !moves_itself || pat.by_ref.is_some() {
            continue;
        }
        if let Some(mutability) = pat.mutability.take() {
            bindings.push(MutBinding {
                mutability,
                ident: pat.ident.clone(),
            });
        }
    }
    rebind(&bindings, private)
}
