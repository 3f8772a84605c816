//! Happy path (the first attempt succeeds): what wrapping a ~20-instruction
//! body in a retry costs, sync and async, next to the plain function, a
//! hand-written retry loop, the runtime's `Policy` API and the peers a user
//! would pick instead (backon, tokio-retry2, tryhard).
//!
//! ```sh
//! cargo bench --bench happy_path
//! ```
//!
//! Every figure is also reported as a ratio to the plain function of the same
//! group from the same run (criterion's median estimate), printed at the end
//! and written to `target/bench-ratios/happy_path.md`. Only benchmarks that
//! ran in this invocation are used, so a filter (`cargo bench --bench
//! happy_path -- sync`) never mixes runs.
//!
//! Async variants build the future and poll it once with a no-op waker
//! (`std::task::Waker::noop()`) inside a current-thread tokio runtime's
//! context: the happy path completes on its first poll, which is asserted on
//! every call (a `Pending` panics).
//!
//! `scripts/callgrind.sh` runs this binary under callgrind: with
//! `HAPPY_PATH_CALLGRIND="<variant> <iterations>"` set, it calls one variant
//! (`sync/plain`, `async/retry_literal`, ...; `list` prints them) that many
//! times and exits without running criterion. `harness/empty` (a function
//! returning `Ok(x)`) measures the calling loop itself.
//!
//! Variants: `plain` (the function alone), `hand_loop` (a hand-written
//! retry loop around the same body), `retry_literal` (`#[retry]` with literal
//! keys), `retry_policy_const` (`#[retry(policy = CONST)]`), `retry_budget`
//! (`#[retry(budget = STATIC)]`: a shared retry budget, which reads the clock
//! and deposits on every call, by design), `retry_context` (`context =
//! attempt`, the body reading the attempt number; `retry_context_id`, sync
//! only, also reads the invocation id), `retry_poll`
//! (`retry_if_ok`, never pending here), `retry_action` (`before_retry`),
//! `policy_retry` (`Policy::retry` /
//! `retry_async`, the same loop without the macro), `retry_hedged`
//! (`hedge_after = "50ms"`, the first attempt answering before the delay),
//! then backon (builder with
//! jitter, `BlockingRetryable` / `Retryable`), tokio-retry2 and tryhard
//! (async only), all with the same schedule (5 retries, 100 ms doubling to a
//! 2 s cap).

use std::future::Future;
use std::hint::black_box;
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, SystemTime};

use backoff_runtime::limits::RetryBudget;
use backoff_runtime::{Policy, retry};
use criterion::Criterion;

#[path = "support/random.rs"]
mod random;

#[path = "support/estimates.rs"]
mod estimates;
use estimates::median_ns;

/// The body's error.
#[derive(Debug)]
pub struct MyError;

/// The body shared by every variant: four rounds of a 64-bit mixer (shift,
/// xor, multiply, add) and a test, about 20 instructions once unrolled.
/// Never fails for the inputs used here, but the compiler cannot know that.
#[inline(always)]
fn work(x: u64) -> Result<u64, MyError> {
    let mut acc = x;
    let mut i = 0;
    while i < 4 {
        acc = (acc ^ (acc >> 29)).wrapping_mul(0xbf58_476d_1ce4_e5b9).wrapping_add(i);
        i += 1;
    }
    if acc == 0 { Err(MyError) } else { Ok(acc) }
}

const INPUT: u64 = 0x1234_5678_9abc_def0;
const MAX_RETRIES: u32 = 5;
const INITIAL: Duration = Duration::from_millis(100);
const CAP: Duration = Duration::from_secs(2);

/// The same schedule as the `#[retry]` functions below, for `Policy::retry`
/// and `policy = POLICY`.
const POLICY: Policy = Policy::new()
    .max_retries(MAX_RETRIES)
    .initial_backoff(INITIAL)
    .max_backoff(CAP);

/// The retry budget of the `retry_budget` variants.
static BUDGET: RetryBudget = RetryBudget::new();

/// The circuit breaker of the `retry_breaker` variants: closed, with a full
/// window of successes after the first hundred calls.
static BREAKER: backoff_runtime::limits::CircuitBreaker = backoff_runtime::limits::CircuitBreaker::new();

