//! The herd simulator's contention model scaled to the database: the
//! model's time unit is one network hop (10 ms in the blog post's setup),
//! so every duration of the post's setup is re-expressed in hops of the
//! measured database.

use std::time::Duration;

use backoff_runtime::{Jitter, Policy};

use crate::sim::contention::ContentionSetup;
use crate::sim::strategy::Strategy;
use crate::sim::sweep::{self, ContentionPoint};

/// The jitter modes compared, in the order of the tables and chart.
pub(crate) const MODES: [Jitter; 5] = [
    Jitter::None,
    Jitter::Additive,
    Jitter::Equal,
    Jitter::Full,
    Jitter::Decorrelated,
];

/// The contention model with one hop of `hop` instead of the post's 10 ms:
/// the hop's spread, the first backoff (one hop) and the cap (200 hops)
/// scale with it; the retries (256) and the doubling stay.
pub(crate) fn scaled_setup(hop: Duration) -> ContentionSetup {
    let post = ContentionSetup::BROOKER;
    let scale = hop.as_secs_f64() / post.hop_mean.as_secs_f64();
    let scaled = |d: Duration| d.mul_f64(scale).max(Duration::from_nanos(1));
    let policy = Policy::new()
        .max_retries(post.policy.get_max_retries())
        .multiplier(post.policy.get_multiplier())
        .initial_backoff(scaled(post.policy.get_initial_backoff()))
        .max_backoff(scaled(post.policy.get_max_backoff()));
    ContentionSetup {
        policy,
        hop_mean: scaled(post.hop_mean),
        hop_sd: scaled(post.hop_sd),
    }
}

/// One hop of the database: half the round trip, where an uncontended
/// attempt (read, then write and commit) is two round trips, so four hops.
pub(crate) fn hop_of(attempt: Duration) -> Duration {
    attempt / 4
}

/// The simulator's prediction for every client count and mode, `runs` runs
/// per cell, with the base seed `seed`; clients-major, modes in [`MODES`]
/// order.
pub(crate) fn predict(setup: &ContentionSetup, clients: &[usize], runs: usize, seed: u64) -> Vec<ContentionPoint> {
    let strategies = MODES.map(Strategy::Backoff);
    sweep::contention_sweep(setup, &strategies, clients, runs, seed)
}
