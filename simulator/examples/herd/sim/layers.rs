//! The layered outage: retries multiplying across the layers of a call
//! chain.
//!
//! Each request of a client goes through three retrying layers: the client
//! calls service A, A calls B, and B calls C, and each of the three calls is
//! a retrying function with the same policy (`max_retries = 3`). C is down
//! for the whole run: every call to it fails fast. A layer's attempt fails
//! when the layer below gives up, and the layer then retries as its policy
//! and its retry limit say. Every message crosses one network hop of
//! `|Normal(mean, sd)|`.
//!
//! Four rules are compared (see [`LayerRule`]): every layer retries (up to
//! 4 x 4 x 4 = 64 calls reach C per request); one layer retries, where a
//! failure that a layer below already retried and gave up on is not retried
//! again (C is called at most 4 times: B's retries); and every layer
//! retrying with its own windowed budget, or its own throttle, shared by
//! all the calls that layer makes.
//!
//! The "one layer retries" rule is modelled here in the simulator: a layer
//! that gives up marks its failure, and the layers above do not retry a
//! marked failure (they stop at once). Within one process the runtime can
//! carry that mark along the call chain; across services it would have to
//! travel with the failure (a response header, say).

use std::time::{Duration, Instant};

use backoff_runtime::{Jitter, Policy};

use super::limit::{BudgetSetup, Limiter, RetryLimit, ThrottleSetup};
use super::queue::EventQueue;
use super::random::{Network, derive_seed};
use super::strategy::{Retrier, Strategy};

/// The retrying layers: the client's call to A, A's to B and B's to C.
pub(crate) const LAYERS: usize = 3;

/// The services the layers call, top to bottom.
pub(crate) const SERVICES: [&str; LAYERS] = ["A", "B", "C"];

/// The parameters of the layered outage.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LayersSetup {
    /// Every layer's retry policy (jitter included).
    pub(crate) policy: Policy,
    /// How many clients send requests.
    pub(crate) clients: usize,
    /// Each client starts a new request this often.
    pub(crate) request_interval: Duration,
    /// When clients stop starting new requests.
    pub(crate) horizon: Duration,
    /// Mean of one network hop.
    pub(crate) hop_mean: Duration,
    /// Standard deviation of one network hop.
    pub(crate) hop_sd: Duration,
}

impl LayersSetup {
    /// 100 clients at one request per second each (100/s) for 20 s; every
    /// layer retries 3 times with full jitter from 100 ms up to 10 s.
    pub(crate) const DEFAULT: LayersSetup = LayersSetup {
        policy: Policy::new()
            .max_retries(3)
            .initial_backoff(Duration::from_millis(100))
            .max_backoff(Duration::from_secs(10))
            .jitter(Jitter::Full),
        clients: 100,
        request_interval: Duration::from_secs(1),
        horizon: Duration::from_secs(20),
        hop_mean: Duration::from_millis(10),
        hop_sd: Duration::from_millis(2),
    };

    /// Requests started per second by all clients together.
    pub(crate) fn base_rate(&self) -> f64 {
        self.clients as f64 / self.request_interval.as_secs_f64()
    }
}

/// Which layers retry, and what limits them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum LayerRule {
    /// Every layer retries every failure, up to its `max_retries`.
    EveryLayer,
    /// A failure that a layer below gave up on is not retried: only the
    /// bottom layer retries.
    OneLayer,
    /// Every layer retries, each with its own limit (a budget or a
    /// throttle) shared by all the calls that layer makes.
    EveryLayerLimited(RetryLimit),
}

impl LayerRule {
    /// The four rules compared, in the order of the table and chart.
    pub(crate) const ALL: [LayerRule; 4] = [
        LayerRule::EveryLayer,
        LayerRule::OneLayer,
        LayerRule::EveryLayerLimited(RetryLimit::Budget(BudgetSetup::DEFAULT)),
        LayerRule::EveryLayerLimited(RetryLimit::Throttle(ThrottleSetup::GRPC_EXAMPLE)),
    ];

