//! `cargo run --example quickstart`: a real HTTP server on 127.0.0.1 answers
//! 503 twice (the second time with `Retry-After: 1`) and then 200. An
//! annotated async function fetches from it through reqwest: it retries only
//! what Google Cloud's guidance calls retryable (408, 429, 5xx, timeouts, connect
//! errors; never 401 or 404), honours the server's `Retry-After`, and reports
//! every retry through `on_retry`. The error type and the classification
//! come with the runtime's `reqwest` feature.

use std::time::Instant;

use backoff_runtime::reqwest_errors::{Error, check_status, is_retryable_error, retry_after_hint};
use backoff_runtime::{GiveUp, RetryEvent, retry};

#[path = "support/flaky_server.rs"]
mod flaky_server;

fn report_retry(started: Instant, error: &Error, event: &RetryEvent) {
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

fn report_give_up(error: &Error, event: &GiveUp) {
    println!(
        "giving up after {} attempts: {error} ({})",
        event.attempts(),
        event.reason()
    );
}

/// Google Cloud's schedule (wait 2^n units plus up to one unit of jitter, capped),
/// with a 100 ms unit instead of 1 s so the demo is quick.
#[retry(
    max_retries = 5,
    initial_backoff = "100ms",
    max_backoff = "3200ms",
    retry_if = is_retryable_error,
    retry_after = retry_after_hint,
    on_retry = |error, event| report_retry(started, error, event),
    on_give_up = report_give_up,
)]
async fn fetch(client: &reqwest::Client, url: &str, started: Instant) -> Result<String, Error> {
    println!("{:>6} ms  GET {url}", started.elapsed().as_millis());
    Ok(check_status(client.get(url).send().await?)?.text().await?)
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
