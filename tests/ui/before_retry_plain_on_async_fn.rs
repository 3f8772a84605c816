use backoff_runtime::retry;

#[retry(before_retry = |e: &String, _event| eprintln!("{e}"))]
async fn fetch() -> Result<u32, String> {
    Ok(1)
}

fn main() {}
