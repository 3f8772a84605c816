//! The user's decisions and observers around each attempt, in one hook set:
//! which errors to retry (`retry_if`), the server's hint (`retry_after`),
//! which values are still pending (`retry_if_ok`) and their hint
//! (`retry_after_ok`), and who wants to know (`on_retry`, `on_give_up`,
//! `on_success`). Apart from them, the call's identity: its name and
//! metrics site, its nested mode and how its failures are formatted.
//!
//! Built by the `#[retry]` expansion and the builder from an empty
//! [`HookSet`] typed by the result, so closures written without parameter
//! types infer theirs. Each builder method checks its closure's signature
//! once, where it is given; the stored hook is called through a function
//! pointer made there, so a hook of the wrong type is one compile error on
//! the user's token.
//!
//! What the loop decides on (and the observers see) is the error, or with
//! `retry_if_ok` the whole `Result`: the [`Judge`] of the `retry_if_ok`
//! slot says which.

use core::fmt::{self, Debug};
use core::marker::PhantomData;
use core::time::Duration;

use crate::observe::conventions::{Conventions, SemanticConventions};
use crate::observe::events::{GiveUp, RetryEvent, Success};
use crate::observe::site::{CallSite, Site};
use crate::observe::trace::ReportFn;

/// A hook that is not set: the default behaviour.
#[derive(Clone, Copy, Debug, Default)]
pub struct Unset;

/// A hook that is set: the user's closure and a function pointer that calls
/// it (made where the closure's signature was checked).
pub struct Set<F, C> {
    hook: F,
    call: C,
}

impl<F, C> Debug for Set<F, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Set")
    }
}

/// A set hook called through `call`, a function pointer made from a
/// closure where the hook's signature was checked.
#[inline(always)]
fn hook_of<F, X, O>(hook: F, call: fn(&F, &X) -> O) -> Set<F, fn(&F, &X) -> O> {
    Set { hook, call }
}

/// A set observer called through `call` (see [`hook_of`]).
#[inline(always)]
fn observer_of<F, X, Ev>(hook: F, call: fn(&F, &X, &Ev)) -> Set<F, fn(&F, &X, &Ev)> {
    Set { hook, call }
}

/// One hook slot: the default when [`Unset`], the user's hook when [`Set`].
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

impl<'a, X, F> Slot<&'a X, bool> for Set<F, fn(&F, &X) -> bool> {
    #[inline(always)]
    fn call_or(&self, x: &'a X, _default: bool) -> bool {
        (self.call)(&self.hook, x)
    }
}

impl<'a, X, F> Slot<&'a X, Option<Duration>> for Set<F, fn(&F, &X) -> Option<Duration>> {
    #[inline(always)]
    fn call_or(&self, x: &'a X, _default: Option<Duration>) -> Option<Duration> {
        (self.call)(&self.hook, x)
    }
}

impl<'a, F> Slot<&'a Success, ()> for Set<F, fn(&F, &Success)> {
    #[inline(always)]
    fn call_or(&self, event: &'a Success, _default: ()) {
        (self.call)(&self.hook, event);
    }
}

impl<'a, 'b, X, F> Slot<(&'a X, &'b RetryEvent), ()> for Set<F, fn(&F, &X, &RetryEvent)> {
    #[inline(always)]
    fn call_or(&self, (x, event): (&'a X, &'b RetryEvent), _default: ()) {
        (self.call)(&self.hook, x, event);
    }
}

impl<'a, 'b, X, F> Slot<(&'a X, &'b GiveUp), ()> for Set<F, fn(&F, &X, &GiveUp)> {
    #[inline(always)]
    fn call_or(&self, (x, event): (&'a X, &'b GiveUp), _default: ()) {
        (self.call)(&self.hook, x, event);
    }
}

