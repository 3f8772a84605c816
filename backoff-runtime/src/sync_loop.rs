//! The retry loop of sync functions, entered only after the first attempt
//! failed: out of line and `#[cold]`, so the happy path of an annotated
//! function is the plain call.

use core::time::Duration;
use std::time::Instant;

use crate::clock::{Clock, SyncClock};
use crate::decide::RetryState;
use crate::hooks::Hooks;
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
        Some(SyncClock::now())
    } else {
        None
    }
}

/// Retries `body` after its first attempt failed with `first_error`, waiting
/// with `sleep` between attempts, until it succeeds or a stop rule holds;
/// returns the last result.
#[cold]
#[inline(never)]
pub fn retry_sync<R, F, H, S>(
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
    let mut state = RetryState::with_start(policy, start);
    let mut error = first_error;
    loop {
        match state.decide::<_, _, SyncClock>(policy, &error, &hooks) {
            Ok(wait) => sleep(wait),
            Err(_reason) => return R::from_result(Err(error)),
        }
        match body().into_result() {
            Ok(value) => return R::from_result(Ok(value)),
            Err(next) => error = next,
        }
    }
}
