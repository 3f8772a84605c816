use backoff_runtime::chaos::{Injector, Rate};
use backoff_runtime::retry;

// The injector's error type is `String`; the function's is `io::Error`.
static INJECTOR: Injector<u32, String> = Injector::new().fault(Rate::new(0.1), String::new);

#[retry(chaos = INJECTOR)]
async fn fetch() -> Result<u32, std::io::Error> {
    Ok(1)
}

fn main() {}
