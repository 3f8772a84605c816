//! The retry loop of sync functions, entered only after the first attempt
//! failed: out of line and `#[cold]`, so the happy path of an annotated
//! function is the plain call.

use core::time::Duration;
use std::time::Instant;

use crate::limits::limit::Limit;
use crate::run::decide::{Failed, RetryState};
use crate::run::hooks::{HookSet, Hooks};
use crate::run::poll::{PollHookSet, PollHooks};
use crate::run::result::RetryResult;
use crate::schedule::policy::Policy;
use crate::time::clock::ClockKind;

/// How a sync loop waits, and which clock it measures `max_elapsed` on:
/// [`ThreadSleep`] by default, [`CustomSleep`] for `sleep = ...`.
///
pub trait SyncSleeper {
    /// Waits for `wait`.
    fn sleep(&self, wait: Duration);
    /// The clock of loops that sleep this way.
    #[doc(hidden)]
    fn clock(&self) -> crate::run::async_loop::ClockChoice;
}

/// `std::thread::sleep`, or the thread's virtual clock when a test installed
/// one ([`testing::VirtualClock`](crate::testing::VirtualClock)).
///
#[derive(Clone, Copy, Debug, Default)]
pub struct ThreadSleep;

impl SyncSleeper for ThreadSleep {
    fn sleep(&self, wait: Duration) {
        #[cfg(any(test, feature = "test-util"))]
        if crate::testing::virtual_sleep(wait) {
            return;
        }
        std::thread::sleep(wait);
    }

    fn clock(&self) -> crate::run::async_loop::ClockChoice {
        crate::run::async_loop::ClockChoice(ClockKind::Sync)
    }
}

/// The function's own `sleep = ...`; `max_elapsed` is measured with
/// `std::time::Instant`. Built by the `#[retry]` expansion.
///
/// ```
/// use backoff_runtime::retry;
/// use std::cell::Cell;
///
/// let slept = Cell::new(0);
/// #[retry(max_retries = 2, sleep = |_| slept.set(slept.get() + 1))]
/// fn flaky(slept: &Cell<u32>) -> Result<(), ()> { let _ = slept; Err(()) }
/// assert!(flaky(&slept).is_err());
/// assert_eq!(slept.get(), 2);
/// ```
pub struct CustomSleep<F> {
    sleep: F,
    call: fn(&F, Duration),
}

impl<F> core::fmt::Debug for CustomSleep<F> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("CustomSleep")
    }
}

/// Wraps the `sleep = ...` of a sync function, checking here, once, that it
/// is `Fn(Duration)`.
#[inline(always)]
pub fn custom_sync_sleep<F: Fn(Duration)>(sleep: F) -> CustomSleep<F> {
    CustomSleep {
        sleep,
        call: |f, wait| f(wait),
    }
}

impl<F> SyncSleeper for CustomSleep<F> {
    fn sleep(&self, wait: Duration) {
        (self.call)(&self.sleep, wait);
    }

    fn clock(&self) -> crate::run::async_loop::ClockChoice {
        crate::run::async_loop::ClockChoice(ClockKind::Std)
    }
}

/// Reads the loop's clock when `policy` (or a hook, `needs_start`) needs a
/// start instant; `None` otherwise, so the happy path reads no clock.
#[inline(always)]
pub fn start_sync<S: SyncSleeper>(
    policy: &Policy,
    budget: Option<Limit<'_>>,
    needs_start: bool,
    sleeper: &S,
) -> Option<Instant> {
    crate::run::decide::read_start(policy, budget, sleeper.clock().0, needs_start)
}

