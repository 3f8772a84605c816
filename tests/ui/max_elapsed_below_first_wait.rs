use backoff_runtime::retry;

#[retry(initial_backoff = "2s", max_elapsed = "1s")]
fn fetch() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
