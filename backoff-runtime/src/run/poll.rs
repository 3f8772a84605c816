//! Retrying on values: the hooks of a function with `retry_if_ok`, where an
//! `Ok` value may be *pending* (a job still running) and is waited on and
//! asked again like a retryable error. The loops then judge the attempt's
//! whole result: the error hooks (`retry_if`, `retry_after`) see errors, the
//! value hooks (`retry_if_ok`, `retry_after_ok`) see values, and the
//! observers (`on_retry`, `on_give_up`, `before_retry`) see the
//! `Result` that caused the retry or ended the call.

// A type-state builder: each method's return type names the hooks it holds.
#![allow(clippy::type_complexity)]

use core::fmt::{self, Debug};
use core::marker::PhantomData;
use core::time::Duration;

use crate::observe::events::{GiveUp, RetryEvent, Success};
use crate::observe::site::{CallSite, Site};
use crate::run::hooks::{
    DebugFmt, ErrorType, HookSet, Hooks, OnGiveUpHook, OnRetryHook, OnSuccessHook, RetryAfterHook, RetryIfHook, Set,
    Slot, Unset,
};

/// The hooks of a polling function: the error hooks in a [`HookSet`], the
/// value hooks, and observers of the whole `Result<T, E>`.
///
/// ```
/// use backoff_runtime::__private::{Hooks, PollHookSet, PollHooks};
/// use std::time::Duration;
///
/// let hooks = PollHookSet::<&str, u16>::new()
///     .retry_if(|status| *status >= 500)
///     .retry_if_ok(|state| *state == "running")
///     .retry_after_ok(|_| Some(Duration::from_secs(2)));
/// assert!(hooks.pending(&"running"));
/// assert!(!hooks.pending(&"done"));
/// assert_eq!(hooks.hint(&Ok("running")), Some(Duration::from_secs(2)));
/// assert!(!hooks.should_retry(&Err(404)));
/// ```
pub struct PollHookSet<
    T,
    E,
    Errors = HookSet<E>,
    IfOk = Unset,
    AfterOk = Unset,
    OnRetry = Unset,
    OnGiveUp = Unset,
    OnSuccess = Unset,
> {
    errors: Errors,
    retry_if_ok: IfOk,
    retry_after_ok: AfterOk,
    on_retry: OnRetry,
    on_give_up: OnGiveUp,
    on_success: OnSuccess,
    debug: Option<DebugFmt<Result<T, E>>>,
    _result: PhantomData<fn(&T, &E)>,
}

impl<T, E, Errors, IfOk, AfterOk, OnRetry, OnGiveUp, OnSuccess> Debug
    for PollHookSet<T, E, Errors, IfOk, AfterOk, OnRetry, OnGiveUp, OnSuccess>
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PollHookSet").finish_non_exhaustive()
    }
}

impl<T, E> PollHookSet<T, E> {
    /// Hooks that retry every error, and no value.
    ///
    /// ```
    /// use backoff_runtime::__private::{PollHookSet, PollHooks};
    /// assert!(!PollHookSet::<u8, ()>::new().pending(&1));
    /// ```
    #[inline(always)]
    #[must_use]
    pub const fn new() -> Self {
        PollHookSet {
            errors: HookSet::new(),
            retry_if_ok: Unset,
            retry_after_ok: Unset,
            on_retry: Unset,
            on_give_up: Unset,
            on_success: Unset,
            debug: None,
            _result: PhantomData,
        }
    }
}

impl<T, E> Default for PollHookSet<T, E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T, E, If, After, IfOk, AfterOk, OnRetry, OnGiveUp, OnSuccess>
    PollHookSet<T, E, HookSet<E, If, After>, IfOk, AfterOk, OnRetry, OnGiveUp, OnSuccess>
{
    /// Names the retried operation in events.
    #[inline(always)]
    #[must_use]
    pub fn name(mut self, name: &'static str) -> Self {
        self.errors = self.errors.name(name);
        self
    }

    /// Retries failures a retried function below gave up on (`nested =
    /// retry`).
    #[inline(always)]
    #[must_use]
    pub fn retry_nested(mut self) -> Self {
        self.errors = self.errors.retry_nested();
        self
    }

    /// Names the retried function by its static site.
    #[doc(hidden)]
    #[inline(always)]
    #[must_use]
    pub fn site(mut self, site: &'static CallSite) -> Self {
        self.errors = self.errors.site(site);
        self
    }

    /// Names a retried method by its static site and the type of its `self`.
    #[doc(hidden)]
    #[inline(always)]
    #[must_use]
    pub fn method_site(mut self, site: &'static CallSite, self_type: fn() -> &'static str) -> Self {
        self.errors = self.errors.method_site(site, self_type);
        self
    }

    /// Retries only the errors for which `predicate` returns `true`.
    #[inline(always)]
    pub fn retry_if<F: Fn(&E) -> bool>(
        self,
        predicate: F,
    ) -> PollHookSet<T, E, HookSet<E, RetryIfHook<E, F>, After>, IfOk, AfterOk, OnRetry, OnGiveUp, OnSuccess> {
        PollHookSet {
            errors: self.errors.retry_if(predicate),
            retry_if_ok: self.retry_if_ok,
            retry_after_ok: self.retry_after_ok,
            on_retry: self.on_retry,
            on_give_up: self.on_give_up,
            on_success: self.on_success,
            debug: self.debug,
            _result: PhantomData,
        }
    }

    /// The server's hint for the wait after an error.
    #[inline(always)]
    pub fn retry_after<F: Fn(&E) -> Option<Duration>>(
        self,
        hint: F,
    ) -> PollHookSet<T, E, HookSet<E, If, RetryAfterHook<E, F>>, IfOk, AfterOk, OnRetry, OnGiveUp, OnSuccess> {
        PollHookSet {
            errors: self.errors.retry_after(hint),
            retry_if_ok: self.retry_if_ok,
            retry_after_ok: self.retry_after_ok,
            on_retry: self.on_retry,
            on_give_up: self.on_give_up,
            on_success: self.on_success,
            debug: self.debug,
            _result: PhantomData,
        }
    }
}