/// How an attempt's result is judged: by its error alone ([`Unset`]
/// `retry_if_ok`), or as a whole, where a value may be pending (a set
/// `retry_if_ok`). The loop decides on, and the observers see,
/// [`Decided`](Judge::Decided): the error, or the whole result.
pub trait Judge<T, E> {
    /// What a failed (or pending) attempt hands the decision.
    type Decided;
    /// Whether values are judged too (a set `retry_if_ok`): without it an
    /// `Ok` is a success before any hook is built.
    const JUDGES_VALUES: bool;
    /// `Ok` with the result to return, or `Err` with what to decide on.
    fn judge(&self, result: Result<T, E>) -> Result<Result<T, E>, Self::Decided>;
    /// What was decided on, seen as a value (pending) or an error.
    fn view(decided: &Self::Decided) -> Result<&T, &E>;
    /// What was decided on, returned as the call's result.
    fn back(decided: Self::Decided) -> Result<T, E>;
}

impl<T, E> Judge<T, E> for Unset {
    type Decided = E;
    const JUDGES_VALUES: bool = false;

    #[inline(always)]
    fn judge(&self, result: Result<T, E>) -> Result<Result<T, E>, E> {
        match result {
            Ok(value) => Ok(Ok(value)),
            Err(error) => Err(error),
        }
    }

    #[inline(always)]
    fn view(error: &E) -> Result<&T, &E> {
        Err(error)
    }

    #[inline(always)]
    fn back(error: E) -> Result<T, E> {
        Err(error)
    }
}

impl<T, E, F> Judge<T, E> for Set<F, fn(&F, &T) -> bool> {
    type Decided = Result<T, E>;
    const JUDGES_VALUES: bool = true;

    #[inline(always)]
    fn judge(&self, result: Result<T, E>) -> Result<Result<T, E>, Result<T, E>> {
        match result {
            Ok(value) if !(self.call)(&self.hook, &value) => Ok(Ok(value)),
            other => Err(other),
        }
    }

    #[inline(always)]
    fn view(result: &Result<T, E>) -> Result<&T, &E> {
        result.as_ref()
    }

    #[inline(always)]
    fn back(result: Result<T, E>) -> Result<T, E> {
        result
    }
}

/// The call's identity, apart from its hooks: its site (name and metric
/// keys), whether failures a retried function below gave up on are retried
/// anyway (`nested = retry`), and how a failure is formatted.
pub(crate) struct Identity<D> {
    site: Site,
    retries_nested: bool,
    /// Whether a value `retry_if_ok` retries is a failure (a retried HTTP
    /// response, which asks the limit like an error), not a pending one.
    values_fail: bool,
    /// How the events see what failed (its `Debug` form, OpenTelemetry's
    /// attributes), as the expansion's probes found for its type.
    report: Option<ReportFn<D>>,
}

impl<D> Clone for Identity<D> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<D> Copy for Identity<D> {}

impl<D> Identity<D> {
    /// The identity of an unnamed operation (`"retry"`).
    const fn new() -> Self {
        Identity {
            site: Site::Named("retry"),
            retries_nested: false,
            values_fail: false,
            report: None,
        }
    }

    /// The same identity for another decided type (the formatter, typed by
    /// the old one, is dropped).
    fn retyped<D2>(self) -> Identity<D2> {
        Identity {
            site: self.site,
            retries_nested: self.retries_nested,
            values_fail: self.values_fail,
            report: None,
        }
    }
}

/// The hooks of one retried operation returning `Result<T, E>`. Every slot
/// starts `Unset`; each builder method fills one.
///
/// ```
/// use backoff_runtime::__private::{HookSet, Hooks};
///
/// let hooks = HookSet::<u8, u16>::new().retry_if(|status| *status >= 500);
/// assert!(hooks.should_retry(&503));
/// assert!(!hooks.should_retry(&404));
/// ```
pub struct HookSet<
    T,
    E,
    If = Unset,
    After = Unset,
    IfOk: Judge<T, E> = Unset,
    AfterOk = Unset,
    OnRetry = Unset,
    OnGiveUp = Unset,
    OnSuccess = Unset,
> {
    slots: (If, After, IfOk, AfterOk, OnRetry, OnGiveUp, OnSuccess),
    identity: Identity<IfOk::Decided>,
    _result: PhantomData<fn(&T, &E)>,
}

impl<T, E, If, After, IfOk: Judge<T, E>, AfterOk, OnRetry, OnGiveUp, OnSuccess> Debug
    for HookSet<T, E, If, After, IfOk, AfterOk, OnRetry, OnGiveUp, OnSuccess>
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HookSet")
            .field("name", &self.identity.site.name())
            .finish_non_exhaustive()
    }
}

