//! The front ends of the sweep, each making one call of a script through
//! the limiters of an [`Env`]: the attribute and the builder (async, with
//! and without `hedge_after`), the tower layer (with and without
//! `hedge_after`), the streaming layer, the reqwest middleware and the
//! gRPC layer (`retryPolicy` and `hedgingPolicy`). Every call answers one
//! word: `ok 2` (a success, by attempt 2), `failed`, `refused`.

use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Waker};
use std::time::Duration;

use backoff_grpc::{GrpcRetryLayer, ServiceConfig};
use backoff_runtime::{Jitter, Policy, retry};
use backoff_tower::{ReplayBody, RetryLayer};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use tower::{Layer, Service, service_fn};

use super::support::{Answer, Call, Env, Failure, HOST, METHOD, Rec, RecBudget, Script, Step};

/// Up to 2 retries, 2 ms then 4 ms, no jitter.
pub(super) const POLICY: Policy = Policy::new()
    .max_retries(2)
    .initial_backoff(Duration::from_millis(2))
    .jitter(Jitter::None);

/// A hedge 3 ms after the attempt running.
pub(super) const HEDGE: Duration = Duration::from_millis(3);

pub(super) fn retryable(failure: &Failure) -> bool {
    *failure == Failure::Unavailable
}

fn word(answer: Answer) -> String {
    match answer {
        Ok(attempt) => format!("ok {attempt}"),
        Err(Failure::Unavailable) => "failed".to_owned(),
        Err(Failure::Refused) => "refused".to_owned(),
    }
}

/// The async front ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Front {
    Attribute,
    AttributeHedged,
    Builder,
    BuilderHedged,
    Tower,
    TowerHedged,
    Streaming,
    Reqwest,
    Grpc,
    GrpcHedged,
}

impl Front {
    pub(super) fn hedges(self) -> bool {
        matches!(
            self,
            Front::AttributeHedged | Front::BuilderHedged | Front::TowerHedged | Front::GrpcHedged
        )
    }

    /// Whether its waits are the schedule's exactly (gRPC's backoff is
    /// A6's, drawn at random).
    pub(super) fn exact_waits(self) -> bool {
        !matches!(self, Front::Grpc)
    }

    /// One call of `script` through `env`'s limiters. The tower and gRPC
    /// layers are called here (`Service::call`), before the first poll.
    pub(super) fn call(self, env: &Env, script: Arc<Script>) -> Call {
        let (rec, budget) = (Arc::clone(&env.rec), Arc::clone(&env.budget));
        match self {
            Front::Attribute => Box::pin(async move { word(attribute(script, rec, budget).await) }),
            Front::AttributeHedged => Box::pin(async move { word(attribute_hedged(script, rec, budget).await) }),
            Front::Builder => Box::pin(async move {
                let op = || {
                    let script = Arc::clone(&script);
                    async move { script.attempt().await }
                };
                word(
                    POLICY
                        .retry(op)
                        .retry_if(retryable)
                        .admission(&*rec)
                        .budget(&*budget)
                        .await,
                )
            }),
            Front::BuilderHedged => Box::pin(async move {
                let op = || {
                    let script = Arc::clone(&script);
                    async move { script.attempt().await }
                };
                let call = POLICY.retry(op).retry_if(retryable).admission(&*rec).budget(&*budget);
                word(call.hedge_after(HEDGE).await)
            }),
            Front::Tower | Front::TowerHedged => tower_call(self == Front::TowerHedged, script, rec, budget),
            Front::Streaming => streaming_call(script, rec, budget),
            Front::Reqwest => reqwest_call(script, rec, budget),
            Front::Grpc | Front::GrpcHedged => grpc_call(self == Front::GrpcHedged, script, rec, budget),
        }
    }
}

#[retry(
    max_retries = 2,
    initial_backoff = "2ms",
    jitter = none,
    retry_if = retryable,
    admission = &*rec,
    budget = &*budget
)]
async fn attribute(script: Arc<Script>, rec: Arc<Rec>, budget: Arc<RecBudget>) -> Answer {
    script.attempt().await
}

