//! The contention model of Marc Brooker's "Exponential Backoff and Jitter"
//! (AWS Architecture Blog, 2015).
//!
//! `clients` clients each write one row once, with optimistic concurrency:
//! read the row's version, then write conditionally on that version. A write
//! whose version is stale (another client's write landed between this
//! client's read and its write) fails, and the client backs off and tries
//! again: read, then write. Every message crosses the network in one hop of
//! `|Normal(10 ms, 2 ms)|`, so an attempt is four hops: read request, read
//! reply, write request, write reply. After a failed write reply the client
//! waits as its strategy says, then sends the next read.
//!
//! Measured, as in the post: the write calls the server handles (every
//! contending attempt is one), and the completion time (when the last
//! client learns that its write succeeded).

use std::time::Duration;

use backoff_runtime::Policy;

use super::queue::EventQueue;
use super::random::{Network, derive_seed};
use super::strategy::{Retrier, Strategy};

/// The parameters of the contention model.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ContentionSetup {
    /// The backoff parameters (the jitter mode is the strategy's).
    pub(crate) policy: Policy,
    /// Mean of one network hop.
    pub(crate) hop_mean: Duration,
    /// Standard deviation of one network hop.
    pub(crate) hop_sd: Duration,
}

impl ContentionSetup {
    /// The post's setup: 10 ms (sd 2 ms) hops; base 5 ms, so the first
    /// backoff is 10 ms, doubling, capped at 2 s; enough retries that no
    /// client gives up.
    pub(crate) const BROOKER: ContentionSetup = ContentionSetup {
        policy: Policy::new()
            .max_retries(256)
            .initial_backoff(Duration::from_millis(10))
            .multiplier(2.0)
            .max_backoff(Duration::from_secs(2)),
        hop_mean: Duration::from_millis(10),
        hop_sd: Duration::from_millis(2),
    };
}

/// What one run measured.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct ContentionRun {
    /// When the last successful write's reply reached its client.
    pub(crate) completion: Duration,
    /// Write calls handled by the server, failed and successful.
    pub(crate) writes: u64,
    /// Clients whose retries ran out before their write succeeded.
    pub(crate) gave_up: u64,
    /// The most retries any one client made.
    pub(crate) most_retries: u32,
}

/// A message in flight, named by where it arrives.
#[derive(Clone, Copy, Debug)]
enum Event {
    /// A client's read request reaches the server.
    ReadAtServer { client: usize },
    /// The server's reply to a read reaches the client.
    ReadReply { client: usize, version: u64 },
    /// A client's conditional write reaches the server.
    WriteAtServer { client: usize, version: u64 },
    /// The server's verdict on a write reaches the client.
    WriteReply { client: usize, written: bool },
}

/// One client: its retrier and how many retries it made.
struct Client {
    retrier: Retrier,
    retries: u32,
}

/// Runs the model once with `clients` clients, all starting at time zero.
/// The network draws from a stream derived from `seed`, and each client's
/// jitter from its own.
pub(crate) fn simulate(setup: &ContentionSetup, strategy: Strategy, clients: usize, seed: u64) -> ContentionRun {
    let mut network = Network::new(setup.hop_mean, setup.hop_sd, derive_seed(seed, 0));
    let mut states: Vec<Client> = (0..clients)
        .map(|client| Client {
            retrier: strategy.retrier(&setup.policy, derive_seed(seed, client as u64 + 1)),
            retries: 0,
        })
        .collect();
    let mut queue = EventQueue::new();
    for client in 0..clients {
        queue.schedule_in(network.hop(), Event::ReadAtServer { client });
    }

    let mut row_version = 0;
    let mut run = ContentionRun::default();
    while let Some(event) = queue.pop() {
        match event {
            Event::ReadAtServer { client } => {
                let version = row_version;
                queue.schedule_in(network.hop(), Event::ReadReply { client, version });
            }
            Event::ReadReply { client, version } => {
                queue.schedule_in(network.hop(), Event::WriteAtServer { client, version });
            }
            Event::WriteAtServer { client, version } => {
                run.writes += 1;
                let written = version == row_version;
                if written {
                    row_version += 1;
                }
                queue.schedule_in(network.hop(), Event::WriteReply { client, written });
            }
            Event::WriteReply { client, written: true } => {
                run.completion = queue.now();
                run.most_retries = run.most_retries.max(states[client].retries);
            }
            Event::WriteReply { client, written: false } => {
                let state = &mut states[client];
                match state.retrier.next_wait() {
                    Some(wait) => {
                        state.retries += 1;
                        queue.schedule_in(wait + network.hop(), Event::ReadAtServer { client });
                    }
                    None => {
                        run.gave_up += 1;
                        run.most_retries = run.most_retries.max(state.retries);
                    }
                }
            }
        }
    }
    run
}

#[cfg(test)]
mod tests {
    use super::*;
    use backoff_runtime::Jitter;

    #[test]
    fn one_client_writes_at_once() {
        let run = simulate(&ContentionSetup::BROOKER, Strategy::Backoff(Jitter::Full), 1, 3);
        assert_eq!((run.writes, run.gave_up, run.most_retries), (1, 0, 0));
        assert!(run.completion > Duration::from_millis(20) && run.completion < Duration::from_millis(70));
    }

    #[test]
    fn every_client_writes_once_and_runs_repeat() {
        for strategy in Strategy::ALL {
            let run = simulate(&ContentionSetup::BROOKER, strategy, 20, 9);
            assert_eq!(run.gave_up, 0, "{strategy:?}");
            assert!(run.writes >= 20, "{strategy:?}");
            assert_eq!(run, simulate(&ContentionSetup::BROOKER, strategy, 20, 9));
        }
    }
}
