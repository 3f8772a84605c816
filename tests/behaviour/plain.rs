//! The plain builder, `policy.retry(op)`, mirrors the attribute key by key,
//! sync (`.call()`) and async (`.await`), with the same loop, stop rules and
//! events: each test is the builder's twin of an attribute test.

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use backoff_runtime::limits::RetryBudget;
use backoff_runtime::testing::VirtualClock;
use backoff_runtime::{Elapsed, GiveUp, Jitter, Policy, RetryEvent, StopReason};

const FAST: Policy = Policy::new()
    .initial_backoff(Duration::from_secs(1))
    .max_backoff(Duration::from_secs(8))
    .jitter(Jitter::None)
    .max_retries(3);

#[derive(Debug, PartialEq)]
enum CallError {
    Busy,
    Denied,
    Hinted(Duration),
    TimedOut,
}

impl From<Elapsed> for CallError {
    fn from(_: Elapsed) -> Self {
        CallError::TimedOut
    }
}

#[test]
fn call_retries_until_ok_on_the_schedule() {
    let clock = VirtualClock::install();
    let mut calls = 0;
    let result = FAST
        .retry(|| {
            calls += 1;
            if calls < 3 { Err(CallError::Busy) } else { Ok(calls) }
        })
        .call();
    assert_eq!(result, Ok(3));
    assert_eq!(clock.waits(), [1, 2].map(Duration::from_secs));
}

#[test]
fn call_returns_the_last_error_when_retries_run_out() {
    let clock = VirtualClock::install();
    let mut calls = 0;
    let result: Result<(), _> = FAST
        .retry(|| {
            calls += 1;
            Err(calls)
        })
        .call();
    assert_eq!(result, Err(4));
    assert_eq!(clock.waits(), [1, 2, 4].map(Duration::from_secs));
}

#[test]
fn retry_if_stops_at_a_permanent_error() {
    let clock = VirtualClock::install();
    let mut calls = 0;
    let result: Result<(), _> = FAST
        .retry(|| {
            calls += 1;
            Err(if calls == 1 { CallError::Busy } else { CallError::Denied })
        })
        .retry_if(|e| *e == CallError::Busy)
        .call();
    assert_eq!(result, Err(CallError::Denied));
    assert_eq!(calls, 2);
    assert_eq!(clock.waits(), [Duration::from_secs(1)]);
}

#[test]
fn retry_after_is_the_wait_within_the_cap_and_ends_the_retries_above_it() {
    let clock = VirtualClock::install();
    let mut hints = [Duration::from_secs(3), Duration::ZERO, Duration::from_secs(9)].into_iter();
    let result: Result<(), _> = FAST
        .retry(|| Err(CallError::Hinted(hints.next().unwrap_or_default())))
        .retry_after(|e| match e {
            CallError::Hinted(hint) => Some(*hint),
            _ => None,
        })
        .call();
    // 3 s and 0 s are within the 8 s cap; 9 s is above it and ends the call.
    assert_eq!(result, Err(CallError::Hinted(Duration::from_secs(9))));
    assert_eq!(clock.waits(), [Duration::from_secs(3), Duration::ZERO]);
}

#[test]
fn on_retry_and_on_give_up_report_what_the_attribute_reports() {
    let _clock = VirtualClock::install();
    let retries = RefCell::new(Vec::new());
    let gave_up = RefCell::new(Vec::new());
    let result: Result<(), _> = FAST
        .retry(|| Err(CallError::Busy))
        .on_retry(|_, event: &RetryEvent| {
            retries
                .borrow_mut()
                .push((event.function(), event.attempt(), event.wait(), event.retries_left()))
        })
        .on_give_up(|_, event: &GiveUp| {
            gave_up
                .borrow_mut()
                .push((event.function(), event.attempts(), event.reason()))
        })
        .name("fetch")
        .call();
    assert_eq!(result, Err(CallError::Busy));
    assert_eq!(
        retries.into_inner(),
        [
            ("fetch", 1, Duration::from_secs(1), 2),
            ("fetch", 2, Duration::from_secs(2), 1),
            ("fetch", 3, Duration::from_secs(4), 0)
        ]
    );
    assert_eq!(gave_up.into_inner(), [("fetch", 4, StopReason::Exhausted)]);
}

