//! `retry_if`, `retry_after`, `on_retry`, `on_give_up` and `sleep`: what each
//! key changes, in sync and async functions alike.

use std::cell::{Cell, RefCell};
use std::sync::Mutex;
use std::time::Duration;

use backoff_runtime::testing::VirtualClock;
use backoff_runtime::{GiveUp, RetryEvent, StopReason, retry};
use tokio::time::Instant;

#[derive(Debug, Clone, PartialEq)]
enum ApiError {
    /// A load error, with the server's hint in seconds when it gave one.
    Busy(Option<u64>),
    Denied,
}

fn hint(error: &ApiError) -> Option<Duration> {
    match error {
        ApiError::Busy(Some(seconds)) => Some(Duration::from_secs(*seconds)),
        _ => None,
    }
}

fn is_busy(error: &ApiError) -> bool {
    matches!(error, ApiError::Busy(_))
}

/// Answers each attempt with the next scripted result (the last one repeats).
struct Script {
    answers: Vec<Result<u32, ApiError>>,
    calls: Cell<usize>,
}

impl Script {
    fn new(answers: Vec<Result<u32, ApiError>>) -> Self {
        Script {
            answers,
            calls: Cell::new(0),
        }
    }

    fn next(&self) -> Result<u32, ApiError> {
        let n = self.calls.get();
        self.calls.set(n + 1);
        self.answers[n.min(self.answers.len() - 1)].clone()
    }

    fn calls(&self) -> usize {
        self.calls.get()
    }
}

/// Everything the observers saw.
#[derive(Default)]
struct Seen {
    retries: RefCell<Vec<RetryEvent>>,
    give_ups: RefCell<Vec<(ApiError, GiveUp)>>,
}

// ---- retry_after -------------------------------------------------------------

#[retry(max_backoff = "10s", jitter = none, retry_after = hint)]
async fn hinted(script: &Script) -> Result<u32, ApiError> {
    script.next()
}

#[retry(max_backoff = "10s", jitter = none, retry_after = |e| if is_busy(e) { hint(e) } else { None })]
fn hinted_sync(script: &Script) -> Result<u32, ApiError> {
    script.next()
}

#[tokio::test(start_paused = true)]
async fn a_hint_within_the_cap_is_the_wait() {
    let script = Script::new(vec![Err(ApiError::Busy(Some(7))), Err(ApiError::Busy(None)), Ok(1)]);
    let start = Instant::now();
    assert_eq!(hinted(&script).await, Ok(1));
    // 7 s as hinted, then the schedule's base(1) = 2 s: n advanced past the hint.
    assert_eq!(start.elapsed(), Duration::from_secs(9));
}

#[test]
fn a_hint_within_the_cap_is_the_wait_sync() {
    let clock = VirtualClock::install();
    let script = Script::new(vec![
        Err(ApiError::Busy(Some(7))),
        Err(ApiError::Busy(Some(0))),
        Err(ApiError::Busy(None)),
        Ok(1),
    ]);
    assert_eq!(hinted_sync(&script), Ok(1));
    assert_eq!(
        clock.waits(),
        [7, 0, 4].map(Duration::from_secs),
        "a hint of 0 retries at once"
    );
}

#[tokio::test(start_paused = true)]
async fn a_hint_above_the_cap_ends_the_retries() {
    let script = Script::new(vec![Err(ApiError::Busy(Some(60))), Ok(1)]);
    let start = Instant::now();
    assert_eq!(hinted(&script).await, Err(ApiError::Busy(Some(60))));
    assert_eq!(script.calls(), 1);
    assert_eq!(start.elapsed(), Duration::ZERO);
}

#[test]
fn a_hint_above_the_cap_ends_the_retries_sync() {
    let clock = VirtualClock::install();
    let script = Script::new(vec![Err(ApiError::Busy(Some(11))), Ok(1)]);
    assert_eq!(hinted_sync(&script), Err(ApiError::Busy(Some(11))));
    assert!(clock.waits().is_empty());
}

#[retry(max_backoff = "10s", jitter = none, retry_after = hint, hint_above_cap = cap)]
async fn hinted_capped(script: &Script) -> Result<u32, ApiError> {
    script.next()
}

