//! One measurement: `n` clients, each on its own connection, all released
//! at once to run one retried transaction; the attempts they made, the time
//! until the last one committed, and the counter checked against the
//! commits.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use backoff_runtime::Policy;
use tokio::sync::Barrier;
use tokio_postgres::{Client, Error};

use crate::db::{self, Link};
use crate::sim::random::derive_seed;

/// What one run measured.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Measured {
    /// Transactions attempted, first attempts and retries.
    pub(crate) attempts: u64,
    /// Transactions committed.
    pub(crate) commits: u64,
    /// Clients whose retries ran out, or that failed otherwise.
    pub(crate) failed: u64,
    /// From the release of the clients until the last one finished.
    pub(crate) completion: Duration,
}

/// Runs one transaction on every connection in `clients` at once with
/// `policy`, and checks the counter (reset to 0 first) against the commits.
/// Each client's messages are delayed by `added_hop` (mean; none if zero),
/// drawn from its own stream of `seed`. The connections are handed back for
/// the next run.
pub(crate) async fn run_once(
    admin: &Client,
    clients: Vec<Client>,
    policy: Policy,
    added_hop: Duration,
    seed: u64,
) -> Result<(Measured, Vec<Client>), Box<dyn std::error::Error>> {
    db::reset_counter(admin).await?;
    let barrier = Arc::new(Barrier::new(clients.len() + 1));
    let tasks: Vec<_> = clients
        .into_iter()
        .enumerate()
        .map(|(index, client)| {
            let barrier = Arc::clone(&barrier);
            let link = Link::emulated(added_hop, derive_seed(seed, index as u64));
            tokio::spawn(async move {
                let attempts = AtomicU64::new(0);
                barrier.wait().await;
                let outcome: Result<i64, Error> = db::increment(&client, &link, policy, &attempts).await;
                (
                    client,
                    attempts.load(Ordering::Relaxed),
                    outcome.is_ok(),
                    Instant::now(),
                )
            })
        })
        .collect();
    barrier.wait().await;
    let released = Instant::now();
    let mut measured = Measured::default();
    let mut clients = Vec::with_capacity(tasks.len());
    for task in tasks {
        let (client, attempts, committed, finished) = task.await?;
        measured.attempts += attempts;
        if committed {
            measured.commits += 1;
        } else {
            measured.failed += 1;
        }
        measured.completion = measured.completion.max(finished.saturating_duration_since(released));
        clients.push(client);
    }
    let value = db::counter_value(admin).await?;
    if u64::try_from(value).ok() != Some(measured.commits) {
        return Err(format!(
            "the counter is {value} after {} commits: an update was lost",
            measured.commits
        )
        .into());
    }
    Ok((measured, clients))
}

/// The means of several runs.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct MeasuredSummary {
    /// Mean transactions attempted per run.
    pub(crate) attempts: f64,
    /// Mean completion time, in milliseconds.
    pub(crate) completion_ms: f64,
    /// Clients that did not commit, over all runs.
    pub(crate) failed: u64,
}

impl MeasuredSummary {
    /// Summarizes `runs` (all zero for no runs).
    pub(crate) fn of(runs: &[Measured]) -> Self {
        let count = runs.len().max(1) as f64;
        MeasuredSummary {
            attempts: runs.iter().map(|r| r.attempts as f64).sum::<f64>() / count,
            completion_ms: runs.iter().map(|r| r.completion.as_secs_f64() * 1e3).sum::<f64>() / count,
            failed: runs.iter().map(|r| r.failed).sum(),
        }
    }
}
