//! The gRPC layer (`tower::grpc::GrpcRetryLayer`) under tonic's generic
//! client, against a real tonic server on loopback whose answers are
//! planned per method: a hand-written service (messages by `prost` derive,
//! gRPC's framing by hand, no protoc), so that a test chooses exactly what
//! the wire carries: a Trailers-Only status, response headers then a status
//! in the trailers, the server's pushback, a `RetryInfo`, an answer before
//! the request stream ends, an answer that never comes. Tokio's clock is
//! paused: every wait is measured on it, none is waited for.

use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use backoff_grpc::{GrpcRetryLayer, MethodConfigSpec, RetryPolicySpec, ServiceConfig};
use backoff_runtime::StopReason;
use backoff_runtime::limits::RetryThrottle;
use backoff_tower::ReplayLimits;
use bytes::{Buf, BufMut, Bytes, BytesMut};
use http::{HeaderMap, HeaderValue};
use http_body::Frame;
use http_body_util::{BodyExt, StreamBody};
use prost::Message as _;
use tokio::time::Instant;
use tonic::body::Body;
use tonic::client::Grpc;
use tonic::codegen::http::uri::PathAndQuery;
use tonic::server::NamedService;
use tonic::transport::{Channel, Server};
use tonic::{Code, Request, Status};
use tonic_prost::ProstCodec;
use tonic_types::{ErrorDetails, StatusExt};
use tower::{Layer, Service};

/// The one message type: a number.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Num {
    #[prost(uint64, tag = "1")]
    pub value: u64,
}

/// What the server does with one attempt of a method.
#[derive(Clone)]
enum Plan {
    /// A Trailers-Only answer at once: this status, with these extra
    /// headers (a pushback).
    Refuse(Status, Vec<(&'static str, &'static str)>),
    /// Reads the first request message, then a Trailers-Only `UNAVAILABLE`
    /// while the request stream is still open.
    RefuseAfterFirst,
    /// Response headers, these messages, then this status in the trailers.
    Stream(Vec<u64>, Code),
    /// Never answers; the flag turns true when the attempt is cancelled.
    Hang(Arc<AtomicBool>),
    /// Reads the whole request, waits this long, then answers as an
    /// unplanned attempt does (the sum, `OK`).
    Slow(Duration),
    /// Response headers, then this status in the trailers with this
    /// `grpc-retry-pushback-ms`.
    StreamPushback(Code, &'static str),
    /// Waits this long, then a Trailers-Only answer with this status.
    Late(Duration, Code),
}

/// What the server saw of one attempt.
#[derive(Clone, Debug)]
struct Seen {
    at: Instant,
    headers: HeaderMap,
    /// The request messages it read (all of them, when it answered OK).
    values: Vec<u64>,
}

impl Seen {
    fn header(&self, name: &str) -> Option<String> {
        self.headers.get(name).map(|value| value.to_str().unwrap().to_owned())
    }

    /// Its `grpc-timeout`, in microseconds.
    fn timeout_micros(&self) -> u64 {
        let value = self.header("grpc-timeout").expect("the attempt carries a grpc-timeout");
        let (digits, unit) = value.split_at(value.len() - 1);
        let count: u64 = digits.parse().unwrap();
        match unit {
            "n" => count / 1000,
            "u" => count,
            "m" => count * 1000,
            "S" => count * 1_000_000,
            other => panic!("unit {other}"),
        }
    }
}

/// A gRPC service whose answers are planned per method path: the planned
/// answers in order, then the sum of the request's messages, `OK`.
#[derive(Clone, Default)]
struct Planned {
    plans: Arc<Mutex<HashMap<String, VecDeque<Plan>>>>,
    seen: Arc<Mutex<HashMap<String, Vec<Seen>>>>,
}

impl NamedService for Planned {
    const NAME: &'static str = "test.Planned";
}

impl Planned {
    fn plan(&self, path: &str, plans: Vec<Plan>) {
        self.plans.lock().unwrap().insert(path.to_owned(), plans.into());
    }

    fn seen(&self, path: &str) -> Vec<Seen> {
        self.seen.lock().unwrap().get(path).cloned().unwrap_or_default()
    }

    fn attempts(&self, path: &str) -> usize {
        self.seen(path).len()
    }

    fn record(&self, path: &str, seen: Seen) -> usize {
        let mut all = self.seen.lock().unwrap();
        let list = all.entry(path.to_owned()).or_default();
        list.push(seen);
        list.len() - 1
    }

    fn update(&self, path: &str, index: usize, values: Vec<u64>) {
        self.seen.lock().unwrap().get_mut(path).unwrap()[index].values = values;
    }

    async fn answer(self, request: http::Request<Body>) -> http::Response<Body> {
        let path = request.uri().path().to_owned();
        let (parts, mut body) = request.into_parts();
        let index = self.record(
            &path,
            Seen {
                at: Instant::now(),
                headers: parts.headers,
                values: Vec::new(),
            },
        );
        let plan = self.plans.lock().unwrap().get_mut(&path).and_then(VecDeque::pop_front);
        match plan {
            Some(Plan::Refuse(status, extra)) => {
                let mut response = status.into_http::<Body>();
                for (name, value) in extra {
                    response.headers_mut().append(name, HeaderValue::from_static(value));
                }
                response
            }
            Some(Plan::RefuseAfterFirst) => {
                let mut reader = Messages::default();
                let first = reader.next(&mut body).await;
                self.update(&path, index, first.into_iter().collect());
                Status::unavailable("answered before the request ended").into_http()
            }
            Some(Plan::Stream(values, code)) => streamed(values, Status::new(code, "planned")),
            Some(Plan::StreamPushback(code, millis)) => streamed_with(
                vec![],
                Status::new(code, "planned"),
                &[("grpc-retry-pushback-ms", millis)],
            ),
            Some(Plan::Late(wait, code)) => {
                tokio::time::sleep(wait).await;
                Status::new(code, "late").into_http()
            }
            Some(Plan::Hang(cancelled)) => {
                let _guard = OnDrop(cancelled);
                std::future::pending::<()>().await;
                unreachable!()
            }
            Some(Plan::Slow(wait)) => {
                let mut reader = Messages::default();
                let mut values = Vec::new();
                while let Some(value) = reader.next(&mut body).await {
                    values.push(value);
                }
                self.update(&path, index, values.clone());
                tokio::time::sleep(wait).await;
                streamed(vec![values.iter().sum()], Status::ok(""))
            }
            None => {
                let mut reader = Messages::default();
                let mut values = Vec::new();
                while let Some(value) = reader.next(&mut body).await {
                    values.push(value);
                }
                self.update(&path, index, values.clone());
                streamed(vec![values.iter().sum()], Status::ok(""))
            }
        }
    }
}

/// Sets its flag when dropped: the server's attempt was cancelled.
struct OnDrop(Arc<AtomicBool>);

impl Drop for OnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// A response: headers, `values` as messages, `status` in the trailers.
fn streamed(values: Vec<u64>, status: Status) -> http::Response<Body> {
    streamed_with(values, status, &[])
}

/// [`streamed`], with `extra` headers in the trailers.
fn streamed_with(values: Vec<u64>, status: Status, extra: &[(&'static str, &'static str)]) -> http::Response<Body> {
    let mut trailers = HeaderMap::new();
    status.add_header(&mut trailers).unwrap();
    for (name, value) in extra {
        trailers.insert(*name, HeaderValue::from_static(value));
    }
    let frames: Vec<Result<Frame<Bytes>, Status>> = values
        .into_iter()
        .map(|value| Ok(Frame::data(framed(value))))
        .chain([Ok(Frame::trailers(trailers))])
        .collect();
    let body = StreamBody::new(futures_util::stream::iter(frames));
    http::Response::builder()
        .header("content-type", "application/grpc")
        .body(Body::new(body))
        .unwrap()
}

/// One gRPC message frame: uncompressed, its length, the message.
fn framed(value: u64) -> Bytes {
    let message = Num { value }.encode_to_vec();
    let mut frame = BytesMut::with_capacity(5 + message.len());
    frame.put_u8(0);
    frame.put_u32(message.len() as u32);
    frame.put_slice(&message);
    frame.freeze()
}

/// Reads gRPC message frames from a request body.
#[derive(Default)]
struct Messages {
    buffer: BytesMut,
}

impl Messages {
    /// The next message's value, or `None` at the end of the body.
    async fn next(&mut self, body: &mut Body) -> Option<u64> {
        loop {
            if self.buffer.len() >= 5 {
                let len = u32::from_be_bytes(self.buffer[1..5].try_into().unwrap()) as usize;
                if self.buffer.len() >= 5 + len {
                    self.buffer.advance(5);
                    let message = self.buffer.split_to(len);
                    return Some(Num::decode(message.freeze()).unwrap().value);
                }
            }
            let frame = body.frame().await?.ok()?;
            if let Ok(data) = frame.into_data() {
                self.buffer.extend_from_slice(&data);
            }
        }
    }
}

impl Service<http::Request<Body>> for Planned {
    type Response = http::Response<Body>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<http::Response<Body>, Infallible>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<Body>) -> Self::Future {
        let planned = self.clone();
        Box::pin(async move { Ok(planned.answer(request).await) })
    }
}

const UNARY: &str = "/test.Planned/Unary";
const UPLOAD: &str = "/test.Planned/Upload";
const WATCH: &str = "/test.Planned/Watch";

/// The server on loopback, and a channel to it.
async fn start() -> (Planned, Channel) {
    let planned = Planned::default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let service = planned.clone();
    tokio::spawn(async move {
        Server::builder()
            .add_service(service)
            .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(listener))
            .await
            .unwrap();
    });
    let channel = Channel::from_shared(url).unwrap().connect().await.unwrap();
    (planned, channel)
}

/// A config retrying every method of `test.Planned` by this policy.
fn config(policy: &str) -> ServiceConfig {
    ServiceConfig::from_json(&format!(
        r#"{{"methodConfig": [{{"name": [{{"service": "test.Planned"}}], "retryPolicy": {policy}}}]}}"#
    ))
    .unwrap()
}

/// Up to 5 attempts, 100 ms to 1 s, retrying `UNAVAILABLE`.
const UNAVAILABLE_5: &str = r#"{"maxAttempts": 5, "initialBackoff": "0.1s", "maxBackoff": "1s",
    "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]}"#;

