//! `cargo run --example settings`: the retry settings read from a TOML file
//! (`examples/settings.toml`), with the attribute's keys and durations,
//! then a retry run with them.
//!
//! The file gives the schedule (a `Policy`), a retry budget and a circuit
//! breaker. An environment variable overrides the cap with the same
//! grammar (`SETTINGS_MAX_BACKOFF=1s cargo run --example settings`). The
//! example also loads a file with three mistakes, one at a time, and shows
//! what each error says.

use std::time::{Duration, Instant};

use backoff_runtime::limits::Refused;
use backoff_runtime::settings::{CircuitBreakerSettings, RetryBudgetSettings};
use backoff_runtime::{Policy, parse_duration};
use serde::Deserialize;

/// The application's configuration: its `[retry]`, `[budget]` and
/// `[breaker]` tables.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    retry: Policy,
    #[serde(default)]
    budget: RetryBudgetSettings,
    #[serde(default)]
    breaker: CircuitBreakerSettings,
}

/// The operation's error: busy, or refused by the breaker.
#[derive(Debug, PartialEq)]
enum CallError {
    Busy(u32),
    Refused,
}

impl From<Refused> for CallError {
    fn from(_: Refused) -> Self {
        CallError::Refused
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/settings.toml");
    let config: Config = toml::from_str(&std::fs::read_to_string(path)?)?;
    let mut policy = config.retry;
    // An environment variable reads the attribute's grammar too.
    if let Ok(cap) = std::env::var("SETTINGS_MAX_BACKOFF") {
        policy = policy.try_max_backoff(parse_duration(&cap)?)?;
    }
    println!("read {path}:");
    println!("  {policy:?}");
    println!(
        "  written back: {}",
        toml::to_string(&policy)?.trim_end().replace('\n', ", ")
    );

    let budget = config.budget.build().name("example");
    let breaker = config.breaker.build().name("example");

    // A flaky operation: fails three times, then succeeds.
    let started = Instant::now();
    let mut calls = 0;
    let result = policy
        .retry(|| {
            calls += 1;
            if calls <= 3 {
                Err(CallError::Busy(calls))
            } else {
                Ok(calls)
            }
        })
        .budget(&budget)
        .admission(&breaker)
        .on_retry(|error, event| {
            println!(
                "  attempt {} failed ({error:?}); waiting {:?}",
                event.attempt(),
                event.wait()
            );
        })
        .call();
    println!(
        "result: {result:?} after {calls} calls in {:?} (breaker {})",
        started.elapsed(),
        breaker.state()
    );
    assert_eq!(result, Ok(4));
    assert!(started.elapsed() < Duration::from_secs(2));

    println!("\nmistakes, each refused at load:");
    for mistake in [
        "[retry]\nmax_backoff = \"32\"",
        "[retry]\nmax_retires = 3",
        "[retry]\ninitial_backoff = \"10s\"\nmax_backoff = \"5s\"",
    ] {
        let error = toml::from_str::<Config>(mistake).expect_err("a mistake");
        println!("--- {}\n{}", mistake.replace('\n', "  "), error.message());
    }
    Ok(())
}
