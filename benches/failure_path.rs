//! Failure path: the cost of one retry (loop, schedule, RNG draw, stop
//! rules) with the sleep taken out, next to a hand-written loop and the
//! peers.
//!
//! ```sh
//! cargo bench --bench failure_path
//! ```
//!
//! Every variant runs a body that fails `N` times and then succeeds, with
//! `N = 0` and `N = 10` (max 10 retries); the cost per retry is
//! `(t(N = 10) - t(N = 0)) / 10`, so the call itself, the successful attempt
//! and the harness cancel out. The figures of this run (criterion's median
//! estimates) are printed at the end and written to
//! `target/bench-ratios/failure_path.md`.
//!
//! Groups:
//!
//! - `failure_sync_noop`: sync, no-op sleep. `#[retry(sleep = |_| {})]`, a
//!   hand-written loop calling a no-op sleep, and backon's
//!   `BlockingRetryable` with `.sleep(|_| {})`. All draw jitter (additive for
//!   the first two, backon's `with_jitter()`).
//! - `failure_async_noop`: async, no-op sleep, polled once with a no-op
//!   waker (asserted `Ready`: the whole call completes in one poll).
//!   `#[retry(sleep = |_| std::future::ready(()))]`, a hand-written loop
//!   awaiting `ready(())`, backon's `Retryable` with
//!   `.sleep(|_| ready(()))`. tokio-retry2 and tryhard cannot take a custom
//!   sleep (both call `tokio::time::sleep` themselves), so they are only in
//!   the next group.
//! - `failure_async_tokio`: every async implementation on tokio's own timer:
//!   1 ms waits on a current-thread runtime with a paused clock
//!   (`start_paused(true)`, the clock jumps to each deadline when the runtime
//!   is idle), one `Runtime::block_on` per call. This is what a tokio user
//!   pays per retry besides the wait itself: timer registration, a park
//!   and a wake-up. `#[retry(jitter = none)]` with the default tokio sleep,
//!   a hand-written loop with `tokio::time::sleep`, backon
//!   (`ConstantBuilder`, default `TokioSleeper`), tokio-retry2
//!   (`FixedInterval`), tryhard (`fixed_backoff`).
//!
//! The sync virtual clock (`testing::VirtualClock`) is not used here: it
//! records every wait in a `Vec`, which would grow for the whole run.
//!
//! Note: the workspace's dev-dependencies enable backoff-runtime's `tracing`
//! feature, so every retry measured here also reads the clock and checks
//! for a tracing subscriber (there is none), as a user with that feature
//! pays.

use std::cell::Cell;
use std::future::{Future, ready};
use std::hint::black_box;
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, SystemTime};

use backoff_runtime::retry;
use criterion::Criterion;

#[path = "support/random.rs"]
mod random;

#[path = "support/estimates.rs"]
mod estimates;
use estimates::median_ns;
use tokio::runtime::Runtime;

/// The body's error.
#[derive(Debug)]
pub struct MyError;

/// Failures before the success in the measured call.
const N: u32 = 10;
const MAX_RETRIES: u32 = 10;
const INITIAL: Duration = Duration::from_millis(1);
const CAP: Duration = Duration::from_millis(10);

/// Fails while fewer than `failures` attempts were made, then does ~20
/// instructions of work.
#[inline(always)]
fn flaky(calls: &Cell<u32>, failures: u32) -> Result<u64, MyError> {
    let n = calls.get() + 1;
    calls.set(n);
    if n <= failures {
        return Err(MyError);
    }
    let mut acc = u64::from(n);
    let mut i = 0;
    while i < 4 {
        acc = (acc ^ (acc >> 29)).wrapping_mul(0xbf58_476d_1ce4_e5b9).wrapping_add(i);
        i += 1;
    }
    Ok(acc)
}

/// The wait a hand-written loop computes: exponential base plus up to one
/// initial wait of jitter, capped.
#[inline(always)]
fn hand_wait(base: Duration) -> Duration {
    let jitter = Duration::from_nanos(random::random_u64() % (INITIAL.as_nanos() as u64 + 1));
    (base + jitter).min(CAP)
}

#[inline(never)]
fn noop_sleep(wait: Duration) {
    black_box(wait);
}

/// Polls `future` once with a no-op waker; it must complete.
#[inline(always)]
fn poll_ready<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    match future.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(output) => output,
        Poll::Pending => panic!("with a no-op sleep the call must complete on its first poll"),
    }
}

