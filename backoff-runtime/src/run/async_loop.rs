//! The state of an async retry loop. The loop itself is generated inline in
//! the annotated function (a closure returning a future could not lend
//! `&mut self`), so this type keeps what must survive between attempts small:
//! the retry state and, for tokio, one boxed `Sleep` allocated on the first
//! failure and reset for later waits (the future stays within 48 bytes of the
//! plain one).

use core::time::Duration;

use crate::limits::limit::Limit;
use crate::observe::events::RetryEvent;
use crate::run::attempt::AttemptSource;
use crate::run::decide::{Failed, RetryState};
use crate::run::hooks::{HookSet, Hooks};
use crate::run::poll::{PollHookSet, PollHooks};
use crate::run::result::RetryResult;
use crate::run::sync_loop::judge_values;
use crate::schedule::policy::Policy;
use crate::time::clock::ClockKind;

/// What an async loop does after an attempt.
#[derive(Debug)]
pub enum Step<R> {
    /// Return this result: a success, or the final error.
    Return(R),
    /// Sleep this long, then run the next attempt.
    Wait(Duration),
}

/// How an async loop sleeps: tokio's timer, or the function's `sleep = ...`.
/// The bound that reports a missing `tokio` feature.
#[diagnostic::on_unimplemented(
    message = "`#[retry]` on an `async fn` needs the `tokio` feature of `backoff-runtime`, or a `sleep = ...` argument",
    label = "async retry loops sleep with `tokio::time::sleep` unless given `sleep = ...`",
    note = "enable the feature: `backoff-runtime = {{ version = \"0.1\", features = [\"tokio\"] }}`, or pass your runtime's sleep: `#[retry(sleep = async_io::Timer::after)]`"
)]
pub trait AsyncSleeper {
    /// The clock `max_elapsed` is measured on with this sleeper.
    #[doc(hidden)]
    const CLOCK: ClockChoice;
}

/// Which clock a sleeper's loop reads (public only because the trait is).
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct ClockChoice(pub(crate) ClockKind);

/// Sleeps with `tokio::time::sleep`, measures with tokio's clock.
#[derive(Debug)]
pub struct TokioSleeper;

#[cfg(feature = "tokio")]
impl AsyncSleeper for TokioSleeper {
    const CLOCK: ClockChoice = ClockChoice(ClockKind::Tokio);
}

/// Sleeps with the function's `sleep = ...`. Measures `max_elapsed` with
/// tokio's clock when the `tokio` feature is on (the current runtime's clock,
/// paused or not; `std::time::Instant` outside a runtime), so
/// `sleep = tokio::time::sleep` keeps the deadline on the clock it advances;
/// with `std::time::Instant` otherwise.
#[derive(Debug)]
pub struct CustomSleeper;

impl AsyncSleeper for CustomSleeper {
    #[cfg(feature = "tokio")]
    const CLOCK: ClockChoice = ClockChoice(ClockKind::Tokio);
    #[cfg(not(feature = "tokio"))]
    const CLOCK: ClockChoice = ClockChoice(ClockKind::Std);
}

/// The state of one call's async retry loop (20 bytes, 4-byte aligned).
#[derive(Debug)]
pub struct AsyncLoop {
    state: RetryState,
}

/// The tokio timer of one call's async retry loop: a boxed `Sleep`,
/// allocated on the first failure and reset for later waits. Kept apart
/// from [`AsyncLoop`] so each packs with its neighbours in the future.
#[derive(Debug, Default)]
pub struct TokioSleepSlot {
    #[cfg(feature = "tokio")]
    sleep: Option<core::pin::Pin<Box<tokio::time::Sleep>>>,
}

impl AsyncLoop {
    /// A fresh loop sleeping with `S`; reads the clock only when
    /// `max_elapsed` or a hook needs it.
    #[inline(always)]
    pub fn start<S: AsyncSleeper>(policy: &Policy, budget: Option<Limit<'_>>, needs_start: bool) -> Self {
        Self::start_on(S::CLOCK.0, policy, budget, needs_start)
    }

    /// A fresh loop of a sync function whose `before_retry` runs in the
    /// function (so it may borrow what the body borrows), measuring on the
    /// clock of `sleeper`.
    #[inline(always)]
    pub fn start_blocking<S: crate::run::sync_loop::SyncSleeper>(
        policy: &Policy,
        budget: Option<Limit<'_>>,
        needs_start: bool,
        sleeper: &S,
    ) -> Self {
        Self::start_on(sleeper.clock().0, policy, budget, needs_start)
    }

