//! A loopback unary gRPC call through the gRPC layer against the bare tonic
//! channel, in the same run: what `GrpcRetryLayer` adds to a call that
//! succeeds at once.
//!
//! ```sh
//! cargo bench --bench grpc_channel
//! ```
//!
//! The server is tonic's standard health service (`tonic-health`, whose
//! prost messages ship with the crate: no protoc) on 127.0.0.1, in the same
//! current-thread tokio runtime as the client (one core: the client's and
//! the server's work on one thread, as on a busy box). Each iteration is one
//! `Check` call, awaited with `block_on`. Variants:
//!
//! - `bare`: `HealthClient` over tonic's `Channel` (the baseline);
//! - `layer_retried`: over `GrpcRetryLayer` with a `retryPolicy` for the
//!   service (the request body kept in a `Replay`, the retry loop's
//!   future, the commit on the response headers);
//! - `layer_unretried`: over the layer with a config that names no method
//!   (the call sent once, its answer fed to the throttle).
//!
//! The medians and the ratios to `bare` are printed at the end.

use std::time::Duration;

use backoff_grpc::{GrpcRetryLayer, ServiceConfig};
use criterion::{Criterion, criterion_group};
use tonic::transport::{Channel, Server};
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_client::HealthClient;
use tower::Layer;

#[path = "support/estimates.rs"]
mod estimates;

const RETRIED: &str = r#"{
  "methodConfig": [{
    "name": [{"service": "grpc.health.v1.Health"}],
    "retryPolicy": {
      "maxAttempts": 4, "initialBackoff": "0.1s", "maxBackoff": "1s",
      "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]
    }
  }],
  "retryThrottling": {"maxTokens": 10, "tokenRatio": 0.1}
}"#;

const UNRETRIED: &str = r#"{"retryThrottling": {"maxTokens": 10, "tokenRatio": 0.1}}"#;

/// The health server on loopback (serving), and a channel to it.
async fn start() -> Channel {
    let (reporter, service) = tonic_health::server::health_reporter();
    reporter
        .set_service_status("", tonic_health::ServingStatus::Serving)
        .await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let url = format!("http://{}", listener.local_addr().expect("its address"));
    tokio::spawn(async move {
        Server::builder()
            .add_service(service)
            .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(listener))
            .await
            .expect("the server runs");
    });
    Channel::from_shared(url)
        .expect("a valid URL")
        .connect()
        .await
        .expect("connected")
}

fn grpc_channel(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let channel = runtime.block_on(start());
    let request = || HealthCheckRequest { service: String::new() };
    let mut bare = HealthClient::new(channel.clone());
    let retried_layer = GrpcRetryLayer::new(ServiceConfig::from_json(RETRIED).expect("a valid config"));
    let mut retried = HealthClient::new(retried_layer.layer(channel.clone()));
    let unretried_layer = GrpcRetryLayer::new(ServiceConfig::from_json(UNRETRIED).expect("a valid config"));
    let mut unretried = HealthClient::new(unretried_layer.layer(channel));

    let mut group = c.benchmark_group("grpc_unary_loopback");
    group.measurement_time(Duration::from_secs(5));
    group.bench_function("bare", |b| {
        b.iter(|| runtime.block_on(bare.check(request())).expect("serving"))
    });
    group.bench_function("layer_retried", |b| {
        b.iter(|| runtime.block_on(retried.check(request())).expect("serving"))
    });
    group.bench_function("layer_unretried", |b| {
        b.iter(|| runtime.block_on(unretried.check(request())).expect("serving"))
    });
    group.finish();
}

criterion_group!(benches, grpc_channel);

fn main() {
    let since = std::time::SystemTime::now();
    benches();
    Criterion::default().configure_from_args().final_summary();
    let median = |bench| estimates::median_ns("grpc_unary_loopback", bench, since);
    if let (Some(bare), Some(retried), Some(unretried)) =
        (median("bare"), median("layer_retried"), median("layer_unretried"))
    {
        let table = format!(
            "| loopback unary call (tonic health `Check`) | median | against the bare channel |\n|---|---:|---:|\n\
             | bare `Channel` | {:.1} µs | 1.00x |\n\
             | `GrpcRetryLayer`, method with a `retryPolicy` | {:.1} µs | {:.3}x |\n\
             | `GrpcRetryLayer`, method without one | {:.1} µs | {:.3}x |\n",
            bare / 1000.0,
            retried / 1000.0,
            retried / bare,
            unretried / 1000.0,
            unretried / bare,
        );
        estimates::publish(&table, "grpc_channel.md");
    }
}
