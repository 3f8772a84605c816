use super::*;

#[test]
fn junk_is_none_and_nothing_panics() {
    for junk in [
        "",
        " ",
        "-1",
        "1.5",
        "1e3",
        "soon",
        "Wed, 99 Oct 2015 07:28:00 GMT",
        "\u{0}",
        "12 34",
    ] {
        assert_eq!(parse_retry_after(junk), None, "{junk:?}");
    }
    assert_eq!(
        parse_retry_after("99999999999999999999999"),
        Some(Duration::from_secs(u64::MAX))
    );
}

#[test]
fn both_forms() {
    let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_445_412_470);
    assert_eq!(parse_retry_after_at("0", now), Some(Duration::ZERO));
    assert_eq!(
        parse_retry_after_at("Wed, 21 Oct 2015 07:28:00 GMT", now),
        Some(Duration::from_secs(10))
    );
    // The obsolete forms HTTP-date allows.
    assert_eq!(
        parse_retry_after_at("Wednesday, 21-Oct-15 07:28:00 GMT", now),
        Some(Duration::from_secs(10))
    );
    assert_eq!(
        parse_retry_after_at("Wed Oct 21 07:28:00 2015", now),
        Some(Duration::from_secs(10))
    );
}

#[test]
fn io_kinds() {
    for kind in [
        ErrorKind::TimedOut,
        ErrorKind::ConnectionRefused,
        ErrorKind::ConnectionReset,
        ErrorKind::ConnectionAborted,
        ErrorKind::BrokenPipe,
        ErrorKind::NetworkUnreachable,
        ErrorKind::HostUnreachable,
        ErrorKind::NetworkDown,
    ] {
        assert!(is_retryable_io_kind(kind), "{kind:?}");
    }
    for kind in [
        ErrorKind::NotFound,
        ErrorKind::PermissionDenied,
        ErrorKind::InvalidData,
        ErrorKind::UnexpectedEof,
        ErrorKind::Other,
    ] {
        assert!(!is_retryable_io_kind(kind), "{kind:?}");
    }
}

fn headers(pairs: &[(&'static str, &'static str)]) -> http::HeaderMap {
    let mut map = http::HeaderMap::new();
    for (name, value) in pairs {
        map.insert(*name, http::HeaderValue::from_static(value));
    }
    map
}

#[test]
fn the_millisecond_headers_come_before_retry_after() {
    let both = headers(&[("retry-after", "7"), ("x-ms-retry-after-ms", "250")]);
    assert_eq!(retry_after_header(&both), Some(Duration::from_millis(250)));
    let three = headers(&[
        ("retry-after", "7"),
        ("x-ms-retry-after-ms", "250"),
        ("retry-after-ms", "40"),
    ]);
    assert_eq!(retry_after_header(&three), Some(Duration::from_millis(40)));
    // An unreadable one is passed over.
    let bad = headers(&[("retry-after-ms", "soon"), ("retry-after", "7")]);
    assert_eq!(retry_after_header(&bad), Some(Duration::from_secs(7)));
}

#[test]
fn the_ratelimit_field_gives_the_reset_of_an_exhausted_policy() {
    let exhausted = headers(&[("ratelimit", "\"burst\";r=5;t=1, \"daily\";r=0;t=3600")]);
    assert_eq!(retry_after_header(&exhausted), Some(Duration::from_secs(3600)));
    // Quota left: no hint.
    let left = headers(&[("ratelimit", "\"default\";r=3;t=30")]);
    assert_eq!(retry_after_header(&left), None);
    // Retry-After comes first.
    let both = headers(&[("ratelimit", "\"default\";r=0;t=30"), ("retry-after", "2")]);
    assert_eq!(retry_after_header(&both), Some(Duration::from_secs(2)));
    // The older drafts' fields.
    let older = headers(&[("ratelimit-remaining", "0"), ("ratelimit-reset", "12")]);
    assert_eq!(retry_after_header(&older), Some(Duration::from_secs(12)));
    let older_left = headers(&[("ratelimit-remaining", "4"), ("ratelimit-reset", "12")]);
    assert_eq!(retry_after_header(&older_left), None);
}

#[test]
fn a_remaining_quota_written_as_another_zero_is_exhausted() {
    // RFC 9651's integers: an optional `-`, then up to 15 digits.
    for remaining in ["00", "-0", "000000000000000", " 0 "] {
        let field = format!("\"default\";r={remaining};t=30");
        let limited = headers_owned(&[("ratelimit", &field)]);
        assert_eq!(
            retry_after_header(&limited),
            Some(Duration::from_secs(30)),
            "r={remaining}"
        );
        let older = headers_owned(&[("ratelimit-remaining", remaining), ("ratelimit-reset", "12")]);
        assert_eq!(retry_after_header(&older), Some(Duration::from_secs(12)), "{remaining}");
    }
    for remaining in ["", "-", "--0", "0000000000000000", "0.0", "+0", "1", "-1", "0x0"] {
        let field = format!("\"default\";r={remaining};t=30");
        assert_eq!(
            retry_after_header(&headers_owned(&[("ratelimit", &field)])),
            None,
            "r={remaining}"
        );
    }
}

fn headers_owned(pairs: &[(&'static str, &str)]) -> http::HeaderMap {
    let mut map = http::HeaderMap::new();
    for (name, value) in pairs {
        map.append(*name, http::HeaderValue::from_str(value).unwrap());
    }
    map
}
