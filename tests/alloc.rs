//! Heap allocations of `#[retry]` functions (BENCHMARKS.md, the
//! performance targets): none per call on the happy path, sync or async, and
//! none per call through the tower layer; none on the
//! sync failure path; at most one per failing async call on tokio (the boxed
//! `Sleep`, allocated on the first failure and reset for later waits); none
//! on an async failure path with a custom sleep.
//!
//! ```sh
//! cargo test --test alloc -- --nocapture
//! ```
//!
//! Counting uses the `allocation-counter` crate (dev-dependency): a global
//! allocator wrapping `std::alloc::System` that counts per thread, so tests
//! running in parallel never see each other's allocations. (Implementing
//! `GlobalAlloc` needs `unsafe impl`, which the workspace forbids.) Each
//! failure-path test makes one warm-up call first: the thread's RNG, tracing's
//! callsite registry and tokio's timer allocate once, on first use.

use std::cell::Cell;
use std::future::{Future, ready};
use std::hint::black_box;
use std::pin::{Pin, pin};
use std::task::{Context, Poll, Waker};

use allocation_counter::measure;
use backoff_runtime::retry;

#[derive(Debug, PartialEq)]
pub struct Busy;

/// About twenty instructions of work that never fails.
fn work(x: u64) -> Result<u64, Busy> {
    let mut acc = x;
    for i in 0..4 {
        acc = (acc ^ (acc >> 29)).wrapping_mul(0xbf58_476d_1ce4_e5b9).wrapping_add(i);
    }
    if acc == 0 { Err(Busy) } else { Ok(acc) }
}

/// Fails `failures` times, then returns the number of the attempt.
fn flaky(calls: &Cell<u32>, failures: u32) -> Result<u32, Busy> {
    calls.set(calls.get() + 1);
    if calls.get() <= failures {
        Err(Busy)
    } else {
        Ok(calls.get())
    }
}

/// Polls `future` once with a no-op waker; it must complete.
fn poll_ready<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    match future.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(output) => output,
        Poll::Pending => panic!("expected the call to complete on its first poll"),
    }
}

fn paused_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a current-thread runtime")
}

#[retry(max_retries = 5, initial_backoff = "100ms", max_backoff = "2s")]
fn happy_sync(x: u64) -> Result<u64, Busy> {
    work(x)
}

#[retry(max_retries = 5, initial_backoff = "100ms", max_backoff = "2s")]
async fn happy_async(x: u64) -> Result<u64, Busy> {
    work(x)
}

#[retry(max_retries = 10, initial_backoff = "1ms", max_backoff = "10ms", sleep = |_| {})]
fn failing_sync(calls: &Cell<u32>, failures: u32) -> Result<u32, Busy> {
    flaky(calls, failures)
}

#[retry(max_retries = 10, initial_backoff = "1ms", max_backoff = "10ms")]
async fn failing_async(calls: &Cell<u32>, failures: u32) -> Result<u32, Busy> {
    flaky(calls, failures)
}

#[retry(max_retries = 10, initial_backoff = "1ms", max_backoff = "10ms", sleep = |_| ready(()))]
async fn failing_async_custom_sleep(calls: &Cell<u32>, failures: u32) -> Result<u32, Busy> {
    flaky(calls, failures)
}

/// The same waits by hand with `tokio::time::sleep`: what the runtime itself
/// allocates per call (the baseline of the async failure test).
async fn failing_by_hand(calls: &Cell<u32>, failures: u32) -> Result<u32, Busy> {
    let mut wait = std::time::Duration::from_millis(1);
    loop {
        match flaky(calls, failures) {
            Ok(n) => return Ok(n),
            Err(_) => {
                tokio::time::sleep(wait).await;
                wait = (wait * 2).min(std::time::Duration::from_millis(10));
            }
        }
    }
}

/// The counter is installed and counts this thread: a zero below is not
/// vacuous.
#[test]
fn counter_sees_an_allocation() {
    let info = measure(|| drop(black_box(Box::new(1u64))));
    assert_eq!(info.count_total, 1);
}

