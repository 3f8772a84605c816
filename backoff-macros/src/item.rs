//! The annotated item: a function with a body.
//!
//! Everything else (a struct, a `const fn`, an `extern` function, a declaration
//! without a body) is rejected here with a message that names the problem.

use syn::parse::{Parse, ParseStream};
use syn::spanned::Spanned;
use syn::{Attribute, Signature, Stmt, Token, Visibility, token};

/// A function `#[retry]` can rewrite.
pub(crate) struct RetryFn {
    /// Outer attributes and doc comments, kept as written.
    pub(crate) attrs: Vec<Attribute>,
    /// `#![...]` attributes at the top of the body.
    pub(crate) inner_attrs: Vec<Attribute>,
    pub(crate) vis: Visibility,
    pub(crate) defaultness: Option<Token![default]>,
    pub(crate) sig: Signature,
    pub(crate) brace: token::Brace,
    /// The body's statements, read only when another attribute rewrote it
    /// (see [`rewritten_body`]); empty otherwise.
    pub(crate) stmts: Vec<Stmt>,
    /// The body's tokens as written, when no statement had to be read:
    /// emitted as they are, neither parsed nor printed again.
    pub(crate) tokens: Option<proc_macro2::TokenStream>,
    /// What the rest of the macro needs to know about the function.
    pub(crate) facts: FnFacts,
}

/// What validation and expansion need to know about the function, found
/// once when it is parsed.
pub(crate) struct FnFacts {
    /// Whether the body runs as a future: an `async fn`, or an `async fn`
    /// that `#[async_trait]` already rewrote.
    pub(crate) is_async: bool,
    /// Whether `#[async_trait]` already rewrote the body into
    /// `Box::pin(async move { ...; let __ret: R = { body }; __ret })`.
    pub(crate) is_async_trait: bool,
    /// The type the body returns: the signature's, or under `#[async_trait]`
    /// the method's own output type `R`; `None` for `()` written as nothing.
    pub(crate) output: Option<syn::Type>,
    /// The first binding that attempts running side by side could not
    /// share (`&mut self`, a `mut` argument, a `&mut` argument), and how
    /// to name it: what `hedge_after` rejects.
    pub(crate) unshared: Option<(proc_macro2::Span, String)>,
}

/// The `mut` of the first `&mut` that `ty` holds (`&mut T`,
/// `Pin<&mut Self>`), if any.
fn mut_reference_in(ty: &syn::Type) -> Option<proc_macro2::Span> {
    struct Finds(Option<proc_macro2::Span>);
    impl syn::visit_mut::VisitMut for Finds {
        fn visit_type_reference_mut(&mut self, reference: &mut syn::TypeReference) {
            if self.0.is_none() {
                self.0 = reference.mutability.map(|mutability| mutability.span);
            }
            syn::visit_mut::visit_type_reference_mut(self, reference);
        }
    }
    let mut finds = Finds(None);
    syn::visit_mut::VisitMut::visit_type_mut(&mut finds, &mut ty.clone());
    finds.0
}

/// The first binding of `sig` that attempts running side by side could
/// not share (its `mut` token), and its name in an error.
fn unshared_binding(sig: &Signature) -> Option<(proc_macro2::Span, String)> {
    sig.inputs.iter().find_map(|input| match input {
        syn::FnArg::Receiver(receiver) => {
            if let Some(mutability) = receiver.mutability {
                return Some((mutability.span, "`mut self`".to_owned()));
            }
            match &receiver.kind {
                syn::ReceiverKind::Reference(_, _, Some(mutability)) => {
                    Some((mutability.span, "`&mut self`".to_owned()))
                }
                syn::ReceiverKind::Typed(_, ty) => {
                    let ty_text = quote::ToTokens::to_token_stream(ty)
                        .to_string()
                        .replace("& mut ", "&mut ");
                    mut_reference_in(ty).map(|span| (span, format!("`self: {ty_text}`")))
                }
                _ => None,
            }
        }
        syn::FnArg::Typed(typed) => {
            if let syn::Pat::Ident(ident) = &*typed.pat {
                if let Some(mutability) = ident.mutability {
                    return Some((mutability.span, format!("the `mut` argument `{}`", ident.ident)));
                }
            }
            mut_reference_in(&typed.ty).map(|span| {
                let pat = quote::ToTokens::to_token_stream(&typed.pat);
                (span, format!("the `&mut` argument `{pat}`"))
            })
        }
    })
}

