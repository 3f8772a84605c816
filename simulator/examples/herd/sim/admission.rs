//! Pacing first attempts: clients calling a backend whose capacity is below
//! what they offer (the overload model), or that goes down and comes back
//! (the outage model's timeline), with every kind of limit the runtime has:
//! none, a [`RetryBudget`], a [`RetryThrottle`] (both on retries), an
//! [`AdaptiveRateLimiter`] and an [`AdaptiveThrottle`] (both on every
//! attempt, the first included).
//!
//! Each limit is asked exactly as the runtime's loop asks it: a budget is
//! deposited into when a request starts and asked last before each retry;
//! a throttle takes a token per failure and returns some per success; an
//! admission limit is asked before every attempt ([`AdmissionLimit::admit`]:
//! go, wait and ask again, or refuse, which ends the request on the client)
//! and hears every answer ([`AdmissionLimit::observed`]), an overloaded
//! backend's rejection being a throttle. Instants are a fixed `Instant`
//! plus the virtual time. The SRE throttle's draws come from the runtime's
//! thread generator, seeded from the run's seed.

use std::time::{Duration, Instant};

use backoff_runtime::Policy;
use backoff_runtime::limits::{
    AdaptiveRateLimiter, AdaptiveThrottle, Admission, AdmissionLimit, AdmissionRequest, AttemptEnd, RetryBudget,
    RetryThrottle,
};

use super::limit::{BudgetSetup, ThrottleSetup};
use super::queue::EventQueue;
use super::random::{Network, derive_seed};
use super::strategy::{Retrier, Strategy};

/// The limits compared, in the order of the tables and charts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pacing {
    /// Only the schedule.
    None,
    /// The default windowed budget on retries.
    Budget,
    /// gRPC's example throttle on retries.
    Throttle,
    /// AWS's adaptive rate limiter on every attempt.
    AdaptiveRate,
    /// SRE's adaptive throttling on every attempt, over two minutes.
    AdaptiveThrottle,
    /// The same over a 10 s window.
    AdaptiveThrottleShort,
}

impl Pacing {
    /// Every limit compared.
    pub(crate) const ALL: [Pacing; 6] = [
        Pacing::None,
        Pacing::Budget,
        Pacing::Throttle,
        Pacing::AdaptiveRate,
        Pacing::AdaptiveThrottle,
        Pacing::AdaptiveThrottleShort,
    ];

    /// A short name for tables and legends.
    pub(crate) fn label(self) -> &'static str {
        match self {
            Pacing::None => "no limit",
            Pacing::Budget => "budget",
            Pacing::Throttle => "throttle",
            Pacing::AdaptiveRate => "adaptive rate",
            Pacing::AdaptiveThrottle => "adaptive throttle (2 min)",
            Pacing::AdaptiveThrottleShort => "adaptive throttle (10 s)",
        }
    }
}

/// The limit of one run, shared by every request.
enum Live {
    None,
    Budget(Box<RetryBudget>),
    Throttle(RetryThrottle),
    Admission(Box<dyn AdmissionLimit>),
}

impl Live {
    fn new(pacing: Pacing) -> Self {
        match pacing {
            Pacing::None => Live::None,
            Pacing::Budget => Live::Budget(Box::new(BudgetSetup::DEFAULT.build())),
            Pacing::Throttle => Live::Throttle(ThrottleSetup::GRPC_EXAMPLE.build()),
            // Waits of up to 2 s, then the client sheds the request.
            Pacing::AdaptiveRate => {
                Live::Admission(Box::new(AdaptiveRateLimiter::new().max_wait(Duration::from_secs(2))))
            }
            Pacing::AdaptiveThrottle => Live::Admission(Box::new(AdaptiveThrottle::new())),
            Pacing::AdaptiveThrottleShort => {
                Live::Admission(Box::new(AdaptiveThrottle::new().window(Duration::from_secs(10))))
            }
        }
    }
}

/// The backend's timeline: how many calls per second it serves over time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Backend {
    /// Serves `normal` calls/s, but only `reduced` from `from` to `until`.
    Overloaded {
        normal: f64,
        reduced: f64,
        from: Duration,
        until: Duration,
    },
    /// Serves nothing from `from` to `until`, then `after` calls/s.
    Outage {
        normal: f64,
        after: f64,
        from: Duration,
        until: Duration,
    },
}

impl Backend {
    /// The capacity at `now`, in calls per second.
    pub(crate) fn capacity(self, now: Duration) -> f64 {
        match self {
            Backend::Overloaded {
                normal,
                reduced,
                from,
                until,
            } => {
                if now >= from && now < until {
                    reduced
                } else {
                    normal
                }
            }
            Backend::Outage {
                normal,
                after,
                from,
                until,
            } => {
                if now < from {
                    normal
                } else if now < until {
                    0.0
                } else {
                    after
                }
            }
        }
    }