/// Why the layer's calls gave up, in order.
#[derive(Clone, Default)]
struct GaveUp(Arc<Mutex<Vec<StopReason>>>);

impl GaveUp {
    fn hook(&self) -> impl Fn(&backoff_runtime::GiveUp) + Send + Sync + 'static {
        let reasons = Arc::clone(&self.0);
        move |give_up| reasons.lock().unwrap().push(give_up.reason())
    }

    fn reasons(&self) -> Vec<StopReason> {
        self.0.lock().unwrap().clone()
    }
}

async fn unary<T>(client: &mut Grpc<T>, path: &'static str, value: u64) -> Result<u64, Status>
where
    T: tonic::client::GrpcService<Body>,
    T::Error: Into<tonic::codegen::StdError>,
    T::ResponseBody: http_body::Body<Data = Bytes> + Send + 'static,
    <T::ResponseBody as http_body::Body>::Error: Into<tonic::codegen::StdError>,
{
    client
        .ready()
        .await
        .map_err(|error| Status::unknown(error.into().to_string()))?;
    let codec = ProstCodec::<Num, Num>::default();
    let response = client
        .unary(Request::new(Num { value }), PathAndQuery::from_static(path), codec)
        .await?;
    Ok(response.into_inner().value)
}

async fn upload<T>(
    client: &mut Grpc<T>,
    values: impl futures_util::Stream<Item = Num> + Send + 'static,
) -> Result<u64, Status>
where
    T: tonic::client::GrpcService<Body>,
    T::Error: Into<tonic::codegen::StdError>,
    T::ResponseBody: http_body::Body<Data = Bytes> + Send + 'static,
    <T::ResponseBody as http_body::Body>::Error: Into<tonic::codegen::StdError>,
{
    client
        .ready()
        .await
        .map_err(|error| Status::unknown(error.into().to_string()))?;
    let codec = ProstCodec::<Num, Num>::default();
    let response = client
        .client_streaming(Request::new(values), PathAndQuery::from_static(UPLOAD), codec)
        .await?;
    Ok(response.into_inner().value)
}

fn nums(values: impl IntoIterator<Item = u64>) -> impl futures_util::Stream<Item = Num> + Send + 'static {
    let values: Vec<Num> = values.into_iter().map(|value| Num { value }).collect();
    futures_util::stream::iter(values)
}

fn refuse(code: Code) -> Plan {
    Plan::Refuse(Status::new(code, "planned"), Vec::new())
}

fn pushback(millis: &'static str) -> Plan {
    Plan::Refuse(
        Status::unavailable("pushed back"),
        vec![("grpc-retry-pushback-ms", millis)],
    )
}

/// The gaps between the attempts the server saw.
fn gaps(seen: &[Seen]) -> Vec<Duration> {
    seen.windows(2).map(|pair| pair[1].at - pair[0].at).collect()
}

#[tokio::test(start_paused = true)]
async fn trailers_only_unavailable_twice_then_ok() {
    let (server, channel) = start().await;
    server.plan(UNARY, vec![refuse(Code::Unavailable), refuse(Code::Unavailable)]);
    let gave_up = GaveUp::default();
    let layer = GrpcRetryLayer::new(config(UNAVAILABLE_5)).on_give_up(gave_up.hook());
    let mut client = Grpc::new(layer.layer(channel));
    assert_eq!(unary(&mut client, UNARY, 7).await.unwrap(), 7);
    let seen = server.seen(UNARY);
    assert_eq!(seen.len(), 3);
    assert!(
        seen.iter()
            .all(|attempt| attempt.values == [7] || attempt.values.is_empty())
    );
    assert_eq!(seen[2].values, [7], "the last attempt sent the whole request");
    // A6's schedule: 100 ms, then 200 ms, each ±20%.
    let gaps = gaps(&seen);
    assert!(
        (Duration::from_millis(80)..=Duration::from_millis(120)).contains(&gaps[0]),
        "{gaps:?}"
    );
    assert!(
        (Duration::from_millis(160)..=Duration::from_millis(240)).contains(&gaps[1]),
        "{gaps:?}"
    );
    assert!(gave_up.reasons().is_empty());
}

/// `GrpcRetryLayer::for_every_method`: one policy for every method, the
/// ones the config would not name included.
#[tokio::test(start_paused = true)]
async fn a_layer_for_every_method_retries_any_method_by_its_policy() {
    let (server, channel) = start().await;
    server.plan(UNARY, vec![refuse(Code::Unavailable)]);
    let named = config(UNAVAILABLE_5);
    let policy = *named.retry_policy(UNARY).expect("the service's policy");
    let mut client = Grpc::new(GrpcRetryLayer::for_every_method(policy).layer(channel));
    assert_eq!(unary(&mut client, UNARY, 4).await.unwrap(), 4);
    assert_eq!(server.seen(UNARY).len(), 2, "retried once");
}

#[tokio::test(start_paused = true)]
async fn each_retry_carries_grpc_previous_rpc_attempts() {
    let (server, channel) = start().await;
    server.plan(UNARY, vec![refuse(Code::Unavailable), refuse(Code::Unavailable)]);
    let mut client = Grpc::new(GrpcRetryLayer::new(config(UNAVAILABLE_5)).layer(channel));
    unary(&mut client, UNARY, 1).await.unwrap();
    let previous: Vec<Option<String>> = server
        .seen(UNARY)
        .iter()
        .map(|attempt| attempt.header("grpc-previous-rpc-attempts"))
        .collect();
    assert_eq!(previous, [None, Some("1".into()), Some("2".into())]);
}

#[tokio::test(start_paused = true)]
async fn at_most_max_attempts_then_the_last_status() {
    let (server, channel) = start().await;
    server.plan(UNARY, vec![refuse(Code::Unavailable); 10]);
    let gave_up = GaveUp::default();
    let config = config(
        r#"{"maxAttempts": 9, "initialBackoff": "0.01s", "maxBackoff": "0.1s",
            "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]}"#,
    );
    let layer = GrpcRetryLayer::new(config).on_give_up(gave_up.hook());
    let mut client = Grpc::new(layer.layer(channel));
    assert_eq!(
        unary(&mut client, UNARY, 1).await.unwrap_err().code(),
        Code::Unavailable
    );
    assert_eq!(server.attempts(UNARY), 5, "maxAttempts 9 is capped at 5");
    assert_eq!(gave_up.reasons(), [StopReason::Exhausted]);
}

#[tokio::test(start_paused = true)]
async fn a_status_not_in_the_policy_is_not_retried() {
    let (server, channel) = start().await;
    server.plan(UNARY, vec![refuse(Code::InvalidArgument)]);
    let gave_up = GaveUp::default();
    let layer = GrpcRetryLayer::new(config(UNAVAILABLE_5)).on_give_up(gave_up.hook());
    let mut client = Grpc::new(layer.layer(channel));
    assert_eq!(
        unary(&mut client, UNARY, 1).await.unwrap_err().code(),
        Code::InvalidArgument
    );
    assert_eq!(server.attempts(UNARY), 1);
    assert_eq!(gave_up.reasons(), [StopReason::Permanent]);
}

#[tokio::test(start_paused = true)]
async fn headers_then_unavailable_in_the_trailers_is_committed() {
    let (server, channel) = start().await;
    server.plan(UNARY, vec![Plan::Stream(vec![], Code::Unavailable)]);
    let mut client = Grpc::new(GrpcRetryLayer::new(config(UNAVAILABLE_5)).layer(channel));
    assert_eq!(
        unary(&mut client, UNARY, 1).await.unwrap_err().code(),
        Code::Unavailable
    );
    assert_eq!(server.attempts(UNARY), 1, "response headers committed the call");
}

/// A give-up's reason and status code.
type Ended = (StopReason, Option<i32>);

/// What the layer's observers heard: give-ups (reason, status code) and
/// successes (attempts).
#[derive(Clone, Default)]
struct Heard {
    gave_up: Arc<Mutex<Vec<Ended>>>,
    retried: Arc<Mutex<Vec<Option<i32>>>>,
    succeeded: Arc<Mutex<Vec<u32>>>,
}

impl Heard {
    fn layer(&self, layer: GrpcRetryLayer) -> GrpcRetryLayer {
        let (gave_up, retried, succeeded) = (self.gave_up.clone(), self.retried.clone(), self.succeeded.clone());
        layer
            .on_give_up(move |give_up| gave_up.lock().unwrap().push((give_up.reason(), give_up.grpc_status())))
            .on_retry(move |event| retried.lock().unwrap().push(event.grpc_status()))
            .on_success(move |success| succeeded.lock().unwrap().push(success.attempts()))
    }

    fn gave_up(&self) -> Vec<Ended> {
        self.gave_up.lock().unwrap().clone()
    }

    fn succeeded(&self) -> Vec<u32> {
        self.succeeded.lock().unwrap().clone()
    }
}

/// A unary request for `UNARY` carrying `value`, as tonic's client frames it.
fn unary_request(value: u64) -> http::Request<Body> {
    http::Request::post(format!("http://test{UNARY}"))
        .header("content-type", "application/grpc")
        .body(Body::new(http_body_util::Full::new(framed(value))))
        .unwrap()
}

#[tokio::test(start_paused = true)]
async fn a_committed_call_is_reported_at_its_status_not_its_headers() {
    let (server, channel) = start().await;
    let heard = Heard::default();
    let layer = heard.layer(GrpcRetryLayer::new(config(UNAVAILABLE_5)));
    let mut service = layer.layer(channel);
    // Headers, one message, then UNAVAILABLE in the trailers.
    server.plan(UNARY, vec![Plan::Stream(vec![7], Code::Unavailable)]);
    let request = unary_request(1);
    tower::ServiceExt::ready(&mut service).await.unwrap();
    let response = service.call(request).await.unwrap();
    assert_eq!(response.status(), 200);
    assert!(
        heard.succeeded().is_empty() && heard.gave_up().is_empty(),
        "nothing at the headers"
    );
    let collected = response.into_body().collect().await.unwrap();
    let trailers = collected.trailers().unwrap();
    assert_eq!(trailers["grpc-status"], "14", "the trailers reach the caller as sent");
    assert_eq!(collected.to_bytes(), framed(7), "the message passes through");
    assert_eq!(
        heard.succeeded(),
        Vec::<u32>::new(),
        "on_success never hears an UNAVAILABLE call"
    );
    assert_eq!(
        heard.gave_up(),
        [(StopReason::Committed, Some(Code::Unavailable as i32))],
        "on_give_up hears it at its status"
    );
    // A committed OK: on_success at the status, once.
    let mut client = Grpc::new(service);
    assert_eq!(unary(&mut client, UNARY, 4).await.unwrap(), 4);
    assert_eq!(heard.succeeded(), [1]);
    assert_eq!(server.attempts(UNARY), 2);
}