impl From<backoff_runtime::limits::Refused> for MyError {
    fn from(_: backoff_runtime::limits::Refused) -> Self {
        MyError
    }
}

// ---- sync ------------------------------------------------------------------

#[inline(never)]
fn sync_plain(x: u64) -> Result<u64, MyError> {
    work(x)
}

/// What a careful user writes by hand: exponential base, additive jitter of
/// up to one initial wait, a cap, a retry limit.
#[inline(never)]
fn sync_hand_loop(x: u64) -> Result<u64, MyError> {
    let mut retries = 0;
    let mut base = INITIAL;
    loop {
        match work(x) {
            Ok(value) => return Ok(value),
            Err(error) if retries >= MAX_RETRIES => return Err(error),
            Err(_) => {
                let jitter = Duration::from_nanos(random::random_u64() % (INITIAL.as_nanos() as u64 + 1));
                std::thread::sleep((base + jitter).min(CAP));
                base = (base * 2).min(CAP);
                retries += 1;
            }
        }
    }
}

#[retry(max_retries = 5, initial_backoff = "100ms", max_backoff = "2s")]
#[inline(never)]
fn sync_retry_literal(x: u64) -> Result<u64, MyError> {
    work(x)
}

#[retry(policy = POLICY)]
#[inline(never)]
fn sync_retry_policy_const(x: u64) -> Result<u64, MyError> {
    work(x)
}

#[retry(max_retries = 5, initial_backoff = "100ms", max_backoff = "2s", budget = BUDGET)]
#[inline(never)]
fn sync_retry_budget(x: u64) -> Result<u64, MyError> {
    work(x)
}

#[retry(max_retries = 5, initial_backoff = "100ms", max_backoff = "2s", admission = BREAKER)]
#[inline(never)]
fn sync_retry_breaker(x: u64) -> Result<u64, MyError> {
    work(x)
}

#[retry(max_retries = 5, initial_backoff = "100ms", max_backoff = "2s", context = attempt)]
#[inline(never)]
fn sync_retry_context(x: u64) -> Result<u64, MyError> {
    black_box(attempt.number());
    work(x)
}

/// `retry_context` whose body also reads the invocation id: the difference
/// is what computing one id costs.
#[retry(max_retries = 5, initial_backoff = "100ms", max_backoff = "2s", context = attempt)]
#[inline(never)]
fn sync_retry_context_id(x: u64) -> Result<u64, MyError> {
    black_box(attempt.number());
    black_box(attempt.invocation_id());
    work(x)
}

#[retry(max_retries = 5, initial_backoff = "100ms", max_backoff = "2s", retry_if_ok = |v: &u64| *v == 0)]
#[inline(never)]
fn sync_retry_poll(x: u64) -> Result<u64, MyError> {
    work(x)
}

#[retry(max_retries = 5, initial_backoff = "100ms", max_backoff = "2s", before_retry = |_, _| black_box(()))]
#[inline(never)]
fn sync_retry_action(x: u64) -> Result<u64, MyError> {
    work(x)
}

#[inline(never)]
fn sync_policy_retry(x: u64) -> Result<u64, MyError> {
    POLICY.retry(|| work(x)).call()
}

#[inline(never)]
fn sync_backon(x: u64) -> Result<u64, MyError> {
    use backon::{BlockingRetryable, ExponentialBuilder};
    let builder = ExponentialBuilder::default()
        .with_min_delay(INITIAL)
        .with_max_delay(CAP)
        .with_max_times(MAX_RETRIES as usize)
        .with_jitter();
    (|| work(x)).retry(builder).call()
}

// ---- async -----------------------------------------------------------------

/// Polls `future` once with a no-op waker; the happy path must be ready.
#[inline(always)]
fn poll_ready<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    match future.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(output) => output,
        Poll::Pending => panic!("the happy path must complete on its first poll"),
    }
}

async fn plain_async(x: u64) -> Result<u64, MyError> {
    work(x)
}

async fn hand_loop_async(x: u64) -> Result<u64, MyError> {
    let mut retries = 0;
    let mut base = INITIAL;
    loop {
        match work(x) {
            Ok(value) => return Ok(value),
            Err(error) if retries >= MAX_RETRIES => return Err(error),
            Err(_) => {
                let jitter = Duration::from_nanos(random::random_u64() % (INITIAL.as_nanos() as u64 + 1));
                tokio::time::sleep((base + jitter).min(CAP)).await;
                base = (base * 2).min(CAP);
                retries += 1;
            }
        }
    }
}

