use backoff_runtime::retry;
use std::time::Duration;

fn hint(seconds: &u64) -> Option<Duration> {
    Some(Duration::from_secs(*seconds))
}

// `retry_after` is a `fn(&E) -> Option<Duration>` of the function's error.
#[retry(retry_after = hint)]
fn fetch() -> Result<u32, String> {
    Ok(1)
}

#[retry(retry_after = |e: &u64| Some(Duration::from_secs(*e)))]
async fn fetch_async() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = fetch();
    let _ = fetch_async();
}
