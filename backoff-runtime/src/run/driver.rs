//! The driver every front end runs.
//!
//! The attribute's sync and async loops (generated in the function, so the body
//! may borrow `&mut self`), the builder's `.call()` and its future.
//!
//! A success is handled where it happens: the expansion writes it
//! ([`Loop::succeeded`], [`first_success`]), a few inline branches. A
//! failure goes to one `#[cold]` entry compiled once per result type, not
//! once per function: [`Loop::failed`] for a loop that stays in the
//! function (async, and sync with `before_retry`), [`retry_blocking`] for
//! a sync loop, whose retries run out of line. Both read the user's hooks
//! through [`Hooks`], the references the caller lends them.

use core::ops::ControlFlow;
use core::time::Duration;

use crate::limits::admission::Admitting;
use crate::limits::limit::{Charged, RetryLimit};
use crate::observe::events::{RetryEvent, Success};
use crate::observe::site::Site;
use crate::run::attempt::AttemptSource;
use crate::run::decide::{FailedAttempt, Hedging, RetryState, read_start, reads_clock};
use crate::run::hooks::Hooks;
use crate::run::outcome::Outcome;
use crate::schedule::policy::Policy;
use crate::time::Instant;
use crate::time::clock::Clock;

/// What a loop does after an attempt.
#[derive(Debug)]
pub enum Step<R, W> {
    /// Return this result: a success, or the final one.
    Return(R),
    /// Retry: wait (and, with an action, act first).
    Retry(W),
}

/// What a hedged call does after a failed attempt: the driver's decision
/// ([`Loop::hedge_failed`]), carried out by
/// [`Hedging::decided`](crate::run::hedge::Hedging::decided).
#[derive(Debug)]
pub enum HedgeStep<R> {
    /// Return this result: the failure ends the call (it is permanent, or
    /// no attempt runs and none may follow), reported as a give-up.
    Return(R),
    /// Start the next attempt after this wait (zero: at once).
    Next(Duration),
    /// No attempt follows this one, but others still run: start no more
    /// hedges (a stop rule held:
    /// the server refused, or the attempts, the time or the budget ran
    /// out), and wait for them. The last of them to fail decides again.
    Await {
        /// The server refused a retry (a refusing pushback): no attempt
        /// may follow any more, not even after the next failure.
        server_refused: bool,
    },
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
    /// A fresh loop measuring on `clock`; reads it only when `policy`'s
    /// `max_elapsed`, the limit or a hook (`needs_start`) needs the start.
    /// No policy: the caller knows whether its deadline needs the start and
    /// says so in `needs_start` (an expansion of literal keys, which names
    /// its policy only where an attempt is decided).
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn start(clock: Clock, policy: Option<&Policy>, budget: Option<&dyn RetryLimit>, needs_start: bool) -> Self {
        Loop {
            state: RetryState::with_start(clock, read_start(policy, budget, clock, needs_start)),
        }
    }

    /// [`start`](Self::start) of a call sent at once: the attribute's
    /// async loop without an admission limiter, whose first attempt starts
    /// in the same poll. The limit counts the call now, from the start
    /// just read (elsewhere it counts it at its first answer).
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn start_sent(
        clock: Clock,
        policy: Option<&Policy>,
        budget: Option<&dyn RetryLimit>,
        needs_start: bool,
    ) -> Self {
        let start = read_start(policy, budget, clock, needs_start);
        Loop {
            state: RetryState::sent_at_start(clock, start, budget),
        }
    }

    /// The [`AttemptSource`] of this call: its start, clock and deadline
    /// (for `context = ...`).
    #[inline]
    pub fn attempts(&self, policy: &Policy) -> AttemptSource {
        AttemptSource::new(policy, self.state.start_instant(), self.state.clock())
    }

