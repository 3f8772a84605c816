use backoff_runtime::retry;

// `before_retry` is a `fn(&E, &RetryEvent)` (an async one on an `async fn`).
#[retry(before_retry = |e: &u8, _event| println!("{e}"))]
fn fetch() -> Result<u32, String> {
    Ok(1)
}

#[retry(before_retry = async |e: &u8, _event| println!("{e}"))]
async fn fetch_async() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = fetch();
    let _ = fetch_async();
}