/// What follows the first attempt of a sync `#[retry]` function: its result
/// when it succeeded (inline: the happy path costs a branch), the cold retry
/// loop otherwise. `hooks` builds the function's hooks from an empty
/// [`HookSet`] typed by the error, so closures in them infer `&E`.
#[inline(always)]
pub fn after_first_attempt<R, F, B, H, S>(
    first: R,
    policy: &Policy,
    budget: Option<Limit<'_>>,
    start: Option<Instant>,
    mut body: F,
    hooks: B,
    sleeper: S,
) -> R
where
    R: RetryResult,
    F: FnMut() -> R,
    B: FnOnce(HookSet<R::Err>) -> H,
    H: Hooks<R::Err>,
    S: SyncSleeper,
{
    match first.into_result() {
        Ok(value) => {
            RetryState::first_success(budget, sleeper.clock().0, start, || hooks(HookSet::new()));
            R::from_result(Ok(value))
        }
        Err(error) => retry_sync(
            policy,
            budget,
            start,
            error,
            &mut body,
            hooks(HookSet::new()),
            sleeper,
            judge_errors::<R, H>,
            |error| R::from_result(Err(error)),
        ),
    }
}

/// [`after_first_attempt`] of a function with `retry_if_ok`: a value
/// `retry_if_ok` calls pending is retried like an error, and the hooks see
/// the attempt's whole `Result`.
#[inline(always)]
pub fn after_first_attempt_polling<R, F, B, H, S>(
    first: R,
    policy: &Policy,
    budget: Option<Limit<'_>>,
    start: Option<Instant>,
    mut body: F,
    hooks: B,
    sleeper: S,
) -> R
where
    R: RetryResult,
    F: FnMut() -> R,
    B: FnOnce(PollHookSet<R::Ok, R::Err>) -> H,
    H: PollHooks<R::Ok, R::Err>,
    S: SyncSleeper,
{
    let hooks = hooks(PollHookSet::new());
    match judge_values::<R, H>(first, &hooks) {
        Ok(done) => {
            RetryState::first_success(budget, sleeper.clock().0, start, || &hooks);
            done
        }
        Err(pending) => retry_sync(
            policy,
            budget,
            start,
            pending,
            &mut body,
            hooks,
            sleeper,
            judge_values::<R, H>,
            R::from_result,
        ),
    }
}

/// An attempt's result, judged on its error: `Ok` to return it, `Err` with
/// the error to decide on.
#[inline(always)]
pub(crate) fn judge_errors<R: RetryResult, H>(result: R, _hooks: &H) -> Result<R, R::Err> {
    match result.into_result() {
        Ok(value) => Ok(R::from_result(Ok(value))),
        Err(error) => Err(error),
    }
}

/// An attempt's result, judged as a whole: `Ok` to return it (a value that
/// is not pending), `Err` with the result to decide on (an error, or a
/// pending value).
#[inline(always)]
pub(crate) fn judge_values<R: RetryResult, H: PollHooks<R::Ok, R::Err>>(
    result: R,
    hooks: &H,
) -> Result<R, Result<R::Ok, R::Err>> {
    match result.into_result() {
        Ok(value) if !hooks.pending(&value) => Ok(R::from_result(Ok(value))),
        other => Err(other),
    }
}

/// Retries `body` after an attempt that must be decided on (`first`, an
/// error or a pending result), waiting with `sleeper` between attempts,
/// until `judge` accepts a result or a stop rule holds; returns the last
/// result (`back` turns what was decided on into it).
#[cold]
#[inline(never)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn retry_sync<R, D, F, H, S>(
    policy: &Policy,
    budget: Option<Limit<'_>>,
    start: Option<Instant>,
    first: D,
    body: &mut F,
    hooks: H,
    sleeper: S,
    judge: impl Fn(R, &H) -> Result<R, D>,
    back: impl Fn(D) -> R,
) -> R
where
    F: FnMut() -> R,
    H: Hooks<D>,
    S: SyncSleeper,
{
    let mut state = RetryState::with_start(sleeper.clock().0, start);
    let mut decided = first;
    loop {
        let failure = Failed {
            error: &decided,
            gave_up_below: crate::run::nested::gave_up_below(),
        };
        match state.decide(policy, budget, failure, &hooks) {
            Ok(wait) => sleeper.sleep(wait),
            Err(_reason) => return back(decided),
        }
        crate::run::nested::enter_attempt();
        match judge(body(), &hooks) {
            Ok(done) => {
                state.success(budget, || &hooks);
                return done;
            }
            Err(next) => decided = next,
        }
    }
}