// ---- sync, no-op sleep ---------------------------------------------------------

#[inline(never)]
fn sync_hand_loop(failures: u32) -> Result<u64, MyError> {
    let calls = Cell::new(0);
    let mut retries = 0;
    let mut base = INITIAL;
    loop {
        match flaky(&calls, failures) {
            Ok(value) => return Ok(value),
            Err(error) if retries >= MAX_RETRIES => return Err(error),
            Err(_) => {
                noop_sleep(hand_wait(base));
                base = base.saturating_mul(2).min(CAP);
                retries += 1;
            }
        }
    }
}

#[retry(max_retries = 10, initial_backoff = "1ms", max_backoff = "10ms", sleep = |_| {})]
fn retry_flaky(calls: &Cell<u32>, failures: u32) -> Result<u64, MyError> {
    flaky(calls, failures)
}

#[inline(never)]
fn sync_retry_literal(failures: u32) -> Result<u64, MyError> {
    retry_flaky(&Cell::new(0), failures)
}

#[inline(never)]
fn sync_backon(failures: u32) -> Result<u64, MyError> {
    use backon::{BlockingRetryable, ExponentialBuilder};
    let builder = ExponentialBuilder::default()
        .with_min_delay(INITIAL)
        .with_max_delay(CAP)
        .with_max_times(MAX_RETRIES as usize)
        .with_jitter();
    let calls = Cell::new(0);
    (|| flaky(&calls, failures))
        .retry(builder)
        .sleep(|_: Duration| {})
        .call()
}

// ---- async, no-op sleep --------------------------------------------------------

async fn hand_loop_noop_async(calls: &Cell<u32>, failures: u32) -> Result<u64, MyError> {
    let mut retries = 0;
    let mut base = INITIAL;
    loop {
        match flaky(calls, failures) {
            Ok(value) => return Ok(value),
            Err(error) if retries >= MAX_RETRIES => return Err(error),
            Err(_) => {
                noop_sleep(hand_wait(base));
                ready(()).await;
                base = base.saturating_mul(2).min(CAP);
                retries += 1;
            }
        }
    }
}

#[retry(max_retries = 10, initial_backoff = "1ms", max_backoff = "10ms", sleep = |_| ready(()))]
async fn retry_flaky_noop_async(calls: &Cell<u32>, failures: u32) -> Result<u64, MyError> {
    flaky(calls, failures)
}

#[inline(never)]
fn async_noop_hand_loop(failures: u32) -> Result<u64, MyError> {
    poll_ready(hand_loop_noop_async(&Cell::new(0), failures))
}

#[inline(never)]
fn async_noop_retry_literal(failures: u32) -> Result<u64, MyError> {
    poll_ready(retry_flaky_noop_async(&Cell::new(0), failures))
}

#[inline(never)]
fn async_noop_backon(failures: u32) -> Result<u64, MyError> {
    use backon::{ExponentialBuilder, Retryable};
    let builder = ExponentialBuilder::default()
        .with_min_delay(INITIAL)
        .with_max_delay(CAP)
        .with_max_times(MAX_RETRIES as usize)
        .with_jitter();
    let calls = &Cell::new(0);
    poll_ready(
        (move || async move { flaky(calls, failures) })
            .retry(builder)
            .sleep(|_: Duration| ready(())),
    )
}

// ---- async, tokio's timer (paused clock) ---------------------------------------

async fn hand_loop_tokio_async(calls: &Cell<u32>, failures: u32) -> Result<u64, MyError> {
    let mut retries = 0;
    loop {
        match flaky(calls, failures) {
            Ok(value) => return Ok(value),
            Err(error) if retries >= MAX_RETRIES => return Err(error),
            Err(_) => {
                tokio::time::sleep(INITIAL).await;
                retries += 1;
            }
        }
    }
}

#[retry(max_retries = 10, initial_backoff = "1ms", max_backoff = "1ms", jitter = none)]
async fn retry_flaky_tokio_async(calls: &Cell<u32>, failures: u32) -> Result<u64, MyError> {
    flaky(calls, failures)
}

#[inline(never)]
fn tokio_hand_loop(rt: &Runtime, failures: u32) -> Result<u64, MyError> {
    rt.block_on(hand_loop_tokio_async(&Cell::new(0), failures))
}

