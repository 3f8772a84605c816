//! Settings from configuration (feature `serde`): a policy's and each
//! limiter's settings read from generated JSON documents, with the keys,
//! near misses, values of every type and length; and durations read
//! alone, as an environment variable would give them. Never a panic; a
//! refusal quotes at most a short prefix of what it was given; what is
//! accepted is written back and reads back, in JSON and in TOML (equal).

use backoff_runtime::settings::{
    AdaptiveRateLimiterSettings, AdaptiveThrottleSettings, CircuitBreakerSettings, CooldownSettings,
    RetryBudgetSettings, RetryThrottleSettings,
};
use backoff_runtime::{Jitter, Policy, format_duration, parse_duration};
use serde::{Deserialize, Serialize};

use super::corpus;
use super::generate::{Bound, OnPanic, Rng};

/// The longest error a document may get, in characters: the rule, a quoted
/// prefix, and for an unknown key the valid keys.
const LONGEST_ERROR: usize = 400;

const KEYS: &[&str] = &[
    "max_retries",
    "max_backoff",
    "initial_backoff",
    "multiplier",
    "jitter",
    "max_elapsed",
    "hint_above_cap",
    "ratio",
    "min_per_second",
    "window",
    "max_tokens",
    "token_ratio",
    "cost",
    "retry_cost",
    "max_wait",
    "k",
    "failure_ratio",
    "minimum_throughput",
    "consecutive_failures",
    "break_duration",
    "probes",
    "max_hint",
    "max_backof",
    "MAX_RETRIES",
    "",
    "\u{e9}",
];

/// A value of any JSON type, as a file or an environment variable may
/// hold it.
fn value(rng: &mut Rng) -> String {
    let text = |s: &str| serde_json::to_string(s).unwrap_or_default();
    match rng.below(12) {
        0 => text(&rng.number()),
        1 | 2 => text(&format!(
            "{}{}",
            rng.number(),
            rng.pick(&["s", "ms", "m", "h", "ns", "us", "µs", "x", ""])
        )),
        3 => text(&rng.text(b"0123456789.smhnu\xc2\xb5 ", 16)),
        4 => {
            const WORDS: &[&str] = &[
                "full",
                "equal",
                "none",
                "unlimited",
                "stop",
                "cap",
                "fulll",
                "grpc",
                "additive",
                "",
            ];
            text(rng.pick::<&str>(WORDS))
        }
        5 => text(&format!("{}s", "9".repeat(rng.below(600) as usize))),
        6 => rng.number().trim().to_owned(),
        7 => (*rng.pick(&[
            "true",
            "null",
            "[]",
            "{}",
            "[1, \"2s\"]",
            "{\"secs\": 1}",
            "1e400",
            "-0.0",
        ]))
        .to_owned(),
        _ => format!("{}", rng.below(2000)),
    }
}

/// A JSON object of some keys, each with a value (some keys twice).
fn document(rng: &mut Rng) -> String {
    let entries: Vec<String> = (0..rng.below(7))
        .map(|_| {
            let key = if rng.one_in(10) {
                "k".repeat(rng.below(500) as usize)
            } else {
                (*rng.pick(KEYS)).to_owned()
            };
            format!("{}: {}", serde_json::to_string(&key).unwrap_or_default(), value(rng))
        })
        .collect();
    format!("{{{}}}", entries.join(", "))
}

/// Reads `json` as `T`: never a panic, a short error, and what is accepted
/// reads back equal from JSON and from TOML.
fn read<T>(json: &str)
where
    T: for<'de> Deserialize<'de> + Serialize + PartialEq + std::fmt::Debug,
{
    match serde_json::from_str::<T>(json) {
        Ok(value) => {
            // Read back, not compared: serde_json reads a float to within
            // an ulp unless its `float_roundtrip` feature is on. TOML reads
            // it exactly.
            let again = serde_json::to_string(&value).expect("written as JSON");
            serde_json::from_str::<T>(&again).expect("reads back from JSON");
            let toml_text = toml::to_string(&value).expect("written as TOML");
            assert_eq!(
                toml::from_str::<T>(&toml_text).expect("reads back from TOML"),
                value,
                "{toml_text}"
            );
        }
        Err(error) => {
            let shown = error.to_string();
            assert!(
                shown.chars().count() <= LONGEST_ERROR,
                "{} characters: {shown}",
                shown.chars().count()
            );
        }
    }
}

/// One document, read as every settings type.
pub fn check(json: &str) {
    read::<Policy>(json);
    read::<RetryBudgetSettings>(json);
    read::<RetryThrottleSettings>(json);
    read::<AdaptiveRateLimiterSettings>(json);
    read::<AdaptiveThrottleSettings>(json);
    read::<CircuitBreakerSettings>(json);
    read::<CooldownSettings>(json);
    if let Ok(policy) = serde_json::from_str::<Policy>(json) {
        // The rules between values hold on what was accepted.
        let mut waits = policy.schedule().take(64);
        assert!(waits.all(|wait| wait <= policy.get_max_backoff()), "{json}");
        if let Jitter::AdditiveUpTo(amount) = policy.get_jitter() {
            assert!(amount <= policy.get_max_backoff(), "{json}");
        }
    }
}

/// A duration as text: read, or refused with a short error; what is read
/// is written back and reads back equal.
pub fn check_duration(text: &str) {
    match parse_duration(text) {
        Ok(duration) => assert_eq!(parse_duration(&format_duration(duration)), Ok(duration), "{text:?}"),
        Err(error) => {
            let shown = error.to_string();
            assert!(shown.chars().count() <= LONGEST_ERROR, "{shown}");
        }
    }
    let _ = text.parse::<Jitter>();
}

#[test]
fn the_corpus_is_read_without_a_panic() {
    for (name, text) in corpus::of("settings") {
        let _told = OnPanic(name);
        check(&text);
    }
}

#[test]
fn generated_settings_are_read_without_a_panic() {
    let mut bound = Bound::new(20_000);
    while let Some(mut rng) = bound.input() {
        let json = document(&mut rng);
        let duration = serde_json::from_str::<String>(&value(&mut rng)).unwrap_or_default();
        let _told = OnPanic(format!("{}: {json} / {duration:?}", bound.input_seed()));
        check(&json);
        check_duration(&duration);
    }
    bound.report("settings");
}
