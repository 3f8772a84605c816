use backoff_runtime::retry;

#[retry(colour = "blue")]
fn fetch() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
