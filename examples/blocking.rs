//! `cargo run --example blocking`: the quickstart for a sync function. A real
//! HTTP server on 127.0.0.1 answers 503 twice (the second time with
//! `Retry-After: 1`) and then 200; an annotated sync function fetches from it
//! with reqwest's blocking client, retries what is retryable, honours the
//! hint, and sleeps with `std::thread::sleep`.

use std::time::{Duration, Instant};

use backoff_runtime::http_errors::{is_retryable_status, retry_after_header};
use backoff_runtime::retry;

#[path = "support/flaky_server.rs"]
mod flaky_server;

#[derive(Debug)]
enum FetchError {
    Status(reqwest::StatusCode, Option<Duration>),
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

fn is_transient(error: &FetchError) -> bool {
    match error {
        FetchError::Status(status, _) => is_retryable_status(*status),
        FetchError::Network(error) => backoff_runtime::reqwest_errors::is_retryable_reqwest_error(error),
    }
}

fn server_hint(error: &FetchError) -> Option<Duration> {
    match error {
        FetchError::Status(_, hint) => *hint,
        FetchError::Network(_) => None,
    }
}

#[retry(
    max_retries = 5,
    initial_backoff = "100ms",
    max_backoff = "3200ms",
    retry_if = is_transient,
    retry_after = server_hint,
    on_retry = |error, event| println!("{:>6} ms  {error}; waiting {:?}", started.elapsed().as_millis(), event.wait()),
)]
fn fetch(client: &reqwest::blocking::Client, url: &str, started: Instant) -> Result<String, FetchError> {
    println!("{:>6} ms  GET {url}", started.elapsed().as_millis());
    let response = client.get(url).send()?;
    let status = response.status();
    if !status.is_success() {
        return Err(FetchError::Status(status, retry_after_header(response.headers())));
    }
    Ok(response.text()?)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The server runs on its own tokio runtime; the client is blocking.
    let runtime = tokio::runtime::Runtime::new()?;
    let addr = runtime.block_on(flaky_server::start(2))?;
    let url = format!("http://{addr}/");
    println!("server on {url} answers 503, 503 with Retry-After: 1, then 200\n");

    let client = reqwest::blocking::Client::new();
    let started = Instant::now();
    let body = fetch(&client, &url, started)?;
    println!("{:>6} ms  200 OK: {body:?}", started.elapsed().as_millis());
    Ok(())
}
