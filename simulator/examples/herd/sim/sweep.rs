//! The experiments: many independent runs, spread over the machine's cores.
//!
//! Every run's seed is derived from the base seed and the run's coordinates
//! (clients, run number), never from the thread that runs it, so results do
//! not depend on the number of threads. All strategies of one cell share
//! the same seeds (common random numbers): they face the same network.

use std::num::NonZero;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::contention::{self, ContentionRun, ContentionSetup};
use super::hedging::{self, HedgeSetup};
use super::layers::{self, LayerRule, LayersRun, LayersSetup};
use super::limit::RetryLimit;
use super::outage::{self, OutageRun, OutageSetup};
use super::random::derive_seed;
use super::stats::{ContentionSummary, LayersSummary, OutageSummary};
use super::strategy::Strategy;

/// The sub-stream of the base seed that outage runs use.
const OUTAGE_STREAM: u64 = u64::MAX;

/// The sub-stream of the base seed that layered-outage runs use.
const LAYERS_STREAM: u64 = u64::MAX - 1;

/// The result of one (clients, strategy) cell of the contention sweep.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ContentionPoint {
    /// Clients contending.
    pub(crate) clients: usize,
    /// The retry strategy.
    pub(crate) strategy: Strategy,
    /// Means over the cell's runs.
    pub(crate) summary: ContentionSummary,
}

/// The contention model for every client count in `clients` and every
/// strategy in `strategies`, `runs` runs each; in the order clients-major.
pub(crate) fn contention_sweep(
    setup: &ContentionSetup,
    strategies: &[Strategy],
    clients: &[usize],
    runs: usize,
    seed: u64,
) -> Vec<ContentionPoint> {
    let cells: Vec<(usize, Strategy)> = clients
        .iter()
        .flat_map(|&n| strategies.iter().map(move |&s| (n, s)))
        .collect();
    parallel_map(&cells, |&(clients, strategy)| {
        let cell_seed = derive_seed(seed, clients as u64);
        let results: Vec<ContentionRun> = (0..runs)
            .map(|run| contention::simulate(setup, strategy, clients, derive_seed(cell_seed, run as u64)))
            .collect();
        ContentionPoint {
            clients,
            strategy,
            summary: ContentionSummary::of(&results),
        }
    })
}

/// The result of one outage configuration.
#[derive(Clone, Debug)]
pub(crate) struct OutageResult {
    /// The retry strategy.
    pub(crate) strategy: Strategy,
    /// What limited the retries besides the schedule.
    pub(crate) limit: RetryLimit,
    /// Means over the runs.
    pub(crate) summary: OutageSummary,
}

impl OutageResult {
    /// A short name: the strategy, plus " + budget" or " + throttle".
    pub(crate) fn label(&self) -> String {
        match self.limit {
            RetryLimit::Unlimited => self.strategy.label().to_owned(),
            limit => format!("{} + {}", self.strategy.label(), limit.label()),
        }
    }
}

/// The outage model for every strategy with every limit in `limits`, `runs`
/// runs each; in the order strategy-major, then the order of `limits`.
/// Every configuration sees the same seeds.
pub(crate) fn outage_sweep(
    setup: &OutageSetup,
    strategies: &[Strategy],
    limits: &[RetryLimit],
    runs: usize,
    seed: u64,
) -> Vec<OutageResult> {
    let configs: Vec<(Strategy, RetryLimit)> = strategies
        .iter()
        .flat_map(|&s| limits.iter().map(move |&l| (s, l)))
        .collect();
    let seed = derive_seed(seed, OUTAGE_STREAM);
    parallel_map(&configs, |&(strategy, limit)| {
        let results: Vec<OutageRun> = (0..runs)
            .map(|run| outage::simulate(setup, strategy, limit, derive_seed(seed, run as u64)))
            .collect();
        OutageResult {
            strategy,
            limit,
            summary: OutageSummary::of(setup, &results),
        }
    })
}

/// The outage with every request hedged by `hedge`, under each limit in
/// `limits`, `runs` runs each (the outage's seeds): a label and the means.
pub(crate) fn hedging_sweep(
    setup: &OutageSetup,
    hedge: &HedgeSetup,
    limits: &[(&'static str, RetryLimit)],
    runs: usize,
    seed: u64,
) -> Vec<(&'static str, OutageSummary)> {
    let seed = derive_seed(seed, OUTAGE_STREAM);
    parallel_map(limits, |&(label, limit)| {
        let results: Vec<OutageRun> = (0..runs)
            .map(|run| hedging::simulate(setup, hedge, limit, derive_seed(seed, run as u64)))
            .collect();
        (label, OutageSummary::of(setup, &results))
    })
}

/// The result of one layered-outage rule.
#[derive(Clone, Debug)]
pub(crate) struct LayersResult {
    /// Which layers retry, and what limits them.
    pub(crate) rule: LayerRule,
    /// Means over the runs.
    pub(crate) summary: LayersSummary,
}

/// The layered outage for every rule in `rules`, `runs` runs each, in the
/// order of `rules`; every rule sees the same seeds.
pub(crate) fn layers_sweep(setup: &LayersSetup, rules: &[LayerRule], runs: usize, seed: u64) -> Vec<LayersResult> {
    let seed = derive_seed(seed, LAYERS_STREAM);
    parallel_map(rules, |&rule| {
        let results: Vec<LayersRun> = (0..runs)
            .map(|run| layers::simulate(setup, rule, derive_seed(seed, run as u64)))
            .collect();
        LayersResult {
            rule,
            summary: LayersSummary::of(&results),
        }
    })
}

/// `f` applied to every job, on as many threads as there are cores; the
/// results in the order of `jobs`. A panic in `f` is re-raised here.
fn parallel_map<T: Sync, R: Send>(jobs: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism()
        .map_or(1, NonZero::get)
        .min(jobs.len());
    let next = AtomicUsize::new(0);
    let worker = || {
        let mut done = Vec::new();
        loop {
            let index = next.fetch_add(1, Ordering::Relaxed);
            let Some(job) = jobs.get(index) else { break done };
            done.push((index, f(job)));
        }
    };
    let mut results: Vec<(usize, R)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads).map(|_| scope.spawn(worker)).collect();
        handles
            .into_iter()
            .flat_map(|handle| handle.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
            .collect()
    });
    results.sort_by_key(|(index, _)| *index);
    results.into_iter().map(|(_, result)| result).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parallel_map_keeps_the_order() {
        let jobs: Vec<u64> = (0..100).collect();
        assert_eq!(
            parallel_map(&jobs, |x| x * 2),
            (0..100).map(|x| x * 2).collect::<Vec<_>>()
        );
        assert!(parallel_map(&[] as &[u64], |x| *x).is_empty());
    }
}
