use backoff_runtime::retry;

#[retry(multiplier = f64::NAN)]
fn fetch() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
