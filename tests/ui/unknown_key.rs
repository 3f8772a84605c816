use backoff_runtime::retry;

#[retry(max_backof = "10s")]
fn fetch() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
