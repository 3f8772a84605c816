use backoff_runtime::{limits::AdaptiveRateLimiter, retry};

// A `const` is a new limiter at every use: it would pace nothing.
const LIMITER: AdaptiveRateLimiter = AdaptiveRateLimiter::new();

#[retry(admission = LIMITER)]
async fn fetch() -> Result<u32, std::io::Error> {
    Ok(1)
}

fn main() {}
