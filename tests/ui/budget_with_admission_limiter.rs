use backoff_runtime::{limits::AdaptiveRateLimiter, retry};

// A limiter that paces attempts, named where retries are counted.
static LIMITER: AdaptiveRateLimiter = AdaptiveRateLimiter::new();

#[retry(budget = LIMITER)]
fn fetch() -> Result<u32, std::io::Error> {
    Ok(1)
}

fn main() {}
