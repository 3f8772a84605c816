//! The retry-storm simulator of `examples/herd` on a reduced, deterministic
//! run: the qualitative results its full run shows must hold.
//!
//! The simulator's modules are included from the example (not copied), so
//! this test checks the very code that produces `docs/jitter-and-budgets.md`.

// The example uses the parts of the simulator this test does not.
#[allow(dead_code)]
#[path = "../examples/herd/sim/mod.rs"]
mod sim;

// Included for their unit tests: the example's argument parsing and its
// tables.
#[allow(dead_code)]
#[path = "../examples/herd/cli.rs"]
mod cli;
#[allow(dead_code)]
#[path = "../examples/herd/table.rs"]
mod table;

use std::time::Duration;

use backoff_runtime::Jitter;
use sim::burst::{BurstSetup, Pacer};
use sim::contention::ContentionSetup;
use sim::layers::{LayerRule, LayersSetup};
use sim::limit::{BudgetSetup, RetryLimit};
use sim::outage::OutageSetup;
use sim::stats::{ContentionSummary, LayersSummary};
use sim::strategy::Strategy;
use sim::sweep::{self, ContentionPoint, LayersResult, OutageResult};

const SEED: u64 = 2015;
const CLIENTS: usize = 100;
const RUNS: usize = 10;

/// The contention model at N = 100, 10 runs per strategy.
fn contention() -> Vec<ContentionPoint> {
    sweep::contention_sweep(&ContentionSetup::BROOKER, &Strategy::ALL, &[CLIENTS], RUNS, SEED)
}

fn summary_of(points: &[ContentionPoint], strategy: Strategy) -> ContentionSummary {
    let point = points.iter().find(|p| p.strategy == strategy);
    point
        .map(|p| p.summary)
        .unwrap_or_else(|| panic!("{strategy:?} was simulated"))
}

#[test]
fn full_jitter_needs_less_than_half_the_calls_of_no_jitter() {
    let points = contention();
    for point in &points {
        assert_eq!(point.summary.gave_up, 0, "{:?} gave up", point.strategy);
    }
    let none = summary_of(&points, Strategy::Backoff(Jitter::None));
    let full = summary_of(&points, Strategy::Backoff(Jitter::Full));
    assert!(
        full.writes < none.writes / 2.0,
        "full jitter {} calls, no jitter {}",
        full.writes,
        none.writes
    );
}

#[test]
fn no_jitter_is_the_worst_backoff() {
    let points = contention();
    let none = summary_of(&points, Strategy::Backoff(Jitter::None));
    for point in points.iter().filter(|p| p.strategy != Strategy::Backoff(Jitter::None)) {
        if matches!(point.strategy, Strategy::Backoff(_)) {
            assert!(point.summary.writes < none.writes, "{:?} vs no jitter", point.strategy);
        }
        assert!(
            point.summary.completion_ms < none.completion_ms,
            "{:?} finishes after no jitter",
            point.strategy
        );
    }
    // The default additive jitter (one initial_backoff) is close to none
    // once the base has grown: the spread jitters finish many times sooner.
    let additive = summary_of(&points, Strategy::Backoff(Jitter::Additive));
    let full = summary_of(&points, Strategy::Backoff(Jitter::Full));
    assert!(full.completion_ms * 5.0 < additive.completion_ms);
    assert!(full.writes * 1.5 < additive.writes);
}

#[test]
fn grpc_jitter_sits_between_additive_and_full() {
    // A 20% spread either side keeps the waves apart once the base has
    // grown (additive's fixed 10 ms does not), but less than full jitter's.
    let points = contention();
    let additive = summary_of(&points, Strategy::Backoff(Jitter::Additive));
    let grpc = summary_of(&points, Strategy::Backoff(Jitter::Grpc));
    let full = summary_of(&points, Strategy::Backoff(Jitter::Full));
    assert_eq!(grpc.gave_up, 0);
    assert!(
        grpc.writes * 1.5 < additive.writes,
        "grpc {} vs additive {}",
        grpc.writes,
        additive.writes
    );
    assert!(grpc.completion_ms * 3.0 < additive.completion_ms);
    assert!(
        grpc.completion_ms > full.completion_ms * 1.5,
        "grpc {} vs full {}",
        grpc.completion_ms,
        full.completion_ms
    );
}

