//! The decision after a failed attempt: stop (and why) or wait (and how long).
//! Shared by the sync loop, the async loop and the plain-Rust API.

use core::time::Duration;
use std::time::Instant;

use crate::clock::ClockKind;
use crate::hooks::Hooks;
use crate::policy::Policy;
use crate::rng::with_thread_rng;
use crate::schedule::Backoff;
use crate::stop::StopReason;

/// What a retry loop remembers between attempts: the retry counter, the
/// previous wait, the clock, and the start instant when something needs it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RetryState {
    backoff: Backoff,
    clock: ClockKind,
    start: Option<Instant>,
}

impl RetryState {
    /// A fresh state; reads `clock` only when `max_elapsed` (or
    /// `needs_start`, for hooks that report elapsed time) asks for it.
    #[inline(always)]
    pub(crate) fn start(policy: &Policy, clock: ClockKind, needs_start: bool) -> Self {
        let start = if needs_start || policy.max_elapsed.is_some() {
            Some(clock.now())
        } else {
            None
        };
        Self::with_start(policy, clock, start)
    }

    /// A fresh state with a start instant read earlier (or none).
    #[inline(always)]
    pub(crate) fn with_start(policy: &Policy, clock: ClockKind, start: Option<Instant>) -> Self {
        RetryState {
            backoff: Backoff::new(policy),
            clock,
            start,
        }
    }

    /// Decides what follows the failed attempt that returned `error`: the
    /// wait before the next attempt, or the reason to stop. Checks, in
    /// order: `retry_if`, `max_retries`, `max_elapsed`.
    pub(crate) fn decide<E, H>(&mut self, policy: &Policy, error: &E, hooks: &H) -> Result<Duration, StopReason>
    where
        H: Hooks<E>,
    {
        if !hooks.should_retry(error) {
            return Err(StopReason::Permanent);
        }
        if self.backoff.retries >= policy.max_retries {
            return Err(StopReason::Exhausted);
        }
        let wait = with_thread_rng(|rng| self.backoff.next_wait(policy, rng));
        if let (Some(budget), Some(start)) = (policy.max_elapsed, self.start) {
            let elapsed = self.clock.now().saturating_duration_since(start);
            if elapsed.saturating_add(wait) > budget {
                return Err(StopReason::Deadline);
            }
        }
        self.backoff.advance(wait);
        Ok(wait)
    }
}
