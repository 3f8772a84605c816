use backoff_runtime::retry;
use std::time::Duration;

#[retry(policy = Duration::from_secs(1))]
async fn fetch() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
