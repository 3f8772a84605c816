//! The service config's JSON.
//!
//! Read into a [`ServiceConfigBuilder`]: the
//! document's shape, protobuf's JSON durations (`"0.1s"`), status codes by
//! name or number. Fields this crate does not use (`loadBalancingConfig`,
//! `waitForReady`, ...) are ignored, as gRPC's clients
//! ignore fields they do not know.

use core::str::FromStr;
use core::time::Duration;

use serde_json::{Map, Value};
use tonic::Code;

use super::builder::{HedgingPolicySpec, MethodConfigSpec, RetryPolicySpec, ServiceConfigBuilder};
use super::codes::{code_named, code_numbered};
use super::config::ServiceConfig;
use super::error::{ConfigError, excerpt};

/// protobuf's largest `Duration`: 10,000 years of seconds.
const MAX_DURATION_SECONDS: u64 = 315_576_000_000;

impl ServiceConfig {
    /// Parses and validates a service config's JSON, with `maxAttempts`
    /// capped at 5 (see [`ServiceConfigBuilder::from_json`] to raise the
    /// cap). Errors name the field and the rule.
    ///
    /// ```
    /// use backoff_grpc::ServiceConfig;
    ///
    /// let error = ServiceConfig::from_json(r#"{"methodConfig": [{"name": [{}], "retryPolicy": {
    ///     "maxAttempts": 3, "initialBackoff": "100ms", "maxBackoff": "1s",
    ///     "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]}}]}"#).unwrap_err();
    /// assert_eq!(
    ///     error.to_string(),
    ///     r#"methodConfig[0].retryPolicy.initialBackoff: must be a duration in seconds such as "0.1s", got "100ms""#
    /// );
    /// ```
    pub fn from_json(json: &str) -> Result<ServiceConfig, ConfigError> {
        ServiceConfigBuilder::from_json(json)?.build()
    }
}

/// [`ServiceConfig::from_json`] as `str::parse`.
///
/// ```
/// use backoff_grpc::ServiceConfig;
/// let config: ServiceConfig = r#"{"retryThrottling": {"maxTokens": 10, "tokenRatio": 0.1}}"#.parse().unwrap();
/// assert!(config.retry_throttling().is_some());
/// ```
impl FromStr for ServiceConfig {
    type Err = ConfigError;

    fn from_str(json: &str) -> Result<Self, Self::Err> {
        ServiceConfig::from_json(json)
    }
}

/// A service config inside a configuration file of your own, in any
/// format serde reads (the default cap on `maxAttempts`).
///
/// ```
/// use backoff_grpc::ServiceConfig;
///
/// #[derive(serde::Deserialize)]
/// struct Settings {
///     endpoint: String,
///     service_config: ServiceConfig,
/// }
///
/// let settings: Settings = serde_json::from_str(r#"{
///     "endpoint": "http://[::1]:50051",
///     "service_config": {"retryThrottling": {"maxTokens": 10, "tokenRatio": 0.1}}
/// }"#).unwrap();
/// assert!(settings.service_config.retry_throttling().is_some());
/// # let _ = settings.endpoint;
/// ```
impl<'de> serde::Deserialize<'de> for ServiceConfig {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let document = Value::deserialize(deserializer)?;
        read_document(&document)
            .and_then(ServiceConfigBuilder::build)
            .map_err(serde::de::Error::custom)
    }
}

impl ServiceConfigBuilder {
    /// A builder holding the config of `json`, to change before
    /// [`build`](Self::build) (a raised [`max_attempts_cap`](Self::max_attempts_cap),
    /// an entry added in code). Errors of the JSON's shape come here; the
    /// rules are checked by `build`.
    ///
    /// ```
    /// use backoff_grpc::ServiceConfigBuilder;
    /// let json = r#"{"methodConfig": [{"name": [{}], "retryPolicy": {"maxAttempts": 8,
    ///     "initialBackoff": "1s", "maxBackoff": "5s", "backoffMultiplier": 2,
    ///     "retryableStatusCodes": ["UNAVAILABLE"]}}]}"#;
    /// let config = ServiceConfigBuilder::from_json(json).unwrap().max_attempts_cap(10).build().unwrap();
    /// assert_eq!(config.retry_policy("/a.B/C").unwrap().max_attempts(), 8);
    /// ```
    pub fn from_json(json: &str) -> Result<ServiceConfigBuilder, ConfigError> {
        let document: Value =
            serde_json::from_str(json).map_err(|error| ConfigError::new("", format!("not JSON: {error}")))?;
        read_document(&document)
    }
}