impl<T, E, Errors, IfOk, AfterOk, OnRetry, OnGiveUp, OnSuccess>
    PollHookSet<T, E, Errors, IfOk, AfterOk, OnRetry, OnGiveUp, OnSuccess>
{
    /// Treats the values for which `predicate` returns `true` as pending:
    /// wait and run the operation again.
    #[inline(always)]
    pub fn retry_if_ok<F: Fn(&T) -> bool>(
        self,
        predicate: F,
    ) -> PollHookSet<T, E, Errors, RetryIfHook<T, F>, AfterOk, OnRetry, OnGiveUp, OnSuccess> {
        PollHookSet {
            errors: self.errors,
            retry_if_ok: Set::new(predicate, |f, v| f(v)),
            retry_after_ok: self.retry_after_ok,
            on_retry: self.on_retry,
            on_give_up: self.on_give_up,
            on_success: self.on_success,
            debug: self.debug,
            _result: PhantomData,
        }
    }

    /// The server's hint for the wait after a pending value.
    #[inline(always)]
    pub fn retry_after_ok<F: Fn(&T) -> Option<Duration>>(
        self,
        hint: F,
    ) -> PollHookSet<T, E, Errors, IfOk, RetryAfterHook<T, F>, OnRetry, OnGiveUp, OnSuccess> {
        PollHookSet {
            errors: self.errors,
            retry_if_ok: self.retry_if_ok,
            retry_after_ok: Set::new(hint, |f, v| f(v)),
            on_retry: self.on_retry,
            on_give_up: self.on_give_up,
            on_success: self.on_success,
            debug: self.debug,
            _result: PhantomData,
        }
    }

    /// Calls `observer` before each wait, with the result that caused it.
    #[inline(always)]
    pub fn on_retry<F: Fn(&Result<T, E>, &RetryEvent)>(
        self,
        observer: F,
    ) -> PollHookSet<T, E, Errors, IfOk, AfterOk, OnRetryHook<Result<T, E>, F>, OnGiveUp, OnSuccess> {
        PollHookSet {
            errors: self.errors,
            retry_if_ok: self.retry_if_ok,
            retry_after_ok: self.retry_after_ok,
            on_retry: Set::new(observer, |f, r, event| f(r, event)),
            on_give_up: self.on_give_up,
            on_success: self.on_success,
            debug: self.debug,
            _result: PhantomData,
        }
    }

    /// Calls `observer` once when a stop rule ends the call, with the final
    /// result (an error, or a value still pending).
    #[inline(always)]
    pub fn on_give_up<F: Fn(&Result<T, E>, &GiveUp)>(
        self,
        observer: F,
    ) -> PollHookSet<T, E, Errors, IfOk, AfterOk, OnRetry, OnGiveUpHook<Result<T, E>, F>, OnSuccess> {
        PollHookSet {
            errors: self.errors,
            retry_if_ok: self.retry_if_ok,
            retry_after_ok: self.retry_after_ok,
            on_retry: self.on_retry,
            on_give_up: Set::new(observer, |f, r, event| f(r, event)),
            on_success: self.on_success,
            debug: self.debug,
            _result: PhantomData,
        }
    }

    /// Calls `observer` once when the call returns a value that is not
    /// pending.
    #[inline(always)]
    pub fn on_success<F: Fn(&Success)>(
        self,
        observer: F,
    ) -> PollHookSet<T, E, Errors, IfOk, AfterOk, OnRetry, OnGiveUp, OnSuccessHook<F>> {
        PollHookSet {
            errors: self.errors,
            retry_if_ok: self.retry_if_ok,
            retry_after_ok: self.retry_after_ok,
            on_retry: self.on_retry,
            on_give_up: self.on_give_up,
            on_success: Set::new(observer, |f, event| f(event)),
            debug: self.debug,
            _result: PhantomData,
        }
    }

    /// How to format the result for tracing, when `T` and `E` are `Debug`.
    #[inline(always)]
    #[must_use]
    pub fn debug_with(mut self, fmt: Option<DebugFmt<Result<T, E>>>) -> Self {
        self.debug = fmt;
        self
    }

    /// A zero-sized token of the result type, for the `Debug` probe.
    #[doc(hidden)]
    #[inline(always)]
    pub fn error_type(&self) -> ErrorType<Result<T, E>> {
        ErrorType::new()
    }
}

