//! The herd simulator's contention model checked against a real database.
//!
//! ```sh
//! scripts/pg-contention.sh                     # starts PostgreSQL, runs this, stops it
//! scripts/pg-contention.sh --out docs/img      # and writes the chart
//! ```
//!
//! N clients, each on its own connection, each run one `SERIALIZABLE`
//! transaction that reads a shared counter row and writes it back plus
//! one, retried by `#[retry]` on SQLSTATE 40001 (serialization failure)
//! only: the optimistic concurrency of Marc Brooker's model, done by
//! PostgreSQL. For each N and each jitter mode the example reports the
//! transactions attempted and the time until the last client committed,
//! and checks that the counter equals the commits (no lost update).
//!
//! Beside each figure it prints the simulator's prediction for the same N:
//! the contention model of `examples/herd` (its modules are included here
//! by path, not copied), with the blog post's setup re-expressed in hops of
//! this database: one hop is a quarter of an uncontended attempt measured
//! before the runs (an attempt is two round trips, four hops, as in the
//! model), and the policy's first backoff (one hop) and cap (200 hops)
//! scale with it. The retry policy is built at run time from that
//! measurement, so the attribute takes it with `policy = ...`.
//!
//! The connection string comes from `PG_CONTENTION_URL`; without it the
//! example prints how to run the script and exits successfully.

#[allow(dead_code)]
#[path = "../herd/sim/mod.rs"]
mod sim;
#[path = "../herd/table.rs"]
mod table;

mod chart;
mod cli;
mod db;
mod experiment;
mod prediction;

use std::error::Error;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use backoff_runtime::Jitter;
use tokio_postgres::Client;

use cli::{Command, Options};
use experiment::{Measured, MeasuredSummary};
use sim::contention::ContentionSetup;
use sim::random::derive_seed;
use sim::stats::ContentionSummary;
use table::Table;

/// The simulator's base seed (the herd example's default).
const SEED: u64 = 2015;

/// Uncontended transactions timed to measure an attempt.
const ROUND_TRIP_SAMPLES: u32 = 500;

/// One (client count, mode) cell: the database's means and the simulator's.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Cell {
    /// Clients contending.
    pub(crate) clients: usize,
    /// The jitter mode.
    pub(crate) mode: Jitter,
    /// The database's figures.
    pub(crate) measured: MeasuredSummary,
    /// The simulator's figures.
    pub(crate) predicted: ContentionSummary,
}

