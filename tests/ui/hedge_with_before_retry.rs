use backoff_runtime::{RetryEvent, retry};

async fn reconnect(_error: &std::io::Error, _event: &RetryEvent) {}

#[retry(hedge_after = "50ms", before_retry = reconnect)]
async fn fetch(url: &str) -> Result<usize, std::io::Error> {
    Ok(url.len())
}

fn main() {}
