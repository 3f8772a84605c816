//! `cargo run --example quickstart`: a real HTTP server on 127.0.0.1 answers
//! 503 twice (the second time with `Retry-After: 1`) and then 200. An
//! annotated async function fetches from it through reqwest: it retries only
//! what the seed documents call retryable (feature `http`), honours the
//! server's `Retry-After`, and reports every retry through `on_retry`.

use std::time::{Duration, Instant};

use backoff_runtime::http::{is_retryable_status, retry_after};
use backoff_runtime::{GiveUp, RetryEvent, retry};

#[path = "support/flaky_server.rs"]
mod flaky_server;

#[derive(Debug)]
enum FetchError {
    /// The server answered with an error status, maybe with a `Retry-After`.
    Status(reqwest::StatusCode, Option<Duration>),
    /// The request did not complete.
    Network(reqwest::Error),
}

impl From<reqwest::Error> for FetchError {
    fn from(error: reqwest::Error) -> Self {
        FetchError::Network(error)
    }
}

impl std::fmt::Display for FetchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FetchError::Status(status, _) => write!(f, "server answered {status}"),
            FetchError::Network(error) => write!(f, "network error: {error}"),
        }
    }
}

impl std::error::Error for FetchError {}

/// The seeds' rule: retry 408, 429 and 5xx, and network failures; never
/// errors such as bad credentials or "not found".
fn is_transient(error: &FetchError) -> bool {
    match error {
        FetchError::Status(status, _) => is_retryable_status(*status),
        FetchError::Network(error) => error.is_connect() || error.is_timeout(),
    }
}

/// The server's suggested wait.
fn server_hint(error: &FetchError) -> Option<Duration> {
    match error {
        FetchError::Status(_, hint) => *hint,
        FetchError::Network(_) => None,
    }
}

fn report_retry(started: Instant, error: &FetchError, event: &RetryEvent) {
    let source = if event.hinted() {
        "the server's Retry-After"
    } else {
        "the schedule"
    };
    println!(
        "{:>6} ms  attempt {} failed ({error}); waiting {:?} ({source}), {} retries left",
        started.elapsed().as_millis(),
        event.attempt(),
        event.wait(),
        event.retries_left()
    );
}

fn report_give_up(error: &FetchError, event: &GiveUp) {
    println!(
        "giving up after {} attempts: {error} ({})",
        event.attempts(),
        event.reason()
    );
}

/// The seed's schedule (wait 2^n units plus up to one unit of jitter, capped),
/// with a 100 ms unit instead of 1 s so the demo is quick.
#[retry(
    max_retries = 5,
    initial_backoff = "100ms",
    max_backoff = "3200ms",
    retry_if = is_transient,
    retry_after = server_hint,
    on_retry = |error, event| report_retry(started, error, event),
    on_give_up = report_give_up,
)]
async fn fetch(client: &reqwest::Client, url: &str, started: Instant) -> Result<String, FetchError> {
    println!("{:>6} ms  GET {url}", started.elapsed().as_millis());
    let response = client.get(url).send().await?;
    let status = response.status();
    if !status.is_success() {
        return Err(FetchError::Status(status, retry_after(response.headers())));
    }
    Ok(response.text().await?)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addr = flaky_server::start(2).await?;
    let url = format!("http://{addr}/");
    println!("server on {url} answers 503, 503 with Retry-After: 1, then 200\n");

    let client = reqwest::Client::new();
    let started = Instant::now();
    let body = fetch(&client, &url, started).await?;
    println!("{:>6} ms  200 OK: {body:?}", started.elapsed().as_millis());
    Ok(())
}
