//! What `budget = ...` names: any [`RetryLimit`]. Two come with the crate, a
//! [`RetryBudget`] (Finagle's: a share of the calls plus a floor per second,
//! over a sliding window) and a [`RetryThrottle`] (gRPC's token bucket:
//! failures take tokens, successes return some, retries stop below half);
//! the trait is open, so an AWS-style retry quota is a type of your own.
//! The loop asks whichever it is through [`Limit`], in the same places.
//!
//! A limit may also pace every attempt, the first included (`admission =
//! ...`): [`AdaptiveRateLimiter`](crate::AdaptiveRateLimiter) (AWS's adaptive
//! retry mode) and [`AdaptiveThrottle`](crate::AdaptiveThrottle) (Google
//! SRE's client-side throttling) do. The same trait carries it, in methods
//! whose defaults pace nothing.

use core::time::Duration;
use std::sync::Arc;
use std::time::Instant;

use crate::limits::budget::RetryBudget;
use crate::limits::throttle::RetryThrottle;

/// A retry limit shared by the calls that name it (`budget = ...` on the
/// attribute, [`Retry::budget`](crate::Retry::budget) on the builder).
///
/// The loop calls, in this order: [`call_started`](RetryLimit::call_started)
/// before the first attempt (with the start instant, when
/// [`reads_clock`](RetryLimit::reads_clock)); after each attempt that
/// failed with an error `retry_if` retries, [`failed`](RetryLimit::failed),
/// whatever follows; then, when every other stop rule allows the retry,
/// [`try_retry`](RetryLimit::try_retry), whose `false` ends the call with
/// [`StopReason::Budget`](crate::StopReason::Budget); after a successful
/// attempt, [`succeeded`](RetryLimit::succeeded). A pending value (polling
/// with `retry_if_ok`) asks nothing.
///
/// # Admission
///
/// Named in `admission = ...` (or [`Retry::admission`](crate::Retry::admission)),
/// a limit whose [`paces`](RetryLimit::paces) is `true` (read once when the
/// call starts) is asked before every attempt, the first included, with
/// [`admit`](RetryLimit::admit): the attempt goes ([`Admission::Go`], the
/// limit takes what it costs), waits ([`Admission::Wait`]: the loop sleeps
/// on its own timer, holding nothing, and asks again) or is refused
/// ([`Admission::Refuse`]: the call returns `E::from(`[`Refused`](crate::Refused)`)`
/// at once, whether the attempt was the first or a retry, which is why
/// `admission = ...` needs `E: From<Refused>`; it is reported as a give-up
/// with [`StopReason::Refused`](crate::StopReason::Refused)). After every attempt it is told
/// how the attempt ended, [`observed`](RetryLimit::observed): throttled or
/// not, by `throttled_if` (by default every error `retry_if` retries). Only
/// those two are asked of a limit named there; its retry methods are asked
/// when it is named in `budget = ...`, where admission is never asked. Every
/// default paces nothing, so a limit that does not override them behaves and
/// costs as before.
///
/// Open, so that you can bring your own: implement `try_retry` and the
/// methods your limit needs; it must be `Sync` and work through `&self`,
/// as every call that names it uses it at once, from any thread.
///
/// ```
/// use backoff_runtime::{Policy, RetryLimit};
/// use std::sync::atomic::{AtomicU32, Ordering};
/// use std::time::{Duration, Instant};
///
/// /// An AWS-style retry quota: a retry costs 5, a success returns 1.
/// struct Quota(AtomicU32);
///
/// impl RetryLimit for Quota {
///     fn try_retry(&self, _now: Instant) -> bool {
///         self.0.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| left.checked_sub(5)).is_ok()
///     }
///     fn succeeded(&self) {
///         let _ = self.0.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| Some((left + 1).min(500)));
///     }
/// }
///
/// let quota = Quota(AtomicU32::new(10));
/// let mut calls = 0;
/// let policy = Policy::new().initial_backoff(Duration::from_millis(1));
/// let result = policy.retry(|| { calls += 1; Err::<(), ()>(()) }).budget(&quota).call();
/// assert_eq!((result, calls), (Err(()), 3), "two retries, then the quota is spent");
/// ```
#[diagnostic::on_unimplemented(
    message = "`budget = ...` and `admission = ...` need a `RetryLimit` (a `RetryBudget`, a `RetryThrottle`, an `AdaptiveRateLimiter`, an `AdaptiveThrottle`, your own, or a reference to one), and `{Self}` is none of them",
    label = "not a retry limit",
    note = "name a `static` limit, or give `&self.budget`, an `Arc` of one, or a function returning a reference to one"
)]
pub trait RetryLimit: Sync {
    /// Whether [`call_started`](RetryLimit::call_started) needs the
    /// call's start instant (read on the loop's clock only then).
    fn reads_clock(&self) -> bool {
        false
    }