/// A Trailers-Only `OK` (a status in the headers, no message) is the
/// call's success: `on_success` hears it, and nothing is retried.
#[tokio::test(start_paused = true)]
async fn a_trailers_only_ok_is_a_success() {
    let (server, channel) = start().await;
    let heard = Heard::default();
    let mut service = heard.layer(GrpcRetryLayer::new(config(UNAVAILABLE_5))).layer(channel);
    server.plan(UNARY, vec![Plan::Refuse(Status::new(Code::Ok, ""), Vec::new())]);
    let request = unary_request(1);
    tower::ServiceExt::ready(&mut service).await.unwrap();
    let response = service.call(request).await.unwrap();
    assert_eq!(response.headers()["grpc-status"], "0");
    response.into_body().collect().await.unwrap();
    assert_eq!(heard.succeeded(), [1], "on_success hears it");
    assert!(heard.gave_up().is_empty());
    assert_eq!(server.attempts(UNARY), 1);
}

#[tokio::test(start_paused = true)]
async fn a_committed_unavailable_costs_a_throttle_token_as_a6_says() {
    let (server, channel) = start().await;
    let config = ServiceConfig::from_json(&format!(
        r#"{{"methodConfig": [{{"name": [{{"service": "test.Planned"}}], "retryPolicy": {UNAVAILABLE_5}}}],
            "retryThrottling": {{"maxTokens": 10, "tokenRatio": 0.1}}}}"#
    ))
    .unwrap();
    let throttle = Arc::new(RetryThrottle::new(10, 0.1));
    let mut client = Grpc::new(
        GrpcRetryLayer::new(config)
            .throttle(Arc::clone(&throttle))
            .layer(channel),
    );
    // Five calls: headers, then UNAVAILABLE in the trailers. Each costs a token.
    server.plan(UNARY, vec![Plan::Stream(vec![], Code::Unavailable); 5]);
    for _ in 0..5 {
        assert_eq!(
            unary(&mut client, UNARY, 1).await.unwrap_err().code(),
            Code::Unavailable
        );
    }
    assert_eq!((server.attempts(UNARY), throttle.tokens()), (5, 5.0));
    // As grpcio: the next retryable failure is not retried.
    server.plan(UNARY, vec![refuse(Code::Unavailable); 2]);
    assert_eq!(
        unary(&mut client, UNARY, 1).await.unwrap_err().code(),
        Code::Unavailable
    );
    assert_eq!(server.attempts(UNARY), 6, "throttled: no retry");
    // A committed status the policy does not retry costs nothing.
    server.plan(UNARY, vec![Plan::Stream(vec![], Code::NotFound)]);
    let before = throttle.tokens();
    assert_eq!(unary(&mut client, UNARY, 1).await.unwrap_err().code(), Code::NotFound);
    assert_eq!(throttle.tokens(), before);
    // A committed OK gives back tokenRatio at its status.
    unary(&mut client, UNARY, 1).await.unwrap();
    assert!(
        (throttle.tokens() - (before + 0.1)).abs() < 1e-9,
        "{}",
        throttle.tokens()
    );
}

#[tokio::test(start_paused = true)]
async fn events_carry_the_attempt_s_grpc_status_code() {
    let (server, channel) = start().await;
    server.plan(
        UNARY,
        vec![
            refuse(Code::Unavailable),
            refuse(Code::Unavailable),
            refuse(Code::InvalidArgument),
        ],
    );
    let heard = Heard::default();
    let mut client = Grpc::new(heard.layer(GrpcRetryLayer::new(config(UNAVAILABLE_5))).layer(channel));
    assert_eq!(
        unary(&mut client, UNARY, 1).await.unwrap_err().code(),
        Code::InvalidArgument
    );
    assert_eq!(*heard.retried.lock().unwrap(), [Some(14), Some(14)]);
    assert_eq!(heard.gave_up(), [(StopReason::Permanent, Some(3))]);
}

#[tokio::test(start_paused = true)]
async fn a_pushback_of_zero_retries_at_once() {
    let (server, channel) = start().await;
    server.plan(UNARY, vec![pushback("0")]);
    // A scheduled wait would be 10 s.
    let config = config(
        r#"{"maxAttempts": 3, "initialBackoff": "10s", "maxBackoff": "10s",
            "backoffMultiplier": 1, "retryableStatusCodes": ["UNAVAILABLE"]}"#,
    );
    let mut client = Grpc::new(GrpcRetryLayer::new(config).layer(channel));
    assert_eq!(unary(&mut client, UNARY, 3).await.unwrap(), 3);
    let seen = server.seen(UNARY);
    assert_eq!(seen.len(), 2);
    assert!(gaps(&seen)[0] < Duration::from_millis(5), "{:?}", gaps(&seen));
}

#[tokio::test(start_paused = true)]
async fn a_pushback_waits_exactly_its_value_then_the_backoff_restarts() {
    let (server, channel) = start().await;
    server.plan(
        UNARY,
        vec![refuse(Code::Unavailable), pushback("300"), refuse(Code::Unavailable)],
    );
    // The schedule: 1 s, then 10 s, each ±20%. After the 300 ms pushback
    // it starts again: 1 s, not 10 s.
    let config = config(
        r#"{"maxAttempts": 5, "initialBackoff": "1s", "maxBackoff": "20s",
            "backoffMultiplier": 10, "retryableStatusCodes": ["UNAVAILABLE"]}"#,
    );
    let mut client = Grpc::new(GrpcRetryLayer::new(config).layer(channel));
    assert_eq!(unary(&mut client, UNARY, 3).await.unwrap(), 3);
    let gaps = gaps(&server.seen(UNARY));
    assert_eq!(gaps.len(), 3);
    assert!(
        (Duration::from_millis(800)..=Duration::from_millis(1200)).contains(&gaps[0]),
        "{gaps:?}"
    );
    assert!(
        (Duration::from_millis(300)..Duration::from_millis(305)).contains(&gaps[1]),
        "exactly the pushback, no jitter: {gaps:?}"
    );
    assert!(
        (Duration::from_millis(800)..=Duration::from_millis(1200)).contains(&gaps[2]),
        "the backoff restarted from initialBackoff (not 10 s): {gaps:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_pushback_above_max_backoff_is_waited_in_full() {
    let (server, channel) = start().await;
    server.plan(UNARY, vec![pushback("300")]);
    let config = config(
        r#"{"maxAttempts": 2, "initialBackoff": "0.01s", "maxBackoff": "0.05s",
            "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]}"#,
    );
    let mut client = Grpc::new(GrpcRetryLayer::new(config).layer(channel));
    assert_eq!(unary(&mut client, UNARY, 3).await.unwrap(), 3);
    let gaps = gaps(&server.seen(UNARY));
    assert!(
        (Duration::from_millis(300)..Duration::from_millis(305)).contains(&gaps[0]),
        "{gaps:?}"
    );
}

/// A pushback that says not to retry ends the call, and the throttle counts
/// it as a failure.
async fn refused_by(value: &'static str) {
    let (server, channel) = start().await;
    server.plan(UNARY, vec![pushback(value)]);
    let throttle = Arc::new(RetryThrottle::new(10, 0.1));
    let gave_up = GaveUp::default();
    let layer = GrpcRetryLayer::new(config(UNAVAILABLE_5))
        .throttle(Arc::clone(&throttle))
        .on_give_up(gave_up.hook());
    let mut client = Grpc::new(layer.layer(channel));
    assert_eq!(
        unary(&mut client, UNARY, 1).await.unwrap_err().code(),
        Code::Unavailable
    );
    assert_eq!(server.attempts(UNARY), 1, "pushback {value:?}: not retried");
    assert_eq!(gave_up.reasons(), [StopReason::Permanent]);
    assert_eq!(throttle.tokens(), 9.0, "pushback {value:?} counts as a failure");
}

#[tokio::test(start_paused = true)]
async fn a_negative_pushback_stops() {
    refused_by("-1").await;
}

#[tokio::test(start_paused = true)]
async fn a_pushback_that_is_not_a_number_stops() {
    refused_by("abc").await;
}

#[tokio::test(start_paused = true)]
async fn retry_info_on_resource_exhausted_is_the_wait() {
    let (server, channel) = start().await;
    let exhausted = Status::with_error_details(
        Code::ResourceExhausted,
        "quota",
        ErrorDetails::with_retry_info(Some(Duration::from_secs(2))),
    );
    let too_long = Status::with_error_details(
        Code::ResourceExhausted,
        "quota",
        ErrorDetails::with_retry_info(Some(Duration::from_secs(60))),
    );
    server.plan(
        UNARY,
        vec![Plan::Refuse(exhausted, Vec::new()), Plan::Refuse(too_long, Vec::new())],
    );
    let gave_up = GaveUp::default();
    let config = config(
        r#"{"maxAttempts": 5, "initialBackoff": "0.01s", "maxBackoff": "5s",
            "backoffMultiplier": 2, "retryableStatusCodes": ["RESOURCE_EXHAUSTED"]}"#,
    );
    let layer = GrpcRetryLayer::new(config).on_give_up(gave_up.hook());
    let mut client = Grpc::new(layer.layer(channel));
    assert_eq!(
        unary(&mut client, UNARY, 1).await.unwrap_err().code(),
        Code::ResourceExhausted
    );
    let gaps = gaps(&server.seen(UNARY));
    assert_eq!(
        gaps.len(),
        1,
        "the 60 s RetryInfo is above maxBackoff: no retry after it"
    );
    assert!(
        (Duration::from_secs(2)..Duration::from_millis(2005)).contains(&gaps[0]),
        "{gaps:?}"
    );
    assert_eq!(gave_up.reasons(), [StopReason::HintAboveCap]);
}

