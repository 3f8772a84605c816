//! `HttpRetry`: what a `RetryLayer` retries of HTTP.
//!
//! What a [`RetryLayer`](crate::RetryLayer) retries of
//! HTTP: idempotent requests (or those with an `Idempotency-Key`), the
//! statuses Google Cloud retries, every error of the inner service, the
//! `Retry-After` of a retried response.

use core::time::Duration;

use http::{HeaderMap, HeaderName, HeaderValue, Method, Request, Response};

use crate::classify::Classify;
use backoff_runtime::Attempt;
use backoff_runtime::http_errors::{is_retryable_status, retry_after_header};

/// The `Idempotency-Key` header (the IETF draft's name, which Stripe and
/// others use).
const IDEMPOTENCY_KEY: HeaderName = HeaderName::from_static("idempotency-key");

/// HTTP's rules for a [`RetryLayer`](crate::RetryLayer) (its
/// default): see the [module](crate) for what is retried.
///
/// ```
/// use backoff_tower::{Classify, HttpRetry};
/// use http::{Method, Request};
///
/// let rules = HttpRetry::new();
/// let get = Request::get("http://example.com/").body(String::new()).unwrap();
/// let post = Request::post("http://example.com/").body(String::new()).unwrap();
/// let keyed = Request::post("http://example.com/").header("idempotency-key", "k1").body(String::new()).unwrap();
/// let rules_for = |r: &Request<String>| Classify::<_, http::Response<()>, ()>::may_retry(&rules, r);
/// assert!(rules_for(&get));
/// assert!(!rules_for(&post));
/// assert!(rules_for(&keyed));
/// assert!(Classify::<_, http::Response<()>, ()>::may_retry(&rules.idempotency_key(), &post));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HttpRetry {
    add_idempotency_key: bool,
    any_method: bool,
}

impl HttpRetry {
    /// The default rules: idempotent methods, or a request with an
    /// `Idempotency-Key`.
    ///
    /// ```
    /// let rules = backoff_tower::HttpRetry::new();
    /// # let _ = rules;
    /// ```
    #[must_use]
    pub const fn new() -> Self {
        HttpRetry {
            add_idempotency_key: false,
            any_method: false,
        }
    }

    /// Also retries a request of another method that has no
    /// `Idempotency-Key`, after adding one: the call's invocation id, the
    /// same on every attempt.
    ///
    /// ```
    /// let rules = backoff_tower::HttpRetry::new().idempotency_key();
    /// # let _ = rules;
    /// ```
    #[must_use]
    pub const fn idempotency_key(mut self) -> Self {
        self.add_idempotency_key = true;
        self
    }

    /// Retries every method, with or without an `Idempotency-Key`.
    ///
    /// ```
    /// let rules = backoff_tower::HttpRetry::new().retry_any_method();
    /// # let _ = rules;
    /// ```
    #[must_use]
    pub const fn retry_any_method(mut self) -> Self {
        self.any_method = true;
        self
    }
}

impl HttpRetry {
    /// Whether a request of `method` with `headers` may be sent again.
    pub(crate) fn allows(&self, method: &Method, headers: &HeaderMap) -> bool {
        self.any_method || self.add_idempotency_key || is_idempotent(method) || headers.contains_key(IDEMPOTENCY_KEY)
    }

    /// Adds the call's invocation id as the `Idempotency-Key` of a request
    /// that needs one to be retried and has none (when asked to).
    pub(crate) fn add_key(&self, method: &Method, headers: &mut HeaderMap, attempt: &Attempt) {
        if self.add_idempotency_key && !is_idempotent(method) && !headers.contains_key(IDEMPOTENCY_KEY) {
            if let Ok(value) = HeaderValue::from_str(&attempt.invocation_id().to_string()) {
                headers.insert(IDEMPOTENCY_KEY, value);
            }
        }
    }
}

/// The host a request goes to: its URI's authority, else its `Host` header.
pub(crate) fn host_of<'r>(uri: &'r http::Uri, headers: &'r http::HeaderMap) -> Option<&'r str> {
    uri.authority()
        .map(http::uri::Authority::as_str)
        .or_else(|| headers.get(http::header::HOST).and_then(|host| host.to_str().ok()))
}

/// Whether a method is idempotent (RFC 9110, section 9.2.2).
fn is_idempotent(method: &Method) -> bool {
    matches!(
        *method,
        Method::GET | Method::HEAD | Method::PUT | Method::DELETE | Method::OPTIONS | Method::TRACE
    )
}

impl<B, RB, E> Classify<Request<B>, Response<RB>, E> for HttpRetry
where
    B: Clone + Send + 'static,
{
    /// The idempotency key is the call's id: no time is read.
    const READS_ATTEMPT_TIME: bool = false;

    fn may_retry(&self, request: &Request<B>) -> bool {
        self.allows(request.method(), request.headers())
    }

    /// The host: the URI's authority, else the `Host` header.
    fn admission_key<'r>(&self, request: &'r Request<B>) -> Option<&'r str> {
        host_of(request.uri(), request.headers())
    }

    fn replay(&self, request: &Request<B>, attempt: &Attempt) -> Request<B> {
        let mut replayed = Request::new(request.body().clone());
        *replayed.method_mut() = request.method().clone();
        *replayed.uri_mut() = request.uri().clone();
        *replayed.version_mut() = request.version();
        *replayed.headers_mut() = request.headers().clone();
        *replayed.extensions_mut() = request.extensions().clone();
        self.add_key(request.method(), replayed.headers_mut(), attempt);
        replayed
    }

    fn retry_response(&self, response: &Response<RB>) -> bool {
        is_retryable_status(response.status())
    }

    fn response_hint(&self, response: &Response<RB>) -> Option<Duration> {
        retry_after_header(response.headers())
    }
}

#[cfg(test)]
mod tests;