impl<T, E> HookSet<T, E> {
    /// Hooks that retry every error, no value, and observe nothing.
    #[inline(always)]
    #[must_use]
    pub const fn new() -> Self {
        HookSet {
            slots: (Unset, Unset, Unset, Unset, Unset, Unset, Unset),
            identity: Identity::new(),
            _result: PhantomData,
        }
    }
}

impl<T, E, If, After, IfOk: Judge<T, E>, AfterOk, OnRetry, OnGiveUp, OnSuccess>
    HookSet<T, E, If, After, IfOk, AfterOk, OnRetry, OnGiveUp, OnSuccess>
{
    /// A hook set of these slots, in the order of the type parameters
    /// (`retry_if`, `retry_after`, `retry_if_ok`, `retry_after_ok`,
    /// `on_retry`, `on_give_up`, `on_success`): a new slot is one more
    /// element.
    #[inline(always)]
    const fn with_slots(
        slots: (If, After, IfOk, AfterOk, OnRetry, OnGiveUp, OnSuccess),
        identity: Identity<IfOk::Decided>,
    ) -> Self {
        HookSet {
            slots,
            identity,
            _result: PhantomData,
        }
    }
}

impl<T, E> Default for HookSet<T, E> {
    fn default() -> Self {
        Self::new()
    }
}

/// The decided type of a hook set whose `retry_if_ok` slot is `IfOk`.
type DecidedBy<IfOk, T, E> = <IfOk as Judge<T, E>>::Decided;

