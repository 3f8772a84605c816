//! `ServiceConfig`: a validated service config.
//!
//! A validated service config, and each request's
//! [`MethodConfig`] by its path; [`RetryPolicy`] on the crate's
//! [`Policy`]; [`RetryThrottling`] on [`RetryThrottle`].

use core::time::Duration;
use std::collections::HashMap;

use tonic::Code;

use super::codes::CodeSet;
use backoff_runtime::Policy;
use backoff_runtime::limits::RetryThrottle;

/// A validated gRPC service config: the `methodConfig` entries by name and
/// the `retryThrottling`. Made from JSON ([`ServiceConfig::from_json`]) or
/// in code ([`ServiceConfig::builder`]); each request's config comes from
/// its path ([`method_config`](Self::method_config)).
///
/// ```
/// use backoff_grpc::ServiceConfig;
/// use std::time::Duration;
///
/// let config = ServiceConfig::from_json(r#"{
///     "methodConfig": [{
///         "name": [{"service": "helloworld.Greeter"}],
///         "timeout": "5s",
///         "retryPolicy": {
///             "maxAttempts": 4,
///             "initialBackoff": "0.1s",
///             "maxBackoff": "1s",
///             "backoffMultiplier": 2,
///             "retryableStatusCodes": ["UNAVAILABLE"]
///         }
///     }],
///     "retryThrottling": {"maxTokens": 10, "tokenRatio": 0.1}
/// }"#).unwrap();
///
/// let method = config.method_config("/helloworld.Greeter/SayHello").unwrap();
/// assert_eq!(method.timeout(), Some(Duration::from_secs(5)));
/// assert_eq!(method.retry_policy().unwrap().policy().get_max_retries(), 3);
/// assert!(config.method_config("/other.Service/Call").is_none());
/// assert_eq!(config.retry_throttling().unwrap().max_tokens(), 10);
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ServiceConfig {
    /// By full path, `/package.Service/Method`.
    pub(crate) methods: HashMap<String, MethodConfig>,
    /// By service, `package.Service`.
    pub(crate) services: HashMap<String, MethodConfig>,
    /// The entry named `{}`: every method of every service.
    pub(crate) every_method: Option<MethodConfig>,
    pub(crate) throttling: Option<RetryThrottling>,
}

impl ServiceConfig {
    /// The config of the request whose path is `path`
    /// (`/package.Service/Method`, a request URI's path): the entry that
    /// names the method, else the one that names its service, else the
    /// default (`"name": [{}]`), as gRPC's clients choose. The whole entry
    /// is chosen: a method's entry without a `retryPolicy` means no
    /// retries for that method, whatever its service's entry says.
    ///
    /// ```
    /// use backoff_grpc::ServiceConfig;
    /// use std::time::Duration;
    ///
    /// let config = ServiceConfig::from_json(r#"{"methodConfig": [
    ///     {"name": [{"service": "shop.Cart", "method": "Checkout"}], "timeout": "30s"},
    ///     {"name": [{"service": "shop.Cart"}], "timeout": "2s"},
    ///     {"name": [{}], "timeout": "10s"}
    /// ]}"#).unwrap();
    /// let timeout = |path| config.method_config(path).and_then(|method| method.timeout());
    /// assert_eq!(timeout("/shop.Cart/Checkout"), Some(Duration::from_secs(30)));
    /// assert_eq!(timeout("/shop.Cart/AddItem"), Some(Duration::from_secs(2)));
    /// assert_eq!(timeout("/shop.Catalog/List"), Some(Duration::from_secs(10)));
    /// ```
    #[must_use]
    pub fn method_config(&self, path: &str) -> Option<&MethodConfig> {
        lookup(&self.methods, &self.services, self.every_method.as_ref(), path)
    }

