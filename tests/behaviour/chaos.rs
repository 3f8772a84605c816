//! Fault injection (`chaos`): a seeded injector replays the same calls; its
//! rate holds over many calls; its latency runs on the loop's clock; and
//! the budget, the breaker, the timeout and hedging see what it injects,
//! through the builder and the attribute, sync and async.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

use backoff_runtime::chaos::{ChaosRandom, Injection, Injector, Rate};
use backoff_runtime::limits::{CircuitBreaker, CircuitState, Refused, RetryBudget};
use backoff_runtime::testing::VirtualClock;
use backoff_runtime::{Elapsed, Policy, retry};

#[derive(Clone, Debug, PartialEq)]
enum CallError {
    Injected,
    Down,
    Refused,
    TimedOut,
}

impl From<Refused> for CallError {
    fn from(_: Refused) -> Self {
        CallError::Refused
    }
}

impl From<Elapsed> for CallError {
    fn from(_: Elapsed) -> Self {
        CallError::TimedOut
    }
}

fn injected() -> CallError {
    CallError::Injected
}

/// One call that never retries, through the builder: whether it was
/// injected a fault.
fn faulted(injector: &Injector<u32, CallError>) -> bool {
    let result = Policy::new()
        .max_retries(1)
        .retry(|| Ok(1))
        .retry_if(|_| false)
        .chaos(injector)
        .call();
    result == Err(CallError::Injected)
}

#[test]
fn the_same_seed_injects_into_the_same_calls() {
    let run = |seed| {
        let injector = Injector::new().fault(Rate::new(0.3), injected).seed(seed);
        (0..500).map(|_| faulted(&injector)).collect::<Vec<_>>()
    };
    let first = run(2026);
    assert!(first.contains(&true) && first.contains(&false));
    assert_eq!(run(2026), first, "replayed by its seed");
    assert_ne!(run(2027), first, "another seed, other calls");
}

#[test]
fn a_rate_of_three_tenths_holds_over_ten_thousand_calls() {
    // Binomial(10,000, 0.3): mean 3,000, standard deviation 45.8. Four
    // deviations each side: a fair draw falls outside once in 16,000 runs.
    for seed in 0..5 {
        let injector = Injector::new().fault(Rate::new(0.3), injected).seed(seed);
        let faults = (0..10_000).filter(|_| faulted(&injector)).count();
        assert!((2_817..=3_183).contains(&faults), "seed {seed}: {faults} faults");
    }
}

#[test]
fn a_closed_gate_injects_nothing() {
    let injector = Injector::new().fault(Rate::new(1.0), injected).enabled(false);
    assert_eq!((0..100).filter(|_| faulted(&injector)).count(), 0);
}

#[test]
fn an_injected_fault_is_retried_like_any_other() {
    let _clock = VirtualClock::install();
    let injector = Injector::new().fault(Rate::new(0.5), injected).seed(11);
    let mut sent = 0;
    let result = Policy::new()
        .max_retries(30)
        .retry(|| {
            sent += 1;
            Ok::<u32, CallError>(sent)
        })
        .chaos(&injector)
        .call();
    assert_eq!(result, Ok(1), "the first attempt not injected is the first sent");
}

#[test]
fn a_budget_limits_the_retries_of_injected_faults() {
    let _clock = VirtualClock::install();
    let injector = Injector::new().fault(Rate::new(1.0), injected);
    let run = |budget: Option<&RetryBudget>| {
        let attempts = AtomicU32::new(0);
        let policy = Policy::new().max_retries(3);
        for _ in 0..100 {
            let retry = policy
                .retry(|| Ok::<u32, CallError>(1))
                .on_retry(|_, _| {
                    attempts.fetch_add(1, Ordering::Relaxed);
                })
                .chaos(&injector);
            let result = match budget {
                Some(budget) => retry.budget(budget).call(),
                None => retry.call(),
            };
            assert_eq!(result, Err(CallError::Injected));
        }
        attempts.into_inner()
    };
    assert_eq!(run(None), 300, "without a budget, every call retries three times");
    let budget = RetryBudget::new().ratio(0.2).min_per_second(0);
    let retried = run(Some(&budget));
    assert!(
        (1..=20).contains(&retried),
        "{retried} retries: at most a fifth of 100 calls"
    );
}