#[retry(max_backoff = "10s", jitter = none, retry_after = hint, hint_above_cap = cap)]
fn hinted_capped_sync(script: &Script) -> Result<u32, ApiError> {
    script.next()
}

/// `hint_above_cap = cap`: a hint above `max_backoff` waits the cap and
/// retries, in async and sync functions and through a `Policy`.
#[tokio::test(start_paused = true)]
async fn a_hint_above_the_cap_waits_the_cap_when_asked() {
    let script = Script::new(vec![Err(ApiError::Busy(Some(60))), Err(ApiError::Busy(Some(3))), Ok(1)]);
    let start = Instant::now();
    assert_eq!(hinted_capped(&script).await, Ok(1));
    assert_eq!(script.calls(), 3);
    assert_eq!(
        start.elapsed(),
        Duration::from_secs(13),
        "10 s (the cap), then the 3 s hint"
    );

    let script = Script::new(vec![Err(ApiError::Busy(Some(60))), Ok(2)]);
    let policy = backoff_runtime::Policy::new()
        .max_backoff(Duration::from_secs(10))
        .hint_above_cap(backoff_runtime::HintAboveCap::WaitCap);
    let start = Instant::now();
    assert_eq!(policy.retry(|| async { script.next() }).retry_after(hint).await, Ok(2));
    assert_eq!(start.elapsed(), Duration::from_secs(10));
}

#[test]
fn a_hint_above_the_cap_waits_the_cap_when_asked_sync() {
    let clock = VirtualClock::install();
    let script = Script::new(vec![Err(ApiError::Busy(Some(11))), Ok(1)]);
    assert_eq!(hinted_capped_sync(&script), Ok(1));
    assert_eq!(clock.waits(), [Duration::from_secs(10)]);
}

#[retry(max_backoff = "10s", jitter = none, max_elapsed = "12s", retry_after = hint)]
async fn hinted_with_budget(script: &Script) -> Result<u32, ApiError> {
    script.next()
}

#[tokio::test(start_paused = true)]
async fn max_elapsed_still_applies_to_hints() {
    // 8 s (hint) then the next hint of 8 s would end at 16 s > 12 s.
    let script = Script::new(vec![Err(ApiError::Busy(Some(8))), Err(ApiError::Busy(Some(8))), Ok(1)]);
    let start = Instant::now();
    assert_eq!(hinted_with_budget(&script).await, Err(ApiError::Busy(Some(8))));
    assert_eq!(start.elapsed(), Duration::from_secs(8));
}

#[retry(max_backoff = "20s", jitter = decorrelated, retry_after = hint, max_retries = 3)]
fn decorrelated_after_hint(script: &Script) -> Result<u32, ApiError> {
    script.next()
}

#[test]
fn decorrelated_jitter_takes_the_hinted_wait_as_previous() {
    for seed in 0..50 {
        backoff_runtime::testing::seed_thread_rng(seed);
        let clock = VirtualClock::install();
        let script = Script::new(vec![Err(ApiError::Busy(Some(5))), Err(ApiError::Busy(None))]);
        assert!(decorrelated_after_hint(&script).is_err());
        let waits = clock.waits();
        assert_eq!(waits[0], Duration::from_secs(5));
        // U[initial (1 s), 3 x 5 s]: only the hinted previous allows more than 3 s.
        assert!(
            waits[1] >= Duration::from_secs(1) && waits[1] <= Duration::from_secs(15),
            "{waits:?}"
        );
    }
}

// ---- on_retry and on_give_up -----------------------------------------------

#[retry(
    max_retries = 3,
    jitter = none,
    retry_if = is_busy,
    on_retry = |_e, event| seen.retries.borrow_mut().push(event.clone()),
    on_give_up = |e: &ApiError, event: &GiveUp| seen.give_ups.borrow_mut().push((e.clone(), event.clone())),
)]
async fn observed(script: &Script, seen: &Seen) -> Result<u32, ApiError> {
    script.next()
}

