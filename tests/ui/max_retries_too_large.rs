use backoff_runtime::retry;

#[retry(max_retries = 5000000000)]
fn fetch() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
