use super::*;

/// A status whose details hold one `RetryInfo` of `seconds` and `nanos`,
/// as a server may send it (the types inferred: prost-types is not named).
fn with_retry_info(code: Code, seconds: i64, nanos: i32) -> Status {
    let mut info = tonic_types::pb::RetryInfo::default();
    let delay = info.retry_delay.get_or_insert_with(Default::default);
    delay.seconds = seconds;
    delay.nanos = nanos;
    let mut details = tonic_types::pb::Status::default();
    details.details.push(Default::default());
    details.details[0].type_url = RetryInfo::TYPE_URL.to_owned();
    details.details[0].value = info.encode_to_vec();
    Status::with_details(code, "slow down", details.encode_to_vec().into())
}

#[test]
fn a_retry_delay_in_protobuf_range_is_the_hint() {
    let delay = |seconds, nanos| retry_info_delay(&with_retry_info(Code::ResourceExhausted, seconds, nanos));
    assert_eq!(delay(2, 500_000_000), Some(Duration::from_millis(2500)));
    assert_eq!(
        delay(315_576_000_000, 999_999_999),
        Some(Duration::new(315_576_000_000, 999_999_999))
    );
    assert_eq!(
        delay(-1, 0),
        Some(Duration::ZERO),
        "negative is 0, as tonic-types reads it"
    );
    assert_eq!(
        delay(1, -500_000_000),
        Some(Duration::from_millis(500)),
        "signs mixed: their sum"
    );
}

#[test]
fn a_retry_delay_past_protobuf_range_is_no_hint_and_no_panic() {
    // prost-types negates `i64::MIN` seconds: an overflow panic in a build
    // with overflow checks, a delay of 0 without.
    for (seconds, nanos) in [
        (i64::MIN, 0),
        (i64::MIN, -999_999_999),
        (i64::MAX, 999_999_999),
        (315_576_000_001, 0),
        (-315_576_000_001, 0),
        (0, 1_000_000_000),
        (0, i32::MIN),
    ] {
        let status = with_retry_info(Code::ResourceExhausted, seconds, nanos);
        assert_eq!(retry_info_delay(&status), None, "{seconds}s {nanos}ns");
        assert!(
            !is_retryable_status(&status),
            "no valid RetryInfo: {seconds}s {nanos}ns"
        );
    }
}