    /// When the trouble starts and ends.
    pub(crate) fn trouble(self) -> (Duration, Duration) {
        match self {
            Backend::Overloaded { from, until, .. } | Backend::Outage { from, until, .. } => (from, until),
        }
    }

    /// A short name.
    pub(crate) fn label(self) -> &'static str {
        match self {
            Backend::Overloaded { .. } => "overload",
            Backend::Outage { .. } => "outage",
        }
    }
}

/// The parameters of one model.
#[derive(Clone, Copy, Debug)]
pub(crate) struct AdmissionSetup {
    /// The retry schedule (full jitter).
    pub(crate) policy: Policy,
    /// Requests started per second (evenly spread).
    pub(crate) rate: f64,
    /// When requests stop starting.
    pub(crate) horizon: Duration,
    /// The backend's timeline.
    pub(crate) backend: Backend,
    /// The most calls the backend serves at once after an idle spell.
    pub(crate) burst: f64,
    /// Mean and standard deviation of one network hop.
    pub(crate) hop: (Duration, Duration),
}

impl AdmissionSetup {
    const POLICY: Policy = Policy::new()
        .max_retries(6)
        .initial_backoff(Duration::from_millis(100))
        .max_backoff(Duration::from_secs(10));

    /// 300 requests/s; the backend serves 400/s, but 150/s from 10 s to
    /// 40 s; requests until 60 s.
    pub(crate) const OVERLOAD: AdmissionSetup = AdmissionSetup {
        policy: Self::POLICY,
        rate: 300.0,
        horizon: Duration::from_secs(60),
        backend: Backend::Overloaded {
            normal: 400.0,
            reduced: 150.0,
            from: Duration::from_secs(10),
            until: Duration::from_secs(40),
        },
        burst: 25.0,
        hop: (Duration::from_millis(10), Duration::from_millis(2)),
    };

    /// A cold start: 600 requests/s from the first instant against a backend
    /// that serves 300/s with room for 2 at once, 1 ms hops: the first
    /// throttle comes back about 9 ms after the start, before the limiter's
    /// first 0.5 s measurement interval has closed; requests until 10 s.
    pub(crate) const COLD_START: AdmissionSetup = AdmissionSetup {
        policy: Self::POLICY,
        rate: 600.0,
        horizon: Duration::from_secs(10),
        backend: Backend::Overloaded {
            normal: 300.0,
            reduced: 300.0,
            from: Duration::ZERO,
            until: Duration::from_secs(10),
        },
        burst: 2.0,
        hop: (Duration::from_millis(1), Duration::from_micros(200)),
    };

    /// The outage model's timeline: 200 requests/s, down from 5 s to 25 s,
    /// then 250 calls/s; requests until 60 s.
    pub(crate) const OUTAGE: AdmissionSetup = AdmissionSetup {
        policy: Self::POLICY,
        rate: 200.0,
        horizon: Duration::from_secs(60),
        backend: Backend::Outage {
            normal: 400.0,
            after: 250.0,
            from: Duration::from_secs(5),
            until: Duration::from_secs(25),
        },
        burst: 25.0,
        hop: (Duration::from_millis(10), Duration::from_millis(2)),
    };
}

/// What one run measured (per 1 s bucket where it says so).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct AdmissionRun {
    /// Requests started.
    pub(crate) requests: u64,
    /// Requests served (by any attempt).
    pub(crate) succeeded: u64,
    /// Calls that reached the backend.
    pub(crate) calls: u64,
    /// Attempts the client refused itself (admission or a retry limit).
    pub(crate) refused_locally: u64,
    /// Attempts that waited for admission, and the time they waited.
    pub(crate) waited: (u64, Duration),
    /// Calls reaching the backend in each second.
    pub(crate) offered_per_second: Vec<u32>,
    /// Requests served in each second (goodput).
    pub(crate) served_per_second: Vec<u32>,
    /// Requests served in each 100 ms.
    pub(crate) served_per_tenth: Vec<u32>,
    /// When the client heard its first throttle.
    pub(crate) first_throttle: Option<Duration>,
}

impl AdmissionRun {
    fn second(at: Duration, series: &mut Vec<u32>) -> &mut u32 {
        let second = usize::try_from(at.as_secs()).unwrap_or(usize::MAX);
        Self::slot(second, series)
    }

