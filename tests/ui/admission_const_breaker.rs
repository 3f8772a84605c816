use backoff_runtime::{limits::CircuitBreaker, retry};

// A `const` breaker is a new, closed breaker at every use: it would never open.
const BREAKER: CircuitBreaker = CircuitBreaker::new().consecutive_failures(5);

#[retry(admission = BREAKER)]
fn fetch() -> Result<u32, std::io::Error> {
    Ok(1)
}

fn main() {}