#[retry(max_retries = 5, initial_backoff = "100ms", max_backoff = "2s")]
async fn retry_literal_async(x: u64) -> Result<u64, MyError> {
    work(x)
}

#[retry(max_retries = 5, hedge_after = "50ms")]
async fn retry_hedged_async(x: u64) -> Result<u64, MyError> {
    work(x)
}

#[inline(never)]
fn async_retry_hedged(x: u64) -> Result<u64, MyError> {
    poll_ready(retry_hedged_async(x))
}

#[retry(policy = POLICY)]
async fn retry_policy_const_async(x: u64) -> Result<u64, MyError> {
    work(x)
}

#[retry(max_retries = 5, initial_backoff = "100ms", max_backoff = "2s", budget = BUDGET)]
async fn retry_budget_async(x: u64) -> Result<u64, MyError> {
    work(x)
}

#[retry(max_retries = 5, initial_backoff = "100ms", max_backoff = "2s", admission = BREAKER)]
async fn retry_breaker_async(x: u64) -> Result<u64, MyError> {
    work(x)
}

#[retry(max_retries = 5, initial_backoff = "100ms", max_backoff = "2s", context = attempt)]
async fn retry_context_async(x: u64) -> Result<u64, MyError> {
    black_box(attempt.number());
    work(x)
}

#[retry(max_retries = 5, initial_backoff = "100ms", max_backoff = "2s", retry_if_ok = |v: &u64| *v == 0)]
async fn retry_poll_async(x: u64) -> Result<u64, MyError> {
    work(x)
}

#[retry(
    max_retries = 5,
    initial_backoff = "100ms",
    max_backoff = "2s",
    before_retry = async |_: &MyError, _: &backoff_runtime::RetryEvent| black_box(())
)]
async fn retry_action_async(x: u64) -> Result<u64, MyError> {
    work(x)
}

#[inline(never)]
fn async_retry_context(x: u64) -> Result<u64, MyError> {
    poll_ready(retry_context_async(x))
}

#[inline(never)]
fn async_retry_poll(x: u64) -> Result<u64, MyError> {
    poll_ready(retry_poll_async(x))
}

#[inline(never)]
fn async_retry_action(x: u64) -> Result<u64, MyError> {
    poll_ready(retry_action_async(x))
}

#[inline(never)]
fn async_plain(x: u64) -> Result<u64, MyError> {
    poll_ready(plain_async(x))
}

#[inline(never)]
fn async_hand_loop(x: u64) -> Result<u64, MyError> {
    poll_ready(hand_loop_async(x))
}

#[inline(never)]
fn async_retry_literal(x: u64) -> Result<u64, MyError> {
    poll_ready(retry_literal_async(x))
}

#[inline(never)]
fn async_retry_policy_const(x: u64) -> Result<u64, MyError> {
    poll_ready(retry_policy_const_async(x))
}

#[inline(never)]
fn async_retry_budget(x: u64) -> Result<u64, MyError> {
    poll_ready(retry_budget_async(x))
}

#[inline(never)]
fn async_retry_breaker(x: u64) -> Result<u64, MyError> {
    poll_ready(retry_breaker_async(x))
}

#[inline(never)]
fn async_policy_retry(x: u64) -> Result<u64, MyError> {
    poll_ready(POLICY.retry(|| plain_async(x)).into_future())
}

#[inline(never)]
fn async_backon(x: u64) -> Result<u64, MyError> {
    use backon::{ExponentialBuilder, Retryable};
    let builder = ExponentialBuilder::default()
        .with_min_delay(INITIAL)
        .with_max_delay(CAP)
        .with_max_times(MAX_RETRIES as usize)
        .with_jitter();
    poll_ready((|| plain_async(x)).retry(builder))
}

#[inline(never)]
fn async_tokio_retry2(x: u64) -> Result<u64, MyError> {
    use tokio_retry2::strategy::ExponentialFactorBackoff;
    use tokio_retry2::{Retry, RetryError};
    let strategy = ExponentialFactorBackoff::from_millis(INITIAL.as_millis() as u64, 2.0)
        .max_delay(CAP)
        .take(MAX_RETRIES as usize);
    poll_ready(Retry::spawn(strategy, || async move {
        plain_async(x).await.map_err(RetryError::transient)
    }))
}