    /// A call started at `now` (only called when
    /// [`reads_clock`](RetryLimit::reads_clock)).
    fn call_started(&self, now: Instant) {
        let _ = now;
    }

    /// An attempt failed with an error that `retry_if` retries, whatever
    /// follows (the last attempt's failure included, as gRPC counts them).
    fn failed(&self) {}

    /// Whether the retry that every other stop rule allows may happen, at
    /// `now` on the loop's clock; `false` ends the call.
    fn try_retry(&self, now: Instant) -> bool;

    /// An attempt succeeded.
    fn succeeded(&self) {}

    /// Whether this limit paces attempts (overrides [`admit`](RetryLimit::admit)
    /// and [`observed`](RetryLimit::observed)): read once when a call that
    /// names it in `admission = ...` starts; `false` asks neither.
    fn paces(&self) -> bool {
        false
    }

    /// Whether the attempt of `request` may start now, must wait, or is
    /// refused. Take what it costs only when answering
    /// [`Go`](Admission::Go); a wait is the loop's, so never sleep here.
    fn admit(&self, request: AdmissionRequest) -> Admission {
        let _ = request;
        Admission::Go
    }

    /// An attempt ended at `now`: `throttled` when it failed with an error
    /// that `throttled_if` flags ("slow down"), `false` for a success, a
    /// pending value or any other error.
    fn observed(&self, now: Instant, throttled: bool) {
        let _ = (now, throttled);
    }
}

impl RetryLimit for RetryBudget {
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn reads_clock(&self) -> bool {
        true
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn call_started(&self, now: Instant) {
        self.deposit(now);
    }

    #[inline]
    fn try_retry(&self, now: Instant) -> bool {
        self.try_withdraw(now)
    }
}

impl RetryLimit for RetryThrottle {
    #[inline]
    fn failed(&self) {
        let _ = self.record_failure();
    }