#[allow(clippy::type_complexity)]
impl<T, E, If, After, IfOk: Judge<T, E>, AfterOk, OnRetry, OnGiveUp, OnSuccess>
    HookSet<T, E, If, After, IfOk, AfterOk, OnRetry, OnGiveUp, OnSuccess>
{
    /// Retries only the errors for which `predicate` returns `true`.
    #[inline(always)]
    pub fn retry_if<F: Fn(&E) -> bool>(
        self,
        predicate: F,
    ) -> HookSet<T, E, Set<F, fn(&F, &E) -> bool>, After, IfOk, AfterOk, OnRetry, OnGiveUp, OnSuccess> {
        let s = self.slots;
        HookSet::with_slots(
            (hook_of(predicate, |f, e| f(e)), s.1, s.2, s.3, s.4, s.5, s.6),
            self.identity,
        )
    }

    /// The server's hint for the wait after an error (`Retry-After`).
    #[inline(always)]
    pub fn retry_after<F: Fn(&E) -> Option<Duration>>(
        self,
        hint: F,
    ) -> HookSet<T, E, If, Set<F, fn(&F, &E) -> Option<Duration>>, IfOk, AfterOk, OnRetry, OnGiveUp, OnSuccess> {
        let s = self.slots;
        HookSet::with_slots(
            (s.0, hook_of(hint, |f, e| f(e)), s.2, s.3, s.4, s.5, s.6),
            self.identity,
        )
    }

    /// The server's hint for the wait after a pending value.
    #[inline(always)]
    pub fn retry_after_ok<F: Fn(&T) -> Option<Duration>>(
        self,
        hint: F,
    ) -> HookSet<T, E, If, After, IfOk, Set<F, fn(&F, &T) -> Option<Duration>>, OnRetry, OnGiveUp, OnSuccess> {
        let s = self.slots;
        HookSet::with_slots(
            (s.0, s.1, s.2, hook_of(hint, |f, v| f(v)), s.4, s.5, s.6),
            self.identity,
        )
    }

    /// Calls `observer` before each wait, with what failed: the error, or
    /// with `retry_if_ok` the whole result.
    #[inline(always)]
    pub fn on_retry<F: Fn(&DecidedBy<IfOk, T, E>, &RetryEvent)>(
        self,
        observer: F,
    ) -> HookSet<T, E, If, After, IfOk, AfterOk, Set<F, fn(&F, &IfOk::Decided, &RetryEvent)>, OnGiveUp, OnSuccess> {
        let s = self.slots;
        HookSet::with_slots(
            (s.0, s.1, s.2, s.3, observer_of(observer, |f, d, e| f(d, e)), s.5, s.6),
            self.identity,
        )
    }

    /// Calls `observer` once when a stop rule ends the call, with the final
    /// error (or with `retry_if_ok` the final result).
    #[inline(always)]
    pub fn on_give_up<F: Fn(&DecidedBy<IfOk, T, E>, &GiveUp)>(
        self,
        observer: F,
    ) -> HookSet<T, E, If, After, IfOk, AfterOk, OnRetry, Set<F, fn(&F, &IfOk::Decided, &GiveUp)>, OnSuccess> {
        let s = self.slots;
        HookSet::with_slots(
            (s.0, s.1, s.2, s.3, s.4, observer_of(observer, |f, d, e| f(d, e)), s.6),
            self.identity,
        )
    }

    /// Calls `observer` once when the call succeeds.
    #[inline(always)]
    pub fn on_success<F: Fn(&Success)>(
        self,
        observer: F,
    ) -> HookSet<T, E, If, After, IfOk, AfterOk, OnRetry, OnGiveUp, Set<F, fn(&F, &Success)>> {
        let s = self.slots;
        HookSet::with_slots(
            (s.0, s.1, s.2, s.3, s.4, s.5, hook_of(observer, |f, event| f(event))),
            self.identity,
        )
    }

    /// Names the retried operation in events and metrics.
    #[inline(always)]
    #[must_use]
    pub fn name(mut self, name: &'static str) -> Self {
        self.identity.site = Site::Named(name);
        self
    }

    /// Names the retried function by its static site (the expansion's).
    #[inline(always)]
    #[must_use]
    pub fn site(mut self, site: &'static CallSite) -> Self {
        self.identity.site = Site::Static(site);
        self
    }

    /// Names a retried method by its static site and the type of its
    /// `self`, read when the name is first needed.
    #[inline(always)]
    #[must_use]
    pub fn method_site(mut self, site: &'static CallSite, self_type: fn() -> &'static str) -> Self {
        self.identity.site = Site::Method(site, self_type);
        self
    }

    /// Retries failures a retried function below gave up on (`nested =
    /// retry`).
    #[inline(always)]
    #[must_use]
    pub fn retry_nested(mut self) -> Self {
        self.identity.retries_nested = true;
        self
    }

    /// Treats the values `retry_if_ok` retries as failures (they ask the
    /// limit, like errors), not as pending ones: what the tower layer's
    /// retried responses are.
    #[cfg(feature = "tower")]
    #[inline(always)]
    #[must_use]
    pub(crate) fn values_are_failures(mut self) -> Self {
        self.identity.values_fail = true;
        self
    }

    /// How the events see what failed: the function [`reporter`] made from
    /// the expansion's probes.
    #[inline(always)]
    #[must_use]
    pub fn report_with(mut self, report: ReportFn<IfOk::Decided>) -> Self {
        self.identity.report = Some(report);
        self
    }

    /// A zero-sized token of the decided type, for the expansion's `Debug`
    /// probe.
    #[inline(always)]
    pub fn error_type(&self) -> ErrorType<IfOk::Decided> {
        ErrorType(PhantomData)
    }
}

#[allow(clippy::type_complexity)]
impl<T, E, If, After, AfterOk, OnSuccess> HookSet<T, E, If, After, Unset, AfterOk, Unset, Unset, OnSuccess> {
    /// Treats the values for which `predicate` returns `true` as pending:
    /// wait and run the operation again (polling). The observers then see
    /// the whole `Result`, so this comes before `on_retry` and `on_give_up`.
    #[inline(always)]
    pub fn retry_if_ok<F: Fn(&T) -> bool>(
        self,
        predicate: F,
    ) -> HookSet<T, E, If, After, Set<F, fn(&F, &T) -> bool>, AfterOk, Unset, Unset, OnSuccess> {
        let s = self.slots;
        HookSet::with_slots(
            (s.0, s.1, hook_of(predicate, |f, v| f(v)), s.3, s.4, s.5, s.6),
            self.identity.retyped(),
        )
    }
}

/// The decided type of a hook set, without the bounds its hooks need.
pub trait DecidedOf {
    /// The error, or with `retry_if_ok` the whole result.
    type Decided;
}

