//! The future of an awaited [`Retry`]: the driver's steps, polled by hand
//! (the attribute writes the same loop as an `async` block in the function).

use core::future::{Future, IntoFuture, Ready};
use core::marker::PhantomData;
use core::pin::Pin;
use core::task::{Context, Poll, ready};
use core::time::Duration;

use crate::builder::action::{Action, NoAction};
use crate::builder::config::{Config, Identity};
use crate::builder::operation::Awaited;
use crate::builder::owned::OwnedHooks;
use crate::builder::retry::Retry;
use crate::limits::admission::Admitting;
use crate::limits::admission_limit::{Admission, AdmissionLimit};
use crate::limits::limit::Limit;
use crate::observe::events::RetryEvent;
use crate::observe::site::Site;
use crate::run::driver::{Acts, Loop, NextAttempt, Step, Waits};
use crate::run::nested::NestedAttempt;
use crate::run::outcome::Outcome;
use crate::schedule::policy::Policy;
use crate::time::clock::ClockKind;
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

/// The types an awaited retry's future stores, read off its keys without
/// any bound on the hooks (so that the future's auto traits need none).
pub trait Parts {
    /// The hooks it owns.
    type Hooks;
    /// The timer.
    type Timer;
    /// The action.
    type Action;
    /// Where the retry an action runs on is kept.
    type Kept;
    /// What a pending wait keeps.
    type Pending;
    /// The action's future.
    type ActionFuture;
    /// The result.
    type Output;
}

impl<K, T, E, O, H, S: IntoTimer, A: ActionFuture> Parts for Config<K, T, E, O, H, S, A> {
    type Hooks = H;
    type Timer = S::Timer;
    type Action = A;
    type Kept = A::Kept<O>;
    type Pending = <S::Timer as Timer>::Pending;
    type ActionFuture = A::Future;
    type Output = Result<T, E>;
}

/// The future type of an action, and where the failure it acts on is kept
/// while it runs, without their bounds.
pub trait ActionFuture {
    /// The future.
    type Future;
    /// Where the retry is kept: nowhere without an action.
    type Kept<O>;
    /// Keeps `next` while the action runs.
    fn keep<O>(next: NextAttempt<O>) -> Self::Kept<O>;
    /// The retry kept.
    fn take<O>(kept: &mut Self::Kept<O>) -> Option<NextAttempt<O>>;
}

impl ActionFuture for NoAction {
    type Future = Ready<()>;
    type Kept<O> = ();

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn keep<O>(_next: NextAttempt<O>) {}

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn take<O>(_kept: &mut ()) -> Option<NextAttempt<O>> {
        None
    }
}

impl<F, Fut> ActionFuture for Action<F, Fut> {
    type Future = Fut;
    type Kept<O> = Option<NextAttempt<O>>;

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn keep<O>(next: NextAttempt<O>) -> Option<NextAttempt<O>> {
        Some(next)
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn take<O>(kept: &mut Option<NextAttempt<O>>) -> Option<NextAttempt<O>> {
        kept.take()
    }
}

pin_project_lite::pin_project! {
    /// What an awaited retry is doing: one phase at a time.
    #[project = PhaseProj]
    enum Phase<Attempt, Acting, Kept, Pending> {
        /// About to start the next attempt.
        Start,
        /// An attempt runs.
        Attempting {
            #[pin]
            attempt: Attempt,
        },
        /// The action runs before the wait of the retry it keeps.
        Acting {
            #[pin]
            action: Acting,
            next: Kept,
        },
        /// The wait before the next attempt.
        Sleeping {
            #[pin]
            pending: Pending,
        },
    }
}

/// The phase of a retry of the future `Fut` with keys `C`.
type PhaseOf<Fut, C> = Phase<
    NestedAttempt<Timed<Fut, <C as Parts>::Output>>,
    <C as Parts>::ActionFuture,
    <C as Parts>::Kept,
    <C as Parts>::Pending,
>;

pin_project_lite::pin_project! {
    /// The future of an awaited [`Retry`]: the same driver as an `async fn`
    /// with `#[retry]`. Its type parameters are the operation, the
    /// operation's future and the keys given (opaque, never written).
    pub struct RetryFuture<'a, Op, Fut, C>
    where
        C: Parts,
    {
        policy: &'a Policy,
        budget: Option<Limit<'a>>,
        op: Op,
        hooks: C::Hooks,
        identity: Identity,
        action: C::Action,
        timer: C::Timer,
        timeout: Option<(Duration, fn() -> C::Output)>,
        // With `admission`: the limiter (with where the next attempt's
        // admission stands), and the result of a refused attempt.
        admission: Option<(Admitting<'a>, fn(crate::Refused) -> C::Output)>,
        driver: Loop,
        #[pin]
        phase: PhaseOf<Fut, C>,
        _keys: PhantomData<fn() -> C>,
    }
}

impl<Op, Fut, C: Parts> core::fmt::Debug for RetryFuture<'_, Op, Fut, C> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("RetryFuture")
            .field("policy", self.policy)
            .field("waiting", &matches!(self.phase, Phase::Sleeping { .. }))
            .finish_non_exhaustive()
    }
}