    /// The entries with `made` of each in place of the entry, found by path
    /// as [`method_config`](Self::method_config) finds them.
    pub(crate) fn map_entries<V>(&self, mut made: impl FnMut(&MethodConfig) -> V) -> ByPath<V> {
        let mut map = |entries: &HashMap<String, MethodConfig>| {
            let mut names: Vec<(Box<str>, V)> = entries
                .iter()
                .map(|(name, entry)| (Box::from(name.as_str()), made(entry)))
                .collect();
            names.sort_unstable_by(|(a, _), (b, _)| a.cmp(b));
            Names(names)
        };
        let methods = map(&self.methods);
        let services = map(&self.services);
        ByPath {
            methods,
            services,
            every_method: self.every_method.as_ref().map(made),
        }
    }

    /// The retry policy of the request whose path is `path`: that of its
    /// [`method_config`](Self::method_config), if it has one.
    ///
    /// ```
    /// use backoff_grpc::ServiceConfig;
    /// let config = ServiceConfig::from_json(r#"{"methodConfig": [{"name": [{}], "timeout": "1s"}]}"#).unwrap();
    /// assert!(config.retry_policy("/any.Service/Method").is_none());
    /// ```
    #[must_use]
    pub fn retry_policy(&self, path: &str) -> Option<&RetryPolicy> {
        self.method_config(path).and_then(MethodConfig::retry_policy)
    }

    /// The `retryThrottling` settings, if the config has them.
    ///
    /// ```
    /// use backoff_grpc::ServiceConfig;
    /// let config = ServiceConfig::from_json("{}").unwrap();
    /// assert!(config.retry_throttling().is_none());
    /// ```
    #[must_use]
    pub fn retry_throttling(&self) -> Option<&RetryThrottling> {
        self.throttling.as_ref()
    }
}

/// Values by the names of a service config's entries, found by path as
/// [`ServiceConfig::method_config`] finds its entries.
#[derive(Clone, Debug)]
pub(crate) struct ByPath<V> {
    methods: Names<V>,
    services: Names<V>,
    every_method: Option<V>,
}

/// Values by name, sorted by it: found by binary search, which for the
/// few names of a service config costs less than hashing the name.
#[derive(Clone, Debug)]
pub(crate) struct Names<V>(Vec<(Box<str>, V)>);

/// A table of values by name.
trait ByName<V> {
    /// The value named `name`.
    fn named(&self, name: &str) -> Option<&V>;
}

impl<V> ByName<V> for HashMap<String, V> {
    fn named(&self, name: &str) -> Option<&V> {
        self.get(name)
    }
}

impl<V> ByName<V> for Names<V> {
    #[inline]
    fn named(&self, name: &str) -> Option<&V> {
        let found = self.0.binary_search_by(|(entry, _)| (**entry).cmp(name)).ok()?;
        self.0.get(found).map(|(_, value)| value)
    }
}

impl<V> ByPath<V> {
    /// The value of the entry that names `path`'s method, else its
    /// service, else every method.
    pub(crate) fn get(&self, path: &str) -> Option<&V> {
        lookup(&self.methods, &self.services, self.every_method.as_ref(), path)
    }
}

/// The entry of `path`: the one that names the method, else its service,
/// else every method (gRPC's clients' order).
#[inline]
fn lookup<'a, V, T: ByName<V>>(
    methods: &'a T,
    services: &'a T,
    every_method: Option<&'a V>,
    path: &str,
) -> Option<&'a V> {
    methods
        .named(path)
        .or_else(|| service_of(path).and_then(|service| services.named(service)))
        .or(every_method)
}

/// The service of a gRPC path: `package.Service` of `/package.Service/Method`
/// (one pass over its bytes: a path is short).
fn service_of(path: &str) -> Option<&str> {
    let rest = path.strip_prefix('/')?;
    let slash = rest.bytes().position(|byte| byte == b'/')?;
    let (service, method) = (rest.get(..slash)?, rest.get(slash + 1..)?);
    (!service.is_empty() && !method.bytes().any(|byte| byte == b'/')).then_some(service)
}

