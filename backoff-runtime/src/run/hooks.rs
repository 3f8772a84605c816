//! The user's decisions and observers around each error: is it worth
//! retrying (`retry_if`), did the server suggest a wait (`retry_after`), and
//! who wants to know (`on_retry`, `on_give_up`). Built by the `#[retry]`
//! expansion (and the plain API) from an empty [`HookSet`] typed by the
//! error, so closures written without parameter types infer `&E`.
//!
//! Each builder method checks its closure's signature once, where it is
//! given; the stored hook is called through a function pointer made there,
//! so the `Hooks` impl carries no bound and a hook of the wrong type is one
//! compile error on the user's token.

use core::fmt::{self, Debug};
use core::marker::PhantomData;
use core::time::Duration;

use crate::observe::events::{GiveUp, RetryEvent, Success};
use crate::observe::site::{CallSite, Site};

/// What a retry loop asks about, and reports on, each error.
///
/// Implemented by [`HookSet`]; the defaults retry every error, have no hint
/// and observe nothing.
///
/// ```
/// use backoff_runtime::__private::{HookSet, Hooks};
///
/// let hooks = HookSet::<u16>::new();
/// assert!(hooks.should_retry(&503));
/// assert_eq!(hooks.hint(&503), None);
/// assert!(!hooks.observes());
/// ```
pub trait Hooks<E> {
    /// Whether `error` is worth retrying (`retry_if`).
    fn should_retry(&self, error: &E) -> bool;
    /// The wait the server asked for, if any (`retry_after`).
    fn hint(&self, error: &E) -> Option<Duration>;
    /// Called before each wait (`on_retry`).
    fn on_retry(&self, error: &E, event: &RetryEvent);
    /// Called once when the final error is returned (`on_give_up`).
    fn on_give_up(&self, error: &E, event: &GiveUp);
    /// How to format the error, when its type is `Debug` (for tracing).
    fn debug_fmt(&self) -> Option<DebugFmt<E>>;
    /// Called once when the call succeeds (`on_success`).
    fn on_success(&self, event: &Success);
    /// Whether `on_success` is set: a first-attempt success reports only then
    /// (or when metrics record it).
    const OBSERVES_SUCCESS: bool;
    /// The annotated function's site: its name, and its metric handles.
    fn site(&self) -> Site;
    /// The annotated function's name, for events.
    fn function_name(&self) -> &'static str {
        self.site().name()
    }
    /// Whether `on_retry` or `on_give_up` is set (they need a start instant).
    fn observes(&self) -> bool;
    /// Whether a failure that a retried function below already gave up on
    /// is retried anyway (`nested = retry`).
    fn retries_nested(&self) -> bool;
    /// Whether what is decided on is a pending value (`retry_if_ok`), not a
    /// failure: a pending value asks nothing of a budget or a throttle.
    fn is_pending(&self, _decided: &E) -> bool {
        false
    }
}

/// A hook that is not set: the default behaviour (a type parameter of
/// [`HookSet`]).
///
/// ```
/// use backoff_runtime::__private::{HookSet, Unset};
/// let _default: HookSet<std::io::Error, Unset, Unset, Unset, Unset> = HookSet::new();
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Unset;

/// A hook that is set: the user's closure and a function pointer that calls
/// it (made where the closure's signature was checked). Built by the
/// [`HookSet`] methods, never by hand.
///
/// ```
/// use backoff_runtime::__private::{HookSet, RetryIfHook, Unset};
/// fn permanent(e: &u16) -> bool { *e < 500 }
/// let _set: HookSet<u16, RetryIfHook<u16, fn(&u16) -> bool>, Unset, Unset, Unset> =
///     HookSet::new().retry_if(permanent as fn(&u16) -> bool);
/// ```
pub struct Set<F, C> {
    hook: F,
    call: C,
}

impl<F, C> Set<F, C> {
    /// The hook `hook`, called through `call`.
    #[inline(always)]
    pub(crate) fn new(hook: F, call: C) -> Self {
        Set { hook, call }
    }
}

impl<F, C> Debug for Set<F, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Set")
    }
}