/// An admission limiter as a call's future keeps it, with the result a
/// refused attempt stands for.
pub(crate) type AdmittingWith<'a, R> = (Admitting<'a>, fn(crate::Refused) -> R);

/// The call's admission limiter as its future keeps it (with the result a
/// refused attempt stands for), when `admission` was given: measured on
/// `clock`.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn admitting_of<R>(
    limit: Option<&dyn AdmissionLimit>,
    refused: Option<fn(crate::Refused) -> R>,
    clock: ClockKind,
) -> Option<AdmittingWith<'_, R>> {
    limit
        .zip(refused)
        .map(|(limit, refused)| (Admitting::of_dyn(limit, clock), refused))
}

/// The next attempt of `op`: under `timeout` when given (never past
/// `max_elapsed`, as `driver` measures it on `policy`), bracketed for
/// nested retries.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn next_attempt<Fut: Future<Output = R>, R>(
    op: &mut impl FnMut() -> Fut,
    timeout: Option<(Duration, fn() -> R)>,
    driver: &Loop,
    policy: &Policy,
) -> NestedAttempt<Timed<Fut, R>> {
    let attempt = match timeout {
        None => Timed::untimed(op()),
        Some((timeout, on_elapsed)) => {
            Timed::with_timeout_of(driver.attempt_timeout(policy, timeout), op(), on_elapsed)
        }
    };
    NestedAttempt::new(attempt)
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
        let config = self.config;
        let needs_start = H::OBSERVES || A::SET;
        RetryFuture {
            policy: self.policy,
            budget: self.budget,
            op: self.op,
            hooks: config.hooks,
            identity: config.call.identity,
            action: config.action,
            timer: config.sleep.into_timer(),
            timeout: config.call.timeout,
            admission: admitting_of(
                self.admission.filter(|_| H::ADMITS),
                config.call.refused,
                <S::Timer as Timer>::CLOCK,
            ),
            driver: Loop::start(<S::Timer as Timer>::CLOCK, self.policy, self.budget, needs_start),
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
        let policy: &Policy = this.policy;
        let budget = *this.budget;
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
                            if let Some((admitting, ..)) = this.admission.as_ref().filter(|_| H::ADMITS) {
                                admitting.succeeded();
                            }
                            this.driver.succeeded(budget, &Site::Named(this.identity.name), None);
                            return Poll::Ready(Ok(value));
                        }
                        result => result,
                    };
                    let hooks = this.identity.lend(&*this.hooks);
                    let judged = hooks.judge(result);
                    if let Some((admitting, ..)) = this.admission.as_ref().filter(|_| H::ADMITS) {
                        admitting.observed(hooks.attempt_end(admitting.clock(), judged.as_ref()));
                    }
                    let outcome = match judged {
                        Ok(value) => {
                            this.driver.succeeded(budget, &hooks.site(), hooks.on_success_hook());
                            return Poll::Ready(Ok(value));
                        }
                        Err(outcome) => outcome,
                    };
                    if A::SET {
                        match this.driver.failed(Acts, policy, budget, &hooks, outcome, below) {
                            Step::Return(result) => return Poll::Ready(result),
                            Step::Retry(next) => {
                                let action = this.action.start(next.outcome(), next.event());
                                let next = A::keep(next);
                                this.phase.set(Phase::Acting { action, next });
                            }
                        }
                    } else {
                        match this.driver.failed(Waits, policy, budget, &hooks, outcome, below) {
                            Step::Return(result) => return Poll::Ready(result),
                            Step::Retry(wait) => {
                                let pending = this.timer.start(wait);
                                this.phase.set(Phase::Sleeping { pending });
                            }
                        }
                    }
                    continue;
                }
                PhaseProj::Acting { action, next } => {
                    ready!(action.poll(cx));
                    let Some(next) = A::take(next) else {
                        this.phase.set(Phase::Start);
                        continue;
                    };
                    let hooks = this.identity.lend(&*this.hooks);
                    match this.driver.after_action(policy, &hooks, next) {
                        Step::Return(result) => return Poll::Ready(result),
                        Step::Retry(wait) => {
                            let pending = this.timer.start(wait);
                            this.phase.set(Phase::Sleeping { pending });
                        }
                    }
                    continue;
                }
                PhaseProj::Sleeping { pending } => {
                    ready!(this.timer.poll_wait(pending, cx));
                }
            }
            if let Some((admitting, refused)) = this.admission.as_mut().filter(|_| H::ADMITS) {
                match admitting.ask() {
                    Admission::Go => {}
                    Admission::Refuse | Admission::Shut(_) => {
                        let hooks = this.identity.lend(&*this.hooks);
                        let result = refused(admitting.refusal());
                        return Poll::Ready(this.driver.refused(policy, admitting.attempts(), &hooks, result));
                    }
                    Admission::Wait(wait) | Admission::GoAfter(wait) => {
                        let pending = this.timer.start(wait);
                        this.phase.set(Phase::Sleeping { pending });
                        continue;
                    }
                }
            }
            this.phase.set(Phase::Attempting {
                attempt: next_attempt(this.op, *this.timeout, this.driver, policy),
            });
        }
    }
}
