use backoff_runtime::retry;
use backoff_runtime::testing::VirtualClock;
use std::time::Duration;

#[retry(jitter = none, max_retries = 3)]
fn sync_fail(calls: &mut u32) -> Result<u32, String> {
    *calls += 1;
    Err(format!("fail {calls}"))
}

#[retry(jitter = none)]
async fn async_fail(calls: &std::sync::atomic::AtomicU32) -> Result<u32, String> {
    calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    Err("x".into())
}

#[test]
fn sync_smoke() {
    let clock = VirtualClock::install();
    let mut calls = 0;
    assert_eq!(sync_fail(&mut calls), Err("fail 4".to_string()));
    assert_eq!(clock.waits(), [1, 2, 4].map(Duration::from_secs));
}

#[tokio::test(start_paused = true)]
async fn async_smoke() {
    let calls = std::sync::atomic::AtomicU32::new(0);
    let start = tokio::time::Instant::now();
    assert!(async_fail(&calls).await.is_err());
    assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 6);
    assert_eq!(start.elapsed(), Duration::from_secs(31));
}
