//! The user's hooks of one call, as data.
//!
//! One [`Hooks`] struct of optional references to them, typed by the call's
//! result, with the call's identity beside them (its name and metrics site, its
//! nested mode and how its failures are formatted).
//!
//! The `#[retry]` expansion lends it the function's hooks where a failed
//! attempt is decided (a temporary of that statement, never held across an
//! `.await`); the builder owns its closures and lends them the same way.
//! The decision reads it through the references: it is compiled once per
//! result type, not once per retried function.
//!
//! What the decision and the observers see of an attempt that did not
//! succeed is its [`Outcome`]: the error, or with `retry_if_ok` the whole
//! `Result` (a value may be pending).

use core::fmt::{self, Debug};
use core::time::Duration;

use crate::limits::admission_limit::AttemptEnd;
use crate::observe::events::{GiveUp, RetryEvent, Success};
use crate::observe::site::Site;
use crate::observe::trace::ReportFn;
use crate::run::outcome::Outcome;
use crate::run::pushback::{Pushback, PushbackOf};
use crate::time::clock::Clock;

/// A hook that judges an error or a value (`retry_if`, `retry_if_ok`).
pub(crate) type Predicate<'h, X> = &'h dyn Fn(&X) -> bool;
/// A hook that reads the server's suggested wait (`retry_after`,
/// `retry_after_ok`).
pub(crate) type Hint<'h, X> = &'h dyn Fn(&X) -> Option<Duration>;
/// A hook that observes what failed and an event (`on_retry`,
/// `on_give_up`).
pub(crate) type Observer<'h, O, Ev> = &'h dyn Fn(&O, &Ev);

/// The hooks of one retried call returning `Result<T, E>`, each an optional
/// reference to the user's closure or function, and the call's identity.
/// `O` is the `Outcome` the observers see: `E`, or after
/// [`retry_if_ok`](Hooks::retry_if_ok) the whole result. A hook that is not
/// set keeps the default (every error is retried, no hint, nothing
/// observed).
///
/// ```
/// use backoff_runtime::__private::Hooks;
///
/// let is_transient = |status: &u16| *status >= 500;
/// let hooks = Hooks::<u8, u16>::new().retry_if(&is_transient).name("fetch");
/// assert!(hooks.should_retry(&503));
/// assert!(!hooks.should_retry(&404));
/// ```
pub struct Hooks<'h, T, E, O = E> {
    retry_if: Option<Predicate<'h, E>>,
    retry_after: Option<Hint<'h, E>>,
    retry_if_ok: Option<Predicate<'h, T>>,
    retry_after_ok: Option<Hint<'h, T>>,
    pending_error: Option<&'h dyn Fn(T) -> E>,
    /// The server's pushback on an error (the tower layers' classification).
    pushback: Option<PushbackOf<'h, E>>,
    slow_down_if: Option<Predicate<'h, E>>,
    on_retry: Option<Observer<'h, O, RetryEvent>>,
    on_give_up: Option<Observer<'h, O, GiveUp>>,
    on_success: Option<&'h dyn Fn(&Success)>,
    site: Site,
    retries_nested: bool,
    /// Whether a value `retry_if_ok` retries is a failure (a retried HTTP
    /// response, which asks the limit like an error), not a pending one.
    values_fail: bool,
    /// How the events see what failed (its `Debug` form, OpenTelemetry's
    /// attributes), as the expansion's probes found for its type.
    report: Option<ReportFn<O>>,
}

impl<T, E, O> Debug for Hooks<'_, T, E, O> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Hooks")
            .field("name", &self.site.name())
            .finish_non_exhaustive()
    }
}

impl<'h, T, E> Hooks<'h, T, E> {
    /// No hooks: every error is retried, no value, nothing is observed; the
    /// operation is named `"retry"`.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[must_use]
    pub const fn new() -> Self {
        Hooks {
            retry_if: None,
            retry_after: None,
            retry_if_ok: None,
            retry_after_ok: None,
            pending_error: None,
            pushback: None,
            slow_down_if: None,
            on_retry: None,
            on_give_up: None,
            on_success: None,
            site: Site::Named("retry"),
            retries_nested: false,
            values_fail: false,
            report: None,
        }
    }

    /// [`new`](Hooks::new) at `site`, typed by a failed attempt's error
    /// (the expansion's: closures written without parameter types infer
    /// them). One call where `new().at(site)` is two: each call in the
    /// expansion costs rustc work per function.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[must_use]
    pub const fn for_error(_error: &E, site: &Site) -> Self {
        let mut hooks = Self::new();
        hooks.site = *site;
        hooks
    }

    /// [`new`](Hooks::new) at `site`, typed by an attempt's result.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[must_use]
    pub const fn for_result(_result: &Result<T, E>, site: &Site) -> Self {
        let mut hooks = Self::new();
        hooks.site = *site;
        hooks
    }

