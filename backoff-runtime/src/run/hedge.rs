//! A hedged call's attempts, and where its next attempt stands.
//!
//! [`Hedging`] is what the builder's hedged future and the tower layer's
//! hedged call both drive.
//! The attempts ([`HedgeAttempts`]) keep the first inline (a call answered
//! before the hedge delay allocates nothing for it); each hedge beside it is
//! boxed. The driver decides after each failure (`Loop::hedge_failed`) and
//! before each hedge (`Loop::may_hedge`); [`Hedging`] carries out its
//! decisions: the wait it starts, and what starts when that wait ends.

use core::future::Future;
use core::mem;
use core::pin::Pin;
use core::task::{Context, Poll, ready};
use core::time::Duration;

use crate::run::driver::HedgeStep;
use crate::time::sleep::{InlineTimer, Timer};

pin_project_lite::pin_project! {
    /// The attempts of a hedged call that still run. Dropping it cancels
    /// them all.
    #[derive(Debug)]
    pub(crate) struct HedgeAttempts<F> {
        #[pin]
        first: Option<F>,
        others: Vec<Pin<Box<F>>>,
    }
}

impl<F> HedgeAttempts<F> {
    /// No attempt yet.
    pub(crate) const fn new() -> Self {
        HedgeAttempts {
            first: None,
            others: Vec::new(),
        }
    }

    /// How many attempts run.
    pub(crate) fn len(&self) -> usize {
        usize::from(self.first.is_some()) + self.others.len()
    }

    /// Whether no attempt runs.
    pub(crate) fn is_empty(&self) -> bool {
        self.first.is_none() && self.others.is_empty()
    }

    /// Starts `attempt` beside the others: inline when the inline slot is
    /// free, else boxed.
    pub(crate) fn push(self: Pin<&mut Self>, attempt: F) {
        let mut this = self.project();
        if this.first.is_none() {
            this.first.set(Some(attempt));
        } else {
            this.others.push(Box::pin(attempt));
        }
    }

    /// Cancels every attempt still running.
    pub(crate) fn clear(self: Pin<&mut Self>) {
        let mut this = self.project();
        this.first.set(None);
        this.others.clear();
    }
}

impl<F: Future> HedgeAttempts<F> {
    /// The output of an attempt that ended (it is removed), `None` when
    /// none runs, or pending.
    pub(crate) fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<F::Output>> {
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

/// What starts a hedged call's next attempt when its wait ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Next {
    /// The hedge delay: the next attempt asks the driver first.
    Hedge,
    /// A failure's wait (the budget already allowed it), or the admission
    /// limiter's.
    Retry,
}

/// Where a hedged call's next attempt stands.
#[derive(Clone, Copy, Debug, Default)]
struct Stand {
    /// What starts an attempt when the pending wait ends; `None`: nothing.
    next: Option<Next>,
    /// An attempt starts on the next poll.
    start_now: bool,
    /// The hedge delay's wait is still to start: it starts when the
    /// attempts are first found running (a call answered at once makes no
    /// timer).
    arm_hedge: bool,
    /// No hedge starts any more (a stop rule held while others ran).
    no_more: bool,
    /// The server refused a retry: no attempt follows any more.
    server_refused: bool,
}

impl Stand {
    /// After an attempt starts: the next hedge follows the delay, unless
    /// none may start. Its wait starts when the attempts are found running.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn next_hedge(&mut self) {
        self.arm_hedge = !self.no_more;
        self.next = self.arm_hedge.then_some(Next::Hedge);
    }
}

pin_project_lite::pin_project! {
    /// A hedged call's attempts running side by side, the wait before its
    /// next attempt (on the timer `Tm`), and where that attempt stands.
    /// Dropping it cancels the attempts.
    ///
    /// The caller asks the driver and the admission limiter; this carries
    /// out what they decide.
    ///
    /// ```
    /// use backoff_runtime::__front_end::Hedging;
    /// use std::future::{Ready, ready};
    /// use std::pin::pin;
    /// use std::task::{Context, Poll, Waker};
    ///
    /// // The first attempt runs elsewhere; the next hedge waits for the delay.
    /// let mut hedging = pin!(Hedging::<Ready<u32>>::beside_first());
    /// assert!(!hedging.as_mut().starts_now());
    /// hedging.as_mut().push(ready(2));
    /// assert_eq!(hedging.len(), 1);
    /// let mut cx = Context::from_waker(Waker::noop());
    /// assert_eq!(hedging.as_mut().poll_next(&mut cx), Poll::Ready(Some(2)));
    /// assert!(hedging.is_empty());
    /// ```
    pub struct Hedging<F, Tm: Timer = InlineTimer> {
        #[pin]
        attempts: HedgeAttempts<F>,
        #[pin]
        pending: Option<Tm::Pending>,
        timer: Tm,
        stand: Stand,
    }
}

impl<F, Tm: Timer> core::fmt::Debug for Hedging<F, Tm> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Hedging")
            .field("running", &self.attempts.len())
            .field("waiting", &self.pending.is_some())
            .finish_non_exhaustive()
    }
}

