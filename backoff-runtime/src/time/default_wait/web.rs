//! The default wait on wasm32-unknown-unknown.
//!
//! It is futures-timer's `Delay`, which calls the platform's `setTimeout` there (browsers, workers, Node).
//!
//! - `setTimeout` counts whole milliseconds: a wait is rounded up to the next one.
//! - It takes at most 2^31 - 1 ms (about 24.8 days): a longer wait is served in parts.
//! - A timer may fire before its deadline on the web clock (Node rounds its timers):
//!   the wait starts again for what is left, so it never ends early.
//! - futures-timer keeps the JavaScript timer in a `SendWrapper`: the wait is `Send`,
//!   and it is dropped on the thread that made it, the only one there is.

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};
use core::time::Duration;

use crate::time::Instant;
use crate::time::clock::far_deadline;

/// The longest wait one `setTimeout` takes: 2^31 - 1 milliseconds.
const LONGEST_TIMEOUT: Duration = Duration::from_millis(i32::MAX as u64);

/// A wait on `setTimeout`, held to its deadline on the web clock.
#[derive(Debug)]
#[allow(unreachable_pub)] // named only by `DefaultWait`'s variant
pub struct WebDelay {
    delay: futures_timer::Delay,
    deadline: Instant,
}

/// What one `setTimeout` is asked for, of a wait of `left`: whole
/// milliseconds rounded up, at most [`LONGEST_TIMEOUT`].
fn one_timeout(left: Duration) -> Duration {
    let millis = left.as_nanos().div_ceil(1_000_000);
    u64::try_from(millis)
        .map_or(LONGEST_TIMEOUT, Duration::from_millis)
        .min(LONGEST_TIMEOUT)
}

impl WebDelay {
    /// A wait of `wait` from now.
    pub(crate) fn new(wait: Duration) -> Self {
        WebDelay {
            delay: futures_timer::Delay::new(one_timeout(wait)),
            deadline: far_deadline(Instant::now(), wait),
        }
    }

    /// The next wait, of `wait` from now, in place.
    pub(crate) fn reset(&mut self, wait: Duration) {
        self.deadline = far_deadline(Instant::now(), wait);
        self.delay.reset(one_timeout(wait));
    }
}

impl Future for WebDelay {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        loop {
            if Pin::new(&mut this.delay).poll(cx).is_pending() {
                return Poll::Pending;
            }
            let now = Instant::now();
            if now >= this.deadline {
                return Poll::Ready(());
            }
            this.delay
                .reset(one_timeout(this.deadline.saturating_duration_since(now)));
        }
    }
}
