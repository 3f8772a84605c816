//! `cargo run --release -p backoff-simulator --example herd -- --out docs/img`: a deterministic
//! retry-storm simulator driven by the runtime's real schedules
//! ([`Policy::schedule_seeded`](backoff_runtime::Policy::schedule_seeded))
//! and its [`RetryBudget`](backoff_runtime::limits::RetryBudget), in virtual time.
//!
//! Three models (see `sim/contention.rs`, `sim/outage.rs` and
//! `sim/layers.rs`):
//!
//! - the contention model of Marc Brooker's "Exponential Backoff and Jitter"
//!   (AWS Architecture Blog, 2015): N clients racing to write one row with
//!   optimistic concurrency; write calls and completion time against N, for
//!   no backoff and each jitter mode;
//! - an outage: clients calling a server that is down for a while and then
//!   comes back with limited capacity; offered against served load over
//!   time, retry amplification, time to drain and requests given up, for each
//!   jitter mode with no retry limit, a shared windowed
//!   [`RetryBudget`](backoff_runtime::limits::RetryBudget) and a shared
//!   [`RetryThrottle`](backoff_runtime::limits::RetryThrottle);
//! - pacing every attempt: an overloaded backend (capacity below the
//!   offered load for 30 s) and the outage's timeline, with no limit, the
//!   budget and the throttle on retries, and the adaptive rate limiter and
//!   the adaptive throttle on every attempt: the backend's load and
//!   goodput, the clients' local refusals and waits, the recovery; and
//!   its closed loop (`sim/burst.rs`): 1,000 tasks that send again when
//!   answered, and palantir's spike of 1,600 requests at once, through the
//!   adaptive rate limiter and with plain backoff;
//! - a layered outage: requests crossing three retrying layers whose bottom
//!   service is down; the calls reaching each service per request when
//!   every layer retries, when only one does, and with a budget or a
//!   throttle per layer.
//!
//! The figures are printed as tables on stdout; with `--out DIR` the charts
//! are written there as SVG. `--quick` runs a reduced sweep, `--seed S`
//! changes the base seed (the same seed always gives the same figures).

mod cli;
mod plots;
mod report;
mod sim;
mod table;

use std::error::Error;
use std::process::ExitCode;
use std::time::Instant;

use backoff_runtime::Jitter;
use cli::{Command, Options};
use sim::admission::{self, AdmissionSetup};
use sim::burst::{self, BurstSetup, Pacer};
use sim::contention::ContentionSetup;
use sim::hedging::HedgeSetup;
use sim::layers::{LayerRule, LayersSetup};
use sim::limit::{BudgetSetup, RetryLimit, ThrottleSetup};
use sim::outage::OutageSetup;
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
    /// Runs per layered-outage rule.
    layer_runs: usize,
}