#[retry(
    max_retries = 3,
    jitter = none,
    max_elapsed = "5s",
    retry_if = is_busy,
    on_retry = |_e, event| seen.retries.borrow_mut().push(event.clone()),
    on_give_up = |e, event| seen.give_ups.borrow_mut().push((e.clone(), event.clone())),
)]
fn observed_sync(clock: &VirtualClock, script: &Script, seen: &Seen) -> Result<u32, ApiError> {
    clock.advance(Duration::from_millis(500));
    script.next()
}

#[tokio::test(start_paused = true)]
async fn on_retry_reports_each_wait() {
    let seen = Seen::default();
    let script = Script::new(vec![Err(ApiError::Busy(None)), Err(ApiError::Busy(None)), Ok(3)]);
    assert_eq!(observed(&script, &seen).await, Ok(3));
    let retries = seen.retries.borrow();
    let summary: Vec<_> = retries
        .iter()
        .map(|e| (e.function(), e.attempt(), e.wait(), e.retries_left(), e.elapsed()))
        .collect();
    assert_eq!(
        summary,
        [
            (
                "behaviour::hooks::observed",
                1,
                Duration::from_secs(1),
                2,
                Duration::ZERO
            ),
            (
                "behaviour::hooks::observed",
                2,
                Duration::from_secs(2),
                1,
                Duration::from_secs(1)
            ),
        ]
    );
    assert!(
        seen.give_ups.borrow().is_empty(),
        "on_give_up is never called on success"
    );
}

#[tokio::test(start_paused = true)]
async fn on_give_up_is_called_once_with_the_reason() {
    let seen = Seen::default();
    let script = Script::new(vec![Err(ApiError::Busy(None))]);
    assert!(observed(&script, &seen).await.is_err());
    {
        let give_ups = seen.give_ups.borrow();
        assert_eq!(give_ups.len(), 1);
        let (error, event) = &give_ups[0];
        assert_eq!(error, &ApiError::Busy(None));
        assert_eq!(
            (event.function(), event.reason(), event.attempts(), event.retries_left()),
            ("behaviour::hooks::observed", StopReason::Exhausted, 4, 0)
        );
        assert_eq!(event.elapsed(), Duration::from_secs(7));
    }

    let seen = Seen::default();
    let script = Script::new(vec![Err(ApiError::Busy(None)), Err(ApiError::Denied)]);
    assert_eq!(observed(&script, &seen).await, Err(ApiError::Denied));
    let give_ups = seen.give_ups.borrow();
    assert_eq!(give_ups.len(), 1);
    assert_eq!(
        (
            give_ups[0].1.reason(),
            give_ups[0].1.attempts(),
            give_ups[0].1.retries_left()
        ),
        (StopReason::Permanent, 2, 2)
    );
}

#[test]
fn hooks_measure_elapsed_from_the_call_in_sync_functions() {
    let clock = VirtualClock::install();
    let seen = Seen::default();
    let script = Script::new(vec![Err(ApiError::Busy(None))]);
    assert!(observed_sync(&clock, &script, &seen).is_err());
    // Attempts take 0.5 s each: failure at 0.5 s, wait 1 s, failure at 2 s,
    // wait 2 s, failure at 4.5 s; the next wait (4 s) would pass 5 s.
    let elapsed: Vec<_> = seen.retries.borrow().iter().map(RetryEvent::elapsed).collect();
    assert_eq!(
        elapsed,
        [500, 2000].map(Duration::from_millis),
        "the start is read before the first attempt"
    );
    let give_ups = seen.give_ups.borrow();
    assert_eq!(give_ups.len(), 1);
    assert_eq!(give_ups[0].1.reason(), StopReason::Deadline);
    assert_eq!(give_ups[0].1.elapsed(), Duration::from_millis(4500));
}

#[retry(max_retries = 1, max_backoff = "10s", retry_after = hint, on_give_up = |_, g| reasons.lock().unwrap().push(g.reason()))]
fn reasons_in_order(script: &Script, reasons: &Mutex<Vec<StopReason>>) -> Result<u32, ApiError> {
    script.next()
}

#[retry(max_retries = 1, retry_if = is_busy, on_give_up = |_, g| reasons.lock().unwrap().push(g.reason()))]
fn permanent_first(script: &Script, reasons: &Mutex<Vec<StopReason>>) -> Result<u32, ApiError> {
    script.next()
}