/// A policy built in code without `retryable_status_codes` retries
/// `UNAVAILABLE`, and a `RESOURCE_EXHAUSTED` that says when to come back
/// (its `RetryInfo`), after that wait; one without a `RetryInfo` is not
/// retried.
#[tokio::test(start_paused = true)]
async fn by_default_resource_exhausted_is_retried_when_it_carries_a_retry_info() {
    let spec = RetryPolicySpec::new()
        .max_attempts(5)
        .initial_backoff(Duration::from_millis(10))
        .max_backoff(Duration::from_secs(5))
        .backoff_multiplier(2.0);
    let config = ServiceConfig::builder()
        .method_config(MethodConfigSpec::new().every_method().retry_policy(spec))
        .build()
        .unwrap();
    let told_when = Status::with_error_details(
        Code::ResourceExhausted,
        "quota",
        ErrorDetails::with_retry_info(Some(Duration::from_secs(2))),
    );
    let (server, channel) = start().await;
    server.plan(
        UNARY,
        vec![
            refuse(Code::Unavailable),
            Plan::Refuse(told_when, Vec::new()),
            refuse(Code::ResourceExhausted),
        ],
    );
    let gave_up = GaveUp::default();
    let layer = GrpcRetryLayer::new(config).on_give_up(gave_up.hook());
    let mut client = Grpc::new(layer.layer(channel));
    assert_eq!(
        unary(&mut client, UNARY, 1).await.unwrap_err().code(),
        Code::ResourceExhausted,
        "the RESOURCE_EXHAUSTED without a RetryInfo ends the call"
    );
    let gaps = gaps(&server.seen(UNARY));
    assert_eq!(
        gaps.len(),
        2,
        "UNAVAILABLE and the RetryInfo's RESOURCE_EXHAUSTED retried: {gaps:?}"
    );
    assert!(
        (Duration::from_secs(2)..Duration::from_millis(2005)).contains(&gaps[1]),
        "the RetryInfo's wait: {gaps:?}"
    );
    assert_eq!(gave_up.reasons(), [StopReason::Permanent]);
}

#[tokio::test(start_paused = true)]
async fn a_throttle_is_shared_by_two_clients() {
    let (server, channel) = start().await;
    server.plan(UNARY, vec![refuse(Code::Unavailable); 10]);
    let gave_up = GaveUp::default();
    let config = ServiceConfig::from_json(&format!(
        r#"{{"methodConfig": [{{"name": [{{"service": "test.Planned"}}], "retryPolicy": {UNAVAILABLE_5}}}],
            "retryThrottling": {{"maxTokens": 4, "tokenRatio": 0.5}}}}"#
    ))
    .unwrap();
    let layer = GrpcRetryLayer::new(config).on_give_up(gave_up.hook());
    let mut first = Grpc::new(layer.layer(channel.clone()));
    let mut second = Grpc::new(layer.layer(channel));
    // 4 tokens: the first failure leaves 3 (above 2: retried), the second 2.
    assert_eq!(unary(&mut first, UNARY, 1).await.unwrap_err().code(), Code::Unavailable);
    assert_eq!(server.attempts(UNARY), 2);
    // The second client's first failure finds the bucket at 2: no retry.
    assert_eq!(
        unary(&mut second, UNARY, 1).await.unwrap_err().code(),
        Code::Unavailable
    );
    assert_eq!(server.attempts(UNARY), 3);
    assert_eq!(gave_up.reasons(), [StopReason::Budget, StopReason::Budget]);
    // Successes refill it for both: 1 token, and 0.5 for each of 5.
    server.plan(UNARY, vec![]);
    for _ in 0..5 {
        unary(&mut second, UNARY, 1).await.unwrap();
    }
    server.plan(UNARY, vec![refuse(Code::Unavailable)]);
    assert_eq!(unary(&mut first, UNARY, 5).await.unwrap(), 5, "retried again");
}

/// A method of `test.Planned` without a `retryPolicy` in the config below.
const PLAIN: &str = "/test.Planned/Plain";

#[tokio::test(start_paused = true)]
async fn a_throttle_drained_by_a_retried_method_recovers_through_an_unretried_method_s_successes() {
    let (server, channel) = start().await;
    let config = ServiceConfig::from_json(&format!(
        r#"{{"methodConfig": [{{"name": [{{"service": "test.Planned", "method": "Unary"}}], "retryPolicy": {UNAVAILABLE_5}}}]}}"#
    ))
    .unwrap();
    let throttle = Arc::new(RetryThrottle::new(4, 0.5));
    let layer = GrpcRetryLayer::new(config).throttle(Arc::clone(&throttle));
    let mut client = Grpc::new(layer.layer(channel));
    // Two failures of the retried method: 4 -> 3 (retried) -> 2 (not).
    server.plan(UNARY, vec![refuse(Code::Unavailable); 2]);
    assert_eq!(
        unary(&mut client, UNARY, 1).await.unwrap_err().code(),
        Code::Unavailable
    );
    assert_eq!((server.attempts(UNARY), throttle.tokens()), (2, 2.0));
    // The method without a policy is sent once, and each success gives
    // back its 0.5.
    for _ in 0..2 {
        assert_eq!(unary(&mut client, PLAIN, 3).await.unwrap(), 3);
    }
    assert_eq!(throttle.tokens(), 3.0, "every call on the channel feeds the throttle");
    // A refusing pushback on it takes a token; a failed status does not.
    server.plan(PLAIN, vec![pushback("-1"), refuse(Code::Unavailable)]);
    assert!(unary(&mut client, PLAIN, 1).await.is_err());
    assert!(unary(&mut client, PLAIN, 1).await.is_err());
    assert_eq!((server.attempts(PLAIN), throttle.tokens()), (4, 2.0));
    for _ in 0..3 {
        unary(&mut client, PLAIN, 1).await.unwrap();
    }
    // 3.5 tokens: the next failure leaves 2.5, above half the bucket, and
    // the retried method is retried again.
    server.plan(UNARY, vec![refuse(Code::Unavailable)]);
    assert_eq!(unary(&mut client, UNARY, 5).await.unwrap(), 5, "retried again");
    assert_eq!(server.attempts(UNARY), 4);
}

#[tokio::test(start_paused = true)]
async fn a_client_stream_under_the_cap_is_replayed() {
    let (server, channel) = start().await;
    server.plan(UPLOAD, vec![refuse(Code::Unavailable)]);
    let limits = ReplayLimits::new().per_call(64);
    let layer = GrpcRetryLayer::new(config(UNAVAILABLE_5)).replay_limits(limits.clone());
    let mut client = Grpc::new(layer.layer(channel));
    assert_eq!(upload(&mut client, nums([1, 2, 3, 4])).await.unwrap(), 10);
    let seen = server.seen(UPLOAD);
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[1].values, [1, 2, 3, 4]);
    assert_eq!(limits.reserved(), 0, "the kept bytes are given back");
}

#[tokio::test(start_paused = true)]
async fn a_client_stream_over_the_cap_is_sent_once() {
    let (server, channel) = start().await;
    server.plan(UPLOAD, vec![Plan::RefuseAfterFirst]);
    // Each message is 7 bytes on the wire (5 of framing, 2 of message).
    let layer = GrpcRetryLayer::new(config(UNAVAILABLE_5)).replay_limits(ReplayLimits::new().per_call(10));
    let mut client = Grpc::new(layer.layer(channel));
    let error = upload(&mut client, nums([1, 2, 3, 4])).await.unwrap_err();
    assert_eq!(
        (error.code(), error.message()),
        (Code::Unavailable, "answered before the request ended"),
        "the server's own answer, not a retry's"
    );
    assert_eq!(server.attempts(UPLOAD), 1, "past the cap: not retried");
}

#[tokio::test(start_paused = true)]
async fn an_answer_before_the_request_stream_ends_is_retried_with_the_whole_stream() {
    let (server, channel) = start().await;
    server.plan(UPLOAD, vec![Plan::RefuseAfterFirst]);
    let mut client = Grpc::new(GrpcRetryLayer::new(config(UNAVAILABLE_5)).layer(channel));
    // The caller's messages come one every 50 ms.
    let slow = futures_util::stream::unfold(1u64, |value| async move {
        if value > 4 {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        Some((Num { value }, value + 1))
    });
    assert_eq!(upload(&mut client, slow).await.unwrap(), 10);
    let seen = server.seen(UPLOAD);
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[0].values, [1], "the server answered after the first message");
    assert_eq!(seen[1].values, [1, 2, 3, 4], "every message once, in order");
}

#[tokio::test(start_paused = true)]
async fn the_caller_s_deadline_bounds_every_attempt() {
    let (server, channel) = start().await;
    server.plan(UNARY, vec![refuse(Code::Unavailable); 10]);
    let gave_up = GaveUp::default();
    // Waits of 400 ms ±20%: two fit in the caller's 1 s. Three near 320 ms
    // would fit too, so the jitter is seeded (the attempts run on this
    // thread): its first two waits come to 789 ms, and no third fits.
    backoff_runtime::testing::seed_thread_rng(9);
    let config = config(
        r#"{"maxAttempts": 5, "initialBackoff": "0.4s", "maxBackoff": "0.4s",
            "backoffMultiplier": 1, "retryableStatusCodes": ["UNAVAILABLE"]}"#,
    );
    let layer = GrpcRetryLayer::new(config).on_give_up(gave_up.hook());
    let mut client = Grpc::new(layer.layer(channel));
    client.ready().await.unwrap();
    let mut request = Request::new(Num { value: 1 });
    request.set_timeout(Duration::from_secs(1));
    let started = Instant::now();
    let error = client
        .unary(
            request,
            PathAndQuery::from_static(UNARY),
            ProstCodec::<Num, Num>::default(),
        )
        .await
        .unwrap_err();
    // The third wait would pass the deadline: the call ends at the
    // deadline with DEADLINE_EXCEEDED, as gRPC's clients end it, and says
    // what the last attempt ended with.
    assert_eq!(error.code(), Code::DeadlineExceeded);
    assert!(error.message().contains("UNAVAILABLE: planned"), "{}", error.message());
    let took = started.elapsed();
    assert!(
        (Duration::from_secs(1)..Duration::from_millis(1005)).contains(&took),
        "ended at the deadline: {took:?}"
    );
    let seen = server.seen(UNARY);
    assert_eq!(seen.len(), 3);
    assert_eq!(gave_up.reasons(), [StopReason::Deadline]);
    for attempt in &seen {
        // What is left, as the attempt's grpc-timeout, plus what passed: the one deadline.
        let passed = (attempt.at - seen[0].at).as_micros() as u64;
        let total = attempt.timeout_micros() + passed;
        assert!((995_000..=1_000_000).contains(&total), "{total} µs");
    }
}

