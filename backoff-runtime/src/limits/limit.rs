//! What `budget = ...` names: any [`RetryLimit`].
//!
//! Two come with the crate, a [`RetryBudget`] (Finagle's: a share of the calls
//! plus a floor per second, over a sliding window) and a [`RetryThrottle`]
//! (gRPC's token bucket: failures take tokens, successes return some, retries
//! stop below half); the trait is open, so an AWS-style retry quota is a type
//! of your own. The loop asks whichever it is as a `&dyn RetryLimit`, in the same
//! places.
//!
//! What paces every attempt (`admission = ...`) is the other trait,
//! [`AdmissionLimit`](crate::limits::AdmissionLimit).

use crate::limits::budget::RetryBudget;
use crate::limits::throttle::RetryThrottle;
use crate::time::Instant;

/// A retry limit shared by the calls that name it (`budget = ...` on the
/// attribute, [`Retry::budget`](crate::Retry::budget) on the builder).
///
/// The loop calls, in this order: [`call_started`](RetryLimit::call_started)
/// once the call was sent (with its start instant, when
/// [`reads_clock`](RetryLimit::reads_clock)); after each attempt that
/// failed with an error `retry_if` retries, [`failed`](RetryLimit::failed),
/// whatever follows; then, when every other stop rule allows the retry,
/// [`try_retry`](RetryLimit::try_retry), whose `false` ends the call with
/// [`StopReason::Budget`](crate::StopReason::Budget); after a successful
/// attempt, [`succeeded`](RetryLimit::succeeded). A pending value (polling
/// with `retry_if_ok`) asks nothing. A retry that `try_retry` allowed but
/// that was never sent (the call was dropped during its wait, or the
/// admission limiter refused it) is given back with
/// [`unsent`](RetryLimit::unsent).
///
/// A limiter that paces every attempt ([`AdaptiveRateLimiter`](crate::limits::AdaptiveRateLimiter),
/// [`AdaptiveThrottle`](crate::limits::AdaptiveThrottle)) is an
/// [`AdmissionLimit`](crate::limits::AdmissionLimit), named in `admission = ...`:
/// in `budget = ...` it is a compile error.
///
/// Open, so that you can bring your own: implement `try_retry` and the
/// methods your limit needs; it must be `Sync` and work through `&self`,
/// as every call that names it uses it at once, from any thread.
///
/// ```
/// use backoff_runtime::limits::RetryLimit;
/// use backoff_runtime::Policy;
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
    message = "`budget = ...` needs a limit that counts retries (a `RetryBudget`, a `RetryThrottle` or your own `RetryLimit`, or a reference, `Arc` or `Box` of one), and `{Self}` is not one",
    label = "not a limit that counts retries",
    note = "a limiter asked before every attempt (an `AdaptiveRateLimiter`, an `AdaptiveThrottle`, a `CircuitBreaker`, a `Cooldown`) belongs in `admission = ...`; here, name a `static` limit, or give `&self.budget` or an `Arc` of one"
)]
pub trait RetryLimit: Sync {
    /// Whether [`call_started`](RetryLimit::call_started) needs the
    /// call's start instant (read on the loop's clock only then).
    fn reads_clock(&self) -> bool {
        false
    }

    /// A call that started at `now` was sent (only called when
    /// [`reads_clock`](RetryLimit::reads_clock)). It is called once per
    /// call: at its first attempt's answer, or when its first hedge asks
    /// this limit (the first attempt is then on its way, unanswered). A call that sent nothing is not counted: its first attempt
    /// was refused by the admission limiter, or its future was dropped
    /// before that attempt answered.
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

