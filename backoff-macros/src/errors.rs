//! Every error of one attribute, reported together.
//!
//! Accumulates every error of one attribute so they are reported together
//! (the shape of serde_derive's `Ctxt`).

use core::fmt::Display;

use proc_macro2::Span;

/// A growing list of spanned errors.
#[derive(Default)]
pub(crate) struct Errors {
    combined: Option<syn::Error>,
}

impl Errors {
    /// Records an error spanned on `span`.
    pub(crate) fn push(&mut self, span: Span, message: impl Display) {
        self.push_error(syn::Error::new(span, message));
    }

    /// Records an error spanned on `span`, and reads as the missing value
    /// of the key it is about.
    pub(crate) fn reject<T>(&mut self, span: Span, message: impl Display) -> Option<T> {
        self.push(span, message);
        None
    }

    /// Records an already built error.
    pub(crate) fn push_error(&mut self, error: syn::Error) {
        match &mut self.combined {
            Some(all) => all.combine(error),
            None => self.combined = Some(error),
        }
    }

    /// `Ok(value)` when nothing was recorded, else every error together.
    pub(crate) fn finish<T>(self, value: T) -> syn::Result<T> {
        match self.combined {
            Some(error) => Err(error),
            None => Ok(value),
        }
    }
}