    /// A fresh loop measuring on `clock`.
    #[inline(always)]
    pub(crate) fn start_on(clock: ClockKind, policy: &Policy, budget: Option<Limit<'_>>, needs_start: bool) -> Self {
        AsyncLoop {
            state: RetryState::start(policy, budget, clock, needs_start),
        }
    }

    /// The wait before the next attempt, or `None` when the loop must stop
    /// and return `error`.
    #[inline]
    pub fn decide<E, H: Hooks<E>>(
        &mut self,
        policy: &Policy,
        budget: Option<Limit<'_>>,
        error: &E,
        gave_up_below: bool,
        hooks: &H,
    ) -> Option<Duration> {
        let failure = Failed { error, gave_up_below };
        self.state.decide(policy, budget, failure, hooks).ok()
    }

    /// The time limit of the next attempt under `timeout = limit`: the limit,
    /// or less when `max_elapsed` ends sooner (an attempt never runs past it).
    #[inline]
    pub fn attempt_limit(&self, policy: &Policy, limit: Duration) -> Duration {
        match self.state.remaining(policy) {
            Some(remaining) => limit.min(remaining),
            None => limit,
        }
    }

    /// What follows an attempt that returned `result` (with whether a retried
    /// function it called gave up, from [`NestedAttempt`](crate::__private::NestedAttempt)):
    /// return it (success, or a final error), or wait. `hooks` builds the function's hooks from an
    /// empty [`HookSet`] typed by the error, so closures in them infer `&E`.
    #[inline(always)]
    pub fn step<R, B, H>(
        &mut self,
        policy: &Policy,
        budget: Option<Limit<'_>>,
        (result, below): (R, bool),
        hooks: B,
    ) -> Step<R>
    where
        R: RetryResult,
        B: FnOnce(HookSet<R::Err>) -> H,
        H: Hooks<R::Err>,
    {
        match result.into_result() {
            Ok(value) => {
                self.state.success(budget, || hooks(HookSet::new()));
                Step::Return(R::from_result(Ok(value)))
            }
            Err(error) => match self.decide(policy, budget, &error, below, &hooks(HookSet::new())) {
                Some(wait) => Step::Wait(wait),
                None => Step::Return(R::from_result(Err(error))),
            },
        }
    }
}

impl AsyncLoop {
    /// [`step`](Self::step) of a function with `retry_if_ok`: a pending
    /// value is retried like an error; the hooks see the whole `Result`.
    #[inline(always)]
    pub fn step_polling<R, B, H>(
        &mut self,
        policy: &Policy,
        budget: Option<Limit<'_>>,
        (result, below): (R, bool),
        hooks: B,
    ) -> Step<R>
    where
        R: RetryResult,
        B: FnOnce(PollHookSet<R::Ok, R::Err>) -> H,
        H: PollHooks<R::Ok, R::Err>,
    {
        let hooks = hooks(PollHookSet::new());
        match judge_values::<R, H>(result, &hooks) {
            Ok(done) => {
                self.state.success(budget, || &hooks);
                Step::Return(done)
            }
            Err(pending) => match self.decide(policy, budget, &pending, below, &hooks) {
                Some(wait) => Step::Wait(wait),
                None => Step::Return(R::from_result(pending)),
            },
        }
    }

    /// [`step`](Self::step) of a function with an async `before_retry`: a
    /// retry also hands back the error and its event, for the action the
    /// loop awaits before the wait.
    #[inline(always)]
    pub fn step_acting<R, B, H>(
        &mut self,
        policy: &Policy,
        budget: Option<Limit<'_>>,
        (result, below): (R, bool),
        hooks: B,
    ) -> Acting<R, R::Err>
    where
        R: RetryResult,
        B: FnOnce(HookSet<R::Err>) -> H,
        H: Hooks<R::Err>,
    {
        match result.into_result() {
            Ok(value) => {
                self.state.success(budget, || hooks(HookSet::new()));
                Acting::Return(R::from_result(Ok(value)))
            }
            Err(error) => self.act_on(policy, budget, error, below, &hooks(HookSet::new()), |error| {
                R::from_result(Err(error))
            }),
        }
    }

    /// [`step_acting`](Self::step_acting) of a function with `retry_if_ok`.
    #[inline(always)]
    pub fn step_polling_acting<R, B, H>(
        &mut self,
        policy: &Policy,
        budget: Option<Limit<'_>>,
        (result, below): (R, bool),
        hooks: B,
    ) -> Acting<R, Result<R::Ok, R::Err>>
    where
        R: RetryResult,
        B: FnOnce(PollHookSet<R::Ok, R::Err>) -> H,
        H: PollHooks<R::Ok, R::Err>,
    {
        let hooks = hooks(PollHookSet::new());
        match judge_values::<R, H>(result, &hooks) {
            Ok(done) => {
                self.state.success(budget, || &hooks);
                Acting::Return(done)
            }
            Err(pending) => self.act_on(policy, budget, pending, below, &hooks, R::from_result),
        }
    }