#[test]
fn a_breaker_opens_at_the_injected_failure_ratio() {
    // Each call is one or two attempts: the window of 100 outcomes fills
    // within 100 calls.
    let _clock = VirtualClock::install();
    let calls_until_open = |rate: f64| {
        let injector = Injector::new().fault(Rate::new(rate), injected).seed(5);
        let breaker = CircuitBreaker::new()
            .failure_ratio(0.5)
            .window(100)
            .minimum_throughput(100);
        for call in 1..=2_000 {
            let _ = Policy::new()
                .max_retries(1)
                .retry(|| Ok::<u32, CallError>(1))
                .chaos(&injector)
                .admission(&breaker)
                .call();
            if breaker.state() == CircuitState::Open {
                let (failures, outcomes) = breaker.failures();
                assert!(failures * 2 >= outcomes, "{failures} of {outcomes}");
                return Some(call);
            }
        }
        None
    };
    assert_eq!(calls_until_open(0.3), None, "three in ten stay under one in two");
    let opened = calls_until_open(0.7).expect("seven in ten open it");
    assert!(opened <= 100, "opened at call {opened}: once the window filled");
}

#[test]
fn injected_outcomes_never_run_the_operation() {
    let injector: Injector<u32, CallError> = Injector::new().outcome(Rate::new(1.0), || 42);
    let mut sent = 0;
    let result = Policy::new()
        .retry(|| {
            sent += 1;
            Ok(1)
        })
        .chaos(&injector)
        .call();
    assert_eq!((result, sent), (Ok(42), 0));
}

#[test]
fn sync_latency_waits_on_the_virtual_clock_before_the_attempt() {
    let clock = VirtualClock::install();
    let injector: Injector<u32, CallError> = Injector::new().latency(Rate::new(1.0), Duration::from_secs(3));
    let result = Policy::new().retry(|| Ok(1)).chaos(&injector).call();
    assert_eq!(result, Ok(1));
    assert_eq!(clock.elapsed(), Duration::from_secs(3));
}

#[tokio::test(start_paused = true)]
async fn async_latency_waits_on_the_paused_clock() {
    let injector: Injector<u32, CallError> = Injector::new().latency(Rate::new(1.0), Duration::from_secs(90));
    let started = tokio::time::Instant::now();
    let result = Policy::new().retry(|| async { Ok(1) }).chaos(&injector).await;
    assert_eq!(result, Ok(1));
    assert_eq!(started.elapsed(), Duration::from_secs(90));
}

#[tokio::test(start_paused = true)]
async fn injected_latency_counts_toward_the_timeout() {
    let injector: Injector<u32, CallError> = Injector::new().latency(Rate::new(1.0), Duration::from_secs(10));
    let started = tokio::time::Instant::now();
    let result = Policy::new()
        .max_retries(1)
        .initial_backoff(Duration::from_secs(1))
        .jitter(backoff_runtime::Jitter::None)
        .retry(|| async { Ok(1) })
        .chaos(&injector)
        .timeout(Duration::from_secs(2))
        .await;
    assert_eq!(result, Err(CallError::TimedOut));
    assert_eq!(
        started.elapsed(),
        Duration::from_secs(5),
        "two timed-out attempts and one wait"
    );
}

/// Draws 0 first (below any rate), then the top of the range (above every
/// rate), then 0 again, and so on.
struct Alternating(AtomicU64);

impl ChaosRandom for Alternating {
    fn next_u64(&self) -> u64 {
        if self.0.fetch_add(1, Ordering::Relaxed).is_multiple_of(2) {
            0
        } else {
            u64::MAX
        }
    }
}

#[tokio::test(start_paused = true)]
async fn a_hedge_overtakes_an_attempt_slowed_by_injected_latency() {
    static DRAWS: Alternating = Alternating(AtomicU64::new(0));
    static FIRST_SLOW: Injector<u32, CallError> = Injector::new()
        .latency(Rate::new(0.5), Duration::from_secs(10))
        .random(&DRAWS);
    let started = tokio::time::Instant::now();
    let sent = AtomicU32::new(0);
    let result = Policy::new()
        .max_retries(2)
        .retry(|| async { Ok(sent.fetch_add(1, Ordering::Relaxed) + 1) })
        .chaos(&FIRST_SLOW)
        .hedge_after(Duration::from_millis(50))
        .await;
    assert_eq!(result, Ok(1), "the hedge, not slowed, answered first");
    assert_eq!(started.elapsed(), Duration::from_millis(50));
}

