//! The outage model: many clients calling a server that goes down and comes
//! back with limited capacity.
//!
//! `clients` clients each start a new request every `request_interval`,
//! staggered evenly, so the base load is `clients / request_interval`. The
//! server is healthy during `warmup`, then down for `outage` (every call
//! fails fast), then serves at most `capacity` calls per second (a token
//! bucket holding at most `burst` tokens); a call above capacity fails like
//! an overloaded server's 503. A failed request retries with the strategy
//! and gives up when its retries run out, or when the shared retry limit
//! (none, a [`RetryBudget`](backoff_runtime::limits::RetryBudget) or a
//! [`RetryThrottle`](backoff_runtime::limits::RetryThrottle)) refuses the retry.
//! New requests stop at `horizon`; the run ends when every request has
//! finished.
//!
//! The limit is used exactly as the runtime's retry loop uses it (see
//! [`super::limit`]): each request is one call of the retrying function.

use std::time::{Duration, Instant};

use backoff_runtime::Policy;

use super::limit::RetryLimit;
use super::queue::EventQueue;
use super::random::{Network, derive_seed};
use super::strategy::{Retrier, Strategy};

/// The parameters of the outage model.
#[derive(Clone, Copy, Debug)]
pub(crate) struct OutageSetup {
    /// The retry parameters (the jitter mode is the strategy's).
    pub(crate) policy: Policy,
    /// How many clients call the server.
    pub(crate) clients: usize,
    /// Each client starts a new request this often.
    pub(crate) request_interval: Duration,
    /// Healthy time before the outage.
    pub(crate) warmup: Duration,
    /// How long the server is down.
    pub(crate) outage: Duration,
    /// When clients stop starting new requests.
    pub(crate) horizon: Duration,
    /// Calls served per second once the server is back.
    pub(crate) capacity: f64,
    /// The most calls served at once after an idle spell.
    pub(crate) burst: f64,
    /// Mean of one network hop.
    pub(crate) hop_mean: Duration,
    /// Standard deviation of one network hop.
    pub(crate) hop_sd: Duration,
}

impl OutageSetup {
    /// 200 clients at one request per second each (200/s), 5 s healthy,
    /// 20 s down, then 250 calls/s; 6 retries from 100 ms up to 10 s; new
    /// requests until 60 s.
    pub(crate) const DEFAULT: OutageSetup = OutageSetup {
        policy: Policy::new()
            .max_retries(6)
            .initial_backoff(Duration::from_millis(100))
            .max_backoff(Duration::from_secs(10)),
        clients: 200,
        request_interval: Duration::from_secs(1),
        warmup: Duration::from_secs(5),
        outage: Duration::from_secs(20),
        horizon: Duration::from_secs(60),
        capacity: 250.0,
        burst: 25.0,
        hop_mean: Duration::from_millis(10),
        hop_sd: Duration::from_millis(2),
    };

    /// When the server comes back.
    pub(crate) fn recovery(&self) -> Duration {
        self.warmup + self.outage
    }

    /// Requests started per second by all clients together.
    pub(crate) fn base_rate(&self) -> f64 {
        self.clients as f64 / self.request_interval.as_secs_f64()
    }
}

/// What one run measured; loads are counted per 1 s bucket of arrival time
/// at the server.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct OutageRun {
    /// Requests started (first attempts).
    pub(crate) requests: u64,
    /// Calls that reached the server: first attempts and retries.
    pub(crate) calls: u64,
    /// Calls the server served.
    pub(crate) served: u64,
    /// Requests that failed after using every retry.
    pub(crate) exhausted: u64,
    /// Requests that failed because the budget or the throttle refused a
    /// retry.
    pub(crate) refused: u64,
    /// Calls reaching the server in each second.
    pub(crate) offered_per_second: Vec<u32>,
    /// Calls served in each second.
    pub(crate) served_per_second: Vec<u32>,
    /// Retries (calls other than first attempts) reaching the server in each
    /// second.
    pub(crate) retries_per_second: Vec<u32>,
}

impl OutageRun {
    /// Counts one call arriving at `at`, a retry or not, served or not.
    pub(crate) fn record_call(&mut self, at: Duration, retry: bool, served: bool) {
        let second = usize::try_from(at.as_secs()).unwrap_or(usize::MAX);
        if self.offered_per_second.len() <= second {
            self.offered_per_second.resize(second + 1, 0);
            self.served_per_second.resize(second + 1, 0);
            self.retries_per_second.resize(second + 1, 0);
        }
        self.calls += 1;
        self.offered_per_second[second] += 1;
        if retry {
            self.retries_per_second[second] += 1;
        }
        if served {
            self.served += 1;
            self.served_per_second[second] += 1;
        }
    }
}

/// The server: down during the outage, then limited by a token bucket.
pub(crate) struct Server {
    down_from: Duration,
    down_until: Duration,
    rate: f64,
    burst: f64,
    tokens: f64,
    refilled_at: Duration,
}

impl Server {
    pub(crate) fn new(setup: &OutageSetup) -> Self {
        Server {
            down_from: setup.warmup,
            down_until: setup.recovery(),
            rate: setup.capacity,
            burst: setup.burst,
            tokens: setup.burst,
            refilled_at: Duration::ZERO,
        }
    }

