//! Feature `tracing`: a WARN event for each retry and one at give-up, with
//! the function, attempt, wait, reason and (when the error type is `Debug`,
//! with no `E: Debug` bound ever required) the error.

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::sync::{Arc, Mutex};

use backoff_runtime::retry;
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};

/// One captured event: its level and its fields, formatted.
#[derive(Debug, Clone)]
struct Captured {
    level: Level,
    fields: BTreeMap<String, String>,
}

#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<Captured>>>);

struct Fields(BTreeMap<String, String>);

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn Debug) {
        self.0.insert(field.name().to_string(), format!("{value:?}"));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_string(), value.to_string());
    }
}

impl<S: Subscriber> Layer<S> for Capture {
    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        let mut fields = Fields(BTreeMap::new());
        event.record(&mut fields);
        self.0.lock().unwrap().push(Captured {
            level: *event.metadata().level(),
            fields: fields.0,
        });
    }
}

fn capture<T>(f: impl FnOnce() -> T) -> (T, Vec<Captured>) {
    let capture = Capture::default();
    let subscriber = tracing_subscriber::registry().with(capture.clone());
    let out = tracing::subscriber::with_default(subscriber, f);
    let events = capture.0.lock().unwrap().clone();
    (out, events)
}

#[derive(Debug)]
struct Unavailable {
    code: u16,
}

/// Not `Debug`: the events still come, without the error.
struct Opaque;

#[retry(max_retries = 2, jitter = none, initial_backoff = "1ms")]
fn debug_error() -> Result<(), Unavailable> {
    Err(Unavailable { code: 503 })
}

#[retry(max_retries = 1, jitter = none, initial_backoff = "1ms")]
fn opaque_error() -> Result<(), Opaque> {
    Err(Opaque)
}

/// A generic error with no `Debug` bound: still compiles, logs no error.
#[retry(max_retries = 1, jitter = none, initial_backoff = "1ms")]
fn generic_error<E>(error: impl Fn() -> E) -> Result<(), E> {
    Err(error())
}

#[test]
fn a_warn_event_per_retry_and_one_at_give_up() {
    let _clock = backoff_runtime::testing::VirtualClock::install();
    let (result, events) = capture(debug_error);
    assert!(result.is_err());
    assert_eq!(events.len(), 3, "{events:#?}");
    assert!(events.iter().all(|e| e.level == Level::WARN));

    let first = &events[0].fields;
    assert_eq!(first["function"], "telemetry::events::debug_error");
    assert_eq!(first["attempt"], "1");
    assert_eq!(first["wait"], "1ms");
    assert_eq!(first["retries_left"], "1");
    assert_eq!(first["error"], "Unavailable { code: 503 }");
    // No key read the start: no elapsed time is known at the first failure,
    // and none is made up; later events count from the first failure.
    assert!(!first.contains_key("elapsed"), "{first:?}");
    assert!(!first.contains_key("since_first_failure"), "{first:?}");
    assert_eq!(events[1].fields["since_first_failure"], "1ms");
    assert!(!events[1].fields.contains_key("elapsed"));
    assert_eq!(events[1].fields["attempt"], "2");
    assert_eq!(events[1].fields["wait"], "2ms");

    let last = &events[2].fields;
    assert_eq!(last["message"], "giving up");
    assert_eq!(last["reason"], "retries exhausted");
    assert_eq!(last["attempts"], "3");
    assert_eq!(last["error"], "Unavailable { code: 503 }");
}

#[retry(max_retries = 1, jitter = none, initial_backoff = "1ms", retry_if_ok = |n: &u32| *n < 10)]
fn pending_value() -> Result<u32, Unavailable> {
    Ok(1)
}

/// A pending value is reported like a failure, with the whole result in the
/// `error` field: `Ok(..)` says it was a value.
#[test]
fn value_retries_are_reported_with_the_result() {
    let _clock = backoff_runtime::testing::VirtualClock::install();
    let (result, events) = capture(pending_value);
    assert_eq!(result.ok(), Some(1));
    assert_eq!(events.len(), 2, "{events:#?}");
    assert_eq!(events[0].fields["error"], "Ok(1)");
    assert_eq!(events[0].fields["wait"], "1ms");
    assert_eq!(events[1].fields["message"], "giving up");
    assert_eq!(events[1].fields["reason"], "retries exhausted");
    assert_eq!(events[1].fields["error"], "Ok(1)");
}

