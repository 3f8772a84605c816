use backoff_runtime::retry;

// `retry_if` is a `fn(&E) -> bool` of the function's error.
#[retry(retry_if = |status: &u16| *status >= 500)]
async fn fetch() -> Result<u32, String> {
    Ok(1)
}

// A predicate that returns no `bool`.
#[retry(retry_if = |e| e.len())]
async fn fetch_len() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = fetch();
    let _ = fetch_len();
}