/// The outage model, one run per configuration.
fn outage() -> Vec<OutageResult> {
    sweep::outage_sweep(&OutageSetup::DEFAULT, &Strategy::ALL, &RetryLimit::ALL, 1, SEED)
}

#[test]
fn a_budget_or_a_throttle_cuts_the_retry_storm() {
    let results = outage();
    assert_eq!(results.len(), RetryLimit::ALL.len() * Strategy::ALL.len());
    for configs in results.chunks(RetryLimit::ALL.len()) {
        let [without, budget, throttle] = configs else {
            unreachable!("results come in threes")
        };
        assert_eq!(
            [without.limit, budget.limit, throttle.limit].map(RetryLimit::label),
            ["no limit", "budget", "throttle"]
        );
        let a = &without.summary;
        assert!(a.amplification > 2.5, "{}: {}", without.label(), a.amplification);
        assert!(a.refused == 0.0, "{}", without.label());
        for limited in [budget, throttle] {
            let b = &limited.summary;
            assert!(b.amplification < 1.5, "{}: {}", limited.label(), b.amplification);
            assert!(b.peak_offered < a.peak_offered, "{}", limited.label());
            let (drain_a, drain_b) = (
                a.drain.unwrap_or(OutageSetup::DEFAULT.horizon),
                b.drain.unwrap_or_default(),
            );
            assert!(drain_b <= drain_a, "{}", limited.label());
            assert!(b.refused > 0.0, "{}", limited.label());
        }
    }
}

#[test]
fn in_a_full_outage_the_throttle_stops_retrying_and_the_budget_keeps_its_floor() {
    let setup = OutageSetup::DEFAULT;
    let results = sweep::outage_sweep(
        &setup,
        &[Strategy::Backoff(Jitter::Full)],
        &[RetryLimit::Budget(BudgetSetup::DEFAULT), RetryLimit::ALL[2]],
        1,
        SEED,
    );
    let [budget, throttle] = results.as_slice() else {
        unreachable!("two configurations")
    };
    let first_attempts = setup.base_rate();
    // The throttle allows the retries of the first four failures of the
    // outage, then none: the server sees only first attempts.
    let throttled = &throttle.summary;
    assert!(
        throttled.retries_during_outage * setup.outage.as_secs_f64() <= 4.0,
        "{throttled:?}"
    );
    assert!(
        (throttled.offered_during_outage - first_attempts).abs() < 1.0,
        "{throttled:?}"
    );
    // The budget keeps retrying at least its floor (10 per second) all
    // through the outage.
    let budgeted = &budget.summary;
    let floor = f64::from(BudgetSetup::DEFAULT.min_per_second);
    assert!(budgeted.retries_during_outage >= floor, "{budgeted:?}");
    assert!(budgeted.offered_during_outage >= first_attempts + floor, "{budgeted:?}");
    // Both serve every request made while the server was up.
    for summary in [throttled, budgeted] {
        assert!(summary.served_share > 0.6, "{summary:?}");
    }
}

/// The layered outage for every rule: 20 clients for 3 s, one run.
fn layers() -> Vec<LayersResult> {
    let setup = LayersSetup {
        clients: 20,
        horizon: Duration::from_secs(3),
        ..LayersSetup::DEFAULT
    };
    sweep::layers_sweep(&setup, &LayerRule::ALL, 1, SEED)
}

fn layer_summary(results: &[LayersResult], rule: LayerRule) -> &LayersSummary {
    let result = results.iter().find(|r| r.rule == rule);
    &result.unwrap_or_else(|| panic!("{rule:?} was simulated")).summary
}

#[test]
fn retries_multiply_across_layers_unless_one_layer_retries() {
    let results = layers();
    let every = layer_summary(&results, LayerRule::EveryLayer);
    assert_eq!(every.calls_per_request, [4.0, 16.0, 64.0]);
    assert_eq!(every.most_bottom_calls, 64);
    let one = layer_summary(&results, LayerRule::OneLayer);
    assert_eq!(one.calls_per_request, [1.0, 1.0, 4.0], "A and B stop at once");
    assert!(one.most_bottom_calls <= 4);
}

