//! One layer retries.
//!
//! When a retried function gives up inside an attempt of
//! another (the same call chain), the outer loop does not retry that
//! failure; it stops with [`StopReason::RetriedBelow`](crate::StopReason).
//!
//! The chain is one flag per thread, "the last retried call that ended in
//! this attempt gave up":
//! - a retried call that gives up (for any reason but `Permanent`) sets it;
//!   one that succeeds clears it (it recovered, or a fallback did);
//! - a sync loop clears it before each attempt and reads it after a failed
//!   one;
//! - an async loop brackets each poll of its attempt ([`NestedAttempt`]):
//!   it clears the flag before the poll, reads what the poll left, and puts
//!   the enclosing value back. Whatever runs
//!   inside the attempt's polls is its call chain, whichever worker thread
//!   each poll runs on; other tasks polled on the thread in between never
//!   see or change it, and spawned tasks are separate chains. The attempt
//!   keeps no value across polls: remembering one byte would cost the
//!   function's future 8 bytes (over the budget for a `&mut self` method;
//!   BENCHMARKS.md, "Future sizes"), so the flag counts when the retried call ended in
//!   the poll that ends the attempt: `inner().await?`, and any body that
//!   does not await something not yet ready after it.

use core::cell::Cell;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

thread_local! {
    /// Whether a retried function gave up below the attempt running here.
    static GAVE_UP_BELOW: Cell<bool> = const { Cell::new(false) };
}

/// Starts a sync attempt: nothing has given up below it yet.
///
/// ```
/// backoff_runtime::__private::enter_attempt();
/// ```
#[cfg_attr(not(debug_assertions), inline(always))]
pub fn enter_attempt() {
    GAVE_UP_BELOW.set(false);
}

/// Whether a retried function gave up below the sync attempt that just
/// failed.
#[inline]
pub(crate) fn gave_up_below() -> bool {
    GAVE_UP_BELOW.get()
}

/// A loop gave up: the loop around it (if any) learns it.
#[inline]
pub(crate) fn mark_given_up() {
    GAVE_UP_BELOW.set(true);
}

/// A retried call succeeded: whatever gave up below it earlier in the
/// enclosing attempt was recovered from, so the enclosing loop may retry
/// its own later failures.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn mark_succeeded() {
    GAVE_UP_BELOW.set(false);
}

pin_project_lite::pin_project! {
    /// An async attempt whose polls are bracketed, so that a retried function
    /// giving up inside it is seen by its loop alone. Its output is the
    /// attempt's result and whether the last retried call that ended in the
    /// poll that ended it gave up.
    ///
    /// Its field is public: the expansion writes a struct literal, where
    /// a call of `new` would be one more generic function for rustc to
    /// check and instantiate per annotated function.
    ///
    /// ```
    /// use backoff_runtime::__private::NestedAttempt;
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let (result, below) = NestedAttempt::new(async { Ok::<_, ()>(1) }).await;
    /// assert_eq!((result, below), (Ok(1), false));
    /// # }
    /// ```
    // `pin_project!` takes no doc on a field: the field is described above.
    #[allow(missing_docs)]
    #[derive(Debug)]
    pub struct NestedAttempt<F> {
        #[pin]
        pub attempt: F,
    }
}

impl<F> NestedAttempt<F> {
    /// Brackets `attempt`'s polls.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn new(attempt: F) -> Self {
        NestedAttempt { attempt }
    }
}

impl<F: Future> Future for NestedAttempt<F> {
    type Output = (F::Output, bool);

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let enclosing = GAVE_UP_BELOW.replace(false);
        let polled = this.attempt.poll(cx);
        let below = GAVE_UP_BELOW.replace(enclosing);
        match polled {
            Poll::Ready(result) => Poll::Ready((result, below)),
            Poll::Pending => Poll::Pending,
        }
    }
}
