//! The driver every front end runs: the attribute's sync and async loops
//! (generated in the function, so the body may borrow `&mut self`), the
//! builder's `.call()` and its future. One [`Loop`] state, one
//! [`step`](Loop::step) after each attempt (generic over how the result is
//! judged, through the hook set, and over whether an action runs before the
//! wait, through [`Mode`]), one check after an action
//! ([`after_action`](Loop::after_action)), and one first-attempt path for
//! blocking loops ([`after_first_attempt`]) whose retries run out of line.

use core::time::Duration;
use std::time::Instant;

use crate::limits::limit::Limit;
use crate::observe::events::RetryEvent;
use crate::run::attempt::AttemptSource;
use crate::run::decide::{Failed, RetryState};
use crate::run::hooks::{DynHooks, HookSet, Hooks};
use crate::run::result::RetryResult;
use crate::schedule::policy::Policy;
use crate::time::clock::ClockKind;
use crate::time::sleep::{BlockingSleep, Timer};

/// What a loop does after an attempt.
#[derive(Debug)]
pub enum Step<R, W> {
    /// Return this result: a success, or the final one.
    Return(R),
    /// Retry: wait (and, with an action, act first).
    Retry(W),
}

/// Whether an action (`before_retry`) runs before each wait: what a retry
/// hands the loop.
pub trait Mode {
    /// The wait alone ([`Waits`]), or the failure to act on ([`Acts`]).
    type Retry<D>;
    /// Whether the retry's event is kept for the action.
    const ACTS: bool;
    /// The retry, or (when the event was not kept) what was decided on.
    fn retry<D>(wait: Duration, decided: D, event: Option<RetryEvent>) -> Result<Self::Retry<D>, D>;
}

/// No action: a retry is its wait.
#[derive(Debug)]
pub enum Waits {}

/// An action before each wait: a retry is the [`Failure`] it acts on.
#[derive(Debug)]
pub enum Acts {}

impl Mode for Waits {
    type Retry<D> = Duration;
    const ACTS: bool = false;

    #[inline(always)]
    fn retry<D>(wait: Duration, _decided: D, _event: Option<RetryEvent>) -> Result<Duration, D> {
        Ok(wait)
    }
}

impl Mode for Acts {
    type Retry<D> = Failure<D>;
    const ACTS: bool = true;

    #[inline(always)]
    fn retry<D>(wait: Duration, decided: D, event: Option<RetryEvent>) -> Result<Failure<D>, D> {
        match event {
            Some(event) => Ok(Failure { wait, decided, event }),
            None => Err(decided),
        }
    }
}

/// A failed attempt that will be retried after an action: what failed (an
/// error, or with `retry_if_ok` the whole result), the retry's event, and
/// the wait.
#[derive(Debug)]
pub struct Failure<D> {
    wait: Duration,
    decided: D,
    event: RetryEvent,
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

    /// Types a sync `before_retry` by this failure, so a closure's parameter
    /// types are inferred; the loop then calls it in place, and checks what
    /// it returns with `bounds::SyncBeforeRetry` on the user's token.
    #[inline(always)]
    pub fn sync_action<F, O>(&self, action: F) -> F
    where
        F: FnOnce(&D, &RetryEvent) -> O,
    {
        action
    }
}

/// The state of one call's retry loop (20 bytes, 4-byte aligned: it lives
/// in the future of every annotated async function).
#[derive(Debug)]
pub struct Loop {
    state: RetryState,
}

impl Loop {
    /// A fresh loop measuring on `clock`; reads it only when `max_elapsed`,
    /// the limit or a hook (`needs_start`) needs the start.
    #[inline(always)]
    pub fn start(clock: ClockKind, policy: &Policy, budget: Option<Limit<'_>>, needs_start: bool) -> Self {
        Loop {
            state: RetryState::start(policy, budget, clock, needs_start),
        }
    }

    /// The [`AttemptSource`] of this call: its start, clock and deadline
    /// (for `context = ...`).
    #[inline]
    pub fn attempts(&self, policy: &Policy) -> AttemptSource {
        AttemptSource::new(policy, self.state.start_instant(), self.state.clock())
    }

    /// The time limit of the next attempt under `timeout = limit`: the
    /// limit, or less when `max_elapsed` ends sooner.
    #[inline]
    pub fn attempt_limit(&self, policy: &Policy, limit: Duration) -> Duration {
        match self.state.remaining(policy) {
            Some(remaining) => limit.min(remaining),
            None => limit,
        }
    }

