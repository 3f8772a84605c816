//! The common HTTP client in one attribute (feature `reqwest`).
//!
//! An error type that carries a failed response's status and `Retry-After`
//! hint, its classification by the rule of Google Cloud's truncated exponential
//! backoff (retry what load or the network caused, never what cannot succeed by
//! retrying), and the hint for `retry_after`.
//!
//! ```
//! use backoff_runtime::retry;
//! use backoff_runtime::reqwest_errors::{Error, check_status, is_retryable_error, retry_after_hint};
//!
//! #[retry(retry_if = is_retryable_error, retry_after = retry_after_hint, max_backoff = "32s")]
//! async fn fetch(client: &reqwest::Client, url: &str) -> Result<String, Error> {
//!     Ok(check_status(client.get(url).send().await?)?.text().await?)
//! }
//! ```

use crate::observe::conventions::SemanticConventions;
use core::fmt;
use core::time::Duration;
use std::error::Error as _;
use std::io;

use ::reqwest::{Response, StatusCode};

use crate::classify::http_errors::{is_retryable_io_kind, is_retryable_status, retry_after_header};
use crate::limits::admission::Refused;
use crate::time::timeout::Elapsed;

/// Why a request through reqwest failed: a response with an error status
/// (with the server's `Retry-After` hint, if any), an error of the client
/// itself (connect, timeout, body...), an attempt cut by `timeout = ...`,
/// or one the `admission = ...` limiter refused.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// The server answered with a status that is not a success.
    Status {
        /// The status.
        status: StatusCode,
        /// The response's `Retry-After`, both forms parsed.
        retry_after: Option<Duration>,
    },
    /// reqwest could not complete the request.
    Transport(::reqwest::Error),
    /// The attempt was cut by the attribute's `timeout = ...`.
    TimedOut,
    /// The limiter named in `admission = ...` refused the attempt: it was
    /// never sent. Never retried.
    Refused(Refused),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Status { status, .. } => write!(f, "server answered {status}"),
            Error::Transport(error) => write!(f, "request failed: {error}"),
            Error::TimedOut => f.write_str("attempt timed out"),
            Error::Refused(refused) => fmt::Display::fmt(refused, f),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Transport(error) => Some(error),
            Error::Refused(refused) => Some(refused),
            _ => None,
        }
    }
}

impl From<::reqwest::Error> for Error {
    fn from(error: ::reqwest::Error) -> Self {
        Error::Transport(error)
    }
}

impl From<Elapsed> for Error {
    fn from(_: Elapsed) -> Self {
        Error::TimedOut
    }
}

/// `admission = ...` works with this error type:
///
/// ```
/// use backoff_runtime::limits::Refused;
/// use backoff_runtime::reqwest_errors::{Error, is_retryable_error};
///
/// let refused = Error::from(Refused::new());
/// assert!(matches!(refused, Error::Refused(_)));
/// assert!(!is_retryable_error(&refused));
/// assert_eq!(refused.to_string(), "the client's limiter refused the attempt");
/// ```
impl From<Refused> for Error {
    fn from(refused: Refused) -> Self {
        Error::Refused(refused)
    }
}

/// Turns a response with a non-success status into [`Error::Status`],
/// keeping its `Retry-After`; passes a success through.
///
/// ```no_run
/// # async fn f(client: reqwest::Client) -> Result<(), backoff_runtime::reqwest_errors::Error> {
/// let response = backoff_runtime::reqwest_errors::check_status(client.get("http://127.0.0.1/").send().await?)?;
/// # let _ = response; Ok(())
/// # }
/// ```
pub fn check_status(response: Response) -> Result<Response, Error> {
    let status = response.status();
    if status.is_success() {
        return Ok(response);
    }
    Err(Error::Status {
        status,
        retry_after: retry_after_header(response.headers()),
    })
}

/// Whether a reqwest error is worth retrying, judged by what happened.
///
/// Retried, as load or the network caused them:
///
/// - a connect error (refused, unreachable, DNS...) and a timeout of any of
///   reqwest's timeouts;
/// - a status error (from `error_for_status`) with 408, 429 or a 5xx status;
/// - a connection that failed after it was made: closed before the response
///   arrived, reset or aborted (any I/O error among the causes that
///   [`is_retryable_io_kind`] retries), or closed
///   before the request could be sent on it;
/// - a response body cut off mid-transfer (the connection ended before the
///   `Content-Length` or the last chunk), whether read with `.text()`,
///   `.bytes()`, `.json()` or `.chunk()`.
///
/// In the browser and Node (wasm32-unknown-unknown), reqwest's client is
/// the platform's `fetch`:
///
/// - `fetch` tells no kind of failure. A request that got no answer is
///   retried, whatever the cause.
/// - That includes a CORS refusal, which no retry can fix.
/// - Statuses and timeouts are judged as natively.
///
/// Not retried, as retrying cannot make them succeed: a builder error (such
/// as a bad URL), a redirect-policy error (a loop, too many redirects), a
/// status error with any other status, a body that arrived whole but fails
/// to decode (invalid JSON), and an answer that is not HTTP.
///
/// ```
/// use backoff_runtime::reqwest_errors::is_retryable_reqwest_error;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> std::io::Result<()> {
/// let client = reqwest::Client::new();
///
/// // A URL that does not parse: the same request fails the same way again.
/// let error = client.get("http://exa mple/").send().await.unwrap_err();
/// assert!(!is_retryable_reqwest_error(&error));
///
/// // A connection refused (nothing listens on a port just freed): retried.
/// let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
/// let error = client.get(format!("http://127.0.0.1:{port}/")).send().await.unwrap_err();
/// assert!(is_retryable_reqwest_error(&error));
/// # Ok(())
/// # }
/// ```
#[must_use]
pub fn is_retryable_reqwest_error(error: &::reqwest::Error) -> bool {
    error.is_timeout()
        || could_not_reach(error)
        || error.status().is_some_and(is_retryable_status)
        || failed_in_transit(error)
}

