//! `grpc-status-details-bin` as the status functions read it: a
//! `google.rpc.Status` whose details hold a `RetryInfo` of any delay, other
//! details, or bytes that decode to nothing. `retry_info_delay`,
//! `is_retryable_status` and `is_retryable_status_or` never panic, and a
//! delay is within protobuf's range.

use std::time::Duration;

use backoff_grpc::status::{is_retryable_status, is_retryable_status_or, retry_info_delay};
use prost::Message as _;
use tonic::{Code, Status};

use super::generate::{Bound, OnPanic, Rng};

const RETRY_INFO: &str = "type.googleapis.com/google.rpc.RetryInfo";

/// protobuf's longest `Duration`.
const LONGEST: Duration = Duration::new(315_576_000_000, 999_999_999);

/// A `google.rpc.Status` holding one `RetryInfo` of `seconds` and
/// `nanos`, encoded (the prost-types fields reached through inference).
pub fn retry_info_details(seconds: i64, nanos: i32) -> Vec<u8> {
    let mut info = tonic_types::pb::RetryInfo::default();
    let delay = info.retry_delay.get_or_insert_with(Default::default);
    delay.seconds = seconds;
    delay.nanos = nanos;
    let mut status = tonic_types::pb::Status::default();
    status.details.push(Default::default());
    status.details[0].type_url = RETRY_INFO.to_owned();
    status.details[0].value = info.encode_to_vec();
    status.encode_to_vec()
}

fn seconds(rng: &mut Rng) -> i64 {
    const EDGES: &[i64] = &[
        i64::MIN,
        i64::MIN + 1,
        i64::MAX,
        -315_576_000_001,
        -315_576_000_000,
        315_576_000_000,
        315_576_000_001,
        -1,
        0,
        1,
    ];
    match rng.below(3) {
        0 => rng.word() as i64,
        _ => *rng.pick(EDGES),
    }
}

fn nanos(rng: &mut Rng) -> i32 {
    const EDGES: &[i32] = &[
        i32::MIN,
        i32::MAX,
        -1_000_000_000,
        -999_999_999,
        -1,
        0,
        1,
        999_999_999,
        1_000_000_000,
    ];
    match rng.below(3) {
        0 => rng.word() as i32,
        _ => *rng.pick(EDGES),
    }
}

/// Details as a hostile server may send them.
pub fn details(rng: &mut Rng) -> Vec<u8> {
    match rng.below(6) {
        0 => (0..rng.below(40)).map(|_| rng.word() as u8).collect(),
        1 => {
            // A valid Status, then its bytes cut or changed.
            let mut bytes = retry_info_details(seconds(rng), nanos(rng));
            let at = rng.below(bytes.len() as u64) as usize;
            match rng.below(2) {
                0 => bytes.truncate(at),
                _ => bytes[at] = rng.word() as u8,
            }
            bytes
        }
        _ => retry_info_details(seconds(rng), nanos(rng)),
    }
}

/// One status: never a panic; a delay is in protobuf's range.
pub fn check(code: Code, details: &[u8]) {
    let _told = OnPanic(format!("{code:?} {details:?}"));
    let status = Status::with_details(code, "hostile", details.to_vec().into());
    if let Some(delay) = retry_info_delay(&status) {
        assert!(delay <= LONGEST, "{delay:?}");
    }
    let _ = is_retryable_status(&status);
    let _ = is_retryable_status_or(&status, &[Code::Aborted, Code::ResourceExhausted]);
}

#[test]
fn a_retry_delay_of_i64_min_seconds_is_no_hint() {
    // It panicked in prost-types where overflow checks are on, and was a
    // delay of 0 (a retry at once) where they are off.
    let status = Status::with_details(
        Code::ResourceExhausted,
        "slow down",
        retry_info_details(i64::MIN, 0).into(),
    );
    assert_eq!(retry_info_delay(&status), None);
    assert!(!is_retryable_status(&status));
}

#[test]
fn generated_status_details_are_read_without_a_panic() {
    let mut bound = Bound::new(100_000);
    while let Some(mut rng) = bound.input() {
        let code = Code::from_i32(rng.below(18) as i32);
        let details = details(&mut rng);
        let _told = OnPanic(bound.input_seed());
        check(code, &details);
    }
    bound.report("status details");
}