#[test]
fn sync_happy_path_never_allocates() {
    assert!(happy_sync(black_box(3)).is_ok());
    let info = measure(|| {
        for x in 0..1000 {
            assert!(black_box(happy_sync(black_box(x + 1))).is_ok());
        }
    });
    assert_eq!(
        info.count_total, 0,
        "allocations in 1000 successful sync calls: {info:?}"
    );
}

#[test]
fn async_happy_path_never_allocates() {
    let rt = paused_runtime();
    let _context = rt.enter();
    assert!(poll_ready(happy_async(black_box(3))).is_ok());
    let info = measure(|| {
        for x in 0..1000 {
            assert!(black_box(poll_ready(happy_async(black_box(x + 1)))).is_ok());
        }
    });
    assert_eq!(
        info.count_total, 0,
        "allocations in 1000 successful async calls: {info:?}"
    );
}

#[retry(max_retries = 2, hedge_after = "50ms")]
async fn happy_hedged(x: u64) -> Result<u64, Busy> {
    work(x)
}

/// A hedged call whose first attempt answers before the delay allocates
/// nothing: the attempt and the delay's timer are kept in the call's
/// future, and the timer is never polled.
#[test]
fn a_hedged_call_answered_before_the_delay_never_allocates() {
    let rt = paused_runtime();
    let _context = rt.enter();
    assert!(poll_ready(happy_hedged(black_box(3))).is_ok());
    let info = measure(|| {
        for x in 0..1000 {
            assert!(black_box(poll_ready(happy_hedged(black_box(x + 1)))).is_ok());
        }
    });
    assert_eq!(
        info.count_total, 0,
        "allocations in 1000 hedged calls answered at once: {info:?}"
    );
}

/// A ready tower service of `work`.
#[derive(Clone, Copy)]
struct Work;

impl tower::Service<u64> for Work {
    type Response = u64;
    type Error = Busy;
    type Future = std::future::Ready<Result<u64, Busy>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Busy>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, x: u64) -> Self::Future {
        ready(work(x))
    }
}

/// Every `u64` request may be sent again, as itself.
#[derive(Clone, Copy)]
struct Same;

impl backoff_tower::Classify<u64, u64, Busy> for Same {
    fn may_retry(&self, _: &u64) -> bool {
        true
    }

    fn replay(&self, request: &u64, _: &backoff_runtime::Attempt) -> u64 {
        *request
    }
}

/// The tower layer's call is a named future, not a box: a successful call
/// allocates nothing (the layer's keys are shared through one `Arc`, made
/// when the service is).
#[test]
fn the_tower_layer_s_happy_path_never_allocates() {
    use tower::{Layer, Service};
    let rt = paused_runtime();
    let _context = rt.enter();
    let policy = backoff_runtime::Policy::new().max_retries(5);
    let mut service = backoff_tower::RetryLayer::new(policy).classify(Same).layer(Work);
    let mut call = |x: u64| {
        match service.poll_ready(&mut Context::from_waker(Waker::noop())) {
            Poll::Ready(ready) => assert!(ready.is_ok()),
            Poll::Pending => panic!("the service is always ready"),
        }
        poll_ready(service.call(x))
    };
    assert!(call(black_box(3)).is_ok());
    let info = measure(|| {
        for x in 0..1000 {
            assert!(black_box(call(black_box(x + 1))).is_ok());
        }
    });
    assert_eq!(
        info.count_total, 0,
        "allocations in 1000 successful calls through the layer: {info:?}"
    );
}

/// Through the tower layer, a hedged call answered before the delay
/// allocates nothing: its first attempt runs in place, and the rest of the
/// call (its hedges, the delay's wait) is boxed only when the first attempt
/// is found running.
#[test]
fn the_tower_layer_s_hedged_call_answered_before_the_delay_never_allocates() {
    use tower::{Layer, Service};
    let rt = paused_runtime();
    let _context = rt.enter();
    let policy = backoff_runtime::Policy::new().max_retries(2);
    let layer = backoff_tower::RetryLayer::new(policy)
        .classify(Same)
        .hedge_after(std::time::Duration::from_millis(50));
    let mut service = layer.layer(Work);
    let mut call = |x: u64| {
        match service.poll_ready(&mut Context::from_waker(Waker::noop())) {
            Poll::Ready(ready) => assert!(ready.is_ok()),
            Poll::Pending => panic!("the service is always ready"),
        }
        poll_ready(service.call(x))
    };
    assert!(call(black_box(3)).is_ok());
    let info = measure(|| {
        for x in 0..1000 {
            assert!(black_box(call(black_box(x + 1))).is_ok());
        }
    });
    assert_eq!(
        info.count_total, 0,
        "allocations in 1000 hedged calls through the layer: {info:?}"
    );
}