#[inline(never)]
fn tokio_retry_literal(rt: &Runtime, failures: u32) -> Result<u64, MyError> {
    rt.block_on(retry_flaky_tokio_async(&Cell::new(0), failures))
}

#[inline(never)]
fn tokio_backon(rt: &Runtime, failures: u32) -> Result<u64, MyError> {
    use backon::{ConstantBuilder, Retryable};
    let builder = ConstantBuilder::default()
        .with_delay(INITIAL)
        .with_max_times(MAX_RETRIES as usize);
    let calls = &Cell::new(0);
    rt.block_on((move || async move { flaky(calls, failures) }).retry(builder))
}

#[inline(never)]
fn tokio_tokio_retry2(rt: &Runtime, failures: u32) -> Result<u64, MyError> {
    use tokio_retry2::strategy::FixedInterval;
    use tokio_retry2::{Retry, RetryError};
    let strategy = FixedInterval::new(INITIAL).take(MAX_RETRIES as usize);
    let calls = &Cell::new(0);
    rt.block_on(Retry::spawn(strategy, move || async move {
        flaky(calls, failures).map_err(RetryError::transient)
    }))
}

#[inline(never)]
fn tokio_tryhard(rt: &Runtime, failures: u32) -> Result<u64, MyError> {
    let calls = &Cell::new(0);
    rt.block_on(
        tryhard::retry_fn(move || async move { flaky(calls, failures) })
            .retries(MAX_RETRIES)
            .fixed_backoff(INITIAL),
    )
}

/// The body as a tower service: fails until it has been called `failures`
/// times (the count shared by its clones), then succeeds.
#[derive(Clone)]
struct FlakyService {
    calls: std::sync::Arc<std::sync::atomic::AtomicU32>,
    failures: u32,
}

impl tower::Service<u64> for FlakyService {
    type Response = u64;
    type Error = MyError;
    type Future = std::future::Ready<Result<u64, MyError>>;

    fn poll_ready(&mut self, _: &mut std::task::Context<'_>) -> std::task::Poll<Result<(), MyError>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, _: u64) -> Self::Future {
        // `flaky` on the shared count: the same failures and the same work.
        let before = self.calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        std::future::ready(flaky(&Cell::new(before), self.failures))
    }
}

fn flaky_service(failures: u32) -> FlakyService {
    FlakyService {
        calls: std::sync::Arc::default(),
        failures,
    }
}

#[path = "support/replay.rs"]
mod replay;
use replay::Replay;

/// tower's own retry: `MAX_RETRIES` retries, each after `INITIAL`.
#[derive(Clone, Copy)]
struct FixedRetries(u32);

impl tower::retry::Policy<u64, u64, MyError> for FixedRetries {
    type Future = tokio::time::Sleep;

    fn retry(&mut self, _: &mut u64, result: &mut Result<u64, MyError>) -> Option<Self::Future> {
        if result.is_ok() || self.0 == 0 {
            return None;
        }
        self.0 -= 1;
        Some(tokio::time::sleep(INITIAL))
    }

    fn clone_request(&mut self, request: &u64) -> Option<u64> {
        Some(*request)
    }
}

#[inline(never)]
fn tokio_tower_layer(rt: &Runtime, failures: u32) -> Result<u64, MyError> {
    use tower::{Layer, ServiceExt};
    const LAYER_POLICY: backoff_runtime::Policy = backoff_runtime::Policy::new()
        .max_retries(MAX_RETRIES)
        .initial_backoff(INITIAL)
        .max_backoff(INITIAL)
        .jitter(backoff_runtime::Jitter::None);
    let service = backoff_tower::RetryLayer::new(LAYER_POLICY)
        .classify(Replay)
        .layer(flaky_service(failures));
    rt.block_on(service.oneshot(0))
}

#[inline(never)]
fn tokio_tower_retry(rt: &Runtime, failures: u32) -> Result<u64, MyError> {
    use tower::ServiceExt;
    let service = tower::retry::Retry::new(FixedRetries(MAX_RETRIES), flaky_service(failures));
    rt.block_on(service.oneshot(0))
}

