use backoff_rt::retry;

#[derive(Debug)]
struct TimedOut;

impl From<backoff_rt::Elapsed> for TimedOut {
    fn from(_: backoff_rt::Elapsed) -> Self {
        TimedOut
    }
}

#[retry(crate = "backoff_rt", timeout = "1s", sleep = |_| core::future::ready(()))]
async fn fetch() -> Result<u32, TimedOut> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
