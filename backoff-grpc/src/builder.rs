//! `ServiceConfigBuilder`: a service config written in code.
//!
//! A service config written in code, entry by
//! entry as the JSON has them ([`MethodConfigSpec`], [`RetryPolicySpec`]),
//! and the one place the rules are checked (the JSON is read into a
//! builder too).

use core::time::Duration;
use std::collections::HashMap;
use std::collections::hash_map::Entry;

use tonic::Code;

use super::codes::{CodeSet, name_of};
use super::config::{HedgingPolicy, MethodConfig, RetryPolicy, RetryThrottling, ServiceConfig};
use super::error::{ConfigError, excerpt};
use backoff_runtime::limits::RetryThrottle;
use backoff_runtime::{Jitter, Policy};

/// The cap on `maxAttempts` of grpc-go, grpc-java and grpc-dotnet.
const DEFAULT_MAX_ATTEMPTS_CAP: u32 = 5;

/// A service config built in code: the same entries, names, rules and
/// errors as the JSON ([`ServiceConfig::from_json`] reads its JSON into
/// one of these).
///
/// ```
/// use backoff_grpc::{MethodConfigSpec, RetryPolicySpec, ServiceConfig};
/// use std::time::Duration;
/// use tonic::Code;
///
/// let config = ServiceConfig::builder()
///     .method_config(
///         MethodConfigSpec::new()
///             .name("helloworld.Greeter", "SayHello")
///             .retry_policy(
///                 RetryPolicySpec::new()
///                     .max_attempts(4)
///                     .initial_backoff(Duration::from_millis(100))
///                     .max_backoff(Duration::from_secs(1))
///                     .backoff_multiplier(2.0)
///                     .retryable_status_codes([Code::Unavailable]),
///             ),
///     )
///     .method_config(MethodConfigSpec::new().every_method().timeout(Duration::from_secs(10)))
///     .retry_throttling(10, 0.1)
///     .build()
///     .unwrap();
/// assert_eq!(config.retry_policy("/helloworld.Greeter/SayHello").unwrap().max_attempts(), 4);
/// assert!(config.retry_policy("/helloworld.Greeter/SayGoodbye").is_none());
/// ```
#[derive(Clone, Debug)]
pub struct ServiceConfigBuilder {
    entries: Vec<MethodConfigSpec>,
    throttling: Option<(u32, f64)>,
    max_attempts_cap: u32,
}

impl ServiceConfig {
    /// A service config in code: see [`ServiceConfigBuilder`].
    ///
    /// ```
    /// use backoff_grpc::ServiceConfig;
    /// let empty = ServiceConfig::builder().build().unwrap();
    /// assert!(empty.method_config("/a.B/C").is_none());
    /// ```
    #[must_use]
    pub fn builder() -> ServiceConfigBuilder {
        ServiceConfigBuilder {
            entries: Vec::new(),
            throttling: None,
            max_attempts_cap: DEFAULT_MAX_ATTEMPTS_CAP,
        }
    }
}

impl ServiceConfigBuilder {
    /// Adds a `methodConfig` entry (its index in errors is the order of
    /// these calls, from 0).
    ///
    /// ```
    /// use backoff_grpc::{MethodConfigSpec, ServiceConfig};
    /// use std::time::Duration;
    /// let config = ServiceConfig::builder()
    ///     .method_config(MethodConfigSpec::new().service("shop.Cart").timeout(Duration::from_secs(2)))
    ///     .build()
    ///     .unwrap();
    /// assert!(config.method_config("/shop.Cart/Checkout").is_some());
    /// ```
    #[must_use]
    pub fn method_config(mut self, entry: MethodConfigSpec) -> Self {
        self.entries.push(entry);
        self
    }

