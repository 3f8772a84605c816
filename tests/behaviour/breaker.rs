//! `CircuitBreaker` in `admission = ...`: it opens on failures counted by
//! `slow_down_if` (by default `retry_if`), refuses at once while open with a
//! `Refused` that says so and for how long, lets a probe through after the
//! break, and its refusals take no retry token and are retried by no loop.

use backoff_runtime::limits::{CircuitBreaker, CircuitState, Refused, RetryThrottle};
use backoff_runtime::{GiveUp, Policy, StopReason, retry};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

/// A failing backend's error, or the client's own refusal, kept whole.
#[derive(Clone, Debug, PartialEq)]
enum CallError {
    Down,
    NotFound,
    Refused(Refused),
}

impl From<Refused> for CallError {
    fn from(refused: Refused) -> Self {
        CallError::Refused(refused)
    }
}

fn retryable(error: &CallError) -> bool {
    *error == CallError::Down
}

/// The refusal in `result`, which must be one.
fn refusal<T: std::fmt::Debug>(result: Result<T, CallError>) -> Refused {
    match result {
        Err(CallError::Refused(refused)) => refused,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

mod attribute_sync {
    use super::*;

    static BREAKER: CircuitBreaker = CircuitBreaker::new().consecutive_failures(2).name("sync-backend");
    static SENT: AtomicU32 = AtomicU32::new(0);

    #[retry(max_retries = 5, initial_backoff = "1ms", jitter = none, retry_if = retryable, admission = BREAKER)]
    fn fetch() -> Result<u32, CallError> {
        SENT.fetch_add(1, Ordering::Relaxed);
        Err(CallError::Down)
    }

    #[test]
    fn the_retry_that_follows_the_tripping_failure_is_refused_at_once() {
        let refused = refusal(fetch());
        assert_eq!(SENT.load(Ordering::Relaxed), 2, "two attempts, then the circuit opened");
        assert!(refused.is_circuit_open());
        assert_eq!(refused.limiter(), Some("sync-backend"));
        let left = refused.retry_after().expect("an open circuit says how long");
        assert!(
            left <= Duration::from_secs(5) && left > Duration::from_secs(4),
            "{left:?}"
        );
        assert!(
            refused.to_string().contains("circuit breaker \"sync-backend\""),
            "{refused}"
        );
        // The next call is refused before its first attempt.
        assert!(refusal(fetch()).is_circuit_open());
        assert_eq!(SENT.load(Ordering::Relaxed), 2);
        assert_eq!(BREAKER.state(), CircuitState::Open);
    }
}

mod attribute_async {
    use super::*;

    static BREAKER: CircuitBreaker = CircuitBreaker::new()
        .consecutive_failures(1)
        .break_duration(Duration::from_secs(10))
        .name("async-backend");
    static SCRIPT: Mutex<Vec<Result<u32, CallError>>> = Mutex::new(Vec::new());
    static SENT: AtomicU32 = AtomicU32::new(0);

    #[retry(max_retries = 1, retry_if = retryable, admission = BREAKER)]
    async fn fetch() -> Result<u32, CallError> {
        SENT.fetch_add(1, Ordering::Relaxed);
        SCRIPT.lock().unwrap().pop().unwrap_or(Ok(7))
    }

    #[tokio::test(start_paused = true)]
    async fn after_the_break_one_probe_goes_and_its_success_closes_the_circuit() {
        *SCRIPT.lock().unwrap() = vec![Err(CallError::NotFound), Err(CallError::Down)];
        let opened = tokio::time::Instant::now();
        // The failure opens the circuit: its retry is refused.
        assert!(refusal(fetch().await).is_circuit_open());
        assert_eq!(BREAKER.state(), CircuitState::Open);
        tokio::time::advance(Duration::from_secs(4)).await;
        let refused = refusal(fetch().await);
        // Open for ten seconds from the failure, whatever the retry waited.
        let left = Duration::from_secs(10) - opened.elapsed();
        assert_eq!(refused.retry_after(), Some(left));
        tokio::time::advance(left).await;
        // The probe: an error `retry_if` does not retry is not a failure.
        assert_eq!(fetch().await, Err(CallError::NotFound));
        assert_eq!(BREAKER.state(), CircuitState::Closed);
        assert_eq!(fetch().await, Ok(7));
        assert_eq!(SENT.load(Ordering::Relaxed), 3);
    }
}

mod refusals_cost_nothing {
    use super::*;

    static BREAKER: CircuitBreaker = CircuitBreaker::new().consecutive_failures(1);
    static THROTTLE: RetryThrottle = RetryThrottle::new(10, 0.1);
    static SENT: AtomicU32 = AtomicU32::new(0);

    #[retry(max_retries = 3, initial_backoff = "1ms", retry_if = retryable, budget = THROTTLE, admission = BREAKER)]
    fn fetch() -> Result<u32, CallError> {
        SENT.fetch_add(1, Ordering::Relaxed);
        Err(CallError::Down)
    }

    #[test]
    fn refused_calls_take_no_throttle_token() {
        // The first call: one failure (a token), which opens the circuit;
        // its retry is refused.
        assert!(refusal(fetch()).is_circuit_open());
        let tokens = THROTTLE.tokens();
        assert_eq!(tokens, 9.0, "the one failure took a token");
        for _ in 0..20 {
            assert!(refusal(fetch()).is_circuit_open());
        }
        assert_eq!(THROTTLE.tokens(), tokens, "twenty refusals took nothing");
        assert_eq!(SENT.load(Ordering::Relaxed), 1);
    }
}

mod loops_above {
    use super::*;

    static BREAKER: CircuitBreaker = CircuitBreaker::new();
    static INNER: AtomicU32 = AtomicU32::new(0);
    static OUTER: AtomicU32 = AtomicU32::new(0);
    static REASONS: Mutex<Vec<StopReason>> = Mutex::new(Vec::new());

    fn heard(_: &CallError, event: &GiveUp) {
        REASONS.lock().unwrap().push(event.reason());
    }

    #[retry(max_retries = 2, initial_backoff = "1ms", retry_if = retryable, admission = BREAKER)]
    async fn inner() -> Result<u32, CallError> {
        INNER.fetch_add(1, Ordering::Relaxed);
        Err(CallError::Down)
    }

    /// Retries every error, the refusal included, if it may.
    #[retry(max_retries = 4, initial_backoff = "1ms", on_give_up = heard)]
    async fn outer() -> Result<u32, CallError> {
        OUTER.fetch_add(1, Ordering::Relaxed);
        inner().await
    }

    #[tokio::test(start_paused = true)]
    async fn a_refusal_is_not_retried_by_the_loop_above() {
        // Open it by hand: a hundred failures in a full window.
        for _ in 0..100 {
            backoff_runtime::limits::AdmissionLimit::observed(
                &BREAKER,
                backoff_runtime::limits::AttemptEnd::new(tokio::time::Instant::now().into_std(), true),
            );
        }
        assert_eq!(BREAKER.state(), CircuitState::Open);
        assert!(refusal(outer().await).is_circuit_open());
        assert_eq!((OUTER.load(Ordering::Relaxed), INNER.load(Ordering::Relaxed)), (1, 0));
        assert_eq!(*REASONS.lock().unwrap(), [StopReason::RetriedBelow]);
    }
}

mod builder {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn the_builder_asks_the_breaker_before_each_attempt() {
        let breaker = CircuitBreaker::new().consecutive_failures(2);
        let sent = AtomicU32::new(0);
        let policy = Policy::new().max_retries(5).initial_backoff(Duration::from_millis(1));
        let down = || async {
            sent.fetch_add(1, Ordering::Relaxed);
            Err::<u32, _>(CallError::Down)
        };
        let result = policy.retry(down).admission(&breaker).await;
        assert!(refusal(result).is_circuit_open());
        assert_eq!(sent.load(Ordering::Relaxed), 2);
    }
}

mod tower_layer {
    use super::*;
    use backoff_tower::RetryLayer;
    use std::sync::Arc;
    use tower::{Layer, ServiceExt};

    #[derive(Clone, Debug, PartialEq)]
    enum Failure {
        Down,
        Refused(Refused),
    }

    impl From<Refused> for Failure {
        fn from(refused: Refused) -> Self {
            Failure::Refused(refused)
        }
    }

    #[derive(Clone)]
    struct EveryError;

    impl backoff_tower::Classify<u32, u32, Failure> for EveryError {
        fn may_retry(&self, _: &u32) -> bool {
            true
        }
        fn replay(&self, request: &u32, _: &backoff_runtime::Attempt) -> u32 {
            *request
        }
        fn retry_error(&self, error: &Failure) -> bool {
            *error == Failure::Down
        }
    }

    #[tokio::test(start_paused = true)]
    async fn the_layer_stops_calling_the_service_while_the_circuit_is_open() {
        let breaker = Arc::new(CircuitBreaker::new().consecutive_failures(3).name("layer"));
        let calls = Arc::new(AtomicU32::new(0));
        let counted = Arc::clone(&calls);
        let service = tower::service_fn(move |_: u32| {
            counted.fetch_add(1, Ordering::Relaxed);
            std::future::ready(Err::<u32, _>(Failure::Down))
        });
        let layer = RetryLayer::new(Policy::new().max_retries(5).initial_backoff(Duration::from_millis(1)))
            .classify(EveryError)
            .admission(Arc::clone(&breaker));
        let service = layer.layer(service);
        let first = service.clone().oneshot(1).await;
        assert!(matches!(first, Err(Failure::Refused(refused)) if refused.is_circuit_open()));
        assert_eq!(calls.load(Ordering::Relaxed), 3);
        let second = service.oneshot(2).await;
        assert!(matches!(second, Err(Failure::Refused(refused)) if refused.limiter() == Some("layer")));
        assert_eq!(calls.load(Ordering::Relaxed), 3, "refused before the service");
    }
}

/// `Keyed` in the tower layer: one breaker per host, so a host that fails
/// shuts only its own calls.
mod per_host {
    use backoff_runtime::Policy;
    use backoff_runtime::limits::{CircuitBreaker, CircuitState, Keyed, Refused};
    use backoff_tower::RetryLayer;
    use http::Request;
    use std::sync::{Arc, Mutex};
    use std::time::Duration;
    use tower::{Layer, ServiceExt};

    fn get(url: &str) -> Request<String> {
        Request::get(url).body(String::new()).unwrap()
    }

    #[tokio::test(start_paused = true)]
    async fn a_failing_host_opens_its_own_breaker_and_no_other() {
        let hosts: Arc<Keyed<CircuitBreaker>> = Arc::new(Keyed::new(|_| CircuitBreaker::new().consecutive_failures(2)));
        let sent = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&sent);
        let service = tower::service_fn(move |request: Request<String>| {
            let host = request.uri().host().unwrap_or_default().to_string();
            log.lock().unwrap().push(host.clone());
            let status = if host == "down.example" { 503 } else { 200 };
            let response = http::Response::builder().status(status).body(String::new()).unwrap();
            std::future::ready(Ok::<_, tower::BoxError>(response))
        });
        let policy = Policy::new().max_retries(3).initial_backoff(Duration::from_millis(10));
        let service = RetryLayer::new(policy).admission(Arc::clone(&hosts)).layer(service);
        // Two 503s open the breaker of down.example: its third attempt is refused.
        let refused = service.clone().oneshot(get("http://down.example/a")).await.unwrap_err();
        let refused = refused.downcast::<Refused>().expect("the layer's error is the refusal");
        assert!(refused.is_circuit_open());
        assert_eq!(hosts.get("down.example").state(), CircuitState::Open);
        // up.example is still served, and its breaker is closed.
        let ok = service.clone().oneshot(get("http://up.example/b")).await.unwrap();
        assert_eq!(ok.status(), 200);
        assert_eq!(hosts.get("up.example").state(), CircuitState::Closed);
        // down.example is refused before the service.
        assert!(service.oneshot(get("http://down.example/c")).await.is_err());
        assert_eq!(
            *sent.lock().unwrap(),
            ["down.example", "down.example", "up.example"],
            "two attempts to the failing host, one to the other"
        );
    }
}
