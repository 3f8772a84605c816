//! `cargo run --example admission_burst`: goodput under a burst, in real
//! time over the loopback. Each run has a server of its own
//! on 127.0.0.1 that serves 300 requests a second (a token bucket holding
//! 300, full at the start) and answers 429 above it, on a thread of its
//! own. BENCHMARKS.md, "Goodput under a burst", has the figures;
//! `tests/behaviour/adaptive_burst.rs` is the same on tokio's paused clock.
//!
//! - `burst`: 1,000 tasks on 2 worker threads call one
//!   `#[retry(admission = LIMITER)]` function in a loop for 4 s. Prints the
//!   calls admitted (those reaching the server) and served per second over
//!   the last 2 of the 4 s.
//! - `spike`: palantir's spike (dialogue #635): 1,600 requests at once
//!   through `#[retry(max_retries = 5, admission = LIMITER)]`, then the
//!   same with plain backoff (`#[retry(max_retries = 5)]`). Prints the
//!   requests that succeeded and the attempts the server saw.
//!
//! With no argument, both.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use backoff_runtime::limits::{AdaptiveRateLimiter, Refused};
use backoff_runtime::retry;

/// The server's capacity, in requests per second.
const CAPACITY: f64 = 300.0;

/// The server's bucket and its counts, per 100 ms since its start.
struct Backend {
    bucket: Mutex<(f64, Instant)>,
    start: Instant,
    calls: Vec<AtomicU64>,
    served: Vec<AtomicU64>,
}

impl Backend {
    fn new() -> Self {
        let start = Instant::now();
        Backend {
            bucket: Mutex::new((CAPACITY, start)),
            start,
            calls: (0..1000).map(|_| AtomicU64::new(0)).collect(),
            served: (0..1000).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    /// One request: served, or not (429).
    fn serve(&self) -> bool {
        let now = Instant::now();
        let served = {
            let mut bucket = self.bucket.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            let (tokens, at) = &mut *bucket;
            *tokens = (*tokens + (now - *at).as_secs_f64() * CAPACITY).min(CAPACITY);
            *at = now;
            let served = *tokens >= 1.0;
            if served {
                *tokens -= 1.0;
            }
            served
        };
        let tenth = usize::try_from((now - self.start).as_millis() / 100).unwrap_or(usize::MAX);
        if let Some(calls) = self.calls.get(tenth) {
            calls.fetch_add(1, Ordering::Relaxed);
            if served {
                self.served[tenth].fetch_add(1, Ordering::Relaxed);
            }
        }
        served
    }

    /// Requests and requests served per second, from `from` to `until` s.
    fn per_second(&self, from: usize, until: usize) -> (f64, f64) {
        let sum = |series: &[AtomicU64]| {
            series[from * 10..until * 10]
                .iter()
                .map(|count| count.load(Ordering::Relaxed) as f64)
                .sum::<f64>()
                / (until - from) as f64
        };
        (sum(&self.calls), sum(&self.served))
    }

    fn total(&self) -> u64 {
        self.calls.iter().map(|count| count.load(Ordering::Relaxed)).sum()
    }
}

async fn handle(State(backend): State<Arc<Backend>>) -> StatusCode {
    if backend.serve() {
        StatusCode::OK
    } else {
        StatusCode::TOO_MANY_REQUESTS
    }
}

/// A server on the loopback, on a thread of its own; its address.
fn serve(backend: Arc<Backend>) -> SocketAddr {
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a tokio runtime");
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("a loopback port");
            sender
                .send(listener.local_addr().expect("an address"))
                .expect("main waits");
            let app = Router::new().route("/", get(handle)).with_state(backend);
            axum::serve(listener, app).await.expect("the server runs");
        });
    });
    receiver.recv().expect("the server starts")
}

#[derive(Debug, PartialEq)]
enum CallError {
    SlowDown,
    Other,
    Shed,
}

impl From<Refused> for CallError {
    fn from(_: Refused) -> Self {
        CallError::Shed
    }
}

fn is_slow_down(error: &CallError) -> bool {
    *error == CallError::SlowDown
}

