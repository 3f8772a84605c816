use backoff_runtime::retry;
use std::time::Duration;

// `retry_after_ok` is a `fn(&T) -> Option<Duration>` of the function's value.
#[retry(retry_if_ok = |state| *state == 0, retry_after_ok = |state: &String| Some(Duration::from_secs(1)))]
fn poll() -> Result<u32, String> {
    Ok(1)
}

fn every_second(_state: &u32) -> Duration {
    Duration::from_secs(1)
}

#[retry(retry_if_ok = |state| *state == 0, retry_after_ok = every_second)]
async fn poll_async() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = poll();
    let _ = poll_async();
}
