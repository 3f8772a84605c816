//! `cargo run --example tower`: the same flaky server as the quickstart (503,
//! 503 with `Retry-After: 1`, then 200), called through hyper-util's client
//! with one line of setup: `RetryLayer::new(POLICY).layer(client)`. The
//! layer retries idempotent requests on the statuses Google Cloud retries,
//! waits the server's `Retry-After`, and says so through `on_retry`; a `POST`
//! without an `Idempotency-Key` gets its one attempt.

use std::time::Duration;

use backoff_runtime::Policy;
use backoff_tower::RetryLayer;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use tower::{Layer, ServiceExt};

#[path = "support/flaky_server.rs"]
mod flaky_server;

/// Google Cloud's schedule with a 100 ms unit, so the demo is quick.
const POLICY: Policy = Policy::new()
    .max_retries(5)
    .initial_backoff(Duration::from_millis(100))
    .max_backoff(Duration::from_millis(3200));

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addr = flaky_server::start(2).await?;
    let url = format!("http://{addr}/");
    println!("server on {url} answers 503, 503 with Retry-After: 1, then 200\n");

    let http: Client<_, Full<Bytes>> = Client::builder(TokioExecutor::new()).build_http();
    let client = RetryLayer::new(POLICY)
        .name("flaky")
        .on_retry(|event| {
            let source = if event.hinted() {
                "the server's Retry-After"
            } else {
                "the schedule"
            };
            println!(
                "attempt {} failed; waiting {:?} ({source})",
                event.attempt(),
                event.wait()
            );
        })
        .layer(http);

    let get = http::Request::get(&url).body(Full::new(Bytes::new()))?;
    let response = client.clone().oneshot(get).await?;
    let status = response.status();
    let body = response.into_body().collect().await?.to_bytes();
    println!("GET: {status} {:?}", String::from_utf8_lossy(&body));
    assert_eq!(status, 200);

    // The server now answers 200 to everything; a second server shows the
    // POST rule: a POST without an Idempotency-Key is sent once.
    let addr = flaky_server::start(1).await?;
    let post = http::Request::post(format!("http://{addr}/")).body(Full::new(Bytes::from_static(b"order")))?;
    let response = client.oneshot(post).await?;
    println!(
        "POST without an Idempotency-Key: {} after one attempt",
        response.status()
    );
    assert_eq!(response.status(), 503);
    Ok(())
}
