//! The user's decisions about an error: is it worth retrying, and did the
//! server suggest a wait. Built by the `#[retry]` expansion (and the plain
//! API) from `retry_if = ...` and friends; typed by the error so closures
//! written without parameter types infer `&E`.

use core::marker::PhantomData;

/// What a retry loop asks about each error.
pub trait Hooks<E> {
    /// Whether `error` is worth retrying (`retry_if`); `true` by default.
    fn should_retry(&self, error: &E) -> bool;
}

/// Every error is retried: the default of `retry_if`.
#[derive(Clone, Copy, Debug, Default)]
pub struct RetryAll;

/// The hooks of one retried function, typed by its error `E`.
///
/// ```
/// use backoff_runtime::hooks::{HookSet, Hooks};
///
/// let hooks = HookSet::<std::io::Error>::new().retry_if(|e| e.kind() == std::io::ErrorKind::TimedOut);
/// assert!(hooks.should_retry(&std::io::ErrorKind::TimedOut.into()));
/// assert!(!hooks.should_retry(&std::io::ErrorKind::NotFound.into()));
/// ```
pub struct HookSet<E, If = RetryAll> {
    retry_if: If,
    _error: PhantomData<fn(&E)>,
}

impl<E> HookSet<E> {
    /// Hooks that retry every error.
    ///
    /// ```
    /// use backoff_runtime::hooks::{HookSet, Hooks};
    /// assert!(HookSet::<u8>::new().should_retry(&1));
    /// ```
    #[inline(always)]
    #[must_use]
    pub const fn new() -> Self {
        HookSet {
            retry_if: RetryAll,
            _error: PhantomData,
        }
    }

    /// Hooks for the type of `_error`: lets generated code name `E` without
    /// spelling it.
    ///
    /// ```
    /// use backoff_runtime::hooks::{HookSet, Hooks};
    /// let e = "boom";
    /// assert!(HookSet::of(&e).should_retry(&"other"));
    /// ```
    #[inline(always)]
    #[must_use]
    pub const fn of(_error: &E) -> Self {
        Self::new()
    }
}

impl<E> Default for HookSet<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E, If> HookSet<E, If> {
    /// Retries only the errors for which `predicate` returns `true`.
    ///
    /// ```
    /// use backoff_runtime::hooks::{HookSet, Hooks};
    /// let hooks = HookSet::<u16>::new().retry_if(|status| *status >= 500);
    /// assert!(hooks.should_retry(&503));
    /// assert!(!hooks.should_retry(&404));
    /// ```
    #[inline(always)]
    pub fn retry_if<F: Fn(&E) -> bool>(self, predicate: F) -> HookSet<E, RetryIf<E, F>> {
        HookSet {
            retry_if: RetryIf {
                predicate,
                // The bound is checked here, once: the `Hooks` impl below
                // needs none, so a predicate of the wrong type is one error.
                call: |predicate, error| predicate(error),
            },
            _error: PhantomData,
        }
    }
}

impl<E, T: Hooks<E>> Hooks<E> for &T {
    #[inline(always)]
    fn should_retry(&self, error: &E) -> bool {
        (**self).should_retry(error)
    }
}

/// A `retry_if` predicate.
pub struct RetryIf<E, F> {
    predicate: F,
    call: fn(&F, &E) -> bool,
}

impl<E> Hooks<E> for HookSet<E, RetryAll> {
    #[inline(always)]
    fn should_retry(&self, _error: &E) -> bool {
        true
    }
}

impl<E, F> Hooks<E> for HookSet<E, RetryIf<E, F>> {
    #[inline(always)]
    fn should_retry(&self, error: &E) -> bool {
        (self.retry_if.call)(&self.retry_if.predicate, error)
    }
}
