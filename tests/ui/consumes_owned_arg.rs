use backoff_runtime::retry;

fn send(payload: Vec<u8>) -> Result<usize, String> {
    Ok(payload.len())
}

#[retry]
fn upload(payload: Vec<u8>) -> Result<usize, String> {
    send(payload)
}

fn main() {
    let _ = upload(vec![1, 2, 3]);
}
