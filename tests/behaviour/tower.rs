//! The tower layer against a real axum server on loopback, through
//! hyper-util's client (a tower `Service`): statuses and `Retry-After`,
//! idempotency (a `POST` without a key is sent once; with one, or with the
//! layer adding one, it is retried under the same key), a budget shared by
//! two services, and cancellation; then the layer over inner services with
//! real readiness (`ConcurrencyLimit`, behind `Buffer` from spawned tasks),
//! and a classification of one's own that relies on `Classify`'s defaults.
//! Tokio's clock is paused: the waits take no real time, and the server's
//! arrival times are read on the same clock.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::any;
use backoff_runtime::limits::{CircuitBreaker, RetryBudget};
use backoff_runtime::{Attempt, Policy, StopReason};
use backoff_tower::{Classify, RetryLayer};
use bytes::Bytes;
use http::{Method, Request};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use tokio::time::Instant;
use tower::{Layer, ServiceExt};

const POLICY: Policy = Policy::new()
    .max_retries(4)
    .initial_backoff(Duration::from_millis(100))
    .max_backoff(Duration::from_secs(5));

/// A planned answer: the status and the `Retry-After`.
type Answer = (u16, Option<&'static str>);
/// When a request came, and its `Idempotency-Key`.
type Seen = (Instant, Option<String>);

/// What the server saw of one path: when each request came, and its
/// `Idempotency-Key`.
#[derive(Clone, Default)]
struct Server {
    /// Per path: the statuses (and `Retry-After`) to answer, in order; then 200.
    plans: Arc<Mutex<HashMap<String, Vec<Answer>>>>,
    seen: Arc<Mutex<HashMap<String, Vec<Seen>>>>,
}

impl Server {
    async fn start() -> (Server, String) {
        let server = Server::default();
        let app = Router::new().route("/{id}", any(answer)).with_state(server.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        (server, base)
    }

    fn plan(&self, id: &str, answers: &[Answer]) {
        self.plans.lock().unwrap().insert(id.to_owned(), answers.to_vec());
    }

    fn seen(&self, id: &str) -> Vec<Seen> {
        self.seen.lock().unwrap().get(id).cloned().unwrap_or_default()
    }
}

async fn answer(
    State(server): State<Server>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> (StatusCode, HeaderMap, String) {
    let key = headers
        .get("idempotency-key")
        .map(|value| value.to_str().unwrap().to_owned());
    let n = {
        let mut seen = server.seen.lock().unwrap();
        let requests = seen.entry(id.clone()).or_default();
        requests.push((Instant::now(), key));
        requests.len()
    };
    let planned = server
        .plans
        .lock()
        .unwrap()
        .get(&id)
        .and_then(|plan| plan.get(n - 1).copied());
    let (status, hint) = planned.unwrap_or((200, None));
    let mut headers = HeaderMap::new();
    if let Some(hint) = hint {
        headers.insert("retry-after", hint.parse().unwrap());
    }
    (StatusCode::from_u16(status).unwrap(), headers, format!("{id} #{n}"))
}

type HttpClient = Client<HttpConnector, Full<Bytes>>;

fn client() -> HttpClient {
    Client::builder(TokioExecutor::new()).build_http()
}

fn request(method: Method, url: &str) -> Request<Full<Bytes>> {
    Request::builder()
        .method(method)
        .uri(url)
        .body(Full::new(Bytes::new()))
        .unwrap()
}

async fn body_text(response: http::Response<hyper::body::Incoming>) -> (u16, String) {
    let status = response.status().as_u16();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8(body.to_vec()).unwrap())
}

#[tokio::test(start_paused = true)]
async fn a_503_twice_then_200_waits_the_server_s_retry_after() {
    let (server, base) = Server::start().await;
    server.plan("flaky", &[(503, None), (503, Some("2")), (200, None)]);
    let service = RetryLayer::new(POLICY).layer(client());

    let response = service
        .oneshot(request(Method::GET, &format!("{base}/flaky")))
        .await
        .unwrap();
    assert_eq!(body_text(response).await, (200, "flaky #3".to_owned()));
    let seen = server.seen("flaky");
    assert_eq!(seen.len(), 3);
    let hinted = seen[2].0 - seen[1].0;
    assert!(
        (Duration::from_secs(2)..Duration::from_millis(2100)).contains(&hinted),
        "the second wait is the server's 2 s: {hinted:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn the_last_response_comes_back_when_the_retries_end() {
    let (server, base) = Server::start().await;
    server.plan("down", &[(503, None); 10]);
    let gave_up = Arc::new(Mutex::new(None));
    let reason = Arc::clone(&gave_up);
    let service = RetryLayer::new(POLICY.max_retries(2))
        .on_give_up(move |give_up| *reason.lock().unwrap() = Some(give_up.reason()))
        .layer(client());

    let response = service
        .oneshot(request(Method::GET, &format!("{base}/down")))
        .await
        .unwrap();
    assert_eq!(body_text(response).await, (503, "down #3".to_owned()));
    assert_eq!(*gave_up.lock().unwrap(), Some(StopReason::Exhausted));
}

#[tokio::test(start_paused = true)]
async fn a_client_error_is_answered_after_one_request() {
    let (server, base) = Server::start().await;
    server.plan("missing", &[(404, None)]);
    let service = RetryLayer::new(POLICY).layer(client());
    let response = service
        .oneshot(request(Method::GET, &format!("{base}/missing")))
        .await
        .unwrap();
    assert_eq!(response.status(), 404);
    assert_eq!(server.seen("missing").len(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_post_without_an_idempotency_key_is_sent_once() {
    let (server, base) = Server::start().await;
    server.plan("pay", &[(503, None), (200, None)]);
    let service = RetryLayer::new(POLICY).layer(client());
    let response = service
        .oneshot(request(Method::POST, &format!("{base}/pay")))
        .await
        .unwrap();
    assert_eq!(response.status(), 503);
    assert_eq!(server.seen("pay").len(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_post_with_an_idempotency_key_is_retried_under_its_key() {
    let (server, base) = Server::start().await;
    server.plan("pay", &[(503, None), (200, None)]);
    let service = RetryLayer::new(POLICY).layer(client());
    let mut keyed = request(Method::POST, &format!("{base}/pay"));
    keyed
        .headers_mut()
        .insert("idempotency-key", "order-17".parse().unwrap());
    let response = service.oneshot(keyed).await.unwrap();
    assert_eq!(response.status(), 200);
    let keys: Vec<Option<String>> = server.seen("pay").into_iter().map(|(_, key)| key).collect();
    assert_eq!(keys, [Some("order-17".to_owned()), Some("order-17".to_owned())]);
}

#[tokio::test(start_paused = true)]
async fn the_layer_adds_one_key_per_call_when_asked() {
    let (server, base) = Server::start().await;
    server.plan(
        "pay",
        &[(503, None), (503, None), (200, None), (503, None), (200, None)],
    );
    let service = RetryLayer::new(POLICY).idempotency_key().layer(client());
    for _ in 0..2 {
        let response = service
            .clone()
            .oneshot(request(Method::POST, &format!("{base}/pay")))
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
    }
    let keys: Vec<String> = server.seen("pay").into_iter().map(|(_, key)| key.unwrap()).collect();
    assert_eq!(keys.len(), 5);
    assert!(
        keys[..3].iter().all(|key| *key == keys[0]),
        "one key for the first call's attempts: {keys:?}"
    );
    assert_eq!(keys[3], keys[4]);
    assert_ne!(keys[0], keys[3], "a new call, a new key");
    assert_eq!(keys[0].len(), 36, "a UUID: {}", keys[0]);
}

#[tokio::test(start_paused = true)]
async fn a_budget_is_shared_by_two_services() {
    let (server, base) = Server::start().await;
    server.plan("a", &[(503, None); 50]);
    server.plan("b", &[(503, None); 50]);
    // A floor of one retry in the window, no share of the calls: the two
    // services together get one retry.
    let budget = Arc::new(
        RetryBudget::new()
            .ratio(0.0)
            .min_per_second(1)
            .window(Duration::from_secs(1)),
    );
    let layer = RetryLayer::new(POLICY).budget(Arc::clone(&budget));
    let first = layer.layer(client());
    let second = layer.clone().layer(client());

    let response = first.oneshot(request(Method::GET, &format!("{base}/a"))).await.unwrap();
    assert_eq!(response.status(), 503);
    let response = second
        .oneshot(request(Method::GET, &format!("{base}/b")))
        .await
        .unwrap();
    assert_eq!(response.status(), 503);
    assert_eq!(
        server.seen("a").len() + server.seen("b").len(),
        3,
        "two first attempts and one retry"
    );
}

#[tokio::test(start_paused = true)]
async fn a_dropped_call_sends_no_further_attempt() {
    let (server, base) = Server::start().await;
    server.plan("slow", &[(503, Some("3")); 10]);
    let service = RetryLayer::new(POLICY).layer(client());
    let call = tokio::spawn(service.oneshot(request(Method::GET, &format!("{base}/slow"))));
    // The first attempt is answered; the call then waits its 3 s.
    while server.seen("slow").is_empty() {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    call.abort();
    assert!(call.await.unwrap_err().is_cancelled());
    tokio::time::sleep(Duration::from_secs(10)).await;
    assert_eq!(server.seen("slow").len(), 1);
}

#[tokio::test(start_paused = true)]
async fn an_attempt_past_its_timeout_is_retried() {
    let slow_calls = Arc::new(AtomicU32::new(0));
    let calls = Arc::clone(&slow_calls);
    // The first attempt never answers; the second does.
    let service = tower::service_fn(move |_: Request<String>| {
        let n = calls.fetch_add(1, Ordering::SeqCst);
        async move {
            if n == 0 {
                std::future::pending::<()>().await;
            }
            Ok::<_, tower::BoxError>(http::Response::new(format!("attempt {}", n + 1)))
        }
    });
    let service = RetryLayer::new(POLICY).timeout(Duration::from_secs(1)).layer(service);
    let started = Instant::now();
    let response = service
        .oneshot(Request::get("http://unused/").body(String::new()).unwrap())
        .await
        .unwrap();
    assert_eq!(response.into_body(), "attempt 2");
    assert!(started.elapsed() >= Duration::from_secs(1));
    assert_eq!(slow_calls.load(Ordering::SeqCst), 2);
}

/// A newcomer's first try: an admission limiter and a timeout over
/// hyper-util's client, called with `oneshot`, as written. The layered
/// client answers tower's `BoxError`: hyper-util's error boxed, a refusal
/// as `Refused`, a timed-out attempt as `Elapsed`.
#[tokio::test(start_paused = true)]
async fn hyper_util_s_client_takes_a_limiter_and_a_timeout_as_first_written() {
    let (server, base) = Server::start().await;
    server.plan("limited", &[(503, None), (503, None), (503, None), (503, None)]);
    let limiter = Arc::new(CircuitBreaker::new().consecutive_failures(2));
    let limited = RetryLayer::new(POLICY)
        .admission(Arc::clone(&limiter))
        .timeout(Duration::from_secs(5))
        .layer(client());
    let error = limited
        .oneshot(request(Method::GET, &format!("{base}/limited")))
        .await
        .unwrap_err();
    let refused = error
        .downcast::<backoff_runtime::limits::Refused>()
        .expect("the refusal, boxed");
    assert!(refused.is_circuit_open());
    assert_eq!(server.seen("limited").len(), 2, "two failures opened the circuit");

    // The timeout alone: hyper-util's own error is boxed as it came.
    let client = RetryLayer::new(POLICY.max_retries(1))
        .timeout(Duration::from_secs(5))
        .layer(client());
    let error = client
        .oneshot(request(Method::GET, "http://127.0.0.1:1/nothing-listens"))
        .await
        .unwrap_err();
    assert!(
        error.is::<hyper_util::client::legacy::Error>(),
        "hyper-util's error: {error:?}"
    );
}

/// The same layer as a reqwest-middleware middleware: one line of setup.
fn reqwest_client(layer: RetryLayer) -> reqwest_middleware::ClientWithMiddleware {
    reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
        .with(layer)
        .build()
}

#[tokio::test(start_paused = true)]
async fn the_reqwest_middleware_waits_the_server_s_retry_after() {
    let (server, base) = Server::start().await;
    server.plan("flaky", &[(503, None), (429, Some("2")), (200, None)]);
    let client = reqwest_client(RetryLayer::new(POLICY));
    let response = client.get(format!("{base}/flaky")).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.text().await.unwrap(), "flaky #3");
    let seen = server.seen("flaky");
    let hinted = seen[2].0 - seen[1].0;
    assert!(
        (Duration::from_secs(2)..Duration::from_millis(2100)).contains(&hinted),
        "the second wait is the server's 2 s: {hinted:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn the_reqwest_middleware_sends_a_post_once_unless_keyed() {
    let (server, base) = Server::start().await;
    server.plan("pay", &[(503, None), (503, None), (200, None)]);
    let plain = reqwest_client(RetryLayer::new(POLICY));
    let response = plain.post(format!("{base}/pay")).body("order").send().await.unwrap();
    assert_eq!(
        (response.status().as_u16(), server.seen("pay").len()),
        (503, 1),
        "a POST without a key: one attempt"
    );

    let keyed = reqwest_client(RetryLayer::new(POLICY).idempotency_key());
    let response = keyed.post(format!("{base}/pay")).body("order").send().await.unwrap();
    assert_eq!(response.status(), 200);
    let keys: Vec<Option<String>> = server.seen("pay").into_iter().skip(1).map(|(_, key)| key).collect();
    assert_eq!(keys.len(), 2, "a 503, then its retry");
    assert!(
        keys[0].is_some() && keys[0] == keys[1],
        "one key on both attempts: {keys:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn the_reqwest_middleware_does_not_resend_a_streamed_body() {
    let (server, base) = Server::start().await;
    server.plan("upload", &[(503, None), (200, None)]);
    let client = reqwest_client(RetryLayer::new(POLICY));
    let chunks = one_chunk();
    let response = client
        .put(format!("{base}/upload"))
        .body(reqwest::Body::wrap_stream(chunks))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 503, "a streamed body cannot be sent again");
    assert_eq!(server.seen("upload").len(), 1);
}

/// A one-chunk stream body.
fn one_chunk() -> impl tokio_stream::Stream<Item = Result<Bytes, std::io::Error>> + Send + Sync + 'static {
    tokio_stream::once(Ok(Bytes::from_static(b"chunk")))
}

// ---- readiness: an inner service that is not always ready ----------------

/// A backend whose every path answers 503 to its first request and 200
/// (with the request's number) after; each answer takes 10 ms. It counts
/// the requests and the most in flight at once.
#[derive(Clone, Default)]
struct Backend {
    requests: Arc<Mutex<HashMap<String, u32>>>,
    in_flight: Arc<AtomicU32>,
    most_in_flight: Arc<AtomicU32>,
}

impl Backend {
    fn service(
        &self,
    ) -> impl tower::Service<
        Request<String>,
        Response = http::Response<String>,
        Error = tower::BoxError,
        Future: Send + 'static,
    > + Clone
    + Send
    + 'static {
        let backend = self.clone();
        tower::service_fn(move |request: Request<String>| {
            let backend = backend.clone();
            async move {
                let path = request.uri().path().to_owned();
                let n = {
                    let mut requests = backend.requests.lock().unwrap();
                    let count = requests.entry(path.clone()).or_default();
                    *count += 1;
                    *count
                };
                let now = backend.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                backend.most_in_flight.fetch_max(now, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(10)).await;
                backend.in_flight.fetch_sub(1, Ordering::SeqCst);
                let status = if n == 1 { 503 } else { 200 };
                Ok(http::Response::builder().status(status).body(format!("{path} #{n}"))?)
            }
        })
    }

    fn requests(&self) -> u32 {
        self.requests.lock().unwrap().values().sum()
    }
}

fn get(path: &str) -> Request<String> {
    Request::get(format!("http://backend{path}"))
        .body(String::new())
        .unwrap()
}

/// tower's `Buffer` shares one layered service among tasks, as servers
/// share a client: 50 spawned tasks call it at once, each call is retried
/// once, and `ConcurrencyLimit` under the layer admits 4 attempts at a time
/// (its `call` panics when `poll_ready` did not make it ready first, so
/// each attempt, the retries' clones included, was made ready).
#[tokio::test(start_paused = true)]
async fn a_buffered_layer_is_called_from_fifty_spawned_tasks() {
    let backend = Backend::default();
    let limited = tower::limit::ConcurrencyLimit::new(backend.service(), 4);
    let client = tower::buffer::Buffer::new(RetryLayer::new(POLICY).layer(limited), 64);
    let calls: Vec<_> = (0..50)
        .map(|i| {
            let client = client.clone();
            tokio::spawn(async move { client.oneshot(get(&format!("/{i}"))).await })
        })
        .collect();
    for (i, call) in calls.into_iter().enumerate() {
        let response = call.await.expect("the task ends").expect("the call succeeds");
        assert_eq!(
            (response.status().as_u16(), response.into_body()),
            (200, format!("/{i} #2"))
        );
    }
    assert_eq!(backend.requests(), 100, "each call: a 503, then its retry");
    let most = backend.most_in_flight.load(Ordering::SeqCst);
    assert_eq!(most, 4, "the limit admitted 4 attempts at a time, and no more");
}

/// Without `Buffer`: the layer's `poll_ready` is the inner service's, and
/// each retry waits for a clone of it to be ready. With a limit of one,
/// three concurrent calls and their retries run one attempt at a time.
#[tokio::test(start_paused = true)]
async fn each_attempt_waits_for_the_inner_service_to_be_ready() {
    let backend = Backend::default();
    let service = RetryLayer::new(POLICY).layer(tower::limit::ConcurrencyLimit::new(backend.service(), 1));
    let (a, b, c) = tokio::join!(
        service.clone().oneshot(get("/a")),
        service.clone().oneshot(get("/b")),
        service.clone().oneshot(get("/c")),
    );
    for (response, path) in [(a, "/a"), (b, "/b"), (c, "/c")] {
        assert_eq!(response.unwrap().into_body(), format!("{path} #2"));
    }
    assert_eq!(backend.requests(), 6);
    assert_eq!(backend.most_in_flight.load(Ordering::SeqCst), 1);
}

// ---- a classification of one's own, relying on the defaults --------------

/// A request that carries what its attempt knew: the call's request number
/// and the attempt's elapsed time.
#[derive(Clone, Debug)]
struct Stamped {
    id: u32,
    elapsed: Duration,
}

/// A protocol whose classification writes only the two methods it must:
/// every error is retried, no hint is read, every response is accepted.
#[derive(Clone)]
struct Defaults;

impl Classify<Stamped, &'static str, &'static str> for Defaults {
    fn may_retry(&self, _: &Stamped) -> bool {
        true
    }

    fn replay(&self, request: &Stamped, attempt: &Attempt) -> Stamped {
        Stamped {
            id: request.id,
            elapsed: attempt.elapsed(),
        }
    }
}

/// [`Defaults`], but the response `"busy"` is retried (no hint read).
#[derive(Clone)]
struct BusyRetried;

impl Classify<Stamped, &'static str, &'static str> for BusyRetried {
    fn may_retry(&self, _: &Stamped) -> bool {
        true
    }

    fn replay(&self, request: &Stamped, attempt: &Attempt) -> Stamped {
        Defaults.replay(request, attempt)
    }

    fn retry_response(&self, response: &&'static str) -> bool {
        *response == "busy"
    }
}

/// A service answering `answers` in order (then `"done"`), recording the
/// elapsed time each request carried.
fn scripted(
    answers: Vec<Result<&'static str, &'static str>>,
) -> (
    impl tower::Service<Stamped, Response = &'static str, Error = &'static str, Future: Send> + Clone,
    Arc<Mutex<Vec<Duration>>>,
) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&seen);
    let answers = Arc::new(Mutex::new(answers.into_iter()));
    let service = tower::service_fn(move |request: Stamped| {
        record.lock().unwrap().push(request.elapsed);
        let answer = answers.lock().unwrap().next().unwrap_or(Ok("done"));
        std::future::ready(answer)
    });
    (service, seen)
}

/// The schedule's waits: 100 ms, then 200 ms, each with up to 100 ms of jitter.
const SCHEDULED: Policy = POLICY.max_retries(3);

/// [`Defaults`], declaring that it never reads an attempt's `elapsed`
/// (it does, to show what it then sees).
#[derive(Clone)]
struct Untimed;

impl Classify<Stamped, &'static str, &'static str> for Untimed {
    const READS_ATTEMPT_TIME: bool = false;

    fn may_retry(&self, _: &Stamped) -> bool {
        true
    }

    fn replay(&self, request: &Stamped, attempt: &Attempt) -> Stamped {
        Defaults.replay(request, attempt)
    }
}

#[tokio::test(start_paused = true)]
async fn a_classification_that_reads_no_attempt_time_sees_zero_elapsed_when_no_key_reads_the_start() {
    let (service, seen) = scripted(vec![Err("down"), Err("down")]);
    let service = RetryLayer::new(SCHEDULED).classify(Untimed).layer(service);
    let response = service
        .oneshot(Stamped {
            id: 4,
            elapsed: Duration::MAX,
        })
        .await;
    assert_eq!(response, Ok("done"));
    // No `max_elapsed`, no observer, no budget: the start is never read,
    // though both waits have passed by the third attempt.
    assert_eq!(seen.lock().unwrap().clone(), [Duration::ZERO; 3]);
}

#[tokio::test(start_paused = true)]
async fn the_layer_s_on_success_measures_from_the_call_s_start_not_the_first_failure() {
    let calls = Arc::new(AtomicU32::new(0));
    let service = tower::service_fn(move |_: Stamped| {
        let first = calls.fetch_add(1, Ordering::SeqCst) == 0;
        async move {
            if first {
                // The first attempt takes 300 ms before it fails.
                tokio::time::sleep(Duration::from_millis(300)).await;
                Err("down")
            } else {
                Ok("done")
            }
        }
    });
    let took = Arc::new(Mutex::new(Vec::new()));
    let heard = Arc::clone(&took);
    let service = RetryLayer::new(SCHEDULED.jitter(backoff_runtime::Jitter::None))
        .classify(Defaults)
        .on_success(move |success| heard.lock().unwrap().push(success.elapsed()))
        .layer(service);
    let response = service
        .oneshot(Stamped {
            id: 5,
            elapsed: Duration::MAX,
        })
        .await;
    assert_eq!(response, Ok("done"));
    // The failed attempt's 300 ms, then the 100 ms wait.
    assert_eq!(took.lock().unwrap().clone(), [Duration::from_millis(400)]);
}

#[tokio::test(start_paused = true)]
async fn a_classification_of_one_s_own_retries_every_error_on_the_schedule() {
    let (service, seen) = scripted(vec![Err("down"), Err("down")]);
    let service = RetryLayer::new(SCHEDULED).classify(Defaults).layer(service);
    let response = service
        .oneshot(Stamped {
            id: 1,
            elapsed: Duration::MAX,
        })
        .await;
    assert_eq!(response, Ok("done"));
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 3, "two errors retried, then the answer: {seen:?}");
    assert_eq!(seen[0], Duration::ZERO, "the first attempt starts the call");
    assert!(
        seen[1] >= Duration::from_millis(100),
        "the first wait, no hint: {seen:?}"
    );
    assert!(seen[2] >= Duration::from_millis(300), "both waits: {seen:?}");
}

#[tokio::test(start_paused = true)]
async fn a_classification_of_one_s_own_accepts_every_response() {
    let (service, seen) = scripted(vec![Ok("busy")]);
    let service = RetryLayer::new(SCHEDULED).classify(Defaults).layer(service);
    let response = service
        .oneshot(Stamped {
            id: 2,
            elapsed: Duration::MAX,
        })
        .await;
    assert_eq!((response, seen.lock().unwrap().len()), (Ok("busy"), 1));
}

#[tokio::test(start_paused = true)]
async fn a_retried_response_waits_the_schedule_when_no_hint_is_read() {
    let (service, seen) = scripted(vec![Ok("busy"), Ok("busy")]);
    let service = RetryLayer::new(SCHEDULED).classify(BusyRetried).layer(service);
    let response = service
        .oneshot(Stamped {
            id: 3,
            elapsed: Duration::MAX,
        })
        .await;
    assert_eq!(response, Ok("done"));
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 3);
    assert!(
        seen[1] >= Duration::from_millis(100),
        "the first wait, no hint: {seen:?}"
    );
    assert!(seen[2] >= Duration::from_millis(300), "both waits: {seen:?}");
}

/// A function that calls a layered service and fails on a 503.
#[backoff_runtime::retry(
    max_retries = 3,
    initial_backoff = "100ms",
    on_give_up = |_, give_up: &backoff_runtime::GiveUp| *reason.lock().unwrap() = Some(give_up.reason())
)]
async fn status_through<S>(service: &S, reason: &Mutex<Option<StopReason>>) -> Result<(), u16>
where
    S: tower::Service<Request<String>, Response = http::Response<String>> + Clone,
    S::Error: std::fmt::Debug,
{
    let response = service
        .clone()
        .oneshot(Request::get("http://unused/").body(String::new()).unwrap())
        .await
        .unwrap();
    if response.status() == StatusCode::OK {
        Ok(())
    } else {
        Err(response.status().as_u16())
    }
}

#[tokio::test(start_paused = true)]
async fn the_attribute_over_the_layer_does_not_multiply_the_attempts() {
    let sent = Arc::new(AtomicU32::new(0));
    let counted = Arc::clone(&sent);
    let backend = tower::service_fn(move |_: Request<String>| {
        counted.fetch_add(1, Ordering::SeqCst);
        let mut response = http::Response::new(String::new());
        *response.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
        async move { Ok::<_, tower::BoxError>(response) }
    });
    let service = RetryLayer::new(POLICY.max_retries(3)).layer(backend);
    let reason = Mutex::new(None);
    assert_eq!(status_through(&service, &reason).await, Err(503));
    // 4 attempts in the layer; the attribute above it sees that the layer
    // gave up and retries nothing: 4 calls in all, not 4 x 4 = 16.
    assert_eq!(sent.load(Ordering::SeqCst), 4);
    assert_eq!(*reason.lock().unwrap(), Some(StopReason::RetriedBelow));
}

#[tokio::test(start_paused = true)]
async fn a_millisecond_hint_is_waited_to_the_millisecond_never_less() {
    let sent = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&sent);
    let backend = tower::service_fn(move |_: Request<String>| {
        let mut seen = seen.lock().unwrap();
        seen.push(Instant::now());
        let mut response = http::Response::new(String::new());
        if seen.len() == 1 {
            *response.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
            response.headers_mut().insert("retry-after-ms", "1537".parse().unwrap());
        }
        async move { Ok::<_, tower::BoxError>(response) }
    });
    let service = RetryLayer::new(POLICY).layer(backend);
    let response = service
        .oneshot(Request::get("http://unused/").body(String::new()).unwrap())
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let sent = sent.lock().unwrap();
    let waited = sent[1] - sent[0];
    // tokio's timer ticks in whole milliseconds: the wait ends at the next
    // tick at or after the hint, never before it.
    assert!(
        (Duration::from_millis(1537)..=Duration::from_millis(1538)).contains(&waited),
        "waited {waited:?}"
    );
}