impl<F> Hedging<F> {
    /// The rest of a hedged call whose first attempt runs elsewhere: no
    /// attempt here yet, and the next hedge after the delay.
    #[must_use]
    pub fn beside_first() -> Self {
        let mut hedging = Hedging::with_timer(InlineTimer);
        hedging.stand.next_hedge();
        hedging
    }
}

impl<F, Tm: Timer> Hedging<F, Tm> {
    /// A hedged call on `timer`, its first attempt to start on the first
    /// poll.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn starting(timer: Tm) -> Self {
        let mut hedging = Hedging::with_timer(timer);
        hedging.stand.start_now = true;
        hedging
    }

    /// No attempt, no wait, nothing to start.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn with_timer(timer: Tm) -> Self {
        Hedging {
            attempts: HedgeAttempts::new(),
            pending: None,
            timer,
            stand: Stand::default(),
        }
    }

    /// How many attempts run.
    #[must_use]
    pub fn len(&self) -> usize {
        self.attempts.len()
    }

    /// Whether no attempt runs.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.attempts.is_empty()
    }

    /// Whether an attempt is to start now. Asking takes the answer: the
    /// caller starts it ([`push`](Self::push)), or puts it off
    /// ([`wait_to_start`](Self::wait_to_start),
    /// [`stop_hedging`](Self::stop_hedging)).
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn starts_now(self: Pin<&mut Self>) -> bool {
        mem::take(&mut self.project().stand.start_now)
    }

    /// Starts `attempt` beside the others. The next hedge follows the
    /// delay, unless no more may start.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn push(self: Pin<&mut Self>, attempt: F) {
        let mut this = self.project();
        this.attempts.as_mut().push(attempt);
        this.pending.set(None);
        this.stand.next_hedge();
    }

    /// The next attempt starts after `wait` (the admission limiter's),
    /// without asking the driver again.
    pub fn wait_to_start(self: Pin<&mut Self>, wait: Duration) {
        let mut this = self.project();
        this.stand.arm_hedge = false;
        this.pending.set(Some(this.timer.start(wait)));
        this.stand.next = Some(Next::Retry);
    }

    /// No hedge starts any more: the attempts running finish the call.
    pub fn stop_hedging(self: Pin<&mut Self>) {
        self.project().stand.no_more = true;
    }

    /// Whether an attempt may follow a failure at all: not once the
    /// server refused a retry.
    #[must_use]
    pub fn may_follow(&self) -> bool {
        !self.stand.server_refused
    }

    /// Cancels every attempt still running.
    pub fn clear(self: Pin<&mut Self>) {
        self.project().attempts.clear();
    }

    /// Carries out the driver's decision after a failed attempt
    /// (`Loop::hedge_failed`). Returns the call's result when the failure
    /// ends it (the attempts still running are cancelled first). A wait
    /// before the next attempt calls `keep_charge` as it starts: the caller
    /// keeps the retry the budget allowed for it across the wait.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn decided<R>(self: Pin<&mut Self>, step: HedgeStep<R>, keep_charge: impl FnOnce()) -> Option<R> {
        let mut this = self.project();
        match step {
            HedgeStep::Return(result) => {
                this.attempts.clear();
                return Some(result);
            }
            HedgeStep::Next(wait) if wait.is_zero() => {
                this.stand.arm_hedge = false;
                this.stand.start_now = true;
            }
            HedgeStep::Next(wait) => {
                keep_charge();
                this.stand.arm_hedge = false;
                this.pending.set(Some(this.timer.start(wait)));
                this.stand.next = Some(Next::Retry);
            }
            HedgeStep::Await { server_refused } => {
                this.stand.server_refused |= server_refused;
                this.stand.no_more = true;
                if this.stand.next == Some(Next::Hedge) {
                    this.stand.arm_hedge = false;
                    this.pending.set(None);
                    this.stand.next = None;
                }
            }
        }
        None
    }

    /// Polls the wait before the next attempt. The hedge delay's (`delay`)
    /// starts now when it is still to start: the attempts were found
    /// running. Ready when the wait ended: a retry's starts its attempt; a
    /// hedge delay's starts one when hedges may still start and `may_hedge`
    /// allows it (else no more start). Pending with no wait.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn poll_wait(
        self: Pin<&mut Self>,
        delay: Duration,
        cx: &mut Context<'_>,
        may_hedge: impl FnOnce() -> bool,
    ) -> Poll<()> {
        let mut this = self.project();
        if mem::take(&mut this.stand.arm_hedge) {
            this.pending.set(Some(this.timer.start(delay)));
        }
        let Some(pending) = this.pending.as_mut().as_pin_mut() else {
            return Poll::Pending;
        };
        ready!(this.timer.poll_wait(pending, cx));
        this.pending.set(None);
        match this.stand.next.take() {
            Some(Next::Retry) => this.stand.start_now = true,
            Some(Next::Hedge) => {
                if !this.stand.no_more && may_hedge() {
                    this.stand.start_now = true;
                } else {
                    this.stand.no_more = true;
                }
            }
            None => {}
        }
        Poll::Ready(())
    }
}

impl<F: Future, Tm: Timer> Hedging<F, Tm> {
    /// The output of an attempt that ended (it is removed), `None` when
    /// none runs, or pending.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<F::Output>> {
        self.project().attempts.poll_next(cx)
    }
}

#[cfg(test)]
mod tests;
