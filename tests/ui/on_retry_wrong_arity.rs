use backoff_runtime::retry;

#[retry(on_retry = |error| eprintln!("{error}"))]
fn fetch() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