    /// Sets `retryThrottling`: a bucket of `max_tokens` (from 1 to 1000)
    /// that each success refills by `token_ratio` (above 0, at most 1000,
    /// kept to three decimals).
    ///
    /// ```
    /// use backoff_grpc::ServiceConfig;
    /// let config = ServiceConfig::builder().retry_throttling(10, 0.1).build().unwrap();
    /// assert_eq!(config.retry_throttling().unwrap().token_ratio(), 0.1);
    /// ```
    #[must_use]
    pub fn retry_throttling(mut self, max_tokens: u32, token_ratio: f64) -> Self {
        self.throttling = Some((max_tokens, token_ratio));
        self
    }

    /// Raises (or lowers) the cap on `maxAttempts`: 5 by default, as in
    /// grpc-go, grpc-java and grpc-dotnet, whose channels let the client
    /// raise it on purpose. A larger `maxAttempts` is treated as the cap;
    /// the cap must be at least 2.
    ///
    /// ```
    /// use backoff_grpc::{MethodConfigSpec, RetryPolicySpec, ServiceConfig};
    /// use std::time::Duration;
    /// use tonic::Code;
    ///
    /// let eight = RetryPolicySpec::new()
    ///     .max_attempts(8)
    ///     .initial_backoff(Duration::from_secs(1))
    ///     .max_backoff(Duration::from_secs(5))
    ///     .backoff_multiplier(2.0)
    ///     .retryable_status_codes([Code::Unavailable]);
    /// let entry = MethodConfigSpec::new().every_method().retry_policy(eight);
    /// let default_cap = ServiceConfig::builder().method_config(entry.clone()).build().unwrap();
    /// assert_eq!(default_cap.retry_policy("/a.B/C").unwrap().max_attempts(), 5);
    /// let raised = ServiceConfig::builder().method_config(entry).max_attempts_cap(10).build().unwrap();
    /// assert_eq!(raised.retry_policy("/a.B/C").unwrap().max_attempts(), 8);
    /// ```
    #[must_use]
    pub fn max_attempts_cap(mut self, cap: u32) -> Self {
        self.max_attempts_cap = cap;
        self
    }

    /// The validated config, or the first rule broken (in the order of the
    /// entries, and of the fields within each as grpc-java checks them).
    ///
    /// ```
    /// use backoff_grpc::{MethodConfigSpec, ServiceConfig};
    /// let twice = ServiceConfig::builder()
    ///     .method_config(MethodConfigSpec::new().service("shop.Cart"))
    ///     .method_config(MethodConfigSpec::new().service("shop.Cart"))
    ///     .build()
    ///     .unwrap_err();
    /// assert_eq!(twice.to_string(), r#"methodConfig[1].name[0]: duplicate name "shop.Cart" (also methodConfig[0].name[0])"#);
    /// ```
    pub fn build(self) -> Result<ServiceConfig, ConfigError> {
        if self.max_attempts_cap < 2 {
            return Err(ConfigError::new(
                "maxAttemptsCap",
                format!("must be at least 2, got {}", self.max_attempts_cap),
            ));
        }
        let mut config = ServiceConfig::default();
        // Where each name was first given, for the duplicate's error.
        let mut named: HashMap<String, String> = HashMap::new();
        for (index, entry) in self.entries.into_iter().enumerate() {
            let at = format!("methodConfig[{index}]");
            let method = entry.validate(&at, self.max_attempts_cap)?;
            for (position, name) in entry.names.iter().enumerate() {
                let here = format!("{at}.name[{position}]");
                let scope = Scope::of(name, &here)?;
                match named.entry(scope.key()) {
                    Entry::Occupied(first) => {
                        return Err(ConfigError::new(
                            here,
                            format!("duplicate {} (also {})", scope.describe(), first.get()),
                        ));
                    }
                    Entry::Vacant(slot) => {
                        slot.insert(here);
                    }
                }
                match scope {
                    Scope::Method(path) => config.methods.insert(path, method.clone()),
                    Scope::Service(service) => config.services.insert(service, method.clone()),
                    Scope::Every => config.every_method.replace(method.clone()),
                };
            }
        }
        if let Some((max_tokens, token_ratio)) = self.throttling {
            config.throttling = Some(throttling(max_tokens, token_ratio)?);
        }
        Ok(config)
    }
}

