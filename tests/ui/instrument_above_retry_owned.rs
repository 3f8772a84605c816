use backoff_runtime::retry;

#[tracing::instrument]
#[retry]
async fn upload(payload: Vec<u8>) -> Result<usize, String> {
    Ok(payload.len())
}

fn main() {
    let _ = upload(vec![1]);
}
