//! Settings from configuration (the runtime's feature `serde`): a policy
//! and the limiters' settings read from TOML and JSON with the attribute's
//! key names, durations and rules; each error names its key, quotes the
//! value short and says the fix, in the attribute's own words (checked
//! against the trybuild snapshots of the same mistakes); what is written
//! reads back equal.

use std::fs;
use std::path::Path;
use std::time::Duration;

use backoff_runtime::limits::{CircuitBreaker, RetryBudget};
use backoff_runtime::settings::{
    AdaptiveRateLimiterSettings, AdaptiveThrottleSettings, CircuitBreakerSettings, CooldownSettings,
    RetryBudgetSettings, RetryThrottleSettings,
};
use backoff_runtime::{HintAboveCap, Jitter, Policy, parse_duration};
use serde::{Deserialize, Serialize};

/// A service's configuration file, as an application would declare it.
#[derive(Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
struct Config {
    retry: Policy,
    #[serde(default)]
    budget: RetryBudgetSettings,
    #[serde(default)]
    breaker: CircuitBreakerSettings,
}

const TOML: &str = r#"
[retry]
max_retries = 8
max_backoff = "1m30s"
initial_backoff = "250ms"
multiplier = 1.5
jitter = "full"
max_elapsed = "5m"
hint_above_cap = "cap"

[budget]
ratio = 0.1
window = "30s"

[breaker]
failure_ratio = 0.25
window = 20
minimum_throughput = 10
break_duration = "30s"
"#;

fn toml_error<T: for<'de> Deserialize<'de>>(text: &str) -> String {
    match toml::from_str::<T>(text) {
        Ok(_) => panic!("accepted: {text}"),
        Err(error) => error.message().to_owned(),
    }
}

fn json_error<T: for<'de> Deserialize<'de>>(text: &str) -> String {
    match serde_json::from_str::<T>(text) {
        Ok(_) => panic!("accepted: {text}"),
        Err(error) => error.to_string(),
    }
}

#[test]
fn a_toml_file_sets_every_key_of_the_schedule_and_the_limiters() {
    let config: Config = toml::from_str(TOML).unwrap();
    assert_eq!(
        config.retry,
        Policy::new()
            .max_retries(8)
            .max_backoff(Duration::from_secs(90))
            .initial_backoff(Duration::from_millis(250))
            .multiplier(1.5)
            .jitter(Jitter::Full)
            .max_elapsed(Duration::from_secs(300))
            .hint_above_cap(HintAboveCap::WaitCap)
    );
    let budget: RetryBudget = config.budget.build();
    assert_eq!(
        (budget.get_ratio(), budget.get_min_per_second(), budget.get_window()),
        (0.1, 10, Duration::from_secs(30)),
        "min_per_second left out keeps its default"
    );
    let breaker: CircuitBreaker = config.breaker.build();
    assert_eq!(
        (
            breaker.get_failure_ratio(),
            breaker.get_window(),
            breaker.get_minimum_throughput()
        ),
        (0.25, 20, 10)
    );
    assert_eq!(breaker.get_break_duration(), Duration::from_secs(30));
}

