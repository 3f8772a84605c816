//! `RetryBudget` through the attribute and the plain API: the ratio and the
//! minimum rate hold, budgets are shared by name, counts expire with the
//! window, and many threads cannot overdraw it.

use std::cell::Cell;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use backoff_runtime::testing::VirtualClock;
use backoff_runtime::{Policy, RetryBudget, StopReason, retry};

static RATIO_ONLY: RetryBudget = RetryBudget::new().ratio(0.2).min_per_second(0);

/// Fails once, then succeeds: each call wants exactly one retry.
#[retry(budget = RATIO_ONLY, initial_backoff = "1ms", on_give_up = |_, g| refused.lock().unwrap().push(g.reason()))]
fn fails_once(calls: &Cell<u32>, refused: &Mutex<Vec<StopReason>>) -> Result<(), ()> {
    calls.set(calls.get() + 1);
    if calls.get() % 2 == 1 { Err(()) } else { Ok(()) }
}

#[test]
fn retries_stay_under_the_ratio_of_calls() {
    let _clock = VirtualClock::install();
    let refused = Mutex::new(Vec::new());
    let mut failures = 0;
    for _ in 0..100 {
        let calls = Cell::new(0);
        if fails_once(&calls, &refused).is_err() {
            failures += 1;
        }
    }
    // 100 calls deposit 100; retries may reach 20% of them.
    assert_eq!(100 - failures, 20, "exactly the budget's retries succeeded");
    let refused = refused.lock().unwrap();
    assert_eq!(refused.len(), 80);
    assert!(refused.iter().all(|r| *r == StopReason::Budget));
}

static FLOOR_ONLY: RetryBudget = RetryBudget::new().ratio(0.0).min_per_second(2);

#[retry(budget = FLOOR_ONLY, initial_backoff = "1ms", max_backoff = "1ms", jitter = none, max_retries = 100)]
fn always_fails_a(calls: &Cell<u32>) -> Result<(), ()> {
    calls.set(calls.get() + 1);
    Err(())
}

#[retry(budget = FLOOR_ONLY, initial_backoff = "1ms", max_backoff = "1ms", jitter = none, max_retries = 100)]
fn always_fails_b(calls: &Cell<u32>) -> Result<(), ()> {
    calls.set(calls.get() + 1);
    Err(())
}

#[test]
fn the_minimum_rate_is_shared_by_every_function_naming_the_budget() {
    let clock = VirtualClock::install();
    let calls = Cell::new(0);
    assert!(always_fails_a(&calls).is_err());
    // 2 retries/s over 10 s: 20 retries (the waits are 1 ms: all in one window).
    assert_eq!(calls.get(), 21);
    let calls = Cell::new(0);
    assert!(always_fails_b(&calls).is_err());
    assert_eq!(calls.get(), 1, "the other function already spent the shared budget");
    // Once the window has passed, the budget is available again.
    clock.advance(Duration::from_secs(11));
    assert!(always_fails_b(&calls).is_err());
    assert_eq!(calls.get(), 22);
}

#[test]
fn the_plain_api_takes_a_budget_too() {
    static PLAIN: RetryBudget = RetryBudget::new().ratio(0.0).min_per_second(1);
    let _clock = VirtualClock::install();
    let policy = Policy::new()
        .max_retries(50)
        .initial_backoff(Duration::from_millis(1))
        .max_backoff(Duration::from_millis(1));
    let attempts = Cell::new(0);
    let result: Result<(), ()> = policy
        .retry(|| {
            attempts.set(attempts.get() + 1);
            Err(())
        })
        .budget(&PLAIN)
        .call();
    assert!(result.is_err());
    assert_eq!(attempts.get(), 11);
}

static ASYNC_BUDGET: RetryBudget = RetryBudget::new().ratio(0.0).min_per_second(1);

#[retry(budget = ASYNC_BUDGET, initial_backoff = "1ms", max_backoff = "1ms", max_retries = 100, jitter = none)]
async fn async_always_fails(calls: &AtomicU32) -> Result<(), ()> {
    calls.fetch_add(1, Ordering::SeqCst);
    Err(())
}

#[tokio::test(start_paused = true)]
async fn the_window_runs_on_the_paused_clock() {
    let calls = AtomicU32::new(0);
    assert!(async_always_fails(&calls).await.is_err());
    assert_eq!(calls.load(Ordering::SeqCst), 11);
    tokio::time::sleep(Duration::from_secs(11)).await;
    let calls = AtomicU32::new(0);
    assert!(async_always_fails(&calls).await.is_err());
    assert_eq!(calls.load(Ordering::SeqCst), 11, "the paused clock moved the window");
}

static THREADS: RetryBudget = RetryBudget::new().ratio(0.1).min_per_second(0);

#[retry(budget = THREADS, initial_backoff = "1ms", sleep = |_| ())]
fn threaded(calls: &Cell<u32>) -> Result<(), ()> {
    calls.set(calls.get() + 1);
    if calls.get() % 2 == 1 { Err(()) } else { Ok(()) }
}

#[test]
fn many_threads_cannot_overdraw_the_budget() {
    let retries = AtomicU32::new(0);
    std::thread::scope(|scope| {
        for _ in 0..8 {
            scope.spawn(|| {
                for _ in 0..200 {
                    let calls = Cell::new(0);
                    let _ = threaded(&calls);
                    retries.fetch_add(calls.get() - 1, Ordering::SeqCst);
                }
            });
        }
    });
    let retries = retries.load(Ordering::SeqCst);
    // 1600 calls deposit 1600: at most 10% of them may be retried.
    assert!(retries <= 160, "{retries} retries overdrew the budget");
    assert!(retries >= 100, "only {retries} retries: the budget refused too much");
}