/// One `methodConfig` entry, validated: its retry policy and its timeout.
///
/// ```
/// use backoff_grpc::ServiceConfig;
/// use std::time::Duration;
///
/// let config = ServiceConfig::from_json(r#"{"methodConfig": [{"name": [{}], "timeout": "1.5s"}]}"#).unwrap();
/// let method = config.method_config("/a.B/C").unwrap();
/// assert_eq!(method.timeout(), Some(Duration::from_millis(1500)));
/// assert!(method.retry_policy().is_none());
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MethodConfig {
    pub(crate) retry_policy: Option<RetryPolicy>,
    pub(crate) hedging_policy: Option<HedgingPolicy>,
    pub(crate) timeout: Option<Duration>,
}

impl MethodConfig {
    /// The entry's `retryPolicy`, if it has one (none: the method's calls
    /// are not retried).
    ///
    /// ```
    /// use backoff_grpc::ServiceConfig;
    /// let config = ServiceConfig::from_json(r#"{"methodConfig": [{"name": [{}]}]}"#).unwrap();
    /// assert!(config.method_config("/a.B/C").unwrap().retry_policy().is_none());
    /// ```
    #[must_use]
    pub fn retry_policy(&self) -> Option<&RetryPolicy> {
        self.retry_policy.as_ref()
    }

    /// The entry's `hedgingPolicy`, if it has one (a method has a
    /// `retryPolicy` or a `hedgingPolicy`, never both).
    ///
    /// ```
    /// use backoff_grpc::ServiceConfig;
    /// use std::time::Duration;
    /// let config = ServiceConfig::from_json(r#"{"methodConfig": [{"name": [{}],
    ///     "hedgingPolicy": {"maxAttempts": 3, "hedgingDelay": "0.05s"}}]}"#).unwrap();
    /// let hedging = config.method_config("/a.B/C").unwrap().hedging_policy().unwrap();
    /// assert_eq!(hedging.hedging_delay(), Duration::from_millis(50));
    /// ```
    #[must_use]
    pub fn hedging_policy(&self) -> Option<&HedgingPolicy> {
        self.hedging_policy.as_ref()
    }

    /// The entry's `timeout`: the call's deadline when the caller set none.
    /// A zero one is legal, as in gRPC: the method's calls end at once
    /// with `DEADLINE_EXCEEDED`, unsent.
    ///
    /// ```
    /// use backoff_grpc::ServiceConfig;
    /// use std::time::Duration;
    /// let config = ServiceConfig::from_json(r#"{"methodConfig": [{"name": [{}], "timeout": "0.25s"}]}"#).unwrap();
    /// assert_eq!(config.method_config("/a.B/C").unwrap().timeout(), Some(Duration::from_millis(250)));
    /// ```
    #[must_use]
    pub fn timeout(&self) -> Option<Duration> {
        self.timeout
    }
}

/// A validated `hedgingPolicy` (gRPC's A6): the attempts (capped, the
/// first included), the delay before each hedge, and the status codes
/// that are not fatal (any other status ends the call).
///
/// ```
/// use backoff_grpc::ServiceConfig;
/// use std::time::Duration;
/// use tonic::Code;
///
/// let config = ServiceConfig::from_json(r#"{"methodConfig": [{"name": [{}], "hedgingPolicy": {
///     "maxAttempts": 7, "hedgingDelay": "0.005s", "nonFatalStatusCodes": ["UNAVAILABLE"]}}]}"#).unwrap();
/// let hedging = config.method_config("/a.B/C").unwrap().hedging_policy().unwrap();
/// assert_eq!(hedging.max_attempts(), 5, "capped at 5, as gRPC's clients cap it");
/// assert_eq!(hedging.hedging_delay(), Duration::from_millis(5));
/// assert!(hedging.is_non_fatal(Code::Unavailable));
/// assert!(!hedging.is_non_fatal(Code::Internal));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HedgingPolicy {
    pub(crate) max_attempts: u32,
    pub(crate) hedging_delay: Duration,
    pub(crate) codes: CodeSet,
}