/// A set `retry_if` hook (see [`Set`] for an example).
pub type RetryIfHook<E, F> = Set<F, fn(&F, &E) -> bool>;
/// A set `retry_after` hook (see [`Set`] for an example of the pattern).
pub type RetryAfterHook<E, F> = Set<F, fn(&F, &E) -> Option<Duration>>;
/// A set `on_retry` hook (see [`Set`] for an example of the pattern).
pub type OnRetryHook<E, F> = Set<F, fn(&F, &E, &RetryEvent)>;
/// A set `on_give_up` hook (see [`Set`] for an example of the pattern).
pub type OnGiveUpHook<E, F> = Set<F, fn(&F, &E, &GiveUp)>;
/// A set `on_success` hook (see [`Set`] for an example of the pattern).
pub type OnSuccessHook<F> = Set<F, fn(&F, &Success)>;

/// The hooks of one retried function, typed by its error `E`.
///
/// ```
/// use backoff_runtime::__private::{HookSet, Hooks};
/// use std::io::ErrorKind;
///
/// let hooks = HookSet::<std::io::Error>::new().retry_if(|e| e.kind() == ErrorKind::TimedOut);
/// assert!(hooks.should_retry(&ErrorKind::TimedOut.into()));
/// assert!(!hooks.should_retry(&ErrorKind::NotFound.into()));
/// ```
pub struct HookSet<E, If = Unset, After = Unset, OnRetry = Unset, OnGiveUp = Unset, OnSuccess = Unset> {
    retry_if: If,
    retry_after: After,
    on_retry: OnRetry,
    on_give_up: OnGiveUp,
    on_success: OnSuccess,
    debug: Option<DebugFmt<E>>,
    site: Site,
    retries_nested: bool,
    _error: PhantomData<fn(&E)>,
}

impl<E, If, After, OnRetry, OnGiveUp, OnSuccess> Debug for HookSet<E, If, After, OnRetry, OnGiveUp, OnSuccess> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HookSet")
            .field("name", &self.site.name())
            .finish_non_exhaustive()
    }
}

impl<E> HookSet<E> {
    /// Hooks that retry every error and observe nothing.
    ///
    /// ```
    /// use backoff_runtime::__private::{HookSet, Hooks};
    /// assert!(HookSet::<u8>::new().should_retry(&1));
    /// ```
    #[inline(always)]
    #[must_use]
    pub const fn new() -> Self {
        HookSet {
            retry_if: Unset,
            retry_after: Unset,
            on_retry: Unset,
            on_give_up: Unset,
            on_success: Unset,
            debug: None,
            site: Site::Named("retry"),
            retries_nested: false,
            _error: PhantomData,
        }
    }
}

impl<E> Default for HookSet<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E, If, After, OnRetry, OnGiveUp, OnSuccess> HookSet<E, If, After, OnRetry, OnGiveUp, OnSuccess> {
    /// Retries only the errors for which `predicate` returns `true`.
    ///
    /// ```
    /// use backoff_runtime::__private::{HookSet, Hooks};
    /// let hooks = HookSet::<u16>::new().retry_if(|status| *status >= 500);
    /// assert!(hooks.should_retry(&503));
    /// assert!(!hooks.should_retry(&404));
    /// ```
    #[inline(always)]
    pub fn retry_if<F: Fn(&E) -> bool>(
        self,
        predicate: F,
    ) -> HookSet<E, RetryIfHook<E, F>, After, OnRetry, OnGiveUp, OnSuccess> {
        HookSet {
            retry_if: Set {
                hook: predicate,
                call: |f, e| f(e),
            },
            retry_after: self.retry_after,
            on_retry: self.on_retry,
            on_give_up: self.on_give_up,
            on_success: self.on_success,
            debug: self.debug,
            site: self.site,
            retries_nested: self.retries_nested,
            _error: PhantomData,
        }
    }

    /// Takes the wait from the error when the server suggested one
    /// (`Retry-After`): a hint `<= max_backoff` is the wait, a larger one ends
    /// the retries.
    ///
    /// ```
    /// use backoff_runtime::__private::{HookSet, Hooks};
    /// use std::time::Duration;
    /// let hooks = HookSet::<Option<u64>>::new().retry_after(|e| e.map(Duration::from_secs));
    /// assert_eq!(hooks.hint(&Some(3)), Some(Duration::from_secs(3)));
    /// ```
    #[inline(always)]
    pub fn retry_after<F: Fn(&E) -> Option<Duration>>(
        self,
        hint: F,
    ) -> HookSet<E, If, RetryAfterHook<E, F>, OnRetry, OnGiveUp, OnSuccess> {
        HookSet {
            retry_if: self.retry_if,
            retry_after: Set {
                hook: hint,
                call: |f, e| f(e),
            },
            on_retry: self.on_retry,
            on_give_up: self.on_give_up,
            on_success: self.on_success,
            debug: self.debug,
            site: self.site,
            retries_nested: self.retries_nested,
            _error: PhantomData,
        }
    }