/// A current-thread runtime on tokio's paused clock.
fn paused_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap()
}

/// A 503 while `fail` counts down, then 9: the body of the functions below.
fn fails_then_nine(fail: &std::cell::Cell<u32>) -> Result<u32, Unavailable> {
    if fail.get() > 0 {
        fail.set(fail.get() - 1);
        return Err(Unavailable { code: 503 });
    }
    Ok(9)
}

#[retry(max_retries = 2, jitter = none, initial_backoff = "1ms")]
fn recovers(fail: &std::cell::Cell<u32>) -> Result<u32, Unavailable> {
    fails_then_nine(fail)
}

/// A success after retries emits one INFO event with the function, the
/// attempts and the elapsed time; a success at once emits nothing.
#[test]
fn a_success_after_retries_emits_one_info_event() {
    let _clock = backoff_runtime::testing::VirtualClock::install();
    let (result, events) = capture(|| recovers(&std::cell::Cell::new(1)));
    assert_eq!(result.ok(), Some(9));
    assert_eq!(events.len(), 2, "{events:#?}");
    assert_eq!(events[0].level, Level::WARN);
    let success = &events[1];
    assert_eq!(success.level, Level::INFO);
    assert_eq!(success.fields["message"], "succeeded after retries");
    assert_eq!(success.fields["function"], "telemetry::events::recovers");
    assert_eq!(success.fields["attempts"], "2");
    assert_eq!(success.fields["since_first_failure"], "1ms");

    let (result, events) = capture(|| recovers(&std::cell::Cell::new(0)));
    assert_eq!(result.ok(), Some(9));
    assert!(events.is_empty(), "{events:#?}");
}

#[retry(max_retries = 2, jitter = none, initial_backoff = "1ms")]
async fn recovers_async(fail: &std::cell::Cell<u32>) -> Result<u32, Unavailable> {
    fails_then_nine(fail)
}

/// The same from an `async fn` without `on_success`: its loop reports the
/// success after retries too.
#[test]
fn an_async_success_after_retries_emits_one_info_event() {
    let runtime = paused_runtime();
    let (result, events) = capture(|| runtime.block_on(recovers_async(&std::cell::Cell::new(1))));
    assert_eq!(result.ok(), Some(9));
    assert_eq!(events.len(), 2, "{events:#?}");
    assert_eq!(events[1].level, Level::INFO);
    assert_eq!(events[1].fields["message"], "succeeded after retries");
    assert_eq!(events[1].fields["function"], "telemetry::events::recovers_async");
    assert_eq!(events[1].fields["attempts"], "2");
}

#[retry(max_retries = 2, jitter = none, initial_backoff = "1ms", hedge_after = "1s")]
async fn recovers_hedged(fail: &std::cell::Cell<u32>) -> Result<u32, Unavailable> {
    fails_then_nine(fail)
}

/// A hedged call whose first attempt failed and whose retry succeeded
/// reports its success after retries too.
#[test]
fn a_hedged_success_after_a_retry_emits_one_info_event() {
    let runtime = paused_runtime();
    let (result, events) = capture(|| runtime.block_on(recovers_hedged(&std::cell::Cell::new(1))));
    assert_eq!(result.ok(), Some(9));
    let success: Vec<_> = events
        .iter()
        .filter(|event| event.fields["message"] == "succeeded after retries")
        .collect();
    assert_eq!(success.len(), 1, "{events:#?}");
    assert_eq!(success[0].level, Level::INFO);
    assert_eq!(success[0].fields["attempts"], "2");
}

#[test]
fn errors_that_are_not_debug_are_left_out() {
    let _clock = backoff_runtime::testing::VirtualClock::install();
    let (_, events) = capture(opaque_error);
    assert_eq!(events.len(), 2);
    assert!(events.iter().all(|e| !e.fields.contains_key("error")), "{events:#?}");
    assert_eq!(events[0].fields["function"], "telemetry::events::opaque_error");

    let (_, events) = capture(|| generic_error(|| Unavailable { code: 500 }));
    assert_eq!(events.len(), 2);
    assert!(events.iter().all(|e| !e.fields.contains_key("error")));
}

