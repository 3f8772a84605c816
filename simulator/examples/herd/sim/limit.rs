//! What may stop a retry besides the schedule: nothing, the runtime's
//! windowed [`RetryBudget`], or its [`RetryThrottle`] (gRPC's token bucket).
//!
//! [`Limiter`] uses each exactly as the runtime's retry loops do:
//!
//! - budget: one `deposit` when a call of the retrying function starts, one
//!   `try_withdraw` per retry, asked last (after the retry count and the
//!   wait are known, so a retry that would not happen spends nothing);
//! - throttle: `record_success` on each successful attempt and
//!   `record_failure` on each failed attempt before anything else is
//!   checked; a `false` ends the call.
//!
//! The budget's instants are a fixed `Instant` plus the virtual time.

use std::time::{Duration, Instant};

use backoff_runtime::limits::{RetryBudget, RetryThrottle};

/// The parameters of a shared [`RetryBudget`], applied with its builders.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct BudgetSetup {
    /// Retries allowed per call started.
    pub(crate) ratio: f64,
    /// Retries allowed per second whatever the traffic.
    pub(crate) min_per_second: u32,
    /// The sliding window both are counted over.
    pub(crate) window: Duration,
}

impl BudgetSetup {
    /// The runtime's defaults: 20% of calls plus 10 retries per second,
    /// over 10 seconds.
    pub(crate) const DEFAULT: BudgetSetup = BudgetSetup {
        ratio: 0.2,
        min_per_second: 10,
        window: Duration::from_secs(10),
    };

    /// A fresh budget with these parameters.
    pub(crate) fn build(&self) -> RetryBudget {
        RetryBudget::new()
            .ratio(self.ratio)
            .min_per_second(self.min_per_second)
            .window(self.window)
    }
}

/// The parameters of a shared [`RetryThrottle`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct ThrottleSetup {
    /// The bucket's size; retries stop at half of it.
    pub(crate) max_tokens: u32,
    /// Tokens each success returns.
    pub(crate) token_ratio: f64,
}

impl ThrottleSetup {
    /// The values of gRPC's own example: 10 tokens, 0.1 per success.
    pub(crate) const GRPC_EXAMPLE: ThrottleSetup = ThrottleSetup {
        max_tokens: 10,
        token_ratio: 0.1,
    };

    /// A fresh, full throttle with these parameters.
    pub(crate) fn build(&self) -> RetryThrottle {
        RetryThrottle::new(self.max_tokens, self.token_ratio)
    }
}

/// Which limit a configuration puts on retries.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum RetryLimit {
    /// Only the schedule (`max_retries`) stops retries.
    Unlimited,
    /// A windowed [`RetryBudget`] shared by every call.
    Budget(BudgetSetup),
    /// A [`RetryThrottle`] shared by every call.
    Throttle(ThrottleSetup),
}

impl RetryLimit {
    /// No limit, the default budget and gRPC's example throttle, in the
    /// order of the tables and charts.
    pub(crate) const ALL: [RetryLimit; 3] = [
        RetryLimit::Unlimited,
        RetryLimit::Budget(BudgetSetup::DEFAULT),
        RetryLimit::Throttle(ThrottleSetup::GRPC_EXAMPLE),
    ];

    /// A short name for tables and legends.
    pub(crate) fn label(self) -> &'static str {
        match self {
            RetryLimit::Unlimited => "no limit",
            RetryLimit::Budget(_) => "budget",
            RetryLimit::Throttle(_) => "throttle",
        }
    }

    /// A fresh limiter (a new, unused budget or a full throttle) whose
    /// budget instants start at `origin`.
    pub(crate) fn build(self, origin: Instant) -> Limiter {
        match self {
            RetryLimit::Unlimited => Limiter::Unlimited,
            RetryLimit::Budget(setup) => Limiter::Budget {
                budget: Box::new(setup.build()),
                origin,
            },
            RetryLimit::Throttle(setup) => Limiter::Throttle(setup.build()),
        }
    }
}

/// A live limit, shared by the calls it limits.
#[derive(Debug)]
pub(crate) enum Limiter {
    /// Nothing to ask.
    Unlimited,
    /// A windowed budget and the instant virtual time zero stands for.
    Budget {
        /// The runtime's budget (boxed: it is many times a throttle's size).
        budget: Box<RetryBudget>,
        /// The `Instant` of virtual time zero.
        origin: Instant,
    },
    /// The runtime's throttle.
    Throttle(RetryThrottle),
}

impl Limiter {
    /// A call of the retrying function starts at virtual time `now`.
    pub(crate) fn call_started(&self, now: Duration) {
        if let Limiter::Budget { budget, origin } = self {
            budget.deposit(*origin + now);
        }
    }

    /// An attempt succeeded.
    pub(crate) fn attempt_succeeded(&self) {
        if let Limiter::Throttle(throttle) = self {
            throttle.record_success();
        }
    }

    /// An attempt failed with an error that would be retried: asked first,
    /// before the schedule. `false` ends the call (the throttle refused).
    pub(crate) fn attempt_failed(&self) -> bool {
        match self {
            Limiter::Throttle(throttle) => throttle.record_failure(),
            _ => true,
        }
    }

    /// Whether the retry the schedule allows may happen at `now`: asked
    /// last. `false` ends the call (the budget refused).
    pub(crate) fn retry_allowed(&self, now: Duration) -> bool {
        match self {
            Limiter::Budget { budget, origin } => budget.try_withdraw(*origin + now),
            _ => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_limiter_answers_only_its_own_questions() {
        let origin = Instant::now();
        let unlimited = RetryLimit::Unlimited.build(origin);
        unlimited.call_started(Duration::ZERO);
        assert!((0..100).all(|_| unlimited.attempt_failed() && unlimited.retry_allowed(Duration::ZERO)));

        let budget = RetryLimit::Budget(BudgetSetup {
            ratio: 0.5,
            min_per_second: 0,
            window: Duration::from_secs(1),
        })
        .build(origin);
        for _ in 0..4 {
            budget.call_started(Duration::ZERO);
        }
        assert!(
            (0..100).all(|_| budget.attempt_failed()),
            "a budget takes nothing per failure"
        );
        let allowed = (0..100).filter(|_| budget.retry_allowed(Duration::ZERO)).count();
        assert_eq!(allowed, 2, "half of 4 calls");

        let throttle = RetryLimit::Throttle(ThrottleSetup::GRPC_EXAMPLE).build(origin);
        let answers: Vec<bool> = (0..5).map(|_| throttle.attempt_failed()).collect();
        assert_eq!(answers, [true, true, true, true, false]);
        assert!(
            throttle.retry_allowed(Duration::ZERO),
            "a throttle is asked per failure, not per retry"
        );
        throttle.attempt_succeeded();
        let Limiter::Throttle(bucket) = &throttle else {
            unreachable!("a throttle was built")
        };
        assert_eq!(bucket.tokens(), 5.1, "a success returns 0.1 token");
    }
}
