use backoff_runtime::retry;

#[retry(max_backoff = "10 sec")]
fn apart() -> Result<u32, String> {
    Ok(1)
}

#[retry(max_elapsed = "2 min")]
fn apart_minutes() -> Result<u32, String> {
    Ok(1)
}

#[retry(initial_backoff = "250millis")]
fn spelled_out() -> Result<u32, String> {
    Ok(1)
}

fn main() {}