#[retry(max_retries = 3, initial_backoff = "1ms", retry_if = |e| e.code != 404)]
async fn classified(code: u16) -> Result<(), Unavailable> {
    Err(Unavailable { code })
}

#[tokio::test(start_paused = true)]
async fn the_give_up_event_names_the_reason() {
    let capture = Capture::default();
    let subscriber = tracing_subscriber::registry().with(capture.clone());
    let _guard = tracing::subscriber::set_default(subscriber);
    assert!(classified(404).await.is_err());
    let events = capture.0.lock().unwrap().clone();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].fields["reason"], "error is not retryable");
    assert_eq!(events[0].fields["function"], "telemetry::events::classified");
    assert_eq!(events[0].fields["attempts"], "1");
}

#[retry(max_retries = 2, jitter = none, initial_backoff = "1ms", max_elapsed = "1s")]
fn deadline_bound(clock: &backoff_runtime::testing::VirtualClock) -> Result<(), Unavailable> {
    clock.advance(std::time::Duration::from_millis(3));
    Err(Unavailable { code: 503 })
}

/// With a key that reads the call's start (`max_elapsed`), every event
/// carries `elapsed`, the time since the call started.
#[test]
fn events_carry_the_time_since_the_call_when_the_start_was_read() {
    let clock = backoff_runtime::testing::VirtualClock::install();
    let (result, events) = capture(|| deadline_bound(&clock));
    assert!(result.is_err());
    assert_eq!(events[0].fields["elapsed"], "3ms");
    assert_eq!(events[1].fields["elapsed"], "7ms");
    assert!(events.iter().all(|e| !e.fields.contains_key("since_first_failure")));
}

#[retry(max_retries = 2, jitter = none, initial_backoff = "1ms")]
fn times_out() -> Result<(), backoff_runtime::reqwest_errors::Error> {
    Err(backoff_runtime::reqwest_errors::Error::TimedOut)
}

/// An HTTP failure (reqwest's errors): each retry event carries
/// OpenTelemetry's `http.request.resend_count`, the resend about to be made;
/// another error type's events do not.
#[test]
fn http_retry_events_carry_the_resend_count() {
    let (_, events) = capture(|| times_out().unwrap_err());
    let counts: Vec<Option<&str>> = events
        .iter()
        .filter(|event| event.level == Level::WARN)
        .map(|event| event.fields.get("http.request.resend_count").map(String::as_str))
        .collect();
    assert_eq!(counts, [Some("1"), Some("2"), None], "two retries, then the give-up");
    let (_, events) = capture(|| debug_error().unwrap_err());
    assert!(
        events
            .iter()
            .all(|event| !event.fields.contains_key("http.request.resend_count"))
    );
}

/// Refuses every attempt from the `from`-th on.
struct RefuseFrom(u32);

impl backoff_runtime::limits::AdmissionLimit for RefuseFrom {
    fn admit(&self, request: backoff_runtime::limits::AdmissionRequest<'_>) -> backoff_runtime::limits::Admission {
        if request.attempt >= self.0 {
            backoff_runtime::limits::Admission::Refuse
        } else {
            backoff_runtime::limits::Admission::Go
        }
    }
}

static REFUSE_FIRST: RefuseFrom = RefuseFrom(1);
static REFUSE_RETRY: RefuseFrom = RefuseFrom(2);

#[derive(Debug)]
enum Shed {
    Busy,
    Refused,
}

impl From<backoff_runtime::limits::Refused> for Shed {
    fn from(_: backoff_runtime::limits::Refused) -> Self {
        Shed::Refused
    }
}

#[retry(admission = REFUSE_FIRST, max_retries = 2, jitter = none, initial_backoff = "1ms")]
fn shed_at_once() -> Result<(), Shed> {
    Err(Shed::Busy)
}

#[retry(admission = REFUSE_RETRY, max_retries = 2, jitter = none, initial_backoff = "1ms")]
fn shed_on_retry() -> Result<(), Shed> {
    Err(Shed::Busy)
}