#[test]
fn sync_failure_path_never_allocates() {
    assert_eq!(failing_sync(&Cell::new(0), 2), Ok(3));
    let calls = Cell::new(0);
    let info = measure(|| assert_eq!(failing_sync(&calls, 10), Ok(11)));
    assert_eq!(
        info.count_total, 0,
        "allocations in a sync call with 10 retries: {info:?}"
    );
    // And when the retries run out.
    let calls = Cell::new(0);
    let info = measure(|| assert_eq!(failing_sync(&calls, u32::MAX), Err(Busy)));
    assert_eq!(calls.get(), 11);
    assert_eq!(
        info.count_total, 0,
        "allocations in a sync call that gives up: {info:?}"
    );
}

#[test]
fn async_failure_path_allocates_at_most_once_per_call() {
    let rt = paused_runtime();
    assert_eq!(rt.block_on(failing_async(&Cell::new(0), 2)), Ok(3));
    assert_eq!(rt.block_on(failing_by_hand(&Cell::new(0), 2)), Ok(3));

    // The runtime and its timer allocate nothing per call by themselves...
    let calls = Cell::new(0);
    let baseline = measure(|| assert_eq!(rt.block_on(failing_by_hand(&calls, 5)), Ok(6)));
    assert_eq!(baseline.count_total, 0, "tokio itself allocated: {baseline:?}");

    // ...so what a call with 5 waits allocates is the retry loop's: one
    // boxed `Sleep`, reused for every wait.
    let calls = Cell::new(0);
    let info = measure(|| assert_eq!(rt.block_on(failing_async(&calls, 5)), Ok(6)));
    println!("async call with 5 retries on tokio: {info:?}");
    assert!(
        info.count_total <= 1,
        "allocations in an async call with 5 retries: {info:?}"
    );
    let calls = Cell::new(0);
    let info = measure(|| assert_eq!(rt.block_on(failing_async(&calls, u32::MAX)), Err(Busy)));
    assert_eq!(calls.get(), 11);
    assert!(
        info.count_total <= 1,
        "allocations in an async call that gives up after 10 retries: {info:?}"
    );
    assert_eq!(
        info.count_current, 0,
        "the boxed Sleep is freed with the call: {info:?}"
    );
}

#[test]
fn async_failure_path_with_custom_sleep_never_allocates() {
    assert_eq!(poll_ready(failing_async_custom_sleep(&Cell::new(0), 2)), Ok(3));
    let calls = Cell::new(0);
    let info = measure(|| assert_eq!(poll_ready(failing_async_custom_sleep(&calls, 10)), Ok(11)));
    assert_eq!(
        info.count_total, 0,
        "allocations in an async call with a custom sleep: {info:?}"
    );
}

/// `channel` under the gRPC layer, with a `retryPolicy` for the service
/// `a.B`.
fn grpc_retry_over<S>(channel: S) -> backoff_grpc::GrpcRetryService<S> {
    const CONFIG: &str = r#"{"methodConfig": [{
        "name": [{"service": "a.B"}],
        "retryPolicy": {"maxAttempts": 2, "initialBackoff": "0.1s", "maxBackoff": "1s",
                        "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]}
    }]}"#;
    let config = backoff_grpc::ServiceConfig::from_json(CONFIG).unwrap();
    tower::Layer::layer(&backoff_grpc::GrpcRetryLayer::new(config), channel)
}

