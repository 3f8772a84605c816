use backoff_runtime::chaos::{Injector, Rate};
use backoff_runtime::retry;

// The injector's `Ok` type is `u8`; the function returns `u32`.
static INJECTOR: Injector<u8, std::io::Error> = Injector::new().outcome(Rate::new(0.1), || 0);

#[retry(chaos = INJECTOR)]
fn fetch() -> Result<u32, std::io::Error> {
    Ok(1)
}

fn main() {}