/// What one `name` matches.
enum Scope {
    /// One method: its full path, `/package.Service/Method`.
    Method(String),
    /// Every method of a service.
    Service(String),
    /// Every method (`{}`).
    Every,
}

impl Scope {
    /// The scope of `name` (`service`, `method`; an empty string is an
    /// absent field, as gRPC reads it).
    /// A part with a `/` matches no call (a path is `/service/method`).
    fn of((service, method): &(String, String), at: &str) -> Result<Scope, ConfigError> {
        for (part, key) in [(service, "service"), (method, "method")] {
            if part.contains('/') {
                return Err(ConfigError::new(
                    format!("{at}.{key}"),
                    format!(
                        "must not contain '/' (a call's path is /service/method), got \"{}\"",
                        excerpt(part)
                    ),
                ));
            }
        }
        match (service.is_empty(), method.is_empty()) {
            (true, true) => Ok(Scope::Every),
            (true, false) => Err(ConfigError::new(
                at,
                format!(
                    "method \"{}\" needs its service (an empty name is written {{}})",
                    excerpt(method)
                ),
            )),
            (false, true) => Ok(Scope::Service(service.clone())),
            (false, false) => Ok(Scope::Method(format!("/{service}/{method}"))),
        }
    }

    /// One key per scope, for the duplicates.
    fn key(&self) -> String {
        match self {
            Scope::Method(path) => path.clone(),
            Scope::Service(service) => service.clone(),
            Scope::Every => String::new(),
        }
    }

    fn describe(&self) -> String {
        match self {
            Scope::Method(path) => format!("name \"{}\"", excerpt(path.trim_start_matches('/'))),
            Scope::Service(service) => format!("name \"{}\"", excerpt(service)),
            Scope::Every => "default name {}".to_owned(),
        }
    }
}

/// The validated `retryThrottling`.
fn throttling(max_tokens: u32, token_ratio: f64) -> Result<RetryThrottling, ConfigError> {
    if max_tokens == 0 || max_tokens > 1000 {
        return Err(ConfigError::new(
            "retryThrottling.maxTokens",
            format!("must be from 1 to 1000, got {max_tokens}"),
        ));
    }
    if token_ratio.is_nan() || token_ratio <= 0.0 {
        return Err(ConfigError::new(
            "retryThrottling.tokenRatio",
            format!("must be greater than 0, got {}", excerpt(&token_ratio.to_string())),
        ));
    }
    match RetryThrottle::try_new(max_tokens, token_ratio) {
        Ok(throttle) => Ok(RetryThrottling {
            max_tokens,
            token_ratio: throttle.get_token_ratio(),
        }),
        Err(_) => Err(ConfigError::new(
            "retryThrottling.tokenRatio",
            format!(
                "must be from 0.001 to 1000 (three decimal places are kept), got {}",
                excerpt(&token_ratio.to_string())
            ),
        )),
    }
}

/// One `methodConfig` entry as written: the names it applies to, and its
/// `retryPolicy` and `timeout`. An entry with no name applies to no
/// method (as in grpc-java and grpc-go), but is still checked.
///
/// ```
/// use backoff_grpc::{MethodConfigSpec, ServiceConfig};
/// use std::time::Duration;
///
/// let entry = MethodConfigSpec::new()
///     .name("shop.Cart", "Checkout")
///     .name("shop.Cart", "Pay")
///     .timeout(Duration::from_secs(30));
/// let config = ServiceConfig::builder().method_config(entry).build().unwrap();
/// assert!(config.method_config("/shop.Cart/Pay").is_some());
/// assert!(config.method_config("/shop.Cart/AddItem").is_none());
/// ```
#[derive(Clone, Debug, Default)]
pub struct MethodConfigSpec {
    /// Each name's `service` and `method` (empty when absent).
    names: Vec<(String, String)>,
    retry_policy: Option<RetryPolicySpec>,
    hedging_policy: Option<HedgingPolicySpec>,
    timeout: Option<Duration>,
}

