//! One layer retries: a retried function that gives up inside an attempt of
//! another ends that one too (`StopReason::RetriedBelow`), in sync code (the
//! thread) and async code (the task's polls, on any worker thread), unless
//! the outer function says `nested = retry`.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};

use backoff_runtime::testing::VirtualClock;
use backoff_runtime::{GiveUp, StopReason, retry};

#[derive(Debug, PartialEq)]
struct Down;

// ---- sync: three layers, the bottom always failing --------------------------

#[retry(max_retries = 3, jitter = none)]
fn bottom(calls: &AtomicU32) -> Result<(), Down> {
    calls.fetch_add(1, Ordering::SeqCst);
    Err(Down)
}

#[retry(max_retries = 3, jitter = none, on_give_up = |_, event| reasons.lock().unwrap().push(event.reason()))]
fn middle(calls: &AtomicU32, reasons: &Mutex<Vec<StopReason>>) -> Result<(), Down> {
    bottom(calls)
}

#[retry(max_retries = 3, jitter = none)]
fn top(calls: &AtomicU32, reasons: &Mutex<Vec<StopReason>>) -> Result<(), Down> {
    middle(calls, reasons)
}

#[retry(max_retries = 3, jitter = none, nested = retry)]
fn middle_retrying(calls: &AtomicU32) -> Result<(), Down> {
    bottom(calls)
}

#[retry(max_retries = 3, jitter = none, nested = retry)]
fn top_retrying(calls: &AtomicU32) -> Result<(), Down> {
    middle_retrying(calls)
}

#[test]
fn by_default_only_the_bottom_layer_retries() {
    let _clock = VirtualClock::install();
    let calls = AtomicU32::new(0);
    let reasons = Mutex::new(Vec::new());
    for _ in 0..3 {
        assert_eq!(top(&calls, &reasons), Err(Down));
    }
    assert_eq!(
        calls.load(Ordering::SeqCst),
        3 * 4,
        "max_retries + 1 per top-level call"
    );
    assert_eq!(reasons.into_inner().unwrap(), [StopReason::RetriedBelow; 3]);
}

#[test]
fn nested_retry_multiplies_the_calls() {
    let _clock = VirtualClock::install();
    let calls = AtomicU32::new(0);
    assert_eq!(top_retrying(&calls), Err(Down));
    assert_eq!(calls.load(Ordering::SeqCst), 4 * 4 * 4);
}

// ---- an inner function that recovers, or fails permanently -------------------

#[retry(max_retries = 3, jitter = none)]
fn recovering(calls: &AtomicU32) -> Result<(), Down> {
    let n = calls.fetch_add(1, Ordering::SeqCst);
    if n.is_multiple_of(2) { Err(Down) } else { Ok(()) }
}

#[retry(max_retries = 2, jitter = none)]
fn outer_of_recovering(calls: &AtomicU32, attempts: &AtomicU32) -> Result<(), Down> {
    attempts.fetch_add(1, Ordering::SeqCst);
    recovering(calls)?;
    Err(Down) // fails for its own reason after the inner call succeeded
}

#[retry(max_retries = 3, jitter = none, retry_if = |_| false)]
fn permanent_inner() -> Result<(), Down> {
    Err(Down)
}

#[retry(max_retries = 2, jitter = none)]
fn outer_of_permanent(attempts: &AtomicU32) -> Result<(), Down> {
    attempts.fetch_add(1, Ordering::SeqCst);
    permanent_inner()
}

#[test]
fn an_inner_function_that_recovers_or_fails_permanently_does_not_stop_the_outer_one() {
    let _clock = VirtualClock::install();
    let (calls, attempts) = (AtomicU32::new(0), AtomicU32::new(0));
    assert_eq!(outer_of_recovering(&calls, &attempts), Err(Down));
    assert_eq!(
        attempts.load(Ordering::SeqCst),
        3,
        "the outer function retried its own failures"
    );

    let attempts = AtomicU32::new(0);
    assert_eq!(outer_of_permanent(&attempts), Err(Down));
    assert_eq!(
        attempts.load(Ordering::SeqCst),
        3,
        "a permanent error was not retried below"
    );
}

#[test]
fn a_give_up_outside_any_attempt_does_not_stop_a_later_call() {
    let _clock = VirtualClock::install();
    let calls = AtomicU32::new(0);
    assert_eq!(bottom(&calls), Err(Down)); // top level: gives up, nobody above
    let (inner, attempts) = (AtomicU32::new(0), AtomicU32::new(0));
    assert_eq!(outer_of_recovering(&inner, &attempts), Err(Down));
    assert_eq!(attempts.load(Ordering::SeqCst), 3);
}