async fn get_once(client: &reqwest::Client, url: &str) -> Result<(), CallError> {
    match client.get(url).send().await {
        Ok(response) if response.status() == StatusCode::TOO_MANY_REQUESTS => Err(CallError::SlowDown),
        Ok(response) if response.status().is_success() => Ok(()),
        _ => Err(CallError::Other),
    }
}

static BURST: AdaptiveRateLimiter = AdaptiveRateLimiter::new();

#[retry(admission = BURST, slow_down_if = is_slow_down, initial_backoff = "100ms")]
async fn burst_call(client: &reqwest::Client, url: &str) -> Result<(), CallError> {
    get_once(client, url).await
}

static SPIKE: AdaptiveRateLimiter = AdaptiveRateLimiter::new();

#[retry(max_retries = 5, admission = SPIKE, slow_down_if = is_slow_down)]
async fn spike_call(client: &reqwest::Client, url: &str) -> Result<(), CallError> {
    get_once(client, url).await
}

#[retry(max_retries = 5)]
async fn plain_call(client: &reqwest::Client, url: &str) -> Result<(), CallError> {
    get_once(client, url).await
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

fn burst() {
    const TASKS: usize = 1000;
    const RUN: Duration = Duration::from_secs(4);
    let backend = Arc::new(Backend::new());
    let url = format!("http://{}/", serve(Arc::clone(&backend)));
    let client = reqwest::Client::new();
    let runtime = runtime();
    let started = Instant::now();
    runtime.block_on(async {
        let tasks: Vec<_> = (0..TASKS)
            .map(|_| {
                let (client, url) = (client.clone(), url.clone());
                tokio::spawn(async move {
                    while started.elapsed() < RUN {
                        if burst_call(&client, &url).await == Err(CallError::Shed) {
                            tokio::time::sleep(Duration::from_millis(100)).await;
                        }
                    }
                })
            })
            .collect();
        tokio::time::sleep(RUN).await;
        for task in &tasks {
            task.abort();
        }
    });
    runtime.shutdown_timeout(Duration::from_secs(1));
    let (admitted, served) = backend.per_second(2, 4);
    println!("burst: {TASKS} tasks, 2 workers, {RUN:?}, a loopback server of {CAPACITY}/s");
    println!(
        "  last 2 s: {admitted:.1} calls/s admitted ({:.1}% of capacity), {served:.1} served; load {:.2}x capacity; fill rate {:.1}/s",
        100.0 * admitted / CAPACITY,
        admitted / CAPACITY,
        BURST.fill_rate()
    );
    for second in 0..4 {
        let (calls, served) = backend.per_second(second, second + 1);
        println!("  second {second}: {calls:.0} calls, {served:.0} served");
    }
}

fn spike() {
    const REQUESTS: usize = 1600;
    for (name, limited) in [("limiter", true), ("plain backoff", false)] {
        let backend = Arc::new(Backend::new());
        let url = format!("http://{}/", serve(Arc::clone(&backend)));
        let client = reqwest::Client::new();
        let runtime = runtime();
        let started = Instant::now();
        let succeeded = runtime.block_on(async {
            let tasks: Vec<_> = (0..REQUESTS)
                .map(|_| {
                    let (client, url) = (client.clone(), url.clone());
                    tokio::spawn(async move {
                        if limited {
                            spike_call(&client, &url).await
                        } else {
                            plain_call(&client, &url).await
                        }
                    })
                })
                .collect();
            let mut succeeded = 0;
            for task in tasks {
                if matches!(task.await, Ok(Ok(()))) {
                    succeeded += 1;
                }
            }
            succeeded
        });
        runtime.shutdown_timeout(Duration::from_secs(1));
        let attempts = backend.total();
        println!(
            "spike, {name}: {succeeded} of {REQUESTS} succeeded, {attempts} attempts ({:.2} per request), {:.1} s",
            attempts as f64 / REQUESTS as f64,
            started.elapsed().as_secs_f64()
        );
    }
}

fn main() {
    let which = std::env::args().nth(1);
    if which.as_deref() != Some("spike") {
        burst();
    }
    if which.as_deref() != Some("burst") {
        spike();
    }
}