fn main() -> ExitCode {
    let options = match cli::parse(std::env::args().skip(1)) {
        Ok(Command::Run(options)) => options,
        Ok(Command::Help) => {
            println!("{}", cli::USAGE);
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("pg_contention: {message}\n\n{}", cli::USAGE);
            return ExitCode::from(2);
        }
    };
    let Ok(url) = std::env::var(cli::URL_VARIABLE) else {
        println!(
            "{} is not set: this experiment needs a PostgreSQL server.\n\n{}",
            cli::URL_VARIABLE,
            cli::USAGE
        );
        return ExitCode::SUCCESS;
    };
    let outcome = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(Box::<dyn Error>::from)
        .and_then(|runtime| runtime.block_on(run(&url, &options)));
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("pg_contention: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Measures the round trip, runs every cell on the database and in the
/// simulator, prints the table and writes the chart.
async fn run(url: &str, options: &Options) -> Result<(), Box<dyn Error>> {
    let started = Instant::now();
    let admin = db::connect(url).await?;
    db::create_counter(&admin).await?;
    let version: String = admin.query_one("SHOW server_version", &[]).await?.try_get(0)?;
    let select_one = select_one_round_trip(&admin).await?;
    let link = db::Link::emulated(options.added_hop, derive_seed(SEED, u64::MAX));
    let attempt = db::uncontended_attempt(&admin, &link, ROUND_TRIP_SAMPLES).await?;
    let setup = prediction::scaled_setup(prediction::hop_of(attempt));
    println!("{}\n", intro(&version, select_one, attempt, &setup, options));

    let most = options.clients.iter().copied().max().unwrap_or(0);
    let mut pool = Vec::with_capacity(most);
    for _ in 0..most {
        pool.push(db::connect(url).await?);
    }
    let predicted = prediction::predict(&setup, &options.clients, options.sim_runs, SEED);
    let mut cells = Vec::new();
    for &clients in &options.clients {
        let mut runs: Vec<Vec<Measured>> = vec![Vec::new(); prediction::MODES.len()];
        // Modes interleaved run by run, so that a drift of the machine
        // spreads over all of them.
        for run in 0..options.runs {
            let seed = derive_seed(SEED, (clients * options.runs + run) as u64);
            for (mode, measured) in prediction::MODES.iter().zip(&mut runs) {
                let policy = setup.policy.jitter(*mode);
                let rest = pool.split_off(clients);
                let (one, mut used) = experiment::run_once(&admin, pool, policy, options.added_hop, seed).await?;
                used.extend(rest);
                measured.push(one);
                pool = used;
            }
        }
        for (mode, measured) in prediction::MODES.iter().zip(&runs) {
            let point = predicted
                .iter()
                .find(|p| p.clients == clients && p.strategy.label() == label_of(*mode));
            cells.push(Cell {
                clients,
                mode: *mode,
                measured: MeasuredSummary::of(measured),
                predicted: point.map(|p| p.summary).unwrap_or_default(),
            });
        }
        eprintln!("{clients} clients done after {:.0} s", started.elapsed().as_secs_f64());
    }

    println!("## Transactions attempted and completion time (means)\n");
    println!("{}", table(&cells));
    if let Some(dir) = &options.out {
        let hop_us = setup.hop_mean.as_secs_f64() * 1e6;
        eprintln!(
            "wrote {}",
            chart::write(dir, &cells, hop_us, options.added_hop)?.display()
        );
    }
    eprintln!("finished in {:.0} s", started.elapsed().as_secs_f64());
    Ok(())
}

/// The herd simulator's label of a jitter mode (to find its prediction).
fn label_of(mode: Jitter) -> &'static str {
    sim::strategy::Strategy::Backoff(mode).label()
}

/// The mean round trip of `SELECT 1`, over 500 queries after 20 to warm up.
async fn select_one_round_trip(client: &Client) -> Result<Duration, Box<dyn Error>> {
    for _ in 0..20 {
        client.simple_query("SELECT 1").await?;
    }
    let started = Instant::now();
    for _ in 0..500 {
        client.simple_query("SELECT 1").await?;
    }
    Ok(started.elapsed() / 500)
}

/// The setup, as a paragraph.
fn intro(version: &str, select_one: Duration, attempt: Duration, setup: &ContentionSetup, options: &Options) -> String {
    let p = &setup.policy;
    format!(
        "PostgreSQL {version}; SELECT 1 round trip {select_one:?} (loopback); network delay added per message: \
         {}; uncontended attempt (two round trips) {attempt:?}, so one hop is {:?} (sd {:?}); policy: first \
         backoff {:?}, x{} per retry, capped at {:?}, up to {} retries, sleeping with async-io's timer; {} \
         database runs and {} simulator runs per cell; simulator seed {SEED}; {} cores.",
        if options.added_hop.is_zero() {
            "none".to_owned()
        } else {
            format!("|Normal({:?}, {:?})|", options.added_hop, options.added_hop / 5)
        },
        setup.hop_mean,
        setup.hop_sd,
        p.get_initial_backoff(),
        p.get_multiplier(),
        p.get_max_backoff(),
        p.get_max_retries(),
        options.runs,
        options.sim_runs,
        std::thread::available_parallelism().map_or(1, std::num::NonZero::get),
    )
}

/// The figures side by side: the database's, the simulator's and their
/// ratio, per (client count, mode).
fn table(cells: &[Cell]) -> String {
    let mut table = Table::new(
        [
            "clients",
            "jitter",
            "attempts: database",
            "attempts: simulator",
            "database / simulator",
            "ms: database",
            "ms: simulator",
            "database / simulator",
            "did not commit",
        ]
        .map(str::to_owned)
        .to_vec(),
    );
    for cell in cells {
        let (m, p) = (&cell.measured, &cell.predicted);
        table.push(vec![
            cell.clients.to_string(),
            chart::label(cell.mode).to_owned(),
            format!("{:.0}", m.attempts),
            format!("{:.0}", p.writes),
            format!("{:.2}", m.attempts / p.writes.max(f64::MIN_POSITIVE)),
            format!("{:.1}", m.completion_ms),
            format!("{:.1}", p.completion_ms),
            format!("{:.2}", m.completion_ms / p.completion_ms.max(f64::MIN_POSITIVE)),
            m.failed.to_string(),
        ]);
    }
    table.render()
}
