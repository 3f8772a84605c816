//! Hedging against a heavy tail: a loopback tonic server where 5% of the
//! calls take 100 ms and the rest 1 ms. Each variant sends the same calls
//! through `GrpcRetryLayer` and reports p50, p99 and the calls the server
//! saw, against the unhedged run of the same process.
//!
//! ```sh
//! cargo bench --bench hedging_tail
//! ```
//!
//! Variants (a `hedgingPolicy` of `maxAttempts` 3, non-fatal `UNAVAILABLE`):
//!
//! - `unhedged`: no policy (the baseline);
//! - `hedged 5 ms`: `hedgingDelay` 5 ms, no limit;
//! - `hedged 5 ms, 10% budget`: the same under a `RetryBudget` of 10% of
//!   the calls (`GrpcRetryLayer::budget`).
//!
//! The server's tail is drawn from a seeded generator, per server call: a
//! hedge is a new draw. 16 callers run at once on a 2-worker runtime, each
//! variant 4,000 calls after 200 warm-up calls. Wall-clock timings: the
//! ratios, not the milliseconds, are the figures (BENCHMARKS.md).

use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use backoff_grpc::{GrpcRetryLayer, ServiceConfig};
use backoff_runtime::limits::RetryBudget;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use tonic::transport::{Channel, Server};
use tonic::{Request, Response, Status};
use tonic_health::pb::health_client::HealthClient;
use tonic_health::pb::health_server::{Health, HealthServer};
use tonic_health::pb::{HealthCheckRequest, HealthCheckResponse};
use tower::Layer;

/// Calls per variant, callers at once, and warm-up calls.
const CALLS: usize = 4_000;
const CALLERS: usize = 16;
const WARM_UP: usize = 200;

/// A health server with a heavy tail: 5% of its calls take 100 ms, the
/// rest 1 ms. It counts the calls it serves.
struct Tail {
    served: Arc<AtomicU64>,
    draws: Mutex<SmallRng>,
}

#[tonic::async_trait]
impl Health for Tail {
    async fn check(&self, _: Request<HealthCheckRequest>) -> Result<Response<HealthCheckResponse>, Status> {
        self.served.fetch_add(1, Ordering::Relaxed);
        // One draw in 20 is slow: 5%.
        let slow = self
            .draws
            .lock()
            .map(|mut draws| draws.next_u64() % 20 == 0)
            .unwrap_or(false);
        let took = if slow {
            Duration::from_millis(100)
        } else {
            Duration::from_millis(1)
        };
        tokio::time::sleep(took).await;
        Ok(Response::new(HealthCheckResponse { status: 1 }))
    }

    type WatchStream = Pin<Box<dyn tokio_stream::Stream<Item = Result<HealthCheckResponse, Status>> + Send>>;

    async fn watch(&self, _: Request<HealthCheckRequest>) -> Result<Response<Self::WatchStream>, Status> {
        Err(Status::unimplemented("not served here"))
    }
}

/// The tail server on loopback, the count of the calls it serves, and a
/// channel to it.
async fn start() -> (Arc<AtomicU64>, Channel) {
    let served = Arc::new(AtomicU64::new(0));
    let tail = Tail {
        served: Arc::clone(&served),
        draws: Mutex::new(SmallRng::seed_from_u64(40)),
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let url = format!("http://{}", listener.local_addr().expect("its address"));
    tokio::spawn(async move {
        Server::builder()
            .add_service(HealthServer::new(tail))
            .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(listener))
            .await
            .expect("the server runs");
    });
    let channel = Channel::from_shared(url)
        .expect("a valid URL")
        .connect()
        .await
        .expect("connected");
    (served, channel)
}

const HEDGED: &str = r#"{"methodConfig": [{
  "name": [{"service": "grpc.health.v1.Health"}],
  "hedgingPolicy": {"maxAttempts": 3, "hedgingDelay": "0.005s", "nonFatalStatusCodes": ["UNAVAILABLE"]}
}]}"#;

/// What one variant measured.
struct Measured {
    p50: Duration,
    p99: Duration,
    served: u64,
}

/// `CALLS` calls (after `WARM_UP`) through `layer` over `channel`,
/// `CALLERS` at a time: their latencies, and the calls the server saw.
async fn run(layer: GrpcRetryLayer, channel: &Channel, served: &AtomicU64) -> Measured {
    let client = HealthClient::new(layer.layer(channel.clone()));
    let call = |mut client: HealthClient<_>| async move {
        let started = Instant::now();
        let request = HealthCheckRequest { service: String::new() };
        client.check(request).await.expect("the call succeeds");
        started.elapsed()
    };
    for _ in 0..WARM_UP {
        call(client.clone()).await;
    }
    let before = served.load(Ordering::Relaxed);
    let next = Arc::new(AtomicU64::new(0));
    let callers: Vec<_> = (0..CALLERS)
        .map(|_| {
            let client = client.clone();
            let next = Arc::clone(&next);
            tokio::spawn(async move {
                let mut latencies = Vec::new();
                while next.fetch_add(1, Ordering::Relaxed) < CALLS as u64 {
                    latencies.push(call(client.clone()).await);
                }
                latencies
            })
        })
        .collect();
    let mut latencies = Vec::with_capacity(CALLS);
    for caller in callers {
        latencies.extend(caller.await.expect("the caller ends"));
    }
    latencies.sort_unstable();
    let at = |quantile: f64| latencies[((latencies.len() as f64 * quantile) as usize).min(latencies.len() - 1)];
    Measured {
        p50: at(0.50),
        p99: at(0.99),
        served: served.load(Ordering::Relaxed) - before,
    }
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let (served, channel) = start().await;
        let hedged = ServiceConfig::from_json(HEDGED).expect("a valid config");
        let budget = Arc::new(RetryBudget::new().ratio(0.1).min_per_second(0));
        let variants = [
            ("unhedged", GrpcRetryLayer::new(ServiceConfig::default())),
            ("hedged 5 ms", GrpcRetryLayer::new(hedged.clone())),
            ("hedged 5 ms, 10% budget", GrpcRetryLayer::new(hedged).budget(budget)),
        ];
        let mut baseline = None;
        println!("| variant | p50 | p99 | p99 / unhedged | server calls | calls / unhedged |");
        println!("|---|---|---|---|---|---|");
        for (name, layer) in variants {
            let measured = run(layer, &channel, &served).await;
            let (p99_ratio, calls_ratio) = match &baseline {
                None => (1.0, 1.0),
                Some(Measured { p99, served, .. }) => (
                    measured.p99.as_secs_f64() / p99.as_secs_f64(),
                    measured.served as f64 / *served as f64,
                ),
            };
            println!(
                "| {name} | {:.1} ms | {:.1} ms | {p99_ratio:.3} | {} | {calls_ratio:.3} |",
                measured.p50.as_secs_f64() * 1e3,
                measured.p99.as_secs_f64() * 1e3,
                measured.served,
            );
            baseline.get_or_insert(measured);
        }
    });
}
