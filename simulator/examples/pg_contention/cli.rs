//! The command line: `pg_contention [--clients 10,20,...] [--runs R]
//! [--sim-runs R] [--added-hop-us US] [--out DIR]`, and the connection
//! string from `PG_CONTENTION_URL`.

use std::path::PathBuf;
use std::time::Duration;

/// The environment variable holding the connection string.
pub(crate) const URL_VARIABLE: &str = "PG_CONTENTION_URL";

/// The usage text for `--help` and for errors.
pub(crate) const USAGE: &str = "\
usage: scripts/pg-contention.sh [ARGS]
   or: PG_CONTENTION_URL=postgres://... cargo run --release -p backoff-simulator --example pg_contention -- [ARGS]

  --clients LIST  comma-separated client counts (default 10,20,40,60,80,100)
  --runs R        database runs per (client count, jitter mode) (default 5)
  --sim-runs R    simulator runs per cell of the prediction (default 100)
  --added-hop-us US
                  delay every message by |Normal(US, US/5)| microseconds on the
                  client side, as a network would (default 0: the loopback as is)
  --out DIR       write the SVG chart into DIR (created if missing): pg-contention.svg,
                  or pg-contention-hop-<US>us.svg with --added-hop-us
  --help          print this text

The script starts a throw-away PostgreSQL cluster, sets PG_CONTENTION_URL
and runs this example; without the variable the example prints this text
and exits successfully.";

/// What the user asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Command {
    /// Print the usage text.
    Help,
    /// Run the experiment.
    Run(Options),
}

/// The options of a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Options {
    /// The client counts, in order.
    pub(crate) clients: Vec<usize>,
    /// Database runs per cell.
    pub(crate) runs: usize,
    /// Simulator runs per cell.
    pub(crate) sim_runs: usize,
    /// The mean network delay emulated per message (zero: none).
    pub(crate) added_hop: Duration,
    /// Where to write the chart; none means tables only.
    pub(crate) out: Option<PathBuf>,
}

/// Parses the arguments (without the program name).
pub(crate) fn parse(args: impl IntoIterator<Item = String>) -> Result<Command, String> {
    let mut options = Options {
        clients: vec![10, 20, 40, 60, 80, 100],
        runs: 5,
        sim_runs: 100,
        added_hop: Duration::ZERO,
        out: None,
    };
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--help" | "-h" => return Ok(Command::Help),
            "--clients" => {
                let list = args.next().ok_or("--clients needs a list such as 10,20,40")?;
                options.clients = list
                    .split(',')
                    .map(|n| n.trim().parse().ok().filter(|&n: &usize| n > 0))
                    .collect::<Option<_>>()
                    .ok_or_else(|| format!("--clients needs positive integers separated by commas, not {list:?}"))?;
            }
            "--runs" => options.runs = positive(args.next(), "--runs")?,
            "--sim-runs" => options.sim_runs = positive(args.next(), "--sim-runs")?,
            "--added-hop-us" => {
                let micros = args.next().ok_or("--added-hop-us needs a number of microseconds")?;
                let micros: u64 = micros
                    .parse()
                    .map_err(|_| format!("--added-hop-us needs a whole number of microseconds, not {micros:?}"))?;
                options.added_hop = Duration::from_micros(micros);
            }
            "--out" => options.out = Some(PathBuf::from(args.next().ok_or("--out needs a directory")?)),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(Command::Run(options))
}

/// A positive integer given to `flag`.
fn positive(value: Option<String>, flag: &str) -> Result<usize, String> {
    let value = value.ok_or_else(|| format!("{flag} needs a number"))?;
    value
        .parse()
        .ok()
        .filter(|&n: &usize| n > 0)
        .ok_or_else(|| format!("{flag} needs a positive integer, not {value:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn parses_every_option() {
        let parsed = parse(args(&[
            "--clients",
            "5, 10",
            "--runs",
            "2",
            "--sim-runs",
            "7",
            "--added-hop-us",
            "1500",
            "--out",
            "d",
        ]));
        let expected = Options {
            clients: vec![5, 10],
            runs: 2,
            sim_runs: 7,
            added_hop: Duration::from_micros(1500),
            out: Some(PathBuf::from("d")),
        };
        assert_eq!(parsed, Ok(Command::Run(expected)));
        assert_eq!(parse(args(&["-h"])), Ok(Command::Help));
    }

    #[test]
    fn rejects_bad_input() {
        let bad_input: [&[&str]; 6] = [
            &["--clients", "10,x"],
            &["--clients", "0"],
            &["--runs", "0"],
            &["--added-hop-us", "1ms"],
            &["--out"],
            &["--x"],
        ];
        for bad in bad_input {
            assert!(parse(args(bad)).is_err(), "{bad:?}");
        }
    }
}
