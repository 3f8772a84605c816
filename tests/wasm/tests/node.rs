//! The attribute, the builder, the limits and hedging on
//! wasm32-unknown-unknown, run in Node by `wasm-bindgen-test-runner`.
//! The waits are real: a few milliseconds on the platform's `setTimeout`,
//! measured on the web clock (`performance.now()`).
#![cfg(all(target_arch = "wasm32", target_os = "unknown"))]

use std::cell::{Cell, RefCell};
use std::time::Duration;

use backoff_runtime::limits::{CircuitBreaker, Refused, RetryBudget};
use backoff_runtime::{Jitter, Policy, StopReason, retry};
use wasm_bindgen_test::{console_log, wasm_bindgen_test};
use web_time::Instant;

fn ms(millis: u64) -> Duration {
    Duration::from_millis(millis)
}

/// Waits `wait` on the platform's timer, inside an attempt.
async fn pause(wait: Duration) {
    futures_timer::Delay::new(wait).await;
}

/// Fails `failures` times, then answers the number of calls.
#[retry(max_retries = 3, initial_backoff = "5ms", max_backoff = "40ms", jitter = none,
        on_retry = |_, event| waits.borrow_mut().push(event.wait()))]
async fn flaky(calls: &Cell<u32>, failures: u32, waits: &RefCell<Vec<Duration>>) -> Result<u32, String> {
    calls.set(calls.get() + 1);
    if calls.get() <= failures {
        Err(format!("busy {}", calls.get()))
    } else {
        Ok(calls.get())
    }
}

#[wasm_bindgen_test]
async fn an_async_retry_waits_for_real_on_the_web_clock() {
    let calls = Cell::new(0);
    let waits = RefCell::new(Vec::new());
    let started = Instant::now();
    assert_eq!(flaky(&calls, 2, &waits).await, Ok(3));
    let took = started.elapsed();
    assert_eq!(*waits.borrow(), [ms(5), ms(10)], "the schedule: 5 ms, then twice that");
    assert!(took >= ms(15), "the two waits were waited out: {took:?}");
    assert!(took < ms(1_000), "and not much longer: {took:?}");
}

#[wasm_bindgen_test]
async fn every_wait_is_capped_after_the_jitter() {
    let waits = RefCell::new(Vec::new());
    let started = Instant::now();
    let result: Result<(), &str> = Policy::new()
        .initial_backoff(ms(4))
        .max_backoff(ms(6))
        .jitter(Jitter::AdditiveUpTo(ms(6)))
        .max_retries(4)
        .retry(|| async { Err("busy") })
        .on_retry(|_: &&str, event: &backoff_runtime::RetryEvent| waits.borrow_mut().push(event.wait()))
        .await;
    assert_eq!(result, Err("busy"));
    let waits = waits.into_inner();
    assert_eq!(waits.len(), 4);
    // 4 ms + up to 6 ms of jitter would reach 10 ms; the cap comes after
    // the jitter. The later bases are the cap itself.
    assert!(waits.iter().all(|wait| *wait <= ms(6)), "{waits:?}");
    assert_eq!(waits[1..], [ms(6); 3], "{waits:?}");
    let total: Duration = waits.iter().sum();
    assert!(started.elapsed() >= total, "each wait waited out: {total:?}");
}

/// The waits of one run of five retries with full jitter.
async fn full_jitter_waits() -> Vec<Duration> {
    let waits = RefCell::new(Vec::new());
    let _: Result<(), &str> = Policy::new()
        .initial_backoff(ms(1))
        .max_backoff(ms(1))
        .jitter(Jitter::Full)
        .max_retries(5)
        .retry(|| async { Err("busy") })
        .on_retry(|_: &&str, event: &backoff_runtime::RetryEvent| waits.borrow_mut().push(event.wait()))
        .await;
    waits.into_inner()
}

#[wasm_bindgen_test]
async fn two_runs_draw_different_jitter() {
    let first = full_jitter_waits().await;
    let second = full_jitter_waits().await;
    assert_eq!(first.len(), 5);
    assert_ne!(first, second, "each wait is drawn afresh");
    // `scripts/wasm.sh` runs this test in two Node processes and compares
    // these lines: a fixed seed would print the same draws in both.
    console_log!("first draws of this process: {first:?}");
}

