//! The `tracing` feature's events.
//!
//! The `tracing` feature: a WARN event for each retry and one at give-up,
//! and an INFO event for a success after retries.
//! Without the feature these are no-ops, so the feature stays additive and
//! never adds an `E: Debug` bound (the error is logged when its type is
//! `Debug`, through the expansion's probe).

use core::fmt::Debug;

use crate::observe::conventions::{Conventions, SemanticConventions};
use crate::observe::events::{GiveUp, RetryEvent, Success};

/// How the events see what failed, through one function the expansion's
/// probes chose for its type: its `Debug` form (when the type is `Debug`)
/// and OpenTelemetry's attributes (when it has them), handed to `sink`.
pub(crate) type ReportFn<D> = fn(&D, sink: &mut dyn FnMut(Option<&dyn Debug>, Option<&dyn SemanticConventions>));

/// Runs `emit` with what `report` shows of `error` (nothing without one:
/// the builder's hooks, a type the probes found nothing for).
pub(crate) fn report<D>(
    error: &D,
    report: Option<ReportFn<D>>,
    mut emit: impl FnMut(Option<&dyn Debug>, Option<Conventions>),
) {
    match report {
        Some(report) => report(error, &mut |debug, conventions| {
            emit(debug, conventions.map(Conventions::of));
        }),
        None => emit(None, None),
    }
}

/// Whether this thread has a subscriber: its own default, or the global
/// one (a `NoSubscriber` set on purpose counts as none).
///
/// Every callsite of this crate (its events, the `enabled!` checks, the
/// `resend` span) is reached only when it does. tracing caches a
/// callsite's interest when the callsite is first reached, and while
/// exactly one `Dispatch` exists in the process it asks only the default of
/// the thread that got there first (tracing-core 0.1.36; tokio-rs/tracing
/// issues 3611 and 2874). A thread without a subscriber would cache
/// "never", and the events of a subscriber set on another thread with
/// `set_default` or `with_default` (a test's, a worker's) would be lost
/// until the next `Dispatch` is made. Skipping costs nothing: without a
/// subscriber the events go nowhere.
///
/// A process that never set a dispatcher (no global default, no scoped
/// one) answers from one relaxed load, without looking up the thread's
/// default. That load is inline at every check (a retry in such a process
/// pays it alone); the thread's default is looked up out of line.
#[cfg(feature = "tracing")]
#[inline]
pub(crate) fn thread_has_subscriber() -> bool {
    tracing::dispatcher::has_been_set() && default_is_a_subscriber()
}

/// Whether this thread's default dispatcher is a subscriber (not
/// `NoSubscriber`): once a dispatcher was set somewhere in the process.
#[cfg(feature = "tracing")]
#[inline(never)]
fn default_is_a_subscriber() -> bool {
    tracing::dispatcher::get_default(|dispatch| !dispatch.is::<tracing::subscriber::NoSubscriber>())
}

/// Whether a subscriber would record this crate's events at `$level`
/// (`WARN`, `INFO`); without the feature, never. The level's check (a
/// callsite of its own) is asked out of line, after the inline load.
macro_rules! listening {
    ($level:ident) => {{
        #[cfg(feature = "tracing")]
        let listening = {
            #[inline(never)]
            fn level_enabled() -> bool {
                tracing::enabled!(target: "backoff_runtime", tracing::Level::$level)
            }
            thread_has_subscriber() && level_enabled()
        };
        #[cfg(not(feature = "tracing"))]
        let listening = false;
        listening
    }};
}

/// Whether a subscriber would record the events (so they are only built,
/// and the clock only read for them, when someone listens).
#[cfg_attr(not(feature = "tracing"), inline(always))]
#[cfg_attr(feature = "tracing", inline)]
pub(crate) fn enabled() -> bool {
    listening!(WARN)
}

/// Whether the feature is on (successes after retries are then reported).
pub(crate) const COMPILED: bool = cfg!(feature = "tracing");

/// Whether a subscriber would record the INFO event of a success after
/// retries.
#[cfg_attr(not(feature = "tracing"), inline(always))]
#[cfg_attr(feature = "tracing", inline)]
pub(crate) fn success_enabled() -> bool {
    listening!(INFO)
}

/// The time fields of an event: `elapsed` (since the call started) when the
/// start was read; otherwise `since_first_failure`, left out while it is
/// zero (the first failure's own event), so no event shows a made-up zero.
#[cfg(feature = "tracing")]
fn times(
    elapsed: core::time::Duration,
    from_first_failure: bool,
) -> (Option<impl tracing::Value>, Option<impl tracing::Value>) {
    let since_call = (!from_first_failure).then(|| tracing::field::debug(elapsed));
    let since_first_failure = (from_first_failure && !elapsed.is_zero()).then(|| tracing::field::debug(elapsed));
    (since_call, since_first_failure)
}

