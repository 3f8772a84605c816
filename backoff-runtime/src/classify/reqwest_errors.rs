//! The common HTTP client in one attribute (feature `reqwest`): an error
//! type that carries a failed response's status and `Retry-After` hint, its
//! classification by the rule of Google Cloud's truncated exponential backoff
//! (retry what load or the network caused, never what cannot succeed by
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

use crate::observe::conventions::{Conventions, SemanticConventions};
use core::fmt;
use core::time::Duration;
use std::error::Error as _;
use std::io;

use ::reqwest::{Response, StatusCode};

use crate::classify::http_errors::{is_retryable_io_kind, is_retryable_status, retry_after_header};
use crate::time::timeout::Elapsed;

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
        || error.is_connect()
        || error.status().is_some_and(is_retryable_status)
        || failed_in_transit(error)
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
    fn conventions(&self) -> Conventions {
        Conventions::http()
    }
}

impl SemanticConventions for ::reqwest::Error {
    fn conventions(&self) -> Conventions {
        Conventions::http()
    }
}

impl RetryableReqwestError for Error {
    fn is_retryable(&self) -> bool {
        match self {
            Error::Status { status, .. } => is_retryable_status(*status),
            Error::Transport(error) => is_retryable_reqwest_error(error),
            Error::TimedOut => true,
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
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::{TcpListener, TcpStream};

    /// What the loopback server does once it has read a request's head.
    #[derive(Clone, Copy)]
    enum Then {
        /// Close the connection without answering.
        Close,
        /// Reset the connection (`SO_LINGER` 0, then close).
        Reset,
        /// Write these bytes, then close.
        Answer(&'static str),
        /// Keep the connection open without answering.
        Hold,
    }

    /// A server on 127.0.0.1 doing `then` on every connection: its URL and
    /// how many connections it accepted.
    async fn serve(then: Then) -> (String, Arc<AtomicUsize>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/", listener.local_addr().unwrap());
        let accepted = Arc::new(AtomicUsize::new(0));
        let count = Arc::clone(&accepted);
        tokio::spawn(async move {
            loop {
                let (stream, _) = listener.accept().await.unwrap();
                count.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(handle(stream, then));
            }
        });
        (url, accepted)
    }

    async fn handle(mut stream: TcpStream, then: Then) {
        let mut head = Vec::new();
        let mut buf = [0; 1024];
        while !head.ends_with(b"\r\n\r\n") {
            let n = stream.read(&mut buf).await.unwrap();
            if n == 0 {
                return;
            }
            head.extend_from_slice(&buf[..n]);
        }
        match then {
            Then::Close => drop(stream),
            Then::Reset => {
                // A zero linger does not block: the close sends a reset at once.
                #[allow(deprecated)]
                stream.set_linger(Some(Duration::ZERO)).unwrap();
                drop(stream);
            }
            Then::Answer(bytes) => stream.write_all(bytes.as_bytes()).await.unwrap(),
            Then::Hold => {
                let _ = stream.read(&mut buf).await;
            }
        }
    }

    /// The error of one GET of `url`, its body read with `.bytes()`.
    async fn get(client: &::reqwest::Client, url: &str) -> ::reqwest::Error {
        match client.get(url).send().await {
            Ok(response) => response.bytes().await.unwrap_err(),
            Err(error) => error,
        }
    }

    /// Retried for what happened after the connection was made: reqwest
    /// calls it neither a connect error nor a timeout, and it has no status.
    fn retried_in_transit(error: ::reqwest::Error) {
        assert!(
            !error.is_connect() && !error.is_timeout() && error.status().is_none(),
            "{error:?}"
        );
        assert!(is_retryable_reqwest_error(&error), "{error:?}");
        assert!(is_retryable_error(&Error::from(error)));
    }

    fn permanent(error: ::reqwest::Error) {
        assert!(!is_retryable_reqwest_error(&error), "{error:?}");
        assert!(!is_retryable_error(&Error::from(error)));
    }

    #[tokio::test]
    async fn closed_before_the_response_is_retried() {
        let (url, accepted) = serve(Then::Close).await;
        retried_in_transit(get(&::reqwest::Client::new(), &url).await);
        assert_eq!(accepted.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn reset_before_the_response_is_retried() {
        let (url, _) = serve(Then::Reset).await;
        let error = get(&::reqwest::Client::new(), &url).await;
        let mut cause = error.source();
        let mut kinds = Vec::new();
        while let Some(error) = cause {
            kinds.extend(error.downcast_ref::<io::Error>().map(io::Error::kind));
            cause = error.source();
        }
        assert_eq!(kinds, [io::ErrorKind::ConnectionReset], "{error:?}");
        retried_in_transit(error);
    }

    #[tokio::test]
    async fn a_body_cut_off_mid_transfer_is_retried() {
        let client = ::reqwest::Client::new();
        let (short, _) = serve(Then::Answer("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789")).await;
        retried_in_transit(get(&client, &short).await);
        let mut response = client.get(&short).send().await.unwrap();
        assert_eq!(response.chunk().await.unwrap().as_deref(), Some(&b"0123456789"[..]));
        retried_in_transit(response.chunk().await.unwrap_err());
        // Chunked, the connection closed before the last chunk.
        let (unfinished, _) = serve(Then::Answer(
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\na\r\n0123456789\r\n",
        ))
        .await;
        retried_in_transit(get(&client, &unfinished).await);
    }

    #[tokio::test]
    async fn a_whole_body_is_no_error() {
        let (url, _) = serve(Then::Answer("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789")).await;
        let response = ::reqwest::Client::new().get(&url).send().await.unwrap();
        assert_eq!(&response.bytes().await.unwrap()[..], b"0123456789");
    }

    #[tokio::test]
    async fn an_answer_that_is_not_http_is_permanent() {
        let (url, _) = serve(Then::Answer("HELLO\r\n\r\n")).await;
        permanent(get(&::reqwest::Client::new(), &url).await);
    }

    #[tokio::test]
    async fn a_timeout_is_retried() {
        let (url, _) = serve(Then::Hold).await;
        let client = ::reqwest::Client::builder()
            .timeout(Duration::from_millis(50))
            .build()
            .unwrap();
        let error = get(&client, &url).await;
        assert!(error.is_timeout() && !error.is_connect(), "{error:?}");
        assert!(!failed_in_transit(&error), "{error:?}");
        assert!(is_retryable_reqwest_error(&error));
    }

    #[tokio::test]
    async fn a_refused_connection_is_retried() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let error = get(&::reqwest::Client::new(), &format!("http://127.0.0.1:{port}/")).await;
        assert!(error.is_connect(), "{error:?}");
        assert!(is_retryable_reqwest_error(&error));
        assert!(is_retryable_error(&Error::from(error)));
    }

    #[tokio::test]
    async fn a_bad_url_and_a_redirect_loop_are_permanent() {
        permanent(get(&::reqwest::Client::new(), "http://exa mple/").await);
        let (url, accepted) = serve(Then::Answer(
            "HTTP/1.1 302 Found\r\nLocation: /again\r\nContent-Length: 0\r\n\r\n",
        ))
        .await;
        let client = ::reqwest::Client::builder()
            .redirect(::reqwest::redirect::Policy::limited(2))
            .build()
            .unwrap();
        let error = get(&client, &url).await;
        assert!(error.is_redirect(), "{error:?}");
        permanent(error);
        assert_eq!(accepted.load(Ordering::SeqCst), 3);
    }

    /// A response with `status` and, if any, a `Retry-After` of `hint`.
    async fn answered(status: u16, hint: Option<&'static str>) -> ::reqwest::Response {
        let answer: &'static str = match (status, hint) {
            (200, None) => "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
            (404, None) => "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n",
            (503, None) => "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n",
            (503, Some("7")) => "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 7\r\nContent-Length: 0\r\n\r\n",
            _ => unreachable!(),
        };
        let (url, _) = serve(Then::Answer(answer)).await;
        ::reqwest::Client::new().get(&url).send().await.unwrap()
    }

    #[tokio::test]
    async fn status_errors_are_classified_by_status() {
        let unavailable = answered(503, None).await.error_for_status().unwrap_err();
        assert!(!unavailable.is_timeout() && !unavailable.is_connect() && !failed_in_transit(&unavailable));
        assert!(is_retryable_reqwest_error(&unavailable));
        permanent(answered(404, None).await.error_for_status().unwrap_err());
    }

    #[tokio::test]
    async fn check_status_keeps_the_status_and_the_hint() {
        let Err(error) = check_status(answered(503, Some("7")).await) else {
            panic!("503 passed");
        };
        assert!(matches!(
            error,
            Error::Status { status: StatusCode::SERVICE_UNAVAILABLE, retry_after: Some(hint) } if hint == Duration::from_secs(7)
        ));
        assert_eq!(retry_after_hint(&error), Some(Duration::from_secs(7)));
        assert!(is_retryable_error(&error));
        assert_eq!(error.to_string(), "server answered 503 Service Unavailable");
        assert!(error.source().is_none());
        let Err(error) = check_status(answered(404, None).await) else {
            panic!("404 passed");
        };
        assert!(matches!(
            error,
            Error::Status {
                status: StatusCode::NOT_FOUND,
                retry_after: None
            }
        ));
        assert!(!is_retryable_error(&error));
        assert_eq!(
            check_status(answered(200, None).await).unwrap().status(),
            StatusCode::OK
        );
    }

    #[tokio::test]
    async fn transport_errors_and_cut_attempts() {
        let error = Error::from(get(&::reqwest::Client::new(), "http://exa mple/").await);
        assert!(
            error.to_string().starts_with("request failed: builder error"),
            "{error}"
        );
        assert!(error.source().is_some_and(|source| source.is::<::reqwest::Error>()));
        assert_eq!(retry_after_hint(&error), None);
        let cut = Error::from(Elapsed::new());
        assert!(matches!(cut, Error::TimedOut));
        assert_eq!(cut.to_string(), "attempt timed out");
        assert!(cut.source().is_none());
        assert!(is_retryable_error(&cut));
        assert_eq!(retry_after_hint(&cut), None);
    }

    /// reqwest's HTTP/1 engine, its connection task gone: the next request
    /// finds the connection closed, and one sent anyway is canceled. Both
    /// were never answered, as no connection carried them.
    #[tokio::test]
    async fn hyper_closed_and_canceled_are_retried() {
        let (io, _peer) = tokio::io::duplex(64);
        let (mut sender, connection) =
            ::hyper::client::conn::http1::handshake::<_, String>(hyper_util::rt::TokioIo::new(io))
                .await
                .unwrap();
        drop(connection);
        let closed = sender.ready().await.unwrap_err();
        assert!(closed.is_closed(), "{closed:?}");
        assert!(failed_in_transit(&closed));
        let canceled = sender
            .send_request(http::Request::new(String::new()))
            .await
            .unwrap_err();
        assert!(canceled.is_canceled(), "{canceled:?}");
        assert!(failed_in_transit(&canceled));
    }
}
