use backoff_runtime::retry;

#[retry(retry_after = "1s")]
fn fetch() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
