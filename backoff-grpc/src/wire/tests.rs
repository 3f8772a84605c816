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
    // Past 99,999,999 seconds (3 years): minutes, then hours.
    assert_eq!(write(Duration::from_secs(200_000_000)), "3333333M");
    assert_eq!(write(Duration::from_secs(7_200_000_000)), "2000000H");
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

#[test]
fn a_pushback_past_the_ceiling_says_not_to_retry() {
    let read = |value: &'static str| pushback(&headers(&[("grpc-retry-pushback-ms", value)]));
    assert_eq!(read("120000"), Some(Pushback::After(Duration::from_secs(120))));
    assert_eq!(read("120001"), Some(Pushback::Stop));
    assert_eq!(
        read("9223372036854775807"),
        Some(Pushback::Stop),
        "30 years: not waited"
    );
    assert_eq!(
        read("9223372036854775808"),
        Some(Pushback::Stop),
        "past i64: not a number"
    );
}

#[test]
fn status_details_that_are_not_base64_are_left_out_of_the_status() {
    // tonic's `Status::from_header_map` panics on them (grpc/grpc-rust#2618).
    for details in ["b", "bb", "!!!!", "YQ=x"] {
        let answer = [
            ("grpc-status", "14"),
            ("grpc-message", "down"),
            ("grpc-status-details-bin", details),
        ];
        let status = trailers_only_status(&headers(&answer)).expect("a Trailers-Only status");
        assert_eq!(
            (status.code(), status.message()),
            (Code::Unavailable, "down"),
            "{details}"
        );
        assert!(status.details().is_empty(), "{details}");
    }
    // Valid base64, padded or not, is kept.
    for details in ["YQ==", "YQ"] {
        let status = trailers_only_status(&headers(&[("grpc-status", "14"), ("grpc-status-details-bin", details)]));
        assert_eq!(status.expect("a status").details(), b"a", "{details}");
    }
}
