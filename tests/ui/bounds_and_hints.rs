use backoff_runtime::retry;
use std::time::Duration;

#[retry(max_retries = unlimited)]
fn never_ends() -> Result<u32, String> {
    Ok(1)
}

#[retry(hint_above_cap = cap)]
fn no_hint() -> Result<u32, String> {
    Ok(1)
}

fn hint(_: &String) -> Option<Duration> {
    None
}

#[retry(retry_after = hint, hint_above_cap = wait)]
fn unknown_rule() -> Result<u32, String> {
    Ok(1)
}

fn main() {}
