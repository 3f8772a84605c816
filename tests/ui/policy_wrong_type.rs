use backoff_runtime::retry;

#[retry(policy = 5)]
fn fetch() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