impl MethodConfigSpec {
    /// An entry with no name, no retry policy and no timeout.
    ///
    /// ```
    /// let entry = backoff_grpc::MethodConfigSpec::new();
    /// # let _ = entry;
    /// ```
    #[must_use]
    pub fn new() -> Self {
        MethodConfigSpec::default()
    }

    /// Applies the entry to one method: `{"service": service, "method": method}`.
    ///
    /// ```
    /// let entry = backoff_grpc::MethodConfigSpec::new().name("helloworld.Greeter", "SayHello");
    /// # let _ = entry;
    /// ```
    #[must_use]
    pub fn name(mut self, service: impl Into<String>, method: impl Into<String>) -> Self {
        self.names.push((service.into(), method.into()));
        self
    }

    /// Applies the entry to every method of `service` that no entry names:
    /// `{"service": service}`.
    ///
    /// ```
    /// let entry = backoff_grpc::MethodConfigSpec::new().service("helloworld.Greeter");
    /// # let _ = entry;
    /// ```
    #[must_use]
    pub fn service(self, service: impl Into<String>) -> Self {
        self.name(service, "")
    }

    /// Applies the entry to every method no other entry names, of every
    /// service: `{}`, the default.
    ///
    /// ```
    /// let entry = backoff_grpc::MethodConfigSpec::new().every_method();
    /// # let _ = entry;
    /// ```
    #[must_use]
    pub fn every_method(self) -> Self {
        self.name("", "")
    }

    /// Sets the entry's `retryPolicy`.
    ///
    /// ```
    /// use backoff_grpc::{MethodConfigSpec, RetryPolicySpec};
    /// let entry = MethodConfigSpec::new().every_method().retry_policy(RetryPolicySpec::new().max_attempts(3));
    /// # let _ = entry;
    /// ```
    #[must_use]
    pub fn retry_policy(mut self, policy: RetryPolicySpec) -> Self {
        self.retry_policy = Some(policy);
        self
    }

    /// Sets the entry's `hedgingPolicy` (a method has a `retryPolicy` or a
    /// `hedgingPolicy`: both is a config error).
    ///
    /// ```
    /// use backoff_grpc::{HedgingPolicySpec, MethodConfigSpec};
    /// use std::time::Duration;
    /// let entry = MethodConfigSpec::new()
    ///     .every_method()
    ///     .hedging_policy(HedgingPolicySpec::new().max_attempts(3).hedging_delay(Duration::from_millis(5)));
    /// # let _ = entry;
    /// ```
    #[must_use]
    pub fn hedging_policy(mut self, policy: HedgingPolicySpec) -> Self {
        self.hedging_policy = Some(policy);
        self
    }

    /// Sets the entry's `timeout`: the call's deadline when the caller set
    /// none.
    ///
    /// ```
    /// use std::time::Duration;
    /// let entry = backoff_grpc::MethodConfigSpec::new().timeout(Duration::from_secs(5));
    /// # let _ = entry;
    /// ```
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// The validated entry, at `at` (`methodConfig[i]`).
    fn validate(&self, at: &str, max_attempts_cap: u32) -> Result<MethodConfig, ConfigError> {
        let retry_policy = match &self.retry_policy {
            Some(spec) => Some(spec.validate(&format!("{at}.retryPolicy"), max_attempts_cap)?),
            None => None,
        };
        let hedging_policy = match &self.hedging_policy {
            Some(_) if retry_policy.is_some() => {
                return Err(ConfigError::new(
                    format!("{at}.hedgingPolicy"),
                    "must not be set with retryPolicy: a method retries or hedges, not both (gRPC's A6)".to_owned(),
                ));
            }
            Some(spec) => Some(spec.validate(&format!("{at}.hedgingPolicy"), max_attempts_cap)?),
            None => None,
        };
        Ok(MethodConfig {
            retry_policy,
            hedging_policy,
            timeout: self.timeout,
        })
    }
}

