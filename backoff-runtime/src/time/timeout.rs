//! Per-attempt timeouts (`timeout = "5s"` on async functions).

use core::fmt;
use core::future::Future;
use core::time::Duration;

use crate::run::result::RetryResult;

/// The error of an attempt cut short by `timeout = "..."`. A function with a
/// timeout needs `E: From<Elapsed>` so the timed-out attempt becomes an
/// ordinary error that `retry_if` classifies like any other.
///
/// ```
/// use backoff_runtime::Elapsed;
///
/// let io: std::io::Error = Elapsed::new().into();
/// assert_eq!(io.kind(), std::io::ErrorKind::TimedOut);
/// assert_eq!(Elapsed::new().to_string(), "attempt timed out");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Elapsed;

impl Elapsed {
    /// An `Elapsed` error (for tests and for converting by hand).
    ///
    /// ```
    /// assert_eq!(backoff_runtime::Elapsed::new(), backoff_runtime::Elapsed::default());
    /// ```
    #[must_use]
    pub const fn new() -> Self {
        Elapsed
    }
}

impl fmt::Display for Elapsed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("attempt timed out")
    }
}

impl std::error::Error for Elapsed {}

impl From<Elapsed> for std::io::Error {
    fn from(elapsed: Elapsed) -> Self {
        std::io::Error::new(std::io::ErrorKind::TimedOut, elapsed)
    }
}

/// The bound behind `timeout = "..."`: the error type must absorb [`Elapsed`].
#[diagnostic::on_unimplemented(
    message = "`timeout = ...` needs the function's error type to implement `From<backoff_runtime::Elapsed>`, and `{Self}` does not",
    label = "a timed-out attempt becomes this error type",
    note = "add `impl From<backoff_runtime::Elapsed> for {Self}` (e.g. a `Timeout` variant), so a timed-out attempt is an error that `retry_if` can classify"
)]
pub trait FromElapsed {
    /// The error standing for a timed-out attempt.
    fn from_elapsed() -> Self;
}

impl<E: From<Elapsed>> FromElapsed for E {
    fn from_elapsed() -> Self {
        E::from(Elapsed)
    }
}

/// The result standing for a timed-out attempt, as a function pointer: the
/// `From<Elapsed>` bound is checked here, once, so a missing impl is one
/// error on the `timeout` key.
#[inline(always)]
pub fn timed_out_result<R>() -> fn() -> R
where
    R: RetryResult,
    R::Err: FromElapsed,
{
    || R::from_result(Err(R::Err::from_elapsed()))
}

/// The bound that reports `timeout = ...` without the `tokio` feature.
#[diagnostic::on_unimplemented(
    message = "`timeout = ...` needs the `tokio` feature of `backoff-runtime`",
    label = "per-attempt timeouts use tokio's timer",
    note = "enable it: `backoff-runtime = {{ version = \"0.1\", features = [\"tokio\"] }}`"
)]
pub trait TimeoutSupport {}

#[cfg(feature = "tokio")]
impl TimeoutSupport for crate::run::async_loop::TokioSleeper {}

/// Runs one attempt with a time limit; a timed-out attempt returns
/// `on_elapsed()`. An attempt with no time at all (`max_elapsed` already
/// reached when it would start) is not started: it is timed out unpolled.
#[cfg(feature = "tokio")]
pub async fn with_timeout<S, R, F>(limit: Duration, attempt: F, on_elapsed: fn() -> R) -> R
where
    S: TimeoutSupport,
    F: Future<Output = R>,
{
    if limit.is_zero() {
        return on_elapsed();
    }
    match tokio::time::timeout(limit, attempt).await {
        Ok(result) => result,
        Err(_) => on_elapsed(),
    }
}

/// Without the `tokio` feature, `S: TimeoutSupport` cannot hold, so this does
/// not compile in a user's crate: the error names the missing feature.
#[cfg(not(feature = "tokio"))]
pub async fn with_timeout<S, R, F>(_limit: Duration, attempt: F, _on_elapsed: fn() -> R) -> R
where
    S: TimeoutSupport,
    F: Future<Output = R>,
{
    attempt.await
}
