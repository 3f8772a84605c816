//! Goodput under a burst: the adaptive rate limiter
//! against a backend of 300 calls/s that answers "slow down" above it, on
//! tokio's paused clock. A throttled answer to an attempt sent before the
//! last cut does not cut again; with a cut per throttled answer (AWS's
//! SDKs) both runs below collapse. The same runs in real time, over the
//! loopback, are `examples/admission_burst.rs` (BENCHMARKS.md, "Goodput
//! under a burst").

use backoff_runtime::limits::{AdaptiveRateLimiter, Refused};
use backoff_runtime::retry;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::time::{Duration, Instant};

/// What the backend serves, in calls per second.
const CAPACITY: f64 = 300.0;
/// One network hop, each way.
const HOP: Duration = Duration::from_millis(1);

/// The errors of the calls: the backend's "slow down" (a 429), and the
/// client's own refusal.
#[derive(Clone, Copy, Debug, PartialEq)]
enum CallError {
    SlowDown,
    Shed,
}

impl From<Refused> for CallError {
    fn from(_: Refused) -> Self {
        CallError::Shed
    }
}

/// A backend on the paused clock: a token bucket of `CAPACITY` calls/s
/// holding at most `burst`, full at the first call. A call finding no token
/// is answered "slow down". It counts the calls and the calls served in
/// each 100 ms since `start`.
struct Backend {
    burst: f64,
    bucket: Mutex<Option<(f64, Instant)>>,
    start: Mutex<Option<Instant>>,
    calls: [AtomicU64; 100],
    served: [AtomicU64; 100],
}

impl Backend {
    const fn new(burst: f64) -> Self {
        Backend {
            burst,
            bucket: Mutex::new(None),
            start: Mutex::new(None),
            calls: [const { AtomicU64::new(0) }; 100],
            served: [const { AtomicU64::new(0) }; 100],
        }
    }

    /// The figures count from now.
    fn start(&self) -> Instant {
        let now = Instant::now();
        *self.start.lock().expect("no test panics holding it") = Some(now);
        now
    }

    /// One call: a hop there, the bucket, a hop back.
    async fn call(&self) -> Result<(), CallError> {
        tokio::time::sleep(HOP).await;
        let now = Instant::now();
        let served = {
            let mut bucket = self.bucket.lock().expect("no test panics holding it");
            let (tokens, at) = bucket.get_or_insert((self.burst, now));
            *tokens = (*tokens + (now - *at).as_secs_f64() * CAPACITY).min(self.burst);
            *at = now;
            let served = *tokens >= 1.0;
            if served {
                *tokens -= 1.0;
            }
            served
        };
        let start = self.start.lock().expect("no test panics holding it").unwrap_or(now);
        let tenth = usize::try_from((now - start).as_millis() / 100).unwrap_or(usize::MAX);
        if let Some(calls) = self.calls.get(tenth) {
            calls.fetch_add(1, Ordering::SeqCst);
            if served {
                self.served[tenth].fetch_add(1, Ordering::SeqCst);
            }
        }
        tokio::time::sleep(HOP).await;
        if served { Ok(()) } else { Err(CallError::SlowDown) }
    }

    /// Calls and calls served per second from `from` to `until` seconds.
    fn per_second(&self, from: usize, until: usize) -> (f64, f64) {
        let sum = |series: &[AtomicU64; 100]| -> f64 {
            series[from * 10..until * 10]
                .iter()
                .map(|count| count.load(Ordering::SeqCst) as f64)
                .sum::<f64>()
                / (until - from) as f64
        };
        (sum(&self.calls), sum(&self.served))
    }

    /// Every call the backend saw.
    fn total_calls(&self) -> u64 {
        self.calls.iter().map(|count| count.load(Ordering::SeqCst)).sum()
    }
}

fn is_slow_down(error: &CallError) -> bool {
    *error == CallError::SlowDown
}

/// 1,000 tasks call in a loop for 4 s, all starting at once.
mod thousand_tasks {
    use super::*;

    const TASKS: usize = 1000;
    const RUN: Duration = Duration::from_secs(4);

