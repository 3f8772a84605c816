//! [`HedgeAttempts`]: the attempts of a hedged call that still run, polled
//! together.
//!
//! The first is kept inline (a call answered before the hedge delay allocates
//! nothing for it); each hedge beside it is boxed.

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

pin_project_lite::pin_project! {
    /// The attempts of a hedged call that still run. Dropping it cancels
    /// them all.
    ///
    /// ```
    /// use backoff_runtime::__front_end::HedgeAttempts;
    /// use std::future::ready;
    /// use std::pin::pin;
    ///
    /// let mut attempts = pin!(HedgeAttempts::new());
    /// attempts.as_mut().push(ready(1));
    /// attempts.as_mut().push(ready(2));
    /// assert_eq!(attempts.len(), 2);
    /// let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    /// assert_eq!(attempts.as_mut().poll_next(&mut cx), std::task::Poll::Ready(Some(1)));
    /// assert_eq!(attempts.len(), 1);
    /// ```
    #[derive(Debug)]
    pub struct HedgeAttempts<F> {
        #[pin]
        first: Option<F>,
        others: Vec<Pin<Box<F>>>,
    }
}

impl<F> Default for HedgeAttempts<F> {
    fn default() -> Self {
        Self::new()
    }
}

impl<F> HedgeAttempts<F> {
    /// No attempt yet.
    #[must_use]
    pub const fn new() -> Self {
        HedgeAttempts {
            first: None,
            others: Vec::new(),
        }
    }

    /// How many attempts run.
    #[must_use]
    pub fn len(&self) -> usize {
        usize::from(self.first.is_some()) + self.others.len()
    }

    /// Whether no attempt runs.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.first.is_none() && self.others.is_empty()
    }

    /// Starts `attempt` beside the others: inline when the inline slot is
    /// free, else boxed.
    pub fn push(self: Pin<&mut Self>, attempt: F) {
        let mut this = self.project();
        if this.first.is_none() {
            this.first.set(Some(attempt));
        } else {
            this.others.push(Box::pin(attempt));
        }
    }

    /// Cancels every attempt still running.
    pub fn clear(self: Pin<&mut Self>) {
        let mut this = self.project();
        this.first.set(None);
        this.others.clear();
    }
}

impl<F: Future> HedgeAttempts<F> {
    /// The output of an attempt that ended (it is removed), `None` when
    /// none runs, or pending.
    pub fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<F::Output>> {
        let mut this = self.project();
        if let Some(first) = this.first.as_mut().as_pin_mut() {
            if let Poll::Ready(output) = first.poll(cx) {
                this.first.set(None);
                return Poll::Ready(Some(output));
            }
        }
        for index in 0..this.others.len() {
            if let Poll::Ready(output) = this.others[index].as_mut().poll(cx) {
                drop(this.others.swap_remove(index));
                return Poll::Ready(Some(output));
            }
        }
        if this.first.is_none() && this.others.is_empty() {
            Poll::Ready(None)
        } else {
            Poll::Pending
        }
    }
}

#[cfg(test)]
mod tests;