impl FnFacts {
    /// The facts of the function with signature `sig` and body `stmts`
    /// (mutable only because `#[async_trait]`'s block is found that way).
    fn of(sig: &Signature, stmts: &mut [Stmt]) -> FnFacts {
        let async_trait_output = async_trait_block(stmts).and_then(async_trait_ret).map(|(ty, _)| ty);
        FnFacts {
            is_async: sig.asyncness.is_some() || async_trait_output.is_some(),
            is_async_trait: async_trait_output.is_some(),
            output: async_trait_output.or_else(|| crate::limits::output_type(sig).cloned()),
            unshared: unshared_binding(sig),
        }
    }
}

/// In a body written by `#[async_trait]`
/// (`Box::pin(async move { ...; let __ret: R = { body }; __ret })`), the
/// `async move` block. `None` for any other body.
pub(crate) fn async_trait_block(stmts: &mut [Stmt]) -> Option<&mut syn::Block> {
    let [Stmt::Expr(syn::Expr::Call(call), None)] = stmts else {
        return None;
    };
    let syn::Expr::Path(func) = &*call.func else {
        return None;
    };
    let is_box_pin = {
        let segments: Vec<String> = func.path.segments.iter().map(|s| s.ident.to_string()).collect();
        segments.ends_with(&["Box".to_owned(), "pin".to_owned()])
    };
    if !is_box_pin || call.args.len() != 1 {
        return None;
    }
    let Some(syn::Expr::Async(future)) = call.args.first_mut() else {
        return None;
    };
    future.capture?;
    Some(&mut future.block)
}

/// In `#[async_trait]`'s `async move` block, the method's output type `R`
/// and the user's block from `let __ret: R = { body };`.
pub(crate) fn async_trait_ret(block: &mut syn::Block) -> Option<(syn::Type, &mut syn::Block)> {
    block.stmts.iter_mut().find_map(|stmt| {
        let Stmt::Local(local) = stmt else { return None };
        let syn::Pat::Type(typed) = &local.pat else { return None };
        let syn::Pat::Ident(name) = &*typed.pat else {
            return None;
        };
        if name.ident != "__ret" {
            return None;
        }
        let ty = (*typed.ty).clone();
        match local.init.as_mut().map(|init| &mut *init.expr) {
            Some(syn::Expr::Block(block)) => Some((ty, &mut block.block)),
            _ => None,
        }
    })
}

/// Rejects an `async fn` that `#[tracing::instrument]` (written above
/// `#[retry]`) has already rewritten, when it has owned arguments: its
/// `async move` block would move them into the first attempt.
fn check_instrument_order(sig: &Signature, stmts: &[Stmt]) -> syn::Result<()> {
    let instrumented = stmts.iter().any(|stmt| {
        matches!(stmt, Stmt::Local(local)
            if matches!(&local.pat, syn::Pat::Ident(p) if p.ident == "__tracing_attr_span"))
    });
    if !instrumented || sig.asyncness.is_none() {
        return Ok(());
    }
    let owned = sig.inputs.iter().find_map(|arg| match arg {
        syn::FnArg::Receiver(receiver) => {
            (!matches!(receiver.kind, syn::ReceiverKind::Reference(..))).then(|| receiver.self_token.span())
        }
        syn::FnArg::Typed(arg) => (!is_borrowed_or_copy(&arg.ty)).then(|| arg.pat.span()),
    });
    match owned {
        Some(span) => Err(syn::Error::new(
            span,
            "`#[tracing::instrument]` is written above `#[retry]`: its `async move` block moves this argument into the first attempt, so the body cannot run again; write `#[retry]` above `#[tracing::instrument]` (one span then covers the call and all its retries)",
        )),
        None => Ok(()),
    }
}

