//! The stopping rules: success, a permanent error, exhausted retries, the
//! total budget, panics and dropped futures.

use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use backoff_runtime::retry;
use backoff_runtime::testing::VirtualClock;
use tokio::time::Instant;

#[derive(Debug, PartialEq)]
enum ApiError {
    Unavailable(u32),
    NotFound,
}

impl ApiError {
    fn is_transient(&self) -> bool {
        matches!(self, ApiError::Unavailable(_))
    }
}

fn is_transient(e: &ApiError) -> bool {
    e.is_transient()
}

fn bump(calls: &AtomicU32) -> u32 {
    calls.fetch_add(1, Ordering::SeqCst) + 1
}

#[retry(initial_backoff = "1ms")]
async fn succeeds_at_once(calls: &AtomicU32) -> Result<u32, ApiError> {
    Ok(bump(calls))
}

#[tokio::test(start_paused = true)]
async fn success_returns_at_once() {
    let calls = AtomicU32::new(0);
    let start = Instant::now();
    assert_eq!(succeeds_at_once(&calls).await, Ok(1));
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(start.elapsed(), Duration::ZERO);
}

#[retry(initial_backoff = "1ms", retry_if = is_transient)]
async fn permanent_by_path(calls: &AtomicU32) -> Result<(), ApiError> {
    let n = bump(calls);
    Err(if n < 3 {
        ApiError::Unavailable(n)
    } else {
        ApiError::NotFound
    })
}

#[retry(initial_backoff = "1ms", retry_if = |e| e.is_transient())]
fn permanent_by_closure(calls: &Cell<u32>) -> Result<(), ApiError> {
    calls.set(calls.get() + 1);
    Err(if calls.get() < 3 {
        ApiError::Unavailable(calls.get())
    } else {
        ApiError::NotFound
    })
}

/// The predicate may read the function's arguments.
#[retry(initial_backoff = "1ms", retry_if = |e: &ApiError| e.is_transient() && calls.get() < limit)]
fn predicate_reads_arguments(calls: &Cell<u32>, limit: u32) -> Result<(), ApiError> {
    calls.set(calls.get() + 1);
    Err(ApiError::Unavailable(calls.get()))
}

#[tokio::test(start_paused = true)]
async fn permanent_error_stops_async() {
    let calls = AtomicU32::new(0);
    assert_eq!(permanent_by_path(&calls).await, Err(ApiError::NotFound));
    assert_eq!(
        calls.load(Ordering::SeqCst),
        3,
        "two transient errors retried, the permanent one not"
    );
}

#[test]
fn permanent_error_stops_sync() {
    let _clock = VirtualClock::install();
    let calls = Cell::new(0);
    assert_eq!(permanent_by_closure(&calls), Err(ApiError::NotFound));
    assert_eq!(calls.get(), 3);
    let calls = Cell::new(0);
    assert_eq!(predicate_reads_arguments(&calls, 2), Err(ApiError::Unavailable(2)));
    assert_eq!(calls.get(), 2);
}

#[retry(initial_backoff = "1ms", max_retries = 3)]
async fn always_unavailable(calls: &AtomicU32) -> Result<(), ApiError> {
    Err(ApiError::Unavailable(bump(calls)))
}

#[retry(initial_backoff = "1ms", max_retries = 3)]
fn always_unavailable_sync(calls: &Cell<u32>) -> Result<(), ApiError> {
    calls.set(calls.get() + 1);
    Err(ApiError::Unavailable(calls.get()))
}

#[tokio::test(start_paused = true)]
async fn exhausted_retries_return_the_last_error() {
    let calls = AtomicU32::new(0);
    assert_eq!(always_unavailable(&calls).await, Err(ApiError::Unavailable(4)));
    assert_eq!(calls.load(Ordering::SeqCst), 4);
}

#[test]
fn exhausted_retries_return_the_last_error_sync() {
    let clock = VirtualClock::install();
    let calls = Cell::new(0);
    assert_eq!(always_unavailable_sync(&calls), Err(ApiError::Unavailable(4)));
    assert_eq!(clock.waits().len(), 3);
}

#[retry(max_retries = 10, jitter = none, max_elapsed = "10s")]
async fn budgeted(calls: &AtomicU32) -> Result<(), ApiError> {
    Err(ApiError::Unavailable(bump(calls)))
}

#[tokio::test(start_paused = true)]
async fn max_elapsed_never_sleeps_past_the_budget() {
    // Waits 1, 2, 4 end at 7 s; the next (8 s) would end at 15 s > 10 s.
    let calls = AtomicU32::new(0);
    let start = Instant::now();
    assert_eq!(budgeted(&calls).await, Err(ApiError::Unavailable(4)));
    assert_eq!(start.elapsed(), Duration::from_secs(7));
}

