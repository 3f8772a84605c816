//! What a body run once per attempt cannot do.
//!
//! What the body cannot do when it runs once per attempt, found in the
//! signature and reported on the user's token instead of as a borrow-checker
//! error inside the expansion: `#[track_caller]`, `mut self`, and a result
//! that borrows from a `&mut` input each attempt reborrows.

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::visit_mut::VisitMut;
use syn::{Attribute, FnArg, Lifetime, ReturnType, Signature, Token, Type};

use crate::errors::Errors;

/// Records an error for each limit the function runs into. `output` is the
/// type the body returns (the signature's, or the one `#[async_trait]` moved
/// into the body).
pub(crate) fn check(attrs: &[Attribute], sig: &Signature, output: Option<&Type>, errors: &mut Errors) {
    if let Some(attr) = attrs.iter().find(|a| a.path().is_ident("track_caller")) {
        errors.push(
            attr.span(),
            "`#[track_caller]` cannot be combined with `#[retry]`: the body runs once per attempt inside the retry loop, so `Location::caller()` and panics in it would name the body, not the caller; remove `#[track_caller]`, or put it on a function the body calls",
        );
    }
    if let Some(FnArg::Receiver(receiver)) = sig.inputs.first() {
        if let Some(mutability) = receiver.mutability.filter(|_| !is_mut_pointer(receiver)) {
            errors.push(
                mutability.span(),
                "`mut self` cannot be retried: what a failed attempt changes in `self` would be what the next attempt sees, and `#[retry]` cannot give each attempt a fresh `self`; take `self` without `mut` and copy or clone it inside the body (`let mut this = self.clone();`)",
            );
        }
    }
    for (mutability, name, ty) in generic_mut_arguments(sig) {
        errors.push(
            mutability.span(),
            format!(
                "`mut {name}: {ty}` cannot be retried: each attempt starts from a fresh copy of what the caller passed, and `{ty}` is a generic type without a `Copy` bound, so the first attempt would use up what the next one needs; take `{name}: &mut {ty}` to let each attempt go on where the failed one stopped, or retry the function that makes the value"
            ),
        );
    }
    if let Some(output) = output {
        if let Some((span, input)) = borrow_of_reborrowed_input(sig, output) {
            errors.push(
                span,
                format!(
                    "`#[retry]` runs the body once per attempt, and each attempt reborrows {input}, so the result cannot borrow from it; return an owned value (`.clone()`, `.to_owned()`), or retry a function that returns owned data and borrow after the call (if the result is `'static` data, write `&'static` in the return type)"
                ),
            );
        }
    }
}

/// Whether `mut self` binds a pointer through which every attempt reaches
/// the same value (`mut self: Pin<&mut Self>`, `mut self: &mut Self`): the
/// binding's `mut` only lets the body reborrow it (`self.as_mut()`), as
/// `&mut self` does, so it is retried as `&mut self` is.
fn is_mut_pointer(receiver: &syn::Receiver) -> bool {
    let syn::ReceiverKind::Typed(_, ty) = &receiver.kind else {
        return false;
    };
    let is_mut_reference = |ty: &Type| matches!(ty, Type::Reference(reference) if reference.mutability.is_some());
    match &**ty {
        Type::Path(path) => path.path.segments.last().is_some_and(|pin| {
            pin.ident == "Pin"
                && matches!(&pin.arguments, syn::PathArguments::AngleBracketed(args)
                    if matches!(args.args.first(), Some(syn::GenericArgument::Type(pointer)) if is_mut_reference(pointer)))
        }),
        ty => is_mut_reference(ty),
    }
}

