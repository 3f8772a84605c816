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
    let result: Result<(), &str> = policy.retry(|| Err("down"));
    assert_eq!(result, Err("down"));
    assert_eq!(clock.waits().len(), 2);
}
