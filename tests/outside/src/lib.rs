//! Sync retries with backoff-runtime built without tokio, reached through a
//! re-export under another name (`crate = "..."`).

/// The runtime, re-exported under a name of this crate's choosing.
pub mod facade {
    pub use backoff_rt as retrying;
}

use std::cell::Cell;

/// Fails `failures` times, then succeeds; the runtime is reached only through
/// `crate::facade::retrying` (there is no `::backoff_runtime` here).
#[facade::retrying::retry(crate = "crate::facade::retrying", initial_backoff = "10ms", jitter = none)]
pub fn flaky(calls: &Cell<u32>, failures: u32) -> Result<u32, String> {
    calls.set(calls.get() + 1);
    if calls.get() <= failures {
        Err(format!("failure {}", calls.get()))
    } else {
        Ok(calls.get())
    }
}

/// An async function without tokio: it sleeps with the given function (here
/// one that records the wait and returns at once).
#[facade::retrying::retry(
    crate = "crate::facade::retrying",
    initial_backoff = "10ms",
    jitter = none,
    sleep = |wait| { slept.set(slept.get() + wait); std::future::ready(()) },
)]
pub async fn flaky_async(calls: &Cell<u32>, slept: &Cell<std::time::Duration>, failures: u32) -> Result<u32, String> {
    calls.set(calls.get() + 1);
    if calls.get() <= failures {
        Err(format!("failure {}", calls.get()))
    } else {
        Ok(calls.get())
    }
}