// ---- async: three layers on a multi-threaded runtime -------------------------

/// Yields between polls, so the task may move to another worker thread, and
/// other tasks run on this one in between.
#[retry(max_retries = 3, sleep = |_| tokio::task::yield_now())]
async fn bottom_async(calls: &AtomicU32) -> Result<(), Down> {
    tokio::task::yield_now().await;
    calls.fetch_add(1, Ordering::SeqCst);
    tokio::task::yield_now().await;
    Err(Down)
}

#[retry(
    max_retries = 3,
    sleep = |_| tokio::task::yield_now(),
    on_give_up = |_, event: &GiveUp| reasons.lock().unwrap().push(event.reason()),
)]
async fn middle_async(calls: &AtomicU32, reasons: &Mutex<Vec<StopReason>>) -> Result<(), Down> {
    tokio::task::yield_now().await;
    bottom_async(calls).await
}

#[retry(max_retries = 3, sleep = |_| tokio::task::yield_now())]
async fn top_async(calls: &AtomicU32, reasons: &Mutex<Vec<StopReason>>) -> Result<(), Down> {
    middle_async(calls, reasons).await
}

#[retry(max_retries = 3, sleep = |_| tokio::task::yield_now(), nested = retry)]
async fn middle_async_retrying(calls: &AtomicU32) -> Result<(), Down> {
    bottom_async(calls).await
}

#[retry(max_retries = 3, sleep = |_| tokio::task::yield_now(), nested = retry)]
async fn top_async_retrying(calls: &AtomicU32) -> Result<(), Down> {
    middle_async_retrying(calls).await
}

/// Sixteen tasks at once, each with its own counter: every task's call
/// chain is its own, whichever thread polls it and whatever else runs there.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn async_chains_follow_the_task_across_threads() {
    let mut tasks = Vec::new();
    for i in 0..16u32 {
        tasks.push(tokio::spawn(async move {
            let calls = AtomicU32::new(0);
            let reasons = Mutex::new(Vec::new());
            if i.is_multiple_of(2) {
                assert_eq!(top_async(&calls, &reasons).await, Err(Down));
                assert_eq!(calls.load(Ordering::SeqCst), 4, "task {i}");
                assert_eq!(reasons.into_inner().unwrap(), [StopReason::RetriedBelow]);
            } else {
                assert_eq!(top_async_retrying(&calls).await, Err(Down));
                assert_eq!(calls.load(Ordering::SeqCst), 64, "task {i}");
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
}

#[retry(max_retries = 2, sleep = |_| tokio::task::yield_now())]
async fn outer_spawning(calls: &AtomicU32, attempts: &AtomicU32) -> Result<(), Down> {
    attempts.fetch_add(1, Ordering::SeqCst);
    let inner_calls = std::sync::Arc::new(AtomicU32::new(0));
    let counted = inner_calls.clone();
    // A spawned task is its own call chain: its give-up is not this attempt's.
    let spawned = tokio::spawn(async move { bottom_async(&counted).await });
    assert_eq!(spawned.await.unwrap(), Err(Down));
    calls.fetch_add(inner_calls.load(Ordering::SeqCst), Ordering::SeqCst);
    Err(Down)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spawned_tasks_are_separate_call_chains() {
    let (calls, attempts) = (AtomicU32::new(0), AtomicU32::new(0));
    assert_eq!(outer_spawning(&calls, &attempts).await, Err(Down));
    assert_eq!(attempts.load(Ordering::SeqCst), 3, "the outer function retried");
    assert_eq!(calls.load(Ordering::SeqCst), 3 * 4);
}

/// A sync retried function called from an async one is in the same chain.
#[retry(max_retries = 3, sleep = |_| tokio::task::yield_now())]
async fn async_over_sync(calls: &AtomicU32, attempts: &AtomicU32) -> Result<(), Down> {
    attempts.fetch_add(1, Ordering::SeqCst);
    tokio::task::yield_now().await;
    bottom_sync_fast(calls)
}

#[retry(max_retries = 3, sleep = |_| ())]
fn bottom_sync_fast(calls: &AtomicU32) -> Result<(), Down> {
    calls.fetch_add(1, Ordering::SeqCst);
    Err(Down)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sync_function_below_an_async_one_is_one_chain() {
    let (calls, attempts) = (AtomicU32::new(0), AtomicU32::new(0));
    assert_eq!(async_over_sync(&calls, &attempts).await, Err(Down));
    assert_eq!(attempts.load(Ordering::SeqCst), 1);
    assert_eq!(calls.load(Ordering::SeqCst), 4);
}