#[test]
fn stop_checks_run_in_the_documented_order() {
    let _clock = VirtualClock::install();
    let reasons = Mutex::new(Vec::new());
    // Retries exhausted AND a hint above the cap: exhausted is checked first.
    let script = Script::new(vec![Err(ApiError::Busy(Some(1))), Err(ApiError::Busy(Some(60)))]);
    assert!(reasons_in_order(&script, &reasons).is_err());
    // A hint above the cap on the first failure.
    let script = Script::new(vec![Err(ApiError::Busy(Some(60)))]);
    assert!(reasons_in_order(&script, &reasons).is_err());
    // Permanent AND exhausted: permanent is checked first.
    let script = Script::new(vec![Err(ApiError::Busy(None)), Err(ApiError::Denied)]);
    assert!(permanent_first(&script, &reasons).is_err());
    assert_eq!(
        *reasons.lock().unwrap(),
        [StopReason::Exhausted, StopReason::HintAboveCap, StopReason::Permanent]
    );
}

// ---- hooks that use the function's arguments and self ---------------------------

struct Client {
    transient_codes: Vec<u16>,
    calls: Cell<u32>,
}

impl Client {
    fn is_transient(&self, code: &u16) -> bool {
        self.transient_codes.contains(code)
    }

    #[retry(initial_backoff = "1ms", retry_if = |code| self.is_transient(code))]
    fn call(&self, answers: &[u16]) -> Result<(), u16> {
        let n = self.calls.get();
        self.calls.set(n + 1);
        Err(answers[(n as usize).min(answers.len() - 1)])
    }

    #[retry(initial_backoff = "1ms", retry_if = |code| self.is_transient(code) && *code != stop_on)]
    async fn call_async(&self, answers: &[u16], stop_on: u16) -> Result<(), u16> {
        let n = self.calls.get();
        self.calls.set(n + 1);
        Err(answers[(n as usize).min(answers.len() - 1)])
    }
}

#[test]
fn hooks_may_use_self() {
    let _clock = VirtualClock::install();
    let client = Client {
        transient_codes: vec![503],
        calls: Cell::new(0),
    };
    assert_eq!(client.call(&[503, 503, 404]), Err(404));
    assert_eq!(client.calls.get(), 3);
}

#[tokio::test(start_paused = true)]
async fn hooks_may_use_self_and_arguments_async() {
    let client = Client {
        transient_codes: vec![500, 503],
        calls: Cell::new(0),
    };
    assert_eq!(client.call_async(&[503, 503, 500], 500).await, Err(500));
    assert_eq!(client.calls.get(), 3);
}

// ---- sleep -------------------------------------------------------------------

#[retry(max_retries = 3, jitter = none, sleep = |d| slept.borrow_mut().push(d))]
fn custom_sync_sleep(slept: &RefCell<Vec<Duration>>) -> Result<(), ()> {
    Err(())
}

#[retry(max_retries = 3, jitter = none, initial_backoff = "10ms", sleep = |d| record_then_sleep(slept, d))]
async fn custom_async_sleep(slept: &Mutex<Vec<Duration>>) -> Result<(), ()> {
    Err(())
}

async fn record_then_sleep(slept: &Mutex<Vec<Duration>>, wait: Duration) -> &'static str {
    slept.lock().unwrap().push(wait);
    tokio::task::yield_now().await;
    "the output is ignored"
}

#[test]
fn sync_functions_sleep_with_the_given_function() {
    let clock = VirtualClock::install();
    let slept = RefCell::new(Vec::new());
    assert!(custom_sync_sleep(&slept).is_err());
    assert_eq!(*slept.borrow(), [1, 2, 4].map(Duration::from_secs));
    assert!(
        clock.waits().is_empty(),
        "neither the thread nor the virtual clock slept"
    );
}

#[test]
fn async_functions_sleep_with_the_given_future_on_another_executor() {
    let slept = Mutex::new(Vec::new());
    // No tokio runtime here: async-io's executor, and a sleep that is not tokio's.
    let result = async_io::block_on(custom_async_sleep(&slept));
    assert!(result.is_err());
    assert_eq!(*slept.lock().unwrap(), [10, 20, 40].map(Duration::from_millis));
}

struct Limited {
    calls: u32,
    limit: u32,
}

