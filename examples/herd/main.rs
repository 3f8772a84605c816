//! `cargo run --release --example herd -- --out docs/img`: a deterministic
//! retry-storm simulator driven by the runtime's real schedules
//! ([`Policy::schedule_seeded`](backoff_runtime::Policy::schedule_seeded))
//! and its [`RetryBudget`](backoff_runtime::RetryBudget), in virtual time.
//!
//! Two models (see `sim/contention.rs` and `sim/outage.rs`):
//!
//! - the contention model of Marc Brooker's "Exponential Backoff and Jitter"
//!   (AWS Architecture Blog, 2015): N clients racing to write one row with
//!   optimistic concurrency; write calls and completion time against N, for
//!   no backoff and each jitter mode;
//! - an outage: clients calling a server that is down for a while and then
//!   comes back with limited capacity; offered against served load over
//!   time, retry amplification, time to drain and requests given up, for each
//!   jitter mode with and without a shared retry budget.
//!
//! The figures are printed as tables on stdout; with `--out DIR` the charts
//! are written there as SVG. `--quick` runs a reduced sweep, `--seed S`
//! changes the base seed (the same seed always gives the same figures).

mod cli;
mod plots;
mod report;
mod sim;

use std::error::Error;
use std::process::ExitCode;
use std::time::Instant;

use cli::{Command, Options};
use sim::contention::ContentionSetup;
use sim::outage::{BudgetSetup, OutageSetup};
use sim::strategy::Strategy;
use sim::sweep;

/// How much to simulate.
struct Plan {
    /// The client counts of the contention sweep.
    clients: Vec<usize>,
    /// Runs per (client count, strategy) cell.
    runs: usize,
    /// Runs per outage configuration.
    outage_runs: usize,
}

impl Plan {
    /// N = 10, 20, ..., 190 with 100 runs each and 10 runs per outage
    /// configuration; or, for `--quick`, five counts with 10 runs each and 3
    /// outage runs.
    fn for_options(options: &Options) -> Self {
        if options.quick {
            Plan {
                clients: vec![10, 50, 100, 150, 190],
                runs: 10,
                outage_runs: 3,
            }
        } else {
            Plan {
                clients: (10..=190).step_by(10).collect(),
                runs: 100,
                outage_runs: 10,
            }
        }
    }
}

fn main() -> ExitCode {
    match cli::parse(std::env::args().skip(1)) {
        Ok(Command::Help) => {
            println!("{}", cli::USAGE);
            ExitCode::SUCCESS
        }
        Ok(Command::Run(options)) => match run(&options) {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("herd: {error}");
                ExitCode::FAILURE
            }
        },
        Err(message) => {
            eprintln!("herd: {message}\n\n{}", cli::USAGE);
            ExitCode::from(2)
        }
    }
}

/// Runs both models, prints the tables and writes the charts.
fn run(options: &Options) -> Result<(), Box<dyn Error>> {
    let started = Instant::now();
    let plan = Plan::for_options(options);
    let contention = ContentionSetup::BROOKER;
    let points = sweep::contention_sweep(&contention, &Strategy::ALL, &plan.clients, plan.runs, options.seed);
    let outage = OutageSetup::DEFAULT;
    let budget = BudgetSetup::DEFAULT;
    let outages = sweep::outage_sweep(&outage, &Strategy::ALL, &budget, plan.outage_runs, options.seed);

    println!("{}\n", report::contention_intro(&contention, plan.runs, options.seed));
    println!("{}", report::heading("Write calls (mean per run)"));
    println!("{}", report::write_calls(&points));
    println!("{}", report::heading("Completion time (ms, mean per run)"));
    println!("{}", report::completion_times(&points));
    println!("{}", report::heading("Most retries one client needed"));
    println!("{}", report::retries_used(&points));
    println!(
        "{}\n",
        report::outage_intro(&outage, &budget, plan.outage_runs, options.seed)
    );
    println!("{}", report::heading("Outage summary"));
    println!("{}", report::outage_summary(&outage, &outages));
    println!(
        "{}",
        report::heading("Outage load: offered/served calls in each second")
    );
    println!("{}", report::outage_series(&outages));

    if let Some(dir) = &options.out {
        for path in plots::write_all(dir, &points, &outage, &outages)? {
            eprintln!("wrote {}", path.display());
        }
    }
    eprintln!("finished in {:.1} s", started.elapsed().as_secs_f64());
    Ok(())
}
