use crate::schedule::policy::{Jitter, Policy};
use core::time::Duration;

fn policy(json: &str) -> Result<Policy, String> {
    serde_json::from_str(json).map_err(|error| error.to_string())
}

#[test]
fn a_missing_key_keeps_the_default() {
    assert_eq!(policy("{}"), Ok(Policy::new()));
    assert_eq!(policy(r#"{"max_retries": 2}"#), Ok(Policy::new().max_retries(2)));
}

#[test]
fn the_rules_between_keys_name_the_key_the_attribute_names() {
    let error = policy(r#"{"initial_backoff": "10s", "max_backoff": "5s"}"#).unwrap_err();
    assert!(
        error.starts_with("`initial_backoff` (10s) is longer than `max_backoff` (5s)"),
        "{error}"
    );
    let error = policy(r#"{"jitter": "40s"}"#).unwrap_err();
    assert!(
        error.starts_with("`jitter = \"40s\"` is larger than `max_backoff` (default 32s)"),
        "{error}"
    );
    let error = policy(r#"{"max_retries": "unlimited"}"#).unwrap_err();
    assert!(
        error.starts_with("`max_retries = \"unlimited\"` needs `max_elapsed`"),
        "{error}"
    );
    assert_eq!(
        policy(r#"{"max_retries": "unlimited", "max_elapsed": "2m"}"#),
        Ok(Policy::new().retry_for(Duration::from_secs(120)))
    );
}

#[test]
fn written_keys_only_round_trip() {
    let p = Policy::new()
        .max_backoff(Duration::from_millis(500))
        .jitter(Jitter::Full);
    let text = serde_json::to_string(&p).unwrap();
    assert_eq!(text, r#"{"max_backoff":"500ms","jitter":"full"}"#);
    assert_eq!(policy(&text), Ok(p));
}

#[test]
fn a_value_of_the_wrong_type_says_the_fix() {
    let error = policy(r#"{"max_backoff": 32}"#).unwrap_err();
    assert!(
        error.starts_with(
            "`max_backoff` takes a duration string with a unit, not a number: write `max_backoff = \"32s\"`"
        ),
        "{error}"
    );
    let error = policy(r#"{"max_backoff": {"secs": 32}}"#).unwrap_err();
    assert!(
        error.starts_with("invalid type: map, expected `max_backoff` to be a duration"),
        "{error}"
    );
}

#[test]
fn a_key_given_twice_is_refused() {
    let error = policy(r#"{"max_retries": 2, "max_retries": 3}"#).unwrap_err();
    assert!(error.starts_with("duplicate key `max_retries`"), "{error}");
}

#[test]
fn a_long_value_is_quoted_short() {
    let long = "9".repeat(500);
    let error = policy(&format!(r#"{{"max_backoff": "{long}"}}"#)).unwrap_err();
    assert!(error.len() < 400, "{error}");
    assert!(error.contains("... (500 bytes)"), "{error}");
}

#[test]
fn a_policy_the_settings_would_refuse_is_not_written() {
    let far = Policy::new().jitter(Jitter::AdditiveUpTo(Duration::from_secs(40)));
    let error = serde_json::to_string(&far).unwrap_err().to_string();
    assert!(
        error.starts_with("`jitter = \"40s\"` is larger than `max_backoff` (default 32s)"),
        "{error}"
    );
    let endless = Policy::new().max_retries(u32::MAX);
    let error = serde_json::to_string(&endless).unwrap_err().to_string();
    assert!(
        error.starts_with("`max_retries = \"unlimited\"` needs `max_elapsed`"),
        "{error}"
    );
}
