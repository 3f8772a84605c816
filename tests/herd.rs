//! The retry-storm simulator of `examples/herd` on a reduced, deterministic
//! run: the qualitative results its full run shows must hold.
//!
//! The simulator's modules are included from the example (not copied), so
//! this test checks the very code that produces `docs/jitter-and-budgets.md`.

// The example uses the parts of the simulator this test does not.
#[allow(dead_code)]
#[path = "../examples/herd/sim/mod.rs"]
mod sim;

// Included for its unit tests: the example's argument parsing.
#[allow(dead_code)]
#[path = "../examples/herd/cli.rs"]
mod cli;

use backoff_runtime::Jitter;
use sim::contention::ContentionSetup;
use sim::outage::{BudgetSetup, OutageSetup};
use sim::stats::ContentionSummary;
use sim::strategy::Strategy;
use sim::sweep::{self, ContentionPoint, OutageResult};

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

/// The outage model, one run per configuration.
fn outage() -> Vec<OutageResult> {
    sweep::outage_sweep(&OutageSetup::DEFAULT, &Strategy::ALL, &BudgetSetup::DEFAULT, 1, SEED)
}

#[test]
fn a_budget_cuts_the_retry_storm() {
    let results = outage();
    assert_eq!(results.len(), 2 * Strategy::ALL.len());
    for pair in results.chunks(2) {
        let [without, with] = pair else {
            unreachable!("results come in pairs")
        };
        assert!(!without.budgeted && with.budgeted);
        let (a, b) = (&without.summary, &with.summary);
        assert!(b.amplification < a.amplification, "{}: {b:?} vs {a:?}", with.label());
        assert!(b.amplification < 1.5, "{}: {}", with.label(), b.amplification);
        assert!(a.amplification > 2.5, "{}: {}", without.label(), a.amplification);
        assert!(b.peak_offered < a.peak_offered, "{}", with.label());
        let (drain_a, drain_b) = (
            a.drain.unwrap_or(OutageSetup::DEFAULT.horizon),
            b.drain.unwrap_or_default(),
        );
        assert!(drain_b <= drain_a, "{}", with.label());
        assert!(b.refused > 0.0 && a.refused == 0.0, "{}", with.label());
    }
}

#[test]
fn runs_are_deterministic() {
    let setup = ContentionSetup::BROOKER;
    let strategies = [Strategy::Backoff(Jitter::Full), Strategy::Backoff(Jitter::Decorrelated)];
    let a = sweep::contention_sweep(&setup, &strategies, &[30], 3, 7);
    let b = sweep::contention_sweep(&setup, &strategies, &[30], 3, 7);
    let c = sweep::contention_sweep(&setup, &strategies, &[30], 3, 8);
    let summaries = |points: &[ContentionPoint]| points.iter().map(|p| p.summary).collect::<Vec<_>>();
    assert_eq!(summaries(&a), summaries(&b));
    assert_ne!(summaries(&a), summaries(&c));
}
