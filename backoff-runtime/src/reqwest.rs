//! The common HTTP client in one attribute (feature `reqwest`): an error
//! type that carries a failed response's status and `Retry-After` hint, the
//! seeds' classification of it, and the hint for `retry_after`.
//!
//! ```
//! use backoff_runtime::retry;
//! use backoff_runtime::reqwest::{Error, check_status, is_retryable, retry_after};
//!
//! #[retry(retry_if = is_retryable, retry_after = retry_after, max_backoff = "32s")]
//! async fn fetch(client: &reqwest::Client, url: &str) -> Result<String, Error> {
//!     Ok(check_status(client.get(url).send().await?)?.text().await?)
//! }
//! ```

use core::fmt;
use core::time::Duration;

use ::reqwest::{Response, StatusCode};

use crate::http::{is_retryable_status, retry_after as retry_after_header};
use crate::timeout::Elapsed;

/// Why a request through reqwest failed: a response with an error status
/// (with the server's `Retry-After` hint, if any), an error of the client
/// itself (connect, timeout, body...), or an attempt cut by `timeout = ...`.
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
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Status { status, .. } => write!(f, "server answered {status}"),
            Error::Transport(error) => write!(f, "request failed: {error}"),
            Error::TimedOut => f.write_str("attempt timed out"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Transport(error) => Some(error),
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

/// Turns a response with a non-success status into [`Error::Status`],
/// keeping its `Retry-After`; passes a success through.
///
/// ```no_run
/// # async fn f(client: reqwest::Client) -> Result<(), backoff_runtime::reqwest::Error> {
/// let response = backoff_runtime::reqwest::check_status(client.get("http://127.0.0.1/").send().await?)?;
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

/// Whether a reqwest error is worth retrying: timeouts, connect errors, and
/// errors carrying a 408, 429 or 5xx status (from `error_for_status`).
/// Everything else (a bad URL, a redirect loop, a body that fails to
/// decode...) is not.
///
/// ```no_run
/// # fn f(error: &reqwest::Error) -> bool {
/// backoff_runtime::reqwest::is_retryable_error(error)
/// # }
/// ```
#[must_use]
pub fn is_retryable_error(error: &::reqwest::Error) -> bool {
    error.is_timeout() || error.is_connect() || error.status().is_some_and(is_retryable_status)
}

/// The seeds' rule for [`Error`]: 408, 429 and 5xx statuses, timeouts and
/// connect errors are retried; 4xx such as 401, 403, 404 and everything else
/// are not. A cut attempt (`timeout = ...`) is retried.
///
/// ```
/// use backoff_runtime::reqwest::{Error, is_retryable};
/// use reqwest::StatusCode;
///
/// assert!(is_retryable(&Error::Status { status: StatusCode::BAD_GATEWAY, retry_after: None }));
/// assert!(!is_retryable(&Error::Status { status: StatusCode::FORBIDDEN, retry_after: None }));
/// ```
#[must_use]
pub fn is_retryable(error: &Error) -> bool {
    match error {
        Error::Status { status, .. } => is_retryable_status(*status),
        Error::Transport(error) => is_retryable_error(error),
        Error::TimedOut => true,
    }
}

/// The server's `Retry-After` hint carried by [`Error::Status`], for the
/// attribute's `retry_after = ...`.
///
/// ```
/// use backoff_runtime::reqwest::{Error, retry_after};
/// use std::time::Duration;
///
/// let error = Error::Status { status: reqwest::StatusCode::TOO_MANY_REQUESTS, retry_after: Some(Duration::from_secs(2)) };
/// assert_eq!(retry_after(&error), Some(Duration::from_secs(2)));
/// ```
#[must_use]
pub fn retry_after(error: &Error) -> Option<Duration> {
    match error {
        Error::Status { retry_after, .. } => *retry_after,
        _ => None,
    }
}
