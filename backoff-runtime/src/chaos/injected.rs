//! [`Injected`]: one async attempt under an injector.

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, ready};

use crate::time::default_wait::DefaultWait;

pin_project_lite::pin_project! {
    /// One async attempt under an [`Injector`](super::Injector): ready at
    /// once with an injected result, or polled after an injected wait, or
    /// polled as it is. Made by [`Injector::attempt`](super::Injector::attempt).
    ///
    /// ```
    /// use backoff_runtime::chaos::{Injector, Rate};
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// static FAKE: Injector<u8, ()> = Injector::new().outcome(Rate::new(1.0), || 9);
    /// assert_eq!(FAKE.attempt(async { Ok(1) }).await, Ok(9));
    /// # }
    /// ```
    #[must_use = "an attempt does nothing unless awaited"]
    pub struct Injected<Fut, T, E> {
        // The injected result, taken by the first poll.
        now: Option<Result<T, E>>,
        // The injected wait, before the attempt's first poll.
        #[pin]
        wait: Option<DefaultWait>,
        // The attempt: never polled when a result was injected.
        #[pin]
        attempt: Fut,
    }
}

impl<Fut, T, E> core::fmt::Debug for Injected<Fut, T, E> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Injected")
            .field("injected", &self.now.is_some())
            .field("waiting", &self.wait.is_some())
            .finish_non_exhaustive()
    }
}

impl<Fut, T, E> Injected<Fut, T, E> {
    /// The attempt, untouched.
    pub(super) fn running(attempt: Fut) -> Self {
        Injected {
            now: None,
            wait: None,
            attempt,
        }
    }

    /// `result` instead of the attempt.
    pub(super) fn now(attempt: Fut, result: Result<T, E>) -> Self {
        Injected {
            now: Some(result),
            wait: None,
            attempt,
        }
    }

    /// The attempt after `wait`.
    pub(super) fn after(wait: DefaultWait, attempt: Fut) -> Self {
        Injected {
            now: None,
            wait: Some(wait),
            attempt,
        }
    }
}

impl<Fut, T, E> Future for Injected<Fut, T, E>
where
    Fut: Future<Output = Result<T, E>>,
{
    type Output = Result<T, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<T, E>> {
        let mut this = self.project();
        if let Some(result) = this.now.take() {
            return Poll::Ready(result);
        }
        if let Some(wait) = this.wait.as_mut().as_pin_mut() {
            ready!(wait.poll(cx));
            this.wait.set(None);
        }
        this.attempt.poll(cx)
    }
}
