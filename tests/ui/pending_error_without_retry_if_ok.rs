use backoff_runtime::retry;

#[retry(pending_error = |job: u32| format!("still {job}"))]
fn poll() -> Result<u32, String> {
    Ok(1)
}

fn main() {}
