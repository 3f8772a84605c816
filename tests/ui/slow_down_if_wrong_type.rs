use backoff_runtime::{limits::{AdaptiveThrottle, Refused}, retry};

static SHED: AdaptiveThrottle = AdaptiveThrottle::new();

#[derive(Debug)]
struct Error;
impl From<Refused> for Error {
    fn from(_: Refused) -> Self {
        Error
    }
}

#[retry(admission = SHED, slow_down_if = |e: &u16| *e == 429)]
fn fetch() -> Result<u32, Error> {
    Ok(1)
}

fn main() {}
