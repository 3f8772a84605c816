//! The retry loop of sync functions, entered only after the first attempt
//! failed: out of line and `#[cold]`, so the happy path of an annotated
//! function is the plain call.

use core::time::Duration;
use std::time::Instant;

use crate::clock::ClockKind;
use crate::decide::RetryState;
use crate::hooks::{HookSet, Hooks};
use crate::policy::Policy;
use crate::result::RetryResult;

/// Sleeps for `wait` on the current thread, or records it on the thread's
/// virtual clock when a test installed one.
pub fn thread_sleep(wait: Duration) {
    if !crate::testing::virtual_sleep(wait) {
        std::thread::sleep(wait);
    }
}

/// Reads the sync clock when `policy` (or a hook, `needs_start`) needs a start
/// instant; `None` otherwise, so the happy path reads no clock.
#[inline(always)]
pub fn start_sync(policy: &Policy, needs_start: bool) -> Option<Instant> {
    if needs_start || policy.max_elapsed.is_some() {
        Some(ClockKind::Sync.now())
    } else {
        None
    }
}

/// What follows the first attempt of a sync `#[retry]` function: its result
/// when it succeeded (inline: the happy path costs a branch), the cold retry
/// loop otherwise. `hooks` builds the function's hooks from an empty
/// [`HookSet`] typed by the error, so closures in them infer `&E`.
#[inline(always)]
pub fn after_first_attempt<R, F, B, H, S>(
    first: R,
    policy: &Policy,
    start: Option<Instant>,
    body: &mut F,
    hooks: B,
    sleep: S,
) -> R
where
    R: RetryResult,
    F: FnMut() -> R,
    B: FnOnce(HookSet<R::Err>) -> H,
    H: Hooks<R::Err>,
    S: Fn(Duration),
{
    match first.into_result() {
        Ok(value) => R::from_result(Ok(value)),
        Err(error) => retry_sync(policy, start, error, body, hooks(HookSet::new()), sleep),
    }
}

/// Retries `body` after its first attempt failed with `first_error`, waiting
/// with `sleep` between attempts, until it succeeds or a stop rule holds;
/// returns the last result.
#[cold]
#[inline(never)]
pub(crate) fn retry_sync<R, F, H, S>(
    policy: &Policy,
    start: Option<Instant>,
    first_error: R::Err,
    body: &mut F,
    hooks: H,
    sleep: S,
) -> R
where
    R: RetryResult,
    F: FnMut() -> R,
    H: Hooks<R::Err>,
    S: Fn(Duration),
{
    let mut state = RetryState::with_start(policy, ClockKind::Sync, start);
    let mut error = first_error;
    loop {
        match state.decide(policy, &error, &hooks) {
            Ok(wait) => sleep(wait),
            Err(_reason) => return R::from_result(Err(error)),
        }
        match body().into_result() {
            Ok(value) => return R::from_result(Ok(value)),
            Err(next) => error = next,
        }
    }
}