/// What a polling loop asks about a value: is it still pending?
///
/// ```
/// use backoff_runtime::__private::{PollHookSet, PollHooks};
/// let hooks = PollHookSet::<u8, ()>::new().retry_if_ok(|v| *v < 3);
/// assert!(hooks.pending(&2) && !hooks.pending(&3));
/// ```
pub trait PollHooks<T, E>: Hooks<Result<T, E>> {
    /// Whether `value` is pending (`retry_if_ok`).
    fn pending(&self, value: &T) -> bool;
}

impl<T, E, Errors, IfOk, AfterOk, OnRetry, OnGiveUp, OnSuccess> Hooks<Result<T, E>>
    for PollHookSet<T, E, Errors, IfOk, AfterOk, OnRetry, OnGiveUp, OnSuccess>
where
    Errors: Hooks<E>,
    AfterOk: for<'a> Slot<&'a T, Option<Duration>>,
    OnRetry: for<'a, 'b> Slot<(&'a Result<T, E>, &'b RetryEvent), ()>,
    OnGiveUp: for<'a, 'b> Slot<(&'a Result<T, E>, &'b GiveUp), ()>,
    OnSuccess: for<'a> Slot<&'a Success, ()>,
{
    const OBSERVES_SUCCESS: bool = OnSuccess::IS_SET;

    /// A pending value is always retried (it reaches the decision only when
    /// `retry_if_ok` said so); an error when `retry_if` says so.
    #[inline(always)]
    fn should_retry(&self, result: &Result<T, E>) -> bool {
        match result {
            Ok(_) => true,
            Err(error) => self.errors.should_retry(error),
        }
    }

    #[inline(always)]
    fn hint(&self, result: &Result<T, E>) -> Option<Duration> {
        match result {
            Ok(value) => self.retry_after_ok.call_or(value, None),
            Err(error) => self.errors.hint(error),
        }
    }

    #[inline(always)]
    fn on_retry(&self, result: &Result<T, E>, event: &RetryEvent) {
        self.on_retry.call_or((result, event), ());
    }

    #[inline(always)]
    fn on_give_up(&self, result: &Result<T, E>, event: &GiveUp) {
        self.on_give_up.call_or((result, event), ());
    }

    #[inline(always)]
    fn debug_fmt(&self) -> Option<DebugFmt<Result<T, E>>> {
        self.debug
    }

    #[inline(always)]
    fn on_success(&self, event: &Success) {
        self.on_success.call_or(event, ());
    }

    #[inline(always)]
    fn site(&self) -> Site {
        self.errors.site()
    }

    #[inline(always)]
    fn observes(&self) -> bool {
        OnRetry::IS_SET || OnGiveUp::IS_SET || OnSuccess::IS_SET
    }

    #[inline(always)]
    fn retries_nested(&self) -> bool {
        self.errors.retries_nested()
    }

    #[inline(always)]
    fn is_pending(&self, result: &Result<T, E>) -> bool {
        result.is_ok()
    }
}

impl<T, E, Errors, IfOk, AfterOk, OnRetry, OnGiveUp, OnSuccess> PollHooks<T, E>
    for PollHookSet<T, E, Errors, IfOk, AfterOk, OnRetry, OnGiveUp, OnSuccess>
where
    Errors: Hooks<E>,
    IfOk: for<'a> Slot<&'a T, bool>,
    AfterOk: for<'a> Slot<&'a T, Option<Duration>>,
    OnRetry: for<'a, 'b> Slot<(&'a Result<T, E>, &'b RetryEvent), ()>,
    OnGiveUp: for<'a, 'b> Slot<(&'a Result<T, E>, &'b GiveUp), ()>,
    OnSuccess: for<'a> Slot<&'a Success, ()>,
{
    #[inline(always)]
    fn pending(&self, value: &T) -> bool {
        self.retry_if_ok.call_or(value, false)
    }
}

#[cfg(test)]
mod tests {
    use super::PollHookSet;

    /// The hooks say what they are when debugged (the closures they hold
    /// are not `Debug`).
    #[test]
    fn the_debug_form_says_what_it_is() {
        let hooks = PollHookSet::<u8, ()>::new().name("poll_job");
        assert_eq!(format!("{hooks:?}"), "PollHookSet { .. }");
    }
}
