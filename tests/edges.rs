//! Edges that real use reaches: waits too long for any clock, a server's
//! absurd `Retry-After`, nested virtual clocks, a deadline on the clock that
//! a custom sleep advances, and an attempt with no time left. Each test is
//! named after the promise it keeps.

use std::cell::Cell;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use backoff_runtime::http::parse_retry_after;
use backoff_runtime::testing::VirtualClock;
use backoff_runtime::{Elapsed, Jitter, Policy, RetryEvent, retry};

/// "Always honour the server": no cap a server's hint could exceed.
const HONOUR_EVERY_HINT: Policy = Policy::new().max_backoff(Duration::MAX).max_retries(2);

/// Waits that are as long as a `Duration` can be.
const LONGEST_WAITS: Policy = Policy::new()
    .initial_backoff(Duration::MAX)
    .max_backoff(Duration::MAX)
    .jitter(Jitter::None)
    .max_retries(2);

#[derive(Debug, PartialEq)]
struct Unavailable {
    retry_after: Option<Duration>,
}

/// Fails on the first call with the server's `Retry-After` header value,
/// then succeeds.
fn answer(calls: &AtomicU32, header: &str) -> Result<u32, Unavailable> {
    let n = calls.fetch_add(1, Ordering::SeqCst) + 1;
    if n == 1 {
        Err(Unavailable {
            retry_after: parse_retry_after(header),
        })
    } else {
        Ok(n)
    }
}

#[retry(policy = HONOUR_EVERY_HINT, retry_after = |e| e.retry_after)]
async fn fetch_honouring(calls: &AtomicU32, header: &str) -> Result<u32, Unavailable> {
    answer(calls, header)
}

#[tokio::test(start_paused = true)]
async fn a_remote_retry_after_header_never_panics_the_client() {
    let calls = AtomicU32::new(0);
    // Above u64::MAX seconds: parsed as the longest hint there is.
    assert_eq!(fetch_honouring(&calls, "99999999999999999999").await, Ok(2));
    let calls = AtomicU32::new(0);
    assert_eq!(fetch_honouring(&calls, &u64::MAX.to_string()).await, Ok(2));
}

#[retry(policy = LONGEST_WAITS)]
async fn longest_async(calls: &AtomicU32) -> Result<u32, Unavailable> {
    answer(calls, "")
}

#[tokio::test(start_paused = true)]
async fn a_wait_of_duration_max_never_panics_an_async_loop() {
    let calls = AtomicU32::new(0);
    let start = tokio::time::Instant::now();
    assert_eq!(longest_async(&calls).await, Ok(2));
    // Slept until tokio's far future (decades), not zero.
    assert!(start.elapsed() > Duration::from_secs(10 * 365 * 24 * 3600));
}

#[retry(policy = LONGEST_WAITS.max_elapsed(Duration::MAX))]
fn longest_sync(calls: &AtomicU32) -> Result<u32, Unavailable> {
    answer(calls, "")
}

#[test]
fn a_wait_of_duration_max_never_panics_a_virtual_clock() {
    let clock = VirtualClock::install();
    let calls = AtomicU32::new(0);
    assert_eq!(longest_sync(&calls), Ok(2));
    assert_eq!(clock.waits(), [Duration::MAX]);
    assert_eq!(clock.elapsed(), Duration::MAX);
}

#[retry(max_retries = 2, initial_backoff = "1s", jitter = none)]
fn always_down() -> Result<(), &'static str> {
    Err("down")
}

#[test]
fn dropping_an_older_virtual_clock_leaves_the_live_one_installed() {
    let older = VirtualClock::install();
    let live = VirtualClock::install();
    drop(older);
    assert_eq!(always_down(), Err("down"));
    assert_eq!(live.waits(), [1, 2].map(Duration::from_secs));
    assert_eq!(live.elapsed(), Duration::from_secs(3));
}

#[test]
fn dropping_the_live_virtual_clock_restores_the_one_before_it() {
    let outer = VirtualClock::install();
    {
        let inner = VirtualClock::install();
        assert_eq!(always_down(), Err("down"));
        assert_eq!(inner.waits().len(), 2);
    }
    assert!(outer.waits().is_empty(), "the inner clock's waits are its own");
    assert_eq!(always_down(), Err("down"));
    assert_eq!(outer.waits(), [1, 2].map(Duration::from_secs));
}

#[retry(
    max_elapsed = "10s",
    jitter = none,
    max_retries = 10,
    sleep = tokio::time::sleep,
    on_retry = |_, event: &RetryEvent| waits.set(waits.get() + event.wait().as_secs()),
)]
async fn deadline_with_tokio_sleep(waits: &Cell<u64>) -> Result<(), &'static str> {
    let _ = waits;
    Err("down")
}

#[tokio::test(start_paused = true)]
async fn a_custom_tokio_sleep_keeps_max_elapsed_on_tokio_s_clock() {
    let waits = Cell::new(0);
    let start = tokio::time::Instant::now();
    assert_eq!(deadline_with_tokio_sleep(&waits).await, Err("down"));
    // 1 + 2 + 4 s; the 8 s wait would end at 15 s, past the 10 s budget.
    assert_eq!(waits.get(), 7);
    assert_eq!(start.elapsed(), Duration::from_secs(7));
}

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

#[retry(max_elapsed = "3s", initial_backoff = "1s", jitter = none, timeout = "10s")]
async fn slow_then_refused(attempts: &AtomicU32) -> Result<(), CallError> {
    attempts.fetch_add(1, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_secs(2)).await;
    Err(CallError::Refused)
}

#[tokio::test(start_paused = true)]
async fn no_attempt_starts_with_zero_time_left() {
    let attempts = AtomicU32::new(0);
    let start = tokio::time::Instant::now();
    // 2 s attempt, then the 1 s wait ends exactly at the 3 s budget (allowed);
    // the next attempt would have no time at all, so it is not started.
    assert_eq!(slow_then_refused(&attempts).await, Err(CallError::TimedOut));
    assert_eq!(attempts.load(Ordering::SeqCst), 1);
    assert_eq!(start.elapsed(), Duration::from_secs(3));
}