/// A `retryPolicy` as written: every field is required, as gRPC's clients
/// require them.
///
/// The rules (grpc-java's, in its order): `maxAttempts` at least 2 (the
/// first attempt included; above the cap, 5 by default, it counts as the
/// cap); `initialBackoff` and `maxBackoff` above 0; `backoffMultiplier`
/// above 0, and here at least 1 (the crate's backoff never shrinks);
/// `retryableStatusCodes` not empty and without `OK`.
///
/// ```
/// use backoff_grpc::{MethodConfigSpec, RetryPolicySpec, ServiceConfig};
/// use std::time::Duration;
/// use tonic::Code;
///
/// let missing = RetryPolicySpec::new().max_attempts(3).initial_backoff(Duration::from_millis(100));
/// let error = ServiceConfig::builder()
///     .method_config(MethodConfigSpec::new().every_method().retry_policy(missing))
///     .build()
///     .unwrap_err();
/// assert_eq!(error.to_string(), "methodConfig[0].retryPolicy.maxBackoff: is required");
/// ```
#[derive(Clone, Debug, Default)]
pub struct RetryPolicySpec {
    max_attempts: Option<u32>,
    initial_backoff: Option<Duration>,
    max_backoff: Option<Duration>,
    backoff_multiplier: Option<f64>,
    retryable_status_codes: Option<Vec<Code>>,
    /// Read from JSON, where gRPC's clients require the codes.
    codes_required: bool,
}

impl RetryPolicySpec {
    /// A policy with no field set yet.
    ///
    /// ```
    /// let spec = backoff_grpc::RetryPolicySpec::new();
    /// # let _ = spec;
    /// ```
    #[must_use]
    pub fn new() -> Self {
        RetryPolicySpec::default()
    }

    /// The same, read from JSON: `retryableStatusCodes` is then required.
    pub(super) fn codes_required(mut self) -> Self {
        self.codes_required = true;
        self
    }

    /// `maxAttempts`: the attempts a call may make, the first included.
    ///
    /// ```
    /// let spec = backoff_grpc::RetryPolicySpec::new().max_attempts(4);
    /// # let _ = spec;
    /// ```
    #[must_use]
    pub fn max_attempts(mut self, attempts: u32) -> Self {
        self.max_attempts = Some(attempts);
        self
    }

    /// `initialBackoff`: the wait before the first retry, before jitter.
    ///
    /// ```
    /// use std::time::Duration;
    /// let spec = backoff_grpc::RetryPolicySpec::new().initial_backoff(Duration::from_millis(100));
    /// # let _ = spec;
    /// ```
    #[must_use]
    pub fn initial_backoff(mut self, wait: Duration) -> Self {
        self.initial_backoff = Some(wait);
        self
    }

    /// `maxBackoff`: the cap on every wait.
    ///
    /// ```
    /// use std::time::Duration;
    /// let spec = backoff_grpc::RetryPolicySpec::new().max_backoff(Duration::from_secs(1));
    /// # let _ = spec;
    /// ```
    #[must_use]
    pub fn max_backoff(mut self, wait: Duration) -> Self {
        self.max_backoff = Some(wait);
        self
    }

    /// `backoffMultiplier`: the growth of the wait per retry.
    ///
    /// ```
    /// let spec = backoff_grpc::RetryPolicySpec::new().backoff_multiplier(2.0);
    /// # let _ = spec;
    /// ```
    #[must_use]
    pub fn backoff_multiplier(mut self, multiplier: f64) -> Self {
        self.backoff_multiplier = Some(multiplier);
        self
    }

    /// `retryableStatusCodes`: the codes whose failures are retried.
    /// Required in JSON, as gRPC's clients require it; a policy built in
    /// code without it retries `UNAVAILABLE`, and a `RESOURCE_EXHAUSTED`
    /// that carries a `RetryInfo`
    /// ([`RetryPolicy::retries_exhausted_with_retry_info`]).
    ///
    /// ```
    /// use tonic::Code;
    /// let spec = backoff_grpc::RetryPolicySpec::new()
    ///     .retryable_status_codes([Code::Unavailable, Code::ResourceExhausted]);
    /// # let _ = spec;
    /// ```
    #[must_use]
    pub fn retryable_status_codes(mut self, codes: impl IntoIterator<Item = Code>) -> Self {
        self.retryable_status_codes = Some(codes.into_iter().collect());
        self
    }

