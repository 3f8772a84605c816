use backoff_runtime::retry;

#[retry(jitter = "10s", max_backoff = "5s")]
fn fetch() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