/// The builder of a whole document.
fn read_document(document: &Value) -> Result<ServiceConfigBuilder, ConfigError> {
    let root = object(document, "")?;
    let mut builder = ServiceConfig::builder();
    if let Some(entries) = field(root, "methodConfig") {
        for (index, entry) in array(entries, "methodConfig")?.iter().enumerate() {
            builder = builder.method_config(read_method_config(entry, &format!("methodConfig[{index}]"))?);
        }
    }
    if let Some(throttling) = field(root, "retryThrottling") {
        let at = "retryThrottling";
        let throttling = object(throttling, at)?;
        let max_tokens = required(throttling, "maxTokens", at)?;
        let range = "must be from 1 to 1000";
        let max_tokens = whole_number(max_tokens, "retryThrottling.maxTokens", range, 1000, range)?;
        let token_ratio = number(required(throttling, "tokenRatio", at)?, "retryThrottling.tokenRatio")?;
        builder = builder.retry_throttling(max_tokens, token_ratio);
    }
    Ok(builder)
}

/// One `methodConfig` entry, at `at`.
fn read_method_config(entry: &Value, at: &str) -> Result<MethodConfigSpec, ConfigError> {
    let entry = object(entry, at)?;
    let mut spec = MethodConfigSpec::new();
    if let Some(names) = field(entry, "name") {
        let at = format!("{at}.name");
        for (position, name) in array(names, &at)?.iter().enumerate() {
            let at = format!("{at}[{position}]");
            let name = object(name, &at)?;
            let part = |key: &str| match field(name, key) {
                Some(value) => string(value, &format!("{at}.{key}")).map(str::to_owned),
                None => Ok(String::new()),
            };
            spec = spec.name(part("service")?, part("method")?);
        }
    }
    if let Some(timeout) = field(entry, "timeout") {
        let at = format!("{at}.timeout");
        match duration(timeout, &at)? {
            Signed::Positive(timeout) => spec = spec.timeout(timeout),
            Signed::Negative(text) => return Err(ConfigError::new(at, format!("must not be negative, got {text}"))),
        }
    }
    if let Some(policy) = field(entry, "retryPolicy") {
        spec = spec.retry_policy(read_retry_policy(policy, &format!("{at}.retryPolicy"))?);
    }
    if let Some(policy) = field(entry, "hedgingPolicy") {
        spec = spec.hedging_policy(read_hedging_policy(policy, &format!("{at}.hedgingPolicy"))?);
    }
    Ok(spec)
}

/// A `hedgingPolicy`, at `at`.
fn read_hedging_policy(policy: &Value, at: &str) -> Result<HedgingPolicySpec, ConfigError> {
    let policy = object(policy, at)?;
    let path = |key: &str| format!("{at}.{key}");
    let mut spec = HedgingPolicySpec::new();
    if let Some(attempts) = field(policy, "maxAttempts") {
        spec = spec.max_attempts(max_attempts(attempts, &path("maxAttempts"))?);
    }
    if let Some(delay) = field(policy, "hedgingDelay") {
        match duration(delay, &path("hedgingDelay"))? {
            Signed::Positive(delay) => spec = spec.hedging_delay(delay),
            Signed::Negative(text) => {
                return Err(ConfigError::new(
                    path("hedgingDelay"),
                    format!("must not be negative, got {text}"),
                ));
            }
        }
    }
    if let Some(codes) = field(policy, "nonFatalStatusCodes") {
        spec = spec.non_fatal_status_codes(status_codes(codes, &path("nonFatalStatusCodes"))?);
    }
    Ok(spec)
}

