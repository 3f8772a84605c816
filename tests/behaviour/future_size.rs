//! The size of an annotated async function's future: at most the plain
//! function's future plus 48 bytes (BENCHMARKS.md, the performance targets), for
//! a free function, a `&mut self` method, a body that holds a large local
//! across an `.await`, and with the keys that add state (`max_elapsed`, a
//! custom `sleep`). Also prints backon's future for the same bodies.
//!
//! ```sh
//! cargo test --test behaviour future_size -- --nocapture
//! ```
//!
//! Sizes are decided by the compiler and do not vary between runs, so each
//! test asserts the bound; `--nocapture` shows the table.

use std::cell::Cell;
use std::hint::black_box;
use std::mem::{size_of, size_of_val};

use backoff_runtime::retry;
use backon::{ExponentialBuilder, Retryable};

/// The contract: an annotated future is at most this much bigger.
const BUDGET: usize = 48;

#[derive(Debug, PartialEq)]
pub struct Busy;

fn attempt(calls: &Cell<u32>) -> Result<u32, Busy> {
    calls.set(calls.get() + 1);
    if calls.get() < 2 { Err(Busy) } else { Ok(calls.get()) }
}

/// Checks the budget and prints one row of the comparison.
fn compare(shape: &str, plain: usize, annotated: usize, backon: Option<usize>) {
    let backon = backon.map_or_else(|| "n/a".to_owned(), |b| format!("{b} (+{})", b - plain));
    println!(
        "{shape:<34} plain {plain:>5} B | #[retry] {annotated:>5} B (+{:>3}) | backon {backon}",
        annotated.saturating_sub(plain)
    );
    assert!(
        annotated <= plain + BUDGET,
        "{shape}: the #[retry] future is {annotated} bytes, the plain one {plain}: \
         {} bytes more than the {BUDGET}-byte budget",
        annotated - plain - BUDGET
    );
}

// ---- free function ---------------------------------------------------------------

async fn free_plain(calls: &Cell<u32>) -> Result<u32, Busy> {
    tokio::task::yield_now().await;
    attempt(calls)
}

#[retry(initial_backoff = "1ms")]
async fn free_retry(calls: &Cell<u32>) -> Result<u32, Busy> {
    tokio::task::yield_now().await;
    attempt(calls)
}

#[test]
fn free_function_future_within_budget() {
    let calls = Cell::new(0);
    let plain = size_of_val(&free_plain(&calls));
    let annotated = size_of_val(&free_retry(&calls));
    let backon = size_of_val(&(|| free_plain(&calls)).retry(ExponentialBuilder::default()));
    compare("free fn", plain, annotated, Some(backon));
}

// ---- keys that keep state: max_elapsed (a start instant), hooks, sleep ------------

#[retry(initial_backoff = "1ms", max_elapsed = "10s", retry_if = |e| *e == Busy, on_retry = |_, _| {})]
async fn free_retry_stateful(calls: &Cell<u32>) -> Result<u32, Busy> {
    tokio::task::yield_now().await;
    attempt(calls)
}

#[retry(initial_backoff = "1ms", sleep = tokio::time::sleep)]
async fn free_retry_custom_sleep(calls: &Cell<u32>) -> Result<u32, Busy> {
    tokio::task::yield_now().await;
    attempt(calls)
}

#[test]
fn keys_with_state_stay_within_budget() {
    let calls = Cell::new(0);
    let plain = size_of_val(&free_plain(&calls));
    compare(
        "free fn, max_elapsed + hooks",
        plain,
        size_of_val(&free_retry_stateful(&calls)),
        None,
    );
    // A custom sleep's future lives in the annotated future (it is not
    // boxed): tokio's `Sleep` here, so this shape is allowed that much more.
    let sleep = size_of::<tokio::time::Sleep>();
    let annotated = size_of_val(&free_retry_custom_sleep(&calls));
    println!(
        "{:<34} (minus the inline tokio Sleep of {sleep} B)",
        "free fn, sleep = tokio::time::sleep"
    );
    compare(
        "free fn, sleep = tokio::time::sleep",
        plain,
        annotated.saturating_sub(sleep),
        None,
    );
}

// ---- &mut self method ------------------------------------------------------------

struct Client {
    calls: u32,
    name: String,
}

impl Client {
    async fn call_plain(&mut self) -> Result<usize, Busy> {
        self.calls += 1;
        tokio::task::yield_now().await;
        if self.calls < 2 { Err(Busy) } else { Ok(self.name.len()) }
    }

    #[retry(initial_backoff = "1ms")]
    async fn call_retry(&mut self) -> Result<usize, Busy> {
        self.calls += 1;
        tokio::task::yield_now().await;
        if self.calls < 2 { Err(Busy) } else { Ok(self.name.len()) }
    }
}

#[test]
fn mut_self_method_future_within_budget() {
    let mut client = Client {
        calls: 0,
        name: "svc".to_owned(),
    };
    let plain = size_of_val(&client.call_plain());
    let annotated = size_of_val(&client.call_retry());
    // backon cannot retry a `&mut self` method (the closure would lend
    // `self` to each future), so there is no backon figure for this shape.
    compare("&mut self method", plain, annotated, None);
}

// ---- a large local held across an await -----------------------------------------

async fn large_plain(calls: &Cell<u32>) -> Result<u32, Busy> {
    let buffer = black_box([7u8; 1024]);
    tokio::task::yield_now().await;
    attempt(calls)?;
    Ok(buffer.iter().map(|&b| u32::from(b)).sum())
}

#[retry(initial_backoff = "1ms")]
async fn large_retry(calls: &Cell<u32>) -> Result<u32, Busy> {
    let buffer = black_box([7u8; 1024]);
    tokio::task::yield_now().await;
    attempt(calls)?;
    Ok(buffer.iter().map(|&b| u32::from(b)).sum())
}

#[test]
fn large_local_across_await_within_budget() {
    let calls = Cell::new(0);
    let plain = size_of_val(&large_plain(&calls));
    let annotated = size_of_val(&large_retry(&calls));
    let backon = size_of_val(&(|| large_plain(&calls)).retry(ExponentialBuilder::default()));
    assert!(plain >= 1024, "the buffer is held across the await: {plain}");
    compare("1 KiB local across an await", plain, annotated, Some(backon));
}

/// The futures measured above are the ones that run: both retry and return
/// what the plain function returns.
#[tokio::test(start_paused = true)]
async fn measured_futures_retry() {
    let calls = Cell::new(0);
    assert_eq!(free_retry(&calls).await, Ok(2));
    let calls = Cell::new(0);
    assert_eq!(free_retry_stateful(&calls).await, Ok(2));
    let calls = Cell::new(0);
    assert_eq!(free_retry_custom_sleep(&calls).await, Ok(2));
    let calls = Cell::new(0);
    assert_eq!(large_retry(&calls).await, Ok(7 * 1024));
    let mut client = Client {
        calls: 0,
        name: "svc".to_owned(),
    };
    assert_eq!(client.call_retry().await, Ok(3));
    assert_eq!(client.calls, 2);
}