impl Plan {
    /// N = 10, 20, ..., 190 with 100 runs each, 10 runs per outage
    /// configuration and per layered-outage rule; or, for `--quick`, five
    /// counts with 10 runs each and 3 runs of each outage.
    fn for_options(options: &Options) -> Self {
        if options.quick {
            Plan {
                clients: vec![10, 50, 100, 150, 190],
                runs: 10,
                outage_runs: 3,
                layer_runs: 3,
            }
        } else {
            Plan {
                clients: (10..=190).step_by(10).collect(),
                runs: 100,
                outage_runs: 10,
                layer_runs: 10,
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

/// Runs the three models, prints the tables and writes the charts.
fn run(options: &Options) -> Result<(), Box<dyn Error>> {
    let started = Instant::now();
    let plan = Plan::for_options(options);
    let contention = ContentionSetup::BROOKER;
    let points = sweep::contention_sweep(&contention, &Strategy::ALL, &plan.clients, plan.runs, options.seed);
    let outage = OutageSetup::DEFAULT;
    let (budget, throttle) = (BudgetSetup::DEFAULT, ThrottleSetup::GRPC_EXAMPLE);
    let outages = sweep::outage_sweep(
        &outage,
        &Strategy::ALL,
        &RetryLimit::ALL,
        plan.outage_runs,
        options.seed,
    );
    let hedge = HedgeSetup::DEFAULT;
    let ten_percent = BudgetSetup {
        ratio: 0.1,
        min_per_second: 0,
        window: std::time::Duration::from_secs(10),
    };
    let hedged = sweep::hedging_sweep(
        &outage,
        &hedge,
        &[
            ("no limit", RetryLimit::Unlimited),
            ("10% budget", RetryLimit::Budget(ten_percent)),
            ("throttle", RetryLimit::Throttle(throttle)),
        ],
        plan.outage_runs,
        options.seed,
    );
    let layers = LayersSetup::DEFAULT;
    let layer_results = sweep::layers_sweep(&layers, &LayerRule::ALL, plan.layer_runs, options.seed);
    let overload = AdmissionSetup::OVERLOAD;
    let paced_overload = admission::sweep(&overload, plan.outage_runs, options.seed);
    let paced_outage = admission::sweep(&AdmissionSetup::OUTAGE, plan.outage_runs, options.seed);
    let cold = admission::cold_start(&AdmissionSetup::COLD_START, plan.outage_runs, options.seed);
    let burst_of = |setup: &BurstSetup| -> Vec<_> {
        Pacer::ALL
            .iter()
            .map(|&pacer| burst::summarize(setup, pacer, plan.outage_runs, options.seed))
            .collect()
    };
    let (bursts, spikes) = (burst_of(&BurstSetup::BURST), burst_of(&BurstSetup::SPIKE));

    println!("{}\n", report::contention_intro(&contention, plan.runs, options.seed));
    println!("{}", report::heading("Write calls (mean per run)"));
    println!("{}", report::write_calls(&points));
    println!("{}", report::heading("Completion time (ms, mean per run)"));
    println!("{}", report::completion_times(&points));
    println!("{}", report::heading("Most retries one client needed"));
    println!("{}", report::retries_used(&points));
    println!(
        "{}\n",
        report::outage_intro(&outage, &budget, &throttle, plan.outage_runs, options.seed)
    );
    println!("{}", report::heading("Outage summary"));
    println!("{}", report::outage_summary(&outage, &outages));
    println!(
        "{}",
        report::heading("Retry limits: the failing server's load, recovery and requests served")
    );
    println!("{}", report::limits_summary(&outage, &outages));
    println!(
        "{}",
        report::heading("Hedging in the outage: the extra load, with and without a limit")
    );
    println!("{}", report::hedging_table(&hedge, &hedged));
    println!(
        "{}",
        report::heading("Outage load: offered/served calls in each second")
    );
    println!("{}", report::outage_series(&outages));
    println!(
        "{}\n",
        report::layers_intro(&layers, &budget, &throttle, plan.layer_runs, options.seed)
    );
    println!("{}", report::heading("Layers: calls reaching each service per request"));
    println!("{}", report::layers_table(&layer_results));
    for (setup, results) in [(&overload, &paced_overload), (&AdmissionSetup::OUTAGE, &paced_outage)] {
        println!("{}\n", report::admission_intro(setup, plan.outage_runs, options.seed));
        println!(
            "{}",
            report::heading(&format!("Pacing every attempt: {}", setup.backend.label()))
        );
        println!("{}", report::admission_table(results));
    }
    println!("{}", report::heading("Cold start: an early throttle, a 300/s backend"));
    println!(
        "{}",
        report::cold_start_table(&AdmissionSetup::COLD_START, &cold, plan.outage_runs)
    );
    println!(
        "{}",
        report::heading("Goodput under a burst: 1,000 tasks in a closed loop, a 300/s backend")
    );
    println!("{}", report::burst_table(&BurstSetup::BURST, &bursts, options.seed));
    println!(
        "{}",
        report::heading("palantir's spike: 1,600 requests at once, a 300/s backend")
    );
    println!("{}", report::spike_table(&BurstSetup::SPIKE, &spikes, options.seed));

    if let Some(dir) = &options.out {
        let figures = plots::Figures {
            points: &points,
            outage: &outage,
            outages: &outages,
            limits_strategy: Strategy::Backoff(Jitter::Full),
            layers: &layer_results,
            pacing: (&overload, &paced_overload),
        };
        for path in plots::write_all(dir, &figures)? {
            eprintln!("wrote {}", path.display());
        }
    }
    eprintln!("finished in {:.1} s", started.elapsed().as_secs_f64());
    Ok(())
}
