use backoff_runtime::retry;

#[retry(retry_if_ok = |state: &String| state == "running")]
fn poll() -> Result<u32, String> {
    Ok(1)
}

fn main() {}