#[inline(never)]
fn async_tryhard(x: u64) -> Result<u64, MyError> {
    poll_ready(
        tryhard::retry_fn(|| plain_async(x))
            .retries(MAX_RETRIES)
            .exponential_backoff(INITIAL)
            .max_delay(CAP),
    )
}

// ---- tower ------------------------------------------------------------------

/// The service every tower variant wraps: `work` as a tower `Service`, its
/// future ready at once.
#[derive(Clone, Copy)]
struct Work;

impl tower::Service<u64> for Work {
    type Response = u64;
    type Error = MyError;
    type Future = std::future::Ready<Result<u64, MyError>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), MyError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, x: u64) -> Self::Future {
        std::future::ready(work(x))
    }
}

#[path = "support/replay.rs"]
mod replay;
use replay::Replay;

/// tower's own retry with the same schedule's stop rule: an attempt count,
/// each retry after tokio's sleep of the next wait (no jitter: tower ships
/// no policy, so this is what a user writes by hand).
#[derive(Clone, Copy)]
struct TowerPolicy {
    retries_left: u32,
    wait: Duration,
}

impl tower::retry::Policy<u64, u64, MyError> for TowerPolicy {
    type Future = tokio::time::Sleep;

    fn retry(&mut self, _: &mut u64, result: &mut Result<u64, MyError>) -> Option<Self::Future> {
        if result.is_ok() || self.retries_left == 0 {
            return None;
        }
        self.retries_left -= 1;
        let wait = self.wait;
        self.wait = (self.wait * 2).min(CAP);
        Some(tokio::time::sleep(wait))
    }

    fn clone_request(&mut self, request: &u64) -> Option<u64> {
        Some(*request)
    }
}

/// Calls `service` as tower's contract asks: ready, then called, its
/// future polled once.
#[inline(always)]
fn call_service<S: tower::Service<u64, Response = u64, Error = MyError>>(
    service: &mut S,
    x: u64,
) -> Result<u64, MyError> {
    match service.poll_ready(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(ready) => ready?,
        Poll::Pending => panic!("the services here are always ready"),
    }
    poll_ready(service.call(x))
}

thread_local! {
    static RETRY_LAYER: std::cell::RefCell<backoff_tower::RetryService<Work, backoff_tower::Classified<Replay>>> = std::cell::RefCell::new(
        tower::Layer::layer(&backoff_tower::RetryLayer::new(POLICY).classify(Replay), Work),
    );
    static TOWER_RETRY: std::cell::RefCell<tower::retry::Retry<TowerPolicy, Work>> = const {
        std::cell::RefCell::new(tower::retry::Retry::new(TowerPolicy { retries_left: MAX_RETRIES, wait: INITIAL }, Work))
    };
}

/// tower's own hedge policy: every request may be sent twice, as itself.
#[derive(Clone, Copy)]
struct HedgeAll;

impl tower::hedge::Policy<u64> for HedgeAll {
    fn clone_request(&self, request: &u64) -> Option<u64> {
        Some(*request)
    }

    fn can_retry(&self, _: &u64) -> bool {
        true
    }
}

impl std::fmt::Display for MyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the body failed")
    }
}

impl std::error::Error for MyError {}

/// `Replay` again, as a type of its own: the hedged layer's call is its
/// own instantiation, so the retry layer's variant is compiled (and
/// inlined) as it is without it.
#[derive(Clone, Copy)]
struct ReplayHedged;

impl backoff_tower::Classify<u64, u64, MyError> for ReplayHedged {
    const READS_ATTEMPT_TIME: bool = false;

    fn may_retry(&self, _: &u64) -> bool {
        true
    }

    fn replay(&self, request: &u64, _: &backoff_runtime::Attempt) -> u64 {
        *request
    }
}

