use backoff_runtime::retry;

#[retry(crate = "not a path!")]
fn fetch() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
