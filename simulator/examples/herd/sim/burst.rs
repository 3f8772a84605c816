//! The admission model's closed loop: a burst of callers that each send,
//! wait for the answer and send again. The open models
//! of [`admission`](super::admission) start requests at a fixed rate
//! whatever the answers; here the rate is what the callers' loops and the
//! limiter make of the answers, as in `tests/behaviour/adaptive_burst.rs`
//! and `examples/admission_burst.rs`.
//!
//! Two workloads against a backend of 300 calls/s (a token bucket holding
//! 300, full at the start) that answers "slow down" (a 429) above it, over
//! a fixed round trip (one hop each way, the server answering at once):
//!
//! - the burst: 1,000 tasks each call one `#[retry(admission = LIMITER,
//!   slow_down_if = is_slow_down, initial_backoff = "100ms")]` function in
//!   a loop for 4 s, all starting at once; a call the limiter refuses ends
//!   (`Refused`), and its task pauses 100 ms before the next;
//! - palantir's spike (dialogue #635): 1,600 requests at once, one call
//!   each, `#[retry(max_retries = 5, admission = LIMITER, slow_down_if =
//!   is_slow_down)]`.
//!
//! Each with an [`AdaptiveRateLimiter`] (its defaults, as the tests name
//! it) or with plain backoff. Every decision is the runtime's, taken as the
//! loop takes it, on `Instant`s made as a fixed instant plus the virtual
//! time: the limiter is asked before every attempt
//! ([`AdmissionLimit::admit`]: go, wait and ask again with the time waited
//! so far, or refuse) and hears every answer ([`AdmissionLimit::observed`],
//! a throttle flagged as "slow down"); the waits between attempts are the
//! runtime's schedule ([`Policy::schedule_seeded`], additive jitter, the
//! attribute's default), one generator per call. No rate, cut or backoff
//! formula is written here.
//!
//! The runtime's limiter cuts its rate at most once per round trip. The
//! cut per throttled answer it replaced (AWS's algorithm, `2ffc884`) is not
//! in the runtime any more, and writing it here would test a copy; its
//! figures are the ones recorded in BENCHMARKS.md ("Goodput under a burst").

use std::time::{Duration, Instant};

use backoff_runtime::limits::{AdaptiveRateLimiter, Admission, AdmissionLimit, AdmissionRequest, AttemptEnd};
use backoff_runtime::{Jitter, Policy};

use super::queue::EventQueue;
use super::random::derive_seed;
use super::strategy::{Retrier, Strategy};

/// What the callers do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Workload {
    /// Every task calls in a loop until `run` ends.
    Loop {
        /// How long the tasks call.
        run: Duration,
        /// A task's pause after a call its limiter refused.
        after_refusal: Duration,
    },
    /// Every task makes one call.
    Spike,
}

/// The parameters of one closed-loop model.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BurstSetup {
    /// The tasks, all starting at the first instant.
    pub(crate) tasks: usize,
    /// What each task does.
    pub(crate) workload: Workload,
    /// The retry schedule of each call.
    pub(crate) policy: Policy,
    /// What the backend serves, in calls per second.
    pub(crate) capacity: f64,
    /// The most calls it serves at once, full at the start.
    pub(crate) burst: f64,
    /// One hop, each way: the round trip is twice this.
    pub(crate) hop: Duration,
}

impl BurstSetup {
    /// 1 ms each way: a 2 ms round trip, the paused-clock test's.
    const HOP: Duration = Duration::from_millis(1);

    /// 1,000 tasks calling in a loop for 4 s (`initial_backoff = "100ms"`,
    /// the attribute's other defaults: 5 retries, additive jitter).
    pub(crate) const BURST: BurstSetup = BurstSetup {
        tasks: 1000,
        workload: Workload::Loop {
            run: Duration::from_secs(4),
            after_refusal: Duration::from_millis(100),
        },
        policy: Policy::new().initial_backoff(Duration::from_millis(100)),
        capacity: 300.0,
        burst: 300.0,
        hop: Self::HOP,
    };

    /// palantir's spike: 1,600 requests at once, 5 retries from 1 s (the
    /// attribute's defaults with `max_retries = 5`).
    pub(crate) const SPIKE: BurstSetup = BurstSetup {
        tasks: 1600,
        workload: Workload::Spike,
        policy: Policy::new().max_retries(5),
        capacity: 300.0,
        burst: 300.0,
        hop: Self::HOP,
    };

    /// The last 2 s of a loop's run (the whole run for a spike): the
    /// window the burst's figures are measured over.
    pub(crate) fn window(&self) -> (Duration, Duration) {
        match self.workload {
            Workload::Loop { run, .. } => (run.saturating_sub(Duration::from_secs(2)), run),
            Workload::Spike => (Duration::ZERO, Duration::MAX),
        }
    }
}

/// Whether the calls go through a limiter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pacer {
    /// `admission = LIMITER`: an `AdaptiveRateLimiter` with its defaults.
    AdaptiveRate,
    /// Plain backoff: no admission.
    Plain,
}

impl Pacer {
    /// Both, in the order of the tables.
    pub(crate) const ALL: [Pacer; 2] = [Pacer::AdaptiveRate, Pacer::Plain];