/// Whether the request never reached a server: a connect error.
#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
fn could_not_reach(error: &::reqwest::Error) -> bool {
    error.is_connect()
}

/// Whether the request never got an answer, on wasm32-unknown-unknown.
///
/// - reqwest's client there is the platform's `fetch`.
/// - `fetch` tells no kind of failure: a refused connection, a lost network,
///   a failed DNS lookup and a CORS refusal are one `TypeError`.
/// - reqwest reports it as a request error without a status. It is retried.
#[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
fn could_not_reach(error: &::reqwest::Error) -> bool {
    error.is_request() && error.status().is_none()
}

/// Whether `error` or one of its causes shows a connection failing after it
/// was made: an I/O error that [`is_retryable_io_kind`] retries (a reset...), or a
/// hyper error telling a connection closed before the response, before the
/// request was sent, or in the middle of a body.
fn failed_in_transit(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut cause = Some(error);
    while let Some(error) = cause {
        if let Some(io) = error.downcast_ref::<io::Error>() {
            if is_retryable_io_kind(io.kind()) {
                return true;
            }
        }
        if let Some(hyper) = error.downcast_ref::<::hyper::Error>() {
            if hyper.is_incomplete_message() || hyper.is_closed() || hyper.is_canceled() || ended_early(hyper) {
                return true;
            }
        }
        cause = error.source();
    }
    false
}

/// Whether hyper met the end of the connection before the end of a message:
/// its error's own cause is an I/O "unexpected end of file" (a body shorter
/// than its `Content-Length`, a chunked body without its last chunk).
fn ended_early(error: &::hyper::Error) -> bool {
    error
        .source()
        .and_then(|cause| cause.downcast_ref::<io::Error>())
        .is_some_and(|cause| cause.kind() == io::ErrorKind::UnexpectedEof)
}

/// The rule of Google Cloud's truncated exponential backoff for [`Error`]:
/// a status of 408, 429 or 5xx is retried, any other (401, 403, 404...) is
/// not; a transport error is retried exactly when
/// [`is_retryable_reqwest_error`] says so (connect errors, timeouts, connections
/// closed or reset before the response, bodies cut off mid-transfer); an
/// attempt cut by `timeout = ...` is retried. It judges a `reqwest::Error`
/// too (as [`is_retryable_reqwest_error`] does), so `retry_if =
/// is_retryable_error` fits a function returning either.
///
/// ```
/// use backoff_runtime::reqwest_errors::{Error, is_retryable_error};
/// use reqwest::StatusCode;
///
/// assert!(is_retryable_error(&Error::Status { status: StatusCode::BAD_GATEWAY, retry_after: None }));
/// assert!(!is_retryable_error(&Error::Status { status: StatusCode::FORBIDDEN, retry_after: None }));
/// assert!(is_retryable_error(&Error::TimedOut));
/// ```
#[must_use]
pub fn is_retryable_error<E: RetryableReqwestError>(error: &E) -> bool {
    error.is_retryable()
}

/// The errors [`is_retryable_error`] judges: this module's [`Error`] and
/// `reqwest::Error`.
///
/// ```
/// use backoff_runtime::reqwest_errors::{Error, RetryableReqwestError};
/// assert!(Error::TimedOut.is_retryable());
/// ```
#[diagnostic::on_unimplemented(
    message = "`is_retryable_error` judges `backoff_runtime::reqwest_errors::Error` or `reqwest::Error`, not `{Self}`",
    label = "the function's error type",
    note = "return one of them, or write a `retry_if` of your own for `{Self}`"
)]
pub trait RetryableReqwestError {
    /// Whether a retry may succeed (see [`is_retryable_error`]).
    fn is_retryable(&self) -> bool;
}

/// With the `tracing` feature, each retry event of a function failing with
/// reqwest's errors carries OpenTelemetry's `http.request.resend_count`.
impl SemanticConventions for Error {
    fn is_http_request(&self) -> bool {
        true
    }
}

impl SemanticConventions for ::reqwest::Error {
    fn is_http_request(&self) -> bool {
        true
    }
}

impl RetryableReqwestError for Error {
    fn is_retryable(&self) -> bool {
        match self {
            Error::Status { status, .. } => is_retryable_status(*status),
            Error::Transport(error) => is_retryable_reqwest_error(error),
            Error::TimedOut => true,
            Error::Refused(_) => false,
        }
    }
}

impl RetryableReqwestError for ::reqwest::Error {
    fn is_retryable(&self) -> bool {
        is_retryable_reqwest_error(self)
    }
}

/// The server's `Retry-After` hint carried by [`Error::Status`], for the
/// attribute's `retry_after = ...`.
///
/// ```
/// use backoff_runtime::reqwest_errors::{Error, retry_after_hint};
/// use std::time::Duration;
///
/// let error = Error::Status { status: reqwest::StatusCode::TOO_MANY_REQUESTS, retry_after: Some(Duration::from_secs(2)) };
/// assert_eq!(retry_after_hint(&error), Some(Duration::from_secs(2)));
/// ```
#[must_use]
pub fn retry_after_hint(error: &Error) -> Option<Duration> {
    match error {
        Error::Status { retry_after, .. } => *retry_after,
        _ => None,
    }
}

#[cfg(test)]
mod tests;