    /// Whether a call arriving at `now` is served.
    pub(crate) fn serve(&mut self, now: Duration) -> bool {
        if now >= self.down_from && now < self.down_until {
            return false;
        }
        let elapsed = now.saturating_sub(self.refilled_at).as_secs_f64();
        self.tokens = (self.tokens + elapsed * self.rate).min(self.burst);
        self.refilled_at = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

/// A message in flight or a client's timer, named by where it happens.
#[derive(Clone, Copy, Debug)]
enum Event {
    /// A client starts its next request.
    Start { client: usize },
    /// A call of request `request` reaches the server (a retry or its
    /// first attempt).
    Arrive { request: usize, retry: bool },
    /// The server's answer reaches the client.
    Reply { request: usize, served: bool },
}

/// Runs the model once. The network draws from a stream derived from
/// `seed`, and each request's jitter from its own; `limit` is shared by
/// every client.
pub(crate) fn simulate(setup: &OutageSetup, strategy: Strategy, limit: RetryLimit, seed: u64) -> OutageRun {
    let limiter = limit.build(Instant::now());
    let mut network = Network::new(setup.hop_mean, setup.hop_sd, derive_seed(seed, 0));
    let mut server = Server::new(setup);
    let mut requests: Vec<Option<Retrier>> = Vec::new();
    let mut queue = EventQueue::new();
    for client in 0..setup.clients {
        let offset = setup.request_interval.mul_f64(client as f64 / setup.clients as f64);
        queue.schedule_in(offset, Event::Start { client });
    }

    let mut run = OutageRun::default();
    while let Some(event) = queue.pop() {
        let now = queue.now();
        match event {
            Event::Start { client } => {
                let request = requests.len();
                requests.push(Some(
                    strategy.retrier(&setup.policy, derive_seed(seed, request as u64 + 1)),
                ));
                run.requests += 1;
                limiter.call_started(now);
                queue.schedule_in(network.hop(), Event::Arrive { request, retry: false });
                if now + setup.request_interval < setup.horizon {
                    queue.schedule_in(setup.request_interval, Event::Start { client });
                }
            }
            Event::Arrive { request, retry } => {
                let served = server.serve(now);
                run.record_call(now, retry, served);
                queue.schedule_in(network.hop(), Event::Reply { request, served });
            }
            Event::Reply { request, served: true } => {
                limiter.attempt_succeeded();
                requests[request] = None;
            }
            Event::Reply { request, served: false } => {
                let Some(retrier) = requests[request].as_mut() else {
                    continue;
                };
                if !limiter.attempt_failed() {
                    run.refused += 1;
                    requests[request] = None;
                    continue;
                }
                match retrier.next_wait() {
                    None => {
                        run.exhausted += 1;
                        requests[request] = None;
                    }
                    Some(_) if !limiter.retry_allowed(now) => {
                        run.refused += 1;
                        requests[request] = None;
                    }
                    Some(wait) => queue.schedule_in(wait + network.hop(), Event::Arrive { request, retry: true }),
                }
            }
        }
    }
    run
}

#[cfg(test)]
mod tests {
    use super::super::limit::ThrottleSetup;
    use super::*;
    use backoff_runtime::Jitter;

    #[test]
    fn without_outage_every_request_is_served_first_time() {
        let setup = OutageSetup {
            outage: Duration::ZERO,
            horizon: Duration::from_secs(5),
            ..OutageSetup::DEFAULT
        };
        let run = simulate(&setup, Strategy::Backoff(Jitter::Full), RetryLimit::Unlimited, 1);
        assert_eq!(run.requests, 1000);
        assert_eq!((run.calls, run.served, run.exhausted, run.refused), (1000, 1000, 0, 0));
    }

    #[test]
    fn during_a_long_outage_each_request_makes_every_retry() {
        let setup = OutageSetup {
            warmup: Duration::ZERO,
            outage: Duration::from_secs(100),
            horizon: Duration::from_secs(2),
            ..OutageSetup::DEFAULT
        };
        let run = simulate(&setup, Strategy::Backoff(Jitter::None), RetryLimit::Unlimited, 1);
        assert_eq!(run.requests, 400);
        assert_eq!(run.calls, 400 * 7);
        assert_eq!((run.served, run.exhausted, run.refused), (0, 400, 0));
        assert_eq!(run.retries_per_second.iter().sum::<u32>(), 400 * 6);
    }

    #[test]
    fn during_a_long_outage_the_throttle_allows_only_its_first_retries() {
        let setup = OutageSetup {
            warmup: Duration::ZERO,
            outage: Duration::from_secs(100),
            horizon: Duration::from_secs(2),
            ..OutageSetup::DEFAULT
        };
        let throttle = RetryLimit::Throttle(ThrottleSetup::GRPC_EXAMPLE);
        let run = simulate(&setup, Strategy::Backoff(Jitter::None), throttle, 1);
        // The first four failures leave 9, 8, 7 and 6 tokens: retried; every
        // later failure, those retries' included, finds 5 or fewer.
        assert_eq!(run.calls, 400 + 4);
        assert_eq!((run.served, run.exhausted, run.refused), (0, 0, 400));
    }

    #[test]
    fn after_the_outage_the_throttle_refills_and_retries_again() {
        // Down for 1 s, which empties the bucket, then 190 calls/s for 200/s
        // of requests: about one call in twenty fails, and the nineteen
        // successes between failures return 1.9 tokens for the one taken.
        let setup = OutageSetup {
            warmup: Duration::ZERO,
            outage: Duration::from_secs(1),
            horizon: Duration::from_secs(6),
            capacity: 190.0,
            burst: 5.0,
            ..OutageSetup::DEFAULT
        };
        let throttle = RetryLimit::Throttle(ThrottleSetup::GRPC_EXAMPLE);
        let run = simulate(&setup, Strategy::Backoff(Jitter::None), throttle, 1);
        let retries_while_down = run.retries_per_second[0];
        let retries_later: u32 = run.retries_per_second[3..].iter().sum();
        assert!(retries_while_down <= 4, "{run:?}");
        assert!(retries_later > 20, "{retries_later} retries once successes came back");
    }
}