#[test]
fn on_give_up_is_never_called_on_success() {
    let gave_up = Cell::new(false);
    let result: Result<u8, ()> = FAST
        .retry(|| Ok(1))
        .on_give_up(|_, _: &GiveUp| gave_up.set(true))
        .call();
    assert_eq!(result, Ok(1));
    assert!(!gave_up.get());
}

#[test]
fn a_custom_sleep_gets_every_wait() {
    let slept = RefCell::new(Vec::new());
    let result: Result<(), _> = FAST
        .retry(|| Err(()))
        .sleep(|wait| slept.borrow_mut().push(wait))
        .call();
    assert_eq!(result, Err(()));
    assert_eq!(slept.into_inner(), [1, 2, 4].map(Duration::from_secs));
}

#[test]
fn a_budget_value_bounds_the_retries() {
    let _clock = VirtualClock::install();
    // No ratio, a floor of one retry per second over 10 s: 10 retries.
    let budget = RetryBudget::new().ratio(0.0).min_per_second(1);
    let mut calls = 0;
    let policy = FAST.max_retries(50).initial_backoff(Duration::from_millis(1));
    let refused = Cell::new(None);
    let result: Result<(), ()> = policy
        .retry(|| {
            calls += 1;
            Err(())
        })
        .budget(&budget)
        .on_give_up(|_, event: &GiveUp| refused.set(Some(event.reason())))
        .call();
    assert_eq!(result, Err(()));
    assert_eq!(calls, 11);
    assert_eq!(refused.get(), Some(StopReason::Budget));
}

#[test]
fn max_elapsed_stops_the_plain_loop_too() {
    let clock = VirtualClock::install();
    let result: Result<(), ()> = FAST.max_elapsed(Duration::from_secs(5)).retry(|| Err(())).call();
    assert_eq!(result, Err(()));
    // 1 + 2 s; the 4 s wait would end at 7 s, past the 5 s budget.
    assert_eq!(clock.waits(), [1, 2].map(Duration::from_secs));
}

#[tokio::test(start_paused = true)]
async fn await_retries_on_tokio_s_paused_clock() {
    let calls = AtomicU32::new(0);
    let start = tokio::time::Instant::now();
    let result = FAST
        .retry(|| async {
            let n = calls.fetch_add(1, Ordering::SeqCst) + 1;
            if n < 4 { Err(CallError::Busy) } else { Ok(n) }
        })
        .await;
    assert_eq!(result, Ok(4));
    assert_eq!(start.elapsed(), Duration::from_secs(7));
}

#[test]
fn an_observer_measures_from_the_call_s_start_not_the_first_failure() {
    let clock = VirtualClock::install();
    let elapsed = RefCell::new(Vec::new());
    let _ = FAST
        .max_retries(1)
        .retry(|| {
            // The first attempt takes 300 ms before it fails.
            clock.advance(Duration::from_millis(300));
            Err::<(), _>(CallError::Busy)
        })
        .on_retry(|_, event: &RetryEvent| elapsed.borrow_mut().push(event.elapsed()))
        .call();
    assert_eq!(elapsed.into_inner(), [Duration::from_millis(300)]);
}

/// A `.call()` with a 5 s deadline and a `before_retry` that takes `takes`:
/// its result, the actions run and the waits slept.
fn call_with_an_action_taking(takes: Duration) -> (Result<(), CallError>, u32, Vec<Duration>) {
    let clock = VirtualClock::install();
    let actions = Cell::new(0);
    let result = FAST
        .max_elapsed(Duration::from_secs(5))
        .retry(|| Err::<(), _>(CallError::Busy))
        .before_retry(|_, _| {
            actions.set(actions.get() + 1);
            clock.advance(takes);
        })
        .call();
    (result, actions.get(), clock.waits())
}