    /// A short name for tables.
    pub(crate) fn label(self) -> &'static str {
        match self {
            Pacer::AdaptiveRate => "adaptive rate",
            Pacer::Plain => "plain backoff",
        }
    }
}

/// What one run measured.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct BurstRun {
    /// Calls started (a task's loop calls many).
    pub(crate) calls: u64,
    /// Calls that ended in success.
    pub(crate) succeeded: u64,
    /// Calls the limiter refused (an attempt refused ends its call).
    pub(crate) refused: u64,
    /// Calls that used up their retries.
    pub(crate) gave_up: u64,
    /// Attempts the limiter admitted (every attempt with plain backoff),
    /// attempts that reached the backend and attempts it served, in the
    /// measuring window.
    pub(crate) admitted_in_window: u64,
    pub(crate) backend_in_window: u64,
    pub(crate) served_in_window: u64,
    /// Every attempt the backend saw.
    pub(crate) attempts: u64,
    /// The limiter's fill rate at the end (0 with plain backoff).
    pub(crate) fill_rate: f64,
}

/// Events, by where they happen.
#[derive(Clone, Copy, Debug)]
enum Event {
    /// Task `task` starts a call.
    Call { task: usize },
    /// Task `task` asks to send attempt `attempt` of its call, having
    /// waited `waited` for admission.
    Ask {
        task: usize,
        attempt: u32,
        waited: Duration,
    },
    /// Task `task`'s attempt reaches the backend.
    Arrive { task: usize },
    /// The backend's answer reaches task `task`.
    Reply { task: usize, served: bool },
}

/// The backend: a token bucket of `capacity` calls/s holding `burst`, full
/// at the start.
struct Backend {
    capacity: f64,
    burst: f64,
    tokens: f64,
    refilled_at: Duration,
}

impl Backend {
    fn serve(&mut self, now: Duration) -> bool {
        let elapsed = now.saturating_sub(self.refilled_at).as_secs_f64();
        self.tokens = (self.tokens + elapsed * self.capacity).min(self.burst);
        self.refilled_at = now;
        let served = self.tokens >= 1.0;
        if served {
            self.tokens -= 1.0;
        }
        served
    }
}

/// Runs one closed-loop model; the schedules' jitter derives from `seed`.
pub(crate) fn simulate(setup: &BurstSetup, pacer: Pacer, seed: u64) -> BurstRun {
    let origin = Instant::now();
    let at = |now: Duration| origin + now;
    let limiter = match pacer {
        Pacer::AdaptiveRate => Some(AdaptiveRateLimiter::new()),
        Pacer::Plain => None,
    };
    let mut backend = Backend {
        capacity: setup.capacity,
        burst: setup.burst,
        tokens: setup.burst,
        refilled_at: Duration::ZERO,
    };
    let (from, until) = setup.window();
    let in_window = |now: Duration| now >= from && now < until;
    let (run_end, after_refusal) = match setup.workload {
        Workload::Loop { run, after_refusal } => (Some(run), after_refusal),
        Workload::Spike => (None, Duration::ZERO),
    };
    // Each task's call: its schedule and the attempt it is on.
    let mut calls: Vec<(Retrier, u32)> = Vec::with_capacity(setup.tasks);
    let mut run = BurstRun::default();
    let mut queue = EventQueue::new();
    for task in 0..setup.tasks {
        calls.push((Strategy::Immediate.retrier(&setup.policy, 0), 1));
        queue.schedule_in(Duration::ZERO, Event::Call { task });
    }
    // A task's call ended at `now`: the next starts after `pause`, while
    // the run lasts.
    let next_call = |queue: &mut EventQueue<Event>, task: usize, pause: Duration| {
        if let Some(end) = run_end
            && queue.now() + pause < end
        {
            queue.schedule_in(pause, Event::Call { task });
        }
    };
    while let Some(event) = queue.pop() {
        let now = queue.now();
        if run_end.is_some_and(|end| now >= end) {
            // The tasks are aborted at the end of the run.
            break;
        }
        match event {
            Event::Call { task } => {
                run.calls += 1;
                let retrier = Strategy::Backoff(Jitter::Additive).retrier(&setup.policy, derive_seed(seed, run.calls));
                calls[task] = (retrier, 1);
                queue.schedule_in(
                    Duration::ZERO,
                    Event::Ask {
                        task,
                        attempt: 1,
                        waited: Duration::ZERO,
                    },
                );
            }
            Event::Ask { task, attempt, waited } => {
                let answer = limiter.as_ref().map_or(Admission::Go, |limiter| {
                    limiter.admit(AdmissionRequest::new(at(now), attempt, waited))
                });
                match answer {
                    Admission::Go => {
                        calls[task].1 = attempt;
                        run.admitted_in_window += u64::from(in_window(now));
                        queue.schedule_in(setup.hop, Event::Arrive { task });
                    }
                    Admission::GoAfter(wait) => {
                        // Reserved: it goes at its instant without asking again.
                        calls[task].1 = attempt;
                        run.admitted_in_window += u64::from(in_window(now + wait));
                        queue.schedule_in(wait + setup.hop, Event::Arrive { task });
                    }
                    Admission::Wait(wait) => queue.schedule_in(
                        wait,
                        Event::Ask {
                            task,
                            attempt,
                            waited: waited + wait,
                        },
                    ),
                    Admission::Refuse | Admission::Shut(_) => {
                        run.refused += 1;
                        next_call(&mut queue, task, after_refusal);
                    }
                }
            }
            Event::Arrive { task } => {
                let served = backend.serve(now);
                run.attempts += 1;
                if in_window(now) {
                    run.backend_in_window += 1;
                    run.served_in_window += u64::from(served);
                }
                queue.schedule_in(setup.hop, Event::Reply { task, served });
            }
            Event::Reply { task, served } => {
                if let Some(limiter) = &limiter {
                    // `slow_down_if`: the backend's 429 is a throttle.
                    limiter.observed(AttemptEnd::new(at(now), !served));
                }
                if served {
                    run.succeeded += 1;
                    next_call(&mut queue, task, Duration::ZERO);
                    continue;
                }
                let (retrier, attempt) = &mut calls[task];
                let attempt = *attempt;
                match retrier.next_wait() {
                    Some(wait) => queue.schedule_in(
                        wait,
                        Event::Ask {
                            task,
                            attempt: attempt + 1,
                            waited: Duration::ZERO,
                        },
                    ),
                    None => {
                        run.gave_up += 1;
                        next_call(&mut queue, task, Duration::ZERO);
                    }
                }
            }
        }
    }
    run.fill_rate = limiter.as_ref().map_or(0.0, AdaptiveRateLimiter::fill_rate);
    run
}

