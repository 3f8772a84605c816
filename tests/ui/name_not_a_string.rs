use backoff_runtime::retry;

#[retry(name = fetch)]
fn bare() -> Result<u32, String> {
    Ok(1)
}

#[retry(name = "")]
fn empty() -> Result<u32, String> {
    Ok(1)
}

fn main() {}
