//! The blocking loop.
//!
//! A sync function's retries, run out of line after
//! its first attempt failed, and the builder's `.call()`. The decision is
//! the async loop's ([`Loop`]).

use crate::limits::admission::{Admitting, FromRefused, Refused, RefusedResult};
use crate::limits::admission_limit::{Admission, AdmissionLimit, AdmissionRequest, AttemptEnd};
use crate::limits::limit::RetryLimit;
use crate::observe::events::{RetryEvent, Success};
use crate::observe::site::Site;
use crate::run::decide::{FailedAttempt, RetryState};
use crate::run::driver::refused_reported;
use crate::run::hooks::Hooks;
use crate::run::outcome::Outcome;
use crate::run::result::RetryResult;
use crate::schedule::policy::Policy;
use crate::time::Instant;
use crate::time::clock::Clock;
use crate::time::sleep::BlockingSleep;

/// The start instant of a blocking loop, read only when `policy`, the limit
/// or a hook (`needs_start`) needs it: the happy path reads no clock.
#[cfg_attr(not(debug_assertions), inline(always))]
pub fn start_blocking<S: BlockingSleep>(
    policy: &Policy,
    budget: Option<&dyn RetryLimit>,
    needs_start: bool,
    sleeper: &S,
) -> Option<Instant> {
    crate::run::decide::read_start(Some(policy), budget, sleeper.clock(), needs_start)
}

/// The first attempt of a blocking loop succeeded: what
/// [`Loop::succeeded`](crate::run::driver::Loop::succeeded) does, before any loop state exists.
#[cfg_attr(not(debug_assertions), inline(always))]
pub fn first_success<S: BlockingSleep>(
    budget: Option<&dyn RetryLimit>,
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

impl<R: RetryResult, F: FnMut() -> R> Rerun<R::Ok, R::Err> for F {
    #[inline]
    fn rerun(&mut self) -> Result<R::Ok, R::Err> {
        self().into_result()
    }
}

/// The attribute's sync body as its retries borrow it: the body's closure,
/// which the expansion moves out of its local in the failure arm (so the
/// happy path never takes its address), lent as `&mut dyn Rerun` typed by
/// the function's [`RetryResult`]. No closure
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
    R: RetryResult,
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
    pub admission: Option<(Admitting<'a>, RefusedResult<Result<T, E>>)>,
}

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
    budget: Option<&dyn RetryLimit>,
    start: Option<Instant>,
    hooks: &Hooks<'_, T, E, O>,
    result: Result<T, E>,
    mut parts: BlockingParts<'_, T, E, O>,
) -> Result<T, E> {
    let judged = hooks.judge(result);
    if let Some((admitting, _)) = &mut parts.admission {
        admitting.observed(hooks.attempt_end(admitting.clock(), judged.as_ref()));
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

/// The retries of a blocking loop after a first attempt that failed with
/// `first`: decide, act, wait, run the body again, until a result is
/// accepted or a stop rule holds. Everything behind references: compiled
/// once per result type, not once per retried function.
#[cold]
#[inline(never)]
pub(crate) fn retry_blocking<T, E, O: Outcome<T, E>>(
    policy: &Policy,
    budget: Option<&dyn RetryLimit>,
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
                return refused_reported(
                    &mut state,
                    (policy, budget),
                    admitting.attempts(),
                    hooks,
                    refused(admitting.refusal()),
                );
            }
        }
        state.sent();
        crate::run::nested::enter_attempt();
        let judged = hooks.judge(body.rerun());
        if let Some((admitting, _)) = &mut admission {
            admitting.observed(hooks.attempt_end(admitting.clock(), judged.as_ref()));
        }
        match judged {
            Ok(value) => {
                state.success(budget, &hooks.site(), hooks.on_success_hook(), false);
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
/// once per result type, not once per function. With `admission`
/// ([`FirstAdmitted::for_retries`]), the limiter hears the first failure,
/// then is asked before each retry.
#[cold]
#[inline(never)]
#[allow(clippy::too_many_arguments)]
pub fn retry_blocking_owned<T, E, O: Outcome<T, E>>(
    policy: &Policy,
    budget: Option<&dyn RetryLimit>,
    start: Option<Instant>,
    hooks: &Hooks<'_, T, E, O>,
    first: O,
    rerun: &mut dyn Rerun<T, E>,
    sleeper: &dyn BlockingSleep,
    admission: Option<(FirstAdmitted<'_>, RefusedResult<Result<T, E>>)>,
) -> Result<T, E> {
    let admission = admission.map(|(first_attempt, refused)| {
        let mut admitting = first_attempt.into_admitting();
        admitting.observed(hooks.attempt_end(admitting.clock(), Err(&first)));
        (admitting, refused)
    });
    let parts = BlockingParts {
        body: rerun,
        sleeper,
        action: None,
        admission,
    };
    retry_blocking(policy, budget, start, hooks, first, parts)
}

/// The first attempt of the attribute's sync loop, admitted by the limiter
/// of `admission = ...`: the limiter hears its end exactly once. The
/// expansion asks ([`ask`](Self::ask)), holds it ([`held`](Self::held)),
/// then hands it to [`succeeded`](Self::succeeded) or
/// [`for_retries`](Self::for_retries); dropped by a panic in the body, it
/// tells the limiter [`Ending::Panicked`](crate::limits::Ending::Panicked).
pub struct FirstAdmitted<'a> {
    limit: &'a dyn AdmissionLimit,
    clock: Clock,
}

impl core::fmt::Debug for FirstAdmitted<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("FirstAdmitted").finish_non_exhaustive()
    }
}

impl<'a> FirstAdmitted<'a> {
    /// The first attempt's admission in the attribute's sync loop with
    /// `admission` (and neither `before_retry` nor `retry_if_ok`): `Ok` when
    /// it may start, after the waits the limiter asks for, slept on
    /// `sleeper`; the refusal otherwise. The first question is inline and
    /// reads no clock unless the limiter does; the waits are out of line.
    #[inline]
    pub fn ask(limit: &dyn AdmissionLimit, clock: Clock, sleeper: &dyn BlockingSleep) -> Result<(), Refused> {
        match limit.admit(AdmissionRequest::on_clock(clock, 1)) {
            Admission::Go => Ok(()),
            answer => held_first_blocking(limit, clock, answer, sleeper),
        }
    }

    /// The first attempt `limit` admitted on `clock` ([`ask`](Self::ask)
    /// said so), held until the limiter hears its end. Made in place by the
    /// expansion: with a `static` limiter, its fields are constants, and the
    /// happy path stores nothing.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn held(limit: &'a dyn AdmissionLimit, clock: Clock) -> Self {
        FirstAdmitted { limit, clock }
    }

    /// The attempt succeeded: its limiter hears it.
    #[inline]
    pub fn succeeded(self, limit: &dyn AdmissionLimit, clock: Clock) {
        // Told through the limiter the expansion names (the guard's copy only
        // serves a panic): the call stays direct where the limiter is known.
        core::mem::forget(self);
        limit.observed(AttemptEnd::on_clock(clock, false, None));
    }

    /// The attempt failed: it, with the refused result of its function's
    /// error type, is what [`retry_blocking_owned`] takes with
    /// `admission = ...`. (The expansion names it on the key, where a
    /// missing `From<Refused>` is reported.)
    #[inline]
    pub fn for_retries<T, E: FromRefused>(self) -> Option<(Self, RefusedResult<Result<T, E>>)> {
        Some((self, |refused| Err(E::from_refused(refused))))
    }

    /// The call's [`Admitting`], which now holds this attempt.
    fn into_admitting(self) -> Admitting<'a> {
        let admitting = Admitting::of_dyn(self.limit, self.clock).holding_first();
        core::mem::forget(self);
        admitting
    }
}

