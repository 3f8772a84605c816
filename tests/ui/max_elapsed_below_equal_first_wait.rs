use backoff_runtime::retry;

#[retry(initial_backoff = "1s", jitter = equal, max_elapsed = "400ms")]
fn fetch() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