    static BACKEND: Backend = Backend::new(CAPACITY);
    static LIMITER: AdaptiveRateLimiter = AdaptiveRateLimiter::new();

    #[retry(admission = LIMITER, slow_down_if = is_slow_down, initial_backoff = "100ms")]
    async fn call() -> Result<(), CallError> {
        BACKEND.call().await
    }

    /// Over the last 2 of 4 s, the limiter admits at least 80% of the
    /// backend's capacity, and the backend sees at most 1.25 times it. With
    /// a cut per throttled answer, the first burst's throttles cut the rate
    /// to its floor, and it admitted under 10 calls/s there.
    #[tokio::test(start_paused = true)]
    async fn admit_at_least_80_percent_of_the_backend_and_load_it_at_most_125_percent() {
        let start = BACKEND.start();
        let tasks: Vec<_> = (0..TASKS)
            .map(|_| {
                tokio::spawn(async move {
                    while start.elapsed() < RUN {
                        if call().await == Err(CallError::Shed) {
                            tokio::time::sleep(Duration::from_millis(100)).await;
                        }
                    }
                })
            })
            .collect();
        tokio::time::sleep(RUN).await;
        for task in &tasks {
            task.abort();
        }
        let (admitted, served) = BACKEND.per_second(2, 4);
        assert!(
            (0.8 * CAPACITY..=1.25 * CAPACITY).contains(&admitted),
            "{admitted} calls/s admitted over the last 2 s, {served} served; fill rate {}",
            LIMITER.fill_rate()
        );
        assert!(served >= 0.8 * CAPACITY, "{served} calls/s served");
    }
}

/// palantir's spike (dialogue #635): 1,600 requests at once, five retries
/// each.
mod spike {
    use super::*;

    const REQUESTS: usize = 1600;

    /// The spike's requests, with or without a limiter; every request's
    /// outcome and the attempts the backend saw.
    async fn spike<F, Fut>(backend: &'static Backend, call: F) -> (usize, u64)
    where
        F: Fn() -> Fut,
        Fut: Future<Output = Result<(), CallError>> + Send + 'static,
    {
        backend.start();
        let tasks: Vec<_> = (0..REQUESTS).map(|_| tokio::spawn(call())).collect();
        let mut succeeded = 0;
        for task in tasks {
            if task.await.expect("no task panics").is_ok() {
                succeeded += 1;
            }
        }
        (succeeded, backend.total_calls())
    }

    static PACED: Backend = Backend::new(CAPACITY);
    static LIMITER: AdaptiveRateLimiter = AdaptiveRateLimiter::new();

    #[retry(max_retries = 5, admission = LIMITER, slow_down_if = is_slow_down)]
    async fn paced() -> Result<(), CallError> {
        PACED.call().await
    }

    /// Every request succeeds, and the backend sees at most 2 attempts per
    /// request. With a cut per throttled answer, the first burst's
    /// throttles cut the rate to its floor and most requests were refused.
    #[tokio::test(start_paused = true)]
    async fn every_request_succeeds_with_at_most_two_attempts_each() {
        let (succeeded, attempts) = spike(&PACED, paced).await;
        assert!(
            succeeded == REQUESTS && attempts <= 2 * REQUESTS as u64,
            "{succeeded} of {REQUESTS} succeeded, {attempts} attempts"
        );
    }

    static PLAIN: Backend = Backend::new(CAPACITY);

    #[retry(max_retries = 5)]
    async fn plain() -> Result<(), CallError> {
        PLAIN.call().await
    }

    /// The same spike with plain backoff, for comparison (BENCHMARKS.md).
    #[tokio::test(start_paused = true)]
    async fn plain_backoff_for_comparison() {
        let (succeeded, attempts) = spike(&PLAIN, plain).await;
        // 1,600 succeeded, 3,601 attempts: the limiter's run above takes
        // fewer than 2 per request.
        assert!(
            succeeded == REQUESTS && attempts > 2 * REQUESTS as u64,
            "{succeeded} of {REQUESTS} succeeded, {attempts} attempts"
        );
    }
}
