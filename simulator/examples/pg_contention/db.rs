//! The database side: connections, the counter row, and the transaction
//! that `#[retry]` retries on serialization failures.
//!
//! Each attempt is two round trips, like an attempt of the contention model
//! (a read, then a conditional write):
//!
//! 1. `BEGIN ISOLATION LEVEL SERIALIZABLE; SELECT value FROM counter ...`
//! 2. `UPDATE counter SET value = <read + 1> ...; COMMIT`
//!
//! Under `SERIALIZABLE`, a transaction whose row was updated by another
//! transaction since its snapshot fails with SQLSTATE 40001
//! (`serialization_failure`): at its `UPDATE` (at once, or after waiting for
//! the other writer's row lock until that one commits) or at its `COMMIT`.
//! A failed attempt is rolled back before it returns (a third round trip,
//! only on failure), so no aborted transaction stays open during the wait.
//!
//! Every message crosses a [`Link`]: the loopback as it is, or a network
//! delay emulated on the client side (a sleep before each request is sent
//! and after each reply arrives), so that the round trip, not the server's
//! CPU, dominates, as in the model.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use backoff_runtime::{Policy, retry};
use tokio_postgres::error::SqlState;
use tokio_postgres::{Client, Error, NoTls, SimpleQueryMessage};

use crate::sim::random::Network;

/// The network one client's messages cross.
#[derive(Debug)]
pub(crate) struct Link {
    /// The emulated delay per message, if any.
    network: Option<Mutex<Network>>,
}

impl Link {
    /// The loopback interface as it is: no added delay.
    pub(crate) fn loopback() -> Self {
        Link { network: None }
    }

    /// Each message is delayed by `|Normal(mean, mean / 5)|` (the model's
    /// hop, as in the blog post's 10 ms, sd 2 ms), drawn from a generator
    /// seeded with `seed`; the loopback when `mean` is zero.
    pub(crate) fn emulated(mean: Duration, seed: u64) -> Self {
        if mean.is_zero() {
            return Link::loopback();
        }
        Link {
            network: Some(Mutex::new(Network::new(mean, mean / 5, seed))),
        }
    }

    /// One message's trip: nothing on the loopback, else a sleep.
    async fn hop(&self) {
        if let Some(network) = &self.network {
            let delay = network.lock().unwrap_or_else(std::sync::PoisonError::into_inner).hop();
            async_io::Timer::after(delay).await;
        }
    }

    /// A request and its reply over this link.
    async fn round_trip<T>(&self, request: impl Future<Output = T>) -> T {
        self.hop().await;
        let reply = request.await;
        self.hop().await;
        reply
    }
}

/// Opens a connection; its driver runs on its own tokio task.
pub(crate) async fn connect(url: &str) -> Result<Client, Error> {
    let (client, connection) = tokio_postgres::connect(url, NoTls).await?;
    tokio::spawn(async move {
        if let Err(error) = connection.await {
            eprintln!("pg_contention: connection closed: {error}");
        }
    });
    Ok(client)
}

/// Creates the one-row `counter` table (replacing any earlier one).
pub(crate) async fn create_counter(client: &Client) -> Result<(), Error> {
    client
        .batch_execute(
            "DROP TABLE IF EXISTS counter; \
             CREATE TABLE counter (id integer PRIMARY KEY, value bigint NOT NULL); \
             INSERT INTO counter VALUES (1, 0)",
        )
        .await
}

/// Sets the counter back to 0.
pub(crate) async fn reset_counter(client: &Client) -> Result<(), Error> {
    client.batch_execute("UPDATE counter SET value = 0 WHERE id = 1").await
}

/// The counter's value.
pub(crate) async fn counter_value(client: &Client) -> Result<i64, Error> {
    let row = client.query_one("SELECT value FROM counter WHERE id = 1", &[]).await?;
    row.try_get(0)
}

/// Whether `error` is PostgreSQL's serialization failure (SQLSTATE 40001),
/// the only error worth retrying here.
pub(crate) fn is_serialization_failure(error: &Error) -> bool {
    error.code() == Some(&SqlState::T_R_SERIALIZATION_FAILURE)
}

/// Reads the counter and writes it back plus one in one serializable
/// transaction, retried with `policy` on serialization failures only.
/// Every attempt adds one to `attempts`. Returns the value written.
#[retry(policy = policy, retry_if = is_serialization_failure, sleep = async_io::Timer::after)]
pub(crate) async fn increment(
    client: &Client,
    link: &Link,
    policy: Policy,
    attempts: &AtomicU64,
) -> Result<i64, Error> {
    attempts.fetch_add(1, Ordering::Relaxed);
    let outcome = read_then_write(client, link).await;
    if outcome.is_err() {
        // Ends the aborted transaction (after a failed COMMIT there is none
        // left, and ROLLBACK only warns).
        link.round_trip(client.batch_execute("ROLLBACK")).await?;
    }
    outcome
}

/// One attempt: two round trips, the transaction left open if it fails.
async fn read_then_write(client: &Client, link: &Link) -> Result<i64, Error> {
    let begin_and_read = "BEGIN ISOLATION LEVEL SERIALIZABLE; SELECT value FROM counter WHERE id = 1";
    let read = link.round_trip(client.simple_query(begin_and_read)).await?;
    let value = read
        .iter()
        .find_map(|message| match message {
            SimpleQueryMessage::Row(row) => row.get(0).and_then(|v| v.parse::<i64>().ok()),
            _ => None,
        })
        .unwrap_or_default();
    let written = value + 1;
    let write_and_commit = format!("UPDATE counter SET value = {written} WHERE id = 1; COMMIT");
    link.round_trip(client.simple_query(&write_and_commit)).await?;
    Ok(written)
}

/// The mean time of one uncontended attempt of [`increment`] over `samples`
/// transactions (after a few to warm up): the measured cost of two round
/// trips, server work included.
pub(crate) async fn uncontended_attempt(client: &Client, link: &Link, samples: u32) -> Result<Duration, Error> {
    let policy = Policy::new().max_retries(1);
    let attempts = AtomicU64::new(0);
    for _ in 0..samples.min(20) {
        increment(client, link, policy, &attempts).await?;
    }
    attempts.store(0, Ordering::Relaxed);
    let started = Instant::now();
    for _ in 0..samples {
        increment(client, link, policy, &attempts).await?;
    }
    let elapsed = started.elapsed();
    let attempts = u32::try_from(attempts.load(Ordering::Relaxed))
        .unwrap_or(u32::MAX)
        .max(1);
    Ok(elapsed / attempts)
}
