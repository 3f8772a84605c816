//! The experiments: many independent runs, spread over the machine's cores.
//!
//! Every run's seed is derived from the base seed and the run's coordinates
//! (clients, run number), never from the thread that runs it, so results do
//! not depend on the number of threads. All strategies of one cell share
//! the same seeds (common random numbers): they face the same network.

use std::num::NonZero;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::contention::{self, ContentionRun, ContentionSetup};
use super::outage::{self, BudgetSetup, OutageRun, OutageSetup};
use super::random::derive_seed;
use super::stats::{ContentionSummary, OutageSummary};
use super::strategy::Strategy;

/// The sub-stream of the base seed that outage runs use.
const OUTAGE_STREAM: u64 = u64::MAX;

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
    /// Whether the clients shared a retry budget.
    pub(crate) budgeted: bool,
    /// Means over the runs.
    pub(crate) summary: OutageSummary,
}

impl OutageResult {
    /// A short name: the strategy, plus " + budget" with a budget.
    pub(crate) fn label(&self) -> String {
        if self.budgeted {
            format!("{} + budget", self.strategy.label())
        } else {
            self.strategy.label().to_owned()
        }
    }
}

/// The outage model for every strategy, without and with `budget`, `runs`
/// runs each; in the order strategy-major, no budget first.
pub(crate) fn outage_sweep(
    setup: &OutageSetup,
    strategies: &[Strategy],
    budget: &BudgetSetup,
    runs: usize,
    seed: u64,
) -> Vec<OutageResult> {
    let configs: Vec<(Strategy, bool)> = strategies.iter().flat_map(|&s| [(s, false), (s, true)]).collect();
    let seed = derive_seed(seed, OUTAGE_STREAM);
    parallel_map(&configs, |&(strategy, budgeted)| {
        let results: Vec<OutageRun> = (0..runs)
            .map(|run| {
                outage::simulate(
                    setup,
                    strategy,
                    budgeted.then_some(budget),
                    derive_seed(seed, run as u64),
                )
            })
            .collect();
        OutageResult {
            strategy,
            budgeted,
            summary: OutageSummary::of(setup, &results),
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