impl HedgingPolicy {
    /// The attempts a call may make, the first included (capped as
    /// `retryPolicy`'s are).
    ///
    /// ```
    /// use backoff_grpc::ServiceConfig;
    /// let config = ServiceConfig::from_json(r#"{"methodConfig": [{"name": [{}], "hedgingPolicy": {"maxAttempts": 3}}]}"#).unwrap();
    /// assert_eq!(config.method_config("/a.B/C").unwrap().hedging_policy().unwrap().max_attempts(), 3);
    /// ```
    #[must_use]
    pub fn max_attempts(&self) -> u32 {
        self.max_attempts
    }

    /// The delay after which the next hedge is sent without an answer (0:
    /// every attempt at once).
    ///
    /// ```
    /// use backoff_grpc::ServiceConfig;
    /// use std::time::Duration;
    /// let config = ServiceConfig::from_json(r#"{"methodConfig": [{"name": [{}], "hedgingPolicy": {"maxAttempts": 3}}]}"#).unwrap();
    /// assert_eq!(config.method_config("/a.B/C").unwrap().hedging_policy().unwrap().hedging_delay(), Duration::ZERO);
    /// ```
    #[must_use]
    pub fn hedging_delay(&self) -> Duration {
        self.hedging_delay
    }

    /// Whether a failure with `code` lets the other hedges go on (and sends
    /// the next at once); any other status ends the call.
    ///
    /// ```
    /// use backoff_grpc::ServiceConfig;
    /// use tonic::Code;
    /// let config = ServiceConfig::from_json(r#"{"methodConfig": [{"name": [{}], "hedgingPolicy": {"maxAttempts": 3}}]}"#).unwrap();
    /// assert!(!config.method_config("/a.B/C").unwrap().hedging_policy().unwrap().is_non_fatal(Code::Unavailable));
    /// ```
    #[must_use]
    pub fn is_non_fatal(&self, code: Code) -> bool {
        self.codes.contains(code)
    }

    /// The crate's [`Policy`] of the hedged calls: `maxAttempts - 1`
    /// attempts after the first, and no backoff (hedges do not back off).
    ///
    /// ```
    /// use backoff_grpc::ServiceConfig;
    /// let config = ServiceConfig::from_json(r#"{"methodConfig": [{"name": [{}], "hedgingPolicy": {"maxAttempts": 4}}]}"#).unwrap();
    /// assert_eq!(config.method_config("/a.B/C").unwrap().hedging_policy().unwrap().policy().get_max_retries(), 3);
    /// ```
    #[must_use]
    pub fn policy(&self) -> Policy {
        Policy::new().max_retries(self.max_attempts.saturating_sub(1).max(1))
    }
}

/// A validated `retryPolicy`: the attempts (capped), the crate's
/// [`Policy`] for its schedule, and the status codes it retries.
///
/// The policy is A6's: `maxAttempts - 1` retries; the wait before retry
/// `n` (from 1) is `min(initialBackoff * backoffMultiplier^(n-1),
/// maxBackoff)` times a random factor in `[0.8, 1.2]`
/// ([`Jitter::Grpc`](backoff_runtime::Jitter::Grpc), which also keeps every wait at
/// most `maxBackoff`).
///
/// ```
/// use backoff_runtime::Jitter;
/// use backoff_grpc::ServiceConfig;
/// use std::time::Duration;
/// use tonic::Code;
///
/// let config = ServiceConfig::from_json(r#"{"methodConfig": [{"name": [{}], "retryPolicy": {
///     "maxAttempts": 3, "initialBackoff": "0.2s", "maxBackoff": "2s",
///     "backoffMultiplier": 1.5, "retryableStatusCodes": ["UNAVAILABLE", 10]}}]}"#).unwrap();
/// let retry = config.retry_policy("/a.B/C").unwrap();
/// assert_eq!(retry.max_attempts(), 3);
/// let policy = retry.policy();
/// assert_eq!(policy.get_max_retries(), 2);
/// assert_eq!(policy.get_initial_backoff(), Duration::from_millis(200));
/// assert_eq!(policy.get_max_backoff(), Duration::from_secs(2));
/// assert_eq!(policy.get_multiplier(), 1.5);
/// assert_eq!(policy.get_jitter(), Jitter::Grpc);
/// assert!(retry.retries(Code::Unavailable) && retry.retries(Code::Aborted));
/// assert!(!retry.retries(Code::Internal));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RetryPolicy {
    pub(crate) max_attempts: u32,
    pub(crate) policy: Policy,
    pub(crate) codes: CodeSet,
    /// A `RESOURCE_EXHAUSTED` that carries a `RetryInfo` is retried too
    /// (a policy built in code without `retryable_status_codes`).
    pub(crate) exhausted_with_retry_info: bool,
}

