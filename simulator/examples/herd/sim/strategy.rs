//! The retry strategies under test, and the per-client retrier that draws
//! each wait from the runtime's real schedule
//! ([`Policy::schedule_seeded`]): no backoff or jitter formula is written
//! here.

use std::time::Duration;

use backoff_runtime::{Jitter, Policy, Schedule};

/// How a failed call is retried.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Strategy {
    /// No backoff at all: retry as soon as the failure is known.
    Immediate,
    /// The runtime's truncated exponential backoff with this jitter mode.
    Backoff(Jitter),
}

impl Strategy {
    /// Every strategy compared, in the order of the tables and charts.
    pub(crate) const ALL: [Strategy; 7] = [
        Strategy::Immediate,
        Strategy::Backoff(Jitter::None),
        Strategy::Backoff(Jitter::Additive),
        Strategy::Backoff(Jitter::Grpc),
        Strategy::Backoff(Jitter::Equal),
        Strategy::Backoff(Jitter::Full),
        Strategy::Backoff(Jitter::Decorrelated),
    ];

    /// A short name for tables and legends.
    pub(crate) fn label(self) -> &'static str {
        match self {
            Strategy::Immediate => "no backoff",
            Strategy::Backoff(Jitter::None) => "no jitter",
            Strategy::Backoff(Jitter::Additive) => "additive",
            Strategy::Backoff(Jitter::AdditiveUpTo(_)) => "additive (amount)",
            Strategy::Backoff(Jitter::Equal) => "equal",
            Strategy::Backoff(Jitter::Full) => "full",
            Strategy::Backoff(Jitter::Decorrelated) => "decorrelated",
            Strategy::Backoff(Jitter::Grpc) => "grpc",
            Strategy::Backoff(_) => "other jitter",
        }
    }

    /// The retrier of one client (or one request): `policy` with this
    /// strategy's jitter, drawing from a generator seeded with `seed`.
    pub(crate) fn retrier(self, policy: &Policy, seed: u64) -> Retrier {
        match self {
            Strategy::Immediate => Retrier::Immediate {
                retries_left: policy.get_max_retries(),
            },
            Strategy::Backoff(jitter) => Retrier::Scheduled(policy.jitter(jitter).schedule_seeded(seed)),
        }
    }
}

/// The waits of one client: the runtime's schedule iterator, or zero waits
/// for [`Strategy::Immediate`]. Both stop after the policy's `max_retries`.
#[derive(Clone, Debug)]
pub(crate) enum Retrier {
    /// Retry at once, this many more times.
    Immediate {
        /// Retries not yet used.
        retries_left: u32,
    },
    /// The runtime's schedule, with this client's own generator.
    Scheduled(Schedule),
}

impl Retrier {
    /// The wait before the next retry, or `None` when the retries are used up
    /// and the caller gives up.
    pub(crate) fn next_wait(&mut self) -> Option<Duration> {
        match self {
            Retrier::Immediate { retries_left } => {
                *retries_left = retries_left.checked_sub(1)?;
                Some(Duration::ZERO)
            }
            Retrier::Scheduled(schedule) => schedule.next(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retriers_follow_the_runtime_schedule() {
        let policy = Policy::new()
            .max_retries(3)
            .initial_backoff(Duration::from_millis(10))
            .jitter(Jitter::Full);
        let mut immediate = Strategy::Immediate.retrier(&policy, 1);
        let waits: Vec<_> = std::iter::from_fn(|| immediate.next_wait()).collect();
        assert_eq!(waits, [Duration::ZERO; 3]);

        let mut none = Strategy::Backoff(Jitter::None).retrier(&policy, 1);
        let waits: Vec<_> = std::iter::from_fn(|| none.next_wait()).collect();
        assert_eq!(waits, [10, 20, 40].map(Duration::from_millis));

        let mut full = Strategy::Backoff(Jitter::Full).retrier(&policy, 7);
        let expected: Vec<_> = policy.schedule_seeded(7).collect();
        let waits: Vec<_> = std::iter::from_fn(|| full.next_wait()).collect();
        assert_eq!(waits, expected);
    }
}
