//! Per-attempt timeouts.
//!
//! Per-attempt timeouts (`timeout = "5s"` on async functions), on the
//! default timer: tokio's inside a tokio runtime, futures-timer's elsewhere.

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};
use core::time::Duration;

use crate::time::cold_box::ColdBox;
use crate::time::default_wait::DefaultWait;

crate::stand_in::stand_in_error!(
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
    Elapsed,
    "attempt timed out",
    TimedOut
);

/// The bound behind `timeout = "..."`: the error type must absorb [`Elapsed`].
#[diagnostic::on_unimplemented(
    message = "`timeout = ...` needs the function's error type to implement `From<backoff_runtime::Elapsed>`, and `{Self}` does not",
    label = "a timed-out attempt becomes this error type",
    note = "add `impl From<backoff_runtime::Elapsed> for {Self}` (e.g. a `Timeout` variant), so a timed-out attempt is an error that `retry_if` can classify"
)]
///
/// Implemented for every `E: From<Elapsed>`:
///
/// ```
/// use backoff_runtime::Elapsed;
/// use backoff_runtime::bounds::FromElapsed;
///
/// let timed_out: std::io::Error = FromElapsed::from_elapsed();
/// assert_eq!(timed_out.kind(), std::io::ErrorKind::TimedOut);
/// # let _ = Elapsed::new();
/// ```
pub trait FromElapsed {
    /// The error standing for a timed-out attempt.
    fn from_elapsed() -> Self;
}

impl<E: From<Elapsed>> FromElapsed for E {
    fn from_elapsed() -> Self {
        E::from(Elapsed)
    }
}

/// What a per-attempt timeout (`timeout = ...`, the builder's
/// `.timeout(...)`) needs: a default timer, the `tokio` or `futures-timer`
/// feature (both on by default), even with a `sleep = ...` of one's own. A
/// name compile errors use: with either feature every type has it.
///
/// ```
/// use backoff_runtime::bounds::TimeoutSupport;
///
/// fn times_out<R: TimeoutSupport>() {}
/// # #[cfg(any(feature = "tokio", feature = "futures-timer"))]
/// times_out::<Result<u8, std::io::Error>>();
/// ```
#[diagnostic::on_unimplemented(
    message = "`timeout = ...` (the builder's `.timeout(...)`) needs a timer: the `tokio` or `futures-timer` feature of `backoff-runtime`",
    label = "per-attempt timeouts use the default timer",
    note = "enable one: `backoff-runtime = {{ version = \"0.1\", features = [\"futures-timer\"] }}` (any executor) or `[\"tokio\"]`"
)]
pub trait TimeoutSupport {
    /// Nothing: the bound is the check.
    fn has_default_timer() {}
}

#[cfg(any(feature = "tokio", feature = "futures-timer"))]
impl<T: ?Sized> TimeoutSupport for T {}

pin_project_lite::pin_project! {
    /// An attempt raced by the default timer's wait: the attempt is polled
    /// first, so one that is ready at its deadline wins.
    #[derive(Debug)]
    pub struct TimedAttempt<Fut> {
        #[pin]
        attempt: Fut,
        #[pin]
        deadline: DefaultWait,
    }
}

impl<Fut: Future> Future for TimedAttempt<Fut> {
    type Output = Result<Fut::Output, Elapsed>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        if let Poll::Ready(output) = this.attempt.poll(cx) {
            return Poll::Ready(Ok(output));
        }
        this.deadline.poll(cx).map(|()| Err(Elapsed))
    }
}

pin_project_lite::pin_project! {
    /// One attempt, under its timeout when it has one: the one per-attempt
    /// timeout of the attribute and the builder.
    #[project = TimedProj]
    #[derive(Debug)]
    // pin-project-lite takes no doc comment on a variant's field; the
    // variants' docs say what each holds.
    #[allow(missing_docs)]
    pub enum Timed<Fut, R> {
        /// No timeout.
        Untimed { #[pin] attempt: Fut },
        /// Under a timeout; a timed-out attempt returns `on_elapsed()`. Boxed:
        /// the default timer's wait can be a whole tokio `Sleep`, which an attempt without
        /// a timeout should not carry; freed out of line, so that what holds
        /// an attempt without a timeout (the builder's phase) inlines its drop.
        UnderTimeout { attempt: ColdBox<TimedAttempt<Fut>>, on_elapsed: fn() -> R },
        /// No time left before `max_elapsed`: not started, timed out unpolled.
        NotStarted { on_elapsed: fn() -> R },
    }
}

impl<Fut: Future, R> Timed<Fut, R> {
    /// `attempt` without a timeout.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn untimed(attempt: Fut) -> Self {
        Timed::Untimed { attempt }
    }

    /// `attempt` under `timeout` (not started when `timeout` is zero).
    #[inline]
    #[cfg_attr(
        not(any(feature = "tokio", feature = "futures-timer")),
        allow(unreachable_code, unused_variables)
    )] // no backend: nothing to wait on
    pub fn with_timeout_of(timeout: Duration, attempt: Fut, on_elapsed: fn() -> R) -> Self {
        if timeout.is_zero() {
            return Timed::NotStarted { on_elapsed };
        }
        let attempt = TimedAttempt {
            attempt,
            deadline: DefaultWait::start(timeout),
        };
        Timed::UnderTimeout {
            attempt: ColdBox::new(attempt),
            on_elapsed,
        }
    }
}

/// One attempt of the attribute's async loop under `timeout = ...`, timed
/// to `timeout` (the expansion checks [`TimeoutSupport`] on the key).
#[cfg_attr(not(debug_assertions), inline(always))]
pub fn with_timeout<R, Fut: Future>(timeout: Duration, attempt: Fut, on_elapsed: fn() -> R) -> Timed<Fut, R> {
    Timed::with_timeout_of(timeout, attempt, on_elapsed)
}

impl<Fut: Future<Output = R>, R> Future for Timed<Fut, R> {
    type Output = R;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<R> {
        match self.project() {
            TimedProj::Untimed { attempt } => attempt.poll(cx),
            TimedProj::UnderTimeout { attempt, on_elapsed } => match attempt.get().map(|attempt| attempt.poll(cx)) {
                Some(Poll::Ready(Ok(result))) => Poll::Ready(result),
                // Timed out, or (emptied only by its drop) never polled again.
                Some(Poll::Ready(Err(_))) | None => Poll::Ready(on_elapsed()),
                Some(Poll::Pending) => Poll::Pending,
            },
            TimedProj::NotStarted { on_elapsed } => Poll::Ready(on_elapsed()),
        }
    }
}
