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
