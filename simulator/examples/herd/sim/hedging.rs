//! Hedging in the outage model: the same clients and server as
//! [`super::outage`], each request hedged as the runtime hedges (its
//! `Loop::hedge_failed` and `Loop::may_hedge`): the first attempt at once,
//! the next after `delay` without an answer or at once after a failure, up
//! to `max_attempts`; a served answer ends the request (the others are
//! cancelled, but a call already sent still reaches the server). Every
//! attempt after the first asks the shared limit as a retry does.
//!
//! During an outage the server fails fast, so every failure sends the next
//! attempt at once: hedging is then retrying with no backoff, and only the
//! limit bounds the load.

use std::time::{Duration, Instant};

use super::limit::{Limiter, RetryLimit};
use super::outage::{OutageRun, OutageSetup, Server};
use super::queue::EventQueue;
use super::random::{Network, derive_seed};

/// How each request hedges.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct HedgeSetup {
    /// The delay after which the next attempt starts without an answer.
    pub(crate) delay: Duration,
    /// The attempts of one request, the first included.
    pub(crate) max_attempts: u32,
}

impl HedgeSetup {
    /// A hedge after 50 ms (above the model's ~20 ms round trip: a healthy
    /// server is never hedged), 3 attempts: A6's example shape.
    pub(crate) const DEFAULT: HedgeSetup = HedgeSetup {
        delay: Duration::from_millis(50),
        max_attempts: 3,
    };
}

/// One request's attempts.
#[derive(Clone, Copy, Debug, Default)]
struct Request {
    sent: u32,
    in_flight: u32,
    done: bool,
    /// No hedge starts any more (the limit refused one).
    no_more: bool,
    /// Which hedge timer is current (older ones are ignored).
    timer: u32,
}

#[derive(Clone, Copy, Debug)]
enum Event {
    Start { client: usize },
    Arrive { request: usize, hedge: bool },
    Reply { request: usize, served: bool },
    HedgeDue { request: usize, timer: u32 },
}

/// Sends the next attempt of `request` (its `sent`-th), and arms its hedge
/// timer when another may follow.
fn send(request: usize, state: &mut Request, hedge: &HedgeSetup, queue: &mut EventQueue<Event>, network: &mut Network) {
    state.sent += 1;
    state.in_flight += 1;
    queue.schedule_in(
        network.hop(),
        Event::Arrive {
            request,
            hedge: state.sent > 1,
        },
    );
    state.timer += 1;
    if state.sent < hedge.max_attempts && !state.no_more {
        queue.schedule_in(
            hedge.delay,
            Event::HedgeDue {
                request,
                timer: state.timer,
            },
        );
    }
}

/// Whether `limiter` lets one more attempt of a request go at `now`.
fn allowed(limiter: &Limiter, now: Duration) -> bool {
    limiter.retry_allowed(now)
}

/// Runs the outage model once with every request hedged by `hedge`, the
/// attempts after the first asking `limit`. Seeds as [`super::outage::simulate`].
pub(crate) fn simulate(setup: &OutageSetup, hedge: &HedgeSetup, limit: RetryLimit, seed: u64) -> OutageRun {
    let limiter = limit.build(Instant::now());
    let mut network = Network::new(setup.hop_mean, setup.hop_sd, derive_seed(seed, 0));
    let mut server = Server::new(setup);
    let mut requests: Vec<Request> = Vec::new();
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
                requests.push(Request::default());
                run.requests += 1;
                limiter.call_started(now);
                send(request, &mut requests[request], hedge, &mut queue, &mut network);
                if now + setup.request_interval < setup.horizon {
                    queue.schedule_in(setup.request_interval, Event::Start { client });
                }
            }
            Event::Arrive { request, hedge } => {
                let served = server.serve(now);
                run.record_call(now, hedge, served);
                queue.schedule_in(network.hop(), Event::Reply { request, served });
            }
            Event::HedgeDue { request, timer } => {
                let state = &mut requests[request];
                if state.done || state.timer != timer || state.no_more {
                    continue;
                }
                if allowed(&limiter, now) {
                    send(request, state, hedge, &mut queue, &mut network);
                } else {
                    state.no_more = true;
                }
            }
            Event::Reply { request, served } => {
                let state = &mut requests[request];
                state.in_flight -= 1;
                if state.done {
                    continue;
                }
                if served {
                    state.done = true;
                    limiter.attempt_succeeded();
                    continue;
                }
                let counted = limiter.attempt_failed();
                let others_run = state.in_flight > 0;
                if counted && state.sent < hedge.max_attempts && allowed(&limiter, now) {
                    // A failure sends the next attempt at once.
                    send(request, state, hedge, &mut queue, &mut network);
                } else if !others_run {
                    state.done = true;
                    if state.sent >= hedge.max_attempts {
                        run.exhausted += 1;
                    } else {
                        run.refused += 1;
                    }
                }
            }
        }
    }
    run
}

#[cfg(test)]
mod tests {
    use super::super::limit::BudgetSetup;
    use super::*;

    #[test]
    fn a_healthy_server_is_never_hedged() {
        let setup = OutageSetup {
            outage: Duration::ZERO,
            horizon: Duration::from_secs(5),
            ..OutageSetup::DEFAULT
        };
        let run = simulate(&setup, &HedgeSetup::DEFAULT, RetryLimit::Unlimited, 1);
        assert_eq!((run.requests, run.calls, run.served), (1000, 1000, 1000));
    }

    #[test]
    fn in_an_outage_every_request_sends_every_attempt_without_a_limit() {
        let setup = OutageSetup {
            warmup: Duration::ZERO,
            outage: Duration::from_secs(100),
            horizon: Duration::from_secs(2),
            ..OutageSetup::DEFAULT
        };
        let run = simulate(&setup, &HedgeSetup::DEFAULT, RetryLimit::Unlimited, 1);
        assert_eq!((run.requests, run.calls, run.exhausted), (400, 1200, 400));
    }

    #[test]
    fn a_ten_percent_budget_bounds_the_hedges_of_an_outage() {
        let setup = OutageSetup {
            warmup: Duration::ZERO,
            outage: Duration::from_secs(100),
            horizon: Duration::from_secs(20),
            ..OutageSetup::DEFAULT
        };
        let budget = RetryLimit::Budget(BudgetSetup {
            ratio: 0.1,
            min_per_second: 0,
            window: Duration::from_secs(10),
        });
        let run = simulate(&setup, &HedgeSetup::DEFAULT, budget, 1);
        let amplification = run.calls as f64 / run.requests as f64;
        assert!(amplification <= 1.1, "{amplification}");
        assert!(amplification > 1.05, "the budget's hedges were sent: {amplification}");
    }
}
