//! The driver every front end runs: the attribute's sync and async loops
//! (generated in the function, so the body may borrow `&mut self`), the
//! builder's `.call()` and its future.
//!
//! A success is handled where it happens: the expansion writes it
//! ([`Loop::succeeded`], [`first_success`]), a few inline branches. A
//! failure goes to one `#[cold]` entry compiled once per result type, not
//! once per function: [`Loop::failed`] for a loop that stays in the
//! function (async, and sync with `before_retry`), [`retry_blocking`] for
//! a sync loop, whose retries run out of line. Both read the user's hooks
//! through [`Hooks`], the references the caller lends them.

use core::time::Duration;
use std::time::Instant;

use crate::limits::admission::Admitting;
use crate::limits::limit::Limit;
use crate::observe::events::{RetryEvent, Success};
use crate::observe::site::Site;
use crate::run::attempt::AttemptSource;
use crate::run::decide::{FailedAttempt, RetryState, read_start_when};
use crate::run::hooks::{Hooks, Outcome};
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
    /// The wait alone ([`Waits`]), or the retry to act on ([`Acts`]).
    type Retry<O>;
    /// Whether the retry's event is kept for the action.
    const ACTS: bool;
    /// The retry, or (when the event was not kept) the outcome.
    fn retry<O>(wait: Duration, outcome: O, event: Option<RetryEvent>) -> Result<Self::Retry<O>, O>;
}

/// No action: a retry is its wait. Passed as a value, so the mode is
/// inferred at the call.
#[derive(Clone, Copy, Debug)]
pub struct Waits;

/// An action before each wait: a retry is the `NextAttempt` it acts on.
#[derive(Clone, Copy, Debug)]
pub struct Acts;

impl Mode for Waits {
    type Retry<O> = Duration;
    const ACTS: bool = false;

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn retry<O>(wait: Duration, _outcome: O, _event: Option<RetryEvent>) -> Result<Duration, O> {
        Ok(wait)
    }
}

impl Mode for Acts {
    type Retry<O> = NextAttempt<O>;
    const ACTS: bool = true;

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn retry<O>(wait: Duration, outcome: O, event: Option<RetryEvent>) -> Result<NextAttempt<O>, O> {
        match event {
            Some(event) => Ok(NextAttempt { wait, outcome, event }),
            None => Err(outcome),
        }
    }
}

/// A failed attempt that will be retried after an action: its outcome
/// (the error, or with `retry_if_ok` the whole result), the retry's event,
/// and the wait.
#[derive(Debug)]
pub struct NextAttempt<O> {
    wait: Duration,
    outcome: O,
    event: RetryEvent,
}

