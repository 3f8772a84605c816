use backoff_runtime::retry;

#[retry(retry_if = 5)]
fn fetch() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
