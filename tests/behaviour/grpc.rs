//! gRPC against a real tonic server on loopback (tonic-health's service, so
//! no protoc): AIP-194's codes (`UNAVAILABLE` retried; `RESOURCE_EXHAUSTED`
//! only with a `RetryInfo`, whose delay is the wait; `INVALID_ARGUMENT`
//! never), a `RetryInfo` above `max_backoff` ending the call, and each
//! attempt's `grpc-timeout` from the time left before `max_elapsed`, through
//! the attribute and the builder. Tokio's clock is paused. (The events'
//! `rpc.grpc.status_code` is read in `tests/telemetry/grpc_status.rs`.)

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use backoff_grpc::status::{is_retryable_status, retry_info_delay, set_grpc_timeout};
use backoff_runtime::{Attempt, Policy, StopReason, retry};
use tokio::time::Instant;
use tonic::transport::{Channel, Server};
use tonic::{Code, Request, Response, Status};
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;
use tonic_health::pb::health_server::{Health, HealthServer};
use tonic_health::pb::{HealthCheckRequest, HealthCheckResponse};
use tonic_types::{ErrorDetails, StatusExt};

/// When a request came, and its `grpc-timeout`.
type Seen = (Instant, Option<String>);

/// A health service whose answers are planned per `service` name: the
/// planned errors in order, then `SERVING`. It records when each request
/// came and its `grpc-timeout`.
#[derive(Clone, Default)]
struct Planned {
    plans: Arc<Mutex<HashMap<String, VecDeque<Status>>>>,
    seen: Arc<Mutex<HashMap<String, Vec<Seen>>>>,
}

impl Planned {
    fn plan(&self, service: &str, errors: Vec<Status>) {
        self.plans.lock().unwrap().insert(service.to_owned(), errors.into());
    }

    fn seen(&self, service: &str) -> Vec<Seen> {
        self.seen.lock().unwrap().get(service).cloned().unwrap_or_default()
    }
}

#[async_trait::async_trait]
impl Health for Planned {
    async fn check(&self, request: Request<HealthCheckRequest>) -> Result<Response<HealthCheckResponse>, Status> {
        let timeout = request
            .metadata()
            .get("grpc-timeout")
            .map(|value| value.to_str().unwrap().to_owned());
        let service = request.into_inner().service;
        self.seen
            .lock()
            .unwrap()
            .entry(service.clone())
            .or_default()
            .push((Instant::now(), timeout));
        let planned = self
            .plans
            .lock()
            .unwrap()
            .get_mut(&service)
            .and_then(VecDeque::pop_front);
        match planned {
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

async fn start() -> (Planned, HealthClient<Channel>) {
    let planned = Planned::default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let service = HealthServer::new(planned.clone());
    tokio::spawn(async move {
        Server::builder()
            .add_service(service)
            .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(listener))
            .await
            .unwrap();
    });
    let channel = Channel::from_shared(url).unwrap().connect().await.unwrap();
    let client = HealthClient::new(channel);
    (planned, client)
}

fn retry_info(code: Code, delay: Duration) -> Status {
    Status::with_error_details(code, "come back later", ErrorDetails::with_retry_info(Some(delay)))
}

#[retry(
    max_retries = 4,
    initial_backoff = "100ms",
    max_backoff = "5s",
    retry_if = is_retryable_status,
    retry_after = retry_info_delay,
    on_give_up = |_, give_up| *gave_up.lock().unwrap() = Some(give_up.reason())
)]
async fn check(
    client: &mut HealthClient<Channel>,
    service: &str,
    gave_up: &Mutex<Option<StopReason>>,
) -> Result<i32, Status> {
    let request = HealthCheckRequest {
        service: service.to_owned(),
    };
    Ok(client.check(request).await?.into_inner().status)
}

#[tokio::test(start_paused = true)]
async fn unavailable_twice_then_ok() {
    let (server, mut client) = start().await;
    server.plan(
        "db",
        vec![Status::unavailable("restarting"), Status::unavailable("restarting")],
    );
    let gave_up = Mutex::new(None);
    assert_eq!(
        check(&mut client, "db", &gave_up).await.unwrap(),
        ServingStatus::Serving as i32
    );
    assert_eq!(server.seen("db").len(), 3);
    assert_eq!(*gave_up.lock().unwrap(), None);
}