impl RetryPolicy {
    /// The attempts a call may make, the first included: the config's
    /// `maxAttempts`, capped (at 5 unless the cap was raised with
    /// [`ServiceConfigBuilder::max_attempts_cap`](crate::ServiceConfigBuilder::max_attempts_cap)).
    ///
    /// ```
    /// use backoff_grpc::ServiceConfig;
    /// let json = r#"{"methodConfig": [{"name": [{}], "retryPolicy": {"maxAttempts": 8,
    ///     "initialBackoff": "1s", "maxBackoff": "5s", "backoffMultiplier": 2,
    ///     "retryableStatusCodes": ["UNAVAILABLE"]}}]}"#;
    /// let capped = ServiceConfig::from_json(json).unwrap();
    /// assert_eq!(capped.retry_policy("/a.B/C").unwrap().max_attempts(), 5);
    /// ```
    #[must_use]
    pub fn max_attempts(&self) -> u32 {
        self.max_attempts
    }

    /// The schedule as the crate's [`Policy`] (`Copy`: give it to
    /// [`Policy::retry`], the attribute's `policy = ...`, or a layer).
    ///
    /// ```
    /// use backoff_grpc::ServiceConfig;
    /// let json = r#"{"methodConfig": [{"name": [{}], "retryPolicy": {"maxAttempts": 2,
    ///     "initialBackoff": "1s", "maxBackoff": "5s", "backoffMultiplier": 2,
    ///     "retryableStatusCodes": ["UNAVAILABLE"]}}]}"#;
    /// let config = ServiceConfig::from_json(json).unwrap();
    /// assert_eq!(config.retry_policy("/a.B/C").unwrap().policy().get_max_retries(), 1);
    /// ```
    #[must_use]
    pub fn policy(&self) -> Policy {
        self.policy
    }

    /// Whether a call that failed with `code` is retried.
    ///
    /// ```
    /// use backoff_grpc::ServiceConfig;
    /// use tonic::Code;
    /// let json = r#"{"methodConfig": [{"name": [{}], "retryPolicy": {"maxAttempts": 2,
    ///     "initialBackoff": "1s", "maxBackoff": "5s", "backoffMultiplier": 2,
    ///     "retryableStatusCodes": ["UNAVAILABLE"]}}]}"#;
    /// let retry = *ServiceConfig::from_json(json).unwrap().retry_policy("/a.B/C").unwrap();
    /// assert!(retry.retries(Code::Unavailable));
    /// assert!(!retry.retries(Code::InvalidArgument));
    /// ```
    #[must_use]
    pub fn retries(&self, code: Code) -> bool {
        self.codes.contains(code)
    }

    /// The codes retried, by number.
    ///
    /// ```
    /// use backoff_grpc::ServiceConfig;
    /// use tonic::Code;
    /// let json = r#"{"methodConfig": [{"name": [{}], "retryPolicy": {"maxAttempts": 2,
    ///     "initialBackoff": "1s", "maxBackoff": "5s", "backoffMultiplier": 2,
    ///     "retryableStatusCodes": ["UNAVAILABLE", "ABORTED", 14]}}]}"#;
    /// let retry = *ServiceConfig::from_json(json).unwrap().retry_policy("/a.B/C").unwrap();
    /// assert_eq!(retry.retryable_status_codes().collect::<Vec<_>>(), [Code::Aborted, Code::Unavailable]);
    /// ```
    pub fn retryable_status_codes(&self) -> impl Iterator<Item = Code> {
        self.codes.iter()
    }

