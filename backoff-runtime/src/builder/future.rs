//! The future of an awaited [`Retry`]: the driver's steps, polled by hand
//! (the attribute writes the same loop as an `async` block in the function).

use core::future::{Future, IntoFuture, Ready};
use core::marker::PhantomData;
use core::pin::Pin;
use core::task::{Context, Poll, ready};
use core::time::Duration;

use crate::builder::retry::{Action, Awaited, Keys, Retry};
use crate::limits::limit::Limit;
use crate::observe::events::RetryEvent;
use crate::run::driver::{Acts, Failure, Loop, NoAction, Step, Waits};
use crate::run::hooks::{DecidedOf, Hooks};
use crate::run::nested::NestedAttempt;
use crate::schedule::policy::Policy;
use crate::time::sleep::{AsyncSleepSupport, IntoTimer, Timer};
use crate::time::timeout::Timed;

/// What an awaited retry does before each wait: nothing, or the builder's
/// `before_retry` returning a future.
pub trait AsyncAction<D>: ActionFuture {
    /// Whether there is an action.
    const SET: bool;
    /// Starts the action on `decided`.
    fn start(&mut self, decided: &D, event: &RetryEvent) -> Self::Future;
}

impl<D> AsyncAction<D> for NoAction {
    const SET: bool = false;

    #[inline(always)]
    fn start(&mut self, _decided: &D, _event: &RetryEvent) -> Ready<()> {
        core::future::ready(())
    }
}

impl<D, F, Fut> AsyncAction<D> for Action<F, Fut>
where
    F: FnMut(&D, &RetryEvent) -> Fut,
    Fut: Future<Output = ()>,
{
    const SET: bool = true;

    #[inline]
    fn start(&mut self, decided: &D, event: &RetryEvent) -> Fut {
        (self.action)(decided, event)
    }
}

/// The types an awaited retry's future stores, read off its keys without
/// any bound on the hooks (so that the future's auto traits need none).
pub trait Parts {
    /// The hooks.
    type Hooks;
    /// The timer.
    type Timer;
    /// The action.
    type Action;
    /// What a failed attempt hands the decision.
    type Decided;
    /// Where the failure an action runs on is kept.
    type Kept;
    /// What a pending wait keeps.
    type Pending;
    /// The action's future.
    type ActionFuture;
    /// The result.
    type Output;
}

impl<K, T, E, H: DecidedOf, S: IntoTimer, A: ActionFuture> Parts for Keys<K, T, E, H, S, A> {
    type Hooks = H;
    type Timer = S::Timer;
    type Action = A;
    type Decided = H::Decided;
    type Kept = A::Kept<H::Decided>;
    type Pending = <S::Timer as Timer>::Pending;
    type ActionFuture = A::Future;
    type Output = Result<T, E>;
}

/// The future type of an action, and where the failure it acts on is kept
/// while it runs, without their bounds.
pub trait ActionFuture {
    /// The future.
    type Future;
    /// Where the failure is kept: nowhere without an action.
    type Kept<D>: Default;
    /// Keeps `failure` while the action runs.
    fn keep<D>(kept: &mut Self::Kept<D>, failure: Failure<D>);
    /// The failure kept.
    fn take<D>(kept: &mut Self::Kept<D>) -> Option<Failure<D>>;
}

impl ActionFuture for NoAction {
    type Future = Ready<()>;
    type Kept<D> = ();

    #[inline(always)]
    fn keep<D>(_kept: &mut (), _failure: Failure<D>) {}

    #[inline(always)]
    fn take<D>(_kept: &mut ()) -> Option<Failure<D>> {
        None
    }
}

impl<F, Fut> ActionFuture for Action<F, Fut> {
    type Future = Fut;
    type Kept<D> = Option<Failure<D>>;

    #[inline(always)]
    fn keep<D>(kept: &mut Option<Failure<D>>, failure: Failure<D>) {
        *kept = Some(failure);
    }

    #[inline(always)]
    fn take<D>(kept: &mut Option<Failure<D>>) -> Option<Failure<D>> {
        kept.take()
    }
}

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
        action: C::Action,
        timer: C::Timer,
        timeout: Option<(Duration, fn() -> C::Output)>,
        driver: Loop,
        failure: C::Kept,
        #[pin]
        attempt: Option<NestedAttempt<Timed<Fut, C::Output>>>,
        #[pin]
        acting: Option<C::ActionFuture>,
        #[pin]
        sleeping: Option<C::Pending>,
        _keys: PhantomData<fn() -> C>,
    }
}