    /// Calls `observer` before each wait.
    ///
    /// ```
    /// use backoff_runtime::__private::HookSet;
    /// let hooks = HookSet::<String>::new().on_retry(|e, event| println!("{e}: retry in {:?}", event.wait()));
    /// # let _ = hooks;
    /// ```
    #[inline(always)]
    pub fn on_retry<F: Fn(&E, &RetryEvent)>(
        self,
        observer: F,
    ) -> HookSet<E, If, After, OnRetryHook<E, F>, OnGiveUp, OnSuccess> {
        HookSet {
            retry_if: self.retry_if,
            retry_after: self.retry_after,
            on_retry: Set {
                hook: observer,
                call: |f, e, event| f(e, event),
            },
            on_give_up: self.on_give_up,
            on_success: self.on_success,
            debug: self.debug,
            site: self.site,
            retries_nested: self.retries_nested,
            _error: PhantomData,
        }
    }

    /// Calls `observer` once, when the final error is returned (never on
    /// success).
    ///
    /// ```
    /// use backoff_runtime::__private::HookSet;
    /// let hooks = HookSet::<String>::new().on_give_up(|e, event| eprintln!("{e}: {}", event.reason()));
    /// # let _ = hooks;
    /// ```
    #[inline(always)]
    pub fn on_give_up<F: Fn(&E, &GiveUp)>(
        self,
        observer: F,
    ) -> HookSet<E, If, After, OnRetry, OnGiveUpHook<E, F>, OnSuccess> {
        HookSet {
            retry_if: self.retry_if,
            retry_after: self.retry_after,
            on_retry: self.on_retry,
            on_give_up: Set {
                hook: observer,
                call: |f, e, event| f(e, event),
            },
            on_success: self.on_success,
            debug: self.debug,
            site: self.site,
            retries_nested: self.retries_nested,
            _error: PhantomData,
        }
    }

    /// How to format the error for tracing: `Some(<E as Debug>::fmt)` when
    /// `E` is `Debug`. The `#[retry]` expansion passes what its probe found,
    /// so no `E: Debug` bound is ever required.
    ///
    /// ```
    /// use backoff_runtime::__private::{HookSet, Hooks};
    /// let hooks = HookSet::<u8>::new().debug_with(Some(<u8 as std::fmt::Debug>::fmt));
    /// assert!(hooks.debug_fmt().is_some());
    /// ```
    #[inline(always)]
    #[must_use]
    pub fn debug_with(mut self, fmt: Option<DebugFmt<E>>) -> Self {
        self.debug = fmt;
        self
    }

    /// A zero-sized token of the error type, for the `Debug` probe of
    /// `#[retry]` expansions.
    #[doc(hidden)]
    #[inline(always)]
    pub fn error_type(&self) -> ErrorType<E> {
        ErrorType(PhantomData)
    }

    /// Names the retried operation in events.
    ///
    /// ```
    /// use backoff_runtime::__private::{HookSet, Hooks};
    /// assert_eq!(HookSet::<u8>::new().name("fetch").function_name(), "fetch");
    /// ```
    #[inline(always)]
    #[must_use]
    pub fn name(mut self, name: &'static str) -> Self {
        self.site = Site::Named(name);
        self
    }

    /// Names the retried function by its static site (the `#[retry]`
    /// expansion's): its path, or the name written on the attribute.
    #[doc(hidden)]
    #[inline(always)]
    #[must_use]
    pub fn site(mut self, site: &'static CallSite) -> Self {
        self.site = Site::Static(site);
        self
    }

    /// Names a retried method by its static site and the type of its
    /// `self` (`core::any::type_name::<Self>`), read when the name is first
    /// needed.
    #[doc(hidden)]
    #[inline(always)]
    #[must_use]
    pub fn method_site(mut self, site: &'static CallSite, self_type: fn() -> &'static str) -> Self {
        self.site = Site::Method(site, self_type);
        self
    }

