//! Why a retry loop ended with an error.

use core::fmt;

/// Why the retries ended and the last error was returned. The checks run in
/// this order after each failed attempt, and the first that holds wins:
/// `Permanent`, `RetriedBelow`, `Exhausted`, `HintAboveCap`, `Deadline`,
/// `Budget`. `Refused` is not one of them: it ends a call before an attempt
/// (the first or a retry) that the limiter named in `admission = ...`
/// refused. Nor is `Committed`: it ends a gRPC call whose status came after
/// its response had begun.
///
/// ```
/// use backoff_runtime::StopReason;
/// assert_eq!(StopReason::Exhausted.to_string(), "retries exhausted");
/// // The message of a default a newcomer may not expect names the other choice.
/// assert!(StopReason::HintAboveCap.to_string().contains("hint_above_cap = cap"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StopReason {
    /// `retry_if` said the error is permanent: retrying cannot help.
    Permanent,
    /// A retried function this attempt called gave up: the failure was
    /// already retried one layer below, and retrying it here would multiply
    /// the calls (`nested = retry` retries it anyway).
    RetriedBelow,
    /// `max_retries` retries were made.
    Exhausted,
    /// The server asked to wait longer than `max_backoff` allows. The
    /// default; `hint_above_cap = cap` (the builder's and the layer's
    /// `Policy::hint_above_cap`) waits `max_backoff` and retries instead.
    /// Its message says so.
    HintAboveCap,
    /// The next wait would end past `max_elapsed` (checked again after a
    /// `before_retry` action, whose time counts).
    Deadline,
    /// The limit given as `budget = ...` refused the retry: a
    /// [`RetryBudget`](crate::limits::RetryBudget) or a
    /// [`RetryThrottle`](crate::limits::RetryThrottle), whichever it is.
    Budget,
    /// The limiter given as `admission = ...` refused the next attempt (the
    /// first included: then no attempt ran, and the event's `attempts` is
    /// 0): the call returns `E::from(`[`Refused`](crate::limits::Refused)`)`
    /// without running the body again.
    Refused,
    /// The attempt had committed the call, then failed with a retryable
    /// status: a gRPC response whose headers arrived, and whose trailers
    /// then said `UNAVAILABLE`. Its messages may have reached the caller,
    /// so it is not retried. A throttle counts it as a failure (gRPC's A6).
    Committed,
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            StopReason::Permanent => "error is not retryable",
            StopReason::RetriedBelow => "a retried function it called gave up",
            StopReason::Exhausted => "retries exhausted",
            StopReason::HintAboveCap => {
                "server hint exceeds max_backoff (hint_above_cap = cap waits max_backoff and retries instead)"
            }
            StopReason::Deadline => "next wait would pass max_elapsed",
            StopReason::Budget => "retry budget or throttle refused the retry",
            StopReason::Refused => "the admission limiter refused the attempt",
            StopReason::Committed => "the call had committed before it failed",
        })
    }
}

impl StopReason {
    /// Every reason, in the order of the checks.
    #[cfg_attr(not(any(test, feature = "metrics")), allow(dead_code))]
    pub(crate) const ALL: [StopReason; 8] = [
        StopReason::Permanent,
        StopReason::RetriedBelow,
        StopReason::Exhausted,
        StopReason::HintAboveCap,
        StopReason::Deadline,
        StopReason::Budget,
        StopReason::Refused,
        StopReason::Committed,
    ];

    /// The reason as a metric label (snake case).
    #[cfg_attr(not(feature = "metrics"), allow(dead_code))]
    pub(crate) fn label(self) -> &'static str {
        match self {
            StopReason::Permanent => "permanent",
            StopReason::RetriedBelow => "retried_below",
            StopReason::Exhausted => "exhausted",
            StopReason::HintAboveCap => "hint_above_cap",
            StopReason::Deadline => "deadline",
            StopReason::Budget => "budget",
            StopReason::Refused => "refused",
            StopReason::Committed => "committed",
        }
    }

    /// The reason's place in [`ALL`](Self::ALL).
    #[cfg_attr(not(feature = "metrics"), allow(dead_code))]
    pub(crate) fn index(self) -> usize {
        match self {
            StopReason::Permanent => 0,
            StopReason::RetriedBelow => 1,
            StopReason::Exhausted => 2,
            StopReason::HintAboveCap => 3,
            StopReason::Deadline => 4,
            StopReason::Budget => 5,
            StopReason::Refused => 6,
            StopReason::Committed => 7,
        }
    }
}

#[cfg(test)]
mod tests;
