use backoff_runtime::retry;

#[retry(max_backoff = "32sec")]
fn fetch() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
