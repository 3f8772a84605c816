use backoff_runtime::chaos::{Injector, Rate};
use backoff_runtime::retry;

// A `const` is a new injector at every use: its seeded draws would start
// over at each call.
const INJECTOR: Injector<u32, std::io::Error> = Injector::new().latency(Rate::new(0.1), std::time::Duration::from_millis(5)).seed(1);

#[retry(chaos = INJECTOR)]
fn fetch() -> Result<u32, std::io::Error> {
    Ok(1)
}

fn main() {}
