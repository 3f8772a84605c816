use backoff_runtime::retry;

// Defaults never cause an error: the default first wait (1s) is not checked
// against a written `max_elapsed`.
#[retry(max_elapsed = "500ms")]
fn fetch() -> Result<u32, String> {
    Ok(1)
}

// Full jitter can draw a first wait of 0, and a server hint can be 0:
// neither can be ruled out at compile time.
#[retry(initial_backoff = "1s", max_elapsed = "500ms", jitter = full)]
fn fetch_full() -> Result<u32, String> {
    Ok(2)
}

#[retry(initial_backoff = "1s", max_elapsed = "500ms", retry_after = |_| None)]
fn fetch_hinted() -> Result<u32, String> {
    Ok(3)
}

// Equal jitter's shortest first wait is half the base: 500ms ends exactly
// at the budget, which is allowed.
#[retry(initial_backoff = "1s", max_elapsed = "500ms", jitter = equal)]
fn fetch_equal() -> Result<u32, String> {
    Ok(4)
}

fn main() {
    assert_eq!(fetch(), Ok(1));
    assert_eq!(fetch_full(), Ok(2));
    assert_eq!(fetch_hinted(), Ok(3));
    assert_eq!(fetch_equal(), Ok(4));
}