#[tokio::test(start_paused = true)]
async fn resource_exhausted_with_retry_info_waits_its_delay() {
    let (server, mut client) = start().await;
    server.plan(
        "quota",
        vec![retry_info(Code::ResourceExhausted, Duration::from_secs(2))],
    );
    let gave_up = Mutex::new(None);
    assert_eq!(
        check(&mut client, "quota", &gave_up).await.unwrap(),
        ServingStatus::Serving as i32
    );
    let seen = server.seen("quota");
    assert_eq!(seen.len(), 2);
    let waited = seen[1].0 - seen[0].0;
    assert!(
        (Duration::from_secs(2)..Duration::from_millis(2100)).contains(&waited),
        "the server's 2 s, not the schedule's 100 ms: {waited:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn resource_exhausted_without_retry_info_is_not_retried() {
    let (server, mut client) = start().await;
    server.plan("quota", vec![Status::resource_exhausted("quota")]);
    let gave_up = Mutex::new(None);
    let error = check(&mut client, "quota", &gave_up).await.unwrap_err();
    assert_eq!(error.code(), Code::ResourceExhausted);
    assert_eq!(server.seen("quota").len(), 1);
    assert_eq!(*gave_up.lock().unwrap(), Some(StopReason::Permanent));
}

#[tokio::test(start_paused = true)]
async fn invalid_argument_is_not_retried() {
    let (server, mut client) = start().await;
    server.plan("bad", vec![Status::invalid_argument("no such field")]);
    let gave_up = Mutex::new(None);
    assert_eq!(
        check(&mut client, "bad", &gave_up).await.unwrap_err().code(),
        Code::InvalidArgument
    );
    assert_eq!(server.seen("bad").len(), 1);
    assert_eq!(*gave_up.lock().unwrap(), Some(StopReason::Permanent));
}

#[tokio::test(start_paused = true)]
async fn a_retry_info_above_max_backoff_stops_the_call() {
    let (server, mut client) = start().await;
    server.plan("busy", vec![retry_info(Code::Unavailable, Duration::from_secs(30))]);
    let gave_up = Mutex::new(None);
    let started = Instant::now();
    assert_eq!(
        check(&mut client, "busy", &gave_up).await.unwrap_err().code(),
        Code::Unavailable
    );
    assert!(started.elapsed() < Duration::from_secs(1), "no wait was started");
    assert_eq!(server.seen("busy").len(), 1);
    assert_eq!(*gave_up.lock().unwrap(), Some(StopReason::HintAboveCap));
}

#[tokio::test(start_paused = true)]
async fn each_attempt_s_grpc_timeout_is_the_time_left() {
    let (server, client) = start().await;
    server.plan("db", vec![Status::unavailable("down"), Status::unavailable("down")]);
    let policy = Policy::new()
        .initial_backoff(Duration::from_secs(1))
        .max_backoff(Duration::from_secs(4))
        .max_elapsed(Duration::from_secs(20))
        .jitter(backoff_runtime::Jitter::None);
    let result = policy
        .retry_with_attempt(|attempt: Attempt| {
            let mut client = client.clone();
            let mut request = Request::new(HealthCheckRequest { service: "db".into() });
            set_grpc_timeout(&mut request, &attempt);
            async move { client.check(request).await }
        })
        .retry_if(is_retryable_status)
        .retry_after(retry_info_delay)
        .await;
    assert!(result.is_ok());
    let timeouts: Vec<u64> = server
        .seen("db")
        .into_iter()
        .map(|(_, timeout)| {
            let timeout = timeout.expect("every attempt carries a grpc-timeout");
            // tonic writes microseconds (`u`) or milliseconds (`m`).
            let (digits, unit) = timeout.split_at(timeout.len() - 1);
            let value: u64 = digits.parse().unwrap();
            match unit {
                "u" => value / 1000,
                "m" => value,
                other => panic!("unit {other}"),
            }
        })
        .collect();
    // 20 s, then 19 s after a 1 s wait, then 17 s after a 2 s wait.
    assert_eq!(timeouts.len(), 3);
    for (got, want) in timeouts.iter().zip([20_000, 19_000, 17_000]) {
        assert!((want - 50..=want).contains(got), "{timeouts:?}");
    }
}
