//! Which HTTP and I/O errors to retry.
//!
//! Which errors to retry, by the rule of Google Cloud's truncated exponential
//! backoff: load and network failures (HTTP 408, 429 and every 5xx;
//! timed-out, refused, reset and aborted connections), never errors such as
//! bad credentials or "not found"; and the server's `Retry-After` hint, in
//! both of its forms. Feature `http`.
//!
//! ```
//! use backoff_runtime::http_errors::{is_retryable_status, parse_retry_after};
//! use http::StatusCode;
//! use std::time::Duration;
//!
//! assert!(is_retryable_status(StatusCode::SERVICE_UNAVAILABLE));
//! assert!(!is_retryable_status(StatusCode::NOT_FOUND));
//! assert_eq!(parse_retry_after("120"), Some(Duration::from_secs(120)));
//! ```

use core::time::Duration;
use std::io::ErrorKind;
use std::time::SystemTime;

use http::{HeaderMap, StatusCode, header::RETRY_AFTER};

/// Whether a response with this status is worth retrying: 408 Request
/// Timeout, 429 Too Many Requests, and every 5xx. Everything else (4xx such
/// as 401, 403, 404; 1xx-3xx) is not.
///
/// ```
/// use backoff_runtime::http_errors::is_retryable_status;
/// use http::StatusCode;
///
/// for code in [408, 429, 500, 502, 503, 504, 599] {
///     assert!(is_retryable_status(StatusCode::from_u16(code).unwrap()));
/// }
/// for code in [200, 301, 400, 401, 403, 404, 409, 422] {
///     assert!(!is_retryable_status(StatusCode::from_u16(code).unwrap()));
/// }
/// ```
#[must_use]
pub fn is_retryable_status(status: StatusCode) -> bool {
    status.is_server_error() || status == StatusCode::REQUEST_TIMEOUT || status == StatusCode::TOO_MANY_REQUESTS
}

/// Whether an I/O error is a network failure worth retrying: a timeout; a
/// connection refused, reset, aborted, or closed under a write (broken
/// pipe); a network or host unreachable, or a network down. Everything else
/// (not found, permission denied, invalid data, an unexpected end of file,
/// which a truncated file gives as well as a cut connection...) is not.
///
/// ```
/// use backoff_runtime::http_errors::is_retryable_io_kind;
/// use std::io::ErrorKind;
///
/// assert!(is_retryable_io_kind(ErrorKind::ConnectionReset));
/// assert!(!is_retryable_io_kind(ErrorKind::PermissionDenied));
/// ```
#[must_use]
pub fn is_retryable_io_kind(kind: ErrorKind) -> bool {
    matches!(
        kind,
        ErrorKind::TimedOut
            | ErrorKind::ConnectionRefused
            | ErrorKind::ConnectionReset
            | ErrorKind::ConnectionAborted
            | ErrorKind::BrokenPipe
            | ErrorKind::NetworkUnreachable
            | ErrorKind::HostUnreachable
            | ErrorKind::NetworkDown
    )
}

/// Parses a `Retry-After` value: delta-seconds (`"120"`) or an HTTP-date
/// (`"Wed, 21 Oct 2015 07:28:00 GMT"`, measured from now; a date in the past
/// is a wait of zero). Junk gives `None`; nothing panics.
///
/// ```
/// use backoff_runtime::http_errors::parse_retry_after;
/// use std::time::Duration;
///
/// assert_eq!(parse_retry_after(" 3 "), Some(Duration::from_secs(3)));
/// assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), Some(Duration::ZERO));
/// assert_eq!(parse_retry_after("soon"), None);
/// ```
#[must_use]
pub fn parse_retry_after(value: &str) -> Option<Duration> {
    parse_retry_after_at(value, crate::time::clock::wall_clock_now())
}

/// [`parse_retry_after`] with an explicit "now", for tests and replays.
///
/// ```
/// use backoff_runtime::http_errors::parse_retry_after_at;
/// use std::time::{Duration, SystemTime, UNIX_EPOCH};
///
/// let now = UNIX_EPOCH + Duration::from_secs(1_445_412_470); // 07:27:50 GMT
/// assert_eq!(parse_retry_after_at("Wed, 21 Oct 2015 07:28:00 GMT", now), Some(Duration::from_secs(10)));
/// ```
#[must_use]
pub fn parse_retry_after_at(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        // Delta-seconds; absurdly large values saturate rather than fail.
        let seconds = value.parse::<u64>().unwrap_or(u64::MAX);
        return Some(Duration::from_secs(seconds));
    }
    let date = httpdate::parse_http_date(value).ok()?;
    Some(date.duration_since(now).unwrap_or(Duration::ZERO))
}

