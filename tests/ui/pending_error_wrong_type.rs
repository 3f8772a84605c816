use backoff_runtime::retry;

// `pending_error` is a `fn(T) -> E`: it takes the pending value and makes
// the call's error of it.
#[retry(retry_if_ok = |state| *state == 0, pending_error = |state: &u32| format!("still {state}"))]
fn poll() -> Result<u32, String> {
    Ok(1)
}

fn still_pending(state: u32) -> u32 {
    state
}

#[retry(retry_if_ok = |state| *state == 0, pending_error = still_pending)]
async fn poll_async() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = poll();
    let _ = poll_async();
}
