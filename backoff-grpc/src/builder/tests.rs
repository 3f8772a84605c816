//! The service config's rules and their errors.
//!
//! Each rule with the error that names its field; the lookup order; the
//! JSON and the builder giving the same config; the mapping onto `Policy`
//! and `RetryThrottle`.

use core::time::Duration;

use serde_json::{Value, json};
use tonic::Code;

use crate::{ConfigError, MethodConfigSpec, RetryPolicySpec, ServiceConfig, ServiceConfigBuilder};
use backoff_runtime::Jitter;

/// A valid retry policy.
fn policy() -> Value {
    json!({
        "maxAttempts": 4,
        "initialBackoff": "0.1s",
        "maxBackoff": "1s",
        "backoffMultiplier": 2,
        "retryableStatusCodes": ["UNAVAILABLE"]
    })
}

/// `policy()` with `key` set to `value` (or removed, for `None`), in the
/// second entry of a config whose first entry is valid.
fn config_with(key: &str, value: Option<Value>) -> Value {
    let mut changed = policy();
    match value {
        Some(value) => changed[key] = value,
        None => {
            changed.as_object_mut().map(|fields| fields.remove(key));
        }
    }
    json!({"methodConfig": [
        {"name": [{"service": "a.Ok"}], "retryPolicy": policy()},
        {"name": [{"service": "a.Changed"}], "retryPolicy": changed}
    ]})
}

fn error_of(document: &Value) -> String {
    match ServiceConfig::from_json(&document.to_string()) {
        Ok(_) => "accepted".to_owned(),
        Err(error) => error.to_string(),
    }
}

#[test]
fn each_rule_of_a_retry_policy_names_its_field() {
    let at = "methodConfig[1].retryPolicy";
    let cases: Vec<(&str, Option<Value>, String)> = vec![
        (
            "maxAttempts",
            Some(json!(1)),
            format!("{at}.maxAttempts: must be at least 2, got 1"),
        ),
        (
            "maxAttempts",
            Some(json!(0)),
            format!("{at}.maxAttempts: must be at least 2, got 0"),
        ),
        (
            "maxAttempts",
            Some(json!(-3)),
            format!("{at}.maxAttempts: must be at least 2, got -3"),
        ),
        (
            "maxAttempts",
            Some(json!(2.5)),
            format!("{at}.maxAttempts: must be a whole number, got 2.5"),
        ),
        (
            "maxAttempts",
            Some(json!("3")),
            format!("{at}.maxAttempts: must be a number, got \"3\""),
        ),
        ("maxAttempts", None, format!("{at}.maxAttempts: is required")),
        (
            "initialBackoff",
            Some(json!("0s")),
            format!("{at}.initialBackoff: must be greater than 0, got 0s"),
        ),
        (
            "initialBackoff",
            Some(json!("-1s")),
            format!("{at}.initialBackoff: must be greater than 0, got -1s"),
        ),
        (
            "initialBackoff",
            Some(json!("100ms")),
            format!("{at}.initialBackoff: must be a duration in seconds such as \"0.1s\", got \"100ms\""),
        ),
        ("initialBackoff", None, format!("{at}.initialBackoff: is required")),
        (
            "maxBackoff",
            Some(json!("0.0s")),
            format!("{at}.maxBackoff: must be greater than 0, got 0s"),
        ),
        ("maxBackoff", None, format!("{at}.maxBackoff: is required")),
        (
            "backoffMultiplier",
            Some(json!(0)),
            format!("{at}.backoffMultiplier: must be a number greater than 0, got 0"),
        ),
        (
            "backoffMultiplier",
            Some(json!(-2)),
            format!("{at}.backoffMultiplier: must be a number greater than 0, got -2"),
        ),
        (
            "backoffMultiplier",
            Some(json!(0.5)),
            format!("{at}.backoffMultiplier: must be at least 1 (this crate's backoff never shrinks), got 0.5"),
        ),
        (
            "backoffMultiplier",
            None,
            format!("{at}.backoffMultiplier: is required"),
        ),
        (
            "retryableStatusCodes",
            Some(json!([])),
            format!("{at}.retryableStatusCodes: must not be empty"),
        ),
        (
            "retryableStatusCodes",
            Some(json!(["UNAVAILABLE", "OK"])),
            format!("{at}.retryableStatusCodes[1]: must not be OK (a success is never retried)"),
        ),
        (
            "retryableStatusCodes",
            Some(json!([0])),
            format!("{at}.retryableStatusCodes[0]: must not be OK (a success is never retried)"),
        ),
        (
            "retryableStatusCodes",
            Some(json!(["UNAVAILABLE", "Unavailable"])),
            format!(
                "{at}.retryableStatusCodes[1]: unknown status code \"Unavailable\" (did you mean \"UNAVAILABLE\"?)"
            ),
        ),
        (
            "retryableStatusCodes",
            Some(json!("UNAVAILABLE")),
            format!("{at}.retryableStatusCodes: must be a list, got \"UNAVAILABLE\""),
        ),
        (
            "retryableStatusCodes",
            None,
            format!("{at}.retryableStatusCodes: is required"),
        ),
    ];
    for (key, value, expected) in cases {
        assert_eq!(
            error_of(&config_with(key, value.clone())),
            expected,
            "{key} = {value:?}"
        );
    }
}

