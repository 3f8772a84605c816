//! `cargo run --example grpc_channel`: gRPC's retries in the channel, as
//! Go and Java clients get them from their service config. A real gRPC
//! server on 127.0.0.1 (tonic, serving the standard health service, so no
//! protoc is needed) answers `UNAVAILABLE` twice, then one
//! `UNAVAILABLE` with a `grpc-retry-pushback-ms` of 300, then `SERVING`.
//! The client is tonic's generated `HealthClient` over the channel wrapped
//! in `GrpcRetryLayer`, configured by the same service-config JSON a Go or
//! Java deployment reads: the call site has no retry code at all.

use std::sync::Mutex;
use std::time::Instant;

use backoff_grpc::{GrpcRetryLayer, ServiceConfig};
use tonic::metadata::MetadataValue;
use tonic::transport::{Channel, Server};
use tonic::{Request, Response, Status};
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;
use tonic_health::pb::health_server::{Health, HealthServer};
use tonic_health::pb::{HealthCheckRequest, HealthCheckResponse};
use tower::Layer;

/// The service config, as operators write it for every gRPC language.
const SERVICE_CONFIG: &str = r#"{
  "methodConfig": [{
    "name": [{"service": "grpc.health.v1.Health"}],
    "timeout": "5s",
    "retryPolicy": {
      "maxAttempts": 5,
      "initialBackoff": "0.1s",
      "maxBackoff": "1s",
      "backoffMultiplier": 2,
      "retryableStatusCodes": ["UNAVAILABLE"]
    }
  }],
  "retryThrottling": {"maxTokens": 10, "tokenRatio": 0.1}
}"#;

/// Answers the planned errors in order, then `SERVING`; prints what each
/// attempt carried.
struct Planned {
    errors: Mutex<Vec<Status>>,
    started: Instant,
}

#[tonic::async_trait]
impl Health for Planned {
    async fn check(&self, request: Request<HealthCheckRequest>) -> Result<Response<HealthCheckResponse>, Status> {
        let header = |name| {
            request
                .metadata()
                .get(name)
                .and_then(|value| value.to_str().ok())
                .unwrap_or("-")
                .to_owned()
        };
        println!(
            "{:>6} ms  server: attempt with grpc-previous-rpc-attempts {}, grpc-timeout {}",
            self.started.elapsed().as_millis(),
            header("grpc-previous-rpc-attempts"),
            header("grpc-timeout"),
        );
        match self.errors.lock().map_err(|_| Status::internal("poisoned"))?.pop() {
            Some(status) => Err(status),
            None => Ok(Response::new(HealthCheckResponse {
                status: ServingStatus::Serving as i32,
            })),
        }
    }

    type WatchStream = tokio_stream::Empty<Result<HealthCheckResponse, Status>>;

    async fn watch(&self, _: Request<HealthCheckRequest>) -> Result<Response<Self::WatchStream>, Status> {
        Err(Status::unimplemented("not used"))
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let started = Instant::now();
    // Popped from the end.
    let mut pushed_back = Status::unavailable("draining: come back in 300 ms");
    pushed_back
        .metadata_mut()
        .insert("grpc-retry-pushback-ms", MetadataValue::from_static("300"));
    let planned = Planned {
        errors: Mutex::new(vec![
            pushed_back,
            Status::unavailable("restarting"),
            Status::unavailable("restarting"),
        ]),
        started,
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}", listener.local_addr()?);
    tokio::spawn(async move {
        let incoming = tokio_stream::wrappers::TcpListenerStream::new(listener);
        if let Err(error) = Server::builder()
            .add_service(HealthServer::new(planned))
            .serve_with_incoming(incoming)
            .await
        {
            eprintln!("server stopped: {error}");
        }
    });
    println!("gRPC server on {url}: UNAVAILABLE twice, UNAVAILABLE with a 300 ms pushback, then SERVING\n");

    let layer = GrpcRetryLayer::new(ServiceConfig::from_json(SERVICE_CONFIG)?)
        .name("health")
        .on_retry(move |event| {
            println!(
                "{:>6} ms  client: attempt {} failed; waiting {:?}{}",
                started.elapsed().as_millis(),
                event.attempt(),
                event.wait(),
                if event.hinted() { " (the server's pushback)" } else { "" }
            );
        });
    let channel = Channel::from_shared(url)?.connect().await?;
    let mut client = HealthClient::new(layer.layer(channel));
    let response = client.check(HealthCheckRequest { service: String::new() }).await?;
    let status = response.into_inner().status;
    println!(
        "{:>6} ms  health: {:?}",
        started.elapsed().as_millis(),
        ServingStatus::try_from(status)?
    );
    assert_eq!(status, ServingStatus::Serving as i32);
    Ok(())
}