impl<O> NextAttempt<O> {
    /// What failed: the error, or with `retry_if_ok` the whole result.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn outcome(&self) -> &O {
        &self.outcome
    }

    /// The retry's event.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn event(&self) -> &RetryEvent {
        &self.event
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
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn start(clock: ClockKind, policy: &Policy, budget: Option<Limit<'_>>, needs_start: bool) -> Self {
        Loop {
            state: RetryState::start(policy, budget, clock, needs_start),
        }
    }

    /// [`start`](Self::start) for a caller that knows whether the policy's
    /// `max_elapsed` or a hook needs the start (`needs_start`): an
    /// expansion of literal keys, which names its policy only where an
    /// attempt is decided.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn begin(clock: ClockKind, budget: Option<Limit<'_>>, needs_start: bool) -> Self {
        Loop {
            state: RetryState::with_start(clock, read_start_when(budget, clock, needs_start)),
        }
    }

    /// The [`AttemptSource`] of this call: its start, clock and deadline
    /// (for `context = ...`).
    #[inline]
    pub fn attempts(&self, policy: &Policy) -> AttemptSource {
        AttemptSource::new(policy, self.state.start_instant(), self.state.clock())
    }

    /// A fresh loop on `clock` that reads no start: for a front end that
    /// knows, once for all its calls, that nothing needs it
    /// ([`start_needed`](crate::run::decide::start_needed) is false; the
    /// tower layer asks when it is made).
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn unstarted(clock: ClockKind) -> Self {
        Loop {
            state: RetryState::with_start(clock, None),
        }
    }

    /// The call's start instant, when it was read.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn start_instant(&self) -> Option<Instant> {
        self.state.start_instant()
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

    /// The attempt that just ended succeeded: the limit gets its tokens
    /// back, and metrics, tracing and `on_success` hear of it when they
    /// listen. The expansion writes this call on its success path.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn succeeded(&mut self, budget: Option<Limit<'_>>, site: &Site, on_success: Option<&dyn Fn(&Success)>) {
        self.state.success(budget, site, on_success);
    }

    /// What follows an attempt that failed with `outcome` (with whether a
    /// retried function it called gave up): the final result, or the retry
    /// (its wait in mode [`Waits`], the `NextAttempt` to act on in mode
    /// [`Acts`]). The cold entry of every loop that stays in its function:
    /// compiled once per result type and mode, not once per function.
    #[cold]
    #[inline(never)]
    pub fn failed<M: Mode, T, E, O: Outcome<T, E>>(
        &mut self,
        _mode: M,
        policy: &Policy,
        budget: Option<Limit<'_>>,
        hooks: &Hooks<'_, T, E, O>,
        outcome: O,
        gave_up_below: bool,
    ) -> Step<Result<T, E>, M::Retry<O>> {
        let failure = FailedAttempt {
            outcome: &outcome,
            gave_up_below,
        };
        match self.state.decide_reporting(policy, budget, failure, hooks, M::ACTS) {
            Ok((wait, event)) => match M::retry(wait, outcome, event) {
                Ok(retry) => Step::Retry(retry),
                Err(outcome) => Step::Return(hooks.given_up(outcome)),
            },
            Err(_reason) => Step::Return(hooks.given_up(outcome)),
        }
    }

    /// [`failed`](Self::failed), after telling the limit named in
    /// `admission = ...` whether the attempt was throttled.
    #[cold]
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    pub fn failed_admitting<M: Mode, T, E, O: Outcome<T, E>>(
        &mut self,
        mode: M,
        policy: &Policy,
        budget: Option<Limit<'_>>,
        admitting: &Admitting<'_>,
        hooks: &Hooks<'_, T, E, O>,
        outcome: O,
        gave_up_below: bool,
    ) -> Step<Result<T, E>, M::Retry<O>> {
        if admitting.was_refused() {
            // Not an attempt: the limiter refused it, and the call ends.
            self.state.refused(policy, admitting.attempts(), &outcome, hooks);
            return Step::Return(hooks.given_up(outcome));
        }
        admitting.observed(hooks.throttled(&outcome));
        self.failed(mode, policy, budget, hooks, outcome, gave_up_below)
    }

    /// The call ends before an attempt that the `admission` limiter
    /// refused: `refused` (`E::from(Refused)`) reported as a give-up with
    /// [`StopReason::Refused`](crate::StopReason::Refused) (metrics,
    /// tracing, `on_give_up`) and returned.
    #[cold]
    #[inline(never)]
    pub fn refused<T, E, O: Outcome<T, E>>(
        &mut self,
        policy: &Policy,
        attempts: u32,
        hooks: &Hooks<'_, T, E, O>,
        refused: Result<T, E>,
    ) -> Result<T, E> {
        refused_reported(&mut self.state, policy, attempts, hooks, refused)
    }

    /// After the action on `next`: its wait, or (when the action ran so
    /// long that the wait would end past `max_elapsed`) the final result,
    /// reported as a give-up with [`StopReason::Deadline`](crate::StopReason).
    #[inline]
    pub fn after_action<T, E, O: Outcome<T, E>>(
        &mut self,
        policy: &Policy,
        hooks: &Hooks<'_, T, E, O>,
        next: NextAttempt<O>,
    ) -> Step<Result<T, E>, Duration> {
        if self.state.still_in_time(policy, next.wait, &next.outcome, hooks) {
            Step::Retry(next.wait)
        } else {
            Step::Return(hooks.given_up(next.outcome))
        }
    }
}

/// The clock an async loop sleeping with `timer` measures on. (A missing
/// `tokio` feature is reported by the expansion's `bounds::DefaultAsyncSleep`
/// check, on the user's words.)
#[cfg_attr(not(debug_assertions), inline(always))]
pub fn timer_clock<Tm: Timer>(_timer: &Tm) -> ClockKind {
    Tm::CLOCK
}

/// The start instant of a blocking loop, read only when `policy`, the limit
/// or a hook (`needs_start`) needs it: the happy path reads no clock.
#[cfg_attr(not(debug_assertions), inline(always))]
pub fn start_blocking<S: BlockingSleep>(
    policy: &Policy,
    budget: Option<Limit<'_>>,
    needs_start: bool,
    sleeper: &S,
) -> Option<Instant> {
    crate::run::decide::read_start(policy, budget, sleeper.clock(), needs_start)
}

/// The first attempt of a blocking loop succeeded: what
/// [`Loop::succeeded`] does, before any loop state exists.
#[cfg_attr(not(debug_assertions), inline(always))]
pub fn first_success<S: BlockingSleep>(
    budget: Option<Limit<'_>>,
    sleeper: &S,
    start: Option<Instant>,
    site: &Site,
    on_success: Option<&dyn Fn(&Success)>,
) {
    RetryState::first_success(budget, sleeper.clock(), start, site, on_success);
}

