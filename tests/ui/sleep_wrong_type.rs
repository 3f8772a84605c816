use backoff_runtime::retry;

// `sleep` takes the wait as a `Duration`.
#[retry(sleep = |millis: u64| std::thread::sleep(std::time::Duration::from_millis(millis)))]
fn fetch() -> Result<u32, String> {
    Ok(1)
}

#[retry(sleep = |d: u64| async move { let _ = d; })]
async fn fetch_async() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = fetch();
    let _ = fetch_async();
}
