//! The future of an awaited `Retry`.
//!
//! The driver's steps, polled by hand (the attribute writes the same loop as an
//! `async` block in the function).

use core::future::{Future, IntoFuture, Ready};
use core::marker::PhantomData;
use core::pin::Pin;
use core::task::{Context, Poll, ready};

use crate::builder::action::{Action, NoAction};
use crate::builder::awaited::{ActionFuture, AwaitedCall, Charge, Parts};
use crate::builder::config::Config;
use crate::builder::flag::Slot;
use crate::builder::operation::Awaited;
use crate::builder::owned::OwnedHooks;
use crate::builder::retry::Retry;
use crate::limits::admission_limit::Admission;
use crate::limits::limit::Charged;
use crate::observe::events::RetryEvent;
use crate::observe::site::Site;
use crate::run::driver::{Acts, Step, Waits};
use crate::run::nested::NestedAttempt;
use crate::run::outcome::Outcome;
use crate::schedule::policy::Policy;
use crate::time::sleep::{DefaultAsyncSleep, IntoTimer, Timer};
use crate::time::timeout::Timed;

/// What an awaited retry does before each wait: nothing, or the builder's
/// `before_retry` returning a future.
pub trait AsyncAction<O>: ActionFuture {
    /// Whether there is an action.
    const SET: bool;
    /// Starts the action on `outcome`.
    fn start(&mut self, outcome: &O, event: &RetryEvent) -> Self::Future;
}

impl<O> AsyncAction<O> for NoAction {
    const SET: bool = false;

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn start(&mut self, _outcome: &O, _event: &RetryEvent) -> Ready<()> {
        core::future::ready(())
    }
}

impl<O, F, Fut> AsyncAction<O> for Action<F, Fut>
where
    F: FnMut(&O, &RetryEvent) -> Fut,
    Fut: Future<Output = ()>,
{
    const SET: bool = true;

    #[inline]
    fn start(&mut self, outcome: &O, event: &RetryEvent) -> Fut {
        (self.action)(outcome, event)
    }
}

pin_project_lite::pin_project! {
    /// What an awaited retry is doing: one phase at a time.
    #[project = PhaseProj]
    enum Phase<Attempt, Acting, Kept, Pending, Charge> {
        /// About to start the next attempt.
        Start,
        /// An attempt runs.
        Attempting {
            #[pin]
            attempt: Attempt,
        },
        /// The action runs before the wait of the retry it keeps (and what
        /// the budget allowed for it, given back if the call is dropped).
        Acting {
            #[pin]
            action: Acting,
            next: Kept,
            charge: Charge,
        },
        /// The wait before the next attempt (and what the budget allowed
        /// for it, given back if the call is dropped before it is sent).
        Sleeping {
            #[pin]
            pending: Pending,
            charge: Charge,
        },
    }
}

/// The phase of a retry of the future `Fut` with keys `C`.
type PhaseOf<'a, Fut, C> = Phase<
    NestedAttempt<Timed<Fut, <C as Parts>::Output>>,
    <C as Parts>::ActionFuture,
    <C as Parts>::Kept,
    <C as Parts>::Pending,
    Charge<'a, C>,
>;

pin_project_lite::pin_project! {
    /// The future of an awaited [`Retry`]: the same driver as an `async fn`
    /// with `#[retry]`. Its type parameters are the operation, the
    /// operation's future and the keys given (opaque, never written).
    pub struct RetryFuture<'a, Op, Fut, C>
    where
        C: Parts,
    {
        call: AwaitedCall<'a, Op, C>,
        action: C::Action,
        timer: C::Timer,
        #[pin]
        phase: PhaseOf<'a, Fut, C>,
        _keys: PhantomData<fn() -> C>,
    }
}

impl<Op, Fut, C: Parts> core::fmt::Debug for RetryFuture<'_, Op, Fut, C> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("RetryFuture")
            .field("policy", self.call.policy)
            .field("waiting", &matches!(self.phase, Phase::Sleeping { .. }))
            .finish_non_exhaustive()
    }
}

impl<'a, Op, Fut, T, E, O, H, S, A> IntoFuture for Retry<'a, Op, Config<Awaited, T, E, O, H, S, A>>
where
    Op: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
    O: Outcome<T, E>,
    H: OwnedHooks<T, E, E, Out = O>,
    S: IntoTimer<Timer: DefaultAsyncSleep>,
    A: AsyncAction<O>,
    A::Future: Future<Output = ()>,
{
    type Output = Result<T, E>;
    type IntoFuture = RetryFuture<'a, Op, Fut, Config<Awaited, T, E, O, H, S, A>>;

    #[inline]
    fn into_future(self) -> Self::IntoFuture {
        let clock = <S::Timer as Timer>::CLOCK;
        let (call, sleep, action) = AwaitedCall::start(self, clock, H::OBSERVES || A::SET);
        RetryFuture {
            call,
            action,
            timer: sleep.into(),
            phase: Phase::Start,
            _keys: PhantomData,
        }
    }
}