    /// A short name for tables and legends.
    pub(crate) fn label(self) -> &'static str {
        match self {
            LayerRule::EveryLayer => "every layer retries",
            LayerRule::OneLayer => "one layer retries",
            LayerRule::EveryLayerLimited(RetryLimit::Budget(_)) => "every layer, budget per layer",
            LayerRule::EveryLayerLimited(RetryLimit::Throttle(_)) => "every layer, throttle per layer",
            LayerRule::EveryLayerLimited(RetryLimit::Unlimited) => "every layer retries (no limit)",
        }
    }

    /// Each layer's limit.
    fn limit(self) -> RetryLimit {
        match self {
            LayerRule::EveryLayerLimited(limit) => limit,
            LayerRule::EveryLayer | LayerRule::OneLayer => RetryLimit::Unlimited,
        }
    }

    /// Whether a layer retries a failure that the layer below gave up on.
    fn retries_what_was_retried_below(self) -> bool {
        self != LayerRule::OneLayer
    }
}

/// What one run measured.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct LayersRun {
    /// Requests the clients started.
    pub(crate) requests: u64,
    /// Calls reaching A, B and C, first attempts and retries.
    pub(crate) calls: [u64; LAYERS],
    /// The most calls one request made reach C.
    pub(crate) most_bottom_calls: u32,
    /// Calls reaching C in each second.
    pub(crate) bottom_per_second: Vec<u32>,
}

/// A message in flight or a timer, named by where it happens.
#[derive(Clone, Copy, Debug)]
enum Event {
    /// A client starts its next request.
    Start { client: usize },
    /// The call of layer `layer` for request `request` reaches its service.
    Arrive { request: usize, layer: usize },
    /// The failure of layer `layer`'s call reaches its caller;
    /// `gave_up_below` when it is the give-up of a retrying layer below.
    Failed {
        request: usize,
        layer: usize,
        gave_up_below: bool,
    },
}

/// One request: each layer's retrier while that layer's call is running,
/// and how many of its calls reached C.
struct Request {
    retriers: [Option<Retrier>; LAYERS],
    bottom_calls: u32,
}

/// The simulation's state besides the queue.
struct Layers<'a> {
    setup: &'a LayersSetup,
    rule: LayerRule,
    seed: u64,
    limiters: [Limiter; LAYERS],
    network: Network,
    requests: Vec<Request>,
    /// Layer calls started so far: each gets its own jitter stream.
    calls_started: u64,
    run: LayersRun,
}

impl Layers<'_> {
    /// Layer `layer` of `request` starts a call of its retrying function.
    fn start_call(&mut self, queue: &mut EventQueue<Event>, request: usize, layer: usize) {
        self.calls_started += 1;
        let retrier = Strategy::Backoff(self.setup.policy.get_jitter())
            .retrier(&self.setup.policy, derive_seed(self.seed, self.calls_started));
        self.requests[request].retriers[layer] = Some(retrier);
        self.limiters[layer].call_started(queue.now());
        queue.schedule_in(self.network.hop(), Event::Arrive { request, layer });
    }

    /// The call of `layer` reaches its service: C fails at once; A and B
    /// start their own call to the layer below.
    fn arrive(&mut self, queue: &mut EventQueue<Event>, request: usize, layer: usize) {
        self.run.calls[layer] += 1;
        if layer + 1 < LAYERS {
            self.start_call(queue, request, layer + 1);
            return;
        }
        self.requests[request].bottom_calls += 1;
        let second = usize::try_from(queue.now().as_secs()).unwrap_or(usize::MAX);
        if self.run.bottom_per_second.len() <= second {
            self.run.bottom_per_second.resize(second + 1, 0);
        }
        self.run.bottom_per_second[second] += 1;
        let failure = Event::Failed {
            request,
            layer,
            gave_up_below: false,
        };
        queue.schedule_in(self.network.hop(), failure);
    }

    /// Layer `layer`'s caller learns that its attempt failed: it retries,
    /// or gives up and fails the attempt of the layer above.
    fn failed(&mut self, queue: &mut EventQueue<Event>, request: usize, layer: usize, gave_up_below: bool) {
        let now = queue.now();
        let limiter = &self.limiters[layer];
        // The throttle first, then the rule, the schedule, and the budget
        // last: the retry loops' order.
        let retry = (limiter.attempt_failed() && (self.rule.retries_what_was_retried_below() || !gave_up_below))
            .then(|| {
                self.requests[request].retriers[layer]
                    .as_mut()
                    .and_then(Retrier::next_wait)
            })
            .flatten()
            .filter(|_| limiter.retry_allowed(now));
        match retry {
            Some(wait) => queue.schedule_in(wait + self.network.hop(), Event::Arrive { request, layer }),
            None => self.give_up(queue, request, layer),
        }
    }

    /// Layer `layer` gives up: the request fails (top layer), or the layer
    /// above learns of the failure one hop later.
    fn give_up(&mut self, queue: &mut EventQueue<Event>, request: usize, layer: usize) {
        let state = &mut self.requests[request];
        state.retriers[layer] = None;
        if layer == 0 {
            self.run.most_bottom_calls = self.run.most_bottom_calls.max(state.bottom_calls);
            return;
        }
        let failure = Event::Failed {
            request,
            layer: layer - 1,
            gave_up_below: true,
        };
        queue.schedule_in(self.network.hop(), failure);
    }
}

