//! A pinned box that is cheap to drop.
//!
//! A pinned box whose drop is one inline branch and an out-of-line free:
//! the tokio timer's `Sleep` and an attempt under a timeout. Whatever holds one stays
//! cheap to drop on the happy path, where the box is empty or never made.

use core::pin::Pin;

/// A pinned box, or nothing, freed out of line.
#[derive(Debug)]
pub struct ColdBox<T>(Option<Pin<Box<T>>>);

impl<T> ColdBox<T> {
    /// Nothing boxed yet.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) const fn empty() -> Self {
        ColdBox(None)
    }

    /// `value`, boxed and pinned.
    #[inline]
    pub(crate) fn new(value: T) -> Self {
        ColdBox(Some(Box::pin(value)))
    }

    /// The boxed value, if any.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn get(&mut self) -> Option<Pin<&mut T>> {
        self.0.as_mut().map(Pin::as_mut)
    }
}

impl<T> Default for ColdBox<T> {
    fn default() -> Self {
        ColdBox::empty()
    }
}

impl<T> Drop for ColdBox<T> {
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn drop(&mut self) {
        if let Some(boxed) = self.0.take() {
            drop_cold(boxed);
        }
    }
}

/// Frees a box: out of line, off the happy path.
#[cold]
#[inline(never)]
fn drop_cold<T>(boxed: Pin<Box<T>>) {
    drop(boxed);
}

#[cfg(test)]
mod tests;
