use backoff_runtime::retry;

// A sync function's `sleep` must block: `Fn(Duration)`, not a future.
#[retry(sleep = tokio::time::sleep)]
fn fetch() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