    /// Retries a failure even when a retried function it called already gave
    /// up on it (`nested = retry`); by default such a failure ends the call
    /// with `StopReason::RetriedBelow`.
    ///
    /// ```
    /// use backoff_runtime::__private::{HookSet, Hooks};
    /// assert!(HookSet::<u8>::new().retry_nested().retries_nested());
    /// assert!(!HookSet::<u8>::new().retries_nested());
    /// ```
    #[inline(always)]
    #[must_use]
    pub fn retry_nested(mut self) -> Self {
        self.retries_nested = true;
        self
    }

    /// Calls `observer` once when the call succeeds, with the attempts it
    /// took and the time it took (never when it gives up).
    ///
    /// ```
    /// use backoff_runtime::__private::HookSet;
    /// let hooks = HookSet::<String>::new().on_success(|event| println!("done after {} attempts", event.attempts()));
    /// # let _ = hooks;
    /// ```
    #[inline(always)]
    pub fn on_success<F: Fn(&Success)>(
        self,
        observer: F,
    ) -> HookSet<E, If, After, OnRetry, OnGiveUp, OnSuccessHook<F>> {
        HookSet {
            retry_if: self.retry_if,
            retry_after: self.retry_after,
            on_retry: self.on_retry,
            on_give_up: self.on_give_up,
            on_success: Set {
                hook: observer,
                call: |f, event| f(event),
            },
            debug: self.debug,
            site: self.site,
            retries_nested: self.retries_nested,
            _error: PhantomData,
        }
    }
}

/// One hook slot: the default when [`Unset`], the user's hook when [`Set`].
///
/// ```
/// use backoff_runtime::__private::{Slot, Unset};
/// assert!(<Unset as Slot<&u8, bool>>::call_or(&Unset, &1, true));
/// ```
pub trait Slot<Args, Out> {
    /// Whether the user set this hook.
    const IS_SET: bool = true;
    /// Calls the hook, or returns the default.
    fn call_or(&self, args: Args, default: Out) -> Out;
}

impl<Args, Out> Slot<Args, Out> for Unset {
    const IS_SET: bool = false;

    #[inline(always)]
    fn call_or(&self, _args: Args, default: Out) -> Out {
        default
    }
}

impl<'a, E, F> Slot<&'a E, bool> for Set<F, fn(&F, &E) -> bool> {
    #[inline(always)]
    fn call_or(&self, error: &'a E, _default: bool) -> bool {
        (self.call)(&self.hook, error)
    }
}

impl<'a, E, F> Slot<&'a E, Option<Duration>> for Set<F, fn(&F, &E) -> Option<Duration>> {
    #[inline(always)]
    fn call_or(&self, error: &'a E, _default: Option<Duration>) -> Option<Duration> {
        (self.call)(&self.hook, error)
    }
}

impl<'a, 'b, E, F> Slot<(&'a E, &'b RetryEvent), ()> for Set<F, fn(&F, &E, &RetryEvent)> {
    #[inline(always)]
    fn call_or(&self, (error, event): (&'a E, &'b RetryEvent), _default: ()) {
        (self.call)(&self.hook, error, event);
    }
}

impl<'a, 'b, E, F> Slot<(&'a E, &'b GiveUp), ()> for Set<F, fn(&F, &E, &GiveUp)> {
    #[inline(always)]
    fn call_or(&self, (error, event): (&'a E, &'b GiveUp), _default: ()) {
        (self.call)(&self.hook, error, event);
    }
}

/// What a sync function's `before_retry` returns: nothing (a future would
/// never be awaited).
#[diagnostic::on_unimplemented(
    message = "`before_retry` of a sync function must return `()`, but it returns `{Self}`",
    label = "nothing would await or use this value",
    note = "an async action needs an `async fn`; in a sync function, run the action to completion inside the closure"
)]
pub trait SyncAction {}

impl SyncAction for () {}

impl<'a, F> Slot<&'a Success, ()> for Set<F, fn(&F, &Success)> {
    #[inline(always)]
    fn call_or(&self, event: &'a Success, _default: ()) {
        (self.call)(&self.hook, event);
    }
}