    /// Treats the values for which `retry_if_ok` returns `true` as pending:
    /// wait and run the operation again (polling). The observers then see
    /// the whole `Result`, so this comes before `on_retry` and
    /// `on_give_up`.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[must_use]
    pub fn retry_if_ok(self, retry_if_ok: &'h dyn Fn(&T) -> bool) -> Hooks<'h, T, E, Result<T, E>> {
        Hooks {
            retry_if: self.retry_if,
            retry_after: self.retry_after,
            retry_if_ok: Some(retry_if_ok),
            retry_after_ok: self.retry_after_ok,
            pending_error: self.pending_error,
            pushback: self.pushback,
            slow_down_if: self.slow_down_if,
            on_retry: None,
            on_give_up: None,
            on_success: self.on_success,
            site: self.site,
            retries_nested: self.retries_nested,
            values_fail: self.values_fail,
            report: None,
        }
    }
}

impl<T, E> Default for Hooks<'_, T, E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<'h, T, E, O> Hooks<'h, T, E, O> {
    /// Retries only the errors for which `retry_if` returns `true`.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[must_use]
    pub fn retry_if(mut self, retry_if: &'h dyn Fn(&E) -> bool) -> Self {
        self.retry_if = Some(retry_if);
        self
    }

    /// The server's hint for the wait after an error (`Retry-After`).
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[must_use]
    pub fn retry_after(mut self, retry_after: &'h dyn Fn(&E) -> Option<Duration>) -> Self {
        self.retry_after = Some(retry_after);
        self
    }

    /// The server's hint for the wait after a pending value.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[must_use]
    pub fn retry_after_ok(mut self, retry_after_ok: &'h dyn Fn(&T) -> Option<Duration>) -> Self {
        self.retry_after_ok = Some(retry_after_ok);
        self
    }

    /// The error a pending value becomes when a stop rule ends the call
    /// (without it, the value is returned as it is).
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[must_use]
    pub fn pending_error(mut self, pending_error: &'h dyn Fn(T) -> E) -> Self {
        self.pending_error = Some(pending_error);
        self
    }

    /// Which errors mean "slow down" to the limit named in `admission =
    /// ...` (without it, every error `retry_if` retries).
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[must_use]
    pub fn slow_down_if(mut self, slow_down_if: &'h dyn Fn(&E) -> bool) -> Self {
        self.slow_down_if = Some(slow_down_if);
        self
    }

    /// How an attempt ended, on `clock`, as these hooks judge it (`judged`:
    /// the value it returned, or the outcome to decide on): what an
    /// admission limiter hears. The server's hint is read only from an
    /// outcome decided on.
    #[inline]
    pub fn attempt_end(&self, clock: Clock, judged: Result<&T, &O>) -> AttemptEnd<'static>
    where
        O: Outcome<T, E>,
    {
        match judged {
            Ok(_) => AttemptEnd::on_clock(clock, false, None),
            Err(outcome) => self.failed_attempt_end(clock, outcome),
        }
    }

    /// [`attempt_end`](Self::attempt_end) of an attempt whose outcome is
    /// decided on: an error, or a value retried (a 429 response, a pending
    /// value). Its hint is the server's pushback, else what `retry_after`
    /// (or `retry_after_ok`) reads.
    #[cold]
    #[inline(never)]
    fn failed_attempt_end(&self, clock: Clock, outcome: &O) -> AttemptEnd<'static>
    where
        O: Outcome<T, E>,
    {
        let hint = match self.pushback_of(outcome) {
            Some(Pushback::After(wait)) => Some(wait),
            _ => self.hint(outcome),
        };
        AttemptEnd::on_clock(clock, self.slows_down(outcome), hint)
    }

    /// Whether `outcome` tells the admission limit to slow down: an error
    /// that `retry_if` retries and `slow_down_if` (when set) flags; never a
    /// pending value.
    pub fn slows_down(&self, outcome: &O) -> bool
    where
        O: Outcome<T, E>,
    {
        match outcome.view() {
            Ok(_) => self.values_fail,
            Err(error) => {
                self.retry_if.is_none_or(|retry_if| retry_if(error))
                    && self.slow_down_if.is_none_or(|slow_down_if| slow_down_if(error))
            }
        }
    }

    /// The call's result when a stop rule ends it on `outcome`: the error,
    /// or a pending value as it is, unless `pending_error` makes it an
    /// error. (A value only reaches a stop rule while pending.)
    pub(crate) fn given_up(&self, outcome: O) -> Result<T, E>
    where
        O: Outcome<T, E>,
    {
        match (outcome.into_result(), self.pending_error) {
            (Ok(value), Some(into_error)) => Err(into_error(value)),
            (result, _) => result,
        }
    }

    /// Called before each wait, with what failed.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[must_use]
    pub fn on_retry(mut self, on_retry: &'h dyn Fn(&O, &RetryEvent)) -> Self {
        self.on_retry = Some(on_retry);
        self
    }

