use backoff_runtime::{limits::AdaptiveRateLimiter, retry};

static PACE: AdaptiveRateLimiter = AdaptiveRateLimiter::new();

#[retry(admission = PACE)]
async fn fetch() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