    /// Whether a call's start must be read when it starts: `max_elapsed`, a
    /// limit that reads the clock, or a hook (`needs_start`) needs it.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn start_needed(policy: &Policy, budget: Option<&dyn RetryLimit>, needs_start: bool) -> bool {
        reads_clock(budget, needs_start || policy.max_elapsed.is_some())
    }

    /// A fresh loop on `clock` that reads no start: for a front end that
    /// knows, once for all its calls, that nothing needs it
    /// ([`start_needed`](Self::start_needed) is false; the tower layer
    /// asks when it is made).
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn unstarted(clock: Clock) -> Self {
        Loop {
            state: RetryState::with_start(clock, None),
        }
    }

    /// The call's start instant, when it was read.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn start_instant(&self) -> Option<Instant> {
        self.state.start_instant()
    }

    /// The timeout of the next attempt under `timeout = ...`: `timeout`,
    /// or less when `max_elapsed` ends sooner.
    #[inline]
    pub fn attempt_timeout(&self, policy: &Policy, timeout: Duration) -> Duration {
        match self.state.remaining(policy) {
            Some(remaining) => timeout.min(remaining),
            None => timeout,
        }
    }

    /// The attempt that just ended succeeded: the limit gets its tokens
    /// back, and metrics, tracing and `on_success` hear of it when they
    /// listen. The expansion writes this call on its success path.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn succeeded(&mut self, budget: Option<&dyn RetryLimit>, site: &Site, on_success: Option<&dyn Fn(&Success)>) {
        self.state.success(budget, site, on_success, false);
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
        budget: Option<&dyn RetryLimit>,
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
        budget: Option<&dyn RetryLimit>,
        admitting: &mut Admitting<'_>,
        hooks: &Hooks<'_, T, E, O>,
        outcome: O,
        gave_up_below: bool,
    ) -> Step<Result<T, E>, M::Retry<O>> {
        if admitting.was_refused() {
            // Not an attempt: the limiter refused it, and the call ends; a
            // retry the limit allowed for it is given back.
            self.state.refund_unsent(budget);
            self.state.refused(policy, admitting.attempts(), &outcome, hooks);
            return Step::Return(hooks.given_up(outcome));
        }
        admitting.observed(hooks.attempt_end(admitting.clock(), Err(&outcome)));
        self.failed(mode, policy, budget, hooks, outcome, gave_up_below)
    }

    /// What follows an attempt that failed with `outcome`, in a loop with
    /// no action before its waits (the tower layer's): the final result
    /// (`Break`), or the wait before the next attempt (`Continue`). With
    /// `admitting`, as [`failed_admitting`](Self::failed_admitting).
    #[inline]
    pub fn failed_waiting<T, E, O: Outcome<T, E>>(
        &mut self,
        (policy, budget): (&Policy, Option<&dyn RetryLimit>),
        admitting: Option<&mut Admitting<'_>>,
        hooks: &Hooks<'_, T, E, O>,
        outcome: O,
        gave_up_below: bool,
    ) -> ControlFlow<Result<T, E>, Duration> {
        let step = match admitting {
            None => self.failed(Waits, policy, budget, hooks, outcome, gave_up_below),
            Some(admitting) => self.failed_admitting(Waits, policy, budget, admitting, hooks, outcome, gave_up_below),
        };
        match step {
            Step::Return(result) => ControlFlow::Break(result),
            Step::Retry(wait) => ControlFlow::Continue(wait),
        }
    }

    /// What follows the failed attempt of a hedged call (`outcome`, with
    /// whether a retried function it called gave up), while `others_run`
    /// says whether other attempts still run, and `may_follow` whether an
    /// attempt may follow at all (not after a server's refusal): the final
    /// result, the next
    /// attempt at once (or after the server's pushback or hint), or waiting
    /// for the attempts running. One budget bounds retries and hedges: the
    /// next attempt asks it as a retry does. The caller hands the decision
    /// to its `Hedging` ([`decided`](crate::run::hedge::Hedging::decided)).
    #[cold]
    #[inline(never)]
    pub fn hedge_failed<T, E, O: Outcome<T, E>>(
        &mut self,
        policy: &Policy,
        budget: Option<&dyn RetryLimit>,
        hooks: &Hooks<'_, T, E, O>,
        (outcome, gave_up_below): (O, bool),
        others_run: bool,
        may_follow: bool,
    ) -> HedgeStep<Result<T, E>> {
        let hedging = Hedging { others_run, may_follow };
        let server_refused = hooks.pushback_of(&outcome) == Some(crate::run::pushback::Pushback::Stop);
        match self
            .state
            .decide_hedge(policy, budget, hooks, (&outcome, gave_up_below), hedging)
        {
            Ok(wait) => HedgeStep::Next(wait),
            Err(true) => HedgeStep::Return(hooks.given_up(outcome)),
            Err(false) => HedgeStep::Await { server_refused },
        }
    }

    /// The attempt that just ended succeeded in a hedged call: as
    /// [`succeeded`](Self::succeeded), its event counting every attempt
    /// after the first as a hedge.
    #[inline]
    pub fn succeeded_hedged(
        &mut self,
        budget: Option<&dyn RetryLimit>,
        site: &Site,
        on_success: Option<&dyn Fn(&Success)>,
    ) {
        self.state.success(budget, site, on_success, true);
    }

    /// Whether a hedge may start now, beside the attempts running (its
    /// delay passed without an accepted answer): fewer than
    /// `max_retries + 1` attempts so far, `max_elapsed` not passed, and the
    /// budget allows it as it would a retry. One that starts counts as a
    /// retry (metrics: `wait = "hedge"`).
    #[cold]
    #[inline(never)]
    pub fn may_hedge(&mut self, policy: &Policy, budget: Option<&dyn RetryLimit>, site: &Site) -> bool {
        self.state.may_hedge(policy, budget, site)
    }

    /// The call ends before an attempt that the `admission` limiter
    /// refused: `refused` (`E::from(Refused)`) reported as a give-up with
    /// [`StopReason::Refused`](crate::StopReason::Refused) (metrics,
    /// tracing, `on_give_up`) and returned.
    #[cold]
    #[inline(never)]
    pub fn refused<T, E, O: Outcome<T, E>>(
        &mut self,
        (policy, budget): (&Policy, Option<&dyn RetryLimit>),
        attempts: u32,
        hooks: &Hooks<'_, T, E, O>,
        refused: Result<T, E>,
    ) -> Result<T, E> {
        refused_reported(&mut self.state, (policy, budget), attempts, hooks, refused)
    }

    /// The retry (or hedge) the limit allowed last was sent: it stays
    /// taken. Every front end calls it as the attempt starts.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn sent(&mut self) {
        self.state.sent();
    }

    /// The retry (or hedge) the limit allowed last, taken out of the loop
    /// as a [`Charged`] the caller keeps until it is sent (the attribute's
    /// async loop keeps it across the wait): dropped unsent, it gives the
    /// retry back. `None` when the loop holds none.
    #[inline]
    pub fn take_charge<'a>(&mut self, budget: Option<&'a dyn RetryLimit>) -> Option<Charged<&'a dyn RetryLimit>> {
        self.state.take_charge(budget)
    }

    /// [`take_charge`](Self::take_charge) for a limit the caller owns (the
    /// tower layer's `Arc`), asked for with `limit` only when a charge is
    /// held.
    #[inline]
    pub fn take_charge_with<L: RetryLimit>(&mut self, limit: impl FnOnce() -> Option<L>) -> Option<Charged<L>> {
        self.state.take_charge_with(limit)
    }

    /// The retry (or hedge) the limit allowed last will not be sent (a
    /// hedge the admission limiter did not let go, a future dropped during
    /// the wait): `budget` gets it back.
    #[cold]
    pub fn refund_unsent(&mut self, budget: Option<&dyn RetryLimit>) {
        self.state.refund_unsent(budget);
    }

    /// The attempt that was the call's last (it had committed: a gRPC
    /// response's headers came) ended in failure with `outcome`, its
    /// trailers' status: the limit counts it when `retry_if` retries it (or
    /// its pushback refuses), and it is reported as a give-up with
    /// [`StopReason::Committed`](crate::StopReason::Committed) (else
    /// `Permanent`): metrics, tracing, `on_give_up`. `hedged`: the call
    /// hedges, and its event counts every attempt after the first.
    #[cold]
    #[inline(never)]
    pub fn committed<T, E, O: Outcome<T, E>>(
        &mut self,
        (outcome, hedged): (&O, bool),
        policy: &Policy,
        budget: Option<&dyn RetryLimit>,
        hooks: &Hooks<'_, T, E, O>,
    ) {
        self.state.committed(policy, budget, outcome, hooks, hedged);
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

/// `refused`, the result of an attempt the `admission` limiter refused
/// after `attempts` attempts, reported as a give-up with
/// `StopReason::Refused` and returned.
pub(crate) fn refused_reported<T, E, O: Outcome<T, E>>(
    state: &mut RetryState,
    (policy, budget): (&Policy, Option<&dyn RetryLimit>),
    attempts: u32,
    hooks: &Hooks<'_, T, E, O>,
    refused: Result<T, E>,
) -> Result<T, E> {
    // The retry the limit allowed for the refused attempt is given back.
    state.refund_unsent(budget);
    match hooks.judge(refused) {
        Ok(value) => Ok(value),
        Err(outcome) => {
            state.refused(policy, attempts, &outcome, hooks);
            hooks.given_up(outcome)
        }
    }
}
