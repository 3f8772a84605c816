//! `cargo run --example poll`: polling a long-running job with
//! `retry_if_ok`, and telling the server which call and attempt each
//! request is with `context = attempt`.
//!
//! A loopback server runs a job: its status endpoint answers
//! `202 {"state":"running"}` with `Retry-After: 1` twice, then
//! `200 {"state":"done"}`. The annotated function polls it: a running job is
//! a pending value, waited on for the server's hint (`retry_after_ok`) and
//! asked again; every request carries the call's invocation id and the
//! attempt count in the header Google's client libraries use for them.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header::RETRY_AFTER};
use axum::routing::get;
use backoff_runtime::http_errors::retry_after_header;
use backoff_runtime::{GiveUp, RetryEvent, retry};

/// What the status endpoint said.
#[derive(Debug)]
struct JobStatus {
    state: String,
    retry_after: Option<Duration>,
}

impl JobStatus {
    fn is_running(&self) -> bool {
        self.state == "running"
    }
}

/// Polls the job until it is no longer running: at most 10 polls, each
/// after the server's `Retry-After` (or the schedule when it sends none).
#[retry(
    max_retries = 10,
    initial_backoff = "500ms",
    max_backoff = "10s",
    max_elapsed = "1m",
    context = attempt,
    retry_if_ok = JobStatus::is_running,
    retry_after_ok = |status: &JobStatus| status.retry_after,
    on_retry = |result: &Result<JobStatus, reqwest::Error>, event: &RetryEvent| match result {
        Ok(status) => println!("  job is {}: next poll in {:?}", status.state, event.wait()),
        Err(error) => println!("  poll failed ({error}): next poll in {:?}", event.wait()),
    },
    on_give_up = |_: &Result<JobStatus, reqwest::Error>, event: &GiveUp| println!("  stopped polling: {}", event.reason()),
)]
async fn wait_for_job(client: &reqwest::Client, url: &str) -> Result<JobStatus, reqwest::Error> {
    let response = client
        .get(url)
        .header(
            "x-goog-api-client",
            format!(
                "gccl-invocation-id/{} gccl-attempt-count/{}",
                attempt.invocation_id(),
                attempt.number()
            ),
        )
        // Deadline propagation: no request outlives the call's budget.
        .timeout(attempt.time_left().unwrap_or(Duration::from_secs(60)))
        .send()
        .await?
        .error_for_status()?;
    let retry_after = retry_after_header(response.headers());
    let body = response.text().await?;
    Ok(JobStatus {
        state: state_of(&body).to_string(),
        retry_after,
    })
}

/// The `state` field of a `{"state":"..."}` body.
fn state_of(body: &str) -> &str {
    body.split("\"state\":\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or("unknown")
}

/// The job's status endpoint: running for the first two polls, then done.
/// Prints the header each request carried.
async fn status(State(polls): State<Arc<AtomicU32>>, headers: HeaderMap) -> (StatusCode, HeaderMap, &'static str) {
    let n = polls.fetch_add(1, Ordering::SeqCst) + 1;
    let client = headers
        .get("x-goog-api-client")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("-");
    println!("server: poll {n}, x-goog-api-client: {client}");
    let mut answer = HeaderMap::new();
    if n <= 2 {
        answer.insert(RETRY_AFTER, HeaderValue::from_static("1"));
        (StatusCode::ACCEPTED, answer, r#"{"state":"running"}"#)
    } else {
        (StatusCode::OK, answer, r#"{"state":"done"}"#)
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let app = Router::new()
        .route("/jobs/7", get(status))
        .with_state(Arc::new(AtomicU32::new(0)));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}/jobs/7", listener.local_addr()?);
    tokio::spawn(async move { axum::serve(listener, app).await });

    println!("polling {url}");
    let client = reqwest::Client::new();
    let status = wait_for_job(&client, &url).await?;
    if status.is_running() {
        println!("the job is still running; ask again later");
    } else {
        println!("job finished: {}", status.state);
    }
    Ok(())
}
