//! Fault-injection load test over loopback: 5,000 requests from 64 concurrent
//! tasks through an annotated client function, against a real HTTP server
//! whose faults are planned per (request id, attempt) from a fixed seed, so
//! the run is deterministic whatever the arrival order. Each attempt fails
//! with 30% 503, 10% 429 (`Retry-After` 0 or 1 s), 5% dropped connections
//! (the socket is closed without a response), plus 0-3 ms of latency; one id
//! in ten is answered 404 or 401 instead. Every retryable request must
//! complete with its own body, within its retry bound; every 404/401 after
//! exactly one attempt. Prints the figures; bounded to 60 s.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use backoff_runtime::http_errors::{is_retryable_status, retry_after_header};
use backoff_runtime::retry;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const SEED: u64 = 0x5EED_2026;
const REQUESTS: u32 = 5_000;
const TASKS: u32 = 64;
const MAX_RETRIES: u32 = 20;

/// What the server does with one attempt.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Fault {
    Ok,
    Unavailable,
    TooMany { retry_after: u8 },
    Drop,
    NotFound,
    Unauthorized,
}

/// A 64-bit mix (splitmix64): the plan is a pure function of its inputs.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// Ids answered 404 or 401 on every attempt.
fn is_permanent(id: u32) -> bool {
    mix(SEED ^ u64::from(id)).is_multiple_of(10)
}

/// The fault of attempt `attempt` (1-based) of request `id`.
fn plan(id: u32, attempt: u32) -> Fault {
    if is_permanent(id) {
        return if mix(SEED ^ u64::from(id) ^ 1).is_multiple_of(2) {
            Fault::NotFound
        } else {
            Fault::Unauthorized
        };
    }
    let roll = mix(SEED ^ (u64::from(id) << 20) ^ u64::from(attempt)) % 100;
    match roll {
        0..30 => Fault::Unavailable,
        30..40 => Fault::TooMany {
            retry_after: (roll % 2) as u8,
        },
        40..45 => Fault::Drop,
        _ => Fault::Ok,
    }
}

fn latency(id: u32, attempt: u32) -> Duration {
    Duration::from_micros(mix(SEED ^ u64::from(id) ^ (u64::from(attempt) << 40)) % 3_000)
}

/// A minimal HTTP/1.1 server (one request per connection), so a planned
/// fault can close the socket without answering.
async fn serve(listener: TcpListener, attempts: Arc<Mutex<HashMap<u32, u32>>>) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            return;
        };
        let attempts = attempts.clone();
        tokio::spawn(async move {
            let _ = answer(stream, &attempts).await;
        });
    }
}

async fn answer(mut stream: TcpStream, attempts: &Mutex<HashMap<u32, u32>>) -> std::io::Result<()> {
    let mut request = Vec::new();
    let mut buffer = [0u8; 1024];
    while !request.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut buffer).await?;
        if n == 0 {
            return Ok(());
        }
        request.extend_from_slice(&buffer[..n]);
    }
    let line = String::from_utf8_lossy(&request);
    let id: u32 = line
        .split_whitespace()
        .nth(1)
        .and_then(|path| path.strip_prefix("/req/"))
        .and_then(|id| id.parse().ok())
        .unwrap_or(u32::MAX);
    let attempt = {
        let mut attempts = attempts.lock().unwrap();
        let count = attempts.entry(id).or_insert(0);
        *count += 1;
        *count
    };
    tokio::time::sleep(latency(id, attempt)).await;
    let (status, extra, body) = match plan(id, attempt) {
        Fault::Drop => return Ok(()), // closed without a response
        Fault::Ok => ("200 OK", String::new(), format!("id={id}")),
        Fault::Unavailable => ("503 Service Unavailable", String::new(), "busy".to_string()),
        Fault::TooMany { retry_after } => (
            "429 Too Many Requests",
            format!("Retry-After: {retry_after}\r\n"),
            "slow down".to_string(),
        ),
        Fault::NotFound => ("404 Not Found", String::new(), "no such id".to_string()),
        Fault::Unauthorized => ("401 Unauthorized", String::new(), "who are you".to_string()),
    };
    let response = format!(
        "HTTP/1.1 {status}\r\n{extra}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(response.as_bytes()).await?;
    stream.shutdown().await
}

#[derive(Debug)]
enum LoadError {
    Status(reqwest::StatusCode, Option<Duration>),
    Network(reqwest::Error),
}

impl From<reqwest::Error> for LoadError {
    fn from(error: reqwest::Error) -> Self {
        LoadError::Network(error)
    }
}

