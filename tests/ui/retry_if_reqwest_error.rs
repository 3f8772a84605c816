use backoff_runtime::reqwest_errors::is_retryable_error;
use backoff_runtime::retry;

// `is_retryable_error` takes the crate's status-carrying error; a function
// returning `reqwest::Error` needs `is_retryable_reqwest_error`.
#[retry(retry_if = is_retryable_error)]
async fn fetch(client: &reqwest::Client) -> Result<String, reqwest::Error> {
    client.get("http://localhost/").send().await?.text().await
}

fn main() {}