impl<Op, Fut, C: Parts> core::fmt::Debug for RetryFuture<'_, Op, Fut, C> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("RetryFuture")
            .field("policy", self.policy)
            .field("waiting", &self.sleeping.is_some())
            .finish_non_exhaustive()
    }
}

impl<'a, Op, Fut, T, E, H, S, A> IntoFuture for Retry<'a, Op, Keys<Awaited, T, E, H, S, A>>
where
    Op: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
    H: Hooks<Ok = T, Err = E>,
    S: IntoTimer<Timer: AsyncSleepSupport>,
    A: AsyncAction<H::Decided>,
    A::Future: Future<Output = ()>,
{
    type Output = Result<T, E>;
    type IntoFuture = RetryFuture<'a, Op, Fut, Keys<Awaited, T, E, H, S, A>>;

    #[inline]
    fn into_future(self) -> Self::IntoFuture {
        let needs_start = self.keys.hooks.observes() || A::SET;
        RetryFuture {
            policy: self.policy,
            budget: self.budget,
            op: self.op,
            hooks: self.keys.hooks,
            action: self.keys.action,
            timer: self.keys.sleep.into_timer(),
            timeout: self.keys.timeout,
            driver: Loop::start(<S::Timer as Timer>::CLOCK, self.policy, self.budget, needs_start),
            failure: Default::default(),
            attempt: None,
            acting: None,
            sleeping: None,
            _keys: PhantomData,
        }
    }
}

impl<Op, Fut, T, E, H, S, A> Future for RetryFuture<'_, Op, Fut, Keys<Awaited, T, E, H, S, A>>
where
    Op: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
    H: Hooks<Ok = T, Err = E>,
    S: IntoTimer,
    A: AsyncAction<H::Decided>,
    A::Future: Future<Output = ()>,
{
    type Output = Result<T, E>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        let policy: &Policy = this.policy;
        let budget = *this.budget;
        loop {
            if let Some(attempt) = this.attempt.as_mut().as_pin_mut() {
                let result = ready!(attempt.poll(cx));
                // A finished attempt is dropped when the next one starts, or
                // with this future: nothing more on the happy path.
                let hooks = &*this.hooks;
                if A::SET {
                    match this.driver.step::<Acts, _, _, _>(policy, budget, result, |_| hooks) {
                        Step::Return(result) => return Poll::Ready(result),
                        Step::Retry(failure) => {
                            this.attempt.set(None);
                            this.acting
                                .set(Some(this.action.start(failure.decided(), failure.event())));
                            A::keep(this.failure, failure);
                        }
                    }
                } else {
                    match this.driver.step::<Waits, _, _, _>(policy, budget, result, |_| hooks) {
                        Step::Return(result) => return Poll::Ready(result),
                        Step::Retry(wait) => {
                            this.attempt.set(None);
                            this.sleeping.set(Some(this.timer.start(wait)));
                        }
                    }
                }
            }
            if A::SET
                && let Some(acting) = this.acting.as_mut().as_pin_mut()
            {
                ready!(acting.poll(cx));
                this.acting.set(None);
                if let Some(failure) = A::take(this.failure) {
                    let hooks = &*this.hooks;
                    match this
                        .driver
                        .after_action::<Result<T, E>, _, _>(policy, failure, |_| hooks)
                    {
                        Step::Return(result) => return Poll::Ready(result),
                        Step::Retry(wait) => this.sleeping.set(Some(this.timer.start(wait))),
                    }
                }
            }
            if let Some(pending) = this.sleeping.as_mut().as_pin_mut() {
                ready!(this.timer.poll_wait(pending, cx));
                this.sleeping.set(None);
            }
            let attempt = match *this.timeout {
                None => Timed::unlimited((this.op)()),
                Some((limit, on_elapsed)) => {
                    let limit = this.driver.attempt_limit(policy, limit);
                    Timed::limited(limit, (this.op)(), on_elapsed)
                }
            };
            this.attempt.set(Some(NestedAttempt::new(attempt)));
        }
    }
}