/// The gRPC layer sends each attempt with a copy of the call's headers.
/// tonic's `Channel` adds `user-agent` to every request it is given: the
/// copy has room for it (and for the attempt headers), so adding it
/// allocates nothing, as it allocates nothing in the caller's own headers.
/// A plain `HeaderMap::clone` has none: its entries are reallocated on
/// every call (about 700 instructions of a loopback call).
#[test]
fn the_grpc_layer_s_attempt_headers_have_room_for_the_channel_s_user_agent() {
    use std::sync::{Arc, Mutex};
    use tower::{Service, ServiceExt};
    let seen = Arc::new(Mutex::new(Vec::new()));
    let channel = tower::service_fn({
        let seen = Arc::clone(&seen);
        move |mut request: http::Request<tonic::body::Body>| {
            let info = measure(|| {
                let agent = http::HeaderValue::from_static("tonic/0.14");
                request.headers_mut().insert(http::header::USER_AGENT, agent);
            });
            seen.lock().unwrap().push((request.headers().len(), info.count_total));
            async { Ok::<_, std::convert::Infallible>(http::Response::new(tonic::body::Body::empty())) }
        }
    });
    let mut service = grpc_retry_over(channel);
    let rt = paused_runtime();
    for _ in 0..2 {
        // The headers of tonic's requests.
        let request = http::Request::post("/a.B/C")
            .header(http::header::TE, "trailers")
            .header(http::header::CONTENT_TYPE, "application/grpc")
            .body(tonic::body::Body::new(String::from("message")))
            .unwrap();
        let response = rt.block_on(async { service.ready().await.unwrap().call(request).await });
        assert_eq!(response.unwrap().status(), 200);
    }
    assert_eq!(
        *seen.lock().unwrap(),
        [(3, 0), (3, 0)],
        "(headers, allocations adding user-agent) of each call's one attempt"
    );
}

/// A call without headers is sent without a copy: the attempt's map is
/// empty and unallocated, as the caller's was, and the channel's first
/// header allocates it as it would without the layer.
#[test]
fn the_grpc_layer_sends_a_call_without_headers_without_allocating_a_copy() {
    use std::sync::{Arc, Mutex};
    use tower::{Service, ServiceExt};
    let seen = Arc::new(Mutex::new(Vec::new()));
    let channel = tower::service_fn({
        let seen = Arc::clone(&seen);
        move |request: http::Request<tonic::body::Body>| {
            seen.lock().unwrap().push(request.headers().capacity());
            async { Ok::<_, std::convert::Infallible>(http::Response::new(tonic::body::Body::empty())) }
        }
    });
    let mut service = grpc_retry_over(channel);
    let rt = paused_runtime();
    let request = http::Request::post("/a.B/C")
        .body(tonic::body::Body::new(String::from("message")))
        .unwrap();
    let response = rt.block_on(async { service.ready().await.unwrap().call(request).await });
    assert_eq!(response.unwrap().status(), 200);
    assert_eq!(*seen.lock().unwrap(), [0], "the capacity of the attempt's headers");
}

/// A call's body kept for a retry: its one data frame (a unary gRPC call's
/// body) is kept inline, in the state the call allocated when it started:
/// reading it, keeping it, committing the call and sending it again
/// allocate nothing.
#[test]
fn keeping_a_one_frame_body_for_a_retry_never_allocates() {
    use backoff_tower::{Replay, ReplayLimits};
    use http_body::Body as _;
    let limits = ReplayLimits::new();
    let body = http_body_util::Full::new(bytes::Bytes::from_static(b"message"));
    let Ok(replay) = Replay::try_new(body, &limits) else {
        panic!("a 7-byte body fits the cap");
    };
    let mut first = replay.attempt().unwrap();
    let mut second = None;
    let mut frames = 0;
    let info = measure(|| {
        let mut cx = Context::from_waker(Waker::noop());
        while let Poll::Ready(Some(frame)) = Pin::new(&mut first).poll_frame(&mut cx) {
            assert_eq!(frame.unwrap().into_data().unwrap(), "message");
            frames += 1;
        }
        assert_eq!(limits.reserved(), 7, "kept");
        let mut again = replay.attempt().unwrap();
        while let Poll::Ready(Some(frame)) = Pin::new(&mut again).poll_frame(&mut cx) {
            assert_eq!(frame.unwrap().into_data().unwrap(), "message");
            frames += 1;
        }
        replay.commit();
        second = Some(again);
    });
    assert_eq!(frames, 2);
    assert_eq!(limits.reserved(), 0, "given back at the commit");
    assert_eq!(
        info.count_total, 0,
        "allocations keeping and replaying a one-frame body: {info:?}"
    );
    drop((first, second));
}