    /// What follows an attempt that returned `result` (with whether a
    /// retried function it called gave up): return it, or retry. `hooks`
    /// builds the hooks from an empty [`HookSet`] typed by the result, so
    /// closures in them infer their parameters.
    #[inline(always)]
    #[allow(clippy::type_complexity)]
    pub fn step<M, R, B, H>(
        &mut self,
        policy: &Policy,
        budget: Option<Limit<'_>>,
        (result, below): (R, bool),
        hooks: B,
    ) -> Step<R, M::Retry<H::Decided>>
    where
        M: Mode,
        R: RetryResult,
        B: FnOnce(HookSet<R::Ok, R::Err>) -> H,
        H: Hooks<Ok = R::Ok, Err = R::Err>,
    {
        let result = match result.into_result() {
            // Without `retry_if_ok` an `Ok` is a success: the hooks are
            // built only if the success is reported.
            Ok(value) if !H::JUDGES_VALUES => {
                self.state.success(budget, || hooks(HookSet::new()));
                return Step::Return(R::from_result(Ok(value)));
            }
            result => result,
        };
        let hooks = hooks(HookSet::new());
        match hooks.judge(result) {
            Ok(done) => {
                self.state.success(budget, || &hooks);
                Step::Return(R::from_result(done))
            }
            Err(decided) => match self.decide::<M, H>(policy, budget, decided, below, &hooks) {
                Step::Return(result) => Step::Return(R::from_result(result)),
                Step::Retry(retry) => Step::Retry(retry),
            },
        }
    }

    /// The decision on `decided`: the final result, or the retry.
    #[inline]
    #[allow(clippy::type_complexity)]
    fn decide<M: Mode, H: Hooks>(
        &mut self,
        policy: &Policy,
        budget: Option<Limit<'_>>,
        decided: H::Decided,
        gave_up_below: bool,
        hooks: &H,
    ) -> Step<Result<H::Ok, H::Err>, M::Retry<H::Decided>> {
        let failure = Failed {
            error: &decided,
            gave_up_below,
        };
        match self.state.decide_reporting(policy, budget, failure, hooks, M::ACTS) {
            Ok((wait, event)) => match M::retry(wait, decided, event) {
                Ok(retry) => Step::Retry(retry),
                Err(decided) => Step::Return(H::back(decided)),
            },
            Err(_reason) => Step::Return(H::back(decided)),
        }
    }

    /// After the action on `failure`: its wait, or (when the action ran so
    /// long that the wait would end past `max_elapsed`) the final result,
    /// reported as a give-up with [`StopReason::Deadline`](crate::StopReason).
    #[inline(always)]
    pub fn after_action<R, B, H>(
        &mut self,
        policy: &Policy,
        failure: Failure<H::Decided>,
        hooks: B,
    ) -> Step<R, Duration>
    where
        R: RetryResult,
        B: FnOnce(HookSet<R::Ok, R::Err>) -> H,
        H: Hooks<Ok = R::Ok, Err = R::Err>,
    {
        if policy.max_elapsed.is_none()
            || self
                .state
                .still_in_time(policy, failure.wait, &failure.decided, &hooks(HookSet::new()))
        {
            Step::Retry(failure.wait)
        } else {
            Step::Return(R::from_result(H::back(failure.decided)))
        }
    }
}

/// The clock an async loop sleeping with `timer` measures on. (A missing
/// `tokio` feature is reported by the expansion's `bounds::DefaultAsyncSleep`
/// check, on the user's words.)
#[inline(always)]
pub fn timer_clock<Tm: Timer>(_timer: &Tm) -> ClockKind {
    Tm::CLOCK
}

/// The start instant of a blocking loop, read only when `policy`, the limit
/// or a hook (`needs_start`) needs it: the happy path reads no clock.
#[inline(always)]
pub fn start_blocking<S: BlockingSleep>(
    policy: &Policy,
    budget: Option<Limit<'_>>,
    needs_start: bool,
    sleeper: &S,
) -> Option<Instant> {
    crate::run::decide::read_start(policy, budget, sleeper.clock(), needs_start)
}

/// What a blocking loop does before each wait besides waiting: nothing
/// ([`NoAction`]), or the builder's `before_retry`.
pub trait BlockingAction<D> {
    /// Whether there is an action (the retry's event is then kept for it).
    const SET: bool;
    /// Runs the action.
    fn run(&mut self, decided: &D, event: &RetryEvent);
}

/// No action before the wait.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoAction;

impl<D> BlockingAction<D> for NoAction {
    const SET: bool = false;

    #[inline(always)]
    fn run(&mut self, _decided: &D, _event: &RetryEvent) {}
}

