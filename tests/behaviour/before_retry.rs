//! `before_retry`: an action run after `on_retry` and before the wait,
//! awaited by async functions (refresh a token, reconnect), a plain closure
//! in sync ones.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::{get, post};
use backoff_runtime::{GiveUp, RetryEvent, StopReason, retry};

/// The server: `/token` hands out a fresh token (and counts how often);
/// `/data` answers 401 unless the request carries the fresh token.
#[derive(Clone, Default)]
struct Auth {
    token_calls: Arc<AtomicU32>,
    data_calls: Arc<AtomicU32>,
}

async fn token(State(auth): State<Auth>) -> String {
    auth.token_calls.fetch_add(1, Ordering::SeqCst);
    "fresh".to_string()
}

async fn data(State(auth): State<Auth>, headers: HeaderMap) -> (StatusCode, String) {
    auth.data_calls.fetch_add(1, Ordering::SeqCst);
    match headers.get("authorization").and_then(|v| v.to_str().ok()) {
        Some("Bearer fresh") => (StatusCode::OK, "the data".to_string()),
        _ => (StatusCode::UNAUTHORIZED, "token expired".to_string()),
    }
}

#[derive(Debug)]
enum ApiError {
    Unauthorized,
    Status(StatusCode),
    Network(reqwest::Error),
}

impl ApiError {
    fn is_retryable(&self) -> bool {
        match self {
            ApiError::Unauthorized => true,
            ApiError::Status(status) => status.is_server_error(),
            ApiError::Network(error) => !error.is_builder(),
        }
    }
}

impl From<reqwest::Error> for ApiError {
    fn from(error: reqwest::Error) -> Self {
        ApiError::Network(error)
    }
}

/// A client holding a token that expires.
struct Client {
    http: reqwest::Client,
    base: String,
    token: String,
}

impl Client {
    async fn refresh_token(&mut self) -> Result<(), reqwest::Error> {
        let url = format!("{}/token", self.base);
        self.token = self.http.post(url).send().await?.text().await?;
        Ok(())
    }

    /// The action borrows `self` mutably between attempts: the body's borrow
    /// has ended, the next attempt's has not begun.
    #[retry(
        max_retries = 3,
        initial_backoff = "1ms",
        retry_if = ApiError::is_retryable,
        before_retry = async |error: &ApiError, _event: &RetryEvent| {
            if matches!(error, ApiError::Unauthorized) {
                let _ = self.refresh_token().await;
            }
        },
    )]
    async fn fetch(&mut self) -> Result<String, ApiError> {
        let url = format!("{}/data", self.base);
        let response = self.http.get(url).bearer_auth(&self.token).send().await?;
        match response.status() {
            StatusCode::OK => Ok(response.text().await?),
            StatusCode::UNAUTHORIZED => Err(ApiError::Unauthorized),
            status => Err(ApiError::Status(status)),
        }
    }
}

/// A 401 with an expired token once: the action refreshes the token, the
/// retry succeeds, and the token endpoint is called once.
#[tokio::test]
async fn the_action_refreshes_an_expired_token_before_the_retry() {
    let auth = Auth::default();
    let app = Router::new()
        .route("/token", post(token))
        .route("/data", get(data))
        .with_state(auth.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    let mut client = Client {
        http: reqwest::Client::new(),
        base,
        token: "expired".to_string(),
    };
    assert_eq!(client.fetch().await.unwrap(), "the data");
    assert_eq!(auth.token_calls.load(Ordering::SeqCst), 1);
    assert_eq!(auth.data_calls.load(Ordering::SeqCst), 2);
    assert_eq!(client.fetch().await.unwrap(), "the data");
    assert_eq!(auth.token_calls.load(Ordering::SeqCst), 1);
}

#[retry(
    max_retries = 5,
    jitter = none,
    max_elapsed = "8s",
    on_retry = |_: &&str, event: &RetryEvent| log.lock().unwrap().push(format!("on_retry {}", event.attempt())),
    before_retry = async |_: &&str, event: &RetryEvent| {
        log.lock().unwrap().push(format!("action {} at {}s", event.attempt(), start.elapsed().as_secs()));
        tokio::time::sleep(Duration::from_secs(3)).await;
    },
    on_give_up = |_: &&str, event: &GiveUp| log.lock().unwrap().push(format!("give up: {}", event.reason())),
)]
async fn slow_action(log: &Mutex<Vec<String>>, start: tokio::time::Instant) -> Result<(), &'static str> {
    log.lock()
        .unwrap()
        .push(format!("attempt at {}s", start.elapsed().as_secs()));
    Err("down")
}

