//! The decision after a failed attempt: stop (and why) or wait (and how long).
//! Shared by the sync loop, the async loop and the plain-Rust API.

use core::time::Duration;
use std::time::Instant;

use crate::clock::Clock;
use crate::hooks::Hooks;
use crate::policy::Policy;
use crate::rng::with_thread_rng;
use crate::schedule::Backoff;
use crate::stop::StopReason;

/// What a retry loop remembers between attempts: the retry counter, the
/// previous wait, and the start instant when something needs it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RetryState {
    backoff: Backoff,
    start: Option<Instant>,
}

impl RetryState {
    /// A fresh state; reads `C`'s clock only when `max_elapsed` (or
    /// `needs_start`, for hooks that report elapsed time) asks for it.
    #[inline(always)]
    pub(crate) fn start<C: Clock>(policy: &Policy, needs_start: bool) -> Self {
        let start = if needs_start || policy.max_elapsed.is_some() {
            Some(C::now())
        } else {
            None
        };
        Self::with_start(policy, start)
    }

    /// A fresh state with a start instant read earlier (or none).
    #[inline(always)]
    pub(crate) fn with_start(policy: &Policy, start: Option<Instant>) -> Self {
        RetryState {
            backoff: Backoff::new(policy),
            start,
        }
    }

    /// Decides what follows the failed attempt that returned `error`: the
    /// wait before the next attempt, or the reason to stop. Checks, in
    /// order: `retry_if`, `max_retries`, `max_elapsed`.
    pub(crate) fn decide<E, H, C>(&mut self, policy: &Policy, error: &E, hooks: &H) -> Result<Duration, StopReason>
    where
        H: Hooks<E>,
        C: Clock,
    {
        if !hooks.should_retry(error) {
            return Err(StopReason::Permanent);
        }
        if self.backoff.retries >= policy.max_retries {
            return Err(StopReason::Exhausted);
        }
        let wait = with_thread_rng(|rng| self.backoff.next_wait(policy, rng));
        if let (Some(budget), Some(start)) = (policy.max_elapsed, self.start) {
            let elapsed = C::now().saturating_duration_since(start);
            if elapsed.saturating_add(wait) > budget {
                return Err(StopReason::Deadline);
            }
        }
        self.backoff.advance(wait);
        Ok(wait)
    }
}