/// Runs the model once with `rule`. The network draws from a stream
/// derived from `seed`, and each layer call's jitter from its own.
pub(crate) fn simulate(setup: &LayersSetup, rule: LayerRule, seed: u64) -> LayersRun {
    let origin = Instant::now();
    let limit = rule.limit();
    let mut state = Layers {
        setup,
        rule,
        seed,
        limiters: [limit.build(origin), limit.build(origin), limit.build(origin)],
        network: Network::new(setup.hop_mean, setup.hop_sd, derive_seed(seed, 0)),
        requests: Vec::new(),
        calls_started: 0,
        run: LayersRun::default(),
    };
    let mut queue = EventQueue::new();
    for client in 0..setup.clients {
        let offset = setup.request_interval.mul_f64(client as f64 / setup.clients as f64);
        queue.schedule_in(offset, Event::Start { client });
    }
    while let Some(event) = queue.pop() {
        match event {
            Event::Start { client } => {
                let request = state.requests.len();
                state.requests.push(Request {
                    retriers: [None, None, None],
                    bottom_calls: 0,
                });
                state.run.requests += 1;
                state.start_call(&mut queue, request, 0);
                if queue.now() + setup.request_interval < setup.horizon {
                    queue.schedule_in(setup.request_interval, Event::Start { client });
                }
            }
            Event::Arrive { request, layer } => state.arrive(&mut queue, request, layer),
            Event::Failed {
                request,
                layer,
                gave_up_below,
            } => state.failed(&mut queue, request, layer, gave_up_below),
        }
    }
    state.run
}

#[cfg(test)]
mod tests {
    use super::*;

    fn short() -> LayersSetup {
        LayersSetup {
            clients: 10,
            horizon: Duration::from_secs(2),
            ..LayersSetup::DEFAULT
        }
    }

    #[test]
    fn every_layer_retrying_multiplies_the_calls() {
        let run = simulate(&short(), LayerRule::EveryLayer, 1);
        assert_eq!(run.requests, 20);
        assert_eq!(run.calls, [20 * 4, 20 * 16, 20 * 64]);
        assert_eq!(run.most_bottom_calls, 64);
        assert_eq!(
            run.bottom_per_second.iter().map(|&n| u64::from(n)).sum::<u64>(),
            20 * 64
        );
    }

    #[test]
    fn with_one_layer_retrying_the_layers_above_stop_at_once() {
        let run = simulate(&short(), LayerRule::OneLayer, 1);
        assert_eq!(run.calls, [20, 20, 20 * 4]);
        assert_eq!(run.most_bottom_calls, 4);
    }

    #[test]
    fn a_throttle_per_layer_stops_every_layer_after_its_first_failures() {
        let run = simulate(&short(), LayerRule::ALL[3], 1);
        // C never succeeds, so no bucket refills: each layer retries at most
        // its first four failures (9, 8, 7 and 6 tokens left), whatever the
        // calls from above.
        let [a, b, c] = run.calls;
        assert!(a <= 20 + 4 && b <= a + 4 && c <= b + 4, "{:?}", run.calls);
        assert!(c > 20, "the first failures were retried: {:?}", run.calls);
    }

    #[test]
    fn runs_repeat_for_a_seed() {
        for rule in LayerRule::ALL {
            assert_eq!(simulate(&short(), rule, 5), simulate(&short(), rule, 5), "{rule:?}");
        }
    }
}