#[test]
fn a_policy_at_its_bounds_is_accepted() {
    for (key, value) in [
        ("maxAttempts", json!(2)),
        ("maxAttempts", json!(2.0)),
        ("maxAttempts", json!(2_147_483_647)),
        ("initialBackoff", json!("0.000000001s")),
        ("backoffMultiplier", json!(1)),
        ("retryableStatusCodes", json!([14, "ABORTED", "UNAVAILABLE"])),
        ("initialBackoff", json!("10s")),
    ] {
        assert_eq!(
            error_of(&config_with(key, Some(value.clone()))),
            "accepted",
            "{key} = {value}"
        );
    }
}

#[test]
fn each_rule_of_the_throttling_names_its_field() {
    let cases = [
        (
            json!({"maxTokens": 0, "tokenRatio": 0.1}),
            "retryThrottling.maxTokens: must be from 1 to 1000, got 0",
        ),
        (
            json!({"maxTokens": 1001, "tokenRatio": 0.1}),
            "retryThrottling.maxTokens: must be from 1 to 1000, got 1001",
        ),
        (
            json!({"maxTokens": -5, "tokenRatio": 0.1}),
            "retryThrottling.maxTokens: must be from 1 to 1000, got -5",
        ),
        (
            json!({"maxTokens": 10.5, "tokenRatio": 0.1}),
            "retryThrottling.maxTokens: must be a whole number, got 10.5",
        ),
        (json!({"tokenRatio": 0.1}), "retryThrottling.maxTokens: is required"),
        (
            json!({"maxTokens": 10, "tokenRatio": 0}),
            "retryThrottling.tokenRatio: must be greater than 0, got 0",
        ),
        (
            json!({"maxTokens": 10, "tokenRatio": -0.5}),
            "retryThrottling.tokenRatio: must be greater than 0, got -0.5",
        ),
        (
            json!({"maxTokens": 10, "tokenRatio": 0.0004}),
            "retryThrottling.tokenRatio: must be from 0.001 to 1000 (three decimal places are kept), got 0.0004",
        ),
        (
            json!({"maxTokens": 10, "tokenRatio": 1000.5}),
            "retryThrottling.tokenRatio: must be from 0.001 to 1000 (three decimal places are kept), got 1000.5",
        ),
        (json!({"maxTokens": 10}), "retryThrottling.tokenRatio: is required"),
        (
            json!([10, 0.1]),
            "retryThrottling: it must be a JSON object, got [10,0.1]",
        ),
    ];
    for (throttling, expected) in cases {
        assert_eq!(
            error_of(&json!({ "retryThrottling": throttling })),
            expected,
            "{throttling}"
        );
    }
    assert_eq!(
        error_of(&json!({"retryThrottling": {"maxTokens": 1000, "tokenRatio": 1000}})),
        "accepted"
    );
}

