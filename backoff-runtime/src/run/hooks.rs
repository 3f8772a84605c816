//! The user's hooks of one retried call, as data: one [`Hooks`] struct of
//! optional references to them, typed by the call's result, with the call's
//! identity beside them (its name and metrics site, its nested mode and how
//! its failures are formatted).
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
use core::marker::PhantomData;
use core::time::Duration;

use crate::observe::conventions::Conventions;
#[cfg(feature = "tracing")]
use crate::observe::conventions::SemanticConventions;
use crate::observe::events::{GiveUp, RetryEvent, Success};
use crate::observe::site::{CallSite, Site};
use crate::observe::trace::ReportFn;

/// What the decision and the observers see of an attempt that did not
/// succeed: the error `E` (the default), or with `retry_if_ok` the whole
/// `Result<T, E>`, whose value may be pending.
pub trait Outcome<T, E>: Sized {
    /// `Ok` with the value to return, or `Err` with the outcome to decide
    /// on (`retry_if_ok`, when set, says which values are pending).
    fn judge(result: Result<T, E>, retry_if_ok: Option<&dyn Fn(&T) -> bool>) -> Result<T, Self>;
    /// The outcome seen as a pending value or an error.
    fn view(&self) -> Result<&T, &E>;
    /// The outcome returned as the call's result.
    fn into_result(self) -> Result<T, E>;
}

impl<T, E> Outcome<T, E> for E {
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn judge(result: Result<T, E>, _retry_if_ok: Option<&dyn Fn(&T) -> bool>) -> Result<T, E> {
        result
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn view(&self) -> Result<&T, &E> {
        Err(self)
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn into_result(self) -> Result<T, E> {
        Err(self)
    }
}

impl<T, E> Outcome<T, E> for Result<T, E> {
    #[inline]
    fn judge(result: Result<T, E>, retry_if_ok: Option<&dyn Fn(&T) -> bool>) -> Result<T, Self> {
        match result {
            Ok(value) if !retry_if_ok.is_some_and(|pending| pending(&value)) => Ok(value),
            other => Err(other),
        }
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn view(&self) -> Result<&T, &E> {
        self.as_ref()
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn into_result(self) -> Result<T, E> {
        self
    }
}

/// A result that `retry_if_ok` judged where the expansion does it, on its
/// success path: a value that is not pending, or what the loop decides on,
/// with the predicate that judged it (lent to the loop, so it is written,
/// checked and evaluated once).
pub enum Judged<'h, T, E> {
    /// Not pending: the call's value.
    Done(T),
    /// A pending value or an error, and the `retry_if_ok` that judged it.
    Again(Result<T, E>, &'h dyn Fn(&T) -> bool),
}

impl<T, E> Debug for Judged<'_, T, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Judged::Done(_) => "Judged::Done(..)",
            Judged::Again(..) => "Judged::Again(..)",
        })
    }
}

/// Judges `result` by `retry_if_ok`: [`Judged::Done`] for a value that is
/// not pending.
///
/// ```
/// use backoff_runtime::__private::{Judged, judged};
///
/// let running = |state: &&str| *state == "running";
/// assert!(matches!(judged(Ok::<_, ()>("done"), &running), Judged::Done("done")));
/// assert!(matches!(judged(Ok::<_, ()>("running"), &running), Judged::Again(Ok("running"), _)));
/// ```
#[cfg_attr(not(debug_assertions), inline(always))]
pub fn judged<'h, T, E>(result: Result<T, E>, retry_if_ok: &'h dyn Fn(&T) -> bool) -> Judged<'h, T, E> {
    match result {
        Ok(value) if !retry_if_ok(&value) => Judged::Done(value),
        other => Judged::Again(other, retry_if_ok),
    }
}

/// A hook that judges an error or a value (`retry_if`, `retry_if_ok`).
pub(crate) type Predicate<'h, X> = &'h dyn Fn(&X) -> bool;
/// A hook that reads the server's suggested wait (`retry_after`,
/// `retry_after_ok`).
pub(crate) type Hint<'h, X> = &'h dyn Fn(&X) -> Option<Duration>;
/// A hook that observes what failed and an event (`on_retry`,
/// `on_give_up`).
pub(crate) type Observer<'h, O, Ev> = &'h dyn Fn(&O, &Ev);

/// A hook that reads the server's pushback on an error.
pub(crate) type PushbackOf<'h, X> = &'h dyn Fn(&X) -> Option<Pushback>;

