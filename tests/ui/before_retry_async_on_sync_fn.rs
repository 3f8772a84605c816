use backoff_runtime::retry;

async fn reconnect() {}

#[retry(before_retry = async |_e, _event| reconnect().await)]
fn async_closure() -> Result<u32, String> {
    Ok(1)
}

#[retry(before_retry = |_e, _event| async { reconnect().await })]
fn returns_async_block() -> Result<u32, String> {
    Ok(1)
}

fn main() {}