/// A refused attempt ends the call as any stop rule does: one WARN event
/// "giving up" with the reason, the attempts made (0 when the first was
/// refused) and the error the caller gets.
#[test]
fn a_refused_attempt_is_reported_as_a_give_up() {
    let _clock = backoff_runtime::testing::VirtualClock::install();
    let (result, events) = capture(shed_at_once);
    assert!(matches!(result, Err(Shed::Refused)));
    assert_eq!(events.len(), 1, "{events:#?}");
    let only = &events[0];
    assert_eq!(only.level, Level::WARN);
    assert_eq!(only.fields["message"], "giving up");
    assert_eq!(only.fields["reason"], "the admission limiter refused the attempt");
    assert_eq!(only.fields["attempts"], "0");
    assert_eq!(only.fields["retries_left"], "2");
    assert_eq!(only.fields["error"], "Refused");

    let (result, events) = capture(shed_on_retry);
    assert!(matches!(result, Err(Shed::Refused)));
    assert_eq!(events.len(), 2, "{events:#?}");
    assert_eq!(events[0].fields["message"], "attempt failed, retrying");
    assert_eq!(events[0].fields["error"], "Busy");
    assert_eq!(events[1].fields["message"], "giving up");
    assert_eq!(events[1].fields["reason"], "the admission limiter refused the attempt");
    assert_eq!(events[1].fields["attempts"], "1");
    assert_eq!(events[1].fields["error"], "Refused");
}

/// A circuit breaker's changes of state are events: WARN when it opens,
/// INFO when it half-opens and closes, with the breaker's name and both
/// states.
#[test]
fn a_breaker_reports_each_change_of_state() {
    use backoff_runtime::limits::{Admission, AdmissionLimit, AdmissionRequest, AttemptEnd, CircuitBreaker};
    use std::time::{Duration, Instant};
    let breaker = CircuitBreaker::new().consecutive_failures(1).name("ledger");
    let start = Instant::now();
    let after = start + breaker.get_break_duration();
    let ((), events) = capture(|| {
        breaker.observed(AttemptEnd::new(start, true));
        assert_eq!(
            breaker.admit(AdmissionRequest::new(after, 1, Duration::ZERO)),
            Admission::Go
        );
        breaker.observed(AttemptEnd::new(after, false));
    });
    let seen: Vec<_> = events
        .iter()
        .map(|event| (event.level, event.fields["from"].as_str(), event.fields["to"].as_str()))
        .collect();
    assert_eq!(
        seen,
        [
            (Level::WARN, "closed", "open"),
            (Level::INFO, "open", "half_open"),
            (Level::INFO, "half_open", "closed"),
        ]
    );
    assert!(events.iter().all(|event| event.fields["breaker"] == "ledger"));
    assert_eq!(events[0].fields["message"], "circuit breaker opened");
}

/// Each injection of a fault injector is an INFO event with the injector's
/// name, the kind and, for latency, the wait.
#[cfg(feature = "chaos")]
#[test]
fn each_injection_is_an_event() {
    use backoff_runtime::chaos::{ChaosRandom, Injector, Rate};
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::Duration;

    /// Draws 0.1, 0.3, 0.9 in turn (as the top 53 bits of a `u64`).
    struct Steps(AtomicU64);
    impl ChaosRandom for Steps {
        fn next_u64(&self) -> u64 {
            let u = [0.1, 0.3, 0.9][self.0.fetch_add(1, Ordering::Relaxed) as usize % 3];
            ((u * (1_u64 << 53) as f64) as u64) << 11
        }
    }
    static STEPS: Steps = Steps(AtomicU64::new(0));
    static DRILL: Injector<u8, &str> = Injector::new()
        .name("drill")
        .fault(Rate::new(0.2), || "injected")
        .latency(Rate::new(0.2), Duration::from_millis(250))
        .random(&STEPS);
    let ((), events) = capture(|| {
        for _ in 0..3 {
            let _ = DRILL.inject();
        }
    });
    let seen: Vec<_> = events
        .iter()
        .map(|event| {
            (
                event.level,
                event.fields["kind"].as_str(),
                event.fields.get("wait").map(String::as_str),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [(Level::INFO, "fault", None), (Level::INFO, "latency", Some("250ms"))]
    );
    assert!(events.iter().all(|event| event.fields["injector"] == "drill"));
    assert!(events.iter().all(|event| event.fields["message"] == "fault injection"));
}