    /// Whether a `RESOURCE_EXHAUSTED` whose status carries a
    /// `google.rpc.RetryInfo` is retried (after the wait it asks for, capped
    /// by `maxBackoff`) although its code is not listed: the rule of a
    /// policy built in code without
    /// [`retryable_status_codes`](crate::RetryPolicySpec::retryable_status_codes)
    /// (AIP-194's: the server said when to come back). Never for a policy
    /// read from JSON, whose codes are required and exactly those listed.
    ///
    /// ```
    /// use backoff_grpc::{MethodConfigSpec, RetryPolicySpec, ServiceConfig};
    /// use std::time::Duration;
    /// use tonic::Code;
    ///
    /// let spec = RetryPolicySpec::new()
    ///     .max_attempts(3)
    ///     .initial_backoff(Duration::from_millis(100))
    ///     .max_backoff(Duration::from_secs(1))
    ///     .backoff_multiplier(2.0);
    /// let config = ServiceConfig::builder()
    ///     .method_config(MethodConfigSpec::new().every_method().retry_policy(spec))
    ///     .build()
    ///     .unwrap();
    /// let retry = config.retry_policy("/a.B/C").unwrap();
    /// assert_eq!(retry.retryable_status_codes().collect::<Vec<_>>(), [Code::Unavailable]);
    /// assert!(retry.retries_exhausted_with_retry_info());
    /// ```
    #[must_use]
    pub fn retries_exhausted_with_retry_info(&self) -> bool {
        self.exhausted_with_retry_info
    }
}

/// Validated `retryThrottling` settings: [`throttle`](Self::throttle)
/// makes the [`RetryThrottle`] that the calls to one server share.
///
/// ```
/// use backoff_grpc::ServiceConfig;
/// let config = ServiceConfig::from_json(r#"{"retryThrottling": {"maxTokens": 10, "tokenRatio": 0.1}}"#).unwrap();
/// let throttle = config.retry_throttling().unwrap().throttle();
/// assert_eq!((throttle.get_max_tokens(), throttle.get_token_ratio()), (10, 0.1));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RetryThrottling {
    pub(crate) max_tokens: u32,
    pub(crate) token_ratio: f64,
}

impl RetryThrottling {
    /// `maxTokens`: the bucket's size.
    ///
    /// ```
    /// use backoff_grpc::ServiceConfig;
    /// let config = ServiceConfig::from_json(r#"{"retryThrottling": {"maxTokens": 100, "tokenRatio": 1}}"#).unwrap();
    /// assert_eq!(config.retry_throttling().unwrap().max_tokens(), 100);
    /// ```
    #[must_use]
    pub fn max_tokens(&self) -> u32 {
        self.max_tokens
    }

    /// `tokenRatio`, kept to three decimal places (as A6 says).
    ///
    /// ```
    /// use backoff_grpc::ServiceConfig;
    /// let config = ServiceConfig::from_json(r#"{"retryThrottling": {"maxTokens": 10, "tokenRatio": 0.12345}}"#).unwrap();
    /// assert_eq!(config.retry_throttling().unwrap().token_ratio(), 0.123);
    /// ```
    #[must_use]
    pub fn token_ratio(&self) -> f64 {
        self.token_ratio
    }

    /// A new, full [`RetryThrottle`] with these settings: make one per
    /// server and share it (an `Arc`) among its calls.
    ///
    /// ```
    /// use backoff_grpc::ServiceConfig;
    /// let config = ServiceConfig::from_json(r#"{"retryThrottling": {"maxTokens": 4, "tokenRatio": 0.5}}"#).unwrap();
    /// let throttle = config.retry_throttling().unwrap().throttle();
    /// assert_eq!(throttle.tokens(), 4.0);
    /// ```
    #[must_use]
    pub fn throttle(&self) -> RetryThrottle {
        // Both values passed `RetryThrottle::try_new` when the config was
        // built: `new` does not panic on them.
        RetryThrottle::new(self.max_tokens, self.token_ratio)
    }
}

#[cfg(test)]
mod tests;
