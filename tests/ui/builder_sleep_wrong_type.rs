use backoff_runtime::Policy;

// The builder's `.sleep(...)` takes the wait as a `Duration`, and a blocking
// retry's sleep returns `()` and an awaited one's a future: each checked where `.sleep` is
// written.
fn main() {
    let _ = awaited();
    let _ = Policy::new()
        .retry(|| Err::<u32, String>("down".into()))
        .sleep(|millis: u64| std::thread::sleep(std::time::Duration::from_millis(millis)))
        .call();
    let _ = Policy::new()
        .retry(|| Err::<u32, String>("down".into()))
        .sleep(|_| std::future::ready(()))
        .call();
}

// An awaited retry's sleep returns a future.
async fn awaited() {
    let _ = Policy::new()
        .retry(|| async { Err::<u32, String>("down".into()) })
        .sleep(|_| ())
        .await;
}