/// Emits an event at `$level` about `$event`, with its fields in this
/// order: `function`; `$before` (each followed by a comma); the time
/// fields ([`times`]); `$after` (likewise); then `$message`. Nothing on a
/// thread without a subscriber ([`thread_has_subscriber`]: the hooks may
/// ask for the event while no subscriber listens).
#[cfg(feature = "tracing")]
macro_rules! emit {
    ($level:ident, $event:ident, $from_first_failure:ident, {$($before:tt)*}, {$($after:tt)*}, $message:literal) => {{
        if !thread_has_subscriber() {
            return;
        }
        let (elapsed, since_first_failure) = times($event.elapsed, $from_first_failure);
        tracing::$level!(
            target: "backoff_runtime",
            function = $event.function,
            $($before)*
            elapsed,
            since_first_failure,
            $($after)*
            $message
        );
    }};
}

/// Emits the WARN event of a retry. `error` is left out when `None` (its
/// type is not `Debug`): tracing records nothing for a `None` field.
#[cfg(feature = "tracing")]
pub(crate) fn retrying(
    event: &RetryEvent,
    error: Option<impl Debug>,
    conventions: Option<Conventions>,
    from_first_failure: bool,
) {
    let conventions = conventions.unwrap_or_default();
    // OpenTelemetry's names: the resend about to be made is the
    // `attempt`-th (the first attempt is not a resend).
    let resend_count = conventions.http.then_some(event.attempt);
    emit!(
        warn,
        event,
        from_first_failure,
        { attempt = event.attempt, wait = ?event.wait, },
        {
            retries_left = event.retries_left,
            hinted = event.hinted,
            error = error.map(tracing::field::debug),
            "rpc.grpc.status_code" = conventions.grpc_status,
            "http.request.resend_count" = resend_count,
        },
        "attempt failed, retrying"
    );
}

/// Emits the WARN event of giving up (`error` as in [`retrying`]).
#[cfg(feature = "tracing")]
pub(crate) fn giving_up(
    event: &GiveUp,
    error: Option<impl Debug>,
    conventions: Option<Conventions>,
    from_first_failure: bool,
) {
    let grpc_status = conventions.and_then(|conventions| conventions.grpc_status);
    emit!(
        warn,
        event,
        from_first_failure,
        { attempts = event.attempts, },
        {
            retries_left = event.retries_left,
            reason = %event.reason,
            error = error.map(tracing::field::debug),
            "rpc.grpc.status_code" = grpc_status,
        },
        "giving up"
    );
}

/// Emits the INFO event of a success after at least one retry: the WARN
/// events before it announced failures, this one says the call recovered
/// (INFO, not DEBUG, so a log at the usual level does not read as failures
/// that never ended).
#[cfg(feature = "tracing")]
pub(crate) fn succeeded(event: &Success, from_first_failure: bool) {
    emit!(info, event, from_first_failure, { attempts = event.attempts, }, {}, "succeeded after retries");
}

#[cfg(not(feature = "tracing"))]
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn succeeded(_event: &Success, _from_first_failure: bool) {}

/// Emits the event of a circuit breaker's change of state, `from` and `to`
/// by their names: WARN when it opens (`to` is `"open"`), INFO otherwise.
/// Fields: `breaker` (when named), `from`, `to`.
#[cfg(feature = "tracing")]
pub(crate) fn circuit_changed(breaker: Option<&'static str>, from: &'static str, to: &'static str) {
    if !thread_has_subscriber() {
        return;
    }
    if to == "open" {
        tracing::warn!(target: "backoff_runtime", breaker, from, to, "circuit breaker opened");
    } else {
        tracing::info!(target: "backoff_runtime", breaker, from, to, "circuit breaker changed state");
    }
}

#[cfg(not(feature = "tracing"))]
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn circuit_changed(_breaker: Option<&'static str>, _from: &'static str, _to: &'static str) {}

#[cfg(not(feature = "tracing"))]
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn retrying(
    _event: &RetryEvent,
    _error: Option<impl Debug>,
    _conventions: Option<Conventions>,
    _from_first_failure: bool,
) {
}

#[cfg(not(feature = "tracing"))]
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn giving_up(
    _event: &GiveUp,
    _error: Option<impl Debug>,
    _conventions: Option<Conventions>,
    _from_first_failure: bool,
) {
}

/// Emits the INFO event of an injection by the injector `injector`: its
/// `kind` (`fault`, `outcome`, `latency`) and, for latency, the `wait`.
#[cfg(all(feature = "tracing", feature = "chaos"))]
pub(crate) fn injected(injector: &'static str, kind: &'static str, wait: Option<core::time::Duration>) {
    if !thread_has_subscriber() {
        return;
    }
    tracing::info!(
        target: "backoff_runtime",
        injector,
        kind,
        wait = wait.map(tracing::field::debug),
        "fault injection"
    );
}

#[cfg(all(not(feature = "tracing"), feature = "chaos"))]
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn injected(_injector: &'static str, _kind: &'static str, _wait: Option<core::time::Duration>) {}