#[retry(
    max_retries = 2,
    initial_backoff = "2ms",
    jitter = none,
    retry_if = retryable,
    hedge_after = "3ms",
    admission = &*rec,
    budget = &*budget
)]
async fn attribute_hedged(script: Arc<Script>, rec: Arc<Rec>, budget: Arc<RecBudget>) -> Answer {
    script.attempt().await
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// An HTTP backend playing the script: 200 for a success, 503 for a
/// failure.
async fn backend(script: Arc<Script>) -> Result<http::Response<String>, BoxError> {
    let status = if script.attempt().await.is_ok() { 200 } else { 503 };
    Ok(http::Response::builder().status(status).body(String::new())?)
}

fn http_word(answer: Result<http::StatusCode, String>) -> String {
    match answer {
        Ok(status) if status == 200 => "ok".to_owned(),
        Ok(status) if status == 503 => "failed".to_owned(),
        Ok(status) => format!("status {status}"),
        Err(error) if error.contains("refused the attempt") => "refused".to_owned(),
        Err(error) => format!("error {error}"),
    }
}

/// Calls a service that is always ready, as the layer's caller does
/// (`poll_ready`, then `call`), without polling the call.
fn call_now<S: Service<R>, R>(service: &mut S, request: R) -> S::Future {
    let ready = service.poll_ready(&mut Context::from_waker(Waker::noop()));
    assert!(ready.is_ready(), "the scripted backends are always ready");
    service.call(request)
}

fn tower_call(hedged: bool, script: Arc<Script>, rec: Arc<Rec>, budget: Arc<RecBudget>) -> Call {
    let inner = service_fn(move |_: http::Request<String>| backend(Arc::clone(&script)));
    let mut layer = RetryLayer::new(POLICY).budget(budget);
    if hedged {
        layer = layer.hedge_after(HEDGE);
    }
    let mut service = layer.admission(rec).layer(inner);
    let request = http::Request::get(format!("http://{HOST}/"))
        .body(String::new())
        .unwrap();
    let response = call_now(&mut service, request);
    Box::pin(async move {
        http_word(
            response
                .await
                .map(|response| response.status())
                .map_err(|e| e.to_string()),
        )
    })
}

fn streaming_call(script: Arc<Script>, rec: Arc<Rec>, budget: Arc<RecBudget>) -> Call {
    let inner = service_fn(move |request: http::Request<ReplayBody<Full<Bytes>>>| {
        let script = Arc::clone(&script);
        async move {
            request.into_body().collect().await?;
            backend(script).await
        }
    });
    let mut service = RetryLayer::new(POLICY)
        .budget(budget)
        .admission(rec)
        .streaming()
        .layer(inner);
    let request = http::Request::put(format!("http://{HOST}/"))
        .body(Full::new(Bytes::from_static(b"order")))
        .unwrap();
    let response = call_now(&mut service, request);
    Box::pin(async move {
        http_word(
            response
                .await
                .map(|response| response.status())
                .map_err(|e| e.to_string()),
        )
    })
}

/// The end of a reqwest-middleware chain playing the script: no network.
struct Scripted(Arc<Script>);

#[async_trait::async_trait]
impl reqwest_middleware::Middleware for Scripted {
    async fn handle(
        &self,
        _: reqwest::Request,
        _: &mut http::Extensions,
        _: reqwest_middleware::Next<'_>,
    ) -> reqwest_middleware::Result<reqwest::Response> {
        let status = if self.0.attempt().await.is_ok() { 200 } else { 503 };
        let response = http::Response::builder().status(status).body(Vec::<u8>::new()).unwrap();
        Ok(reqwest::Response::from(response))
    }
}

fn reqwest_call(script: Arc<Script>, rec: Arc<Rec>, budget: Arc<RecBudget>) -> Call {
    let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
        .with(RetryLayer::new(POLICY).budget(budget).admission(rec))
        .with(Scripted(script))
        .build();
    Box::pin(async move {
        let answer = client.get(format!("http://{HOST}/")).send().await;
        http_word(answer.map(|response| response.status()).map_err(|e| e.to_string()))
    })
}

/// Up to 3 attempts, 2 ms of backoff (A6's, drawn), `UNAVAILABLE` retried.
const GRPC_RETRY: &str = r#"{"maxAttempts": 3, "initialBackoff": "0.002s", "maxBackoff": "0.004s",
    "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]}"#;

/// Up to 3 attempts, a hedge every 3 ms, `UNAVAILABLE` not fatal.
const GRPC_HEDGE: &str = r#"{"maxAttempts": 3, "hedgingDelay": "0.003s", "nonFatalStatusCodes": ["UNAVAILABLE"]}"#;

pub(super) fn grpc_config(hedged: bool) -> ServiceConfig {
    let (key, policy) = if hedged {
        ("hedgingPolicy", GRPC_HEDGE)
    } else {
        ("retryPolicy", GRPC_RETRY)
    };
    ServiceConfig::from_json(&format!(
        r#"{{"methodConfig": [{{"name": [{{"service": "test.Svc"}}], "{key}": {policy}}}]}}"#
    ))
    .unwrap()
}

/// A Trailers-Only answer with this status.
pub(super) fn trailers_only(code: tonic::Code) -> http::Response<tonic::body::Body> {
    tonic::Status::new(code, "scripted").into_http()
}

/// A gRPC channel playing the script: `OK` for a success,
/// `UNAVAILABLE` for a failure, Trailers-Only.
fn grpc_channel(
    script: Arc<Script>,
) -> impl Service<
    http::Request<tonic::body::Body>,
    Response = http::Response<tonic::body::Body>,
    Error = Infallible,
    Future: Send,
> + Clone
+ Send
+ 'static {
    service_fn(move |_: http::Request<tonic::body::Body>| {
        let script = Arc::clone(&script);
        async move {
            let code = if script.attempt().await.is_ok() {
                tonic::Code::Ok
            } else {
                tonic::Code::Unavailable
            };
            Ok::<_, Infallible>(trailers_only(code))
        }
    })
}