/// Runs a blocking loop's body again: what its retries borrow the body as.
/// A trait of its own rather than `dyn FnMut`, whose vtable also holds
/// `call_once` (a shim compiled for every closure lent, once per retried
/// function).
///
/// ```
/// use backoff_runtime::__private::Rerun;
///
/// let mut calls = 0;
/// let mut body = || { calls += 1; Ok::<u32, ()>(calls) };
/// let rerun: &mut dyn Rerun<u32, ()> = &mut body;
/// assert_eq!((rerun.rerun(), rerun.rerun()), (Ok(1), Ok(2)));
/// ```
pub trait Rerun<T, E> {
    /// Runs the body once more.
    fn rerun(&mut self) -> Result<T, E>;
}

impl<R: crate::bounds::RetryResult, F: FnMut() -> R> Rerun<R::Ok, R::Err> for F {
    #[inline]
    fn rerun(&mut self) -> Result<R::Ok, R::Err> {
        self().into_result()
    }
}

/// The attribute's sync body as its retries borrow it: the body's closure,
/// which the expansion moves out of its local in the failure arm (so the
/// happy path never takes its address), lent as `&mut dyn Rerun` typed by
/// the function's [`RetryResult`](crate::bounds::RetryResult). No closure
/// of the expansion's own around the body: one function less for every
/// annotated one. A function that returns no `Result` is reported once, by
/// the expansion's result check (this bound, on the same span, is its
/// duplicate).
///
/// ```
/// use backoff_runtime::__private::{Rerun, rerunning};
///
/// let mut calls = 0;
/// let mut body = || { calls += 1; std::io::Result::Ok(calls) };
/// let rerun: &mut dyn Rerun<u32, std::io::Error> = rerunning(&mut body);
/// assert_eq!(rerun.rerun().ok(), Some(1));
/// ```
#[cfg_attr(not(debug_assertions), inline(always))]
pub fn rerunning<F, R>(body: &mut F) -> &mut dyn Rerun<R::Ok, R::Err>
where
    F: FnMut() -> R,
    R: crate::bounds::RetryResult,
{
    body
}

/// A blocking loop's `before_retry` action, as the retries borrow it.
pub(crate) type BlockingActionRef<'a, O> = &'a mut dyn FnMut(&O, &RetryEvent);

/// What a blocking loop borrows for its retries: the body, the sleep and
/// the action (if any).
pub(crate) struct BlockingParts<'a, T, E, O> {
    /// Runs one attempt.
    pub body: &'a mut dyn Rerun<T, E>,
    /// Waits.
    pub sleeper: &'a dyn BlockingSleep,
    /// The builder's `before_retry`.
    pub action: Option<BlockingActionRef<'a, O>>,
    /// The builder's `admission`, with the result of a refused attempt.
    pub admission: Option<BlockingAdmission<'a, T, E>>,
}

/// The limiter a blocking loop asks before each attempt (`admission`),
/// with the result of a refused attempt.
pub(crate) type BlockingAdmission<'a, T, E> = (Admitting<'a>, fn() -> Result<T, E>);

impl<T, E, O> core::fmt::Debug for BlockingParts<'_, T, E, O> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("BlockingParts")
            .field("acts", &self.action.is_some())
            .finish_non_exhaustive()
    }
}

/// The first attempt of a blocking loop returned `result`, judged as a
/// whole (with `retry_if_ok`, or by the builder's `.call()`): its value
/// when it succeeded, the `#[cold]` retries otherwise.
#[inline]
pub(crate) fn settle_blocking<T, E, O: Outcome<T, E>>(
    policy: &Policy,
    budget: Option<Limit<'_>>,
    start: Option<Instant>,
    hooks: &Hooks<'_, T, E, O>,
    result: Result<T, E>,
    parts: BlockingParts<'_, T, E, O>,
) -> Result<T, E> {
    let judged = hooks.judge(result);
    if let Some((admitting, _)) = &parts.admission {
        admitting.observed(judged.as_ref().is_err_and(|outcome| hooks.throttled(outcome)));
    }
    match judged {
        Ok(value) => {
            RetryState::first_success(
                budget,
                parts.sleeper.clock(),
                start,
                &hooks.site(),
                hooks.on_success_hook(),
            );
            Ok(value)
        }
        Err(outcome) => retry_blocking(policy, budget, start, hooks, outcome, parts),
    }
}

/// `refused`, the result of an attempt the `admission` limiter refused
/// after `attempts` attempts, reported as a give-up with
/// `StopReason::Refused` and returned.
pub(crate) fn refused_reported<T, E, O: Outcome<T, E>>(
    state: &mut RetryState,
    policy: &Policy,
    attempts: u32,
    hooks: &Hooks<'_, T, E, O>,
    refused: Result<T, E>,
) -> Result<T, E> {
    match hooks.judge(refused) {
        Ok(value) => Ok(value),
        Err(outcome) => {
            state.refused(policy, attempts, &outcome, hooks);
            hooks.given_up(outcome)
        }
    }
}