/// The action runs after `on_retry` and before the wait, and its time
/// counts toward `max_elapsed`: the first attempt at 0 s, then 3 s of action
/// and a 1 s wait; the second at 4 s (4 + 2 <= 8: retried), then 3 s of
/// action, after which the 2 s wait would end at 9 s, past 8 s: the call
/// gives up there (the deadline is checked again after the action), and no
/// attempt starts after the deadline. Without the action's time the third
/// would start at 3 s and a fourth at 7 s.
#[tokio::test(start_paused = true)]
async fn the_action_runs_after_on_retry_before_the_wait_and_counts_toward_max_elapsed() {
    let log = Mutex::new(Vec::new());
    let start = tokio::time::Instant::now();
    assert_eq!(slow_action(&log, start).await, Err("down"));
    assert_eq!(
        log.into_inner().unwrap(),
        [
            "attempt at 0s",
            "on_retry 1",
            "action 1 at 0s",
            "attempt at 4s",
            "on_retry 2",
            "action 2 at 4s",
            "give up: next wait would pass max_elapsed",
        ]
    );
}

/// A guard that counts its drops.
struct DropCounter<'a>(&'a AtomicU32);

impl Drop for DropCounter<'_> {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[retry(
    max_retries = 3,
    before_retry = async |_: &&str, _: &RetryEvent| {
        let _guard = DropCounter(dropped);
        std::future::pending::<()>().await;
    },
)]
async fn stuck_action(dropped: &AtomicU32, attempts: &AtomicU32) -> Result<(), &'static str> {
    attempts.fetch_add(1, Ordering::SeqCst);
    Err("down")
}

/// Dropping the call's future drops the action it is awaiting.
#[tokio::test(start_paused = true)]
async fn dropping_the_call_drops_the_action() {
    let dropped = AtomicU32::new(0);
    let attempts = AtomicU32::new(0);
    let outcome = tokio::time::timeout(Duration::from_secs(60), stuck_action(&dropped, &attempts)).await;
    assert!(outcome.is_err(), "the action never finishes");
    assert_eq!(attempts.load(Ordering::SeqCst), 1);
    assert_eq!(dropped.load(Ordering::SeqCst), 1);
}

#[retry(max_retries = 3, initial_backoff = "1ms", before_retry = async |_: &&str, _: &RetryEvent| panic!("reconnect failed"))]
async fn panicking_action() -> Result<(), &'static str> {
    Err("down")
}

/// A panic in the action propagates out of the call.
#[tokio::test]
async fn a_panic_in_the_action_propagates() {
    let joined = tokio::spawn(panicking_action()).await;
    let panic = joined.unwrap_err().into_panic();
    assert_eq!(panic.downcast_ref::<&str>(), Some(&"reconnect failed"));
}

/// A sync function's action is a plain closure, run after `on_retry` and
/// before each wait.
#[test]
fn a_sync_action_runs_after_on_retry_before_each_wait() {
    #[retry(
        max_retries = 2,
        jitter = none,
        on_retry = |_, event| log.lock().unwrap().push(format!("on_retry {}", event.attempt())),
        before_retry = |_, event| log.lock().unwrap().push(format!("reconnect {} ({:?})", event.attempt(), event.wait())),
    )]
    fn reconnecting(log: &Mutex<Vec<String>>) -> Result<(), StopReason> {
        log.lock().unwrap().push("attempt".to_string());
        Err(StopReason::Exhausted)
    }
    let clock = backoff_runtime::testing::VirtualClock::install();
    let log = Mutex::new(Vec::new());
    assert!(reconnecting(&log).is_err());
    assert_eq!(
        log.into_inner().unwrap(),
        [
            "attempt",
            "on_retry 1",
            "reconnect 1 (1s)",
            "attempt",
            "on_retry 2",
            "reconnect 2 (2s)",
            "attempt"
        ]
    );
    assert_eq!(clock.waits(), [Duration::from_secs(1), Duration::from_secs(2)]);
}