thread_local! {
    static HEDGED_LAYER: std::cell::RefCell<backoff_tower::RetryService<Work, backoff_tower::Classified<ReplayHedged>>> = std::cell::RefCell::new(
        tower::Layer::layer(
            &backoff_tower::RetryLayer::new(POLICY).classify(ReplayHedged).hedge_after(Duration::from_millis(50)),
            Work,
        ),
    );
    static TOWER_HEDGE: std::cell::RefCell<tower::hedge::Hedge<Work, HedgeAll>> = std::cell::RefCell::new(
        tower::hedge::Hedge::new(Work, HedgeAll, 10, 0.9, Duration::from_secs(10)),
    );
}

#[inline(never)]
fn tower_hedged_layer(x: u64) -> Result<u64, MyError> {
    HEDGED_LAYER.with_borrow_mut(|service| call_service(service, x))
}

#[inline(never)]
fn tower_tower_hedge(x: u64) -> Result<u64, MyError> {
    TOWER_HEDGE.with_borrow_mut(|service| {
        match tower::Service::poll_ready(service, &mut Context::from_waker(Waker::noop())) {
            Poll::Ready(Ok(())) => {}
            _ => panic!("the services here are always ready"),
        }
        poll_ready(tower::Service::call(service, x)).map_err(|_| MyError)
    })
}

#[inline(never)]
fn tower_plain(x: u64) -> Result<u64, MyError> {
    call_service(&mut black_box(Work), x)
}

#[inline(never)]
fn tower_retry_layer(x: u64) -> Result<u64, MyError> {
    RETRY_LAYER.with_borrow_mut(|service| call_service(service, x))
}

#[inline(never)]
fn tower_tower_retry(x: u64) -> Result<u64, MyError> {
    TOWER_RETRY.with_borrow_mut(|service| call_service(service, x))
}

// ---- gRPC in the channel ------------------------------------------------------

/// A gRPC channel stand-in whose answer is ready at once: response headers
/// (not Trailers-Only), which commit the call, as a successful call's do.
#[derive(Clone, Copy)]
struct GrpcWork;

impl tower::Service<http::Request<tonic::body::Body>> for GrpcWork {
    type Response = http::Response<tonic::body::Body>;
    type Error = MyError;
    type Future = std::future::Ready<Result<Self::Response, MyError>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), MyError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<tonic::body::Body>) -> Self::Future {
        let mut response = http::Response::new(tonic::body::Body::empty());
        response.headers_mut().insert(
            http::header::CONTENT_TYPE,
            http::HeaderValue::from_static("application/grpc"),
        );
        *response.status_mut() = if request.uri().path().is_empty() {
            http::StatusCode::NOT_FOUND
        } else {
            http::StatusCode::OK
        };
        std::future::ready(Ok(response))
    }
}

/// The method every gRPC variant calls, retried by the layer's config.
const GRPC_METHOD: &str = "/bench.Work/Run";

/// One unary call as tonic's client sends it to its channel: the request
/// made (its path parsed), the service made ready, called, its future
/// polled once; the answer's status is the result.
#[inline(always)]
fn call_grpc<S>(service: &mut S, x: u64) -> Result<u64, MyError>
where
    S: tower::Service<http::Request<tonic::body::Body>, Response = http::Response<tonic::body::Body>>,
{
    let mut request = http::Request::new(tonic::body::Body::empty());
    *request.uri_mut() = http::Uri::from_static(GRPC_METHOD);
    match service.poll_ready(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(Ok(())) => {}
        _ => panic!("the services here are always ready"),
    }
    match poll_ready(service.call(request)) {
        Ok(response) if response.status() == http::StatusCode::OK => Ok(x),
        _ => Err(MyError),
    }
}

thread_local! {
    static GRPC_LAYER: std::cell::RefCell<backoff_grpc::GrpcRetryService<GrpcWork>> = std::cell::RefCell::new({
        let config = backoff_grpc::ServiceConfig::from_json(
            r#"{"methodConfig": [{"name": [{"service": "bench.Work"}], "retryPolicy": {
                "maxAttempts": 5, "initialBackoff": "1s", "maxBackoff": "32s",
                "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]}}]}"#,
        )
        .expect("a valid service config");
        tower::Layer::layer(&backoff_grpc::GrpcRetryLayer::new(config), GrpcWork)
    });
}

#[inline(never)]
fn grpc_plain(x: u64) -> Result<u64, MyError> {
    call_grpc(&mut black_box(GrpcWork), x)
}