#[test]
fn json_reads_what_toml_reads() {
    let from_toml: Config = toml::from_str(TOML).unwrap();
    let json = serde_json::to_string(&from_toml).unwrap();
    let from_json: Config = serde_json::from_str(&json).unwrap();
    assert_eq!(from_json, from_toml);
    assert!(json.contains(r#""max_backoff":"1m30s""#), "{json}");
}

#[test]
fn what_is_written_reads_back_equal() {
    let config: Config = toml::from_str(TOML).unwrap();
    let text = toml::to_string(&config).unwrap();
    assert_eq!(toml::from_str::<Config>(&text).unwrap(), config);

    // Only the keys that were set: the default first wait (1 s), which the
    // cap shortens here, is not written, so the text reads back.
    let capped = Policy::new().max_backoff(Duration::from_millis(500));
    assert_eq!(toml::to_string(&capped).unwrap(), "max_backoff = \"500ms\"\n");
    let unlimited = Policy::new().retry_for(Duration::from_secs(120));
    let text = toml::to_string(&unlimited).unwrap();
    assert_eq!(text, "max_retries = \"unlimited\"\nmax_elapsed = \"2m\"\n");
    assert_eq!(toml::from_str::<Policy>(&text).unwrap(), unlimited);

    let throttle: RetryThrottleSettings = toml::from_str("max_tokens = 100\ntoken_ratio = 0.5").unwrap();
    let rate: AdaptiveRateLimiterSettings = toml::from_str("retry_cost = 5\nmax_wait = \"0s\"").unwrap();
    let adaptive: AdaptiveThrottleSettings = toml::from_str("k = 1.5\nwindow = \"1m\"").unwrap();
    let cooldown: CooldownSettings = toml::from_str("max_hint = \"1m\"").unwrap();
    assert_eq!(round_trip(&throttle), throttle);
    assert_eq!(round_trip(&rate), rate);
    assert_eq!(round_trip(&adaptive), adaptive);
    assert_eq!(round_trip(&cooldown), cooldown);
    assert_eq!(toml::to_string(&cooldown).unwrap(), "max_hint = \"1m\"\n");
    assert_eq!(throttle.build().get_token_ratio(), 0.5);
    assert_eq!(
        rate.build().get_max_wait(),
        Duration::ZERO,
        "zero means: refuse instead of waiting"
    );
    assert_eq!(adaptive.build().get_window(), Duration::from_secs(60));
    assert_eq!(cooldown.build().get_max_hint(), Duration::from_secs(60));
}

fn round_trip<T: Serialize + for<'de> Deserialize<'de>>(value: &T) -> T {
    let toml_text = toml::to_string(value).unwrap();
    let json_text = serde_json::to_string(value).unwrap();
    let from_json: T = serde_json::from_str(&json_text).unwrap();
    assert_eq!(
        toml::to_string(&from_json).unwrap(),
        toml_text,
        "TOML and JSON write the same"
    );
    toml::from_str(&toml_text).unwrap()
}

#[test]
fn an_error_names_the_field_and_says_the_fix() {
    // toml's error shows the line; ours names the key and the fix.
    let error = toml::from_str::<Config>("[retry]\nmax_backoff = \"32\"\n").unwrap_err();
    let shown = error.to_string();
    assert!(shown.contains("max_backoff = \"32\""), "{shown}");
    assert_eq!(
        error.message(),
        "max_backoff = \"32\": duration `32` has no unit: write \"32s\", \"32ms\" or another unit (ns, us (or µs), ms, s, m, h)"
    );
    assert_eq!(
        toml_error::<Policy>("max_backoff = 32"),
        "`max_backoff` takes a duration string with a unit, not a number: write `max_backoff = \"32s\"` or `\"32ms\"`"
    );
    assert_eq!(
        toml_error::<Policy>("max_backoff = \"0s\""),
        "`max_backoff` must be greater than zero"
    );
    assert_eq!(
        toml_error::<Policy>("max_retries = 0"),
        "`max_retries = 0` would never retry: retry at least once (`max_retries = 1`)"
    );
    assert_eq!(
        toml_error::<Policy>("multiplier = 0.5"),
        "`multiplier = 0.5` would shrink the waits: `multiplier` must be a finite number >= 1, such as `multiplier = 2` or `multiplier = 1.5`"
    );
    assert_eq!(
        toml_error::<Policy>("jitter = \"0s\""),
        "`jitter = \"0s\"` adds no jitter: write `jitter = \"none\"` instead"
    );
    assert_eq!(
        toml_error::<RetryBudgetSettings>("ratio = 1500"),
        "`ratio` must be a number from 0 to 1000 (the retries allowed per call), got 1500"
    );
    assert_eq!(
        toml_error::<CircuitBreakerSettings>("window = 0"),
        "`window` must be from 1 to 256, got 0"
    );
    assert_eq!(
        toml_error::<CircuitBreakerSettings>("probes = 0"),
        "`probes` must be at least 1, got 0"
    );
    // JSON: the same text, and serde_json's place.
    let error = json_error::<Policy>(r#"{"max_backoff": "32"}"#);
    assert!(
        error.starts_with("max_backoff = \"32\": duration `32` has no unit"),
        "{error}"
    );
    assert!(error.ends_with("at line 1 column 21"), "{error}");
}

#[test]
fn an_unknown_key_is_refused_with_the_key_it_resembles() {
    let error = toml_error::<Config>("[retry]\nmax_backof = \"32s\"\n");
    assert!(
        error.starts_with(
            "unknown key `max_backof`: did you mean `max_backoff`?\nvalid keys: `max_retries`, `max_backoff`"
        ),
        "{error}"
    );
    let error = json_error::<Policy>(r#"{"maxRetries": 3}"#);
    assert!(
        error.starts_with("unknown key `maxRetries`: did you mean `max_retries`?"),
        "{error}"
    );
    let error = toml_error::<CircuitBreakerSettings>("failure_rate = 0.5");
    assert!(
        error.starts_with("unknown key `failure_rate`: did you mean `failure_ratio`?"),
        "{error}"
    );
    let error = toml_error::<Policy>("timeout = \"5s\"");
    assert!(error.starts_with("unknown key `timeout`\nvalid keys:"), "{error}");
}

#[test]
fn the_rules_between_values_are_checked_at_load() {
    assert_eq!(
        toml_error::<Policy>("initial_backoff = \"10s\"\nmax_backoff = \"5s\""),
        "`initial_backoff` (10s) is longer than `max_backoff` (5s): the first wait could never be reached; lower `initial_backoff` or raise `max_backoff`"
    );
    assert!(
        toml_error::<Policy>("jitter = \"10s\"\nmax_backoff = \"5s\"")
            .starts_with("`jitter = \"10s\"` is larger than `max_backoff` (5s)")
    );
    assert!(
        toml_error::<Policy>("jitter = \"40s\"")
            .starts_with("`jitter = \"40s\"` is larger than `max_backoff` (default 32s)")
    );
    assert!(
        toml_error::<Policy>("max_retries = \"unlimited\"")
            .starts_with("`max_retries = \"unlimited\"` needs `max_elapsed`")
    );
    assert!(
        toml_error::<CircuitBreakerSettings>("window = 20\nminimum_throughput = 50")
            .starts_with("`minimum_throughput` (50) is larger than `window` (20)")
    );
    let error = toml_error::<RetryThrottleSettings>("max_tokens = 10");
    assert!(error.starts_with("missing key `token_ratio`"), "{error}");
    // A default never causes an error: the cap shortens the default first wait.
    let capped: Policy = toml::from_str("max_backoff = \"500ms\"").unwrap();
    assert_eq!(capped.schedule().next(), Some(Duration::from_millis(500)));
    // A server hint can start a retry before the first wait: a max_elapsed
    // below it is not a policy's error (the attribute refuses it only
    // without `retry_after`).
    assert!(toml::from_str::<Policy>("initial_backoff = \"1s\"\nmax_elapsed = \"500ms\"").is_ok());
}

#[test]
fn a_long_value_is_quoted_by_a_short_prefix() {
    let long = format!("{}s", "1".repeat(300));
    let error = toml_error::<Policy>(&format!("max_backoff = \"{long}\""));
    assert!(error.len() < 200, "{error}");
    assert!(
        error.starts_with("max_backoff = \"1111111111111111111111111111111111111111... (301 bytes)\""),
        "{error}"
    );
    let error = toml_error::<Policy>(&format!("{} = 1", "k".repeat(300)));
    assert!(error.contains("... (300 bytes)"), "{error}");
}

#[test]
fn environment_variables_read_the_same_grammar() {
    // What an environment variable or a flag holds, read as the file is.
    assert_eq!(parse_duration("1m30s"), Ok(Duration::from_secs(90)));
    assert_eq!("decorrelated".parse::<Jitter>(), Ok(Jitter::Decorrelated));
    assert_eq!("cap".parse::<HintAboveCap>(), Ok(HintAboveCap::WaitCap));
    // A number an environment variable wrote as a string is the number.
    let policy: Policy = serde_json::from_str(r#"{"max_retries": "3", "multiplier": "1.5"}"#).unwrap();
    assert_eq!((policy.get_max_retries(), policy.get_multiplier()), (3, 1.5));
}

/// The first error line of a trybuild snapshot in `tests/ui/`.
fn attribute_error(case: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/ui")
        .join(format!("{case}.stderr"));
    let text = fs::read_to_string(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    let line = text.lines().next().unwrap_or_default();
    line.strip_prefix("error: ").unwrap_or(line).to_owned()
}

/// The attribute and a settings file refuse the same mistake with the same
/// text: one grammar, one set of rules (`schedule/grammar.rs`, a file both
/// crates compile).
#[test]
fn the_attribute_and_the_settings_say_the_same() {
    let same = [
        ("duration_no_unit", "max_backoff = \"32\""),
        ("initial_above_max", "max_backoff = \"5s\"\ninitial_backoff = \"10s\""),
        ("jitter_above_max", "max_backoff = \"5s\"\njitter = \"10s\""),
        ("jitter_above_default_max", "jitter = \"40s\""),
        ("jitter_unknown_mode", "jitter = \"fulll\""),
        ("unknown_key", "max_backof = \"32s\""),
    ];
    for (case, toml_text) in same {
        let attribute = attribute_error(case);
        let settings = toml_error::<Policy>(toml_text);
        assert!(
            settings.contains(&attribute),
            "{case}: the attribute says\n  {attribute}\nthe settings say\n  {settings}"
        );
    }
}

/// The table of keys in `backoff-macros/src/keys.rs`: the schedule keys
/// (`, schedule;` rows), in order.
fn schedule_keys_of_the_attribute() -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("backoff-macros/src/keys.rs");
    let source = fs::read_to_string(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    // A row starts at its key's field and ends at its `;`, with `, schedule`
    // before it for a schedule key (`}, schedule;` after a kind's fields).
    let mut keys = Vec::new();
    let mut current = None;
    for line in source.lines() {
        if let Some(row) = line
            .strip_prefix("    ")
            .filter(|row| row.starts_with(|c: char| c.is_ascii_lowercase()))
        {
            current = Some(row.split(':').next().unwrap_or_default().trim().to_owned());
        }
        if line.trim_end().ends_with(", schedule;") {
            keys.extend(current.take());
        }
    }
    keys
}

/// A policy's settings take exactly the attribute's schedule keys, in the
/// table's order: every key set writes them so.
#[test]
fn a_policy_takes_the_schedule_keys_of_the_attribute() {
    let every = Policy::new()
        .max_retries(3)
        .max_backoff(Duration::from_secs(10))
        .initial_backoff(Duration::from_secs(1))
        .multiplier(3.0)
        .jitter(Jitter::Equal)
        .max_elapsed(Duration::from_secs(60))
        .hint_above_cap(HintAboveCap::WaitCap);
    let written: Vec<String> = toml::to_string(&every)
        .unwrap()
        .lines()
        .map(|line| line.split(" = ").next().unwrap_or_default().to_owned())
        .collect();
    let keys = schedule_keys_of_the_attribute();
    assert!(keys.len() >= 7, "{keys:?}");
    assert_eq!(written, keys);
}
