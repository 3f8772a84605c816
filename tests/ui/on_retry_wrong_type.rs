use backoff_runtime::{RetryEvent, retry};

// `on_retry` is a `fn(&E, &RetryEvent)`.
#[retry(on_retry = |e: &u8, _event| println!("{e}"))]
fn fetch() -> Result<u32, String> {
    Ok(1)
}

fn log_retry(error: &u16, event: &RetryEvent) {
    println!("{error} {event:?}");
}

#[retry(on_retry = log_retry)]
async fn fetch_async() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = fetch();
    let _ = fetch_async();
}
