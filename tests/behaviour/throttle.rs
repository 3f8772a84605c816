//! `budget = THROTTLE`: gRPC's retry throttling in the retry loops. Every
//! retryable failure takes a token (the last attempt's too), every
//! successful attempt returns `token_ratio`, and a retry happens only while
//! more than half the tokens are left.

use std::sync::atomic::{AtomicU32, Ordering};

use backoff_runtime::limits::RetryThrottle;
use backoff_runtime::testing::VirtualClock;
use backoff_runtime::{GiveUp, Policy, StopReason, retry};

#[derive(Debug, PartialEq)]
struct Down;

static OUTAGE: RetryThrottle = RetryThrottle::new(10, 0.1);

#[retry(max_retries = 10, jitter = none, budget = OUTAGE, on_give_up = |_, event: &GiveUp| reasons.lock().unwrap().push(event.reason()))]
fn always_down(attempts: &AtomicU32, reasons: &std::sync::Mutex<Vec<StopReason>>) -> Result<(), Down> {
    attempts.fetch_add(1, Ordering::SeqCst);
    Err(Down)
}

#[retry(max_retries = 10, jitter = none, budget = OUTAGE)]
fn healthy() -> Result<(), Down> {
    Ok(())
}

/// Attempts of one call of `always_down`.
fn attempts_of_a_failing_call(reasons: &std::sync::Mutex<Vec<StopReason>>) -> u32 {
    let attempts = AtomicU32::new(0);
    assert_eq!(always_down(&attempts, reasons), Err(Down));
    attempts.load(Ordering::SeqCst)
}

/// In a full outage the throttle stops retrying altogether; successes bring
/// the retries back.
#[test]
fn a_throttle_stops_retrying_in_an_outage_and_recovers_with_successes() {
    let _clock = VirtualClock::install();
    let reasons = std::sync::Mutex::new(Vec::new());
    // 10 tokens: failures leave 9, 8, 7, 6 (retried) and 5 (not above half).
    assert_eq!(attempts_of_a_failing_call(&reasons), 5);
    // 4 tokens left: the first failure ends the call.
    assert_eq!(attempts_of_a_failing_call(&reasons), 1);
    assert_eq!(OUTAGE.tokens(), 4.0);
    // 30 successful calls return 3 tokens: 7.
    for _ in 0..30 {
        assert_eq!(healthy(), Ok(()));
    }
    assert!((OUTAGE.tokens() - 7.0).abs() < 1e-9, "{}", OUTAGE.tokens());
    // 7 -> 6: retried; 6 -> 5: not.
    assert_eq!(attempts_of_a_failing_call(&reasons), 2);
    assert_eq!(reasons.into_inner().unwrap(), [StopReason::Budget; 3]);
}

/// The plain builder takes a throttle as its budget too, and async loops
/// count successes of later attempts.
#[tokio::test(start_paused = true)]
async fn the_plain_builder_and_async_loops_use_a_throttle() {
    let throttle = RetryThrottle::new(4, 1.0);
    let calls = AtomicU32::new(0);
    let result = Policy::new()
        .retry(|| async {
            let n = calls.fetch_add(1, Ordering::SeqCst);
            if n < 1 { Err(Down) } else { Ok(n) }
        })
        .budget(&throttle)
        .await;
    assert_eq!(result, Ok(1));
    // One failure (4 -> 3), one success (3 -> 4).
    assert_eq!(throttle.tokens(), 4.0);

    let mut calls = 0;
    let result = Policy::new()
        .retry(|| {
            calls += 1;
            Err::<(), _>(Down)
        })
        .budget(&throttle)
        .sleep(|_| {})
        .call();
    assert_eq!(result, Err(Down));
    // 4 -> 3 (retried, above 2), 3 -> 2 (not).
    assert_eq!(calls, 2);
}
