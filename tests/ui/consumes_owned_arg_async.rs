use backoff_runtime::retry;

async fn send(payload: Vec<u8>) -> Result<usize, String> {
    Ok(payload.len())
}

#[retry]
async fn upload(payload: Vec<u8>) -> Result<usize, String> {
    send(payload).await
}

fn main() {
    let _ = upload(vec![1, 2, 3]);
}