impl<T, E, If, After, IfOk: Judge<T, E>, AfterOk, OnRetry, OnGiveUp, OnSuccess> DecidedOf
    for HookSet<T, E, If, After, IfOk, AfterOk, OnRetry, OnGiveUp, OnSuccess>
{
    type Decided = IfOk::Decided;
}

/// What the driver asks of, and reports to, a hook set.
pub trait Hooks: DecidedOf {
    /// The success type.
    type Ok;
    /// The error type.
    type Err;
    /// Whether `on_success` is set: a first-attempt success reports only
    /// then (or when metrics record it).
    const OBSERVES_SUCCESS: bool;
    /// Whether an `Ok` may still be pending (`retry_if_ok`): otherwise it is
    /// a success before the hooks are built.
    const JUDGES_VALUES: bool;
    /// `Ok` with the result to return, or `Err` with what to decide on.
    fn judge(&self, result: Result<Self::Ok, Self::Err>) -> Result<Result<Self::Ok, Self::Err>, Self::Decided>;
    /// What was decided on, returned as the call's result.
    fn back(decided: Self::Decided) -> Result<Self::Ok, Self::Err>;
    /// Whether `decided` is worth retrying: a pending value always, an
    /// error when `retry_if` says so.
    fn should_retry(&self, decided: &Self::Decided) -> bool;
    /// The wait the server asked for, if any.
    fn hint(&self, decided: &Self::Decided) -> Option<Duration>;
    /// Whether `decided` is a pending value (it asks nothing of a limit).
    fn is_pending(&self, decided: &Self::Decided) -> bool;
    /// Called before each wait.
    fn on_retry(&self, decided: &Self::Decided, event: &RetryEvent);
    /// Called once when a stop rule ends the call.
    fn on_give_up(&self, decided: &Self::Decided, event: &GiveUp);
    /// Called once when the call succeeds.
    fn on_success(&self, event: &Success);
    /// Whether `on_retry`, `on_give_up` or `on_success` is set.
    fn observes(&self) -> bool;
    /// How the events see what failed.
    fn report_fn(&self) -> Option<ReportFn<Self::Decided>>;
    /// The operation's site.
    fn site(&self) -> Site;
    /// The operation's name, for events.
    fn function_name(&self) -> &'static str {
        self.site().name()
    }
    /// Whether failures a retried function below gave up on are retried.
    fn retries_nested(&self) -> bool;
}

impl<T, E, D, If, After, IfOk, AfterOk, OnRetry, OnGiveUp, OnSuccess> Hooks
    for HookSet<T, E, If, After, IfOk, AfterOk, OnRetry, OnGiveUp, OnSuccess>
where
    IfOk: Judge<T, E, Decided = D>,
    If: for<'a> Slot<&'a E, bool>,
    After: for<'a> Slot<&'a E, Option<Duration>>,
    AfterOk: for<'a> Slot<&'a T, Option<Duration>>,
    OnRetry: for<'a, 'b> Slot<(&'a D, &'b RetryEvent), ()>,
    OnGiveUp: for<'a, 'b> Slot<(&'a D, &'b GiveUp), ()>,
    OnSuccess: for<'a> Slot<&'a Success, ()>,
{
    type Ok = T;
    type Err = E;
    const OBSERVES_SUCCESS: bool = OnSuccess::IS_SET;
    const JUDGES_VALUES: bool = IfOk::JUDGES_VALUES;

    #[inline(always)]
    fn judge(&self, result: Result<T, E>) -> Result<Result<T, E>, D> {
        self.slots.2.judge(result)
    }

    #[inline(always)]
    fn back(decided: D) -> Result<T, E> {
        IfOk::back(decided)
    }

    #[inline(always)]
    fn should_retry(&self, decided: &D) -> bool {
        match IfOk::view(decided) {
            Ok(_) => true,
            Err(error) => self.slots.0.call_or(error, true),
        }
    }

    #[inline(always)]
    fn hint(&self, decided: &D) -> Option<Duration> {
        match IfOk::view(decided) {
            Ok(value) => self.slots.3.call_or(value, None),
            Err(error) => self.slots.1.call_or(error, None),
        }
    }

    #[inline(always)]
    fn is_pending(&self, decided: &D) -> bool {
        IfOk::view(decided).is_ok() && !self.identity.values_fail
    }

    #[inline(always)]
    fn on_retry(&self, decided: &D, event: &RetryEvent) {
        self.slots.4.call_or((decided, event), ());
    }

    #[inline(always)]
    fn on_give_up(&self, decided: &D, event: &GiveUp) {
        self.slots.5.call_or((decided, event), ());
    }

    #[inline(always)]
    fn on_success(&self, event: &Success) {
        self.slots.6.call_or(event, ());
    }

    #[inline(always)]
    fn observes(&self) -> bool {
        OnRetry::IS_SET || OnGiveUp::IS_SET || OnSuccess::IS_SET
    }

    #[inline(always)]
    fn report_fn(&self) -> Option<ReportFn<D>> {
        self.identity.report
    }

    #[inline(always)]
    fn site(&self) -> Site {
        self.identity.site
    }

    #[inline(always)]
    fn retries_nested(&self) -> bool {
        self.identity.retries_nested
    }
}