    /// A retry that [`try_retry`](RetryLimit::try_retry) allowed was never
    /// sent: the call was dropped during its wait, or the admission limiter
    /// refused it. Give back what `try_retry` took. `since` is at or before
    /// the instant `try_retry` was asked: the call's start (or now, when
    /// the start was not read). The default gives back nothing.
    fn unsent(&self, since: Instant) {
        let _ = since;
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

    fn unsent(&self, since: Instant) {
        self.refund(since);
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
        crate::observe::metrics::limit_asked(self.get_name(), allowed, || {
            crate::observe::metrics::LimitLevel::Tokens(self.tokens())
        });
        allowed
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn succeeded(&self) {
        self.record_success();
    }
}

crate::limits::named::forward_to_pointee!(RetryLimit {
    fn reads_clock(&self) -> bool;
    fn call_started(&self, now: Instant);
    fn failed(&self);
    fn try_retry(&self, now: Instant) -> bool;
    fn succeeded(&self);
    fn unsent(&self, since: Instant);
});

/// A retry that a limit allowed and that is not sent yet: what a call
/// holds between the decision and the retry's send. [`sent`](Self::sent)
/// keeps the retry taken. Dropped before that (the call was dropped during
/// its wait, or the admission limiter refused the retry), it gives the
/// retry back with [`RetryLimit::unsent`], exactly once.
///
/// ```
/// use backoff_runtime::__front_end::Charged;
/// use backoff_runtime::limits::{RetryBudget, RetryLimit};
/// use std::time::Instant;
///
/// let budget = RetryBudget::new().ratio(0.0).min_per_second(1);
/// let now = Instant::now();
/// assert_eq!((0..100).filter(|_| budget.try_retry(now)).count(), 10);
/// drop(Charged::new(&budget, now));
/// assert!(budget.try_retry(now), "the retry never sent was given back");
/// ```
#[must_use = "a charge dropped at once gives the retry back"]
pub struct Charged<L: RetryLimit> {
    /// The limit, until the retry is sent.
    limit: Option<L>,
    since: Instant,
}

impl<L: RetryLimit> core::fmt::Debug for Charged<L> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Charged")
            .field("since", &self.since)
            .finish_non_exhaustive()
    }
}

impl<L: RetryLimit> Charged<L> {
    /// A retry `limit` allowed at or after `since`.
    #[inline]
    pub fn new(limit: L, since: Instant) -> Self {
        Charged {
            limit: Some(limit),
            since,
        }
    }

    /// The retry was sent: it stays taken.
    #[inline]
    pub fn sent(mut self) {
        self.limit = None;
    }

    /// The retry `charge` holds, if any, was sent: it stays taken.
    #[inline]
    pub fn sent_if_held(charge: Option<Self>) {
        if let Some(charge) = charge {
            charge.sent();
        }
    }
}

impl<L: RetryLimit> Drop for Charged<L> {
    #[inline]
    fn drop(&mut self) {
        if let Some(limit) = self.limit.take() {
            limit.unsent(self.since);
        }
    }
}

/// The limit of `budget = EXPR`, borrowed for the call: carries the
/// [`RetryLimit`] bound, whose message is in the user's words.
#[cfg_attr(not(debug_assertions), inline(always))]
pub fn budget_of<L: RetryLimit>(limit: &L) -> &dyn RetryLimit {
    limit
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    /// Counts the retries given back.
    #[derive(Default)]
    struct Unsent(AtomicU32);

    impl RetryLimit for Unsent {
        fn try_retry(&self, _: Instant) -> bool {
            true
        }

        fn unsent(&self, _: Instant) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    #[test]
    fn a_charge_dropped_unsent_gives_the_retry_back_once() {
        let limit = Unsent::default();
        drop(Charged::new(&limit, Instant::now()));
        assert_eq!(limit.0.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn a_charge_debugs_as_its_instant() {
        let limit = Unsent::default();
        let now = Instant::now();
        let charge = Charged::new(&limit, now);
        assert_eq!(format!("{charge:?}"), format!("Charged {{ since: {now:?}, .. }}"));
        charge.sent();
    }

    #[test]
    fn a_charge_sent_keeps_the_retry() {
        let limit = Unsent::default();
        Charged::new(&limit, Instant::now()).sent();
        Charged::sent_if_held(Some(Charged::new(&limit, Instant::now())));
        Charged::<&Unsent>::sent_if_held(None);
        assert_eq!(limit.0.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn a_budget_gives_back_what_a_charge_dropped_unsent_held() {
        let budget = RetryBudget::new().ratio(0.0).min_per_second(1);
        let now = Instant::now();
        assert_eq!((0..100).filter(|_| budget.try_retry(now)).count(), 10);
        drop(Charged::new(&budget as &dyn RetryLimit, now));
        assert!(budget.try_retry(now));
        assert!(!budget.try_retry(now));
    }
}
