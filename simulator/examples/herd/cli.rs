//! The command line: `herd [--out DIR] [--quick] [--seed S]`.

use std::path::PathBuf;

/// The seed of the default run (the year of the blog post).
pub(crate) const DEFAULT_SEED: u64 = 2015;

/// The usage text for `--help` and for errors.
pub(crate) const USAGE: &str = "\
usage: cargo run --release -p backoff-simulator --example herd -- [--out DIR] [--quick] [--seed S]

  --out DIR   write the SVG charts into DIR (created if missing)
  --quick     a reduced run: fewer client counts and runs per count
  --seed S    the base seed (default 2015); the same seed gives the same figures
  --help      print this text";

/// What the user asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Command {
    /// Print the usage text.
    Help,
    /// Run the simulations.
    Run(Options),
}

/// The options of a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Options {
    /// Where to write the charts; none means tables only.
    pub(crate) out: Option<PathBuf>,
    /// Whether to run the reduced sweep.
    pub(crate) quick: bool,
    /// The base seed.
    pub(crate) seed: u64,
}

/// Parses the arguments (without the program name).
pub(crate) fn parse(args: impl IntoIterator<Item = String>) -> Result<Command, String> {
    let mut options = Options {
        out: None,
        quick: false,
        seed: DEFAULT_SEED,
    };
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--help" | "-h" => return Ok(Command::Help),
            "--quick" => options.quick = true,
            "--out" => {
                let dir = args.next().ok_or("--out needs a directory")?;
                options.out = Some(PathBuf::from(dir));
            }
            "--seed" => {
                let seed = args.next().ok_or("--seed needs a number")?;
                options.seed = seed
                    .parse()
                    .map_err(|_| format!("--seed needs a non-negative integer, not {seed:?}"))?;
            }
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(Command::Run(options))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn parses_every_option() {
        let parsed = parse(args(&["--out", "docs/img", "--quick", "--seed", "7"]));
        let expected = Options {
            out: Some(PathBuf::from("docs/img")),
            quick: true,
            seed: 7,
        };
        assert_eq!(parsed, Ok(Command::Run(expected)));
        assert_eq!(parse(args(&["--help"])), Ok(Command::Help));
    }

    #[test]
    fn rejects_bad_input() {
        assert!(parse(args(&["--seed", "x"])).is_err());
        assert!(parse(args(&["--out"])).is_err());
        assert!(parse(args(&["--fast"])).is_err());
    }
}
