//! `cargo run --release --example admission_load`: 1,000 tokio tasks on 2
//! worker threads call one `#[retry(admission = LIMITER)]` function in a
//! loop for 5 seconds, in real time. Prints how far past `max_wait` an
//! admission came (in real time) and how many times the limiter told a
//! waiter to sleep per admission (each sleep is one wake-up).
//! BENCHMARKS.md, "Admission under load", has the figures.
//!
//! The limiter starts counting at about 70 tokens per second: its history
//! is 3 seconds of answers at 100 per second, then a throttle.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use backoff_runtime::limits::{AdaptiveRateLimiter, Admission, AdmissionLimit, AdmissionRequest, AttemptEnd, Refused};
use backoff_runtime::retry;

const MAX_WAIT: Duration = Duration::from_secs(1);
const TASKS: usize = 1000;
const RUN: Duration = Duration::from_secs(5);

/// The limiter, counting the sleeps it asks for.
struct Counted {
    limiter: AdaptiveRateLimiter,
    sleeps: AtomicU64,
}

impl AdmissionLimit for Counted {
    fn admit(&self, request: AdmissionRequest<'_>) -> Admission {
        let answer = self.limiter.admit(request);
        if !matches!(answer, Admission::Go | Admission::Refuse) {
            self.sleeps.fetch_add(1, Ordering::Relaxed);
        }
        answer
    }
    fn observed(&self, end: AttemptEnd<'_>) {
        self.limiter.observed(end);
    }
}

static LIMITER: Counted = Counted {
    limiter: AdaptiveRateLimiter::new().max_wait(MAX_WAIT),
    sleeps: AtomicU64::new(0),
};

#[derive(Debug)]
struct Shed;

impl From<Refused> for Shed {
    fn from(_: Refused) -> Self {
        Shed
    }
}

/// Returns when the body started: the instant of admission.
#[retry(admission = LIMITER, max_retries = 1)]
async fn call() -> Result<Instant, Shed> {
    Ok(Instant::now())
}

fn main() {
    let now = Instant::now();
    let past = now - Duration::from_secs(3);
    for tick in 0..300 {
        LIMITER.observed(AttemptEnd::new(past + Duration::from_millis(10 * tick), false));
    }
    LIMITER.observed(AttemptEnd::new(now, true));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .expect("a tokio runtime");
    let admitted = AtomicU64::new(0);
    let shed = AtomicU64::new(0);
    let over_nanos = AtomicU64::new(0);
    let over_count = AtomicU64::new(0);
    let started = Instant::now();
    runtime.block_on(async {
        let tasks: Vec<_> = (0..TASKS)
            .map(|_| {
                tokio::spawn(async move {
                    let mut mine = (0_u64, 0_u64, 0_u64, 0_u64);
                    while started.elapsed() < RUN {
                        let asked = Instant::now();
                        match call().await {
                            Ok(at) => {
                                mine.0 += 1;
                                let waited = at - asked;
                                if waited > MAX_WAIT {
                                    let over = u64::try_from((waited - MAX_WAIT).as_nanos()).unwrap_or(u64::MAX);
                                    mine.2 = mine.2.max(over);
                                    mine.3 += 1;
                                }
                            }
                            Err(Shed) => {
                                mine.1 += 1;
                                tokio::time::sleep(Duration::from_millis(100)).await;
                            }
                        }
                    }
                    mine
                })
            })
            .collect();
        for task in tasks {
            let (ok, refused, over, count) = task.await.expect("no task panics");
            admitted.fetch_add(ok, Ordering::Relaxed);
            shed.fetch_add(refused, Ordering::Relaxed);
            over_nanos.fetch_max(over, Ordering::Relaxed);
            over_count.fetch_add(count, Ordering::Relaxed);
        }
    });
    let admitted = admitted.into_inner();
    let sleeps = LIMITER.sleeps.load(Ordering::Relaxed);
    println!("{TASKS} tasks, 2 workers, {RUN:?}, max_wait {MAX_WAIT:?}");
    println!("admissions {admitted}, refusals {}", shed.into_inner());
    println!(
        "longest real wait past max_wait: {:?} ({} admissions past it)",
        Duration::from_nanos(over_nanos.into_inner()),
        over_count.into_inner()
    );
    println!(
        "sleeps asked by the limiter: {sleeps}, {:.2} per admission",
        sleeps as f64 / admitted.max(1) as f64
    );
}