#[test]
fn call_s_before_retry_runs_before_each_wait_and_its_time_counts_toward_max_elapsed() {
    // 3 s: the first wait (1 s) still ends by the deadline, the second
    // failure's (2 s) would not: one action, one wait.
    assert_eq!(
        call_with_an_action_taking(Duration::from_secs(3)),
        (Err(CallError::Busy), 1, vec![Duration::from_secs(1)])
    );
    // 4.5 s: the wait after it would end past the deadline: not started.
    assert_eq!(
        call_with_an_action_taking(Duration::from_millis(4500)),
        (Err(CallError::Busy), 1, vec![])
    );
}

#[tokio::test(start_paused = true)]
async fn await_reports_a_success_to_on_success_with_another_hook_or_alone() {
    let attempts = RefCell::new(Vec::new());
    let result = FAST
        .retry(|| async { Ok::<u32, CallError>(7) })
        .on_success(|event| attempts.borrow_mut().push(event.attempts()))
        .await;
    let calls = AtomicU32::new(0);
    let second = FAST
        .retry(|| async {
            if calls.fetch_add(1, Ordering::SeqCst) == 0 {
                Err(CallError::Busy)
            } else {
                Ok(8)
            }
        })
        .on_success(|event| attempts.borrow_mut().push(event.attempts()))
        .retry_if(|e| *e == CallError::Busy)
        .await;
    assert_eq!((result, second), (Ok(7), Ok(8)));
    assert_eq!(attempts.into_inner(), [1, 2]);
}

#[tokio::test(start_paused = true)]
async fn await_honours_every_hook() {
    let calls = AtomicU32::new(0);
    let waits = RefCell::new(Vec::new());
    let reason = Cell::new(None);
    let result: Result<(), _> = FAST
        .retry(|| async {
            let n = calls.fetch_add(1, Ordering::SeqCst);
            Err(if n < 2 {
                CallError::Hinted(Duration::from_millis(500))
            } else {
                CallError::Denied
            })
        })
        .retry_if(|e| *e != CallError::Denied)
        .retry_after(|e| match e {
            CallError::Hinted(hint) => Some(*hint),
            _ => None,
        })
        .on_retry(|_, event: &RetryEvent| waits.borrow_mut().push((event.wait(), event.hinted())))
        .on_give_up(|_, event: &GiveUp| reason.set(Some(event.reason())))
        .await;
    assert_eq!(result, Err(CallError::Denied));
    assert_eq!(waits.into_inner(), [(Duration::from_millis(500), true); 2]);
    assert_eq!(reason.get(), Some(StopReason::Permanent));
}

#[tokio::test(start_paused = true)]
async fn await_cuts_a_hanging_attempt_at_the_timeout() {
    let calls = AtomicU32::new(0);
    let start = tokio::time::Instant::now();
    let result = FAST
        .retry(|| async {
            if calls.fetch_add(1, Ordering::SeqCst) == 0 {
                std::future::pending::<()>().await;
            }
            Ok::<_, CallError>(7)
        })
        .timeout(Duration::from_secs(5))
        .await;
    assert_eq!(result, Ok(7));
    // 5 s until the hanging attempt is cut, then the 1 s wait.
    assert_eq!(start.elapsed(), Duration::from_secs(6));
}