    /// After the `before_retry` action on `failure`: its wait, or (when the
    /// action ran so long that the wait would end past `max_elapsed`) the
    /// final error, reported as a give-up with [`StopReason::Deadline`](crate::StopReason).
    #[inline(always)]
    pub fn after_action<R, B, H>(&mut self, policy: &Policy, failure: Failure<R::Err>, hooks: B) -> Step<R>
    where
        R: RetryResult,
        B: FnOnce(HookSet<R::Err>) -> H,
        H: Hooks<R::Err>,
    {
        if policy.max_elapsed.is_none()
            || self
                .state
                .still_in_time(policy, failure.wait, &failure.decided, &hooks(HookSet::new()))
        {
            Step::Wait(failure.wait)
        } else {
            Step::Return(R::from_result(Err(failure.decided)))
        }
    }

    /// [`after_action`](Self::after_action) of a function with `retry_if_ok`.
    #[inline(always)]
    pub fn after_action_polling<R, B, H>(
        &mut self,
        policy: &Policy,
        failure: Failure<Result<R::Ok, R::Err>>,
        hooks: B,
    ) -> Step<R>
    where
        R: RetryResult,
        B: FnOnce(PollHookSet<R::Ok, R::Err>) -> H,
        H: PollHooks<R::Ok, R::Err>,
    {
        if policy.max_elapsed.is_none()
            || self
                .state
                .still_in_time(policy, failure.wait, &failure.decided, &hooks(PollHookSet::new()))
        {
            Step::Wait(failure.wait)
        } else {
            Step::Return(R::from_result(failure.decided))
        }
    }

    /// The decision on `decided`, keeping it and its event for the action.
    #[inline(always)]
    fn act_on<R, D, H: Hooks<D>>(
        &mut self,
        policy: &Policy,
        budget: Option<Limit<'_>>,
        decided: D,
        gave_up_below: bool,
        hooks: &H,
        back: impl FnOnce(D) -> R,
    ) -> Acting<R, D> {
        let failure = Failed {
            error: &decided,
            gave_up_below,
        };
        match self.state.decide_reporting(policy, budget, failure, hooks, true) {
            Ok((wait, Some(event))) => Acting::Act(Failure { wait, decided, event }),
            Ok((_, None)) | Err(_) => Acting::Return(back(decided)),
        }
    }

    /// The [`AttemptSource`] of this call: its start, its clock, its
    /// deadline (for `context = ...`).
    #[inline]
    pub fn attempts(&self, policy: &Policy) -> AttemptSource {
        AttemptSource::new(policy, self.state.start_instant(), ClockChoice(self.state.clock()))
    }
}

/// What an async loop with `before_retry` does after an attempt.
#[derive(Debug)]
pub enum Acting<R, D> {
    /// Return this result: a success, or the final one.
    Return(R),
    /// Run the action on this failure, then wait.
    Act(Failure<D>),
}

/// A failed attempt that will be retried: what failed (an error, or with
/// `retry_if_ok` the whole result), the retry's event, and the wait.
#[derive(Debug)]
pub struct Failure<D> {
    wait: Duration,
    decided: D,
    event: RetryEvent,
}

impl<D> Failure<D> {
    /// The wait before the next attempt.
    #[inline(always)]
    pub fn wait(&self) -> Duration {
        self.wait
    }
}

impl<D> Failure<D> {
    /// What failed: the error, or with `retry_if_ok` the whole result.
    #[inline(always)]
    pub fn decided(&self) -> &D {
        &self.decided
    }

    /// The retry's event.
    #[inline(always)]
    pub fn event(&self) -> &RetryEvent {
        &self.event
    }
}

/// Types the `before_retry` action of an async function by `failure`, so a
/// closure's parameter types are inferred, and checks it is an async action
/// on `(&D, &RetryEvent)`. The loop then calls it in place (evaluated per
/// retry, so it may borrow what the body borrows, `&mut self` included):
/// calling it inside a generic function here would leave higher-ranked
/// lifetimes in the caller's future that make `tokio::spawn` reject it.
#[inline(always)]
pub fn before_retry<D, F>(_failure: &Failure<D>, action: F) -> F
where
    F: AsyncFnOnce(&D, &RetryEvent),
{
    action
}

