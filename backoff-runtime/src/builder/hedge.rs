//! `Hedged`: an awaited `Retry` that hedges, and its future.
//!
//! An awaited [`Retry`] that hedges (`hedge_after`), and its
//! future, [`HedgedFuture`]: the next attempt starts beside the one running
//! when the delay passes without an accepted answer, or at once when an
//! attempt fails with a retryable error; the first accepted result wins.

// The method's return type names the keys it keeps (one line).
#![allow(clippy::type_complexity)]

use core::future::{Future, IntoFuture};
use core::marker::PhantomData;
use core::pin::Pin;
use core::task::{Context, Poll, ready};
use core::time::Duration;

use crate::builder::action::NoAction;
use crate::builder::awaited::{AwaitedCall, Charge, Parts};
use crate::builder::config::Config;
use crate::builder::flag::Slot;
use crate::builder::operation::Awaited;
use crate::builder::owned::{Marks, OwnedHooks};
use crate::builder::retry::Retry;
use crate::limits::admission_limit::Admission;
use crate::limits::limit::Charged;
use crate::observe::site::Site;
use crate::run::hedge::Hedging;
use crate::run::nested::NestedAttempt;
use crate::run::outcome::Outcome;
use crate::time::sleep::{DefaultAsyncSleep, IntoTimer, Timer};
use crate::time::timeout::Timed;

/// An awaited [`Retry`] that hedges: made by
/// [`hedge_after`](Retry::hedge_after), awaited like the retry itself.
///
/// ```
/// use backoff_runtime::Policy;
/// use std::time::Duration;
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let policy = Policy::new().max_retries(2);
/// let hedged = policy.retry(|| async { Ok::<_, ()>("fast") }).hedge_after(Duration::from_millis(50));
/// assert_eq!(hedged.await, Ok("fast"));
/// # }
/// ```
#[must_use = "a Hedged does nothing until `.await`"]
pub struct Hedged<'a, Op, C> {
    retry: Retry<'a, Op, C>,
    delay: Duration,
}

impl<Op, C: core::fmt::Debug> core::fmt::Debug for Hedged<'_, Op, C> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Hedged")
            .field("retry", &self.retry)
            .field("delay", &self.delay)
            .finish()
    }
}

impl<'a, Op, T, E, O, H, S> Retry<'a, Op, Config<Awaited, T, E, O, H, S, NoAction>> {
    /// Hedges (`hedge_after`): the first attempt starts at once; the next
    /// starts beside it when `delay` passes without an accepted answer, or
    /// at once when an attempt fails with a retryable error. There are at
    /// most `max_retries + 1` attempts in all. The first accepted result
    /// wins, and the attempts still running are cancelled (dropped) before
    /// the call returns. A permanent error ends the call at once, and
    /// cancels the rest.
    ///
    /// - **The budget.** Every attempt after the first asks the budget (or
    ///   throttle) and the admission limiter as a retry does, so one budget
    ///   bounds retries and hedges together. A hedge they refuse is not
    ///   sent, and no more hedges start; if no attempt is then running, the
    ///   call ends at once with its last failure.
    /// - **The server.** A pushback or hint after a failure is the wait
    ///   before the next attempt; a refusing pushback starts no more.
    /// - **Time.** No attempt starts past `max_elapsed`. The attempts
    ///   running are not cut (a `timeout` does that).
    /// - **When every attempt fails**, the call returns the last failure:
    ///   the server's latest word, as grpc-java and seatbelt return it.
    ///
    /// Hedge only what may run twice at once: idempotent reads. Every
    /// attempt is made by the operation afresh, and they run side by side,
    /// so the operation must not share mutable state between attempts.
    /// Call it last: it takes every key given before it. It needs the
    /// retry to run without `before_retry`.
    ///
    /// ```
    /// use backoff_runtime::Policy;
    /// use std::sync::atomic::{AtomicU32, Ordering};
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let calls = AtomicU32::new(0);
    /// let started = tokio::time::Instant::now();
    /// let result = Policy::new()
    ///     .max_retries(2)
    ///     .retry(|| async {
    ///         // The first attempt is slow; the hedge sent after 50 ms is not.
    ///         let n = calls.fetch_add(1, Ordering::Relaxed);
    ///         let took = if n == 0 { 1_000 } else { 10 };
    ///         tokio::time::sleep(Duration::from_millis(took)).await;
    ///         Ok::<_, ()>(n)
    ///     })
    ///     .hedge_after(Duration::from_millis(50))
    ///     .await;
    /// assert_eq!(result, Ok(1));
    /// assert_eq!(started.elapsed(), Duration::from_millis(60));
    /// # }
    /// ```
    pub fn hedge_after(self, delay: Duration) -> Hedged<'a, Op, Config<Awaited, T, E, O, H, S, NoAction>> {
        Hedged { retry: self, delay }
    }
}

/// The in-place timer of a hedged call's keys.
pub trait HedgeParts: Parts {
    /// The timer keeping nothing itself.
    type InPlace: Timer;
}

impl<K, T, E, O, H: Marks, S: IntoTimer> HedgeParts for Config<K, T, E, O, H, S, NoAction> {
    type InPlace = S::InPlace;
}