/// With `retry_if_ok`, the action sees the whole result, pending values
/// included.
#[tokio::test(start_paused = true)]
async fn a_polling_action_sees_the_pending_value() {
    #[retry(
        max_retries = 3,
        jitter = none,
        retry_if_ok = |n: &u32| *n < 3,
        before_retry = async |result: &Result<u32, ()>, _: &RetryEvent| seen.lock().unwrap().push(*result),
    )]
    async fn count(counter: &AtomicU32, seen: &Mutex<Vec<Result<u32, ()>>>) -> Result<u32, ()> {
        Ok(counter.fetch_add(1, Ordering::SeqCst) + 1)
    }
    let counter = AtomicU32::new(0);
    let seen = Mutex::new(Vec::new());
    assert_eq!(count(&counter, &seen).await, Ok(3));
    assert_eq!(seen.into_inner().unwrap(), [Ok(1), Ok(2)]);
}

// ---- sync: the action may use `&mut self`, and its time counts too ----------

/// A connection that breaks and is reconnected through `&mut self` by the
/// sync function's own `before_retry`.
struct Connection {
    healthy: bool,
    reconnects: u32,
    attempts: u32,
}

impl Connection {
    fn reconnect(&mut self) {
        self.reconnects += 1;
        self.healthy = true;
    }

    #[retry(
        max_retries = 3,
        initial_backoff = "1ms",
        jitter = none,
        before_retry = |_e: &String, _ev: &RetryEvent| self.reconnect(),
    )]
    fn query(&mut self) -> Result<u32, String> {
        self.attempts += 1;
        if self.healthy {
            Ok(self.attempts)
        } else {
            Err("connection reset".to_string())
        }
    }
}

#[test]
fn a_sync_mut_self_method_reconnects_through_self_in_its_action() {
    let _clock = backoff_runtime::testing::VirtualClock::install();
    let mut connection = Connection {
        healthy: false,
        reconnects: 0,
        attempts: 0,
    };
    assert_eq!(connection.query(), Ok(2));
    assert_eq!(connection.reconnects, 1);
    // Healthy now: the first attempt succeeds, no action runs.
    assert_eq!(connection.query(), Ok(3));
    assert_eq!(connection.reconnects, 1);
}

#[retry(
    max_retries = 5,
    jitter = none,
    max_elapsed = "8s",
    before_retry = |_: &&str, event: &RetryEvent| {
        log.lock().unwrap().push(format!("action {} at {}s", event.attempt(), clock.elapsed().as_secs()));
        clock.advance(Duration::from_secs(3));
    },
    on_give_up = |_: &&str, event: &GiveUp| log.lock().unwrap().push(format!("give up: {}", event.reason())),
)]
fn slow_sync_action(
    log: &Mutex<Vec<String>>,
    clock: &backoff_runtime::testing::VirtualClock,
) -> Result<(), &'static str> {
    log.lock()
        .unwrap()
        .push(format!("attempt at {}s", clock.elapsed().as_secs()));
    Err("down")
}

/// The sync twin of the async test above, on the virtual clock: the action
/// takes 3 s; after the second one the 2 s wait would end past 8 s, so the
/// call gives up without starting a third attempt.
#[test]
fn a_sync_action_s_time_counts_toward_max_elapsed() {
    let clock = backoff_runtime::testing::VirtualClock::install();
    let log = Mutex::new(Vec::new());
    assert_eq!(slow_sync_action(&log, &clock), Err("down"));
    assert_eq!(
        log.into_inner().unwrap(),
        [
            "attempt at 0s",
            "action 1 at 0s",
            "attempt at 4s",
            "action 2 at 4s",
            "give up: next wait would pass max_elapsed",
        ]
    );
}
