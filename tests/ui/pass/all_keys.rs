//! Every key at once, sync and async, and the runtime's re-export path.
use std::cell::Cell;

use backoff_runtime::retry;

#[derive(Debug)]
enum ApiError {
    Busy,
    TimedOut,
}

impl From<backoff_runtime::Elapsed> for ApiError {
    fn from(_: backoff_runtime::Elapsed) -> Self {
        ApiError::TimedOut
    }
}

fn is_transient(error: &ApiError) -> bool {
    matches!(error, ApiError::Busy | ApiError::TimedOut)
}

#[retry(
    max_retries = 3,
    max_backoff = "4ms",
    initial_backoff = "1ms",
    multiplier = 1.5,
    jitter = "1ms",
    max_elapsed = "1m 30s",
    retry_if = is_transient,
    name = "all_keys.sync",
    crate = "::backoff_runtime",
)]
fn sync_all(calls: &Cell<u32>) -> Result<u32, ApiError> {
    calls.set(calls.get() + 1);
    if calls.get() < 2 { Err(ApiError::Busy) } else { Ok(calls.get()) }
}

#[retry(
    max_retries = 3,
    max_backoff = "4ms",
    initial_backoff = "1ms",
    multiplier = 2,
    jitter = decorrelated,
    max_elapsed = "1.5s",
    retry_if = |e| is_transient(e),
    timeout = "250us",
)]
async fn async_all(calls: &Cell<u32>) -> Result<u32, ApiError> {
    calls.set(calls.get() + 1);
    if calls.get() < 2 { Err(ApiError::Busy) } else { Ok(calls.get()) }
}

fn main() {
    let calls = Cell::new(0);
    assert_eq!(sync_all(&calls).ok(), Some(2));
    let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    let calls = Cell::new(0);
    assert_eq!(runtime.block_on(async_all(&calls)).ok(), Some(2));
}