    fn tenth(at: Duration, series: &mut Vec<u32>) -> &mut u32 {
        let tenth = usize::try_from(at.as_millis() / 100).unwrap_or(usize::MAX);
        Self::slot(tenth, series)
    }

    fn slot(index: usize, series: &mut Vec<u32>) -> &mut u32 {
        if series.len() <= index {
            series.resize(index + 1, 0);
        }
        &mut series[index]
    }

    /// When goodput first reached `share` of `capacity` (calls/s), over
    /// the half second that starts then: `None` if never in the run.
    pub(crate) fn time_to(&self, share: f64, capacity: f64) -> Option<Duration> {
        let needed = share * capacity * 0.5;
        self.served_per_tenth
            .windows(5)
            .position(|half_second| f64::from(half_second.iter().sum::<u32>()) >= needed)
            .map(|tenth| Duration::from_millis(100 * tenth as u64))
    }
}

/// The backend: a token bucket refilled at the timeline's capacity.
struct Server {
    backend: Backend,
    burst: f64,
    tokens: f64,
    refilled_at: Duration,
}

impl Server {
    fn serve(&mut self, now: Duration) -> bool {
        let capacity = self.backend.capacity(now);
        let elapsed = now.saturating_sub(self.refilled_at).as_secs_f64();
        self.tokens = if capacity == 0.0 {
            0.0
        } else {
            (self.tokens + elapsed * capacity).min(self.burst)
        };
        self.refilled_at = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

/// Events, by where they happen.
#[derive(Clone, Copy, Debug)]
enum Event {
    /// The next request starts.
    Start,
    /// Request `request` asks to send its next attempt (number `attempt`),
    /// having waited `waited` for admission.
    Ask {
        request: usize,
        attempt: u32,
        waited: Duration,
    },
    /// An attempt reaches the backend.
    Arrive { request: usize },
    /// The backend's answer reaches the client.
    Reply { request: usize, served: bool },
}

/// Runs one model with one limit; the network, the jitter and the SRE
/// throttle's draws all derive from `seed`.
pub(crate) fn simulate(setup: &AdmissionSetup, pacing: Pacing, seed: u64) -> AdmissionRun {
    backoff_runtime::testing::seed_thread_rng(derive_seed(seed, u64::MAX));
    let origin = Instant::now();
    let at = |now: Duration| origin + now;
    let live = Live::new(pacing);
    let mut network = Network::new(setup.hop.0, setup.hop.1, derive_seed(seed, 0));
    let mut server = Server {
        backend: setup.backend,
        burst: setup.burst,
        tokens: setup.burst,
        refilled_at: Duration::ZERO,
    };
    let interval = Duration::from_secs_f64(1.0 / setup.rate);
    let mut requests: Vec<(Retrier, u32)> = Vec::new();
    let mut queue = EventQueue::new();
    queue.schedule_in(Duration::ZERO, Event::Start);
    let mut run = AdmissionRun::default();
    while let Some(event) = queue.pop() {
        let now = queue.now();
        match event {
            Event::Start => {
                let request = requests.len();
                requests.push((
                    Strategy::Backoff(backoff_runtime::Jitter::Full)
                        .retrier(&setup.policy, derive_seed(seed, request as u64 + 1)),
                    1,
                ));
                run.requests += 1;
                if let Live::Budget(budget) = &live {
                    budget.deposit(at(now));
                }
                queue.schedule_in(
                    Duration::ZERO,
                    Event::Ask {
                        request,
                        attempt: 1,
                        waited: Duration::ZERO,
                    },
                );
                if now + interval < setup.horizon {
                    queue.schedule_in(interval, Event::Start);
                }
            }
            Event::Ask {
                request,
                attempt,
                waited,
            } => {
                let answer = match &live {
                    Live::Admission(limit) => limit.admit(AdmissionRequest::new(at(now), attempt, waited)),
                    _ => Admission::Go,
                };
                match answer {
                    Admission::Go => {
                        if !waited.is_zero() {
                            run.waited.0 += 1;
                            run.waited.1 += waited;
                        }
                        requests[request].1 = attempt;
                        queue.schedule_in(network.hop(), Event::Arrive { request });
                    }
                    Admission::GoAfter(wait) => {
                        // Reserved: it goes at its instant without asking again.
                        run.waited.0 += 1;
                        run.waited.1 += waited + wait;
                        requests[request].1 = attempt;
                        queue.schedule_in(wait + network.hop(), Event::Arrive { request });
                    }
                    Admission::Wait(wait) => queue.schedule_in(
                        wait,
                        Event::Ask {
                            request,
                            attempt,
                            waited: waited + wait,
                        },
                    ),
                    Admission::Refuse | Admission::Shut(_) => run.refused_locally += 1,
                }
            }
            Event::Arrive { request } => {
                let served = server.serve(now);
                run.calls += 1;
                *AdmissionRun::second(now, &mut run.offered_per_second) += 1;
                queue.schedule_in(network.hop(), Event::Reply { request, served });
            }
            Event::Reply { request, served } => {
                if let Live::Admission(limit) = &live {
                    // An overloaded backend's rejection is a throttle.
                    limit.observed(AttemptEnd::new(at(now), !served));
                }
                if !served && run.first_throttle.is_none() {
                    run.first_throttle = Some(now);
                }
                if served {
                    if let Live::Throttle(throttle) = &live {
                        throttle.record_success();
                    }
                    run.succeeded += 1;
                    *AdmissionRun::second(now, &mut run.served_per_second) += 1;
                    *AdmissionRun::tenth(now, &mut run.served_per_tenth) += 1;
                    continue;
                }
                if let Live::Throttle(throttle) = &live
                    && !throttle.record_failure()
                {
                    run.refused_locally += 1;
                    continue;
                }
                let (retrier, attempt) = &mut requests[request];
                let attempt = *attempt;
                match retrier.next_wait() {
                    None => {}
                    Some(_) if matches!(&live, Live::Budget(budget) if !budget.try_withdraw(at(now))) => {
                        run.refused_locally += 1;
                    }
                    Some(wait) => queue.schedule_in(
                        wait,
                        Event::Ask {
                            request,
                            attempt: attempt + 1,
                            waited: Duration::ZERO,
                        },
                    ),
                }
            }
        }
    }
    run
}

/// The means of a model's runs with one limit.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct AdmissionSummary {
    pub(crate) pacing: Pacing,
    /// Calls per second at the backend during the trouble.
    pub(crate) load_in_trouble: f64,
    /// Requests served per second during the trouble.
    pub(crate) goodput_in_trouble: f64,
    /// Share of all requests served.
    pub(crate) served_share: f64,
    /// Attempts refused on the client, per run.
    pub(crate) refused_locally: f64,
    /// Attempts that waited for admission, per run, and their mean wait.
    pub(crate) waits: f64,
    pub(crate) mean_wait: Duration,
    /// Seconds after the trouble ends until goodput is back to 95% of the
    /// request rate (`None`: not within the run).
    pub(crate) recovery: Option<f64>,
    /// Mean calls reaching the backend in each second.
    pub(crate) offered_per_second: Vec<f64>,
}

/// Runs `setup` `runs` times (seeds derived from `seed`, the same for every
/// limit) with each limit.
pub(crate) fn sweep(setup: &AdmissionSetup, runs: usize, seed: u64) -> Vec<AdmissionSummary> {
    let (from, until) = setup.backend.trouble();
    let trouble_seconds = (until - from).as_secs_f64();
    Pacing::ALL
        .iter()
        .map(|&pacing| {
            let results: Vec<AdmissionRun> = (0..runs)
                .map(|run| simulate(setup, pacing, derive_seed(seed, run as u64)))
                .collect();
            let n = runs.max(1) as f64;
            let in_trouble = |series: &[u32]| -> f64 {
                let range = usize::try_from(from.as_secs()).unwrap_or(0)..usize::try_from(until.as_secs()).unwrap_or(0);
                series
                    .get(range)
                    .map_or(0, |s| s.iter().map(|&x| u64::from(x)).sum::<u64>()) as f64
            };
            let seconds = results.iter().map(|r| r.offered_per_second.len()).max().unwrap_or(0);
            let mean_series = |series: fn(&AdmissionRun) -> &Vec<u32>| -> Vec<f64> {
                (0..seconds)
                    .map(|s| {
                        results
                            .iter()
                            .map(|r| f64::from(*series(r).get(s).unwrap_or(&0)))
                            .sum::<f64>()
                            / n
                    })
                    .collect()
            };
            let served = mean_series(|r| &r.served_per_second);
            let start = usize::try_from(until.as_secs()).unwrap_or(0);
            let end = usize::try_from(setup.horizon.as_secs()).unwrap_or(0).min(served.len());
            let recovery = (start..end)
                .find(|&s| served[s] >= 0.95 * setup.rate)
                .map(|s| (s - start) as f64);
            let waits: u64 = results.iter().map(|r| r.waited.0).sum();
            let waited: Duration = results.iter().map(|r| r.waited.1).sum();
            AdmissionSummary {
                pacing,
                load_in_trouble: results.iter().map(|r| in_trouble(&r.offered_per_second)).sum::<f64>()
                    / n
                    / trouble_seconds,
                goodput_in_trouble: results.iter().map(|r| in_trouble(&r.served_per_second)).sum::<f64>()
                    / n
                    / trouble_seconds,
                served_share: results
                    .iter()
                    .map(|r| r.succeeded as f64 / r.requests.max(1) as f64)
                    .sum::<f64>()
                    / n,
                refused_locally: results.iter().map(|r| r.refused_locally as f64).sum::<f64>() / n,
                waits: waits as f64 / n,
                mean_wait: if waits == 0 {
                    Duration::ZERO
                } else {
                    waited / u32::try_from(waits).unwrap_or(u32::MAX)
                },
                recovery,
                offered_per_second: mean_series(|r| &r.offered_per_second),
            }
        })
        .collect()
}

/// The cold start's figures for the adaptive rate limiter, over `runs`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ColdStart {
    /// Mean time of the first throttle the client heard.
    pub(crate) first_throttle: Duration,
    /// Mean and longest time until goodput reached 90% of the backend
    /// (`None` when a run never did).
    pub(crate) to_90_percent: Option<(Duration, Duration)>,
}

