use backoff_runtime::retry;

#[retry(max_backoff = "99999999999999999999h")]
fn fetch() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
