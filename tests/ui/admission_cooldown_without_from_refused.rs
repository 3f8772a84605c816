use backoff_runtime::{limits::Cooldown, retry};

static HOST: Cooldown = Cooldown::new();

#[derive(Debug)]
struct ApiError;

// A cooldown may refuse an attempt: the error type must absorb `Refused`.
#[retry(admission = HOST)]
async fn fetch() -> Result<u32, ApiError> {
    Ok(1)
}

fn main() {}