impl Drop for FirstAdmitted<'_> {
    #[cold]
    fn drop(&mut self) {
        // The attempt's `Admitting` gives it back.
        drop(Admitting::of_dyn(self.limit, self.clock).holding_first());
    }
}

/// [`FirstAdmitted::ask`] after a first answer other than `Go`.
#[cold]
#[inline(never)]
fn held_first_blocking(
    limit: &dyn AdmissionLimit,
    clock: Clock,
    answer: Admission,
    sleeper: &dyn BlockingSleep,
) -> Result<(), Refused> {
    let mut admitting = Admitting::of_dyn(limit, clock);
    admitting.answered(answer, 1);
    let admitted = match answer {
        Admission::Go => true,
        Admission::Refuse | Admission::Shut(_) => false,
        Admission::Wait(wait) | Admission::GoAfter(wait) => {
            sleeper.sleep(wait);
            admitting.admit_blocking(&|wait| sleeper.sleep(wait))
        }
    };
    if !admitted {
        return Err(admitting.refusal());
    }
    // The attempt is the expansion's guard's to give back from here
    // ([`FirstAdmitted::held`]).
    let _ = admitting.hand_over();
    Ok(())
}

/// The result `refused` makes of `refusal`, typed as what `body` returns
/// (the function's return type, known before the attempt runs).
#[inline]
pub fn refused_as_body<R, F: FnMut() -> R>(body: &F, refused: RefusedResult<R>, refusal: Refused) -> R {
    let _ = body;
    refused(refusal)
}

/// The first attempt of a blocking loop was refused by its `admission`
/// limiter, with `refused` (the result made from the [`Refused`]):
/// reported as a give-up with
/// [`StopReason::Refused`](crate::StopReason::Refused) after no attempt,
/// on a loop state made from `clock` and `start`. The attribute's sync loop
/// and the builder's `.call()`.
#[cold]
#[inline(never)]
pub fn refused_first_blocking<T, E, O: Outcome<T, E>>(
    policy: &Policy,
    clock: Clock,
    start: Option<Instant>,
    hooks: &Hooks<'_, T, E, O>,
    refused: Result<T, E>,
) -> Result<T, E> {
    let mut state = RetryState::with_start(clock, start);
    refused_reported(&mut state, (policy, None), 0, hooks, refused)
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
mod tests;