/// The figures of `runs` runs of one model with one pacer.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct BurstSummary {
    pub(crate) pacer: Pacer,
    pub(crate) runs: usize,
    /// Attempts admitted per second in the window, as a share of capacity:
    /// mean, lowest, highest.
    pub(crate) admitted: (f64, f64, f64),
    /// Attempts reaching the backend per second in the window, as a
    /// multiple of capacity: mean, lowest, highest.
    pub(crate) load: (f64, f64, f64),
    /// Attempts served per second in the window, as a share of capacity:
    /// the mean.
    pub(crate) served: f64,
    /// Calls that succeeded, of the calls started: the fewest over the runs.
    pub(crate) succeeded: (u64, u64),
    /// Attempts the backend saw: mean, lowest, highest.
    pub(crate) attempts: (f64, u64, u64),
}

/// The mean, lowest and highest of `values`.
fn spread(values: &[f64]) -> (f64, f64, f64) {
    let n = values.len().max(1) as f64;
    let mean = values.iter().sum::<f64>() / n;
    let low = values.iter().copied().fold(f64::INFINITY, f64::min);
    let high = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (mean, low, high)
}

/// Runs `setup` `runs` times with `pacer`, seeds derived from `seed` (the
/// same for both pacers).
pub(crate) fn summarize(setup: &BurstSetup, pacer: Pacer, runs: usize, seed: u64) -> BurstSummary {
    let results: Vec<BurstRun> = (0..runs.max(1))
        .map(|run| simulate(setup, pacer, derive_seed(seed, run as u64)))
        .collect();
    let seconds = match setup.workload {
        Workload::Loop { .. } => {
            let (from, until) = setup.window();
            (until - from).as_secs_f64()
        }
        Workload::Spike => 1.0,
    };
    let per_capacity = |count: u64| count as f64 / seconds / setup.capacity;
    let of = |field: fn(&BurstRun) -> u64| -> Vec<f64> { results.iter().map(|r| per_capacity(field(r))).collect() };
    let least_succeeded = results
        .iter()
        .min_by_key(|r| r.succeeded)
        .map_or((0, 0), |r| (r.succeeded, r.calls));
    let attempts: Vec<u64> = results.iter().map(|r| r.attempts).collect();
    BurstSummary {
        pacer,
        runs: results.len(),
        admitted: spread(&of(|r| r.admitted_in_window)),
        load: spread(&of(|r| r.backend_in_window)),
        served: spread(&of(|r| r.served_in_window)).0,
        succeeded: least_succeeded,
        attempts: (
            attempts.iter().sum::<u64>() as f64 / results.len() as f64,
            attempts.iter().copied().min().unwrap_or(0),
            attempts.iter().copied().max().unwrap_or(0),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_backend_with_room_for_every_task_never_throttles() {
        let setup = BurstSetup {
            tasks: 100,
            ..BurstSetup::SPIKE
        };
        for pacer in Pacer::ALL {
            let run = simulate(&setup, pacer, 1);
            assert_eq!((run.succeeded, run.attempts, run.refused), (100, 100, 0), "{pacer:?}");
        }
    }

    #[test]
    fn the_same_seed_gives_the_same_run() {
        let setup = BurstSetup {
            tasks: 400,
            ..BurstSetup::SPIKE
        };
        for pacer in Pacer::ALL {
            assert_eq!(simulate(&setup, pacer, 9), simulate(&setup, pacer, 9), "{pacer:?}");
        }
    }
}
