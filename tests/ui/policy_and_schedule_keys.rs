use backoff_runtime::{Policy, retry};

const SHARED: Policy = Policy::new().max_retries(3);

#[retry(policy = SHARED, max_retries = 5, jitter = none)]
fn fetch() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