/// A unary request of `METHOD`, framed.
pub(super) fn grpc_request() -> http::Request<tonic::body::Body> {
    let frame = Bytes::from_static(&[0, 0, 0, 0, 0]);
    http::Request::post(format!("http://{HOST}{METHOD}"))
        .header("content-type", "application/grpc")
        .body(tonic::body::Body::new(Full::new(frame)))
        .unwrap()
}

/// A gRPC answer as one word: its status (in the headers or, once the
/// body is read, the trailers).
pub(super) async fn grpc_word(response: http::Response<tonic::body::Body>) -> String {
    let status = match response.headers().get("grpc-status") {
        Some(status) => Some((status.clone(), response.headers().get("grpc-message").cloned())),
        None => {
            let collected = response.into_body().collect().await;
            collected.ok().and_then(|body| {
                let trailers = body.trailers()?;
                Some((
                    trailers.get("grpc-status")?.clone(),
                    trailers.get("grpc-message").cloned(),
                ))
            })
        }
    };
    match status {
        Some((code, _)) if code == "0" => "ok".to_owned(),
        Some((code, Some(message))) if code == "14" && message.to_str().unwrap().contains("refused") => {
            "refused".to_owned()
        }
        Some((code, _)) if code == "14" => "failed".to_owned(),
        other => format!("status {other:?}"),
    }
}

fn grpc_call(hedged: bool, script: Arc<Script>, rec: Arc<Rec>, budget: Arc<RecBudget>) -> Call {
    let layer = GrpcRetryLayer::new(grpc_config(hedged)).budget(budget).admission(rec);
    let mut service = layer.layer(grpc_channel(script));
    let response = call_now(&mut service, grpc_request());
    Box::pin(async move {
        match response.await {
            Ok(response) => grpc_word(response).await,
            Err(never) => match never {},
        }
    })
}

/// The scripts of the sweep.
pub(super) const FAIL_THEN_OK: &[Step] = &[Step::Fail(1), Step::Ok(1)];
/// The first attempt slow, a hedge fast: the first loses.
pub(super) const SLOW_THEN_FAST: &[Step] = &[Step::Ok(10), Step::Ok(1)];
