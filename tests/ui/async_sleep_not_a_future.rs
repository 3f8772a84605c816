use backoff_runtime::retry;

// An async function's `sleep` returns a future to await.
#[retry(sleep = std::thread::sleep)]
async fn fetch() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
