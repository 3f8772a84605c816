//! What the gRPC layer reads and writes on the wire: the `grpc-timeout`
//! header (read from the caller, written on each attempt), the status of a
//! Trailers-Only response, the server's `grpc-retry-pushback-ms` and
//! `RetryInfo`, and `grpc-previous-rpc-attempts`.

use core::time::Duration;

use http::{HeaderMap, HeaderName, HeaderValue};
use tonic::Status;

use backoff_runtime::__front_end::Pushback;

/// The call's deadline, relative to its start.
pub(crate) const GRPC_TIMEOUT: HeaderName = HeaderName::from_static("grpc-timeout");
/// The number of attempts before this one, on each retry.
pub(crate) const PREVIOUS_ATTEMPTS: HeaderName = HeaderName::from_static("grpc-previous-rpc-attempts");
/// The server's pushback, in milliseconds.
const PUSHBACK: HeaderName = HeaderName::from_static("grpc-retry-pushback-ms");
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

/// The status of a Trailers-Only response (`grpc-status` in its headers),
/// or `None` when the headers are not Trailers-Only (they commit the call).
pub(crate) fn trailers_only_status(headers: &HeaderMap) -> Option<Status> {
    if !headers.contains_key(GRPC_STATUS) {
        return None;
    }
    Some(Status::from_header_map(headers).unwrap_or_else(|| Status::unknown("unparsable grpc-status")))
}

/// The server's `grpc-retry-pushback-ms`: one non-negative integer is an
/// exact wait; a negative one, one that is not a number, or more than one
/// value says not to retry (as grpc-go and grpc-java read it).
pub(crate) fn pushback(headers: &HeaderMap) -> Option<Pushback> {
    let mut values = headers.get_all(PUSHBACK).iter();
    let first = values.next()?;
    if values.next().is_some() {
        return Some(Pushback::Stop);
    }
    let millis = first.to_str().ok().and_then(|text| text.trim().parse::<i64>().ok());
    Some(match millis.and_then(|millis| u64::try_from(millis).ok()) {
        Some(millis) => Pushback::After(Duration::from_millis(millis)),
        None => Pushback::Stop,
    })
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
mod tests {
    use super::*;
    use tonic::Code;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(HeaderName::from_static(name), HeaderValue::from_static(value));
        }
        map
    }

    #[test]
    fn grpc_timeout_is_read_in_every_unit() {
        let read = |value: &'static str| read_timeout(&headers(&[("grpc-timeout", value)]));
        assert_eq!(read("2H"), Some(Duration::from_secs(7200)));
        assert_eq!(read("3M"), Some(Duration::from_secs(180)));
        assert_eq!(read("5S"), Some(Duration::from_secs(5)));
        assert_eq!(read("250m"), Some(Duration::from_millis(250)));
        assert_eq!(read("20000000u"), Some(Duration::from_secs(20)));
        assert_eq!(read("7n"), Some(Duration::from_nanos(7)));
        assert_eq!(read("123456789m"), None, "at most 8 digits");
        assert_eq!(read("m"), None);
        assert_eq!(read("5s"), None, "lower-case s is no unit");
        assert_eq!(read("-5S"), None);
        assert_eq!(read_timeout(&HeaderMap::new()), None);
    }

    #[test]
    fn grpc_timeout_is_written_in_the_finest_unit_that_fits() {
        let write = |left| timeout_value(left).to_str().unwrap().to_owned();
        assert_eq!(write(Duration::from_millis(20)), "20000000n");
        assert_eq!(write(Duration::from_secs(20)), "20000000u");
        assert_eq!(write(Duration::from_secs(200)), "200000m");
        assert_eq!(write(Duration::from_secs(200_000)), "200000S");
        assert_eq!(write(Duration::ZERO), "0n");
        assert_eq!(write(Duration::MAX), "99999999H");
        for left in [
            Duration::from_nanos(1),
            Duration::from_secs(1),
            Duration::from_secs(1 << 30),
        ] {
            let value = timeout_value(left);
            let read = read_timeout(&headers_with(value)).unwrap();
            assert!(read <= left, "rounded down: {read:?} for {left:?}");
        }
    }

    fn headers_with(value: HeaderValue) -> HeaderMap {
        let mut map = HeaderMap::new();
        map.insert(GRPC_TIMEOUT, value);
        map
    }

    #[test]
    fn pushback_values() {
        let read = |values: &[&'static str]| {
            let pairs: Vec<_> = values.iter().map(|value| ("grpc-retry-pushback-ms", *value)).collect();
            pushback(&headers(&pairs))
        };
        assert_eq!(read(&[]), None);
        assert_eq!(read(&["0"]), Some(Pushback::After(Duration::ZERO)));
        assert_eq!(read(&["300"]), Some(Pushback::After(Duration::from_millis(300))));
        assert_eq!(read(&["-1"]), Some(Pushback::Stop));
        assert_eq!(read(&["abc"]), Some(Pushback::Stop));
        assert_eq!(read(&["1", "2"]), Some(Pushback::Stop), "more than one value");
    }

    #[test]
    fn trailers_only_is_told_by_grpc_status_in_the_headers() {
        assert!(trailers_only_status(&headers(&[("content-type", "application/grpc")])).is_none());
        let status = trailers_only_status(&headers(&[("grpc-status", "14"), ("grpc-message", "down")])).unwrap();
        assert_eq!((status.code(), status.message()), (Code::Unavailable, "down"));
    }

    #[test]
    fn a_call_sent_once_feeds_the_throttle_by_its_response_headers() {
        let feed = |pairs: &[(&'static str, &'static str)]| throttle_feed(&headers(pairs));
        assert_eq!(feed(&[("content-type", "application/grpc")]), ThrottleFeed::Success);
        assert_eq!(feed(&[("grpc-status", "0")]), ThrottleFeed::Success);
        assert_eq!(feed(&[("grpc-status", "14")]), ThrottleFeed::Neither);
        assert_eq!(
            feed(&[("grpc-status", "14"), ("grpc-retry-pushback-ms", "-1")]),
            ThrottleFeed::Refused
        );
        assert_eq!(
            feed(&[("grpc-status", "14"), ("grpc-retry-pushback-ms", "10")]),
            ThrottleFeed::Neither
        );
    }
}