/// A server's instruction that overrides the schedule after a failure
/// (gRPC's `grpc-retry-pushback-ms`), read by
/// `Classify::pushback` in backoff-tower.
///
/// Unlike a hint (`Classify::error_hint` in backoff-tower),
/// an exact wait is not capped by `max_backoff`, and the schedule restarts
/// from `initial_backoff` after it; a refusal ends the call (reported as
/// [`StopReason::Permanent`](crate::StopReason::Permanent)) once a limit
/// has counted the failure.
///
/// ```
/// use backoff_runtime::__front_end::Pushback;
/// use std::time::Duration;
/// let at_once = Pushback::After(Duration::ZERO);
/// assert_ne!(at_once, Pushback::Stop);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pushback {
    /// Wait exactly this long (no jitter, even above `max_backoff`; zero:
    /// at once), then restart the schedule. The other stop rules still
    /// hold: `max_retries`, `max_elapsed`, the limit.
    After(Duration),
    /// Do not retry.
    Stop,
}

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
    throttled_if: Option<Predicate<'h, E>>,
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
            throttled_if: None,
            on_retry: None,
            on_give_up: None,
            on_success: None,
            site: Site::Named("retry"),
            retries_nested: false,
            values_fail: false,
            report: None,
        }
    }

    /// [`new`](Hooks::new), typed by a failed attempt's error (the
    /// expansion's: closures written without parameter types infer them).
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[must_use]
    pub const fn for_error(_error: &E) -> Self {
        Self::new()
    }

    /// [`new`](Hooks::new), typed by an attempt's result.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[must_use]
    pub const fn for_result(_result: &Result<T, E>) -> Self {
        Self::new()
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
            throttled_if: self.throttled_if,
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
    pub fn throttled_if(mut self, throttled_if: &'h dyn Fn(&E) -> bool) -> Self {
        self.throttled_if = Some(throttled_if);
        self
    }

    /// Whether `outcome` tells the admission limit to slow down: an error
    /// that `retry_if` retries and `throttled_if` (when set) flags; never a
    /// pending value.
    pub fn throttled(&self, outcome: &O) -> bool
    where
        O: Outcome<T, E>,
    {
        match outcome.view() {
            Ok(_) => self.values_fail,
            Err(error) => {
                self.retry_if.is_none_or(|retry_if| retry_if(error))
                    && self.throttled_if.is_none_or(|throttled_if| throttled_if(error))
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
    /// [`Probe`] chose.
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

/// The site of a free function (or an associated function), made once per
/// function by the expansion.
#[cfg_attr(not(debug_assertions), inline(always))]
#[must_use]
pub const fn static_site(site: &'static CallSite) -> Site {
    Site::Static(site)
}

/// The site of a method, named by the type of its `self`, read when the
/// name is first needed.
#[cfg_attr(not(debug_assertions), inline(always))]
#[must_use]
pub const fn method_site(site: &'static CallSite, self_type: fn() -> &'static str) -> Site {
    Site::Method(site, self_type)
}

/// How the events see what failed, found by autoref specialisation on its
/// concrete type where the expansion knows it, with no bound on it:
/// `(&&&&Probe::of(&error)).report()` is the report function that shows its
/// `Debug` form and OpenTelemetry's attributes when the type has them, and
/// leaves out what it lacks.
///
/// ```
/// use backoff_runtime::__private::Probe;
/// use backoff_runtime::__private::probe::{ProbeBoth as _, ProbeConventions as _, ProbeDebug as _, ProbeNeither as _};
///
/// let error = String::from("busy");
/// let report = (&&&&Probe::of(&error)).report();
/// let mut reported = false;
/// report(&error, &mut |_debug, _conventions| reported = true);
/// assert!(reported, "the events are given what the type shows (with `tracing`: its Debug form)");
/// ```
pub struct Probe<D>(PhantomData<fn(&D)>);

impl<D> Debug for Probe<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Probe")
    }
}

impl<D> Probe<D> {
    /// The probe of `value`'s type.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn of(_value: &D) -> Self {
        Probe(PhantomData)
    }

    /// Without the `tracing` feature no event shows what failed: the
    /// report is empty, and this inherent method answers the lookup before
    /// any of the probe's traits is asked (they have no impls then).
    #[cfg(not(feature = "tracing"))]
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn report(&self) -> ReportFn<D> {
        |_, sink| sink(None, Conventions::default())
    }
}

/// The probe's answers, most specific first: the expansion brings them
/// into scope (anonymously) and calls `report` on `&&&&Probe`; the method
/// lookup tries `&&&Probe` (both), `&&Probe` (`Debug`), `&Probe`
/// (attributes) and `Probe` (neither) in that order and takes the first
/// whose bounds hold.
pub mod probe {
    use super::ReportFn;
    #[cfg(feature = "tracing")]
    use super::{Conventions, Debug, Probe, SemanticConventions};

    /// `Debug` and attributes. `P` is the protocol parameter of
    /// [`SemanticConventions`], inferred from the one impl the type has.
    pub trait ProbeBoth<D, P> {
        /// The report function.
        fn report(&self) -> ReportFn<D>;
    }

    #[cfg(feature = "tracing")]
    impl<D: Debug + SemanticConventions<P>, P> ProbeBoth<D, P> for &&&Probe<D> {
        #[cfg_attr(not(debug_assertions), inline(always))]
        fn report(&self) -> ReportFn<D> {
            |error, sink| sink(Some(error), error.conventions())
        }
    }

    /// `Debug` only.
    pub trait ProbeDebug<D> {
        /// The report function.
        fn report(&self) -> ReportFn<D>;
    }

    #[cfg(feature = "tracing")]
    impl<D: Debug> ProbeDebug<D> for &&Probe<D> {
        #[cfg_attr(not(debug_assertions), inline(always))]
        fn report(&self) -> ReportFn<D> {
            |error, sink| sink(Some(error), Conventions::default())
        }
    }

    /// Attributes only (`P` as in [`ProbeBoth`]).
    pub trait ProbeConventions<D, P> {
        /// The report function.
        fn report(&self) -> ReportFn<D>;
    }

    #[cfg(feature = "tracing")]
    impl<D: SemanticConventions<P>, P> ProbeConventions<D, P> for &Probe<D> {
        #[cfg_attr(not(debug_assertions), inline(always))]
        fn report(&self) -> ReportFn<D> {
            |error, sink| sink(None, error.conventions())
        }
    }

    /// Neither.
    pub trait ProbeNeither<D> {
        /// The report function.
        fn report(&self) -> ReportFn<D>;
    }

    #[cfg(feature = "tracing")]
    impl<D> ProbeNeither<D> for Probe<D> {
        #[cfg_attr(not(debug_assertions), inline(always))]
        fn report(&self) -> ReportFn<D> {
            |_, sink| sink(None, Conventions::default())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Hooks, Probe, judged};
    use std::time::Duration;

    /// One set judges values and errors: a pending value is retried with
    /// its own hint, an error by `retry_if` with its own.
    #[test]
    fn one_set_judges_values_and_errors() {
        let (retry_if, retry_after) = (|status: &u16| *status >= 500, |_: &u16| Some(Duration::from_secs(1)));
        let (pending, pending_hint) = (
            |state: &&str| *state == "running",
            |_: &&str| Some(Duration::from_secs(2)),
        );
        let hooks = Hooks::<&str, u16>::new()
            .retry_if(&retry_if)
            .retry_after(&retry_after)
            .retry_if_ok(&pending)
            .retry_after_ok(&pending_hint);
        assert!(hooks.judge(Ok("done")).is_ok());
        assert!(hooks.judge(Ok("running")).is_err());
        assert_eq!(hooks.hint(&Ok("running")), Some(Duration::from_secs(2)));
        assert_eq!(hooks.hint(&Err(503)), Some(Duration::from_secs(1)));
        assert!(hooks.should_retry(&Ok("running")));
        assert!(!hooks.should_retry(&Err(404)));
        assert!(hooks.is_pending(&Ok("running")) && !hooks.is_pending(&Err(503)));
        assert!(!hooks.values_are_failures(true).is_pending(&Ok("running")));
    }

    /// Without `retry_if_ok` the decision sees the error alone.
    #[test]
    fn without_retry_if_ok_errors_are_decided() {
        let hooks = Hooks::<u8, u16>::new().name("fetch");
        assert_eq!(hooks.judge(Err(503)).err(), Some(503));
        assert!(hooks.should_retry(&503), "every error is retried by default");
        assert!(!hooks.is_pending(&503));
        assert_eq!(hooks.function_name(), "fetch");
        assert_eq!(format!("{hooks:?}"), "Hooks { name: \"fetch\", .. }");
    }

    /// A judged result shows which way it went, not its value; a probe
    /// shows only that it is one.
    #[test]
    fn judged_results_and_probes_debug_as_what_they_are() {
        let running = |state: &&str| *state == "running";
        assert_eq!(
            format!("{:?}", judged(Ok::<_, ()>("done"), &running)),
            "Judged::Done(..)"
        );
        assert_eq!(
            format!("{:?}", judged(Ok::<_, ()>("running"), &running)),
            "Judged::Again(..)"
        );
        assert_eq!(format!("{:?}", Probe::of(&503_u16)), "Probe");
    }
}