    /// The validated policy, at `at` (`methodConfig[i].retryPolicy`).
    fn validate(&self, at: &str, max_attempts_cap: u32) -> Result<RetryPolicy, ConfigError> {
        let field = |name: &str, message: String| ConfigError::new(format!("{at}.{name}"), message);
        let required = |name: &str| field(name, "is required".to_owned());

        let max_attempts = self.max_attempts.ok_or_else(|| required("maxAttempts"))?;
        if max_attempts < 2 {
            return Err(field("maxAttempts", format!("must be at least 2, got {max_attempts}")));
        }
        let max_attempts = max_attempts.min(max_attempts_cap);
        let initial_backoff = self.initial_backoff.ok_or_else(|| required("initialBackoff"))?;
        if initial_backoff.is_zero() {
            return Err(field("initialBackoff", "must be greater than 0, got 0s".to_owned()));
        }
        let max_backoff = self.max_backoff.ok_or_else(|| required("maxBackoff"))?;
        if max_backoff.is_zero() {
            return Err(field("maxBackoff", "must be greater than 0, got 0s".to_owned()));
        }
        let multiplier = self.backoff_multiplier.ok_or_else(|| required("backoffMultiplier"))?;
        if multiplier.is_nan() || multiplier <= 0.0 || multiplier.is_infinite() {
            return Err(field(
                "backoffMultiplier",
                format!(
                    "must be a number greater than 0, got {}",
                    excerpt(&multiplier.to_string())
                ),
            ));
        }
        if multiplier < 1.0 {
            return Err(field(
                "backoffMultiplier",
                format!(
                    "must be at least 1 (this crate's backoff never shrinks), got {}",
                    excerpt(&multiplier.to_string())
                ),
            ));
        }
        let (codes, exhausted_with_retry_info) = match self.retryable_status_codes.as_ref() {
            Some(listed) => (listed_codes(listed, field)?, false),
            None if self.codes_required => return Err(required("retryableStatusCodes")),
            None => {
                let mut codes = CodeSet::default();
                codes.insert(Code::Unavailable);
                (codes, true)
            }
        };
        let policy = Policy::new()
            .try_max_retries(max_attempts - 1)
            // gRPC takes an initialBackoff above maxBackoff (every wait is
            // then the cap); a policy refuses the pair, so the first wait is
            // given as the cap it is.
            .and_then(|policy| policy.try_initial_backoff(initial_backoff.min(max_backoff)))
            .and_then(|policy| policy.try_max_backoff(max_backoff))
            .and_then(|policy| policy.try_multiplier(multiplier))
            .map_err(|error| ConfigError::new(at, error.to_string()))?
            .jitter(Jitter::Grpc);
        Ok(RetryPolicy {
            max_attempts,
            policy,
            codes,
            exhausted_with_retry_info,
        })
    }
}

/// A `hedgingPolicy` as written (gRPC's A6): `maxAttempts` is required
/// (at least 2, the first attempt included; above the cap, 5 by default, it
/// counts as the cap); `hedgingDelay` is optional (absent or 0: every
/// attempt at once); `nonFatalStatusCodes` is optional and may be empty
/// (then every failure is fatal), but never holds `OK`.
///
/// ```
/// use backoff_grpc::{HedgingPolicySpec, MethodConfigSpec, ServiceConfig};
/// use std::time::Duration;
/// use tonic::Code;
///
/// let spec = HedgingPolicySpec::new()
///     .max_attempts(3)
///     .hedging_delay(Duration::from_millis(5))
///     .non_fatal_status_codes([Code::Unavailable]);
/// let config = ServiceConfig::builder()
///     .method_config(MethodConfigSpec::new().every_method().hedging_policy(spec))
///     .build()
///     .unwrap();
/// let hedging = config.method_config("/a.B/C").unwrap().hedging_policy().unwrap();
/// assert_eq!(hedging.max_attempts(), 3);
/// ```
#[derive(Clone, Debug, Default)]
pub struct HedgingPolicySpec {
    max_attempts: Option<u32>,
    hedging_delay: Option<Duration>,
    non_fatal_status_codes: Vec<Code>,
}

