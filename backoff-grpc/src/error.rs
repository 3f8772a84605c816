//! [`ConfigError`]: what is wrong with a service config, and where.

use core::fmt;

/// A service config that gRPC's clients would reject: the field's path, as
/// the JSON names it (`methodConfig[1].retryPolicy.maxAttempts`), and the
/// rule it breaks. Configs built in code report the same paths (the
/// `methodConfig` index is the order of
/// [`ServiceConfigBuilder::method_config`](crate::ServiceConfigBuilder::method_config)).
///
/// ```
/// use backoff_grpc::ServiceConfig;
///
/// let json = r#"{"methodConfig": [{"name": [{}], "retryPolicy": {
///     "maxAttempts": 1, "initialBackoff": "0.1s", "maxBackoff": "1s",
///     "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]}}]}"#;
/// let error = ServiceConfig::from_json(json).unwrap_err();
/// assert_eq!(error.path(), "methodConfig[0].retryPolicy.maxAttempts");
/// assert_eq!(error.to_string(), "methodConfig[0].retryPolicy.maxAttempts: must be at least 2, got 1");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    path: String,
    message: String,
}

impl ConfigError {
    /// The error of the field at `path`.
    pub(crate) fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        ConfigError {
            path: path.into(),
            message: message.into(),
        }
    }

    /// The field's path, as the JSON names it; empty for the whole document
    /// (a JSON syntax error).
    ///
    /// ```
    /// use backoff_grpc::ServiceConfig;
    /// let error = ServiceConfig::from_json(r#"{"retryThrottling": {"maxTokens": 0, "tokenRatio": 0.1}}"#).unwrap_err();
    /// assert_eq!(error.path(), "retryThrottling.maxTokens");
    /// ```
    #[must_use]
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The rule the field breaks, and what it holds.
    ///
    /// ```
    /// use backoff_grpc::ServiceConfig;
    /// let error = ServiceConfig::from_json(r#"{"retryThrottling": {"maxTokens": 0, "tokenRatio": 0.1}}"#).unwrap_err();
    /// assert_eq!(error.message(), "must be from 1 to 1000, got 0");
    /// ```
    #[must_use]
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// `text` as an error quotes it: whole when short, else its first 40
/// characters and how long it is. The runtime's, which its settings'
/// errors quote values with.
pub(crate) use backoff_runtime::__front_end::excerpt;

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

impl std::error::Error for ConfigError {}