impl<H: DecidedOf> DecidedOf for &H {
    type Decided = H::Decided;
}

impl<H: Hooks> Hooks for &H {
    type Ok = H::Ok;
    type Err = H::Err;
    const OBSERVES_SUCCESS: bool = H::OBSERVES_SUCCESS;
    const JUDGES_VALUES: bool = H::JUDGES_VALUES;

    #[inline(always)]
    fn judge(&self, result: Result<H::Ok, H::Err>) -> Result<Result<H::Ok, H::Err>, H::Decided> {
        (**self).judge(result)
    }

    #[inline(always)]
    fn back(decided: H::Decided) -> Result<H::Ok, H::Err> {
        H::back(decided)
    }

    #[inline(always)]
    fn should_retry(&self, decided: &H::Decided) -> bool {
        (**self).should_retry(decided)
    }

    #[inline(always)]
    fn hint(&self, decided: &H::Decided) -> Option<Duration> {
        (**self).hint(decided)
    }

    #[inline(always)]
    fn is_pending(&self, decided: &H::Decided) -> bool {
        (**self).is_pending(decided)
    }

    #[inline(always)]
    fn on_retry(&self, decided: &H::Decided, event: &RetryEvent) {
        (**self).on_retry(decided, event);
    }

    #[inline(always)]
    fn on_give_up(&self, decided: &H::Decided, event: &GiveUp) {
        (**self).on_give_up(decided, event);
    }

    #[inline(always)]
    fn on_success(&self, event: &Success) {
        (**self).on_success(event);
    }

    #[inline(always)]
    fn observes(&self) -> bool {
        (**self).observes()
    }

    #[inline(always)]
    fn report_fn(&self) -> Option<ReportFn<H::Decided>> {
        (**self).report_fn()
    }

    #[inline(always)]
    fn site(&self) -> Site {
        (**self).site()
    }

    #[inline(always)]
    fn retries_nested(&self) -> bool {
        (**self).retries_nested()
    }
}

/// The hooks as the decision asks them, behind a reference: the decision
/// (`run/decide.rs`) is compiled once per decided type, not once per
/// retried function, and only the happy path stays generic.
pub(crate) trait DynHooks<D> {
    /// See [`Hooks::should_retry`].
    fn should_retry(&self, decided: &D) -> bool;
    /// See [`Hooks::hint`].
    fn hint(&self, decided: &D) -> Option<Duration>;
    /// See [`Hooks::is_pending`].
    fn is_pending(&self, decided: &D) -> bool;
    /// See [`Hooks::on_retry`].
    fn on_retry(&self, decided: &D, event: &RetryEvent);
    /// See [`Hooks::on_give_up`].
    fn on_give_up(&self, decided: &D, event: &GiveUp);
    /// See [`Hooks::on_success`].
    fn on_success(&self, event: &Success);
    /// See [`Hooks::observes`].
    fn observes(&self) -> bool;
    /// Whether `on_success` is set.
    fn observes_success(&self) -> bool;
    /// See [`Hooks::report_fn`].
    fn report_fn(&self) -> Option<ReportFn<D>>;
    /// See [`Hooks::site`].
    fn site(&self) -> Site;
    /// See [`Hooks::retries_nested`].
    fn retries_nested(&self) -> bool;
}

