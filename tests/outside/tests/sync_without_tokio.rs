use std::cell::Cell;
use std::time::Duration;

use backoff_outside::flaky;
use backoff_rt::testing::VirtualClock;

#[test]
fn sync_retries_work_without_tokio_and_through_a_renamed_crate() {
    let clock = VirtualClock::install();
    let calls = Cell::new(0);
    assert_eq!(flaky(&calls, 3), Ok(4));
    assert_eq!(clock.waits(), [10, 20, 40].map(Duration::from_millis));
}

#[test]
fn the_plain_api_works_without_tokio() {
    let clock = VirtualClock::install();
    let policy = backoff_rt::Policy::new().max_retries(2);
    let result: Result<(), &str> = policy.retry(|| Err("down")).call();
    assert_eq!(result, Err("down"));
    assert_eq!(clock.waits().len(), 2);
}

/// Polls a future to completion on this thread (the futures here never wait
/// for a wake-up: their sleeps return at once).
fn block_on<F: std::future::Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    let mut context = std::task::Context::from_waker(std::task::Waker::noop());
    loop {
        if let std::task::Poll::Ready(output) = future.as_mut().poll(&mut context) {
            return output;
        }
    }
}

#[test]
fn async_retries_work_without_tokio_given_a_sleep() {
    let calls = Cell::new(0);
    let slept = Cell::new(Duration::ZERO);
    assert_eq!(block_on(backoff_outside::flaky_async(&calls, &slept, 2)), Ok(3));
    assert_eq!(slept.get(), Duration::from_millis(30));
}
