use backoff_runtime::retry;

#[retry(crate = backoff_runtime)]
fn fetch() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
