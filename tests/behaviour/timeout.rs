//! `timeout = "..."` on async functions, on tokio's paused clock: a hanging
//! attempt is cut at the timeout and retried; the timed-out attempt is an
//! ordinary error (`E::from(Elapsed)`) that `retry_if` classifies; with
//! `max_elapsed`, an attempt never runs past the budget.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use backoff_runtime::{Elapsed, retry};
use tokio::time::Instant;

#[derive(Debug, PartialEq)]
enum CallError {
    TimedOut,
    Refused,
}

impl From<Elapsed> for CallError {
    fn from(_: Elapsed) -> Self {
        CallError::TimedOut
    }
}

/// Hangs on the first `hangs` attempts, then answers.
async fn call(attempts: &AtomicU32, hangs: u32) -> Result<u32, CallError> {
    let n = attempts.fetch_add(1, Ordering::SeqCst) + 1;
    if n <= hangs {
        std::future::pending::<()>().await;
    }
    Ok(n)
}

#[retry(timeout = "5s", jitter = none)]
async fn with_timeout(attempts: &AtomicU32, hangs: u32) -> Result<u32, CallError> {
    call(attempts, hangs).await
}

#[tokio::test(start_paused = true)]
async fn a_hanging_attempt_is_cut_and_retried() {
    let attempts = AtomicU32::new(0);
    let start = Instant::now();
    assert_eq!(with_timeout(&attempts, 1).await, Ok(2));
    // 5 s until the first attempt is cut, then the 1 s wait.
    assert_eq!(start.elapsed(), Duration::from_secs(6));
}

#[retry(timeout = "5s", jitter = none, retry_if = |e| *e != CallError::TimedOut)]
async fn timeouts_are_permanent(attempts: &AtomicU32) -> Result<u32, CallError> {
    call(attempts, 10).await
}

#[retry(timeout = "5s", jitter = none, max_retries = 2)]
async fn refused_then_hangs(attempts: &AtomicU32) -> Result<u32, CallError> {
    if attempts.fetch_add(1, Ordering::SeqCst) == 0 {
        return Err(CallError::Refused);
    }
    std::future::pending::<()>().await;
    Ok(0)
}

#[tokio::test(start_paused = true)]
async fn a_timed_out_attempt_is_an_error_retry_if_classifies() {
    let attempts = AtomicU32::new(0);
    assert_eq!(timeouts_are_permanent(&attempts).await, Err(CallError::TimedOut));
    assert_eq!(attempts.load(Ordering::SeqCst), 1);

    let attempts = AtomicU32::new(0);
    let start = Instant::now();
    assert_eq!(refused_then_hangs(&attempts).await, Err(CallError::TimedOut));
    // Refused at 0 s, wait 1 s, cut at 6 s, wait 2 s, cut at 13 s.
    assert_eq!(start.elapsed(), Duration::from_secs(13));
}

#[retry(timeout = "5s", jitter = none, max_elapsed = "8s", max_retries = 10)]
async fn bounded_by_max_elapsed(attempts: &AtomicU32) -> Result<u32, CallError> {
    call(attempts, 100).await
}

#[tokio::test(start_paused = true)]
async fn the_total_never_exceeds_max_elapsed() {
    let attempts = AtomicU32::new(0);
    let start = Instant::now();
    assert_eq!(bounded_by_max_elapsed(&attempts).await, Err(CallError::TimedOut));
    // Cut at 5 s, wait 1 s, the second attempt gets only the 2 s left.
    assert_eq!(start.elapsed(), Duration::from_secs(8));
    assert_eq!(attempts.load(Ordering::SeqCst), 2);
}