/// What follows the first attempt of a blocking loop: its result when it
/// succeeded (inline: the happy path costs a branch), the `#[cold]` retry
/// loop otherwise. Shared by the attribute and the builder's `.call()`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub fn after_first_attempt<R, F, B, H, S, A>(
    first: R,
    policy: &Policy,
    budget: Option<Limit<'_>>,
    start: Option<Instant>,
    body: F,
    hooks: B,
    sleeper: S,
    action: A,
) -> R
where
    R: RetryResult,
    F: FnMut() -> R,
    B: FnOnce(HookSet<R::Ok, R::Err>) -> H,
    H: Hooks<Ok = R::Ok, Err = R::Err>,
    S: BlockingSleep,
    A: BlockingAction<H::Decided>,
{
    let first = match first.into_result() {
        // Without `retry_if_ok` an `Ok` is a success: the hooks are built
        // only if the success is reported.
        Ok(value) if !H::JUDGES_VALUES => {
            RetryState::first_success(budget, sleeper.clock(), start, || hooks(HookSet::new()));
            return R::from_result(Ok(value));
        }
        first => first,
    };
    let hooks = hooks(HookSet::new());
    match hooks.judge(first) {
        Ok(done) => {
            RetryState::first_success(budget, sleeper.clock(), start, || &hooks);
            R::from_result(done)
        }
        Err(decided) => R::from_result(blocking_retries(
            policy, budget, start, decided, body, hooks, sleeper, action,
        )),
    }
}

/// The retries after a first attempt that failed: everything the blocking
/// loop needs, taken by value, made into references here, out of line, so
/// the happy path neither builds nor stores any of it (the body's closure
/// stays in registers until it is needed).
#[cold]
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn blocking_retries<R, F, H, S, A>(
    policy: &Policy,
    budget: Option<Limit<'_>>,
    start: Option<Instant>,
    decided: H::Decided,
    mut body: F,
    hooks: H,
    sleeper: S,
    mut action: A,
) -> Result<R::Ok, R::Err>
where
    R: RetryResult,
    F: FnMut() -> R,
    H: Hooks<Ok = R::Ok, Err = R::Err>,
    S: BlockingSleep,
    A: BlockingAction<H::Decided>,
{
    let mut run = |decided: &H::Decided, event: &RetryEvent| action.run(decided, event);
    let action: Option<ActionRef<'_, H::Decided>> = if A::SET { Some(&mut run) } else { None };
    let judge = |result| hooks.judge(result);
    let retry = Blocking {
        body: &mut || body().into_result(),
        judge: &judge,
        back: H::back,
        hooks: &hooks,
        sleeper: &sleeper,
        action,
    };
    retry.run(policy, budget, start, decided)
}

/// A blocking loop's `before_retry` action, as `Blocking` holds it.
type ActionRef<'a, D> = &'a mut dyn FnMut(&D, &RetryEvent);

/// A blocking loop's retries, behind references: compiled once per result
/// type, not once per retried function.
struct Blocking<'a, T, E, D> {
    body: &'a mut dyn FnMut() -> Result<T, E>,
    judge: &'a dyn Fn(Result<T, E>) -> Result<Result<T, E>, D>,
    back: fn(D) -> Result<T, E>,
    hooks: &'a dyn DynHooks<D>,
    sleeper: &'a dyn BlockingSleep,
    action: Option<ActionRef<'a, D>>,
}

impl<T, E, D> Blocking<'_, T, E, D> {
    /// Retries after a first attempt that must be decided on (`first`),
    /// waiting with the sleeper (after the action, when set), until a
    /// result is accepted or a stop rule holds.
    #[cold]
    #[inline(never)]
    fn run(mut self, policy: &Policy, budget: Option<Limit<'_>>, start: Option<Instant>, first: D) -> Result<T, E> {
        let mut state = RetryState::with_start(self.sleeper.clock(), start);
        let mut decided = first;
        loop {
            let failure = Failed {
                error: &decided,
                gave_up_below: crate::run::nested::gave_up_below(),
            };
            let acts = self.action.is_some();
            let wait = match state.decide_reporting(policy, budget, failure, self.hooks, acts) {
                Ok((wait, Some(event))) if acts => {
                    if let Some(action) = self.action.as_mut() {
                        action(&decided, &event);
                    }
                    if !state.still_in_time(policy, wait, &decided, self.hooks) {
                        return (self.back)(decided);
                    }
                    wait
                }
                Ok((wait, _)) => wait,
                Err(_reason) => return (self.back)(decided),
            };
            self.sleeper.sleep(wait);
            crate::run::nested::enter_attempt();
            match (self.judge)((self.body)()) {
                Ok(done) => {
                    state.success_reported(budget, self.hooks);
                    return done;
                }
                Err(next) => decided = next,
            }
        }
    }
}

/// Runs one attempt of a blocking loop that stays in the function (with
/// `before_retry`): its result, and whether a retried function it called
/// gave up.
#[inline(always)]
pub fn blocking_attempt<R>(body: impl FnOnce() -> R) -> (R, bool) {
    crate::run::nested::enter_attempt();
    let result = body();
    (result, crate::run::nested::gave_up_below())
}