    /// Called once when a stop rule ends the call, with what failed last.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[must_use]
    pub fn on_give_up(mut self, on_give_up: &'h dyn Fn(&O, &GiveUp)) -> Self {
        self.on_give_up = Some(on_give_up);
        self
    }

    /// Called once when the call succeeds.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[must_use]
    pub fn on_success(mut self, on_success: &'h dyn Fn(&Success)) -> Self {
        self.on_success = Some(on_success);
        self
    }

    /// Names the retried operation in events and metrics.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[must_use]
    pub fn name(mut self, name: &'static str) -> Self {
        self.site = Site::Named(name);
        self
    }

    /// Names the retried operation by its site.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[must_use]
    pub fn at(mut self, site: &Site) -> Self {
        self.site = *site;
        self
    }

    /// Retries failures a retried function below gave up on (`nested =
    /// retry`) when `retries_nested`.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[must_use]
    pub fn retry_nested(mut self, retries_nested: bool) -> Self {
        self.retries_nested = retries_nested;
        self
    }

    /// Treats the values `retry_if_ok` retries as failures (they ask the
    /// limit, like errors) when `values_fail`: the tower layer's retried
    /// responses.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[must_use]
    pub fn values_are_failures(mut self, values_fail: bool) -> Self {
        self.values_fail = values_fail;
        self
    }

    /// The server's pushback on an error: an exact wait, or a refusal
    /// (the tower layers' `Classify::pushback` in backoff-tower).
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[must_use]
    pub fn pushback(mut self, pushback: PushbackOf<'h, E>) -> Self {
        self.pushback = Some(pushback);
        self
    }

    /// How the events see what failed: the function the expansion's
    /// [`Probe`] chose, or a front end's (the tower layers': the
    /// classification's attributes of an error).
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[must_use]
    pub fn report_with(mut self, report: ReportFn<O>) -> Self {
        self.report = Some(report);
        self
    }

    /// The value to return, or the outcome to decide on.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn judge(&self, result: Result<T, E>) -> Result<T, O>
    where
        O: Outcome<T, E>,
    {
        O::judge(result, self.retry_if_ok)
    }

    /// Whether `outcome` is worth retrying: a pending value always, an
    /// error when `retry_if` says so.
    pub fn should_retry(&self, outcome: &O) -> bool
    where
        O: Outcome<T, E>,
    {
        match outcome.view() {
            Ok(_) => true,
            Err(error) => self.retry_if.is_none_or(|retry_if| retry_if(error)),
        }
    }

    /// The wait the server asked for, if any.
    pub(crate) fn hint(&self, outcome: &O) -> Option<Duration>
    where
        O: Outcome<T, E>,
    {
        match outcome.view() {
            Ok(value) => self.retry_after_ok.and_then(|hint| hint(value)),
            Err(error) => self.retry_after.and_then(|hint| hint(error)),
        }
    }

    /// The server's pushback on `outcome`, if it is an error and a hook
    /// reads one.
    pub(crate) fn pushback_of(&self, outcome: &O) -> Option<Pushback>
    where
        O: Outcome<T, E>,
    {
        match outcome.view() {
            Ok(_) => None,
            Err(error) => self.pushback.and_then(|pushback| pushback(error)),
        }
    }

    /// Whether `outcome` is a pending value (it asks nothing of a limit).
    pub(crate) fn is_pending(&self, outcome: &O) -> bool
    where
        O: Outcome<T, E>,
    {
        outcome.view().is_ok() && !self.values_fail
    }

    /// Calls `on_retry`, when set.
    pub(crate) fn report_retry(&self, outcome: &O, event: &RetryEvent) {
        if let Some(on_retry) = self.on_retry {
            on_retry(outcome, event);
        }
    }

    /// Calls `on_give_up`, when set.
    pub(crate) fn report_give_up(&self, outcome: &O, event: &GiveUp) {
        if let Some(on_give_up) = self.on_give_up {
            on_give_up(outcome, event);
        }
    }

    /// `on_success`, when set.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn on_success_hook(&self) -> Option<&'h dyn Fn(&Success)> {
        self.on_success
    }

    /// Whether `on_retry`, `on_give_up` or `on_success` is set.
    pub(crate) fn observes(&self) -> bool {
        self.on_retry.is_some() || self.on_give_up.is_some() || self.on_success.is_some()
    }

    /// How the events see what failed.
    pub(crate) fn report_fn(&self) -> Option<ReportFn<O>> {
        self.report
    }

    /// The operation's site.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn site(&self) -> Site {
        self.site
    }

    /// The operation's name, for events.
    pub fn function_name(&self) -> &'static str {
        self.site.name()
    }

    /// Whether failures a retried function below gave up on are retried.
    pub(crate) fn retries_nested(&self) -> bool {
        self.retries_nested
    }
}

#[cfg(test)]
mod tests;
