//! The annotated item: a function with a body. Everything else (a struct, a
//! `const fn`, an `extern` function, a declaration without a body) is
//! rejected here with a message that names the problem.

use proc_macro2::TokenStream;
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
    pub(crate) stmts: Vec<Stmt>,
}

impl RetryFn {
    pub(crate) fn is_async(&self) -> bool {
        self.sig.asyncness.is_some()
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
        let stmts = content.call(syn::Block::parse_within)?;
        Ok(RetryFn {
            attrs,
            inner_attrs,
            vis,
            defaultness,
            sig,
            brace,
            stmts,
        })
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

/// Re-emits the original item untouched: the fallback after an argument
/// error, so callers of the function see no second error.
pub(crate) fn fallback(item: TokenStream) -> TokenStream {
    item
}