/// The `mut` arguments whose type is a type parameter or `impl Trait`
/// without a `Copy` bound: `FreshCopy` cannot hold for them, and rustc's own
/// error would suggest adding `Copy` to, say, a `Stream`. Each with its
/// `mut`, its name and its type as written.
fn generic_mut_arguments(sig: &Signature) -> Vec<(Token![mut], String, String)> {
    let mut found = Vec::new();
    for arg in &sig.inputs {
        let FnArg::Typed(arg) = arg else { continue };
        let syn::Pat::Ident(binding) = &*arg.pat else { continue };
        let (Some(mutability), None) = (binding.mutability, &binding.by_ref) else {
            continue;
        };
        let generic = match &*arg.ty {
            Type::ImplTrait(bounds) => !bounds.bounds.iter().any(is_copy_bound),
            Type::Path(path) if path.qself.is_none() => path
                .path
                .get_ident()
                .is_some_and(|ident| is_type_param_without_copy(sig, ident)),
            _ => false,
        };
        if generic {
            let ty = &arg.ty;
            found.push((
                mutability,
                binding.ident.to_string(),
                as_written(&quote::quote!(#ty).to_string()),
            ));
        }
    }
    found
}

/// A type's tokens as a person writes them: `impl std::io::Read`, not
/// `impl std :: io :: Read`.
fn as_written(tokens: &str) -> String {
    [
        (" :: ", "::"),
        (":: ", "::"),
        (" < ", "<"),
        ("< ", "<"),
        (" >", ">"),
        (" ,", ","),
        ("& ", "&"),
        ("( ", "("),
        (" )", ")"),
    ]
    .iter()
    .fold(tokens.to_owned(), |text, (spaced, tight)| text.replace(spaced, tight))
}

/// Whether `ident` is a type parameter of `sig` that no bound (inline or in
/// the `where` clause) makes `Copy`.
fn is_type_param_without_copy(sig: &Signature, ident: &syn::Ident) -> bool {
    let Some(param) = sig.generics.type_params().find(|param| param.ident == *ident) else {
        return false;
    };
    let in_where = sig
        .generics
        .where_clause
        .iter()
        .flat_map(|clause| &clause.predicates)
        .any(|predicate| {
            matches!(predicate, syn::WherePredicate::Type(bound)
            if matches!(&bound.bounded_ty, Type::Path(path) if path.path.is_ident(ident))
                && bound.bounds.iter().any(is_copy_bound))
        });
    !param.bounds.iter().any(is_copy_bound) && !in_where
}

/// Whether a bound is `Copy` (by any path ending in it).
fn is_copy_bound(bound: &syn::TypeParamBound) -> bool {
    matches!(bound, syn::TypeParamBound::Trait(bound) if bound.path.segments.last().is_some_and(|last| last.ident == "Copy"))
}

/// A lifetime in the result: elided (`&T`, `'_`) or named.
#[derive(PartialEq)]
enum Borrow {
    Elided,
    Named(String),
}

/// Every lifetime the result mentions, with the span of its reference.
#[derive(Default)]
struct Borrows(Vec<(Borrow, Span)>);

// `VisitMut` (on a copy) because syn's `visit` feature is not enabled.
impl VisitMut for Borrows {
    fn visit_type_reference_mut(&mut self, reference: &mut syn::TypeReference) {
        let borrow = match &reference.lifetime {
            Some(lifetime) => named_or_elided(lifetime),
            None => Borrow::Elided,
        };
        self.0.push((borrow, reference.span()));
        syn::visit_mut::visit_type_reference_mut(self, reference);
    }

    fn visit_generic_argument_mut(&mut self, argument: &mut syn::GenericArgument) {
        if let syn::GenericArgument::Lifetime(lifetime) = argument {
            self.0.push((named_or_elided(lifetime), lifetime.span()));
        }
        syn::visit_mut::visit_generic_argument_mut(self, argument);
    }
}

fn named_or_elided(lifetime: &Lifetime) -> Borrow {
    if lifetime.ident == "_" {
        Borrow::Elided
    } else {
        Borrow::Named(lifetime.ident.to_string())
    }
}

/// `&mut T` with its lifetime, for a type that is a unique reference.
fn unique_reference(ty: &Type) -> Option<Option<Borrow>> {
    match ty {
        Type::Reference(reference) if reference.mutability.is_some() => {
            Some(reference.lifetime.as_ref().map(named_or_elided))
        }
        Type::Paren(inner) => unique_reference(&inner.elem),
        Type::Group(inner) => unique_reference(&inner.elem),
        _ => None,
    }
}

/// Whether the type mentions any lifetime a reader can see (a reference, a
/// lifetime argument).
fn mentions_a_lifetime(ty: &Type) -> bool {
    !Borrows::of(ty).0.is_empty()
}

impl Borrows {
    fn of(ty: &Type) -> Borrows {
        let mut borrows = Borrows::default();
        borrows.visit_type_mut(&mut ty.clone());
        borrows
    }

    /// Whether the lifetime `name` is among them.
    fn names(&self, name: &str) -> bool {
        self.0
            .iter()
            .any(|(borrow, _)| matches!(borrow, Borrow::Named(n) if n == name))
    }
}

/// Where the result certainly borrows from a `&mut` input, by the elision
/// rules or a named lifetime: the span of the borrow in the result and how
/// to name the input. `None` where it cannot be told from the signature.
fn borrow_of_reborrowed_input(sig: &Signature, output: &Type) -> Option<(Span, String)> {
    let borrows = Borrows::of(output);
    if borrows.0.is_empty() {
        return None;
    }
    let inputs_naming = |name: &str| -> usize {
        sig.inputs
            .iter()
            .filter(|arg| match arg {
                FnArg::Receiver(receiver) => match &receiver.kind {
                    syn::ReceiverKind::Reference(_, Some(lifetime), _) => lifetime.ident == name,
                    syn::ReceiverKind::Typed(_, ty) => Borrows::of(ty).names(name),
                    _ => false,
                },
                FnArg::Typed(arg) => Borrows::of(&arg.ty).names(name),
            })
            .count()
    };
    let borrowing = |lifetime: &Option<Borrow>, elision_picks_it: bool| {
        borrows.0.iter().find_map(|(borrow, span)| {
            let certain = match (borrow, lifetime) {
                (Borrow::Elided, _) => elision_picks_it,
                // A lifetime only this input names: the result borrows from it.
                (Borrow::Named(out), Some(Borrow::Named(input))) => out == input && inputs_naming(input) == 1,
                (Borrow::Named(_), _) => false,
            };
            certain.then_some(*span)
        })
    };
    // A reference receiver is what elision picks; only a unique one is a limit.
    if let Some(FnArg::Receiver(receiver)) = sig.inputs.first() {
        let lifetime = match &receiver.kind {
            syn::ReceiverKind::Reference(_, lifetime, Some(_)) => lifetime.as_ref().map(named_or_elided),
            // `&self`: elision picks it, and a shared borrow is no limit.
            syn::ReceiverKind::Reference(_, _, None) => return None,
            syn::ReceiverKind::Typed(_, ty) => match unique_reference(ty) {
                Some(lifetime) => lifetime,
                // `self: Pin<&mut Self>` and the like: elision picks `self`,
                // and whether it is unique is not told by the syntax alone.
                None if mentions_a_lifetime(ty) => return None,
                None => return by_argument(sig, &borrowing),
            },
            syn::ReceiverKind::Value => return by_argument(sig, &borrowing),
            _ => return None,
        };
        return borrowing(&lifetime, true).map(|span| (span, "`self` (`&mut self`)".to_owned()));
    }
    by_argument(sig, &borrowing)
}

/// The `&mut` argument the result certainly borrows from, when the
/// receiver (if any) has no lifetime.
fn by_argument(sig: &Signature, borrowing: &dyn Fn(&Option<Borrow>, bool) -> Option<Span>) -> Option<(Span, String)> {
    let typed: Vec<&syn::PatType> = sig
        .inputs
        .iter()
        .filter_map(|arg| match arg {
            FnArg::Typed(arg) => Some(arg),
            FnArg::Receiver(_) => None,
        })
        .collect();
    let with_lifetimes = typed.iter().filter(|arg| mentions_a_lifetime(&arg.ty)).count();
    typed.iter().find_map(|arg| {
        let lifetime = unique_reference(&arg.ty)?;
        // Elision picks this argument when it is the only one with a lifetime.
        let span = borrowing(&lifetime, with_lifetimes == 1)?;
        let name = match &*arg.pat {
            syn::Pat::Ident(pat) => format!("`{}`", pat.ident),
            _ => "this `&mut` argument".to_owned(),
        };
        Some((span, format!("{name} (a `&mut` argument)")))
    })
}

/// The type the body returns, from the signature.
pub(crate) fn output_type(sig: &Signature) -> Option<&Type> {
    match &sig.output {
        ReturnType::Type(_, ty) => Some(ty),
        ReturnType::Default => None,
    }
}
