use backoff_runtime::{RetryEvent, retry};

async fn reconnect(_error: &String, _event: &RetryEvent) {}

#[retry(before_retry = reconnect)]
fn returns_a_future() -> Result<u32, String> {
    Ok(1)
}

fn main() {}