#[inline(never)]
fn grpc_grpc_layer(x: u64) -> Result<u64, MyError> {
    GRPC_LAYER.with_borrow_mut(|service| call_grpc(service, x))
}

type Variant = (&'static str, fn(u64) -> Result<u64, MyError>);

const SYNC: &[Variant] = &[
    ("plain", sync_plain),
    ("hand_loop", sync_hand_loop),
    ("retry_literal", sync_retry_literal),
    ("retry_policy_const", sync_retry_policy_const),
    ("retry_budget", sync_retry_budget),
    ("retry_breaker", sync_retry_breaker),
    ("retry_context", sync_retry_context),
    ("retry_context_id", sync_retry_context_id),
    ("retry_poll", sync_retry_poll),
    ("retry_action", sync_retry_action),
    ("policy_retry", sync_policy_retry),
    ("backon", sync_backon),
];

const ASYNC: &[Variant] = &[
    ("plain", async_plain),
    ("hand_loop", async_hand_loop),
    ("retry_literal", async_retry_literal),
    ("retry_policy_const", async_retry_policy_const),
    ("retry_budget", async_retry_budget),
    ("retry_breaker", async_retry_breaker),
    ("retry_context", async_retry_context),
    ("retry_poll", async_retry_poll),
    ("retry_action", async_retry_action),
    ("policy_retry", async_policy_retry),
    ("retry_hedged", async_retry_hedged),
    ("backon", async_backon),
    ("tokio_retry2", async_tokio_retry2),
    ("tryhard", async_tryhard),
];

/// A tower service: alone, behind `RetryLayer`, behind `tower::retry`.
const TOWER: &[Variant] = &[
    ("plain", tower_plain),
    ("retry_layer", tower_retry_layer),
    ("tower_retry", tower_tower_retry),
    ("hedged_layer", tower_hedged_layer),
    ("tower_hedge", tower_tower_hedge),
];

/// A unary gRPC call to a channel whose answer is ready: alone, and behind
/// `GrpcRetryLayer` with a retry policy for the method.
const GRPC: &[Variant] = &[("plain", grpc_plain), ("grpc_layer", grpc_grpc_layer)];

/// Fault injection present and injecting nothing (feature `chaos`): the
/// attribute's literal variants without an injector, then with one at rate
/// 0 (one draw a call), one seeded at rate 0 (its generator behind a
/// lock), and one whose gate is closed (no draw).
#[cfg(feature = "chaos")]
const CHAOS: &[Variant] = &[
    ("sync_retry", sync_retry_literal),
    ("sync_rate_zero", chaos::sync_rate_zero),
    ("sync_rate_zero_seeded", chaos::sync_rate_zero_seeded),
    ("sync_gate_closed", chaos::sync_gate_closed),
    ("async_retry", async_retry_literal),
    ("async_rate_zero", chaos::async_rate_zero),
];

#[cfg(feature = "chaos")]
mod chaos {
    use super::{MyError, poll_ready, work};
    use backoff_runtime::chaos::{Injector, Rate};
    use backoff_runtime::retry;

    fn injected() -> MyError {
        MyError
    }

    static ZERO: Injector<u64, MyError> = Injector::new().fault(Rate::new(0.0), injected);
    static ZERO_SEEDED: Injector<u64, MyError> = Injector::new().fault(Rate::new(0.0), injected).seed(1);
    static CLOSED: Injector<u64, MyError> = Injector::new().fault(Rate::new(0.3), injected).enabled(false);

    #[retry(max_retries = 5, initial_backoff = "100ms", max_backoff = "2s", chaos = ZERO)]
    #[inline(never)]
    pub(super) fn sync_rate_zero(x: u64) -> Result<u64, MyError> {
        work(x)
    }

    #[retry(max_retries = 5, initial_backoff = "100ms", max_backoff = "2s", chaos = ZERO_SEEDED)]
    #[inline(never)]
    pub(super) fn sync_rate_zero_seeded(x: u64) -> Result<u64, MyError> {
        work(x)
    }

    #[retry(max_retries = 5, initial_backoff = "100ms", max_backoff = "2s", chaos = CLOSED)]
    #[inline(never)]
    pub(super) fn sync_gate_closed(x: u64) -> Result<u64, MyError> {
        work(x)
    }

    #[retry(max_retries = 5, initial_backoff = "100ms", max_backoff = "2s", chaos = ZERO)]
    async fn rate_zero_async(x: u64) -> Result<u64, MyError> {
        work(x)
    }

    #[inline(never)]
    pub(super) fn async_rate_zero(x: u64) -> Result<u64, MyError> {
        poll_ready(rate_zero_async(x))
    }
}

#[cfg(not(feature = "chaos"))]
const GROUPS: [(&str, &[Variant]); 4] = [("sync", SYNC), ("async", ASYNC), ("tower", TOWER), ("grpc", GRPC)];
#[cfg(feature = "chaos")]
const GROUPS: [(&str, &[Variant]); 5] = [
    ("sync", SYNC),
    ("async", ASYNC),
    ("tower", TOWER),
    ("grpc", GRPC),
    ("chaos", CHAOS),
];

/// A current-thread tokio runtime, entered while the async variants run (they
/// never touch it on the happy path, but a user's would be there).
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a current-thread runtime")
}

