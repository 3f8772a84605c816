//! What `on_retry`, `on_give_up` and `on_success` are told.

use core::time::Duration;

use crate::observe::stop::StopReason;

/// A retry about to happen: passed to `on_retry` before each wait.
///
/// ```
/// use backoff_runtime::{Jitter, Policy, RetryEvent};
/// use std::time::Duration;
///
/// let seen = std::cell::RefCell::new(Vec::new());
/// let policy = Policy::new().max_retries(2).jitter(Jitter::None);
/// let _ = policy
///     .retry(|| Err::<(), _>("down"))
///     .on_retry(|_, event: &RetryEvent| seen.borrow_mut().push((event.attempt(), event.wait(), event.retries_left())))
///     .sleep(|_| {})
///     .call();
/// assert_eq!(seen.into_inner(), [(1, Duration::from_secs(1), 1), (2, Duration::from_secs(2), 0)]);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RetryEvent {
    pub(crate) function: &'static str,
    pub(crate) attempt: u32,
    pub(crate) wait: Duration,
    pub(crate) elapsed: Duration,
    pub(crate) retries_left: u32,
    pub(crate) hinted: bool,
}

impl RetryEvent {
    /// The name of the retried function.
    ///
    /// ```
    /// # fn f(e: &backoff_runtime::RetryEvent) -> &str {
    /// e.function()
    /// # }
    /// ```
    #[must_use]
    pub fn function(&self) -> &'static str {
        self.function
    }

    /// The 1-based number of the attempt that failed.
    ///
    /// ```
    /// # fn f(e: &backoff_runtime::RetryEvent) -> u32 {
    /// e.attempt()
    /// # }
    /// ```
    #[must_use]
    pub fn attempt(&self) -> u32 {
        self.attempt
    }

    /// The wait chosen before the next attempt.
    ///
    /// ```
    /// # fn f(e: &backoff_runtime::RetryEvent) -> std::time::Duration {
    /// e.wait()
    /// # }
    /// ```
    #[must_use]
    pub fn wait(&self) -> Duration {
        self.wait
    }

    /// Time since the first call began (monotonic).
    ///
    /// ```
    /// # fn f(e: &backoff_runtime::RetryEvent) -> std::time::Duration {
    /// e.elapsed()
    /// # }
    /// ```
    #[must_use]
    pub fn elapsed(&self) -> Duration {
        self.elapsed
    }

    /// Retries still allowed after this one.
    ///
    /// ```
    /// # fn f(e: &backoff_runtime::RetryEvent) -> u32 {
    /// e.retries_left()
    /// # }
    /// ```
    #[must_use]
    pub fn retries_left(&self) -> u32 {
        self.retries_left
    }

    /// Whether the wait came from the server's hint (`retry_after`).
    ///
    /// ```
    /// # fn f(e: &backoff_runtime::RetryEvent) -> bool {
    /// e.hinted()
    /// # }
    /// ```
    #[must_use]
    pub fn hinted(&self) -> bool {
        self.hinted
    }
}

/// The end of the retries: passed to `on_give_up` once, with the error the
/// caller gets.
///
/// ```
/// use backoff_runtime::{GiveUp, Policy, StopReason};
///
/// let reasons = std::cell::RefCell::new(Vec::new());
/// let _ = Policy::new()
///     .max_retries(1)
///     .retry(|| Err::<(), _>("down"))
///     .on_give_up(|_, event: &GiveUp| reasons.borrow_mut().push((event.reason(), event.attempts())))
///     .sleep(|_| {})
///     .call();
/// assert_eq!(reasons.into_inner(), [(StopReason::Exhausted, 2)]);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct GiveUp {
    pub(crate) function: &'static str,
    pub(crate) attempts: u32,
    pub(crate) elapsed: Duration,
    pub(crate) retries_left: u32,
    pub(crate) reason: StopReason,
}

impl GiveUp {
    /// The name of the retried function.
    ///
    /// ```
    /// # fn f(e: &backoff_runtime::GiveUp) -> &str {
    /// e.function()
    /// # }
    /// ```
    #[must_use]
    pub fn function(&self) -> &'static str {
        self.function
    }

    /// How many attempts were made (the first call included).
    ///
    /// ```
    /// # fn f(e: &backoff_runtime::GiveUp) -> u32 {
    /// e.attempts()
    /// # }
    /// ```
    #[must_use]
    pub fn attempts(&self) -> u32 {
        self.attempts
    }

    /// Time since the first call began (monotonic).
    ///
    /// ```
    /// # fn f(e: &backoff_runtime::GiveUp) -> std::time::Duration {
    /// e.elapsed()
    /// # }
    /// ```
    #[must_use]
    pub fn elapsed(&self) -> Duration {
        self.elapsed
    }

    /// Retries that were still allowed when the loop stopped.
    ///
    /// ```
    /// # fn f(e: &backoff_runtime::GiveUp) -> u32 {
    /// e.retries_left()
    /// # }
    /// ```
    #[must_use]
    pub fn retries_left(&self) -> u32 {
        self.retries_left
    }

    /// Why the loop stopped.
    ///
    /// ```
    /// # fn f(e: &backoff_runtime::GiveUp) -> backoff_runtime::StopReason {
    /// e.reason()
    /// # }
    /// ```
    #[must_use]
    pub fn reason(&self) -> StopReason {
        self.reason
    }
}

/// A call that succeeded: passed to `on_success` once, when the function
/// returns its `Ok` value (never when it gives up).
///
/// ```
/// use backoff_runtime::{Policy, Success};
///
/// let seen = std::cell::Cell::new(0);
/// let mut calls = 0;
/// let _ = Policy::new()
///     .retry(|| { calls += 1; if calls < 3 { Err("busy") } else { Ok(()) } })
///     .on_success(|event: &Success| seen.set(event.attempts()))
///     .sleep(|_| {})
///     .call();
/// assert_eq!(seen.get(), 3);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Success {
    pub(crate) function: &'static str,
    pub(crate) attempts: u32,
    pub(crate) elapsed: Duration,
}

impl Success {
    /// The name of the retried function.
    ///
    /// ```
    /// # fn f(e: &backoff_runtime::Success) -> &str {
    /// e.function()
    /// # }
    /// ```
    #[must_use]
    pub fn function(&self) -> &'static str {
        self.function
    }

    /// How many attempts the call took (1: it succeeded at once).
    ///
    /// ```
    /// # fn f(e: &backoff_runtime::Success) -> u32 {
    /// e.attempts()
    /// # }
    /// ```
    #[must_use]
    pub fn attempts(&self) -> u32 {
        self.attempts
    }

    /// Whether the call needed at least one retry.
    ///
    /// ```
    /// # fn f(e: &backoff_runtime::Success) -> bool {
    /// e.retried()
    /// # }
    /// ```
    #[must_use]
    pub fn retried(&self) -> bool {
        self.attempts > 1
    }

    /// Time the call took, from its start to the end of the successful
    /// attempt (monotonic).
    ///
    /// ```
    /// # fn f(e: &backoff_runtime::Success) -> std::time::Duration {
    /// e.elapsed()
    /// # }
    /// ```
    #[must_use]
    pub fn elapsed(&self) -> Duration {
        self.elapsed
    }
}