#[tokio::test(start_paused = true)]
async fn the_shorter_of_the_caller_s_deadline_and_the_method_s_timeout_holds() {
    let (server, channel) = start().await;
    let config = ServiceConfig::from_json(&format!(
        r#"{{"methodConfig": [{{"name": [{{"service": "test.Planned"}}], "timeout": "2s", "retryPolicy": {UNAVAILABLE_5}}}]}}"#
    ))
    .unwrap();
    let mut client = Grpc::new(GrpcRetryLayer::new(config).layer(channel));
    for (asked, expected) in [(Duration::from_secs(1), 1_000_000), (Duration::from_secs(3), 2_000_000)] {
        client.ready().await.unwrap();
        let mut request = Request::new(Num { value: 1 });
        request.set_timeout(asked);
        client
            .unary(
                request,
                PathAndQuery::from_static(UNARY),
                ProstCodec::<Num, Num>::default(),
            )
            .await
            .unwrap();
        let sent = server.seen(UNARY).last().unwrap().timeout_micros();
        assert!(
            (expected - 5_000..=expected).contains(&sent),
            "asked {asked:?}: sent {sent} µs"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn a_call_sent_once_carries_the_shorter_of_the_caller_s_deadline_and_the_method_s_timeout() {
    let (server, channel) = start().await;
    let config =
        ServiceConfig::from_json(r#"{"methodConfig": [{"name": [{"service": "test.Planned"}], "timeout": "2s"}]}"#)
            .unwrap();
    let mut client = Grpc::new(GrpcRetryLayer::new(config).layer(channel));
    for (asked, expected) in [(Duration::from_secs(1), 1_000_000), (Duration::from_secs(3), 2_000_000)] {
        client.ready().await.unwrap();
        let mut request = Request::new(Num { value: 1 });
        request.set_timeout(asked);
        client
            .unary(
                request,
                PathAndQuery::from_static(UNARY),
                ProstCodec::<Num, Num>::default(),
            )
            .await
            .unwrap();
        let sent = server.seen(UNARY).last().unwrap().timeout_micros();
        assert!(
            (expected - 5_000..=expected).contains(&sent),
            "asked {asked:?}: sent {sent} µs"
        );
    }
    assert_eq!(server.attempts(UNARY), 2, "no retryPolicy: each call sent once");
}

/// A channel whose readiness fails the `n`th time it is asked (from 1).
#[derive(Clone)]
struct FailsReadiness {
    inner: Channel,
    asked: Arc<AtomicU32>,
    fails_at: u32,
}

impl Service<http::Request<Body>> for FailsReadiness {
    type Response = http::Response<Body>;
    type Error = tower::BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<http::Response<Body>, tower::BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        let asked = self.asked.fetch_add(1, Ordering::SeqCst) + 1;
        if asked == self.fails_at {
            return Poll::Ready(Err("not ready: connection lost".into()));
        }
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, request: http::Request<Body>) -> Self::Future {
        let response = self.inner.call(request);
        Box::pin(async move { response.await.map_err(Into::into) })
    }
}

#[tokio::test(start_paused = true)]
async fn a_resend_whose_channel_fails_to_be_ready_is_retried_as_unavailable() {
    let (server, channel) = start().await;
    server.plan(UNARY, vec![refuse(Code::Unavailable)]);
    let asked = Arc::new(AtomicU32::new(0));
    // The first readiness is the caller's; the second, the first resend's.
    let flaky = FailsReadiness {
        inner: channel,
        asked: Arc::clone(&asked),
        fails_at: 2,
    };
    let mut client = Grpc::new(GrpcRetryLayer::new(config(UNAVAILABLE_5)).layer(flaky));
    assert_eq!(unary(&mut client, UNARY, 4).await.unwrap(), 4);
    assert_eq!(server.attempts(UNARY), 2, "the resend that was not ready sent nothing");
    assert!(asked.load(Ordering::SeqCst) >= 3);
}

#[tokio::test(start_paused = true)]
async fn the_method_s_timeout_is_the_deadline_when_the_caller_sets_none() {
    let (server, channel) = start().await;
    server.plan(UNARY, vec![refuse(Code::Unavailable)]);
    let config = ServiceConfig::from_json(&format!(
        r#"{{"methodConfig": [{{"name": [{{"service": "test.Planned"}}], "timeout": "2s", "retryPolicy": {UNAVAILABLE_5}}}]}}"#
    ))
    .unwrap();
    let mut client = Grpc::new(GrpcRetryLayer::new(config).layer(channel));
    unary(&mut client, UNARY, 1).await.unwrap();
    let seen = server.seen(UNARY);
    assert_eq!(seen.len(), 2);
    assert!((1_995_000..=2_000_000).contains(&seen[0].timeout_micros()));
    let passed = (seen[1].at - seen[0].at).as_micros() as u64;
    assert!((1_995_000..=2_000_000).contains(&(seen[1].timeout_micros() + passed)));
}

#[tokio::test(start_paused = true)]
async fn a_server_stream_is_committed_at_its_first_message() {
    let (server, channel) = start().await;
    server.plan(WATCH, vec![Plan::Stream(vec![5], Code::Unavailable)]);
    let mut client = Grpc::new(GrpcRetryLayer::new(config(UNAVAILABLE_5)).layer(channel));
    client.ready().await.unwrap();
    let response = client
        .server_streaming(
            Request::new(Num { value: 1 }),
            PathAndQuery::from_static(WATCH),
            ProstCodec::<Num, Num>::default(),
        )
        .await
        .unwrap();
    let mut stream = response.into_inner();
    assert_eq!(stream.message().await.unwrap().unwrap().value, 5);
    assert_eq!(stream.message().await.unwrap_err().code(), Code::Unavailable);
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(server.attempts(WATCH), 1, "committed: never retried");
}

#[tokio::test(start_paused = true)]
async fn a_dropped_call_stops() {
    let (server, channel) = start().await;
    let cancelled = Arc::new(AtomicBool::new(false));
    server.plan(UNARY, vec![Plan::Hang(Arc::clone(&cancelled))]);
    let mut client = Grpc::new(GrpcRetryLayer::new(config(UNAVAILABLE_5)).layer(channel.clone()));
    let call = tokio::time::timeout(Duration::from_secs(1), unary(&mut client, UNARY, 1)).await;
    assert!(call.is_err(), "the call was still running, and is dropped");
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(cancelled.load(Ordering::SeqCst), "the attempt in flight is cancelled");

    // Dropped while waiting: no attempt follows.
    let slow = config(
        r#"{"maxAttempts": 5, "initialBackoff": "10s", "maxBackoff": "10s",
            "backoffMultiplier": 1, "retryableStatusCodes": ["UNAVAILABLE"]}"#,
    );
    server.plan(WATCH, vec![refuse(Code::Unavailable); 3]);
    let mut client = Grpc::new(GrpcRetryLayer::new(slow).layer(channel));
    let call = tokio::time::timeout(Duration::from_secs(1), unary(&mut client, WATCH, 1)).await;
    assert!(call.is_err());
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert_eq!(server.attempts(WATCH), 1);
}

#[tokio::test(start_paused = true)]
async fn a_buffered_layered_channel_serves_fifty_spawned_tasks() {
    let (server, channel) = start().await;
    server.plan(UNARY, vec![refuse(Code::Unavailable); 50]);
    let successes = Arc::new(AtomicU32::new(0));
    let counter = Arc::clone(&successes);
    let layer = GrpcRetryLayer::new(config(UNAVAILABLE_5)).on_success(move |_| {
        counter.fetch_add(1, Ordering::SeqCst);
    });
    let buffered = tower::buffer::Buffer::new(layer.layer(channel), 64);
    let tasks: Vec<_> = (0..50u64)
        .map(|value| {
            let mut client = Grpc::new(buffered.clone());
            tokio::spawn(async move { unary(&mut client, UNARY, value).await })
        })
        .collect();
    for (value, task) in (0..50u64).zip(tasks) {
        assert_eq!(task.await.unwrap().unwrap(), value);
    }
    assert_eq!(server.attempts(UNARY), 100, "each call failed once, then succeeded");
    assert_eq!(successes.load(Ordering::SeqCst), 50);
}

#[tokio::test(start_paused = true)]
async fn a_config_with_two_method_entries_and_a_service_default() {
    let (server, channel) = start().await;
    let config = ServiceConfig::from_json(
        r#"{"methodConfig": [
            {"name": [{"service": "test.Planned", "method": "Unary"}],
             "retryPolicy": {"maxAttempts": 2, "initialBackoff": "0.01s", "maxBackoff": "0.1s",
                             "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]}},
            {"name": [{"service": "test.Planned", "method": "Upload"}], "timeout": "5s"},
            {"name": [{"service": "test.Planned"}],
             "retryPolicy": {"maxAttempts": 4, "initialBackoff": "0.01s", "maxBackoff": "0.1s",
                             "backoffMultiplier": 2, "retryableStatusCodes": ["ABORTED"]}}
        ]}"#,
    )
    .unwrap();
    let mut client = Grpc::new(GrpcRetryLayer::new(config).layer(channel));
    // Its own entry: 2 attempts, UNAVAILABLE only.
    server.plan(UNARY, vec![refuse(Code::Unavailable); 5]);
    assert_eq!(
        unary(&mut client, UNARY, 1).await.unwrap_err().code(),
        Code::Unavailable
    );
    assert_eq!(server.attempts(UNARY), 2);
    // Its own entry, no retryPolicy: sent once, with the entry's timeout.
    server.plan(UPLOAD, vec![refuse(Code::Aborted)]);
    assert_eq!(upload(&mut client, nums([1])).await.unwrap_err().code(), Code::Aborted);
    assert_eq!(server.attempts(UPLOAD), 1);
    assert_eq!(
        server.seen(UPLOAD)[0].header("grpc-timeout").as_deref(),
        Some("5000000u")
    );
    // The service's default: ABORTED, 4 attempts; UNAVAILABLE not retried.
    const OTHER: &str = "/test.Planned/Other";
    server.plan(OTHER, vec![refuse(Code::Aborted); 5]);
    assert_eq!(unary(&mut client, OTHER, 1).await.unwrap_err().code(), Code::Aborted);
    assert_eq!(server.attempts(OTHER), 4);
    server.plan(WATCH, vec![refuse(Code::Unavailable)]);
    assert_eq!(
        unary(&mut client, WATCH, 1).await.unwrap_err().code(),
        Code::Unavailable
    );
    assert_eq!(server.attempts(WATCH), 1);
}

/// Up to 4 attempts, retrying `UNAVAILABLE`.
const UNAVAILABLE_4: &str = r#"{"maxAttempts": 4, "initialBackoff": "0.1s", "maxBackoff": "1s",
    "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]}"#;

/// A call at the call site, retried by the attribute, over a channel the
/// layer retries too.
#[backoff_runtime::retry(
    max_retries = 3,
    initial_backoff = "100ms",
    on_give_up = |_, give_up: &backoff_runtime::GiveUp| *reason.lock().unwrap() = Some(give_up.reason())
)]
async fn unary_retried_at_the_call<T>(client: &Grpc<T>, reason: &Mutex<Option<StopReason>>) -> Result<u64, Status>
where
    T: tonic::client::GrpcService<Body> + Clone,
    T::Error: Into<tonic::codegen::StdError>,
    T::ResponseBody: http_body::Body<Data = Bytes> + Send + 'static,
    <T::ResponseBody as http_body::Body>::Error: Into<tonic::codegen::StdError>,
{
    unary(&mut client.clone(), UNARY, 1).await
}