#[test]
fn each_rule_of_the_names_names_its_field() {
    let entry = |names: Value| json!({"name": names, "timeout": "1s"});
    let cases = [
        (
            json!([
                entry(json!([{"service": "a.S", "method": "M"}])),
                entry(json!([{"service": "a.S", "method": "M"}]))
            ]),
            r#"methodConfig[1].name[0]: duplicate name "a.S/M" (also methodConfig[0].name[0])"#,
        ),
        (
            json!([entry(json!([{"service": "a.S"}, {"service": "a.S", "method": ""}]))]),
            r#"methodConfig[0].name[1]: duplicate name "a.S" (also methodConfig[0].name[0])"#,
        ),
        (
            json!([entry(json!([{}])), entry(json!([{"service": ""}]))]),
            "methodConfig[1].name[0]: duplicate default name {} (also methodConfig[0].name[0])",
        ),
        (
            json!([entry(json!([{"method": "M"}]))]),
            r#"methodConfig[0].name[0]: method "M" needs its service (an empty name is written {})"#,
        ),
        (
            json!([entry(json!({"service": "a.S"}))]),
            r#"methodConfig[0].name: must be a list, got {"service":"a.S"}"#,
        ),
        (
            json!([entry(json!([{"service": 7}]))]),
            "methodConfig[0].name[0].service: must be a string, got 7",
        ),
        (json!({"name": []}), r#"methodConfig: must be a list, got {"name":[]}"#),
        (
            json!([entry(json!([{}])), "x"]),
            r#"methodConfig[1]: it must be a JSON object, got "x""#,
        ),
        (
            json!([{"name": [{}], "timeout": "-2s"}]),
            "methodConfig[0].timeout: must not be negative, got -2s",
        ),
    ];
    for (entries, expected) in cases {
        assert_eq!(error_of(&json!({ "methodConfig": entries })), expected, "{entries}");
    }
    assert_eq!(
        error_of(&json!(["not", "an", "object"])),
        r#"a service config must be a JSON object, got ["not","an","object"]"#
    );
    let syntax = ServiceConfig::from_json("{\"methodConfig\": [").unwrap_err();
    assert_eq!(syntax.path(), "");
    assert!(syntax.message().starts_with("not JSON: EOF while parsing"), "{syntax}");
}

#[test]
fn an_entry_without_a_name_applies_to_nothing_but_is_checked() {
    let config = ServiceConfig::from_json(&json!({"methodConfig": [{"timeout": "1s"}]}).to_string()).unwrap();
    assert!(config.method_config("/a.B/C").is_none());
    let checked = json!({"methodConfig": [{"retryPolicy": {"maxAttempts": 1}}]});
    assert_eq!(
        error_of(&checked),
        "methodConfig[0].retryPolicy.maxAttempts: must be at least 2, got 1"
    );
}

#[test]
fn max_attempts_are_capped_at_five_unless_the_cap_is_raised() {
    let with_attempts = |attempts: u32| config_with("maxAttempts", Some(json!(attempts))).to_string();
    let attempts = |config: &ServiceConfig| config.retry_policy("/a.Changed/M").map(|retry| retry.max_attempts());
    assert_eq!(attempts(&ServiceConfig::from_json(&with_attempts(5)).unwrap()), Some(5));
    let capped = ServiceConfig::from_json(&with_attempts(8)).unwrap();
    assert_eq!(attempts(&capped), Some(5));
    assert_eq!(
        capped.retry_policy("/a.Changed/M").unwrap().policy().get_max_retries(),
        4
    );
    let raised = ServiceConfigBuilder::from_json(&with_attempts(8))
        .unwrap()
        .max_attempts_cap(10)
        .build()
        .unwrap();
    assert_eq!(attempts(&raised), Some(8));
    let lowered = ServiceConfigBuilder::from_json(&with_attempts(8))
        .unwrap()
        .max_attempts_cap(3)
        .build()
        .unwrap();
    assert_eq!(attempts(&lowered), Some(3));
    let error = ServiceConfigBuilder::from_json(&with_attempts(3))
        .unwrap()
        .max_attempts_cap(1)
        .build()
        .unwrap_err();
    assert_eq!(error.to_string(), "maxAttemptsCap: must be at least 2, got 1");
}

/// Two method entries (one naming two methods), a service-wide entry and
/// the default: the entry naming the method wins, then the service's, then
/// the default.
const LOOKUP: &str = r#"{
  "methodConfig": [
    {
      "name": [{"service": "shop.Cart", "method": "Checkout"}, {"service": "shop.Cart", "method": "Pay"}],
      "timeout": "30s",
      "retryPolicy": {"maxAttempts": 2, "initialBackoff": "1s", "maxBackoff": "1s",
                      "backoffMultiplier": 1, "retryableStatusCodes": ["UNAVAILABLE"]}
    },
    {
      "name": [{"service": "shop.Cart", "method": "Abandon"}],
      "timeout": "1s"
    },
    {
      "name": [{"service": "shop.Cart"}],
      "timeout": "2s",
      "retryPolicy": {"maxAttempts": 3, "initialBackoff": "0.1s", "maxBackoff": "1s",
                      "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE", "ABORTED"]}
    },
    {
      "name": [{}],
      "timeout": "10s",
      "retryPolicy": {"maxAttempts": 4, "initialBackoff": "0.5s", "maxBackoff": "5s",
                      "backoffMultiplier": 3, "retryableStatusCodes": ["UNAVAILABLE"]}
    }
  ],
  "retryThrottling": {"maxTokens": 10, "tokenRatio": 0.1},
  "loadBalancingConfig": [{"round_robin": {}}]
}"#;

