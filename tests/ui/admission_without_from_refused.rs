use backoff_runtime::{limits::AdaptiveThrottle, retry};

static SHED: AdaptiveThrottle = AdaptiveThrottle::new();

#[retry(admission = SHED)]
fn fetch() -> Result<u32, String> {
    Ok(1)
}

fn main() {}
