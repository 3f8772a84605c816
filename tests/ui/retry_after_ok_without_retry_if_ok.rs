use backoff_runtime::retry;

#[retry(retry_after_ok = |_job: &u32| Some(std::time::Duration::from_secs(1)))]
fn poll() -> Result<u32, String> {
    Ok(1)
}

fn main() {}
