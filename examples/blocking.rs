//! `cargo run --example blocking`: the quickstart for a sync function. A real
//! HTTP server on 127.0.0.1 answers 503 twice and then 200; an annotated sync
//! function fetches from it with reqwest's blocking client and retries,
//! sleeping with `std::thread::sleep`.

use std::time::Instant;

use backoff_runtime::retry;

#[path = "support/flaky_server.rs"]
mod flaky_server;

#[derive(Debug)]
enum FetchError {
    Status(reqwest::StatusCode),
    Network(reqwest::Error),
}

impl From<reqwest::Error> for FetchError {
    fn from(error: reqwest::Error) -> Self {
        FetchError::Network(error)
    }
}

impl std::fmt::Display for FetchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FetchError::Status(status) => write!(f, "server answered {status}"),
            FetchError::Network(error) => write!(f, "network error: {error}"),
        }
    }
}

impl std::error::Error for FetchError {}

fn is_transient(error: &FetchError) -> bool {
    match error {
        FetchError::Status(status) => status.is_server_error() || status.as_u16() == 429 || status.as_u16() == 408,
        FetchError::Network(_) => true,
    }
}

#[retry(max_retries = 5, initial_backoff = "100ms", max_backoff = "3200ms", retry_if = is_transient)]
fn fetch(
    client: &reqwest::blocking::Client,
    url: &str,
    start: Instant,
    attempts: &mut u32,
) -> Result<String, FetchError> {
    *attempts += 1;
    println!("attempt {attempts} at {:>4} ms", start.elapsed().as_millis());
    let response = client.get(url).send()?;
    let status = response.status();
    if !status.is_success() {
        println!("            -> {status}");
        return Err(FetchError::Status(status));
    }
    Ok(response.text()?)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The server runs on its own tokio runtime thread; the client is blocking.
    let runtime = tokio::runtime::Runtime::new()?;
    let addr = runtime.block_on(flaky_server::start(2))?;
    let url = format!("http://{addr}/");
    println!("server on {url} answers 503 twice, then 200\n");

    let client = reqwest::blocking::Client::new();
    let start = Instant::now();
    let mut attempts = 0;
    let body = fetch(&client, &url, start, &mut attempts)?;
    println!("            -> 200 OK: {body:?}");
    println!("\nsucceeded after {attempts} attempts in {:?}", start.elapsed());
    Ok(())
}
