use backoff_runtime::retry;

fn is_pending(state: &String) -> bool {
    state == "running"
}

// `retry_if_ok` is a `fn(&T) -> bool` of the function's value.
#[retry(retry_if_ok = is_pending)]
async fn poll() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = poll();
}