fn retryable(error: &LoadError) -> bool {
    match error {
        LoadError::Status(status, _) => is_retryable_status(*status),
        // Refused, reset or closed before a response: the network failed
        // (a request that could not even be built would not be).
        LoadError::Network(error) => !error.is_builder(),
    }
}

fn hint(error: &LoadError) -> Option<Duration> {
    match error {
        LoadError::Status(_, hint) => *hint,
        LoadError::Network(_) => None,
    }
}

/// Retries by cause, counted by the `on_retry` hook.
#[derive(Default)]
struct Causes {
    unavailable: AtomicU64,
    too_many: AtomicU64,
    network: AtomicU64,
}

impl Causes {
    fn count(&self, error: &LoadError) {
        let counter = match error {
            LoadError::Status(status, _) if status.as_u16() == 429 => &self.too_many,
            LoadError::Status(..) => &self.unavailable,
            LoadError::Network(_) => &self.network,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }
}

#[retry(
    max_retries = 20,
    initial_backoff = "1ms",
    max_backoff = "1s",
    retry_if = retryable,
    retry_after = hint,
    on_retry = |error, _| causes.count(error),
)]
async fn fetch(
    client: &reqwest::Client,
    base: &str,
    id: u32,
    attempts: &AtomicU32,
    causes: &Causes,
) -> Result<String, LoadError> {
    attempts.fetch_add(1, Ordering::Relaxed);
    let response = client.get(format!("{base}/req/{id}")).send().await?;
    let status = response.status();
    if !status.is_success() {
        return Err(LoadError::Status(status, retry_after_header(response.headers())));
    }
    Ok(response.text().await?)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn five_thousand_requests_through_planned_faults() {
    let server_attempts = Arc::new(Mutex::new(HashMap::new()));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let server = tokio::spawn(serve(listener, server_attempts.clone()));

    let client = reqwest::Client::builder().pool_max_idle_per_host(0).build().unwrap();
    let causes = Arc::new(Causes::default());
    let started = Instant::now();
    let workers: Vec<_> = (0..TASKS)
        .map(|task| {
            let (client, base, causes) = (client.clone(), base.clone(), causes.clone());
            tokio::spawn(async move {
                let mut outcomes = Vec::new();
                for id in (task..REQUESTS).step_by(TASKS as usize) {
                    let attempts = AtomicU32::new(0);
                    let result = fetch(&client, &base, id, &attempts, &causes).await;
                    outcomes.push((id, result, attempts.into_inner()));
                }
                outcomes
            })
        })
        .collect();
    let outcomes = tokio::time::timeout(Duration::from_secs(60), async {
        let mut all = Vec::new();
        for worker in workers {
            all.extend(worker.await.unwrap());
        }
        all
    })
    .await
    .expect("the load test stops by itself within 60 s");
    let wall = started.elapsed();
    server.abort();

    assert_eq!(outcomes.len(), REQUESTS as usize, "no request lost");
    let mut max_attempts = 0;
    let (mut total_attempts, mut permanent) = (0, 0);
    for (id, result, attempts) in &outcomes {
        total_attempts += attempts;
        max_attempts = max_attempts.max(*attempts);
        assert!(*attempts <= MAX_RETRIES + 1, "id {id} made {attempts} attempts");
        if is_permanent(*id) {
            permanent += 1;
            assert_eq!(*attempts, 1, "id {id}: a 404/401 must not be retried");
            let status = match result {
                Err(LoadError::Status(status, _)) => status.as_u16(),
                other => panic!("id {id}: expected 404/401, got {other:?}"),
            };
            assert!(status == 404 || status == 401);
        } else {
            let body = result.as_ref().unwrap_or_else(|e| panic!("id {id} failed: {e:?}"));
            assert_eq!(body, &format!("id={id}"), "id {id} got another request's body");
        }
        assert_eq!(
            server_attempts.lock().unwrap().get(id).copied(),
            Some(*attempts),
            "client and server agree on id {id}"
        );
    }
    println!("load test: {REQUESTS} requests from {TASKS} tasks in {wall:?}");
    println!("  attempts:         {total_attempts}");
    println!(
        "  retries by cause: 503 {}, 429 {}, dropped/network {}",
        causes.unavailable.load(Ordering::Relaxed),
        causes.too_many.load(Ordering::Relaxed),
        causes.network.load(Ordering::Relaxed)
    );
    println!("  404/401 answered after one attempt: {permanent}");
    println!(
        "  max attempts for one request: {max_attempts} (bound {})",
        MAX_RETRIES + 1
    );
}
