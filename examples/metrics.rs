//! `cargo run --example metrics`: what an operator sees of retries. A few
//! calls against a flaky loopback server, recorded through the `metrics`
//! facade by a real Prometheus exporter (`metrics-exporter-prometheus`),
//! whose text rendering is printed (no HTTP listener needed).
//!
//! The server answers `/flaky` with a `503` to every third request starting
//! with the first, `/down` always with `503`, and `/missing` with `404`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use backoff_runtime::limits::RetryBudget;
use backoff_runtime::reqwest_errors::{Error, check_status, is_retryable_error};
use backoff_runtime::retry;
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder};

/// The budget every call to the backend shares, named in its metrics.
static BACKEND: RetryBudget = RetryBudget::new().name("backend");

#[retry(
    max_retries = 2,
    initial_backoff = "10ms",
    jitter = none,
    retry_if = is_retryable_error,
    budget = BACKEND,
)]
async fn fetch(client: &reqwest::Client, url: &str) -> Result<String, Error> {
    let response = check_status(client.get(url).send().await?)?;
    Ok(response.text().await?)
}

/// `/flaky`: a 503 for requests 1, 4, 7, ...; 200 otherwise.
async fn flaky(State(requests): State<Arc<AtomicU32>>) -> StatusCode {
    let n = requests.fetch_add(1, Ordering::SeqCst);
    if n % 3 == 0 {
        StatusCode::SERVICE_UNAVAILABLE
    } else {
        StatusCode::OK
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Install the exporter before the first call: each function registers
    // its series with the recorder of its first call.
    let prometheus = PrometheusBuilder::new()
        .set_buckets_for_metric(Matcher::Full("backoff_attempts_per_call".into()), &[1.0, 2.0, 3.0, 5.0])?
        .set_buckets_for_metric(Matcher::Full("backoff_wait_seconds".into()), &[0.01, 0.1, 1.0, 10.0])?
        .install_recorder()?;

    let app = Router::new()
        .route("/flaky", get(flaky))
        .route("/down", get(|| async { StatusCode::SERVICE_UNAVAILABLE }))
        .route("/missing", get(|| async { StatusCode::NOT_FOUND }))
        .with_state(Arc::new(AtomicU32::new(0)));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let base = format!("http://{}", listener.local_addr()?);
    tokio::spawn(async move { axum::serve(listener, app).await });

    let client = reqwest::Client::new();
    for path in ["/flaky", "/flaky", "/flaky", "/down", "/missing"] {
        let outcome = match fetch(&client, &format!("{base}{path}")).await {
            Ok(_) => "ok".to_string(),
            Err(error) => format!("error: {error}"),
        };
        eprintln!("GET {path}: {outcome}");
    }

    print!("{}", prometheus.render());
    Ok(())
}