impl<H: Hooks> DynHooks<H::Decided> for H {
    fn should_retry(&self, decided: &H::Decided) -> bool {
        Hooks::should_retry(self, decided)
    }

    fn hint(&self, decided: &H::Decided) -> Option<Duration> {
        Hooks::hint(self, decided)
    }

    fn is_pending(&self, decided: &H::Decided) -> bool {
        Hooks::is_pending(self, decided)
    }

    fn on_retry(&self, decided: &H::Decided, event: &RetryEvent) {
        Hooks::on_retry(self, decided, event);
    }

    fn on_give_up(&self, decided: &H::Decided, event: &GiveUp) {
        Hooks::on_give_up(self, decided, event);
    }

    fn on_success(&self, event: &Success) {
        Hooks::on_success(self, event);
    }

    fn observes(&self) -> bool {
        Hooks::observes(self)
    }

    fn observes_success(&self) -> bool {
        H::OBSERVES_SUCCESS
    }

    fn report_fn(&self) -> Option<ReportFn<H::Decided>> {
        Hooks::report_fn(self)
    }

    fn site(&self) -> Site {
        Hooks::site(self)
    }

    fn retries_nested(&self) -> bool {
        Hooks::retries_nested(self)
    }
}

/// A zero-sized token of a type (see [`HookSet::error_type`]).
pub struct ErrorType<D>(PhantomData<fn(&D)>);

impl<D> Debug for ErrorType<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ErrorType")
    }
}

/// Autoref-specialised `Debug` probe used by `#[retry]` expansions:
/// `(&&DebugProbe(hooks.error_type())).debug_choice()` is `IsDebug` when
/// `D: Debug` and `NotDebug` otherwise, without a `D: Debug` bound.
#[derive(Debug)]
pub struct DebugProbe<D>(pub ErrorType<D>);

/// The probe's answer when the type is `Debug`.
pub trait ProbeDebug<D> {
    /// `IsDebug`.
    fn debug_choice(&self) -> IsDebug<D>;
}

impl<D: Debug> ProbeDebug<D> for &DebugProbe<D> {
    #[inline(always)]
    fn debug_choice(&self) -> IsDebug<D> {
        IsDebug(PhantomData)
    }
}

/// The probe's answer otherwise.
pub trait ProbeOpaque<D> {
    /// `NotDebug`.
    fn debug_choice(&self) -> NotDebug<D>;
}

impl<D> ProbeOpaque<D> for &&DebugProbe<D> {
    #[inline(always)]
    fn debug_choice(&self) -> NotDebug<D> {
        NotDebug(PhantomData)
    }
}

/// The conventions probe, as `DebugProbe`:
/// `(&&ConventionsProbe(hooks.error_type())).conventions_choice()` is
/// `HasConventions` when `D: SemanticConventions`, `NoConventions`
/// otherwise.
#[derive(Debug)]
pub struct ConventionsProbe<D>(pub ErrorType<D>);

/// The probe's answer when the type has attributes.
pub trait ProbeConventions<D> {
    /// `HasConventions`.
    fn conventions_choice(&self) -> HasConventions<D>;
}

impl<D: SemanticConventions> ProbeConventions<D> for &ConventionsProbe<D> {
    #[inline(always)]
    fn conventions_choice(&self) -> HasConventions<D> {
        HasConventions(PhantomData)
    }
}

/// The probe's answer otherwise.
pub trait ProbeNoConventions<D> {
    /// `NoConventions`.
    fn conventions_choice(&self) -> NoConventions<D>;
}

impl<D> ProbeNoConventions<D> for &&ConventionsProbe<D> {
    #[inline(always)]
    fn conventions_choice(&self) -> NoConventions<D> {
        NoConventions(PhantomData)
    }
}

