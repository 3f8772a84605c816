//! The decision after a failed attempt: stop (and why) or wait (and how long),
//! with the events that report it. Shared by the sync loop, the async loop
//! and the plain-Rust API.

use core::time::Duration;
use std::time::Instant;

use crate::clock::ClockKind;
use crate::events::{GiveUp, RetryEvent};
use crate::hooks::Hooks;
use crate::policy::Policy;
use crate::rng::with_thread_rng;
use crate::stop::StopReason;

/// What a retry loop remembers between attempts: the retry counter, the
/// previous wait, the clock, and the start instant when something needs it.
/// Kept flat and small: it lives in the future of every async function.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RetryState {
    /// The wait used before the latest retry (decorrelated jitter), in ns.
    previous_nanos: u64,
    /// When the call began (or, see below, when it first failed).
    start: Option<Instant>,
    /// Retries made so far.
    retries: u32,
    clock: ClockKind,
    /// `start` was read at the first failure, not at the call: nothing asked
    /// for a start instant up front, so events measure from there.
    start_is_first_failure: bool,
}

/// Whether a stop or a retry will be reported (a hook observes, or tracing).
fn reports<E>(hooks: &impl Hooks<E>) -> bool {
    cfg!(feature = "tracing") || hooks.observes()
}

impl RetryState {
    /// A fresh state; reads `clock` only when `max_elapsed` (or
    /// `needs_start`, for hooks that report elapsed time) asks for it.
    #[inline(always)]
    pub(crate) fn start(policy: &Policy, clock: ClockKind, needs_start: bool) -> Self {
        let start = if needs_start || policy.max_elapsed.is_some() || policy.budget.is_some() {
            let now = clock.now();
            if let Some(budget) = policy.budget {
                budget.deposit(now);
            }
            Some(now)
        } else {
            None
        };
        Self::with_start(policy, clock, start)
    }

    /// A fresh state with a start instant read earlier (or none).
    #[inline(always)]
    pub(crate) fn with_start(policy: &Policy, clock: ClockKind, start: Option<Instant>) -> Self {
        RetryState {
            previous_nanos: u64::try_from(policy.initial_backoff.as_nanos()).unwrap_or(u64::MAX),
            start,
            retries: 0,
            clock,
            start_is_first_failure: false,
        }
    }

    /// Time since the start, reading the start now if nothing read it before.
    fn elapsed(&mut self) -> Duration {
        let now = self.clock.now();
        let start = match self.start {
            Some(start) => start,
            None => {
                self.start_is_first_failure = true;
                *self.start.insert(now)
            }
        };
        now.saturating_duration_since(start)
    }

    /// The time left before `max_elapsed`, when it is set (for per-attempt
    /// timeouts, which never run past it).
    pub(crate) fn remaining(&self, policy: &Policy) -> Option<Duration> {
        let (max_elapsed, start) = (policy.max_elapsed?, self.start?);
        let elapsed = self.clock.now().saturating_duration_since(start);
        Some(max_elapsed.saturating_sub(elapsed))
    }

    /// Decides what follows the failed attempt that returned `error`: the
    /// wait before the next attempt, or the reason to stop; calls the hooks
    /// and emits the tracing events that report it. Checks, in order:
    /// `retry_if`, `max_retries`, the server's hint against `max_backoff`,
    /// `max_elapsed`, the retry budget.
    pub(crate) fn decide<E, H>(&mut self, policy: &Policy, error: &E, hooks: &H) -> Result<Duration, StopReason>
    where
        H: Hooks<E>,
    {
        match self.next_wait(policy, error, hooks) {
            Ok((wait, hinted)) => {
                if reports(hooks) {
                    let event = RetryEvent {
                        function: hooks.function_name(),
                        attempt: self.retries.saturating_add(1),
                        wait,
                        elapsed: self.elapsed(),
                        retries_left: policy.max_retries.saturating_sub(self.retries).saturating_sub(1),
                        hinted,
                    };
                    crate::trace::retrying(
                        &event,
                        crate::trace::debug_view(error, hooks.debug_fmt()),
                        self.start_is_first_failure,
                    );
                    hooks.on_retry(error, &event);
                }
                self.retries = self.retries.saturating_add(1);
                self.previous_nanos = u64::try_from(wait.as_nanos()).unwrap_or(u64::MAX);
                Ok(wait)
            }
            Err(reason) => {
                if reports(hooks) {
                    let event = GiveUp {
                        function: hooks.function_name(),
                        attempts: self.retries.saturating_add(1),
                        elapsed: self.elapsed(),
                        retries_left: policy.max_retries.saturating_sub(self.retries),
                        reason,
                    };
                    crate::trace::giving_up(
                        &event,
                        crate::trace::debug_view(error, hooks.debug_fmt()),
                        self.start_is_first_failure,
                    );
                    hooks.on_give_up(error, &event);
                }
                Err(reason)
            }
        }
    }

    /// The stop rules, in their documented order, and the wait when none
    /// holds (with whether it came from the server's hint).
    fn next_wait<E, H: Hooks<E>>(
        &mut self,
        policy: &Policy,
        error: &E,
        hooks: &H,
    ) -> Result<(Duration, bool), StopReason> {
        if !hooks.should_retry(error) {
            return Err(StopReason::Permanent);
        }
        if self.retries >= policy.max_retries {
            return Err(StopReason::Exhausted);
        }
        let (wait, hinted) = match hooks.hint(error) {
            Some(hint) if hint > policy.max_backoff => return Err(StopReason::HintAboveCap),
            Some(hint) => (hint, true),
            None => {
                let previous = Duration::from_nanos(self.previous_nanos);
                let wait = with_thread_rng(|rng| policy.wait_for(self.retries, previous, rng));
                (wait, false)
            }
        };
        if let Some(max_elapsed) = policy.max_elapsed {
            // `start` is always read up front when `max_elapsed` is set.
            let elapsed = self.elapsed();
            if elapsed.saturating_add(wait) > max_elapsed {
                return Err(StopReason::Deadline);
            }
        }
        // Checked last, so no budget is spent on a retry that would not happen.
        if let Some(budget) = policy.budget {
            if !budget.try_withdraw(self.clock.now()) {
                return Err(StopReason::Budget);
            }
        }
        Ok((wait, hinted))
    }
}