impl Limited {
    /// An async `&mut self` method whose hook reads `self`: the hook runs after
    /// the attempt's mutable borrow has ended.
    #[retry(initial_backoff = "1ms", max_retries = 10, retry_if = |_| self.calls < self.limit)]
    async fn bump(&mut self) -> Result<(), u32> {
        self.calls += 1;
        Err(self.calls)
    }
}

#[tokio::test(start_paused = true)]
async fn async_mut_self_hooks_may_read_self() {
    let mut limited = Limited { calls: 0, limit: 3 };
    assert_eq!(limited.bump().await, Err(3));
    assert_eq!(limited.calls, 3);
}

// ---- on_success ----------------------------------------------------------------

#[retry(
    max_retries = 3,
    jitter = none,
    retry_if = is_busy,
    on_success = |event| successes.borrow_mut().push((event.function(), event.attempts(), event.retried(), event.elapsed())),
)]
async fn succeeding(
    script: &Script,
    successes: &RefCell<Vec<(&'static str, u32, bool, Duration)>>,
) -> Result<u32, ApiError> {
    let _ = successes;
    script.next()
}

/// `on_success` is called once per successful call, with the attempts and
/// the time it took (here 1 s + 2 s of waits); never when the call gives up.
#[tokio::test(start_paused = true)]
async fn on_success_reports_the_attempts_and_the_time_of_a_success() {
    let successes = RefCell::new(Vec::new());
    let script = Script::new(vec![Err(ApiError::Busy(None)), Err(ApiError::Busy(None)), Ok(1)]);
    assert_eq!(succeeding(&script, &successes).await, Ok(1));
    let script = Script::new(vec![Ok(2)]);
    assert_eq!(succeeding(&script, &successes).await, Ok(2));
    let script = Script::new(vec![Err(ApiError::Denied)]);
    assert_eq!(succeeding(&script, &successes).await, Err(ApiError::Denied));
    let script = Script::new(vec![Err(ApiError::Busy(None))]);
    assert!(succeeding(&script, &successes).await.is_err());
    assert_eq!(
        successes.into_inner(),
        [
            ("behaviour::hooks::succeeding", 3, true, Duration::from_secs(3)),
            ("behaviour::hooks::succeeding", 1, false, Duration::ZERO)
        ]
    );
}

#[retry(max_retries = 2, initial_backoff = "1ms", on_success = |event| attempts.set(event.attempts()))]
fn succeeding_sync(script: &Script, attempts: &Cell<u32>) -> Result<u32, ApiError> {
    let _ = attempts;
    script.next()
}

#[test]
fn on_success_is_called_on_the_sync_happy_path_too() {
    let attempts = Cell::new(0);
    assert_eq!(succeeding_sync(&Script::new(vec![Ok(5)]), &attempts), Ok(5));
    assert_eq!(attempts.get(), 1);
    let _clock = VirtualClock::install();
    let script = Script::new(vec![Err(ApiError::Busy(None)), Ok(6)]);
    assert_eq!(succeeding_sync(&script, &attempts), Ok(6));
    assert_eq!(attempts.get(), 2);
}

/// An error that says whether it is worth retrying.
trait Transient {
    fn transient(&self) -> bool;
}

impl Transient for u16 {
    fn transient(&self) -> bool {
        *self >= 500
    }
}

/// A generic predicate, named without a turbofish: its type parameter is
/// the function's error type.
fn is_transient_generic<E: Transient>(error: &E) -> bool {
    error.transient()
}

#[retry(max_retries = 3, initial_backoff = "1ms", retry_if = is_transient_generic)]
fn generic_predicate(calls: &Cell<u32>, status: u16) -> Result<(), u16> {
    calls.set(calls.get() + 1);
    Err(status)
}

#[test]
fn a_generic_predicate_is_named_without_a_turbofish() {
    let _clock = VirtualClock::install();
    let calls = Cell::new(0);
    assert_eq!(generic_predicate(&calls, 503), Err(503));
    assert_eq!(calls.get(), 4, "503 is retried");
    calls.set(0);
    assert_eq!(generic_predicate(&calls, 404), Err(404));
    assert_eq!(calls.get(), 1, "404 is not");
}
