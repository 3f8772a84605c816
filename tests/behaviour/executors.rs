//! The default async sleep on executors other than tokio: smol and
//! `futures::executor::block_on`, with no tokio runtime anywhere. The
//! attribute and the builder retry there, and each wait lasts at least its
//! schedule's length (futures-timer's helper thread; never early). Waits
//! are a few milliseconds: no tokio clock to pause here.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use backoff_runtime::{Elapsed, Jitter, Policy, retry};

#[derive(Debug, PartialEq)]
enum CallError {
    Busy,
    TimedOut,
}

impl From<Elapsed> for CallError {
    fn from(_: Elapsed) -> Self {
        CallError::TimedOut
    }
}

/// When each attempt started; busy until the `succeeds_at`-th.
fn attempt(log: &Mutex<Vec<Instant>>, succeeds_at: usize) -> Result<usize, CallError> {
    assert!(
        tokio::runtime::Handle::try_current().is_err(),
        "these tests run outside tokio"
    );
    let mut log = log.lock().unwrap();
    log.push(Instant::now());
    if log.len() < succeeds_at {
        Err(CallError::Busy)
    } else {
        Ok(log.len())
    }
}

/// The gaps between attempts are at least the schedule's waits: 4, 8, 16 ms.
fn assert_waited_the_schedule(log: &Mutex<Vec<Instant>>) {
    let log = log.lock().unwrap();
    let gaps: Vec<Duration> = log.windows(2).map(|pair| pair[1] - pair[0]).collect();
    assert_eq!(gaps.len(), 3, "{gaps:?}");
    for (gap, wait) in gaps.iter().zip([4, 8, 16].map(Duration::from_millis)) {
        assert!(*gap >= wait, "a {wait:?} wait lasted {gap:?}: {gaps:?}");
    }
}

#[retry(initial_backoff = "4ms", max_backoff = "16ms", jitter = none)]
async fn annotated(log: &Mutex<Vec<Instant>>) -> Result<usize, CallError> {
    attempt(log, 4)
}

const SCHEDULE: Policy = Policy::new()
    .initial_backoff(Duration::from_millis(4))
    .max_backoff(Duration::from_millis(16))
    .jitter(Jitter::None);

async fn with_the_builder(log: &Mutex<Vec<Instant>>) -> Result<usize, CallError> {
    SCHEDULE.retry(|| async { attempt(log, 4) }).await
}

#[test]
fn the_attribute_retries_on_smol() {
    let log = Mutex::new(Vec::new());
    assert_eq!(smol::block_on(annotated(&log)), Ok(4));
    assert_waited_the_schedule(&log);
}

#[test]
fn the_attribute_retries_on_a_spawned_smol_task() {
    let executor = smol::Executor::new();
    let log = std::sync::Arc::new(Mutex::new(Vec::new()));
    let task = executor.spawn({
        let log = std::sync::Arc::clone(&log);
        async move { annotated(&log).await }
    });
    assert_eq!(smol::block_on(executor.run(task)), Ok(4));
    assert_waited_the_schedule(&log);
}

#[test]
fn the_attribute_retries_on_futures_block_on() {
    let log = Mutex::new(Vec::new());
    assert_eq!(futures_executor::block_on(annotated(&log)), Ok(4));
    assert_waited_the_schedule(&log);
}

#[test]
fn the_builder_retries_on_smol() {
    let log = Mutex::new(Vec::new());
    assert_eq!(smol::block_on(with_the_builder(&log)), Ok(4));
    assert_waited_the_schedule(&log);
}

/// The builder is `IntoFuture`: handed to a `block_on` that takes a
/// `Future`, it is `.into_future()`, as its rustdoc says.
#[test]
fn the_builder_is_handed_to_smol_s_block_on_as_into_future() {
    use std::future::IntoFuture as _;
    let log = Mutex::new(Vec::new());
    let result = smol::block_on(SCHEDULE.retry(|| async { attempt(&log, 4) }).into_future());
    assert_eq!(result, Ok(4));
    assert_waited_the_schedule(&log);
}

#[test]
fn the_builder_retries_on_futures_block_on() {
    let log = Mutex::new(Vec::new());
    assert_eq!(futures_executor::block_on(with_the_builder(&log)), Ok(4));
    assert_waited_the_schedule(&log);
}

/// Hangs on the first attempt; the second answers.
#[retry(timeout = "5ms", initial_backoff = "1ms", jitter = none)]
async fn hangs_once(calls: &Mutex<u32>) -> Result<u32, CallError> {
    let n = {
        let mut calls = calls.lock().unwrap();
        *calls += 1;
        *calls
    };
    if n == 1 {
        std::future::pending::<()>().await;
    }
    Ok(n)
}

#[test]
fn a_per_attempt_timeout_cuts_a_hanging_attempt_outside_tokio() {
    let calls = Mutex::new(0);
    let started = Instant::now();
    assert_eq!(futures_executor::block_on(hangs_once(&calls)), Ok(2));
    assert!(started.elapsed() >= Duration::from_millis(6), "{:?}", started.elapsed());
}

#[test]
fn the_builder_s_timeout_cuts_a_hanging_attempt_on_smol() {
    let calls = Mutex::new(0);
    let result = smol::block_on(async {
        SCHEDULE
            .retry(|| async {
                let first = {
                    let mut calls = calls.lock().unwrap();
                    *calls += 1;
                    *calls == 1
                };
                if first {
                    std::future::pending::<()>().await;
                }
                Ok::<_, CallError>(7)
            })
            .timeout(Duration::from_millis(5))
            .await
    });
    assert_eq!(result, Ok(7));
    assert_eq!(*calls.lock().unwrap(), 2);
}

/// Every attempt fails: the loop gives up after its retries.
#[retry(max_retries = 2, initial_backoff = "2ms", jitter = none)]
async fn always_busy(calls: &Mutex<u32>) -> Result<(), CallError> {
    *calls.lock().unwrap() += 1;
    Err(CallError::Busy)
}

#[test]
fn a_loop_that_gives_up_outside_tokio_returns_the_last_error() {
    let calls = Mutex::new(0);
    let started = Instant::now();
    assert_eq!(futures_executor::block_on(always_busy(&calls)), Err(CallError::Busy));
    assert_eq!(*calls.lock().unwrap(), 3);
    assert!(started.elapsed() >= Duration::from_millis(6), "{:?}", started.elapsed());
}
