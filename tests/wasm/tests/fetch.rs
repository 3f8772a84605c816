//! The README's HTTP example on reqwest's wasm client, the platform's
//! `fetch`, in Node: a request that gets no answer is retried.
#![cfg(all(target_arch = "wasm32", target_os = "unknown"))]

use std::cell::Cell;

use backoff_runtime::reqwest_errors::{Error, check_status, is_retryable_error, retry_after_hint};
use backoff_runtime::retry;
use wasm_bindgen_test::wasm_bindgen_test;

/// The README's function, with waits of a few milliseconds.
#[retry(
    max_retries = 3,
    initial_backoff = "1ms",
    max_backoff = "4ms",
    retry_if = is_retryable_error,
    retry_after = retry_after_hint,
    on_retry = |_, _| retries.set(retries.get() + 1),
)]
async fn fetch(client: &reqwest::Client, url: &str, retries: &Cell<u32>) -> Result<String, Error> {
    Ok(check_status(client.get(url).send().await?)?.text().await?)
}

#[wasm_bindgen_test]
async fn a_fetch_that_gets_no_answer_is_retried() {
    let client = reqwest::Client::new();
    let retries = Cell::new(0);
    // Port 9 (discard) on loopback: nothing listens, the connection is refused.
    let result = fetch(&client, "http://127.0.0.1:9/", &retries).await;
    match result {
        Err(Error::Transport(error)) => {
            assert!(error.is_request() && error.status().is_none(), "{error:?}");
        }
        other => panic!("expected fetch's failure, got {other:?}"),
    }
    assert_eq!(retries.get(), 3, "every retry was made");
}

#[wasm_bindgen_test]
async fn a_url_that_does_not_parse_is_not_retried() {
    let client = reqwest::Client::new();
    let retries = Cell::new(0);
    let result = fetch(&client, "http://exa mple/", &retries).await;
    assert!(
        matches!(result, Err(Error::Transport(ref error)) if error.is_builder()),
        "{result:?}"
    );
    assert_eq!(retries.get(), 0);
}
