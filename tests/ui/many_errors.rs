use backoff_runtime::retry;

#[retry(max_retries = 0, max_backof = "1s", jitter = "0s", multiplier = 0.5)]
fn fetch() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
