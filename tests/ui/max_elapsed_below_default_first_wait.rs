use backoff_runtime::retry;

#[retry(max_elapsed = "500ms")]
fn fetch() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