/// The server's hint in a response's headers, if present and readable.
///
/// Read in this order, the first readable one wins:
///
/// 1. `retry-after-ms` and `x-ms-retry-after-ms`: milliseconds (Azure's
///    services and SDKs, OpenAI's API).
/// 2. `Retry-After`: seconds or an HTTP date.
/// 3. The IETF's `RateLimit` field
///    (draft-ietf-httpapi-ratelimit-headers): a policy with no quota left
///    (`r=0`, or another integer equal to 0: `00`, `-0`) and `t` seconds
///    until it resets. The older drafts' `RateLimit-Remaining: 0` with
///    `RateLimit-Reset` too.
///
/// The hint goes where every hint goes: capped by `max_backoff` or ending
/// the retries, as `hint_above_cap` says.
///
/// ```
/// use backoff_runtime::http_errors::retry_after_header;
/// use http::{HeaderMap, HeaderValue, header::RETRY_AFTER};
/// use std::time::Duration;
///
/// let mut headers = HeaderMap::new();
/// headers.insert(RETRY_AFTER, HeaderValue::from_static("7"));
/// assert_eq!(retry_after_header(&headers), Some(Duration::from_secs(7)));
/// headers.insert("retry-after-ms", HeaderValue::from_static("1500"));
/// assert_eq!(retry_after_header(&headers), Some(Duration::from_millis(1500)));
///
/// let mut limited = HeaderMap::new();
/// limited.insert("ratelimit", HeaderValue::from_static("\"default\";r=0;t=30"));
/// assert_eq!(retry_after_header(&limited), Some(Duration::from_secs(30)));
/// ```
#[must_use]
pub fn retry_after_header(headers: &HeaderMap) -> Option<Duration> {
    let text = |name: &str| headers.get(name).and_then(|value| value.to_str().ok());
    ["retry-after-ms", "x-ms-retry-after-ms"]
        .into_iter()
        .find_map(|name| text(name).and_then(parse_millis))
        .or_else(|| headers.get(RETRY_AFTER)?.to_str().ok().and_then(parse_retry_after))
        .or_else(|| text("ratelimit").and_then(rate_limit_reset))
        .or_else(|| {
            let exhausted = text("ratelimit-remaining").is_some_and(is_zero);
            exhausted
                .then(|| text("ratelimit-reset").and_then(parse_seconds))
                .flatten()
        })
}

/// A whole number, digits only (saturating when absurdly large).
fn parse_count(value: &str) -> Option<u64> {
    let value = value.trim();
    (!value.is_empty() && value.bytes().all(|b| b.is_ascii_digit())).then(|| value.parse().unwrap_or(u64::MAX))
}

/// A whole number of milliseconds.
fn parse_millis(value: &str) -> Option<Duration> {
    parse_count(value).map(Duration::from_millis)
}

/// A whole number of seconds.
fn parse_seconds(value: &str) -> Option<Duration> {
    parse_count(value).map(Duration::from_secs)
}

/// The reset of the first `RateLimit` policy with no quota left: its `t`
/// parameter, in seconds. The field is a list of policies, each a name
/// with `;key=value` parameters.
fn rate_limit_reset(field: &str) -> Option<Duration> {
    field.split(',').find_map(|policy| {
        let mut remaining = None;
        let mut reset = None;
        for parameter in policy.split(';').skip(1) {
            match parameter.trim().split_once('=') {
                Some(("r", value)) => remaining = Some(value.trim()),
                Some(("t", value)) => reset = parse_seconds(value),
                _ => {}
            }
        }
        remaining.is_some_and(is_zero).then_some(reset).flatten()
    })
}

/// Whether `value` is a structured field integer equal to 0 (RFC 9651:
/// an optional `-`, then 1 to 15 digits): `0`, `00`, `-0`.
fn is_zero(value: &str) -> bool {
    let digits = value.trim();
    let digits = digits.strip_prefix('-').unwrap_or(digits);
    (1..=15).contains(&digits.len()) && digits.bytes().all(|byte| byte == b'0')
}

#[cfg(test)]
mod tests;
