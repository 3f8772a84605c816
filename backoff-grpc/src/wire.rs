//! What the gRPC layer reads and writes on the wire.
//!
//! The `grpc-timeout` header (read from the caller, written on each attempt),
//! the status of a Trailers-Only response, the server's
//! `grpc-retry-pushback-ms` and `RetryInfo`, and `grpc-previous-rpc-attempts`.

use core::time::Duration;

use base64::Engine as _;
use base64::alphabet;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use http::{HeaderMap, HeaderName, HeaderValue};
use tonic::Status;

use backoff_tower::Pushback;

/// The call's deadline, relative to its start.
pub(crate) const GRPC_TIMEOUT: HeaderName = HeaderName::from_static("grpc-timeout");
/// The number of attempts before this one, on each retry.
pub(crate) const PREVIOUS_ATTEMPTS: HeaderName = HeaderName::from_static("grpc-previous-rpc-attempts");
/// Sets `grpc-previous-rpc-attempts` to `previous`: on an attempt's
/// request, and on the answer the caller gets (A6's exposed retry
/// metadata).
pub(crate) fn set_previous_attempts(headers: &mut HeaderMap, previous: u32) {
    headers.insert(PREVIOUS_ATTEMPTS, HeaderValue::from(previous));
}

/// The server's pushback, in milliseconds.
const PUSHBACK: HeaderName = HeaderName::from_static("grpc-retry-pushback-ms");
/// Whether `headers` are a Trailers-Only response's (they carry its
/// `grpc-status`); other response headers commit the call.
pub(crate) fn is_trailers_only(headers: &HeaderMap) -> bool {
    headers.contains_key(GRPC_STATUS)
}

/// The status of a Trailers-Only response, in its headers.
const GRPC_STATUS: HeaderName = HeaderName::from_static("grpc-status");

/// A `grpc-timeout` value (up to 8 digits and a unit: `H`, `M`, `S`, `m`,
/// `u`, `n`), or `None` when it is not one.
pub(crate) fn read_timeout(headers: &HeaderMap) -> Option<Duration> {
    let value = headers.get(GRPC_TIMEOUT)?.to_str().ok()?;
    let unit = value.chars().last()?;
    let digits = &value[..value.len() - unit.len_utf8()];
    if digits.is_empty() || digits.len() > 8 || !digits.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    let amount: u64 = digits.parse().ok()?;
    Some(match unit {
        'H' => Duration::from_secs(amount * 3600),
        'M' => Duration::from_secs(amount * 60),
        'S' => Duration::from_secs(amount),
        'm' => Duration::from_millis(amount),
        'u' => Duration::from_micros(amount),
        'n' => Duration::from_nanos(amount),
        _ => return None,
    })
}

/// `left` as a `grpc-timeout` value: the finest unit whose count fits in 8
/// digits (as tonic writes it), rounded down.
pub(crate) fn timeout_value(left: Duration) -> HeaderValue {
    const MOST: u128 = 99_999_999;
    let secs = u128::from(left.as_secs());
    let (count, unit) = [
        (left.as_nanos(), 'n'),
        (left.as_micros(), 'u'),
        (left.as_millis(), 'm'),
        (secs, 'S'),
        (secs / 60, 'M'),
        (secs / 3600, 'H'),
    ]
    .into_iter()
    .find(|(count, _)| *count <= MOST)
    .unwrap_or((MOST, 'H'));
    // Digits and one ASCII letter: always a valid header value.
    HeaderValue::from_str(&format!("{count}{unit}")).unwrap_or(HeaderValue::from_static("99999999H"))
}

/// The status details of a Trailers-Only response, base64-encoded.
const GRPC_STATUS_DETAILS: HeaderName = HeaderName::from_static("grpc-status-details-bin");

/// base64 as tonic decodes `grpc-status-details-bin`: the standard
/// alphabet, padding optional.
const DETAILS_BASE64: GeneralPurpose = GeneralPurpose::new(
    &alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// The status of a Trailers-Only response (`grpc-status` in its headers),
/// or `None` when the headers are not Trailers-Only (they commit the call).
pub(crate) fn trailers_only_status(headers: &HeaderMap) -> Option<Status> {
    if !is_trailers_only(headers) {
        return None;
    }
    Some(status_of(headers).unwrap_or_else(|| Status::unknown("unparsable grpc-status")))
}

/// The status in `headers` (a Trailers-Only response's, or trailers), or
/// `None` without a `grpc-status`. Details that are not base64 are left
/// out: tonic's `Status::from_header_map` panics on them.
pub(crate) fn status_of(headers: &HeaderMap) -> Option<Status> {
    match headers.get(GRPC_STATUS_DETAILS) {
        Some(details) if DETAILS_BASE64.decode(details.as_bytes()).is_err() => {
            let mut readable = headers.clone();
            readable.remove(GRPC_STATUS_DETAILS);
            Status::from_header_map(&readable)
        }
        _ => Status::from_header_map(headers),
    }
}

/// The longest pushback the layer waits: 120 s, the longest wait gRPC's
/// own connection backoff makes (`MAX_BACKOFF`). A longer one says not to
/// retry.
pub(crate) const MAX_PUSHBACK_MILLIS: u64 = 120_000;

/// The server's `grpc-retry-pushback-ms`: one integer from 0 to
/// [`MAX_PUSHBACK_MILLIS`] is an exact wait; a negative one, a longer one,
/// one that is not a number, or more than one value says not to retry (as
/// grpc-go and grpc-java read it, with the ceiling added).
pub(crate) fn pushback(headers: &HeaderMap) -> Option<Pushback> {
    let mut values = headers.get_all(PUSHBACK).iter();
    let first = values.next()?;
    if values.next().is_some() {
        return Some(Pushback::Stop);
    }
    let millis = first.to_str().ok().and_then(|text| text.trim().parse::<i64>().ok());
    Some(match millis.and_then(|millis| u64::try_from(millis).ok()) {
        Some(millis) if millis <= MAX_PUSHBACK_MILLIS => Pushback::After(Duration::from_millis(millis)),
        _ => Pushback::Stop,
    })
}

/// Sets `grpc-retry-pushback-ms` to `wait`, rounded up to the millisecond
/// (never early).
pub(crate) fn set_pushback(headers: &mut HeaderMap, wait: Duration) {
    let millis = wait.as_nanos().div_ceil(1_000_000);
    headers.insert(PUSHBACK, HeaderValue::from(u64::try_from(millis).unwrap_or(u64::MAX)));
}

/// How the answer of a call sent once (its method has no `retryPolicy`)
/// changes the throttle, as A6 has every call on the channel change it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ThrottleFeed {
    /// Response headers (the call is committed), or a Trailers-Only `OK`:
    /// a success, which gives back `tokenRatio`.
    Success,
    /// A failed Trailers-Only status whose pushback says not to retry: it
    /// takes a token (no status of a call without a policy is retryable).
    Refused,
    /// Another failed Trailers-Only status: it changes nothing.
    Neither,
}

/// What the response `headers` of a call sent once do to the throttle:
/// read without parsing the status unless it is in the headers.
pub(crate) fn throttle_feed(headers: &HeaderMap) -> ThrottleFeed {
    match headers.get(GRPC_STATUS) {
        None => ThrottleFeed::Success,
        Some(code) if code.as_bytes() == b"0" => ThrottleFeed::Success,
        Some(_) if pushback(headers) == Some(Pushback::Stop) => ThrottleFeed::Refused,
        Some(_) => ThrottleFeed::Neither,
    }
}

#[cfg(test)]
mod tests;