/// A `retryPolicy`, at `at`. Absent fields stay unset: the builder says
/// they are required.
fn read_retry_policy(policy: &Value, at: &str) -> Result<RetryPolicySpec, ConfigError> {
    let policy = object(policy, at)?;
    let path = |key: &str| format!("{at}.{key}");
    let mut spec = RetryPolicySpec::new().codes_required();
    if let Some(attempts) = field(policy, "maxAttempts") {
        spec = spec.max_attempts(max_attempts(attempts, &path("maxAttempts"))?);
    }
    for (key, set) in [
        (
            "initialBackoff",
            RetryPolicySpec::initial_backoff as fn(RetryPolicySpec, Duration) -> RetryPolicySpec,
        ),
        ("maxBackoff", RetryPolicySpec::max_backoff),
    ] {
        if let Some(wait) = field(policy, key) {
            match duration(wait, &path(key))? {
                Signed::Positive(wait) => spec = set(spec, wait),
                Signed::Negative(text) => {
                    return Err(ConfigError::new(
                        path(key),
                        format!("must be greater than 0, got {text}"),
                    ));
                }
            }
        }
    }
    if let Some(multiplier) = field(policy, "backoffMultiplier") {
        spec = spec.backoff_multiplier(number(multiplier, &path("backoffMultiplier"))?);
    }
    if let Some(codes) = field(policy, "retryableStatusCodes") {
        spec = spec.retryable_status_codes(status_codes(codes, &path("retryableStatusCodes"))?);
    }
    Ok(spec)
}

/// A list of status codes, at `at`.
fn status_codes(codes: &Value, at: &str) -> Result<Vec<Code>, ConfigError> {
    array(codes, at)?
        .iter()
        .enumerate()
        .map(|(position, code)| status_code(code, &format!("{at}[{position}]")))
        .collect()
}

/// A field's value; `null` counts as absent.
fn field<'a>(object: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    object.get(key).filter(|value| !value.is_null())
}

fn required<'a>(object: &'a Map<String, Value>, key: &str, at: &str) -> Result<&'a Value, ConfigError> {
    field(object, key).ok_or_else(|| ConfigError::new(format!("{at}.{key}"), "is required"))
}

/// `value` as JSON writes it, for the errors: a short prefix only.
fn shown(value: &Value) -> String {
    excerpt(&value.to_string())
}

fn object<'a>(value: &'a Value, at: &str) -> Result<&'a Map<String, Value>, ConfigError> {
    value.as_object().ok_or_else(|| {
        let what = if at.is_empty() { "a service config" } else { "it" };
        ConfigError::new(at, format!("{what} must be a JSON object, got {}", shown(value)))
    })
}

fn array<'a>(value: &'a Value, at: &str) -> Result<&'a Vec<Value>, ConfigError> {
    value
        .as_array()
        .ok_or_else(|| ConfigError::new(at, format!("must be a list, got {}", shown(value))))
}

fn string<'a>(value: &'a Value, at: &str) -> Result<&'a str, ConfigError> {
    value
        .as_str()
        .ok_or_else(|| ConfigError::new(at, format!("must be a string, got {}", shown(value))))
}

fn number(value: &Value, at: &str) -> Result<f64, ConfigError> {
    value
        .as_f64()
        .ok_or_else(|| ConfigError::new(at, format!("must be a number, got {}", shown(value))))
}

/// A whole number (`3` or `3.0`) from 0 to `most`: a negative one breaks
/// `range` (the field's rule), a larger one `above` (its upper bound).
/// Both errors quote the value as written.
fn whole_number(value: &Value, at: &str, range: &str, most: u32, above: &str) -> Result<u32, ConfigError> {
    let number = number(value, at)?;
    if number.fract() != 0.0 {
        return Err(ConfigError::new(
            at,
            format!("must be a whole number, got {}", shown(value)),
        ));
    }
    if number < 0.0 {
        return Err(ConfigError::new(at, format!("{range}, got {}", shown(value))));
    }
    if number > f64::from(most) {
        return Err(ConfigError::new(at, format!("{above}, got {}", shown(value))));
    }
    // Whole, and from 0 to `most`: the cast is exact.
    Ok(number as u32)
}