#[test]
fn the_method_s_entry_then_the_service_s_then_the_default() {
    let config = ServiceConfig::from_json(LOOKUP).unwrap();
    let chosen = |path: &str| {
        let method = config.method_config(path).unwrap();
        (
            method.timeout().map(|t| t.as_secs()),
            method.retry_policy().map(|r| r.max_attempts()),
        )
    };
    assert_eq!(chosen("/shop.Cart/Checkout"), (Some(30), Some(2)), "named");
    assert_eq!(
        chosen("/shop.Cart/Pay"),
        (Some(30), Some(2)),
        "the same entry's second name"
    );
    assert_eq!(
        chosen("/shop.Cart/Abandon"),
        (Some(1), None),
        "the method's entry is taken whole: no retries, though its service has a policy"
    );
    assert_eq!(chosen("/shop.Cart/AddItem"), (Some(2), Some(3)), "its service's");
    assert_eq!(chosen("/shop.Catalog/List"), (Some(10), Some(4)), "the default");
    assert_eq!(
        chosen("/shop.Cart.Sub/Checkout"),
        (Some(10), Some(4)),
        "a service is matched whole"
    );
    assert_eq!(
        chosen("not a path"),
        (Some(10), Some(4)),
        "a path of another shape: the default"
    );
    let cart = config.retry_policy("/shop.Cart/AddItem").unwrap();
    assert!(cart.retries(Code::Aborted));
    assert!(
        !config
            .retry_policy("/shop.Catalog/List")
            .unwrap()
            .retries(Code::Aborted)
    );

    let without_default = ServiceConfig::from_json(&LOOKUP.replace(r#""name": [{}]"#, r#""name": []"#)).unwrap();
    assert!(without_default.method_config("/shop.Catalog/List").is_none());
    assert!(without_default.method_config("/shop.Cart/AddItem").is_some());
}

#[test]
fn the_builder_makes_the_json_s_config() {
    let spec = |attempts, initial_ms, max_ms, multiplier, codes: &[Code]| {
        RetryPolicySpec::new()
            .max_attempts(attempts)
            .initial_backoff(Duration::from_millis(initial_ms))
            .max_backoff(Duration::from_millis(max_ms))
            .backoff_multiplier(multiplier)
            .retryable_status_codes(codes.iter().copied())
    };
    let built = ServiceConfig::builder()
        .method_config(
            MethodConfigSpec::new()
                .name("shop.Cart", "Checkout")
                .name("shop.Cart", "Pay")
                .timeout(Duration::from_secs(30))
                .retry_policy(spec(2, 1000, 1000, 1.0, &[Code::Unavailable])),
        )
        .method_config(
            MethodConfigSpec::new()
                .name("shop.Cart", "Abandon")
                .timeout(Duration::from_secs(1)),
        )
        .method_config(
            MethodConfigSpec::new()
                .service("shop.Cart")
                .timeout(Duration::from_secs(2))
                .retry_policy(spec(3, 100, 1000, 2.0, &[Code::Unavailable, Code::Aborted])),
        )
        .method_config(
            MethodConfigSpec::new()
                .every_method()
                .timeout(Duration::from_secs(10))
                .retry_policy(spec(4, 500, 5000, 3.0, &[Code::Unavailable])),
        )
        .retry_throttling(10, 0.1)
        .build()
        .unwrap();
    assert_eq!(built, ServiceConfig::from_json(LOOKUP).unwrap());
}

#[test]
fn the_builder_reports_the_json_s_paths() {
    let error: ConfigError = ServiceConfig::builder()
        .method_config(MethodConfigSpec::new().service("a.S"))
        .method_config(
            MethodConfigSpec::new().service("a.T").retry_policy(
                RetryPolicySpec::new()
                    .max_attempts(3)
                    .initial_backoff(Duration::from_secs(1))
                    .max_backoff(Duration::from_secs(1))
                    .backoff_multiplier(f64::NAN)
                    .retryable_status_codes([Code::Unavailable]),
            ),
        )
        .build()
        .unwrap_err();
    assert_eq!(error.path(), "methodConfig[1].retryPolicy.backoffMultiplier");
    assert_eq!(error.message(), "must be a number greater than 0, got NaN");
    let throttled = ServiceConfig::builder().retry_throttling(0, 0.1).build().unwrap_err();
    assert_eq!(throttled.path(), "retryThrottling.maxTokens");
}

#[test]
fn a_retry_policy_is_a6_s_schedule_on_the_crate_s_policy() {
    let config = ServiceConfig::from_json(
        &json!({"methodConfig": [{"name": [{}], "retryPolicy": {
            "maxAttempts": 5, "initialBackoff": "0.1s", "maxBackoff": "0.3s",
            "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]}}]})
        .to_string(),
    )
    .unwrap();
    let policy = config.retry_policy("/a.B/C").unwrap().policy();
    assert_eq!(policy.get_jitter(), Jitter::Grpc);
    assert_eq!(
        policy.get_max_elapsed(),
        None,
        "the timeout is the call's deadline, not the policy's"
    );
    let waits: Vec<Duration> = policy.schedule().collect();
    assert_eq!(waits.len(), 4, "maxAttempts counts the first attempt");
    for (n, (wait, base_ms)) in waits.iter().zip([100u64, 200, 300, 300]).enumerate() {
        let base = Duration::from_millis(base_ms);
        assert!(*wait >= base * 4 / 5, "retry {}: {wait:?}", n + 1);
        assert!(
            *wait <= (base * 6 / 5).min(Duration::from_millis(300)),
            "retry {}: {wait:?}",
            n + 1
        );
    }
}

#[test]
fn the_throttle_has_the_config_s_settings() {
    let config = ServiceConfig::from_json(r#"{"retryThrottling": {"maxTokens": 10, "tokenRatio": 0.12345}}"#).unwrap();
    let settings = config.retry_throttling().unwrap();
    assert_eq!((settings.max_tokens(), settings.token_ratio()), (10, 0.123));
    let throttle = settings.throttle();
    assert_eq!(throttle.get_max_tokens(), 10);
    assert_eq!(throttle.get_token_ratio(), 0.123);
    assert_eq!(throttle.tokens(), 10.0, "a new throttle starts full");
}

#[test]
fn fields_this_crate_does_not_use_are_ignored() {
    let config = ServiceConfig::from_json(
        &json!({
            "loadBalancingConfig": [{"round_robin": {}}],
            "healthCheckConfig": {"serviceName": "x"},
            "methodConfig": [{
                "name": [{"service": "a.S"}],
                "waitForReady": true,
                "maxRequestMessageBytes": 1024,
                "retryPolicy": null
            }]
        })
        .to_string(),
    )
    .unwrap();
    assert!(
        config
            .method_config("/a.S/M")
            .is_some_and(|method| method.retry_policy().is_none())
    );
}

#[test]
fn a_config_inside_a_settings_file_is_checked_too() {
    let bad: Result<ServiceConfig, _> =
        serde_json::from_value(json!({"retryThrottling": {"maxTokens": 0, "tokenRatio": 1}}));
    assert_eq!(
        bad.unwrap_err().to_string(),
        "retryThrottling.maxTokens: must be from 1 to 1000, got 0"
    );
    let good: ServiceConfig = serde_json::from_str(LOOKUP).unwrap();
    assert_eq!(good, ServiceConfig::from_json(LOOKUP).unwrap());
    let parsed: ServiceConfig = LOOKUP.parse().unwrap();
    assert_eq!(parsed, good);
}

/// In JSON the codes are required (as gRPC's clients require them); a
/// policy built in code without them retries `UNAVAILABLE`, and a
/// `RESOURCE_EXHAUSTED` that carries a `RetryInfo`.
#[test]
fn a_policy_built_in_code_without_codes_retries_unavailable_and_exhausted_with_a_retry_info() {
    let spec = RetryPolicySpec::new()
        .max_attempts(3)
        .initial_backoff(Duration::from_millis(100))
        .max_backoff(Duration::from_secs(1))
        .backoff_multiplier(2.0);
    let config = ServiceConfig::builder()
        .method_config(MethodConfigSpec::new().every_method().retry_policy(spec))
        .build()
        .unwrap();
    let retry = config.retry_policy("/a.B/C").unwrap();
    assert_eq!(retry.retryable_status_codes().collect::<Vec<_>>(), [Code::Unavailable]);
    assert!(!retry.retries(Code::ResourceExhausted), "not every RESOURCE_EXHAUSTED");
    assert!(retry.retries_exhausted_with_retry_info());

    let listed = config_with("retryableStatusCodes", Some(json!(["RESOURCE_EXHAUSTED"])));
    let from_json = ServiceConfig::from_json(&listed.to_string()).unwrap();
    let retry = from_json.retry_policy("/a.Changed/M").unwrap();
    assert!(
        !retry.retries_exhausted_with_retry_info(),
        "JSON retries exactly the codes it lists"
    );
    assert!(retry.retries(Code::ResourceExhausted));
}