#[wasm_bindgen_test]
async fn max_elapsed_is_measured_on_the_web_clock() {
    let reasons = RefCell::new(Vec::new());
    let attempts = Cell::new(0);
    let started = Instant::now();
    let result: Result<(), &str> = Policy::new()
        .initial_backoff(ms(10))
        .multiplier(1.0)
        .jitter(Jitter::None)
        .max_retries(100)
        .max_elapsed(ms(35))
        .retry(|| async {
            attempts.set(attempts.get() + 1);
            Err("busy")
        })
        .on_give_up(|_: &&str, give_up: &backoff_runtime::GiveUp| reasons.borrow_mut().push(give_up.reason()))
        .await;
    let took = started.elapsed();
    assert_eq!(result, Err("busy"));
    assert_eq!(*reasons.borrow(), [StopReason::Deadline]);
    // Waits of 10 ms fit three times in 35 ms, fewer when a timer fires
    // late; the loop stops when the next wait would end past the budget,
    // long before its 100 retries.
    let waited = ms(10) * (attempts.get() - 1);
    assert!(
        (2..=4).contains(&attempts.get()),
        "{} attempts in {took:?}",
        attempts.get()
    );
    assert!(took >= waited, "{took:?}");
    assert!(took + ms(10) > ms(35), "another wait would have fitted: {took:?}");
    assert!(took < ms(500), "{took:?}");
}

static BUDGET: RetryBudget = RetryBudget::new().ratio(0.2).min_per_second(0);

/// Fails its first attempt, then succeeds: each call wants one retry.
#[retry(budget = BUDGET, initial_backoff = "1ms", jitter = none)]
async fn fails_once(calls: &Cell<u32>) -> Result<(), ()> {
    calls.set(calls.get() + 1);
    if calls.get() == 1 { Err(()) } else { Ok(()) }
}

#[wasm_bindgen_test]
async fn a_budget_holds_across_calls() {
    let mut succeeded = 0;
    for _ in 0..10 {
        if fails_once(&Cell::new(0)).await.is_ok() {
            succeeded += 1;
        }
    }
    assert_eq!(succeeded, 2, "ten calls earn 20% of a retry each");
}

static BREAKER: CircuitBreaker = CircuitBreaker::new()
    .consecutive_failures(2)
    .break_duration(Duration::from_secs(60))
    .name("node-backend");

#[derive(Debug, PartialEq)]
enum CallError {
    Down,
    Refused(Refused),
}

impl From<Refused> for CallError {
    fn from(refused: Refused) -> Self {
        CallError::Refused(refused)
    }
}

#[retry(max_retries = 5, initial_backoff = "1ms", jitter = none,
        retry_if = |e| *e == CallError::Down, admission = BREAKER)]
async fn behind_the_breaker(sent: &Cell<u32>) -> Result<(), CallError> {
    sent.set(sent.get() + 1);
    Err(CallError::Down)
}

#[wasm_bindgen_test]
async fn a_breaker_opens_across_calls() {
    let sent = Cell::new(0);
    let first = behind_the_breaker(&sent).await;
    assert!(
        matches!(first, Err(CallError::Refused(ref r)) if r.is_circuit_open()),
        "{first:?}"
    );
    assert_eq!(sent.get(), 2, "two attempts, then the circuit opened");
    let left = match first {
        Err(CallError::Refused(refused)) => refused.retry_after(),
        _ => None,
    };
    assert!(left.is_some_and(|left| left > Duration::from_secs(59)), "{left:?}");
    let second = behind_the_breaker(&sent).await;
    assert!(
        matches!(second, Err(CallError::Refused(ref r)) if r.is_circuit_open()),
        "{second:?}"
    );
    assert_eq!(sent.get(), 2, "the next call is refused before its first attempt");
}

#[wasm_bindgen_test]
async fn a_slow_attempt_is_raced_by_a_hedge() {
    let started_at = RefCell::new(Vec::new());
    let started = Instant::now();
    let result: Result<u32, &str> = Policy::new()
        .max_retries(2)
        .retry(|| {
            let attempt = {
                let mut started_at = started_at.borrow_mut();
                started_at.push(started.elapsed());
                started_at.len()
            };
            async move {
                pause(if attempt == 1 { ms(400) } else { ms(5) }).await;
                Ok(u32::try_from(attempt).unwrap_or(u32::MAX))
            }
        })
        .hedge_after(ms(20))
        .await;
    let took = started.elapsed();
    assert_eq!(result, Ok(2), "the hedge answered first");
    let started_at = started_at.into_inner();
    assert_eq!(started_at.len(), 2);
    assert!(
        started_at[1] >= ms(20),
        "the hedge started after its delay: {started_at:?}"
    );
    assert!(
        took >= ms(25) && took < ms(400),
        "the slow attempt was not awaited: {took:?}"
    );
}
