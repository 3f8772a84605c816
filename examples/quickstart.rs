//! `cargo run --example quickstart`: a real HTTP server on 127.0.0.1 answers
//! 503 twice and then 200; an annotated async function fetches from it
//! through reqwest and retries with the seed's schedule, scaled down so the
//! run takes well under a second.

use std::sync::Mutex;
use std::time::Instant;

use backoff_runtime::retry;

#[path = "support/flaky_server.rs"]
mod flaky_server;

#[derive(Debug)]
enum FetchError {
    /// The server answered with an error status.
    Status(reqwest::StatusCode),
    /// The request did not complete.
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

/// Load and network errors are worth retrying; others (404, 401...) are not.
fn is_transient(error: &FetchError) -> bool {
    match error {
        FetchError::Status(status) => status.is_server_error() || status.as_u16() == 429 || status.as_u16() == 408,
        FetchError::Network(_) => true,
    }
}

/// When each attempt started, to print the waits between them.
struct Log {
    start: Instant,
    last: Mutex<Option<Instant>>,
}

impl Log {
    fn attempt(&self, n: &mut u32) {
        *n += 1;
        let now = Instant::now();
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        let waited = last
            .map(|t| format!(" (after a wait of {:?})", now - t))
            .unwrap_or_default();
        println!("attempt {n} at {:>4} ms{waited}", (now - self.start).as_millis());
        *last = Some(now);
    }
}

/// The seed's schedule (wait 2^n units plus up to one unit of jitter, capped),
/// with a 100 ms unit instead of 1 s so the demo is quick.
#[retry(max_retries = 5, initial_backoff = "100ms", max_backoff = "3200ms", retry_if = is_transient)]
async fn fetch(client: &reqwest::Client, url: &str, log: &Log, attempts: &mut u32) -> Result<String, FetchError> {
    log.attempt(attempts);
    let response = client.get(url).send().await?;
    let status = response.status();
    if !status.is_success() {
        println!("            -> {status}");
        return Err(FetchError::Status(status));
    }
    Ok(response.text().await?)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addr = flaky_server::start(2).await?;
    let url = format!("http://{addr}/");
    println!("server on {url} answers 503 twice, then 200\n");

    let client = reqwest::Client::new();
    let log = Log {
        start: Instant::now(),
        last: Mutex::new(None),
    };
    let mut attempts = 0;
    let body = fetch(&client, &url, &log, &mut attempts).await?;
    println!("            -> 200 OK: {body:?}");
    println!("\nsucceeded after {attempts} attempts in {:?}", log.start.elapsed());
    Ok(())
}