impl<Op, Fut, T, E, O, H, S, A> Future for RetryFuture<'_, Op, Fut, Config<Awaited, T, E, O, H, S, A>>
where
    Op: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
    O: Outcome<T, E>,
    H: OwnedHooks<T, E, E, Out = O>,
    S: IntoTimer,
    A: AsyncAction<O>,
    A::Future: Future<Output = ()>,
{
    type Output = Result<T, E>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        let call = this.call;
        let policy: &Policy = call.policy;
        let budget = call.budget();
        // What the budget allowed for the next attempt, out of the wait phase.
        let mut held = None;
        loop {
            match this.phase.as_mut().project() {
                PhaseProj::Start => {}
                PhaseProj::Attempting { attempt } => {
                    let (result, below) = ready!(attempt.poll(cx));
                    // A finished attempt is dropped when the next phase
                    // starts, or with this future.
                    let result = match result {
                        // A success nobody but metrics hears of: no hooks lent.
                        Ok(value) if !H::JUDGES_VALUES && !H::OBSERVES_SUCCESS => {
                            if let Some((admitting, ..)) = Slot::get(&mut call.admission) {
                                admitting.succeeded();
                            }
                            call.driver.succeeded(budget, &Site::Named(call.identity.name), None);
                            return Poll::Ready(Ok(value));
                        }
                        result => result,
                    };
                    let judged = call.judge(result);
                    let hooks = call.identity.lend(&call.hooks);
                    let outcome = match judged {
                        Ok(value) => {
                            call.driver.succeeded(budget, &hooks.site(), hooks.on_success_hook());
                            return Poll::Ready(Ok(value));
                        }
                        Err(outcome) => outcome,
                    };
                    if A::SET {
                        match call.driver.failed(Acts, policy, budget, &hooks, outcome, below) {
                            Step::Return(result) => return Poll::Ready(result),
                            Step::Retry(next) => {
                                let charge = call.take_charge();
                                let action = this.action.start(next.outcome(), next.event());
                                let next = A::keep(next);
                                this.phase.set(Phase::Acting { action, next, charge });
                            }
                        }
                    } else {
                        match call.driver.failed(Waits, policy, budget, &hooks, outcome, below) {
                            Step::Return(result) => return Poll::Ready(result),
                            Step::Retry(wait) => {
                                let charge = call.take_charge();
                                let pending = this.timer.start(wait);
                                this.phase.set(Phase::Sleeping { pending, charge });
                            }
                        }
                    }
                    continue;
                }
                PhaseProj::Acting { action, next, charge } => {
                    ready!(action.poll(cx));
                    let charge = Slot::take(charge);
                    let Some(next) = A::take(next) else {
                        // The next attempt starts now.
                        Charged::sent_if_held(charge);
                        this.phase.set(Phase::Start);
                        continue;
                    };
                    let hooks = call.identity.lend(&call.hooks);
                    match call.driver.after_action(policy, &hooks, next) {
                        Step::Return(result) => return Poll::Ready(result),
                        Step::Retry(wait) => {
                            let pending = this.timer.start(wait);
                            let charge = Slot::of(charge);
                            this.phase.set(Phase::Sleeping { pending, charge });
                        }
                    }
                    continue;
                }
                PhaseProj::Sleeping { pending, charge } => {
                    ready!(this.timer.poll_wait(pending, cx));
                    held = Slot::take(charge);
                }
            }
            if let Some((admitting, refused)) = Slot::get(&mut call.admission) {
                match admitting.ask() {
                    Admission::Go => {}
                    Admission::Refuse | Admission::Shut(_) => {
                        // Not sent: what the budget allowed is given back.
                        drop(held.take());
                        let hooks = call.identity.lend(&call.hooks);
                        let result = refused(admitting.refusal());
                        return Poll::Ready(call.driver.refused(
                            (policy, budget),
                            admitting.attempts(),
                            &hooks,
                            result,
                        ));
                    }
                    Admission::Wait(wait) | Admission::GoAfter(wait) => {
                        let pending = this.timer.start(wait);
                        this.phase.set(Phase::Sleeping {
                            pending,
                            charge: Slot::of(held.take()),
                        });
                        continue;
                    }
                }
            }
            Charged::sent_if_held(held.take());
            this.phase.set(Phase::Attempting {
                attempt: call.next_attempt(),
            });
        }
    }
}
