use backoff_runtime::retry;

#[retry(nested = "retry")]
fn quoted() -> Result<u32, String> {
    Ok(1)
}

#[retry(nested = never)]
fn unknown() -> Result<u32, String> {
    Ok(1)
}

fn main() {}