#[retry(max_retries = 10, jitter = none, max_elapsed = "7s")]
async fn budget_exactly_reached(calls: &AtomicU32) -> Result<(), ApiError> {
    Err(ApiError::Unavailable(bump(calls)))
}

#[tokio::test(start_paused = true)]
async fn a_wait_ending_exactly_at_the_budget_is_allowed() {
    let calls = AtomicU32::new(0);
    let start = Instant::now();
    assert_eq!(budget_exactly_reached(&calls).await, Err(ApiError::Unavailable(4)));
    assert_eq!(start.elapsed(), Duration::from_secs(7));
}

#[retry(max_retries = 10, jitter = none, max_elapsed = "10s")]
async fn slow_body(calls: &AtomicU32) -> Result<(), ApiError> {
    let n = bump(calls);
    tokio::time::sleep(Duration::from_secs(2)).await;
    Err(ApiError::Unavailable(n))
}

#[tokio::test(start_paused = true)]
async fn max_elapsed_counts_time_spent_in_the_body() {
    // attempt [0,2] wait 1, attempt [3,5] wait 2, attempt [7,9]; the next wait
    // (4 s) would end at 13 s > 10 s.
    let calls = AtomicU32::new(0);
    let start = Instant::now();
    assert_eq!(slow_body(&calls).await, Err(ApiError::Unavailable(3)));
    assert_eq!(start.elapsed(), Duration::from_secs(9));
}

#[retry(max_retries = 10, jitter = none, max_elapsed = "10s")]
fn slow_body_sync(clock: &VirtualClock, calls: &Cell<u32>) -> Result<(), ApiError> {
    calls.set(calls.get() + 1);
    clock.advance(Duration::from_secs(2));
    Err(ApiError::Unavailable(calls.get()))
}

#[test]
fn max_elapsed_on_the_virtual_clock() {
    let clock = VirtualClock::install();
    let calls = Cell::new(0);
    assert_eq!(slow_body_sync(&clock, &calls), Err(ApiError::Unavailable(3)));
    assert_eq!(clock.waits(), [1, 2].map(Duration::from_secs));
    assert_eq!(clock.elapsed(), Duration::from_secs(9));
}

#[retry(initial_backoff = "1ms")]
fn panics_sync(calls: &Cell<u32>) -> Result<(), ApiError> {
    calls.set(calls.get() + 1);
    panic!("bug in the body");
}

#[retry(initial_backoff = "1ms")]
async fn panics_async(calls: Arc<AtomicU32>) -> Result<(), ApiError> {
    bump(&calls);
    if calls.load(Ordering::SeqCst) > 0 {
        panic!("bug in the body");
    }
    Ok(())
}

#[test]
fn a_panic_propagates_and_is_not_retried() {
    let _clock = VirtualClock::install();
    let calls = Cell::new(0);
    let outcome = catch_unwind(AssertUnwindSafe(|| panics_sync(&calls)));
    assert!(outcome.is_err());
    assert_eq!(calls.get(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_panic_propagates_and_is_not_retried_async() {
    let calls = Arc::new(AtomicU32::new(0));
    let joined = tokio::spawn(panics_async(calls.clone())).await;
    assert!(joined.is_err_and(|e| e.is_panic()));
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[retry(max_retries = 10, jitter = none)]
async fn counts_attempts(calls: Arc<AtomicU32>, body_time: Duration) -> Result<(), ApiError> {
    bump(&calls);
    tokio::time::sleep(body_time).await;
    Err(ApiError::Unavailable(0))
}

#[tokio::test(start_paused = true)]
async fn dropping_during_a_wait_starts_no_attempt() {
    let calls = Arc::new(AtomicU32::new(0));
    // Attempts at 0 s and 1 s; dropped at 1.5 s, inside the 2 s wait.
    let outcome = tokio::time::timeout(
        Duration::from_millis(1500),
        counts_attempts(calls.clone(), Duration::ZERO),
    )
    .await;
    assert!(outcome.is_err());
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    tokio::time::sleep(Duration::from_secs(3600)).await;
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}

#[tokio::test(start_paused = true)]
async fn dropping_during_an_attempt_starts_no_attempt() {
    let calls = Arc::new(AtomicU32::new(0));
    let outcome = tokio::time::timeout(
        Duration::from_secs(5),
        counts_attempts(calls.clone(), Duration::from_secs(10)),
    )
    .await;
    assert!(outcome.is_err());
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    tokio::time::sleep(Duration::from_secs(3600)).await;
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}
