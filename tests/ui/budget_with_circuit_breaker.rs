use backoff_runtime::{limits::CircuitBreaker, retry};

// A breaker admits attempts: named where retries are counted, it would count nothing.
static BREAKER: CircuitBreaker = CircuitBreaker::new();

#[retry(budget = BREAKER)]
fn fetch() -> Result<u32, std::io::Error> {
    Ok(1)
}

fn main() {}
