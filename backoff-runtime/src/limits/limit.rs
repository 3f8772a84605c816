//! What `budget = ...` names: a [`RetryBudget`] (Finagle's: a share of the
//! calls plus a floor per second, over a sliding window) or a
//! [`RetryThrottle`] (gRPC's token bucket: failures take tokens, successes
//! return some, retries stop below half). The retry loops ask either through
//! [`Limit`], in the same places.

use std::time::Instant;

use crate::limits::budget::RetryBudget;
use crate::limits::throttle::RetryThrottle;

/// A retry limit a loop consults: a budget or a throttle, borrowed for the
/// call. Made by `budget = ...` through
/// [`AsBudget`](crate::__private::AsBudget).
///
/// ```
/// use backoff_runtime::{RetryBudget, RetryThrottle};
/// use backoff_runtime::__private::{Limit, budget_of};
///
/// static BUDGET: RetryBudget = RetryBudget::new();
/// static THROTTLE: RetryThrottle = RetryThrottle::new(10, 0.1);
/// assert!(matches!(budget_of(&BUDGET), Limit::Budget(_)));
/// assert!(matches!(budget_of(&THROTTLE), Limit::Throttle(_)));
/// ```
#[derive(Clone, Copy, Debug)]
pub enum Limit<'a> {
    /// A [`RetryBudget`].
    Budget(&'a RetryBudget),
    /// A [`RetryThrottle`].
    Throttle(&'a RetryThrottle),
}

impl Limit<'_> {
    /// Whether the limit needs the call's start instant (a budget counts
    /// calls in time slots; a throttle reads no clock).
    #[inline(always)]
    pub(crate) fn needs_clock(self) -> bool {
        matches!(self, Limit::Budget(_))
    }

    /// A call started at `now`.
    #[inline(always)]
    pub(crate) fn call_started(self, now: Instant) {
        if let Limit::Budget(budget) = self {
            budget.deposit(now);
        }
    }

    /// An attempt failed with a retryable error: a throttle takes its token
    /// now (as gRPC counts every such failure, the last one included) and
    /// says whether a retry is still allowed; a budget decides later.
    #[inline]
    pub(crate) fn failed(self) -> bool {
        match self {
            Limit::Budget(_) => true,
            Limit::Throttle(throttle) => throttle.record_failure(),
        }
    }

    /// Whether the retry may happen, checked last: a budget withdraws one
    /// (at `now`); a throttle answers what [`failed`](Self::failed) said.
    #[inline]
    pub(crate) fn allows_retry(self, now: impl FnOnce() -> Instant, throttle_allowed: bool) -> bool {
        match self {
            Limit::Budget(budget) => budget.try_withdraw(now()),
            Limit::Throttle(throttle) => {
                crate::observe::metrics::limit_asked(throttle.name_value(), throttle_allowed, || {
                    crate::observe::metrics::LimitLevel::Tokens(throttle.tokens_value())
                });
                throttle_allowed
            }
        }
    }

    /// An attempt succeeded: a throttle gets its tokens back.
    #[inline(always)]
    pub(crate) fn succeeded(self) {
        if let Limit::Throttle(throttle) = self {
            throttle.record_success();
        }
    }
}