/// References and the primitive `Copy` types: arguments an `async move`
/// block can capture again on every attempt.
fn is_borrowed_or_copy(ty: &syn::Type) -> bool {
    const COPY: &[&str] = &[
        "bool", "char", "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128", "isize", "f32",
        "f64",
    ];
    match ty {
        syn::Type::Reference(_) => true,
        syn::Type::Path(path) => {
            path.qself.is_none() && path.path.get_ident().is_some_and(|i| COPY.iter().any(|c| i == c))
        }
        syn::Type::Paren(inner) => is_borrowed_or_copy(&inner.elem),
        syn::Type::Group(inner) => is_borrowed_or_copy(&inner.elem),
        _ => false,
    }
}

impl Parse for RetryFn {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let attrs = input.call(Attribute::parse_outer)?;
        let vis: Visibility = input.parse()?;
        let defaultness: Option<Token![default]> = input.parse()?;
        if !looks_like_fn(input) {
            return Err(input.error("`#[retry]` can only be applied to a function (`fn` or `async fn`)"));
        }
        let sig: Signature = input.parse()?;
        if let Some(constness) = &sig.constness {
            return Err(syn::Error::new(
                constness.span(),
                "`#[retry]` cannot be applied to a `const fn`: retrying means sleeping, which a `const fn` cannot do",
            ));
        }
        if let Some(abi) = &sig.abi {
            return Err(syn::Error::new(
                abi.span(),
                "`#[retry]` cannot be applied to an `extern` function: its callers across the ABI cannot see a retry loop; wrap it in a Rust function and annotate that",
            ));
        }
        if input.peek(Token![;]) {
            return Err(syn::Error::new(
                sig.ident.span(),
                "`#[retry]` needs a function with a body: on a trait method, put it on the method in each `impl`, or on a default body",
            ));
        }
        let content;
        let brace = syn::braced!(content in input);
        let inner_attrs = content.call(Attribute::parse_inner)?;
        let (mut stmts, tokens) = if rewritten_body(&content) {
            (content.call(syn::Block::parse_within)?, None)
        } else {
            (Vec::new(), Some(content.parse()?))
        };
        check_instrument_order(&sig, &stmts)?;
        let facts = FnFacts::of(&sig, &mut stmts);
        Ok(RetryFn {
            attrs,
            inner_attrs,
            vis,
            defaultness,
            sig,
            brace,
            stmts,
            tokens,
            facts,
        })
    }
}

/// Whether `#[async_trait]` (a body of one `Box::pin(..)`) or
/// `#[tracing::instrument]` (a `let __tracing_attr_span`) rewrote the body
/// before `#[retry]`: only then are its statements read. The rustc parser
/// has already checked the body's syntax.
fn rewritten_body(content: ParseStream<'_>) -> bool {
    let mut cursor = content.cursor();
    let mut first = true;
    loop {
        // Groups are stepped over unread.
        cursor = if let Some((ident, rest)) = cursor.ident() {
            if (first && ident == "Box") || ident == "__tracing_attr_span" {
                return true;
            }
            rest
        } else if let Some((_, _, _, rest)) = cursor.any_group() {
            rest
        } else if let Some((_, rest)) = cursor.token_tree() {
            rest
        } else {
            return false;
        };
        first = false;
    }
}

/// Whether the next tokens start a function signature (qualifiers then `fn`).
fn looks_like_fn(input: ParseStream<'_>) -> bool {
    let fork = input.fork();
    loop {
        if fork.peek(Token![fn]) {
            return true;
        }
        let qualifier = fork.parse::<Token![const]>().is_ok()
            || fork.parse::<Token![async]>().is_ok()
            || fork.parse::<Token![unsafe]>().is_ok()
            || fork.parse::<Token![safe]>().is_ok()
            || (fork.peek(Token![extern]) && fork.parse::<syn::Abi>().is_ok());
        if !qualifier {
            return false;
        }
    }
}
