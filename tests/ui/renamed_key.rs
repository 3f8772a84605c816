use backoff_runtime::{limits::{AdaptiveThrottle, Refused}, retry};

static SHED: AdaptiveThrottle = AdaptiveThrottle::new();

#[derive(Debug)]
struct Error;
impl From<Refused> for Error {
    fn from(_: Refused) -> Self {
        Error
    }
}

// The key's name before 0.1.
#[retry(admission = SHED, throttled_if = |_| true)]
fn fetch() -> Result<u32, Error> {
    Ok(1)
}

fn main() {}
