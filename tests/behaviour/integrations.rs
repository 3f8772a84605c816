//! `#[retry]` beside the attributes people already use: `#[async_trait]`
//! (`Send` and `?Send`), `#[tokio::test]` and `#[tokio::main]`
//! (`#[tracing::instrument]`, whose spans a test reads, is in
//! `tests/telemetry/instrument.rs`).

use std::sync::atomic::{AtomicU32, Ordering};

use async_trait::async_trait;
use backoff_runtime::retry;

fn bump(calls: &AtomicU32, failures: u32) -> Result<u32, String> {
    let n = calls.fetch_add(1, Ordering::SeqCst) + 1;
    if n <= failures {
        Err(format!("attempt {n} failed"))
    } else {
        Ok(n)
    }
}

// ---- async-trait ---------------------------------------------------------------

#[async_trait]
trait Store {
    async fn get(&self, key: String) -> Result<String, String>;
}

struct Flaky {
    calls: AtomicU32,
}

#[async_trait]
impl Store for Flaky {
    /// An owned argument works: async-trait moves it once, before the retries.
    #[retry(initial_backoff = "1ms", retry_if = |e| e.contains("failed"))]
    async fn get(&self, key: String) -> Result<String, String> {
        bump(&self.calls, 2).map(|n| format!("{key}#{n}"))
    }
}

#[async_trait(?Send)]
trait LocalStore {
    async fn get_local(&self, key: &str) -> Result<String, Busy>;
}

struct LocalFlaky {
    calls: std::cell::Cell<u32>,
}

#[async_trait(?Send)]
impl LocalStore for LocalFlaky {
    #[retry(initial_backoff = "1ms", max_retries = 3, timeout = "1s")]
    async fn get_local(&self, key: &str) -> Result<String, Busy> {
        self.calls.set(self.calls.get() + 1);
        if self.calls.get() < 3 {
            Err(Busy)
        } else {
            Ok(key.to_string())
        }
    }
}

fn assert_send<T: Send>(value: T) -> T {
    value
}

#[tokio::test(start_paused = true)]
async fn methods_inside_async_trait_impls_are_retried() {
    let store = Flaky {
        calls: AtomicU32::new(0),
    };
    assert_eq!(assert_send(store.get("k".to_string())).await, Ok("k#3".to_string()));
    let dynamic: Box<dyn Store> = Box::new(Flaky {
        calls: AtomicU32::new(0),
    });
    assert_eq!(dynamic.get("d".to_string()).await, Ok("d#3".to_string()));

    let local = LocalFlaky {
        calls: std::cell::Cell::new(0),
    };
    assert_eq!(local.get_local("l").await, Ok("l".to_string()));
    assert_eq!(local.calls.get(), 3);
}

#[derive(Debug, PartialEq)]
struct Busy;

impl From<backoff_runtime::Elapsed> for Busy {
    fn from(_: backoff_runtime::Elapsed) -> Self {
        Busy
    }
}

// ---- tokio::test and tokio::main -------------------------------------------------

static TEST_CALLS: AtomicU32 = AtomicU32::new(0);

/// `#[tokio::test]` above `#[retry]`: the test itself is retried.
#[tokio::test(start_paused = true)]
#[retry(initial_backoff = "1ms")]
async fn a_retried_tokio_test() -> Result<(), String> {
    bump(&TEST_CALLS, 2).map(|n| assert_eq!(n, 3))
}

static MAIN_CALLS: AtomicU32 = AtomicU32::new(0);

/// `#[tokio::main]` above `#[retry]`: tokio's runtime wraps a sync retry loop.
#[tokio::main(flavor = "current_thread")]
#[retry(initial_backoff = "1ms", sleep = |_| ())]
async fn main_like() -> Result<u32, String> {
    tokio::task::yield_now().await;
    bump(&MAIN_CALLS, 1)
}

static INNER_MAIN_CALLS: AtomicU32 = AtomicU32::new(0);

/// `#[retry]` above `#[tokio::main]`: the retry loop sees the async fn.
#[retry(initial_backoff = "1ms", sleep = |_| std::future::ready(()))]
#[tokio::main(flavor = "current_thread")]
async fn retry_outside_main() -> Result<u32, String> {
    bump(&INNER_MAIN_CALLS, 1)
}

#[test]
fn beside_tokio_main() {
    assert_eq!(main_like(), Ok(2));
    assert_eq!(retry_outside_main(), Ok(2));
}