#[tokio::test(start_paused = true)]
async fn the_attribute_over_the_channel_layer_does_not_multiply_the_attempts() {
    let (server, channel) = start().await;
    server.plan(UNARY, vec![refuse(Code::Unavailable); 20]);
    let client = Grpc::new(GrpcRetryLayer::new(config(UNAVAILABLE_4)).layer(channel));
    let reason = Mutex::new(None);
    let status = unary_retried_at_the_call(&client, &reason).await.unwrap_err();
    assert_eq!(status.code(), Code::Unavailable);
    // maxAttempts 4 in the channel; the attribute above sees the layer give
    // up and retries nothing: 4 server calls, not 4 x 4 = 16.
    assert_eq!(server.attempts(UNARY), 4);
    assert_eq!(*reason.lock().unwrap(), Some(StopReason::RetriedBelow));
}

#[tokio::test(start_paused = true)]
async fn the_attribute_over_the_channel_layer_retries_a_committed_failure() {
    let (server, channel) = start().await;
    // Headers, then UNAVAILABLE in the trailers: the layer cannot retry it
    // (committed), and the attribute above may.
    server.plan(UNARY, vec![Plan::Stream(vec![], Code::Unavailable)]);
    let heard = Heard::default();
    let client = Grpc::new(heard.layer(GrpcRetryLayer::new(config(UNAVAILABLE_4))).layer(channel));
    let reason = Mutex::new(None);
    assert_eq!(unary_retried_at_the_call(&client, &reason).await.unwrap(), 1);
    assert_eq!(
        server.attempts(UNARY),
        2,
        "one committed attempt, and the attribute's retry"
    );
    assert_eq!(
        heard.gave_up(),
        [(StopReason::Committed, Some(Code::Unavailable as i32))]
    );
    assert_eq!(*reason.lock().unwrap(), None, "the attribute's retry succeeded");
}

#[tokio::test(start_paused = true)]
async fn a_call_sent_once_feeds_the_throttle_at_its_status() {
    let (server, channel) = start().await;
    let config = ServiceConfig::from_json(&format!(
        r#"{{"methodConfig": [{{"name": [{{"service": "test.Planned", "method": "Unary"}}], "retryPolicy": {UNAVAILABLE_5}}}]}}"#
    ))
    .unwrap();
    let throttle = Arc::new(RetryThrottle::new(10, 0.5));
    for _ in 0..4 {
        backoff_runtime::limits::RetryLimit::failed(&*throttle);
    }
    let layer = GrpcRetryLayer::new(config)
        .throttle(Arc::clone(&throttle))
        .replay_limits(ReplayLimits::new().per_call(4));
    let mut client = Grpc::new(layer.clone().layer(channel.clone()));
    // A method without a policy, committed: a refusing pushback in its
    // trailers takes a token, another failure nothing, an OK gives 0.5.
    server.plan(
        PLAIN,
        vec![
            Plan::StreamPushback(Code::Unavailable, "-1"),
            Plan::Stream(vec![], Code::Unavailable),
        ],
    );
    assert!(unary(&mut client, PLAIN, 1).await.is_err());
    assert_eq!(throttle.tokens(), 5.0);
    assert!(unary(&mut client, PLAIN, 1).await.is_err());
    assert_eq!(throttle.tokens(), 5.0);
    assert_eq!(unary(&mut client, PLAIN, 2).await.unwrap(), 2);
    assert_eq!(throttle.tokens(), 5.5);
    // A retried method's call whose body is over the cap from the start
    // (10 bytes against 4) is sent once, and fed to the throttle too.
    let mut service = layer.layer(channel);
    let request = http::Request::post(format!("http://test{UNARY}"))
        .header("content-type", "application/grpc")
        .body(Body::new(http_body_util::Full::new(framed(3))))
        .unwrap();
    tower::ServiceExt::ready(&mut service).await.unwrap();
    let response = service.call(request).await.unwrap();
    let _ = response.into_body().collect().await.unwrap();
    assert_eq!(throttle.tokens(), 6.0);
    assert_eq!(server.attempts(UNARY), 1);
}

// ---- hedging (A6's `hedgingPolicy`) --------------------------------------

/// A config hedging every method of `test.Planned` by this policy.
fn hedging(policy: &str) -> ServiceConfig {
    ServiceConfig::from_json(&format!(
        r#"{{"methodConfig": [{{"name": [{{"service": "test.Planned"}}], "hedgingPolicy": {policy}}}]}}"#
    ))
    .unwrap()
}

/// Up to 3 attempts, a hedge every 50 ms, `UNAVAILABLE` not fatal.
const HEDGED_3: &str = r#"{"maxAttempts": 3, "hedgingDelay": "0.05s", "nonFatalStatusCodes": ["UNAVAILABLE"]}"#;

/// The instants the server saw the attempts at, from the first.
fn offsets(seen: &[Seen]) -> Vec<Duration> {
    seen.iter().map(|attempt| attempt.at - seen[0].at).collect()
}

#[tokio::test(start_paused = true)]
async fn a_hedge_is_sent_after_the_delay_and_the_first_answer_wins() {
    let (server, channel) = start().await;
    let cancelled = Arc::new(AtomicBool::new(false));
    server.plan(
        UNARY,
        vec![
            Plan::Hang(Arc::clone(&cancelled)),
            Plan::Slow(Duration::from_millis(10)),
        ],
    );
    let mut client = Grpc::new(GrpcRetryLayer::new(hedging(HEDGED_3)).layer(channel));
    let started = Instant::now();
    assert_eq!(unary(&mut client, UNARY, 4).await.unwrap(), 4);
    let took = started.elapsed();
    assert!(
        (Duration::from_millis(60)..Duration::from_millis(65)).contains(&took),
        "{took:?}"
    );
    let seen = server.seen(UNARY);
    assert_eq!(seen.len(), 2);
    let gap = offsets(&seen)[1];
    assert!(
        (Duration::from_millis(50)..Duration::from_millis(52)).contains(&gap),
        "{gap:?}"
    );
    assert_eq!(seen[1].header("grpc-previous-rpc-attempts").as_deref(), Some("1"));
    tokio::time::sleep(Duration::from_millis(5)).await;
    assert!(cancelled.load(Ordering::SeqCst), "the slow attempt is cancelled");
}

#[tokio::test(start_paused = true)]
async fn a_non_fatal_status_sends_the_next_hedge_at_once() {
    let (server, channel) = start().await;
    server.plan(UNARY, vec![refuse(Code::Unavailable)]);
    let mut client = Grpc::new(GrpcRetryLayer::new(hedging(HEDGED_3)).layer(channel));
    assert_eq!(unary(&mut client, UNARY, 2).await.unwrap(), 2);
    let seen = server.seen(UNARY);
    assert_eq!(seen.len(), 2);
    assert!(offsets(&seen)[1] < Duration::from_millis(2), "at once, not after 50 ms");
}