/// The largest `maxAttempts`: gRPC's clients read it as a 32-bit integer
/// (grpc-java refuses a larger one).
const MOST_ATTEMPTS: u32 = i32::MAX as u32;

/// A `maxAttempts`, at `at`.
fn max_attempts(value: &Value, at: &str) -> Result<u32, ConfigError> {
    let above = format!("must be at most {MOST_ATTEMPTS} (a 32-bit integer, as gRPC's clients read it)");
    whole_number(value, at, "must be at least 2", MOST_ATTEMPTS, &above)
}

/// A duration's sign: `std`'s `Duration` holds no negative one.
enum Signed {
    Positive(Duration),
    /// A negative duration, as written.
    Negative(String),
}

/// A protobuf JSON duration: a string of seconds with up to nine decimals
/// and an `s` (`"0.1s"`, `"5s"`, `"-1.5s"`).
fn duration(value: &Value, at: &str) -> Result<Signed, ConfigError> {
    let malformed = || {
        ConfigError::new(
            at,
            format!("must be a duration in seconds such as \"0.1s\", got {}", shown(value)),
        )
    };
    let text = value.as_str().ok_or_else(malformed)?;
    let (negative, unsigned) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let seconds_text = unsigned.strip_suffix('s').ok_or_else(malformed)?;
    let (whole, fraction) = seconds_text.split_once('.').unwrap_or((seconds_text, ""));
    let digits = |part: &str| part.bytes().all(|byte| byte.is_ascii_digit());
    let well_formed = !whole.is_empty()
        && digits(whole)
        && digits(fraction)
        && fraction.len() <= 9
        && (fraction.is_empty() != seconds_text.contains('.'));
    if !well_formed {
        return Err(malformed());
    }
    // Digits only: a parse fails only past `u64::MAX`, too large as well.
    let seconds = whole.parse::<u64>().unwrap_or(u64::MAX);
    if seconds > MAX_DURATION_SECONDS {
        return Err(ConfigError::new(
            at,
            format!(
                "must be at most {MAX_DURATION_SECONDS}s (protobuf's largest duration), got {}",
                excerpt(text)
            ),
        ));
    }
    let nanos: u32 = if fraction.is_empty() {
        0
    } else {
        format!("{fraction:0<9}").parse().map_err(|_| malformed())?
    };
    let duration = Duration::new(seconds, nanos);
    Ok(if negative && !duration.is_zero() {
        Signed::Negative(excerpt(text))
    } else {
        Signed::Positive(duration)
    })
}

/// A status code: its name (`"UNAVAILABLE"`) or its number (`14`).
fn status_code(value: &Value, at: &str) -> Result<Code, ConfigError> {
    if let Some(name) = value.as_str() {
        return code_named(name).ok_or_else(|| {
            let upper = name.to_ascii_uppercase();
            let hint = match code_named(&upper) {
                Some(_) => format!(" (did you mean \"{upper}\"?)"),
                None => " (a name such as \"UNAVAILABLE\", or a number from 0 to 16)".to_owned(),
            };
            ConfigError::new(at, format!("unknown status code {}{hint}", shown(value)))
        });
    }
    let number = value.as_f64().ok_or_else(|| {
        ConfigError::new(
            at,
            format!("must be a status code's name or number, got {}", shown(value)),
        )
    })?;
    let whole = (number.fract() == 0.0).then_some(number as i64);
    whole
        .and_then(code_numbered)
        .ok_or_else(|| ConfigError::new(at, format!("unknown status code {} (codes are 0 to 16)", shown(value))))
}

#[cfg(test)]
mod tests;
