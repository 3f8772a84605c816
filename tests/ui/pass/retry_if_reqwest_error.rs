// `reqwest_errors::is_retryable_error` (the natural first try) fits a
// function returning `reqwest::Error` as well as one returning the crate's
// status-carrying `reqwest_errors::Error`.
use backoff_runtime::reqwest_errors::{Error, check_status, is_retryable_error};
use backoff_runtime::retry;

#[retry(retry_if = is_retryable_error)]
async fn plain_reqwest(client: &reqwest::Client) -> Result<String, reqwest::Error> {
    client.get("http://localhost/").send().await?.text().await
}

#[retry(retry_if = is_retryable_error)]
async fn with_status(client: &reqwest::Client) -> Result<String, Error> {
    Ok(check_status(client.get("http://localhost/").send().await?)?.text().await?)
}

fn main() {
    let _ = (plain_reqwest, with_status);
}