impl<D> Failure<D> {
    /// [`before_retry`] of a sync function: types `action`, a closure on
    /// `(&D, &RetryEvent)` returning `()`, by this failure; the loop then
    /// calls it in place. A method, so that a wrong action is reported on
    /// the user's token.
    #[inline(always)]
    pub fn sync_action<F, O>(&self, action: F) -> F
    where
        F: FnOnce(&D, &RetryEvent) -> O,
        O: crate::run::hooks::SyncAction,
    {
        action
    }
}

impl TokioSleepSlot {
    /// An empty slot: nothing allocated until the first wait.
    #[inline(always)]
    pub fn new() -> Self {
        TokioSleepSlot::default()
    }

    /// A tokio sleep of `wait`: the boxed `Sleep` is allocated on the first
    /// call and reset afterwards. Panics, naming the fix, outside a tokio
    /// runtime. A wait too long to add to the clock (a `max_backoff` of
    /// `Duration::MAX` and a huge `Retry-After`) sleeps until a deadline
    /// decades away, as `tokio::time::sleep` does: never an overflow panic.
    #[cfg(feature = "tokio")]
    pub fn sleep(&mut self, wait: Duration) -> core::pin::Pin<&mut tokio::time::Sleep> {
        let deadline = far_deadline(tokio::time::Instant::now(), wait);
        match &mut self.sleep {
            Some(sleep) => {
                sleep.as_mut().reset(deadline);
                sleep.as_mut()
            }
            slot @ None => slot.insert(Box::pin(new_tokio_sleep(deadline))).as_mut(),
        }
    }

    /// Starts a wait of `wait`, to be polled with
    /// [`poll_current`](Self::poll_current).
    #[cfg(feature = "tokio")]
    pub(crate) fn start(&mut self, wait: Duration) {
        self.sleep(wait);
    }

    /// Polls the wait started last by [`sleep`](Self::sleep) (ready when
    /// none was started).
    #[cfg(feature = "tokio")]
    pub(crate) fn poll_current(&mut self, cx: &mut core::task::Context<'_>) -> core::task::Poll<()> {
        match &mut self.sleep {
            Some(sleep) => core::future::Future::poll(sleep.as_mut(), cx),
            None => core::task::Poll::Ready(()),
        }
    }

    /// Without the `tokio` feature, `start::<TokioSleeper>` does not compile,
    /// so no loop can get here; the method exists so that the one error a
    /// user sees is the missing feature.
    #[cfg(not(feature = "tokio"))]
    pub fn sleep(&mut self, _wait: Duration) -> core::future::Ready<()> {
        panic!("backoff-runtime was built without the `tokio` feature")
    }
}

/// One wait with the function's `sleep = ...` (`Fn(Duration) -> impl
/// Future`; the future's output is ignored, so `async_io::Timer::after` fits).
pub async fn custom_sleep<F, Fut>(sleep: F, wait: Duration)
where
    F: FnOnce(Duration) -> Fut,
    Fut: SleepFuture,
{
    sleep(wait).await;
}

/// What an async function's `sleep = ...` returns: any future (its output is
/// ignored).
#[diagnostic::on_unimplemented(
    message = "`sleep = ...` on an `async fn` must return a future to await, but it returns `{Self}`",
    label = "this sleep does not return a future",
    note = "pass your runtime's async sleep, such as `async_io::Timer::after`; a blocking sleep belongs on a sync fn"
)]
pub trait SleepFuture: core::future::Future {}

impl<F: core::future::Future> SleepFuture for F {}

/// `now + wait`, or a deadline 30 years from now when that is not
/// representable (tokio's own far-future fallback); 30 years from now is
/// always representable where `now` came from a running clock.
#[cfg(feature = "tokio")]
fn far_deadline(now: tokio::time::Instant, wait: Duration) -> tokio::time::Instant {
    const FAR_FUTURE: Duration = Duration::from_secs(86_400 * 365 * 30);
    now.checked_add(wait)
        .or_else(|| now.checked_add(FAR_FUTURE))
        .unwrap_or(now)
}

/// `tokio::time::sleep_until`, with a panic message that names the fix when
/// there is no runtime to sleep on.
#[cfg(feature = "tokio")]
fn new_tokio_sleep(deadline: tokio::time::Instant) -> tokio::time::Sleep {
    if tokio::runtime::Handle::try_current().is_err() {
        panic!(
            "#[retry] async function failed outside a tokio runtime and cannot sleep before retrying: \
             call it inside a tokio runtime built with `enable_time()` (e.g. #[tokio::main]), \
             or give the attribute your runtime's sleep with `sleep = ...`"
        );
    }
    tokio::time::sleep_until(deadline)
}