#[tokio::test(start_paused = true)]
async fn await_starts_no_attempt_with_zero_time_left() {
    let calls = AtomicU32::new(0);
    let result: Result<(), _> = FAST
        .max_elapsed(Duration::from_secs(3))
        .retry(|| async {
            calls.fetch_add(1, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_secs(2)).await;
            Err(CallError::Busy)
        })
        .timeout(Duration::from_secs(10))
        .await;
    // 2 s attempt, the 1 s wait ends exactly at the budget: no time left.
    assert_eq!(result, Err(CallError::TimedOut));
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[tokio::test(start_paused = true)]
async fn await_with_a_custom_sleep_keeps_the_deadline_on_tokio_s_clock() {
    let start = tokio::time::Instant::now();
    let result: Result<(), ()> = FAST
        .max_retries(10)
        .max_elapsed(Duration::from_secs(10))
        .retry(|| async { Err(()) })
        .sleep(tokio::time::sleep)
        .await;
    assert_eq!(result, Err(()));
    assert_eq!(start.elapsed(), Duration::from_secs(7));
}

#[tokio::test(start_paused = true)]
async fn the_future_of_an_await_is_send_when_the_operation_s_are() {
    fn assert_send<T: Send>(value: T) -> T {
        value
    }
    let calls = AtomicU32::new(0);
    let result = assert_send(
        FAST.retry(|| async {
            calls.fetch_add(1, Ordering::SeqCst);
            Ok::<_, ()>(())
        })
        .into_future(),
    )
    .await;
    assert_eq!(result, Ok(()));
}

#[tokio::test(start_paused = true)]
async fn dropping_the_future_during_a_wait_starts_no_attempt() {
    let calls = AtomicU32::new(0);
    let future = FAST
        .retry(|| async {
            calls.fetch_add(1, Ordering::SeqCst);
            Err::<(), _>(())
        })
        .into_future();
    let _ = tokio::time::timeout(Duration::from_millis(500), future).await;
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[test]
fn call_reports_a_first_attempt_success_to_on_success() {
    let attempts = Cell::new(0);
    let result = FAST
        .retry(|| Ok::<u32, CallError>(7))
        .on_success(|event| attempts.set(event.attempts()))
        .call();
    assert_eq!((result, attempts.get()), (Ok(7), 1));
}

#[tokio::test(start_paused = true)]
async fn await_s_observer_measures_from_the_call_s_start_not_the_first_failure() {
    let elapsed = RefCell::new(Vec::new());
    let _ = FAST
        .max_retries(1)
        .retry(|| async {
            // The first attempt takes 300 ms before it fails.
            tokio::time::sleep(Duration::from_millis(300)).await;
            Err::<(), _>(CallError::Busy)
        })
        .on_retry(|_, event: &RetryEvent| elapsed.borrow_mut().push(event.elapsed()))
        .await;
    assert_eq!(elapsed.into_inner(), [Duration::from_millis(300)]);
}

#[tokio::test(start_paused = true)]
async fn await_s_before_retry_runs_before_each_wait_and_the_wait_follows() {
    let start = tokio::time::Instant::now();
    let calls = AtomicU32::new(0);
    // When each attempt and each action ran, from the call's start.
    let seen = RefCell::new(Vec::new());
    let result = FAST
        .max_retries(2)
        .retry(|| async {
            seen.borrow_mut().push(("attempt", start.elapsed()));
            if calls.fetch_add(1, Ordering::SeqCst) < 2 {
                Err(CallError::Busy)
            } else {
                Ok(())
            }
        })
        .before_retry(|_, event: &RetryEvent| {
            seen.borrow_mut().push(("action", start.elapsed()));
            let wait = event.wait();
            async move { assert!(wait > Duration::ZERO) }
        })
        .await;
    assert_eq!(result, Ok(()));
    // Each action runs at once after the failure, then its wait (1 s, 2 s)
    // before the next attempt.
    assert_eq!(
        seen.into_inner(),
        [
            ("attempt", Duration::ZERO),
            ("action", Duration::ZERO),
            ("attempt", Duration::from_secs(1)),
            ("action", Duration::from_secs(1)),
            ("attempt", Duration::from_secs(3)),
        ]
    );
}

#[test]
fn a_retry_debugs_as_its_policy_and_its_keys() {
    let retry = FAST.retry(|| Err::<(), _>(CallError::Busy)).name("fetch");
    assert_eq!(
        format!("{retry:?}"),
        format!(
            "Retry {{ policy: {FAST:?}, budget: None, config: Config {{ name: \"fetch\", sleep: DefaultSleep, timeout: None, .. }}, .. }}"
        )
    );
}

#[tokio::test(start_paused = true)]
async fn await_s_future_debugs_as_its_policy_and_whether_it_waits() {
    let mut future = std::pin::pin!(FAST.retry(|| async { Err::<(), _>(CallError::Busy) }).into_future());
    assert_eq!(
        format!("{future:?}"),
        format!("RetryFuture {{ policy: {FAST:?}, waiting: false, .. }}")
    );
    // Polled once: the first attempt failed, and the 1 s wait is pending.
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    assert!(future.as_mut().poll(&mut cx).is_pending());
    assert_eq!(
        format!("{future:?}"),
        format!("RetryFuture {{ policy: {FAST:?}, waiting: true, .. }}")
    );
}