pin_project_lite::pin_project! {
    /// The future of an awaited [`Hedged`]: the attempts running side by
    /// side, the wait before the next, and the driver's decisions.
    pub struct HedgedFuture<'a, Op, Fut, C: HedgeParts> {
        call: AwaitedCall<'a, Op, C>,
        delay: Duration,
        // The attempts running, the wait before the next, and where it
        // stands.
        #[pin]
        hedging: Hedging<NestedAttempt<Timed<Fut, C::Output>>, C::InPlace>,
        // What the budget allowed for the next attempt, kept across its
        // wait: given back if the call is dropped before it is sent.
        charge: Charge<'a, C>,
        _keys: PhantomData<fn() -> C>,
    }
}

impl<Op, Fut, C: HedgeParts> core::fmt::Debug for HedgedFuture<'_, Op, Fut, C> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("HedgedFuture")
            .field("policy", self.call.policy)
            .field("delay", &self.delay)
            .field("running", &self.hedging.len())
            .finish_non_exhaustive()
    }
}

impl<'a, Op, Fut, T, E, O, H, S> IntoFuture for Hedged<'a, Op, Config<Awaited, T, E, O, H, S, NoAction>>
where
    H: OwnedHooks<T, E, E, Out = O>,
    O: Outcome<T, E>,
    S: IntoTimer<Timer: DefaultAsyncSleep>,
    Op: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    type Output = Result<T, E>;
    type IntoFuture = HedgedFuture<'a, Op, Fut, Config<Awaited, T, E, O, H, S, NoAction>>;

    fn into_future(self) -> Self::IntoFuture {
        let Hedged { retry, delay } = self;
        let clock = <S::InPlace as Timer>::CLOCK;
        let (call, sleep, NoAction) = AwaitedCall::start(retry, clock, H::OBSERVES);
        HedgedFuture {
            call,
            delay,
            hedging: Hedging::starting(sleep.into()),
            charge: Slot::of(None),
            _keys: PhantomData,
        }
    }
}

impl<Op, Fut, T, E, O, H, S> Future for HedgedFuture<'_, Op, Fut, Config<Awaited, T, E, O, H, S, NoAction>>
where
    H: OwnedHooks<T, E, E, Out = O>,
    O: Outcome<T, E>,
    S: IntoTimer,
    Op: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    type Output = Result<T, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let call = this.call;
        let budget = call.budget();
        let mut hedging = this.hedging;
        loop {
            if hedging.as_mut().starts_now() {
                // Asked of the admission limiter first, the first attempt included.
                if let Some((admitting, refused)) = Slot::get(&mut call.admission) {
                    match admitting.ask() {
                        Admission::Go => {}
                        Admission::Refuse | Admission::Shut(_) if hedging.is_empty() => {
                            let hooks = call.identity.lend(&call.hooks);
                            let result = refused(admitting.refusal());
                            return Poll::Ready(call.driver.refused(
                                (call.policy, budget),
                                admitting.attempts(),
                                &hooks,
                                result,
                            ));
                        }
                        Admission::Wait(wait) | Admission::GoAfter(wait) if hedging.is_empty() => {
                            // A retry put off by a wait keeps its charge;
                            // one sent at once takes the loop's.
                            let held = Slot::take(this.charge).or_else(|| Slot::take(&mut call.take_charge()));
                            *this.charge = Slot::of(held);
                            hedging.as_mut().wait_to_start(wait);
                            continue;
                        }
                        // A hedge the limiter does not let go now is not
                        // sent: its place in the line is given back.
                        _ => {
                            admitting.leave_line();
                            drop(Slot::take(this.charge));
                            call.driver.refund_unsent(budget);
                            hedging.as_mut().stop_hedging();
                            continue;
                        }
                    }
                }
                Charged::sent_if_held(Slot::take(this.charge));
                let attempt = call.next_attempt();
                hedging.as_mut().push(attempt);
            }
            // An attempt that ended.
            if let Poll::Ready(Some((result, below))) = hedging.as_mut().poll_next(cx) {
                let judged = call.judge(result);
                let hooks = call.identity.lend(&call.hooks);
                let outcome = match judged {
                    Ok(value) => {
                        // The others are cancelled before the call returns,
                        // and their limiter hears it.
                        hedging.as_mut().clear();
                        call.driver
                            .succeeded_hedged(budget, &hooks.site(), hooks.on_success_hook());
                        call.abandon_open();
                        return Poll::Ready(Ok(value));
                    }
                    Err(outcome) => outcome,
                };
                let others_run = !hedging.is_empty();
                let step = call.driver.hedge_failed(
                    call.policy,
                    budget,
                    &hooks,
                    (outcome, below),
                    others_run,
                    hedging.may_follow(),
                );
                let charge = &mut *this.charge;
                if let Some(result) = hedging.as_mut().decided(step, || *charge = call.take_charge()) {
                    call.abandon_open();
                    return Poll::Ready(result);
                }
                continue;
            }
            // The wait before the next attempt: the hedge delay's starts
            // now that the attempts are found running.
            // The budget is copied in; the rest is read only for a hedge.
            let keys = &mut *call;
            ready!(hedging.as_mut().poll_wait(*this.delay, cx, move || {
                keys.driver
                    .may_hedge(keys.policy, budget, &Site::Named(keys.identity.name))
            }));
        }
    }
}
