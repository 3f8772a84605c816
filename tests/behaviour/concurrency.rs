//! One annotated function called from many threads and many tasks at once:
//! every call gets its own retry state, the jitter RNG is per thread (seeded
//! per thread, the schedules repeat whatever the other threads do), and
//! every future is `Send` whenever its body is.

use std::cell::Cell;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use backoff_runtime::retry;
use backoff_runtime::testing::{VirtualClock, seed_thread_rng};

#[retry(max_retries = 4, jitter = full, initial_backoff = "10ms")]
fn shared(calls: &Cell<u32>, failures: u32) -> Result<u32, u32> {
    calls.set(calls.get() + 1);
    if calls.get() <= failures {
        Err(calls.get())
    } else {
        Ok(calls.get())
    }
}

/// Runs `shared` on this thread with a seeded RNG and returns its waits.
fn waits_on_this_thread(seed: u64) -> Vec<Duration> {
    seed_thread_rng(seed);
    let clock = VirtualClock::install();
    let calls = Cell::new(0);
    assert_eq!(shared(&calls, 3), Ok(4));
    clock.waits()
}

#[test]
fn eight_threads_each_keep_their_own_schedule() {
    let expected: Vec<Vec<Duration>> = (0..8).map(waits_on_this_thread).collect();
    let got: Vec<Vec<Duration>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..8u64)
            .map(|seed| {
                scope.spawn(move || {
                    // Many calls per thread, interleaved with the other threads.
                    let mut last = Vec::new();
                    for _ in 0..200 {
                        last = waits_on_this_thread(seed);
                    }
                    last
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(got, expected, "a thread's waits depend only on its own seed");
    assert!(
        expected.windows(2).any(|w| w[0] != w[1]),
        "different seeds give different waits"
    );
}

#[retry(max_retries = 5, initial_backoff = "1ms", max_backoff = "8ms")]
async fn task_body(calls: Arc<AtomicU32>, failures: u32) -> Result<u32, u32> {
    let n = calls.fetch_add(1, Ordering::SeqCst) + 1;
    tokio::task::yield_now().await;
    if n <= failures { Err(n) } else { Ok(n) }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_tasks_at_once() {
    let handles: Vec<_> = (0..10_000u32)
        .map(|i| {
            let calls = Arc::new(AtomicU32::new(0));
            let failures = i % 4;
            tokio::spawn(async move {
                (
                    task_body(calls.clone(), failures).await,
                    calls.load(Ordering::SeqCst),
                    failures,
                )
            })
        })
        .collect();
    for handle in handles {
        let (result, calls, failures) = handle.await.unwrap();
        assert_eq!(result, Ok(failures + 1));
        assert_eq!(calls, failures + 1, "each task has its own retry state");
    }
}
