//! The `#[retry]` attribute of
//! [`backoff-runtime`](https://docs.rs/backoff-runtime).
//!
//! Depend on `backoff-runtime`, not on this crate: it re-exports the attribute
//! and pins this crate to its exact version. The attribute's full reference is
//! on `backoff_runtime::retry`.
#![forbid(unsafe_code)]
#![warn(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod args;
mod errors;
mod expand;
mod fresh;
// `grammar.rs` is a link to backoff-runtime's `src/schedule/grammar.rs`: the
// durations, "did you mean" and the rules' texts, one file for the
// attribute and the run-time settings. Its public items are the runtime's
// API (unreachable here), and some serve the runtime only.
#[allow(unreachable_pub, dead_code)]
mod grammar;
mod item;
mod keys;
mod limits;
mod validate;
mod values;

use proc_macro::TokenStream;

/// Retries the function with truncated exponential backoff. See
/// `backoff_runtime::retry` for the reference of every key.
#[proc_macro_attribute]
pub fn retry(args: TokenStream, item: TokenStream) -> TokenStream {
    retry_impl(args.into(), item.into()).into()
}

/// The attribute on `proc_macro2` tokens, so it can be unit-tested.
fn retry_impl(args: proc_macro2::TokenStream, item: proc_macro2::TokenStream) -> proc_macro2::TokenStream {
    let mut errors = errors::Errors::default();
    let args = syn::parse::Parser::parse2(
        |input: syn::parse::ParseStream<'_>| args::Args::parse(input, &mut errors),
        args,
    );
    let function = match syn::parse2::<item::RetryFn>(item.clone()) {
        Ok(function) => {
            limits::check(
                &function.attrs,
                &function.sig,
                function.facts.output.as_ref(),
                &mut errors,
            );
            Some(function)
        }
        Err(error) => {
            errors.push_error(error);
            None
        }
    };
    let args = match args {
        Ok(args) => {
            validate::validate(&args, function.as_ref().map(|function| &function.facts), &mut errors);
            Some(args)
        }
        Err(error) => {
            errors.push_error(error);
            None
        }
    };
    match (errors.finish(()), args, function) {
        (Ok(()), Some(args), Some(function)) => expand::expand(&args, function),
        (result, _, _) => {
            let compile_errors = result.err().map(|e| e.to_compile_error()).unwrap_or_default();
            // The original item, untouched, after the errors: callers of the
            // function see no second error.
            let mut out = item;
            out.extend(compile_errors);
            out
        }
    }
}
