//! `cargo run --example grpc`: a real gRPC server on 127.0.0.1 (tonic,
//! serving the standard health service, so no protoc is needed) answers
//! `UNAVAILABLE`, then `RESOURCE_EXHAUSTED` with a `google.rpc.RetryInfo` of
//! 1 s, then `SERVING`. An annotated async function calls it through
//! tonic's client: `retry_if = is_retryable_status` follows Google's AIP-194
//! (retry `UNAVAILABLE`, `RESOURCE_EXHAUSTED` only with a `RetryInfo`, never
//! `INVALID_ARGUMENT` and the like) and `retry_after = retry_info_delay`
//! waits the server's delay, capped by `max_backoff` like `Retry-After`.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use backoff_grpc::status::{is_retryable_status, retry_info_delay};
use backoff_runtime::retry;
use tonic::transport::{Channel, Server};
use tonic::{Code, Request, Response, Status};
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;
use tonic_health::pb::health_server::{Health, HealthServer};
use tonic_health::pb::{HealthCheckRequest, HealthCheckResponse};
use tonic_types::{ErrorDetails, StatusExt};

/// Answers the planned errors in order, then `SERVING`.
struct Planned(Mutex<Vec<Status>>);

#[tonic::async_trait]
impl Health for Planned {
    async fn check(&self, _: Request<HealthCheckRequest>) -> Result<Response<HealthCheckResponse>, Status> {
        match self.0.lock().map_err(|_| Status::internal("poisoned"))?.pop() {
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

/// Google's schedule with a 100 ms unit, so the demo is quick.
#[retry(
    max_retries = 5,
    initial_backoff = "100ms",
    max_backoff = "3200ms",
    retry_if = is_retryable_status,
    retry_after = retry_info_delay,
    on_retry = |status, event| println!(
        "{:>6} ms  attempt {} failed ({:?}); waiting {:?}{}",
        started.elapsed().as_millis(),
        event.attempt(),
        status.code(),
        event.wait(),
        if event.hinted() { " (the server's RetryInfo)" } else { "" }
    ),
)]
async fn check(client: &mut HealthClient<Channel>, started: Instant) -> Result<i32, Status> {
    let request = HealthCheckRequest { service: String::new() };
    Ok(client.check(request).await?.into_inner().status)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Popped from the end: UNAVAILABLE first, then RESOURCE_EXHAUSTED + RetryInfo.
    let planned = Planned(Mutex::new(vec![
        Status::with_error_details(
            Code::ResourceExhausted,
            "quota refills in a second",
            ErrorDetails::with_retry_info(Some(Duration::from_secs(1))),
        ),
        Status::unavailable("restarting"),
    ]));
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
    println!("gRPC server on {url}: UNAVAILABLE, RESOURCE_EXHAUSTED with RetryInfo 1 s, then SERVING\n");

    let mut client = HealthClient::new(Channel::from_shared(url)?.connect().await?);
    let started = Instant::now();
    let status = check(&mut client, started).await?;
    println!(
        "{:>6} ms  health: {:?}",
        started.elapsed().as_millis(),
        ServingStatus::try_from(status)?
    );
    assert_eq!(status, ServingStatus::Serving as i32);
    Ok(())
}