mod attribute {
    use super::*;

    static SEEDED: Injector<u32, CallError> = Injector::new().fault(Rate::new(0.5), injected).seed(77);
    static SENT: AtomicU32 = AtomicU32::new(0);

    #[retry(max_retries = 1, retry_if = |_| false, chaos = SEEDED)]
    fn fetch() -> Result<u32, CallError> {
        Ok(SENT.fetch_add(1, Ordering::Relaxed))
    }

    #[test]
    fn sync_functions_run_each_attempt_under_the_injector() {
        let replay: Injector<u32, CallError> = Injector::new().fault(Rate::new(0.5), injected).seed(77);
        let expected: Vec<bool> = (0..200).map(|_| replay.inject().is_fault()).collect();
        let seen: Vec<bool> = (0..200).map(|_| fetch() == Err(CallError::Injected)).collect();
        assert_eq!(
            seen, expected,
            "the attribute draws once per attempt, as the injector alone does"
        );
        let sent = SENT.load(Ordering::Relaxed) as usize;
        assert_eq!(
            sent,
            expected.iter().filter(|fault| !**fault).count(),
            "an injected fault sends nothing"
        );
    }

    static SLOW: Injector<u32, CallError> = Injector::new().latency(Rate::new(1.0), Duration::from_secs(4));

    #[retry(chaos = SLOW)]
    async fn slow() -> Result<u32, CallError> {
        Ok(1)
    }

    #[retry(chaos = SLOW)]
    fn slow_sync() -> Result<u32, CallError> {
        Ok(1)
    }

    #[tokio::test(start_paused = true)]
    async fn async_latency_waits_on_the_paused_clock() {
        let started = tokio::time::Instant::now();
        assert_eq!(slow().await, Ok(1));
        assert_eq!(started.elapsed(), Duration::from_secs(4));
    }

    #[test]
    fn sync_latency_waits_on_the_virtual_clock() {
        let clock = VirtualClock::install();
        assert_eq!(slow_sync(), Ok(1));
        assert_eq!(clock.waits(), [Duration::from_secs(4)]);
    }

    static DOWN: Injector<u32, CallError> = Injector::new().fault(Rate::new(1.0), || CallError::Down);
    static BUDGET: RetryBudget = RetryBudget::new().ratio(0.1).min_per_second(0);
    static RETRIED: AtomicU32 = AtomicU32::new(0);

    #[retry(max_retries = 3, initial_backoff = "1ms", budget = BUDGET, chaos = DOWN,
            on_retry = |_, _| { RETRIED.fetch_add(1, Ordering::Relaxed); })]
    async fn budgeted(key: &str) -> Result<u32, CallError> {
        Ok(key.len() as u32)
    }

    #[tokio::test(start_paused = true)]
    async fn the_budget_limits_the_retries_of_injected_faults() {
        for _ in 0..50 {
            assert_eq!(budgeted("k").await, Err(CallError::Down));
        }
        assert_eq!(RETRIED.load(Ordering::Relaxed), 5, "a tenth of 50 calls");
    }

    static ALWAYS: Injector<u32, CallError> = Injector::new().fault(Rate::new(1.0), injected);
    static HEDGES_SENT: AtomicU32 = AtomicU32::new(0);

    #[retry(max_retries = 2, initial_backoff = "1ms", hedge_after = "10ms", chaos = ALWAYS)]
    async fn hedged(value: &u32) -> Result<u32, CallError> {
        HEDGES_SENT.fetch_add(1, Ordering::Relaxed);
        Ok(*value)
    }

    #[tokio::test(start_paused = true)]
    async fn hedged_attempts_run_under_the_injector() {
        assert_eq!(hedged(&8).await, Err(CallError::Injected));
        assert_eq!(HEDGES_SENT.load(Ordering::Relaxed), 0, "every attempt was injected");
    }
}