/// A function that does nothing: what the callgrind loop itself costs per
/// call (`harness/empty`), to be subtracted from the other variants.
#[inline(never)]
fn harness_empty(x: u64) -> Result<u64, MyError> {
    Ok(x)
}

/// `HAPPY_PATH_CALLGRIND="<group>/<variant> <iterations>"`: one variant, that
/// many calls, nothing else (for instruction counts under callgrind).
fn callgrind_mode(spec: &str) {
    let mut words = spec.split_whitespace();
    let name = words.next().unwrap_or("list");
    let iterations: u64 = words.next().and_then(|n| n.parse().ok()).unwrap_or(0);
    let all = GROUPS
        .iter()
        .flat_map(|(group, variants)| variants.iter().map(move |(v, f)| (format!("{group}/{v}"), *f)))
        .chain([(
            "harness/empty".to_owned(),
            harness_empty as fn(u64) -> Result<u64, MyError>,
        )]);
    let Some((_, call)) = all.clone().find(|(n, _)| *n == name) else {
        for (n, _) in all {
            println!("{n}");
        }
        return;
    };
    let rt = runtime();
    let _context = rt.enter();
    let mut sum = 0u64;
    for _ in 0..iterations {
        sum = sum.wrapping_add(black_box(call(black_box(INPUT))).map_or(0, |v| v));
    }
    println!("{name}: {iterations} calls, checksum {sum:x}");
}

fn bench_group(c: &mut Criterion, group: &str, variants: &[Variant]) {
    let mut g = c.benchmark_group(format!("happy_{group}"));
    for &(name, call) in variants {
        let expected = work(INPUT).map_or(0, |v| v);
        assert_eq!(
            call(INPUT).map_or(0, |v| v),
            expected,
            "{group}/{name} computes the body"
        );
        g.bench_function(name, |b| b.iter(|| call(black_box(INPUT))));
    }
    g.finish();
}

/// The ratio table of this run: printed and written under `target/`.
fn report(since: SystemTime) {
    let mut out = String::from("# happy_path: median time per call, ratio to the plain function of the same run\n\n");
    out.push_str("| group | variant | ns/call | x plain |\n|---|---|---:|---:|\n");
    let mut any = false;
    for (group, variants) in GROUPS {
        let group_id = format!("happy_{group}");
        let plain = median_ns(&group_id, "plain", since);
        for (name, _) in variants {
            let Some(ns) = median_ns(&group_id, name, since) else {
                continue;
            };
            any = true;
            let ratio = plain.map_or_else(|| "n/a".to_owned(), |p| format!("{:.2}", ns / p));
            out.push_str(&format!("| {group} | {name} | {ns:.2} | {ratio} |\n"));
        }
    }
    if !any {
        return;
    }
    estimates::publish(&out, "happy_path.md");
}

fn main() {
    if let Ok(spec) = std::env::var("HAPPY_PATH_CALLGRIND") {
        callgrind_mode(&spec);
        return;
    }
    let since = SystemTime::now();
    let mut c = Criterion::default()
        .sample_size(30)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .configure_from_args();
    let rt = runtime();
    for (group, variants) in GROUPS {
        let _context = matches!(group, "async" | "tower").then(|| rt.enter());
        bench_group(&mut c, group, variants);
    }
    c.final_summary();
    report(since);
}