/// The first attempt of a blocking loop that the `admission` limiter
/// refused: [`refused_reported`] on a loop state made from `clock` and
/// `start`.
#[cold]
#[inline(never)]
pub(crate) fn first_refused_blocking<T, E, O: Outcome<T, E>>(
    policy: &Policy,
    clock: ClockKind,
    start: Option<Instant>,
    admitting: &Admitting<'_>,
    hooks: &Hooks<'_, T, E, O>,
    refused: Result<T, E>,
) -> Result<T, E> {
    let mut state = RetryState::with_start(clock, start);
    refused_reported(&mut state, policy, admitting.attempts(), hooks, refused)
}

/// The retries of a blocking loop after a first attempt that failed with
/// `first`: decide, act, wait, run the body again, until a result is
/// accepted or a stop rule holds. Everything behind references: compiled
/// once per result type, not once per retried function.
#[cold]
#[inline(never)]
pub(crate) fn retry_blocking<T, E, O: Outcome<T, E>>(
    policy: &Policy,
    budget: Option<Limit<'_>>,
    start: Option<Instant>,
    hooks: &Hooks<'_, T, E, O>,
    first: O,
    parts: BlockingParts<'_, T, E, O>,
) -> Result<T, E> {
    let BlockingParts {
        body,
        sleeper,
        mut action,
        mut admission,
    } = parts;
    let mut state = RetryState::with_start(sleeper.clock(), start);
    let mut outcome = first;
    loop {
        let failure = FailedAttempt {
            outcome: &outcome,
            gave_up_below: crate::run::nested::gave_up_below(),
        };
        let acts = action.is_some();
        let wait = match state.decide_reporting(policy, budget, failure, hooks, acts) {
            Ok((wait, Some(event))) if acts => {
                if let Some(action) = action.as_mut() {
                    action(&outcome, &event);
                }
                if !state.still_in_time(policy, wait, &outcome, hooks) {
                    return hooks.given_up(outcome);
                }
                wait
            }
            Ok((wait, _)) => wait,
            Err(_reason) => return hooks.given_up(outcome),
        };
        sleeper.sleep(wait);
        if let Some((admitting, refused)) = admission.as_mut() {
            if !admitting.admit_blocking(&|wait| sleeper.sleep(wait)) {
                return refused_reported(&mut state, policy, admitting.attempts(), hooks, refused());
            }
        }
        crate::run::nested::enter_attempt();
        let judged = hooks.judge(body.rerun());
        if let Some((admitting, _)) = &admission {
            admitting.observed(judged.as_ref().is_err_and(|outcome| hooks.throttled(outcome)));
        }
        match judged {
            Ok(value) => {
                state.success(budget, &hooks.site(), hooks.on_success_hook());
                return Ok(value);
            }
            Err(next) => outcome = next,
        }
    }
}

/// The blocking retries (`retry_blocking`) of the attribute's sync loop:
/// `rerun` runs the body again, a closure the expansion makes only in its
/// failure arm (so on the happy path the body's closure keeps its captures
/// in registers) and lends as `&mut dyn Rerun`, so this entry is compiled
/// once per result type, not once per function.
#[cold]
#[inline(never)]
pub fn retry_blocking_owned<T, E, O: Outcome<T, E>>(
    policy: &Policy,
    budget: Option<Limit<'_>>,
    start: Option<Instant>,
    hooks: &Hooks<'_, T, E, O>,
    first: O,
    rerun: &mut dyn Rerun<T, E>,
    sleeper: &dyn BlockingSleep,
) -> Result<T, E> {
    let parts = BlockingParts {
        body: rerun,
        sleeper,
        action: None,
        admission: None,
    };
    retry_blocking(policy, budget, start, hooks, first, parts)
}

/// Runs one attempt of a blocking loop that stays in the function (with
/// `before_retry`): its result, and whether a retried function it called
/// gave up.
#[cfg_attr(not(debug_assertions), inline(always))]
pub fn blocking_attempt<R>(body: impl FnOnce() -> R) -> (R, bool) {
    crate::run::nested::enter_attempt();
    let result = body();
    (result, crate::run::nested::gave_up_below())
}

#[cfg(test)]
mod tests {
    use super::BlockingParts;
    use crate::time::sleep::DefaultSleep;

    #[test]
    fn blocking_parts_debug_as_whether_they_act() {
        let mut body = || Ok::<u8, ()>(1);
        let parts: BlockingParts<'_, u8, (), ()> = BlockingParts {
            body: &mut body,
            sleeper: &DefaultSleep,
            action: None,
            admission: None,
        };
        assert_eq!(format!("{parts:?}"), "BlockingParts { acts: false, .. }");
    }
}