    #[inline]
    fn try_retry(&self, _now: Instant) -> bool {
        let allowed = self.allows_retry();
        crate::observe::metrics::limit_asked(self.name_value(), allowed, || {
            crate::observe::metrics::LimitLevel::Tokens(self.tokens_value())
        });
        allowed
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn succeeded(&self) {
        self.record_success();
    }
}

/// Forwards every method to the limit behind the pointer.
macro_rules! forward_limit {
    ($($pointer:ty $(: $send:ident)?),*) => {$(
        impl<L: RetryLimit $(+ $send)? + ?Sized> RetryLimit for $pointer {
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn reads_clock(&self) -> bool {
                (**self).reads_clock()
            }

            #[cfg_attr(not(debug_assertions), inline(always))]
            fn call_started(&self, now: Instant) {
                (**self).call_started(now);
            }

            #[cfg_attr(not(debug_assertions), inline(always))]
            fn failed(&self) {
                (**self).failed();
            }

            #[cfg_attr(not(debug_assertions), inline(always))]
            fn try_retry(&self, now: Instant) -> bool {
                (**self).try_retry(now)
            }

            #[cfg_attr(not(debug_assertions), inline(always))]
            fn succeeded(&self) {
                (**self).succeeded();
            }

            #[cfg_attr(not(debug_assertions), inline(always))]
            fn paces(&self) -> bool {
                (**self).paces()
            }

            #[cfg_attr(not(debug_assertions), inline(always))]
            fn admit(&self, request: AdmissionRequest) -> Admission {
                (**self).admit(request)
            }

            #[cfg_attr(not(debug_assertions), inline(always))]
            fn observed(&self, now: Instant, throttled: bool) {
                (**self).observed(now, throttled);
            }
        }
    )*};
}

// An `Arc` is `Sync` only around a `Send` value.
forward_limit!(&L, Arc<L>: Send, Box<L>);

/// A pacing limit's answer before an attempt
/// ([`RetryLimit::admit`]).
///
/// ```
/// use backoff_runtime::Admission;
/// use std::time::Duration;
///
/// let answer = Admission::Wait(Duration::from_millis(250));
/// assert_ne!(answer, Admission::Go);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    /// The attempt may start now; whatever it costs is taken.
    Go,
    /// Not yet: the loop sleeps this long on its own timer, then asks again
    /// (nothing was taken, so another caller may take it first).
    Wait(Duration),
    /// Not at all: the attempt does not start, and the call ends with
    /// [`Refused`](crate::Refused).
    Refuse,
}

/// What a pacing limit is asked before an attempt: the instant on the loop's
/// clock, the attempt's number (1 for the first call) and how long this
/// attempt already waited for admission.
///
/// ```
/// use backoff_runtime::AdmissionRequest;
/// use std::time::{Duration, Instant};
///
/// let request = AdmissionRequest::new(Instant::now(), 1, Duration::ZERO);
/// assert!(request.is_first());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct AdmissionRequest {
    /// Now, on the loop's clock (the virtual clock in tests).
    pub now: Instant,
    /// The attempt's number: 1 for the first call, 2 for the first retry.
    pub attempt: u32,
    /// How long this attempt already waited for admission: a limit with a
    /// maximum wait refuses rather than let it wait past that.
    pub waited: Duration,
}

impl AdmissionRequest {
    /// A request for attempt `attempt` at `now`, after waiting `waited`
    /// (for a limit's own tests; the loop makes them).
    ///
    /// ```
    /// use backoff_runtime::AdmissionRequest;
    /// use std::time::{Duration, Instant};
    ///
    /// let request = AdmissionRequest::new(Instant::now(), 2, Duration::from_millis(5));
    /// assert!(!request.is_first());
    /// ```
    #[must_use]
    pub const fn new(now: Instant, attempt: u32, waited: Duration) -> Self {
        AdmissionRequest { now, attempt, waited }
    }

    /// Whether this is the call's first attempt.
    ///
    /// ```
    /// use backoff_runtime::AdmissionRequest;
    /// use std::time::{Duration, Instant};
    ///
    /// assert!(AdmissionRequest::new(Instant::now(), 1, Duration::ZERO).is_first());
    /// ```
    #[must_use]
    pub const fn is_first(&self) -> bool {
        self.attempt <= 1
    }
}

/// The limit of one call, borrowed for the call.
#[derive(Clone, Copy)]
pub struct Limit<'a>(&'a dyn RetryLimit);

impl core::fmt::Debug for Limit<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Limit")
    }
}

impl<'a> Limit<'a> {
    /// `limit`, borrowed for the call.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn of<L: RetryLimit>(limit: &'a L) -> Self {
        Limit(limit)
    }

    /// Whether the limit needs the call's start instant.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn needs_clock(self) -> bool {
        self.0.reads_clock()
    }

    /// A call started at `now`.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn call_started(self, now: Instant) {
        self.0.call_started(now);
    }

    /// An attempt failed with a retryable error.
    #[inline]
    pub(crate) fn failed(self) {
        self.0.failed();
    }

    /// Whether the retry may happen, checked last.
    #[inline]
    pub(crate) fn allows_retry(self, now: impl FnOnce() -> Instant) -> bool {
        self.0.try_retry(now())
    }

    /// An attempt succeeded.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn succeeded(self) {
        self.0.succeeded();
    }
}

/// The limit of `budget = EXPR`, borrowed for the call: carries the
/// [`RetryLimit`] bound, whose message is in the user's words.
#[cfg_attr(not(debug_assertions), inline(always))]
pub fn budget_of<L: RetryLimit>(limit: &L) -> Limit<'_> {
    Limit::of(limit)
}
