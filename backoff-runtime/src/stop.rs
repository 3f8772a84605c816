//! Why a retry loop ended with an error.

use core::fmt;

/// Why the retries ended and the last error was returned. The checks run in
/// this order after each failed attempt, and the first that holds wins:
/// `Permanent`, `Exhausted`, `HintAboveCap`, `Deadline`, `Budget`.
///
/// ```
/// use backoff_runtime::StopReason;
/// assert_eq!(StopReason::Exhausted.to_string(), "retries exhausted");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StopReason {
    /// `retry_if` said the error is permanent: retrying cannot help.
    Permanent,
    /// `max_retries` retries were made.
    Exhausted,
    /// The server asked to wait longer than `max_backoff` allows.
    HintAboveCap,
    /// The next wait would end past `max_elapsed`.
    Deadline,
    /// The shared retry budget refused the retry.
    Budget,
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            StopReason::Permanent => "error is not retryable",
            StopReason::Exhausted => "retries exhausted",
            StopReason::HintAboveCap => "server hint exceeds max_backoff",
            StopReason::Deadline => "next wait would pass max_elapsed",
            StopReason::Budget => "retry budget exhausted",
        })
    }
}