/// Runs the cold start `runs` times with the adaptive rate limiter.
pub(crate) fn cold_start(setup: &AdmissionSetup, runs: usize, seed: u64) -> ColdStart {
    let capacity = setup.backend.capacity(Duration::ZERO);
    let results: Vec<AdmissionRun> = (0..runs.max(1))
        .map(|run| simulate(setup, Pacing::AdaptiveRate, derive_seed(seed, run as u64)))
        .collect();
    let n = u32::try_from(results.len()).unwrap_or(u32::MAX);
    let first_throttle = results.iter().filter_map(|r| r.first_throttle).sum::<Duration>() / n;
    let reached: Option<Vec<Duration>> = results.iter().map(|r| r.time_to(0.9, capacity)).collect();
    ColdStart {
        first_throttle,
        to_90_percent: reached.map(|times| {
            let longest = times.iter().copied().max().unwrap_or_default();
            (times.iter().sum::<Duration>() / n, longest)
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn short(setup: AdmissionSetup) -> AdmissionSetup {
        AdmissionSetup {
            horizon: Duration::from_secs(20),
            backend: Backend::Overloaded {
                normal: 400.0,
                reduced: 150.0,
                from: Duration::from_secs(2),
                until: Duration::from_secs(12),
            },
            ..setup
        }
    }

    #[test]
    fn a_healthy_backend_is_never_paced() {
        let setup = AdmissionSetup {
            horizon: Duration::from_secs(5),
            backend: Backend::Overloaded {
                normal: 400.0,
                reduced: 400.0,
                from: Duration::ZERO,
                until: Duration::ZERO,
            },
            ..AdmissionSetup::OVERLOAD
        };
        for pacing in Pacing::ALL {
            let run = simulate(&setup, pacing, 1);
            assert_eq!(run.succeeded, run.requests, "{pacing:?}");
            assert_eq!((run.refused_locally, run.waited.0), (0, 0), "{pacing:?}");
        }
    }

    #[test]
    fn the_adaptive_limiters_shed_the_overload_on_the_client() {
        let setup = short(AdmissionSetup::OVERLOAD);
        let none = simulate(&setup, Pacing::None, 2);
        for pacing in [
            Pacing::AdaptiveRate,
            Pacing::AdaptiveThrottle,
            Pacing::AdaptiveThrottleShort,
        ] {
            let run = simulate(&setup, pacing, 2);
            assert!(
                run.calls * 10 < none.calls * 7,
                "{pacing:?}: {} calls, {} without",
                run.calls,
                none.calls
            );
            assert!(run.refused_locally > 0, "{pacing:?}");
        }
    }

    #[test]
    fn after_an_early_throttle_the_rate_limiter_reaches_90_percent_of_the_backend_within_2_s() {
        // AWS's algorithm measures 0 before its first interval closes: the
        // same runs reached 90% after 10.2 s with it.
        let cold = cold_start(&AdmissionSetup::COLD_START, 10, 2015);
        assert!(cold.first_throttle < Duration::from_millis(20), "{cold:?}");
        let (mean, longest) = cold.to_90_percent.expect("every run reaches 90%");
        assert!(mean <= longest && longest <= Duration::from_secs(2), "{cold:?}");
    }

    #[test]
    fn the_same_seed_gives_the_same_run() {
        let setup = short(AdmissionSetup::OVERLOAD);
        for pacing in Pacing::ALL {
            assert_eq!(simulate(&setup, pacing, 9), simulate(&setup, pacing, 9), "{pacing:?}");
        }
    }
}