type Variant = (&'static str, fn(u32) -> Result<u64, MyError>);
type TokioVariant = (&'static str, fn(&Runtime, u32) -> Result<u64, MyError>);

const SYNC_NOOP: &[Variant] = &[
    ("hand_loop", sync_hand_loop),
    ("retry_literal", sync_retry_literal),
    ("backon", sync_backon),
];

const ASYNC_NOOP: &[Variant] = &[
    ("hand_loop", async_noop_hand_loop),
    ("retry_literal", async_noop_retry_literal),
    ("backon", async_noop_backon),
];

const ASYNC_TOKIO: &[TokioVariant] = &[
    ("hand_loop", tokio_hand_loop),
    ("retry_literal", tokio_retry_literal),
    ("backon", tokio_backon),
    ("tokio_retry2", tokio_tokio_retry2),
    ("tryhard", tokio_tryhard),
    ("tower_layer", tokio_tower_layer),
    ("tower_retry", tokio_tower_retry),
];

const GROUPS: [(&str, &[&str]); 3] = [
    ("failure_sync_noop", &["hand_loop", "retry_literal", "backon"]),
    ("failure_async_noop", &["hand_loop", "retry_literal", "backon"]),
    (
        "failure_async_tokio",
        &[
            "hand_loop",
            "retry_literal",
            "backon",
            "tokio_retry2",
            "tryhard",
            "tower_layer",
            "tower_retry",
        ],
    ),
];

/// Checks that `call` really retries: with `N` failures it succeeds on
/// attempt `N + 1` (the value is the body's work on `N + 1`).
fn check(name: &str, result: Result<u64, MyError>, expected: &Result<u64, MyError>) {
    match (result, expected) {
        (Ok(got), Ok(want)) => assert_eq!(got, *want, "{name}: succeeds on attempt N + 1"),
        (result, _) => panic!("{name}: expected success after {N} retries, got {result:?}"),
    }
}

fn paused_runtime() -> Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a current-thread runtime with a paused clock")
}

fn bench_all(c: &mut Criterion) {
    let expected = flaky(&Cell::new(N), 0);
    let mut group = c.benchmark_group("failure_sync_noop");
    for &(name, call) in SYNC_NOOP {
        check(name, call(N), &expected);
        for failures in [0, N] {
            group.bench_function(format!("{name}_n{failures}"), |b| b.iter(|| call(black_box(failures))));
        }
    }
    group.finish();

    let mut group = c.benchmark_group("failure_async_noop");
    for &(name, call) in ASYNC_NOOP {
        check(name, call(N), &expected);
        for failures in [0, N] {
            group.bench_function(format!("{name}_n{failures}"), |b| b.iter(|| call(black_box(failures))));
        }
    }
    group.finish();

    let rt = paused_runtime();
    let mut group = c.benchmark_group("failure_async_tokio");
    for &(name, call) in ASYNC_TOKIO {
        check(name, call(&rt, N), &expected);
        for failures in [0, N] {
            group.bench_function(format!("{name}_n{failures}"), |b| {
                b.iter(|| call(&rt, black_box(failures)))
            });
        }
    }
    group.finish();
}

/// The per-retry table of this run: printed and written under `target/`.
fn report(since: SystemTime) {
    let mut out = format!(
        "# failure_path: median ns per call with 0 and {N} failures; per retry = (t{N} - t0) / {N}; \
         ratio to the hand-written loop of the same group and run\n\n"
    );
    out.push_str(&format!(
        "| group | variant | t0 (ns) | t{N} (ns) | ns/retry | x hand loop |\n|---|---|---:|---:|---:|---:|\n"
    ));
    let mut any = false;
    for (group, variants) in GROUPS {
        let per_retry = |name: &str| {
            let t0 = median_ns(group, &format!("{name}_n0"), since)?;
            let tn = median_ns(group, &format!("{name}_n{N}"), since)?;
            Some((t0, tn, (tn - t0) / f64::from(N)))
        };
        let hand = per_retry("hand_loop").map(|(_, _, r)| r);
        for name in variants {
            let Some((t0, tn, r)) = per_retry(name) else {
                continue;
            };
            any = true;
            let ratio = hand.map_or_else(|| "n/a".to_owned(), |h| format!("{:.2}", r / h));
            out.push_str(&format!(
                "| {group} | {name} | {t0:.1} | {tn:.1} | {r:.1} | {ratio} |\n"
            ));
        }
    }
    if !any {
        return;
    }
    estimates::publish(&out, "failure_path.md");
}

fn main() {
    let since = SystemTime::now();
    let mut c = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .configure_from_args();
    bench_all(&mut c);
    c.final_summary();
    report(since);
}
