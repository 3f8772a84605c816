//! `cargo run --example other_runtime`: an annotated async function on an
//! executor that is not tokio (async-io's `block_on`), sleeping with
//! `async_io::Timer::after` through `sleep = ...`. No tokio runtime exists
//! in this program. Without `sleep = ...` it would work too, on the default
//! timer (futures-timer's thread); with it, it also works with
//! `backoff-runtime = { default-features = false, features = ["macros"] }`.

use std::cell::Cell;
use std::time::Instant;

use backoff_runtime::retry;

#[retry(max_retries = 4, initial_backoff = "20ms", jitter = none, sleep = async_io::Timer::after)]
async fn flaky(calls: &Cell<u32>, started: Instant) -> Result<u32, String> {
    calls.set(calls.get() + 1);
    println!("{:>4} ms  attempt {}", started.elapsed().as_millis(), calls.get());
    if calls.get() < 3 {
        Err(format!("attempt {} failed", calls.get()))
    } else {
        Ok(calls.get())
    }
}

fn main() {
    let calls = Cell::new(0);
    let started = Instant::now();
    let result = async_io::block_on(flaky(&calls, started));
    println!("result after {:?}: {result:?}", started.elapsed());
    assert_eq!(result, Ok(3));
}