/// The type is `Debug`: the events show it.
#[derive(Debug)]
pub struct IsDebug<D>(PhantomData<fn(&D)>);
/// The type is not `Debug`: the events leave it out.
#[derive(Debug)]
pub struct NotDebug<D>(PhantomData<fn(&D)>);
/// The type has OpenTelemetry's attributes.
#[derive(Debug)]
pub struct HasConventions<D>(PhantomData<fn(&D)>);
/// The type has none (or they are not asked for).
#[derive(Debug)]
pub struct NoConventions<D>(PhantomData<fn(&D)>);

impl<D> NoConventions<D> {
    /// The answer when the conventions are not probed.
    #[must_use]
    pub const fn new() -> Self {
        NoConventions(PhantomData)
    }
}

impl<D> Default for NoConventions<D> {
    fn default() -> Self {
        Self::new()
    }
}

/// How a type is shown: its `Debug` form or nothing.
pub trait DebugChoice<D> {
    /// `error` as the events show it.
    fn view(error: &D) -> Option<&dyn Debug>;
}

impl<D: Debug> DebugChoice<D> for IsDebug<D> {
    #[inline(always)]
    fn view(error: &D) -> Option<&dyn Debug> {
        Some(error)
    }
}

impl<D> DebugChoice<D> for NotDebug<D> {
    #[inline(always)]
    fn view(_: &D) -> Option<&dyn Debug> {
        None
    }
}

/// Which attributes a type has.
pub trait ConventionsChoice<D> {
    /// `error`'s attributes.
    fn of(error: &D) -> Conventions;
}

impl<D: SemanticConventions> ConventionsChoice<D> for HasConventions<D> {
    #[inline(always)]
    fn of(error: &D) -> Conventions {
        error.conventions()
    }
}

impl<D> ConventionsChoice<D> for NoConventions<D> {
    #[inline(always)]
    fn of(_: &D) -> Conventions {
        Conventions::default()
    }
}

/// The one function the events call to see what failed, from the two
/// probes' answers.
///
/// ```
/// use backoff_runtime::__private::{DebugProbe, ProbeDebug as _, ProbeOpaque as _, NoConventions, HookSet, reporter};
/// let hooks = HookSet::<u32, String>::new();
/// let debug = (&&DebugProbe(hooks.error_type())).debug_choice();
/// let _hooks = hooks.report_with(reporter(debug, NoConventions::new()));
/// ```
#[inline(always)]
pub fn reporter<D, A: DebugChoice<D>, B: ConventionsChoice<D>>(_: A, _: B) -> ReportFn<D> {
    report::<D, A, B>
}

fn report<D, A: DebugChoice<D>, B: ConventionsChoice<D>>(
    error: &D,
    sink: &mut dyn FnMut(Option<&dyn Debug>, Conventions),
) {
    sink(A::view(error), B::of(error));
}

#[cfg(test)]
mod tests {
    use super::{HookSet, Hooks};
    use std::time::Duration;

    /// One set judges values and errors: a pending value is retried with
    /// its own hint, an error by `retry_if` with its own.
    #[test]
    fn one_set_judges_values_and_errors() {
        let hooks = HookSet::<&str, u16>::new()
            .retry_if(|status| *status >= 500)
            .retry_after(|_| Some(Duration::from_secs(1)))
            .retry_if_ok(|state| *state == "running")
            .retry_after_ok(|_| Some(Duration::from_secs(2)));
        assert!(hooks.judge(Ok("done")).is_ok());
        assert!(hooks.judge(Ok("running")).is_err());
        assert_eq!(hooks.hint(&Ok("running")), Some(Duration::from_secs(2)));
        assert_eq!(hooks.hint(&Err(503)), Some(Duration::from_secs(1)));
        assert!(hooks.should_retry(&Ok("running")));
        assert!(!hooks.should_retry(&Err(404)));
        assert!(hooks.is_pending(&Ok("running")) && !hooks.is_pending(&Err(503)));
    }

    /// Without `retry_if_ok` the decision sees the error alone.
    #[test]
    fn without_retry_if_ok_errors_are_decided() {
        let hooks = HookSet::<u8, u16>::new().name("fetch");
        assert_eq!(hooks.judge(Err(503)).err(), Some(503));
        assert!(!hooks.is_pending(&503));
        assert_eq!(hooks.function_name(), "fetch");
        assert_eq!(format!("{hooks:?}"), "HookSet { name: \"fetch\", .. }");
    }
}
