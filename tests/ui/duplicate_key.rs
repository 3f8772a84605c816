use backoff_runtime::retry;

#[retry(max_retries = 3, max_retries = 4)]
fn fetch() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
