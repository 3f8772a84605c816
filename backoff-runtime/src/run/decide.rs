//! The decision after a failed attempt.
//!
//! Stop (and why) or wait (and how long), with the events that report it.
//! Shared by the sync loop, the async loop and the plain-Rust API.

use core::time::Duration;

use crate::limits::limit::{Charged, RetryLimit};
use crate::observe::events::{GiveUp, RetryEvent, Success};
use crate::observe::site::Site;
use crate::observe::stop::StopReason;
use crate::run::hooks::Hooks;
use crate::run::outcome::Outcome;
use crate::run::pushback::Pushback;
use crate::schedule::backoff::Backoff;
use crate::schedule::policy::{HintAboveCap, Policy};
use crate::schedule::rng::ThreadDraws;
use crate::time::Instant;
use crate::time::clock::{Clock, Timeline};

/// What a retry loop remembers between attempts: the schedule's state
/// machine (the retry counter and the previous wait, shared with
/// [`Schedule`](crate::Schedule)), the clock, and the start instant when
/// something needs it. Kept flat and small: it lives in the future of every
/// async function.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RetryState {
    /// Retries made so far and the previous wait, exact in nanoseconds.
    backoff: Backoff,
    /// The clock and the start instant (or, when nothing asked for one up
    /// front, the instant of the first failure, so events measure from there).
    timeline: Timeline,
}

/// A failed attempt to decide on: what failed (an error, or with
/// `retry_if_ok` the whole result) and whether a retried function it called
/// gave up.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FailedAttempt<'a, O> {
    pub(crate) outcome: &'a O,
    pub(crate) gave_up_below: bool,
}

/// Where a hedged call stands when one of its attempts fails.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Hedging {
    /// Other attempts still run.
    pub(crate) others_run: bool,
    /// An attempt may follow this one (not after the server refused).
    pub(crate) may_follow: bool,
}

/// Whether a call's start must be read when it starts, once the caller
/// knows whether its policy's deadline or a hook needs it (`needs_start`):
/// else only a limit that reads the clock does.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn reads_clock(budget: Option<&dyn RetryLimit>, needs_start: bool) -> bool {
    needs_start || budget.is_some_and(|limit| limit.reads_clock())
}

/// The start instant of a call, read only when `policy`'s `max_elapsed`, a
/// budget or a hook (`needs_start`) needs it: the happy path of everything
/// else reads no clock. A caller that names no policy (an expansion of
/// literal keys, which names it only where an attempt is decided) counts
/// the deadline in `needs_start`. The budget counts the call later, once
/// it was sent ([`count_call`]).
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn read_start(
    policy: Option<&Policy>,
    budget: Option<&dyn RetryLimit>,
    clock: Clock,
    needs_start: bool,
) -> Option<Instant> {
    let deadline = match policy {
        Some(policy) => policy.max_elapsed.is_some(),
        None => false,
    };
    if reads_clock(budget, needs_start || deadline) {
        Some(clock.now())
    } else {
        None
    }
}

/// The limit counts a call that started at `start`, once it was sent: at
/// its first attempt's answer, or when its first hedge asks the limit. A
/// call that sent nothing (refused, never polled, dropped before it
/// answered) counts nothing.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn count_call(budget: Option<&dyn RetryLimit>, start: Option<Instant>) {
    if let (Some(budget), Some(start)) = (budget, start) {
        if budget.reads_clock() {
            budget.call_started(start);
        }
    }
}

/// Whether a success will be reported: `on_success` is set, metrics record
/// it, or (`retried`, with the `tracing` feature) it ends a call that failed
/// before. Known at compile time on a first attempt without `on_success`.
#[cfg_attr(not(debug_assertions), inline(always))]
fn reports_success(on_success: Option<&dyn Fn(&Success)>, retried: bool) -> bool {
    on_success.is_some() || crate::observe::metrics::RECORDS || (crate::observe::trace::COMPILED && retried)
}