impl<E, If, After, OnRetry, OnGiveUp, OnSuccess> Hooks<E> for HookSet<E, If, After, OnRetry, OnGiveUp, OnSuccess>
where
    If: for<'a> Slot<&'a E, bool>,
    After: for<'a> Slot<&'a E, Option<Duration>>,
    OnRetry: for<'a, 'b> Slot<(&'a E, &'b RetryEvent), ()>,
    OnGiveUp: for<'a, 'b> Slot<(&'a E, &'b GiveUp), ()>,
    OnSuccess: for<'a> Slot<&'a Success, ()>,
{
    const OBSERVES_SUCCESS: bool = OnSuccess::IS_SET;

    #[inline(always)]
    fn should_retry(&self, error: &E) -> bool {
        self.retry_if.call_or(error, true)
    }

    #[inline(always)]
    fn on_success(&self, event: &Success) {
        self.on_success.call_or(event, ());
    }

    #[inline(always)]
    fn hint(&self, error: &E) -> Option<Duration> {
        self.retry_after.call_or(error, None)
    }

    #[inline(always)]
    fn on_retry(&self, error: &E, event: &RetryEvent) {
        self.on_retry.call_or((error, event), ());
    }

    #[inline(always)]
    fn on_give_up(&self, error: &E, event: &GiveUp) {
        self.on_give_up.call_or((error, event), ());
    }

    #[inline(always)]
    fn debug_fmt(&self) -> Option<DebugFmt<E>> {
        self.debug
    }

    #[inline(always)]
    fn site(&self) -> Site {
        self.site
    }

    #[inline(always)]
    fn observes(&self) -> bool {
        OnRetry::IS_SET || OnGiveUp::IS_SET || OnSuccess::IS_SET
    }

    #[inline(always)]
    fn retries_nested(&self) -> bool {
        self.retries_nested
    }
}

impl<E, T: Hooks<E>> Hooks<E> for &T {
    #[inline(always)]
    fn should_retry(&self, error: &E) -> bool {
        (**self).should_retry(error)
    }

    #[inline(always)]
    fn hint(&self, error: &E) -> Option<Duration> {
        (**self).hint(error)
    }

    #[inline(always)]
    fn on_retry(&self, error: &E, event: &RetryEvent) {
        (**self).on_retry(error, event);
    }

    #[inline(always)]
    fn on_give_up(&self, error: &E, event: &GiveUp) {
        (**self).on_give_up(error, event);
    }

    #[inline(always)]
    fn debug_fmt(&self) -> Option<DebugFmt<E>> {
        (**self).debug_fmt()
    }

    #[inline(always)]
    fn on_success(&self, event: &Success) {
        (**self).on_success(event);
    }

    const OBSERVES_SUCCESS: bool = T::OBSERVES_SUCCESS;

    #[inline(always)]
    fn site(&self) -> Site {
        (**self).site()
    }

    #[inline(always)]
    fn observes(&self) -> bool {
        (**self).observes()
    }

    #[inline(always)]
    fn retries_nested(&self) -> bool {
        (**self).retries_nested()
    }
}

/// How an error of type `E` is formatted with `{:?}`.
pub type DebugFmt<E> = fn(&E, &mut fmt::Formatter<'_>) -> fmt::Result;

/// A zero-sized token of an error type (see [`HookSet::error_type`]).
#[doc(hidden)]
pub struct ErrorType<E>(PhantomData<fn(&E)>);

impl<E> ErrorType<E> {
    /// The token.
    #[inline(always)]
    pub(crate) fn new() -> Self {
        ErrorType(PhantomData)
    }
}

impl<E> Debug for ErrorType<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ErrorType")
    }
}

/// Autoref-specialised `Debug` probe used by `#[retry]` expansions:
/// `(&&DebugProbe(hooks.error_type())).debug_fmt()` is `Some(<E as
/// Debug>::fmt)` when `E: Debug` and `None` otherwise, without an `E: Debug`
/// bound and without touching a value of `E`.
#[doc(hidden)]
#[derive(Debug)]
pub struct DebugProbe<E>(pub ErrorType<E>);

#[doc(hidden)]
pub trait ProbeDebug<E> {
    fn debug_fmt(&self) -> Option<DebugFmt<E>>;
}

impl<E: Debug> ProbeDebug<E> for &DebugProbe<E> {
    #[inline(always)]
    fn debug_fmt(&self) -> Option<DebugFmt<E>> {
        Some(<E as Debug>::fmt)
    }
}

#[doc(hidden)]
pub trait ProbeOpaque<E> {
    fn debug_fmt(&self) -> Option<DebugFmt<E>>;
}

impl<E> ProbeOpaque<E> for &&DebugProbe<E> {
    #[inline(always)]
    fn debug_fmt(&self) -> Option<DebugFmt<E>> {
        None
    }
}