impl HedgingPolicySpec {
    /// A policy with no field set yet.
    ///
    /// ```
    /// let spec = backoff_grpc::HedgingPolicySpec::new();
    /// # let _ = spec;
    /// ```
    #[must_use]
    pub fn new() -> Self {
        HedgingPolicySpec::default()
    }

    /// `maxAttempts`: the attempts a call may make, the first included.
    ///
    /// ```
    /// let spec = backoff_grpc::HedgingPolicySpec::new().max_attempts(3);
    /// # let _ = spec;
    /// ```
    #[must_use]
    pub fn max_attempts(mut self, attempts: u32) -> Self {
        self.max_attempts = Some(attempts);
        self
    }

    /// `hedgingDelay`: how long without an answer before the next hedge.
    ///
    /// ```
    /// use std::time::Duration;
    /// let spec = backoff_grpc::HedgingPolicySpec::new().hedging_delay(Duration::from_millis(5));
    /// # let _ = spec;
    /// ```
    #[must_use]
    pub fn hedging_delay(mut self, delay: Duration) -> Self {
        self.hedging_delay = Some(delay);
        self
    }

    /// `nonFatalStatusCodes`: the codes whose failures let the other hedges
    /// go on and send the next one at once.
    ///
    /// ```
    /// use tonic::Code;
    /// let spec = backoff_grpc::HedgingPolicySpec::new().non_fatal_status_codes([Code::Unavailable]);
    /// # let _ = spec;
    /// ```
    #[must_use]
    pub fn non_fatal_status_codes(mut self, codes: impl IntoIterator<Item = Code>) -> Self {
        self.non_fatal_status_codes = codes.into_iter().collect();
        self
    }

    /// The validated policy, at `at` (`methodConfig[i].hedgingPolicy`).
    fn validate(&self, at: &str, max_attempts_cap: u32) -> Result<HedgingPolicy, ConfigError> {
        let field = |name: &str, message: String| ConfigError::new(format!("{at}.{name}"), message);
        let max_attempts = self
            .max_attempts
            .ok_or_else(|| field("maxAttempts", "is required".to_owned()))?;
        if max_attempts < 2 {
            return Err(field("maxAttempts", format!("must be at least 2, got {max_attempts}")));
        }
        let mut codes = CodeSet::default();
        for (position, code) in self.non_fatal_status_codes.iter().enumerate() {
            if *code == Code::Ok {
                return Err(field(
                    &format!("nonFatalStatusCodes[{position}]"),
                    format!("must not be {} (a success is never a failure)", name_of(*code)),
                ));
            }
            codes.insert(*code);
        }
        Ok(HedgingPolicy {
            max_attempts: max_attempts.min(max_attempts_cap),
            hedging_delay: self.hedging_delay.unwrap_or(Duration::ZERO),
            codes,
        })
    }
}

/// The codes a `retryableStatusCodes` lists, checked as gRPC's clients
/// check them: not `OK`, not empty.
fn listed_codes(listed: &[Code], field: impl Fn(&str, String) -> ConfigError) -> Result<CodeSet, ConfigError> {
    let mut codes = CodeSet::default();
    for (position, code) in listed.iter().enumerate() {
        if *code == Code::Ok {
            return Err(field(
                &format!("retryableStatusCodes[{position}]"),
                format!("must not be {} (a success is never retried)", name_of(*code)),
            ));
        }
        codes.insert(*code);
    }
    if codes.is_empty() {
        return Err(field("retryableStatusCodes", "must not be empty".to_owned()));
    }
    Ok(codes)
}

#[cfg(test)]
mod tests;