#[tokio::test(start_paused = true)]
async fn a_fatal_status_ends_the_call_and_cancels_the_hedges() {
    let (server, channel) = start().await;
    let cancelled = Arc::new(AtomicBool::new(false));
    server.plan(
        UNARY,
        vec![
            Plan::Hang(Arc::clone(&cancelled)),
            Plan::Refuse(Status::invalid_argument("bad"), Vec::new()),
        ],
    );
    let heard = Heard::default();
    let mut client = Grpc::new(heard.layer(GrpcRetryLayer::new(hedging(HEDGED_3))).layer(channel));
    assert_eq!(
        unary(&mut client, UNARY, 1).await.unwrap_err().code(),
        Code::InvalidArgument
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(server.attempts(UNARY), 2, "no third hedge after the fatal status");
    assert!(cancelled.load(Ordering::SeqCst));
    assert_eq!(
        heard.gave_up(),
        [(StopReason::Permanent, Some(Code::InvalidArgument as i32))]
    );
}

#[tokio::test(start_paused = true)]
async fn a_pushback_sets_the_next_hedge_and_a_refusing_one_stops_them() {
    let (server, channel) = start().await;
    let long = r#"{"maxAttempts": 3, "hedgingDelay": "1s", "nonFatalStatusCodes": ["UNAVAILABLE"]}"#;
    // 300 ms of pushback: the next hedge 300 ms later, not after the 1 s delay.
    server.plan(UNARY, vec![pushback("300")]);
    let mut client = Grpc::new(GrpcRetryLayer::new(hedging(long)).layer(channel.clone()));
    assert_eq!(unary(&mut client, UNARY, 3).await.unwrap(), 3);
    let gap = offsets(&server.seen(UNARY))[1];
    assert!(
        (Duration::from_millis(300)..Duration::from_millis(303)).contains(&gap),
        "{gap:?}"
    );
    // A refusing pushback: no more hedges; the call ends with it.
    server.plan(PLAIN, vec![pushback("-1")]);
    let mut client = Grpc::new(GrpcRetryLayer::new(hedging(long)).layer(channel));
    assert_eq!(
        unary(&mut client, PLAIN, 1).await.unwrap_err().code(),
        Code::Unavailable
    );
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(server.attempts(PLAIN), 1);
}

/// A refusing pushback on one hedge while another runs: no attempt follows
/// any more, so the other's later failure ends the call (A6).
#[tokio::test(start_paused = true)]
async fn after_a_refusing_pushback_no_attempt_follows_the_others_failures() {
    let (server, channel) = start().await;
    server.plan(
        UNARY,
        vec![
            Plan::Late(Duration::from_millis(200), Code::Unavailable),
            pushback("-1"),
        ],
    );
    let mut client = Grpc::new(GrpcRetryLayer::new(hedging(HEDGED_3)).layer(channel));
    let error = unary(&mut client, UNARY, 1).await.unwrap_err();
    assert_eq!((error.code(), error.message()), (Code::Unavailable, "late"));
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(server.attempts(UNARY), 2, "no third attempt after the refusal");
}

#[tokio::test(start_paused = true)]
async fn every_attempt_failing_returns_the_last_failure_after_max_attempts() {
    let (server, channel) = start().await;
    server.plan(
        UNARY,
        vec![
            Plan::Refuse(Status::unavailable("first"), Vec::new()),
            Plan::Refuse(Status::unavailable("second"), Vec::new()),
            Plan::Refuse(Status::unavailable("third"), Vec::new()),
        ],
    );
    let heard = Heard::default();
    let mut client = Grpc::new(heard.layer(GrpcRetryLayer::new(hedging(HEDGED_3))).layer(channel));
    let error = unary(&mut client, UNARY, 1).await.unwrap_err();
    assert_eq!((error.code(), error.message()), (Code::Unavailable, "third"));
    assert_eq!(server.attempts(UNARY), 3);
    assert_eq!(
        heard.gave_up(),
        [(StopReason::Exhausted, Some(Code::Unavailable as i32))]
    );
}

#[tokio::test(start_paused = true)]
async fn the_throttle_is_asked_before_each_hedge_and_a_lone_failure_ends_at_once() {
    let (server, channel) = start().await;
    let throttle = Arc::new(RetryThrottle::new(4, 0.1));
    let layer = GrpcRetryLayer::new(hedging(HEDGED_3)).throttle(Arc::clone(&throttle));
    let mut client = Grpc::new(layer.layer(channel));
    // A failure: 4 -> 3, the next hedge goes at once, and its OK gives 0.1.
    server.plan(UNARY, vec![refuse(Code::Unavailable)]);
    assert_eq!(unary(&mut client, UNARY, 1).await.unwrap(), 1);
    assert_eq!(server.attempts(UNARY), 2);
    // Two more: 3.1 -> 2.1 (above half: the next at once) -> 1.1 (not:
    // no third attempt).
    server.plan(UNARY, vec![refuse(Code::Unavailable), refuse(Code::Unavailable)]);
    assert_eq!(
        unary(&mut client, UNARY, 1).await.unwrap_err().code(),
        Code::Unavailable
    );
    assert_eq!(server.attempts(UNARY), 4);
    assert!((throttle.tokens() - 1.1).abs() < 1e-9, "{}", throttle.tokens());
    // Below half the bucket, a slow first attempt gets no hedge.
    server.plan(UNARY, vec![Plan::Slow(Duration::from_millis(200))]);
    unary(&mut client, UNARY, 1).await.unwrap();
    assert_eq!(server.attempts(UNARY), 5, "no hedge under the throttle");
    // A failure with nothing else in flight ends the call at once, never
    // at its deadline (grpc-java#7222).
    server.plan(UNARY, vec![refuse(Code::Unavailable)]);
    let mut request = Request::new(Num { value: 1 });
    request.set_timeout(Duration::from_secs(30));
    client.ready().await.unwrap();
    let started = Instant::now();
    let error = client
        .unary(
            request,
            PathAndQuery::from_static(UNARY),
            ProstCodec::<Num, Num>::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(error.code(), Code::Unavailable);
    assert!(started.elapsed() < Duration::from_millis(5));
}

#[tokio::test(start_paused = true)]
async fn a_zero_delay_sends_every_attempt_at_once_and_max_attempts_is_capped_at_five() {
    let (server, channel) = start().await;
    let flags: Vec<_> = (0..6).map(|_| Arc::new(AtomicBool::new(false))).collect();
    let mut plans: Vec<Plan> = flags.iter().take(4).map(|flag| Plan::Hang(Arc::clone(flag))).collect();
    plans.push(Plan::Slow(Duration::from_millis(10)));
    server.plan(UNARY, plans);
    let policy = r#"{"maxAttempts": 9, "nonFatalStatusCodes": ["UNAVAILABLE"]}"#;
    let mut client = Grpc::new(GrpcRetryLayer::new(hedging(policy)).layer(channel));
    assert_eq!(unary(&mut client, UNARY, 5).await.unwrap(), 5);
    let seen = server.seen(UNARY);
    assert_eq!(seen.len(), 5, "maxAttempts 9 counts as 5");
    assert!(offsets(&seen).iter().all(|offset| *offset < Duration::from_millis(2)));
}

#[tokio::test(start_paused = true)]
async fn response_headers_commit_the_attempt_that_sent_them() {
    let (server, channel) = start().await;
    let cancelled = Arc::new(AtomicBool::new(false));
    // The first attempt hangs; the hedge answers with headers, a message
    // and then UNAVAILABLE in its trailers: committed, never hedged again.
    server.plan(
        UNARY,
        vec![
            Plan::Hang(Arc::clone(&cancelled)),
            Plan::Stream(vec![9], Code::Unavailable),
        ],
    );
    let heard = Heard::default();
    let mut client = Grpc::new(heard.layer(GrpcRetryLayer::new(hedging(HEDGED_3))).layer(channel));
    assert_eq!(
        unary(&mut client, UNARY, 1).await.unwrap_err().code(),
        Code::Unavailable
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(server.attempts(UNARY), 2);
    assert!(
        cancelled.load(Ordering::SeqCst),
        "the other attempt was cancelled at the commit"
    );
    assert_eq!(
        heard.gave_up(),
        [(StopReason::Committed, Some(Code::Unavailable as i32))]
    );
}

#[tokio::test(start_paused = true)]
async fn every_hedge_of_a_client_stream_gets_the_whole_body() {
    let (server, channel) = start().await;
    let config = hedging(r#"{"maxAttempts": 2, "hedgingDelay": "0.05s"}"#);
    server.plan(UPLOAD, vec![Plan::Slow(Duration::from_secs(5))]);
    let mut client = Grpc::new(GrpcRetryLayer::new(config).layer(channel));
    // One message every 30 ms: the hedge starts at 50 ms, while the first
    // attempt is still sending.
    let slow = futures_util::stream::unfold(1_u64, |value| async move {
        (value <= 3).then_some(())?;
        if value > 1 {
            tokio::time::sleep(Duration::from_millis(30)).await;
        }
        Some((Num { value }, value + 1))
    });
    assert_eq!(upload(&mut client, slow).await.unwrap(), 6);
    let seen = server.seen(UPLOAD);
    assert_eq!(seen.len(), 2);
    assert!(offsets(&seen)[1] < Duration::from_millis(60), "sent mid-stream");
    assert_eq!(seen[1].values, [1, 2, 3], "the hedge sent every message, once");
    assert_eq!(
        seen[0].values,
        [1, 2, 3],
        "the first attempt was fed to the end, not superseded"
    );
}

#[test]
fn a_method_with_both_policies_is_a_config_error_that_names_the_field() {
    let error = ServiceConfig::from_json(&format!(
        r#"{{"methodConfig": [{{"name": [{{}}], "retryPolicy": {UNAVAILABLE_5}, "hedgingPolicy": {HEDGED_3}}}]}}"#
    ))
    .unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("methodConfig[0].hedgingPolicy: must not be set with retryPolicy"),
        "{error}"
    );
}

/// A `Keyed` breaker in the layer's `admission`: one per method, so the
/// method that fails opens only its own; a refused call ends `UNAVAILABLE`
/// with the breaker's words and its time left as pushback, unsent.
#[tokio::test(start_paused = true)]
async fn a_breaker_per_method_shuts_only_the_failing_method() {
    use backoff_runtime::limits::{CircuitBreaker, CircuitState, Keyed};
    let (server, channel) = start().await;
    server.plan(UNARY, vec![refuse(Code::Unavailable); 10]);
    let per_method = Arc::new(Keyed::new(|_| CircuitBreaker::new().consecutive_failures(2)).name("methods"));
    let gave_up = GaveUp::default();
    let layer = GrpcRetryLayer::new(config(UNAVAILABLE_5))
        .admission(Arc::clone(&per_method))
        .on_give_up(gave_up.hook());
    let mut client = Grpc::new(layer.layer(channel));
    let status = unary(&mut client, UNARY, 1).await.unwrap_err();
    assert_eq!(status.code(), Code::Unavailable);
    assert!(status.message().contains("circuit breaker \"methods\""), "{status:?}");
    let pushback: u64 = status
        .metadata()
        .get("grpc-retry-pushback-ms")
        .unwrap()
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    // The 5 s break, less the refused retry's wait (A6's second backoff: 160 to 240 ms).
    assert!(
        (4_760..=4_840).contains(&pushback),
        "the break left, as the pushback: {pushback} ms"
    );
    assert_eq!(
        server.attempts(UNARY),
        2,
        "two failures opened it; the third attempt was refused"
    );
    assert_eq!(gave_up.reasons(), [StopReason::Refused]);
    assert_eq!(per_method.get(UNARY).state(), CircuitState::Open);
    // Another method of the same service still goes.
    server.plan(WATCH, vec![]);
    assert_eq!(unary(&mut client, WATCH, 3).await.unwrap(), 3);
    assert_eq!(per_method.get(WATCH).state(), CircuitState::Closed);
    // The failing method is refused before the server.
    assert!(unary(&mut client, UNARY, 1).await.is_err());
    assert_eq!(server.attempts(UNARY), 2);
}

/// A6: past the replay cap, a hedged call is committed to the attempt that
/// has sent the most. The hedge behind loses its body; its failure does not
/// end the call, and no further hedge starts.
#[tokio::test(start_paused = true)]
async fn past_the_cap_a_hedged_call_is_committed_to_the_attempt_ahead() {
    let (server, channel) = start().await;
    let config = hedging(r#"{"maxAttempts": 3, "hedgingDelay": "0.05s"}"#);
    server.plan(UPLOAD, vec![Plan::Slow(Duration::from_secs(5)); 3]);
    let layer = GrpcRetryLayer::new(config).replay_limits(backoff_tower::ReplayLimits::new().per_call(16));
    let mut client = Grpc::new(layer.layer(channel));
    // One message every 30 ms, 7 bytes each: the hedge starts at 50 ms with
    // 14 bytes kept; the third message, at 60 ms, is past the 16-byte cap.
    let slow = futures_util::stream::unfold(1_u64, |value| async move {
        (value <= 3).then_some(())?;
        if value > 1 {
            tokio::time::sleep(Duration::from_millis(30)).await;
        }
        Some((Num { value }, value + 1))
    });
    assert_eq!(
        upload(&mut client, slow).await.unwrap(),
        6,
        "the attempt ahead answers the call"
    );
    let seen = server.seen(UPLOAD);
    assert_eq!(seen.len(), 2, "no hedge after the cap: {seen:?}");
    assert!(seen.iter().any(|attempt| attempt.values == [1, 2, 3]), "{seen:?}");
}

/// A committed call's attempt ends for the admission limiter at its
/// trailers' status; a response body dropped before them ends it as
/// abandoned: a half-open breaker's probe is not held for good.
#[tokio::test(start_paused = true)]
async fn a_body_dropped_before_its_trailers_ends_the_attempt_as_abandoned() {
    use backoff_runtime::limits::{Admission, AdmissionLimit, AdmissionRequest, AttemptEnd, Ending};

    /// Records the ending of every attempt it admits.
    #[derive(Default)]
    struct Endings(Mutex<Vec<Ending>>);

    impl AdmissionLimit for Endings {
        fn admit(&self, _: AdmissionRequest<'_>) -> Admission {
            Admission::Go
        }

        fn observed(&self, end: AttemptEnd<'_>) {
            self.0.lock().unwrap().push(end.ending());
        }
    }

    let (server, channel) = start().await;
    let endings = Arc::new(Endings::default());
    let layer = GrpcRetryLayer::new(config(UNAVAILABLE_5)).admission(Arc::clone(&endings));
    let mut service = layer.layer(channel);
    // Headers and a message commit the call; its OK comes in the trailers.
    server.plan(UNARY, vec![Plan::Stream(vec![7], Code::Ok)]);
    tower::ServiceExt::ready(&mut service).await.unwrap();
    let response = service.call(unary_request(1)).await.unwrap();
    assert!(endings.0.lock().unwrap().is_empty(), "nothing heard at the headers");
    drop(response);
    assert_eq!(*endings.0.lock().unwrap(), [Ending::Abandoned]);
    // Read to its trailers, the next call's attempt is heard as answered.
    server.plan(UNARY, vec![Plan::Stream(vec![8], Code::Ok)]);
    tower::ServiceExt::ready(&mut service).await.unwrap();
    let response = service.call(unary_request(2)).await.unwrap();
    let _ = response.into_body().collect().await.unwrap();
    assert_eq!(*endings.0.lock().unwrap(), [Ending::Abandoned, Ending::Answered]);
}

/// Three attempts at 0, 51 and 102 ms, all slower than the caller's
/// 150 ms deadline: tonic's channel cancels each at the deadline, and the
/// call ends `DEADLINE_EXCEEDED` there, as A6 ends it, whichever attempt
/// was last. The give-up event says the deadline.
#[tokio::test(start_paused = true)]
async fn a_deadline_reached_while_hedges_run_ends_the_call_deadline_exceeded() {
    let (server, channel) = start().await;
    server.plan(UNARY, vec![Plan::Slow(Duration::from_secs(1)); 3]);
    let policy = r#"{"maxAttempts": 3, "hedgingDelay": "0.051s", "nonFatalStatusCodes": ["UNAVAILABLE"]}"#;
    let heard = Heard::default();
    let mut client = Grpc::new(heard.layer(GrpcRetryLayer::new(hedging(policy))).layer(channel));
    client.ready().await.unwrap();
    let mut request = Request::new(Num { value: 1 });
    request.set_timeout(Duration::from_millis(150));
    let started = Instant::now();
    let error = client
        .unary(
            request,
            PathAndQuery::from_static(UNARY),
            ProstCodec::<Num, Num>::default(),
        )
        .await
        .unwrap_err();
    let took = started.elapsed();
    assert_eq!(error.code(), Code::DeadlineExceeded, "{error:?}");
    assert!(
        (Duration::from_millis(150)..Duration::from_millis(152)).contains(&took),
        "at the deadline: {took:?}"
    );
    let at = offsets(&server.seen(UNARY));
    assert_eq!(at.len(), 3, "every attempt was sent: {at:?}");
    assert!(at[2] < Duration::from_millis(105), "{at:?}");
    assert_eq!(heard.gave_up().len(), 1);
    assert_eq!(heard.gave_up()[0].0, StopReason::Deadline);
}

/// The same with a retry policy: the last attempt, cancelled by the
/// channel at the deadline, ends the call `DEADLINE_EXCEEDED`, not with
/// the channel's `CANCELLED`.
#[tokio::test(start_paused = true)]
async fn a_last_retry_cut_by_the_deadline_ends_the_call_deadline_exceeded() {
    let (server, channel) = start().await;
    server.plan(
        UNARY,
        vec![refuse(Code::Unavailable), Plan::Slow(Duration::from_secs(1))],
    );
    let policy = r#"{"maxAttempts": 2, "initialBackoff": "0.01s", "maxBackoff": "0.01s",
        "backoffMultiplier": 1, "retryableStatusCodes": ["UNAVAILABLE"]}"#;
    let mut client = Grpc::new(GrpcRetryLayer::new(config(policy)).layer(channel));
    client.ready().await.unwrap();
    let mut request = Request::new(Num { value: 1 });
    request.set_timeout(Duration::from_millis(150));
    let error = client
        .unary(
            request,
            PathAndQuery::from_static(UNARY),
            ProstCodec::<Num, Num>::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(error.code(), Code::DeadlineExceeded, "{error:?}");
    assert_eq!(server.attempts(UNARY), 2);
}

/// A6's exposed retry metadata: the answer the caller gets carries
/// `grpc-previous-rpc-attempts`, the attempts made before the one that
/// answered; a first attempt's answer carries none.
#[tokio::test(start_paused = true)]
async fn the_answer_carries_the_attempts_made_before_it() {
    let (server, channel) = start().await;
    let cancelled = Arc::new(AtomicBool::new(false));
    server.plan(
        UNARY,
        vec![
            Plan::Hang(Arc::clone(&cancelled)),
            Plan::Slow(Duration::from_millis(10)),
        ],
    );
    let mut client = Grpc::new(GrpcRetryLayer::new(hedging(HEDGED_3)).layer(channel.clone()));
    let previous = |metadata: &tonic::metadata::MetadataMap| {
        metadata
            .get("grpc-previous-rpc-attempts")
            .map(|value| value.to_str().unwrap().to_owned())
    };
    client.ready().await.unwrap();
    let answer = client
        .unary(
            Request::new(Num { value: 4 }),
            PathAndQuery::from_static(UNARY),
            ProstCodec::<Num, Num>::default(),
        )
        .await
        .unwrap();
    assert_eq!(previous(answer.metadata()).as_deref(), Some("1"), "the hedge answered");
    // Retried twice, then answered.
    let mut client = Grpc::new(GrpcRetryLayer::new(config(UNAVAILABLE_5)).layer(channel.clone()));
    client.ready().await.unwrap();
    server.plan(UNARY, vec![refuse(Code::Unavailable), refuse(Code::Unavailable)]);
    let answer = client
        .unary(
            Request::new(Num { value: 4 }),
            PathAndQuery::from_static(UNARY),
            ProstCodec::<Num, Num>::default(),
        )
        .await
        .unwrap();
    assert_eq!(
        previous(answer.metadata()).as_deref(),
        Some("2"),
        "the third attempt answered"
    );
    // Every attempt failed: the last Trailers-Only status carries 2.
    let policy = r#"{"maxAttempts": 3, "initialBackoff": "0.01s", "maxBackoff": "0.01s",
        "backoffMultiplier": 1, "retryableStatusCodes": ["UNAVAILABLE"]}"#;
    let mut client = Grpc::new(GrpcRetryLayer::new(config(policy)).layer(channel.clone()));
    client.ready().await.unwrap();
    server.plan(UNARY, vec![refuse(Code::Unavailable); 3]);
    let status = client
        .unary(
            Request::new(Num { value: 4 }),
            PathAndQuery::from_static(UNARY),
            ProstCodec::<Num, Num>::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(previous(status.metadata()).as_deref(), Some("2"), "the last failure's");
    // Answered at once: no header.
    client.ready().await.unwrap();
    let answer = client
        .unary(
            Request::new(Num { value: 4 }),
            PathAndQuery::from_static(UNARY),
            ProstCodec::<Num, Num>::default(),
        )
        .await
        .unwrap();
    assert_eq!(previous(answer.metadata()), None);
}

/// The gRPC layer's events mean what the other front ends' do: three
/// attempts that each fail at once (`all_nonfatal_fast`) are two hedges,
/// as A96's `grpc.client.call.hedges` counts them, and two retries.
#[tokio::test(start_paused = true)]
async fn every_attempt_after_the_first_of_a_hedged_call_is_a_hedge_in_its_events() {
    let (server, channel) = start().await;
    server.plan(UNARY, vec![refuse(Code::Unavailable); 3]);
    let hedges = Arc::new(Mutex::new(Vec::new()));
    let heard = Heard::default();
    let counted = Arc::clone(&hedges);
    let layer = heard
        .layer(GrpcRetryLayer::new(hedging(HEDGED_3)))
        .on_give_up(move |give_up| counted.lock().unwrap().push((give_up.attempts(), give_up.hedges())));
    let mut client = Grpc::new(layer.layer(channel));
    assert_eq!(
        unary(&mut client, UNARY, 1).await.unwrap_err().code(),
        Code::Unavailable
    );
    assert_eq!(*hedges.lock().unwrap(), [(3, 2)]);
    assert_eq!(
        heard.retried.lock().unwrap().len(),
        2,
        "one on_retry per failure followed"
    );
}
