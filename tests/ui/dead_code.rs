#![deny(dead_code)]

use backoff_runtime::retry;

#[retry]
fn never_called() -> Result<u32, String> {
    Ok(1)
}

fn main() {}
