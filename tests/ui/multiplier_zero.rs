use backoff_runtime::retry;

#[retry(multiplier = 0)]
fn fetch() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