#[test]
fn a_limit_per_layer_bounds_the_multiplication() {
    let results = layers();
    let every = layer_summary(&results, LayerRule::EveryLayer);
    let budget = layer_summary(&results, LayerRule::ALL[2]);
    let throttle = layer_summary(&results, LayerRule::ALL[3]);
    // The budgets still allow their floor of retries at every layer; the
    // throttles stop after their first failures, so C sees about one call
    // per request.
    assert!(
        budget.calls_per_request[2] < every.calls_per_request[2] / 4.0,
        "{budget:?}"
    );
    assert!(budget.calls_per_request[2] > 1.5, "{budget:?}");
    assert!(throttle.calls_per_request[2] < 1.5, "{throttle:?}");
    assert!(
        throttle.calls_per_request[2] < budget.calls_per_request[2],
        "{throttle:?}"
    );
}

/// Goodput under a burst, the simulator's row: 1,000
/// tasks in a closed loop through the runtime's `AdaptiveRateLimiter`, 3
/// runs. With the cut per throttled answer it replaced, the paused-clock
/// test admitted 5.5 calls/s over the last 2 s (1.8% of capacity).
#[test]
fn a_thousand_tasks_in_a_loop_get_at_least_80_percent_of_the_backend_and_load_it_at_most_125_percent() {
    let setup = BurstSetup::BURST;
    let paced = sim::burst::summarize(&setup, Pacer::AdaptiveRate, 3, SEED);
    let (mean, lowest, _) = paced.admitted;
    assert!(lowest >= 0.8, "{paced:?}");
    assert!(paced.load.2 <= 1.25, "{paced:?}");
    assert!(paced.served >= 0.8, "{paced:?}");
    // 98% of capacity in the default run; the backend at 0.98x.
    assert!((0.95..=1.02).contains(&mean), "{paced:?}");
    // Plain backoff serves as much and loads the backend 8 times over.
    let plain = sim::burst::summarize(&setup, Pacer::Plain, 1, SEED);
    assert!(plain.load.0 > 4.0 && plain.served >= 0.95, "{plain:?}");
}

/// palantir's spike, the simulator's row: 1,600 requests at once, 5 retries.
/// With the limiter every request succeeds with at most 2 attempts each
/// (the cut per throttled answer let 305 succeed); plain backoff needs more.
#[test]
fn in_palantirs_spike_every_request_succeeds_with_at_most_two_attempts_each() {
    let setup = BurstSetup::SPIKE;
    let bound = 2 * setup.tasks as u64;
    let paced = sim::burst::summarize(&setup, Pacer::AdaptiveRate, 3, SEED);
    assert_eq!(paced.succeeded, (1600, 1600), "{paced:?}");
    assert!(paced.attempts.2 <= bound, "{paced:?}");
    let plain = sim::burst::summarize(&setup, Pacer::Plain, 3, SEED);
    assert_eq!(plain.succeeded, (1600, 1600), "{plain:?}");
    assert!(plain.attempts.1 > bound, "{plain:?}");
}

#[test]
fn runs_are_deterministic() {
    let setup = ContentionSetup::BROOKER;
    let strategies = [
        Strategy::Backoff(Jitter::Full),
        Strategy::Backoff(Jitter::Decorrelated),
        Strategy::Backoff(Jitter::Grpc),
    ];
    let a = sweep::contention_sweep(&setup, &strategies, &[30], 3, 7);
    let b = sweep::contention_sweep(&setup, &strategies, &[30], 3, 7);
    let c = sweep::contention_sweep(&setup, &strategies, &[30], 3, 8);
    let summaries = |points: &[ContentionPoint]| points.iter().map(|p| p.summary).collect::<Vec<_>>();
    assert_eq!(summaries(&a), summaries(&b));
    assert_ne!(summaries(&a), summaries(&c));
}
