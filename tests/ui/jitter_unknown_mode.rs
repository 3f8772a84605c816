use backoff_runtime::retry;

#[retry(jitter = fulll)]
fn fetch() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