#[cfg(feature = "metrics")]
#[test]
fn each_injection_counts_by_injector_and_kind() {
    use metrics_util::debugging::{DebugValue, DebuggingRecorder};

    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    let injector: Injector<u32, CallError> = Injector::new()
        .name("drill")
        .fault(Rate::new(0.25), injected)
        .latency(Rate::new(0.25), Duration::from_millis(1))
        .seed(8);
    let replay: Injector<u32, CallError> = Injector::new()
        .fault(Rate::new(0.25), injected)
        .latency(Rate::new(0.25), Duration::from_millis(1))
        .seed(8);
    let _clock = VirtualClock::install();
    metrics::with_local_recorder(&recorder, || {
        for _ in 0..100 {
            let _ = Policy::new()
                .max_retries(1)
                .retry(|| Ok(1))
                .retry_if(|_| false)
                .chaos(&injector)
                .call();
        }
    });
    let (mut faults, mut latencies) = (0_u64, 0_u64);
    for _ in 0..100 {
        match replay.inject() {
            Injection::Fault(_) => faults += 1,
            Injection::Latency(_) => latencies += 1,
            _ => {}
        }
    }
    let snapshot = snapshotter.snapshot().into_vec();
    let counted = |kind: &str| {
        snapshot
            .iter()
            .find(|(key, ..)| {
                key.key().name() == "backoff_injections_total"
                    && key
                        .key()
                        .labels()
                        .any(|l| l.key() == "injector" && l.value() == "drill")
                    && key.key().labels().any(|l| l.key() == "kind" && l.value() == kind)
            })
            .map(|(.., value)| value)
    };
    assert_eq!(counted("fault"), Some(&DebugValue::Counter(faults)));
    assert_eq!(counted("latency"), Some(&DebugValue::Counter(latencies)));
    assert!(faults > 0 && latencies > 0);
}

mod tower_layer {
    use super::*;
    use backoff_tower::{ChaosLayer, RetryLayer};
    use http::{Request, Response, StatusCode};
    use std::sync::Arc;
    use tower::{ServiceBuilder, ServiceExt};

    type BoxError = Box<dyn std::error::Error + Send + Sync>;

    fn unavailable() -> Response<String> {
        let mut response = Response::new(String::new());
        *response.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
        response
    }

    static OUTAGE: Injector<Response<String>, BoxError> = Injector::new().outcome(Rate::new(1.0), unavailable);
    static SLOW: Injector<Response<String>, BoxError> = Injector::new().latency(Rate::new(1.0), Duration::from_secs(7));

    /// A layered service over a backend that answers 200 and counts its calls.
    async fn send(
        injector: &'static Injector<Response<String>, BoxError>,
        budget: Option<Arc<RetryBudget>>,
        backend_calls: &'static AtomicU32,
        retries: Arc<AtomicU32>,
    ) -> Response<String> {
        let policy = Policy::new().max_retries(3).initial_backoff(Duration::from_millis(10));
        let mut layer = RetryLayer::new(policy).on_retry(move |_| {
            retries.fetch_add(1, Ordering::Relaxed);
        });
        if let Some(budget) = budget {
            layer = layer.budget(budget);
        }
        let service = ServiceBuilder::new()
            .layer(layer)
            .layer(ChaosLayer::new(injector))
            .service_fn(move |_: Request<String>| async move {
                backend_calls.fetch_add(1, Ordering::Relaxed);
                Ok::<_, BoxError>(Response::new("real".to_owned()))
            });
        service.oneshot(Request::new(String::new())).await.unwrap()
    }

    #[tokio::test(start_paused = true)]
    async fn the_layer_retries_injected_answers_within_the_budget() {
        static CALLS: AtomicU32 = AtomicU32::new(0);
        let retries = Arc::new(AtomicU32::new(0));
        let response = send(&OUTAGE, None, &CALLS, Arc::clone(&retries)).await;
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(retries.load(Ordering::Relaxed), 3, "each injected 503 is retried");
        assert_eq!(CALLS.load(Ordering::Relaxed), 0, "the backend was never called");

        let budget = Arc::new(RetryBudget::new().ratio(0.1).min_per_second(0));
        let retries = Arc::new(AtomicU32::new(0));
        for _ in 0..40 {
            let _ = send(&OUTAGE, Some(Arc::clone(&budget)), &CALLS, Arc::clone(&retries)).await;
        }
        let retried = retries.load(Ordering::Relaxed);
        assert!(
            (1..=4).contains(&retried),
            "{retried} retries: at most a tenth of 40 calls"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn the_layer_waits_on_the_paused_clock_then_calls() {
        static CALLS: AtomicU32 = AtomicU32::new(0);
        let started = tokio::time::Instant::now();
        let response = send(&SLOW, None, &CALLS, Arc::new(AtomicU32::new(0))).await;
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(started.elapsed(), Duration::from_secs(7));
        assert_eq!(CALLS.load(Ordering::Relaxed), 1);
    }
}