/// Whether a stop or a retry will be reported (a hook observes, or a
/// tracing subscriber listens).
fn reports<T, E, O>(hooks: &Hooks<'_, T, E, O>) -> bool {
    hooks.observes() || crate::observe::trace::enabled()
}

impl RetryState {
    /// A fresh state of a call that is sent now, with the start read for
    /// it (or none): the limit counts the call at once, from that instant
    /// (no second read of the clock, no decoding of the start later).
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn sent_at_start(clock: Clock, start: Option<Instant>, budget: Option<&dyn RetryLimit>) -> Self {
        let mut state = Self::with_start(clock, start);
        if budget.is_some() {
            state.backoff.mark_counted();
            count_call(budget, start);
        }
        state
    }

    /// A fresh state with a start instant read earlier (or none).
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn with_start(clock: Clock, start: Option<Instant>) -> Self {
        RetryState {
            backoff: Backoff::new(),
            timeline: Timeline::new(clock, start),
        }
    }

    /// The start instant, when it was read.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn start_instant(&self) -> Option<Instant> {
        self.timeline.start()
    }

    /// The clock this loop reads.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn clock(&self) -> Clock {
        self.timeline.clock()
    }

    /// The time left before `max_elapsed`, when it is set (for per-attempt
    /// timeouts, which never run past it).
    pub(crate) fn remaining(&self, policy: &Policy) -> Option<Duration> {
        let max_elapsed = policy.max_elapsed?;
        let elapsed = self.timeline.elapsed_at(self.timeline.now())?;
        Some(max_elapsed.saturating_sub(elapsed))
    }

    /// Decides what follows the failed attempt that returned `error`: the
    /// wait before the next attempt, or the reason to stop; calls the hooks
    /// and emits the tracing events that report it, and returns the retry's
    /// event when `keep_event` (for an action before the wait). The stop
    /// rules are checked in the order of [`next_wait`](Self::next_wait).
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn decide_reporting<T, E, O: Outcome<T, E>>(
        &mut self,
        policy: &Policy,
        budget: Option<&dyn RetryLimit>,
        failure: FailedAttempt<'_, O>,
        hooks: &Hooks<'_, T, E, O>,
        keep_event: bool,
    ) -> Result<(Duration, Option<RetryEvent>), StopReason> {
        let FailedAttempt {
            outcome: error,
            gave_up_below,
        } = failure;
        match self.next_wait(policy, budget, error, gave_up_below, hooks, false) {
            Ok(next) => Ok(self.retrying(policy, next, error, hooks, keep_event)),
            Err(reason) => {
                self.give_up(policy, reason, error, hooks);
                Err(reason)
            }
        }
    }

    /// Decides what follows the failed attempt of a hedged call (`error`,
    /// with whether a retried function it called gave up), where
    /// `hedging` says whether other attempts still run and whether any may
    /// follow (not after a server's refusal): the wait before the next
    /// attempt (zero unless the server said when), or whether the call
    /// ends here. The stop rules are a retry's, in its order. A failure no
    /// attempt follows ends the call when no other runs, or when it is
    /// permanent; the give-up is then reported. Otherwise the call waits
    /// for the others.
    pub(crate) fn decide_hedge<T, E, O: Outcome<T, E>>(
        &mut self,
        policy: &Policy,
        budget: Option<&dyn RetryLimit>,
        hooks: &Hooks<'_, T, E, O>,
        (error, gave_up_below): (&O, bool),
        hedging: Hedging,
    ) -> Result<Duration, bool> {
        let Hedging { others_run, may_follow } = hedging;
        let (decided, fatal) = if may_follow {
            let decided = self.next_wait(policy, budget, error, gave_up_below, hooks, true);
            let refused_by_server = hooks.pushback_of(error) == Some(Pushback::Stop);
            let fatal = matches!(decided, Err(StopReason::Permanent | StopReason::RetriedBelow)) && !refused_by_server;
            (decided, fatal)
        } else if hooks.should_retry(error) {
            // The server refused a retry before: a throttle still counts
            // this failure, and nothing follows it.
            if let Some(budget) = budget {
                budget.failed();
            }
            (Err(StopReason::Permanent), false)
        } else {
            (Err(StopReason::Permanent), true)
        };
        match decided {
            Ok(next) => Ok(self.retrying(policy, next, error, hooks, false).0),
            Err(reason) => {
                let ends = fatal || !others_run;
                if ends {
                    let hedges = self.backoff.retries();
                    self.give_up_hedged(policy, reason, error, hooks, hedges);
                }
                Err(ends)
            }
        }
    }

    /// Whether `max_elapsed` is set and has passed.
    fn deadline_passed(&mut self, policy: &Policy) -> bool {
        policy
            .max_elapsed
            .is_some_and(|max_elapsed| self.timeline.elapsed() >= max_elapsed)
    }

    /// Whether a hedge may start now beside the attempts running: fewer
    /// than `max_retries + 1` attempts started, `max_elapsed` not passed,
    /// and the budget (or throttle) allows it as it would a retry. A hedge
    /// that starts counts as a retry made (`wait = "hedge"` in metrics).
    pub(crate) fn may_hedge(&mut self, policy: &Policy, budget: Option<&dyn RetryLimit>, site: &Site) -> bool {
        if self.backoff.retries() >= policy.max_retries {
            return false;
        }
        if self.deadline_passed(policy) {
            return false;
        }
        // The first attempt was sent and has not answered: the call counts
        // before its first hedge asks the budget.
        self.answered(budget);
        if let Some(budget) = budget {
            let timeline = self.timeline;
            if !budget.try_retry(timeline.now()) {
                return false;
            }
            // Held until the hedge is sent ([`sent`](Self::sent)).
            self.timeline.set_charged(true);
        }
        crate::observe::metrics::hedge(*site);
        self.backoff.advance(policy, Duration::ZERO);
        true
    }

    /// The retry (or hedge) the limit allowed last was sent: it stays
    /// taken.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn sent(&mut self) {
        self.timeline.set_charged(false);
    }

    /// The retry (or hedge) the limit allowed last, held until it is sent,
    /// taken out of the state as a [`Charged`]: gives it back when dropped
    /// unsent. `None` when none is held.
    pub(crate) fn take_charge<'a>(
        &mut self,
        budget: Option<&'a dyn RetryLimit>,
    ) -> Option<Charged<&'a dyn RetryLimit>> {
        self.take_charge_with(|| budget)
    }

    /// [`take_charge`](Self::take_charge) for a limit the caller owns (the
    /// tower layer's `Arc`), asked for with `limit` only when a charge is
    /// held.
    pub(crate) fn take_charge_with<L: RetryLimit>(&mut self, limit: impl FnOnce() -> Option<L>) -> Option<Charged<L>> {
        if !self.timeline.charged() {
            return None;
        }
        self.timeline.set_charged(false);
        let limit = limit()?;
        let since = self.timeline.start().unwrap_or_else(|| self.timeline.now());
        Some(Charged::new(limit, since))
    }

    /// The retry (or hedge) the limit allowed last will not be sent (the
    /// admission limiter refused it, or the call was dropped): `budget`
    /// gets it back.
    pub(crate) fn refund_unsent(&mut self, budget: Option<&dyn RetryLimit>) {
        drop(self.take_charge(budget));
    }

    /// The call was sent and the limit hears of it for the first time (its
    /// first answer, or its first hedge's question): the limit counts the
    /// call, once ([`count_call`]).
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn answered(&mut self, budget: Option<&dyn RetryLimit>) {
        if budget.is_some() && !self.backoff.counted() {
            self.backoff.mark_counted();
            count_call(budget, self.timeline.start());
        }
    }

    /// Reports the retry after `error` that the stop rules allowed, with
    /// its wait `next`, and moves the schedule on; returns the wait, and
    /// the retry's event when `keep_event`.
    fn retrying<T, E, O: Outcome<T, E>>(
        &mut self,
        policy: &Policy,
        next: Wait,
        error: &O,
        hooks: &Hooks<'_, T, E, O>,
        keep_event: bool,
    ) -> (Duration, Option<RetryEvent>) {
        let Wait { wait, hinted, exact } = next;
        crate::observe::metrics::retry(hooks.site(), wait, hinted);
        let mut kept = None;
        if keep_event || reports(hooks) {
            let mut event = RetryEvent {
                function: hooks.site().name(),
                attempt: self.backoff.retries().saturating_add(1),
                wait,
                elapsed: self.timeline.elapsed(),
                retries_left: policy
                    .max_retries
                    .saturating_sub(self.backoff.retries())
                    .saturating_sub(1),
                hinted,
                grpc_status: None,
            };
            let from_first_failure = self.timeline.started_at_first_failure();
            crate::observe::trace::report(error, hooks.report_fn(), |debug, conventions| {
                event.grpc_status = conventions.and_then(|conventions| conventions.grpc_status);
                crate::observe::trace::retrying(&event, debug, conventions, from_first_failure);
            });
            hooks.report_retry(error, &event);
            if keep_event {
                kept = Some(event);
            }
        }
        if exact {
            self.backoff.restart(policy);
        } else {
            self.backoff.advance(policy, wait);
        }
        (wait, kept)
    }

    /// Reports the end of the call for `reason`, on `error`: metrics, the
    /// loop around this one (unless `Permanent`), tracing and `on_give_up`.
    fn give_up<T, E, O>(&mut self, policy: &Policy, reason: StopReason, error: &O, hooks: &Hooks<'_, T, E, O>) {
        self.give_up_hedged(policy, reason, error, hooks, 0);
    }

    /// [`give_up`](Self::give_up) of a call whose hedge delay started
    /// `hedges` of its attempts.
    fn give_up_hedged<T, E, O>(
        &mut self,
        policy: &Policy,
        reason: StopReason,
        error: &O,
        hooks: &Hooks<'_, T, E, O>,
        hedges: u32,
    ) {
        let attempts = self.backoff.retries().saturating_add(1);
        self.report_give_up(policy, reason, (attempts, hedges), error, hooks);
    }

    /// The call ends before an attempt that the `admission` limiter
    /// refused, after `attempts` attempts (0 when the first was refused),
    /// with `error` (the error made from `Refused`): reported as any
    /// give-up, with [`StopReason::Refused`].
    pub(crate) fn refused<T, E, O>(&mut self, policy: &Policy, attempts: u32, error: &O, hooks: &Hooks<'_, T, E, O>) {
        self.report_give_up(policy, StopReason::Refused, (attempts, 0), error, hooks);
    }

    /// The call's attempt had committed (a gRPC response's headers came)
    /// and then failed with `error` (its trailers' status): a throttle
    /// counts it when it is retryable or its pushback refuses, as gRPC's A6
    /// counts every failed call; it is reported as a give-up, with
    /// [`StopReason::Committed`] when retryable, else `Permanent`. In a
    /// `hedged` call every attempt after the first counts as a hedge.
    pub(crate) fn committed<T, E, O: Outcome<T, E>>(
        &mut self,
        policy: &Policy,
        budget: Option<&dyn RetryLimit>,
        error: &O,
        hooks: &Hooks<'_, T, E, O>,
        hedged: bool,
    ) {
        let hedges = if hedged { self.backoff.retries() } else { 0 };
        self.answered(budget);
        let counts = hooks.should_retry(error) || hooks.pushback_of(error) == Some(Pushback::Stop);
        if let (true, Some(budget)) = (counts, budget) {
            budget.failed();
        }
        let reason = if counts {
            StopReason::Committed
        } else {
            StopReason::Permanent
        };
        self.give_up_hedged(policy, reason, error, hooks, hedges);
    }

    /// The give-up's reports: metrics, the loop around this one (unless
    /// `Permanent`), tracing and `on_give_up`, after `attempts` attempts,
    /// `hedges` of them started by the hedge delay.
    fn report_give_up<T, E, O>(
        &mut self,
        policy: &Policy,
        reason: StopReason,
        (attempts, hedges): (u32, u32),
        error: &O,
        hooks: &Hooks<'_, T, E, O>,
    ) {
        crate::observe::metrics::give_up(hooks.site(), reason, attempts);
        if !matches!(reason, StopReason::Permanent | StopReason::Committed) {
            // The loop around this one (if any) must not retry it. (A
            // committed call was not retried here: the loop around may.)
            crate::run::nested::mark_given_up();
        }
        if reports(hooks) {
            let mut event = GiveUp {
                function: hooks.site().name(),
                attempts,
                elapsed: self.timeline.elapsed(),
                // The retries made are the attempts but the first.
                retries_left: policy.max_retries.saturating_sub(attempts.saturating_sub(1)),
                reason,
                grpc_status: None,
                hedges,
            };
            let from_first_failure = self.timeline.started_at_first_failure();
            crate::observe::trace::report(error, hooks.report_fn(), |debug, conventions| {
                event.grpc_status = conventions.and_then(|conventions| conventions.grpc_status);
                crate::observe::trace::giving_up(&event, debug, conventions, from_first_failure);
            });
            hooks.report_give_up(error, &event);
        }
    }

    /// After a `before_retry` action, before its wait of `wait`: whether the
    /// wait still ends within `max_elapsed` (the action's time counts). When
    /// it does not, the call ends here with [`StopReason::Deadline`],
    /// reported as any give-up, and no further attempt starts.
    pub(crate) fn still_in_time<T, E, O>(
        &mut self,
        policy: &Policy,
        wait: Duration,
        error: &O,
        hooks: &Hooks<'_, T, E, O>,
    ) -> bool {
        let Some(max_elapsed) = policy.max_elapsed else {
            return true;
        };
        if self.timeline.elapsed().saturating_add(wait) <= max_elapsed {
            return true;
        }
        // The retry announced before the action does not happen.
        self.backoff.undo_retry();
        self.give_up(policy, StopReason::Deadline, error, hooks);
        false
    }

    /// The attempt that just ended succeeded: a throttle gets its tokens
    /// back, and metrics, tracing and `on_success` hear of it when they
    /// listen (the report is out of line: a first-attempt success with none
    /// of them costs a few branches here). A `hedged` call's event counts
    /// every attempt after its first as a hedge, whether the delay or a
    /// failure started it.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn success(
        &mut self,
        budget: Option<&dyn RetryLimit>,
        site: &Site,
        on_success: Option<&dyn Fn(&Success)>,
        hedged: bool,
    ) {
        crate::run::nested::mark_succeeded();
        if let Some(limit) = budget {
            self.answered(budget);
            limit.succeeded();
        }
        let retries = self.backoff.retries();
        if reports_success(on_success, retries > 0) {
            self.succeeded(site, on_success, if hedged { retries } else { 0 });
        }
    }

    /// [`success`](Self::success) of a first attempt, before any loop state
    /// exists: the state (from `clock` and `start`) is made only when the
    /// success is reported, so the happy path stays a branch.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn first_success(
        budget: Option<&dyn RetryLimit>,
        clock: Clock,
        start: Option<Instant>,
        site: &Site,
        on_success: Option<&dyn Fn(&Success)>,
    ) {
        crate::run::nested::mark_succeeded();
        count_call(budget, start);
        if let Some(budget) = budget {
            budget.succeeded();
        }
        if reports_success(on_success, false) {
            Self::with_start(clock, start).succeeded(site, on_success, 0);
        }
    }

    /// Reports the success of the attempt that just ended: metrics, the
    /// tracing event of a success after retries, and `on_success`. Not
    /// generic: compiled once, in this crate.
    #[cold]
    #[inline(never)]
    fn succeeded(&mut self, site: &Site, on_success: Option<&dyn Fn(&Success)>, hedges: u32) {
        let site = *site;
        let attempts = self.backoff.retries().saturating_add(1);
        crate::observe::metrics::success(site, attempts);
        let retried = attempts > 1;
        if on_success.is_some() || (retried && crate::observe::trace::success_enabled()) {
            let event = Success {
                function: site.name(),
                attempts,
                elapsed: self.timeline.elapsed(),
                hedges,
            };
            if retried {
                crate::observe::trace::succeeded(&event, self.timeline.started_at_first_failure());
            }
            if let Some(on_success) = on_success {
                on_success(&event);
            }
        }
    }

    /// The stop rules, in their documented order, and the wait when none
    /// holds (with whether it came from the server). Inline in the one
    /// entry of each loop that decides (`Loop::failed`, the blocking
    /// retries): a retry makes no call for it.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn next_wait<T, E, O: Outcome<T, E>>(
        &mut self,
        policy: &Policy,
        budget: Option<&dyn RetryLimit>,
        error: &O,
        gave_up_below: bool,
        hooks: &Hooks<'_, T, E, O>,
        hedging: bool,
    ) -> Result<Wait, StopReason> {
        self.answered(budget);
        self.timeline.set_charged(false);
        if !hooks.should_retry(error) {
            return Err(StopReason::Permanent);
        }
        // A pending value (polling) is not a failure: it takes no throttle
        // token and no budget, and nothing below it gave up.
        let pending = hooks.is_pending(error);
        let limit = budget.filter(|_| !pending);
        // A throttle counts every retryable failure, whatever follows.
        if let Some(limit) = limit {
            limit.failed();
        }
        if gave_up_below && !pending && !hooks.retries_nested() {
            return Err(StopReason::RetriedBelow);
        }
        // A server's refusal ends the call once the limit has counted it.
        let pushback = hooks.pushback_of(error);
        if pushback == Some(Pushback::Stop) {
            return Err(StopReason::Permanent);
        }
        // Attempts side by side share one deadline: a failure once it has
        // passed (a channel cuts every attempt there) is the deadline's,
        // whatever attempts are left.
        if hedging && self.deadline_passed(policy) {
            return Err(StopReason::Deadline);
        }
        if self.backoff.retries() >= policy.max_retries {
            return Err(StopReason::Exhausted);
        }
        let (wait, hinted) = match (pushback, hooks.hint(error)) {
            (Some(Pushback::After(exact)), _) => (exact, true),
            (_, Some(hint)) if hint > policy.max_backoff => match policy.hint_above_cap {
                HintAboveCap::Stop => return Err(StopReason::HintAboveCap),
                HintAboveCap::WaitCap => (policy.max_backoff, true),
            },
            (_, Some(hint)) => (hint, true),
            // A hedged call sends its next attempt at once: no backoff.
            (_, None) if hedging => (Duration::ZERO, false),
            (_, None) => (self.backoff.next_wait(policy, &mut ThreadDraws), false),
        };
        let exact = matches!(pushback, Some(Pushback::After(_)));
        if let Some(max_elapsed) = policy.max_elapsed {
            // `start` is always read up front when `max_elapsed` is set.
            let elapsed = self.timeline.elapsed();
            if elapsed.saturating_add(wait) > max_elapsed {
                return Err(StopReason::Deadline);
            }
        }
        // Checked last, so no budget is spent on a retry that would not happen.
        if let Some(budget) = limit {
            let timeline = self.timeline;
            if !budget.try_retry(timeline.now()) {
                return Err(StopReason::Budget);
            }
            // Held until the retry is sent ([`sent`](Self::sent)).
            self.timeline.set_charged(true);
        }
        Ok(Wait { wait, hinted, exact })
    }
}

/// The wait before the next attempt, as the stop rules chose it.
#[derive(Clone, Copy, Debug)]
struct Wait {
    wait: Duration,
    /// It came from the server (a hint or a pushback).
    hinted: bool,
    /// It is a server's exact pushback: the schedule restarts after it.
    exact: bool,
}
