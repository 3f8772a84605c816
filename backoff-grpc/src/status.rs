//! Which gRPC errors to retry, by Google's AIP-194.
//!
//! Retry `UNAVAILABLE`; retry `RESOURCE_EXHAUSTED` only when the server sent a
//! `google.rpc.RetryInfo` (it is then telling you when it will have room);
//! never the codes a retry cannot fix (`INVALID_ARGUMENT`, `NOT_FOUND`,
//! `ALREADY_EXISTS`, `PERMISSION_DENIED`, `UNAUTHENTICATED`,
//! `FAILED_PRECONDITION`, `OUT_OF_RANGE`, `UNIMPLEMENTED`, `DATA_LOSS`,
//! `CANCELLED`); the rest (`DEADLINE_EXCEEDED`, `ABORTED`, `INTERNAL`,
//! `UNKNOWN`) only when you opt in, since whether they are safe to retry
//! depends on the method. `RetryInfo`'s `retry_delay` is the server's hint,
//! capped by `max_backoff` exactly like `Retry-After`.
//!
//! ```
//! use backoff_runtime::retry;
//! use backoff_grpc::status::{is_retryable_status, retry_info_delay};
//! use tonic::{Code, Status};
//!
//! #[retry(max_retries = 4, max_backoff = "10s", retry_if = is_retryable_status, retry_after = retry_info_delay)]
//! async fn check(attempts: &std::sync::atomic::AtomicU32) -> Result<u32, Status> {
//!     let n = attempts.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
//!     if n < 3 { Err(Status::unavailable("restarting")) } else { Ok(n) }
//! }
//! # #[tokio::main(flavor = "current_thread", start_paused = true)]
//! # async fn main() {
//! assert_eq!(check(&Default::default()).await.unwrap(), 3);
//! assert!(!is_retryable_status(&Status::new(Code::NotFound, "no such row")));
//! # }
//! ```
//!
//! These retry a call at the call (the attribute or
//! [`Policy::retry`](backoff_runtime::Policy::retry) around the client's method, with a
//! fresh `tonic::Request` per attempt). To retry in the channel instead, by
//! the service config, as gRPC's Go and Java clients do, put
//! [`GrpcRetryLayer`](crate::GrpcRetryLayer) under the client.
//! [`set_grpc_timeout`] gives each attempt the time left before
//! `max_elapsed` as its `grpc-timeout`.

use core::time::Duration;

use prost::Message as _;
use tonic::{Code, Status};
use tonic_types::RetryInfo;

use backoff_runtime::__front_end::SemanticConventions;
use backoff_runtime::Attempt;

/// The codes AIP-194 says never to retry: a retry cannot fix them.
const NEVER: [Code; 10] = [
    Code::InvalidArgument,
    Code::NotFound,
    Code::AlreadyExists,
    Code::PermissionDenied,
    Code::Unauthenticated,
    Code::FailedPrecondition,
    Code::OutOfRange,
    Code::Unimplemented,
    Code::DataLoss,
    Code::Cancelled,
];

/// Whether `status` is worth retrying by AIP-194: `UNAVAILABLE`, and
/// `RESOURCE_EXHAUSTED` with a `RetryInfo`.
///
/// ```
/// use backoff_grpc::status::is_retryable_status;
/// use tonic::{Code, Status};
///
/// assert!(is_retryable_status(&Status::unavailable("restarting")));
/// assert!(!is_retryable_status(&Status::resource_exhausted("quota")), "no RetryInfo: not retried");
/// assert!(!is_retryable_status(&Status::invalid_argument("bad id")));
/// assert!(!is_retryable_status(&Status::new(Code::Aborted, "conflict")), "opt-in only");
/// ```
#[must_use]
pub fn is_retryable_status(status: &Status) -> bool {
    match status.code() {
        Code::Unavailable => true,
        Code::ResourceExhausted => retry_info_delay(status).is_some(),
        _ => false,
    }
}

/// [`is_retryable_status`], plus the codes in `also` (for example
/// `DEADLINE_EXCEEDED` or `ABORTED` on a method you know to be idempotent).
/// The codes AIP-194 says never to retry stay unretried even when listed.
///
/// ```
/// use backoff_grpc::status::is_retryable_status_or;
/// use tonic::{Code, Status};
///
/// let aborted = Status::new(Code::Aborted, "transaction conflict");
/// assert!(is_retryable_status_or(&aborted, &[Code::Aborted]));
/// assert!(!is_retryable_status_or(&Status::not_found("gone"), &[Code::NotFound]));
/// ```
#[must_use]
pub fn is_retryable_status_or(status: &Status, also: &[Code]) -> bool {
    is_retryable_status(status) || (also.contains(&status.code()) && !NEVER.contains(&status.code()))
}

/// The server's hint: the `retry_delay` of a `google.rpc.RetryInfo` in the
/// status's details (`grpc-status-details-bin`), for `retry_after`. Capped
/// by `max_backoff` like every hint: a longer one ends the retries
/// (`StopReason::HintAboveCap`) unless `hint_above_cap = cap`.
///
/// ```
/// use backoff_grpc::status::retry_info_delay;
/// use std::time::Duration;
/// use tonic::Code;
/// use tonic_types::{ErrorDetails, StatusExt};
///
/// let status = tonic::Status::with_error_details(
///     Code::ResourceExhausted,
///     "slow down",
///     ErrorDetails::with_retry_info(Some(Duration::from_secs(2))),
/// );
/// assert_eq!(retry_info_delay(&status), Some(Duration::from_secs(2)));
/// assert_eq!(retry_info_delay(&tonic::Status::unavailable("down")), None);
/// ```
///
/// A delay outside protobuf's range (more than 10,000 years either way)
/// is no hint: `None`. A negative one is 0, as tonic-types reads it.
#[must_use]
pub fn retry_info_delay(status: &Status) -> Option<Duration> {
    let details = tonic_types::pb::Status::decode(status.details()).ok()?;
    let info = details
        .details
        .iter()
        .filter(|any| any.type_url == RetryInfo::TYPE_URL)
        .find_map(|any| tonic_types::pb::RetryInfo::decode(any.value.as_slice()).ok())?;
    let delay = info.retry_delay?;
    protobuf_duration(delay.seconds, delay.nanos)
}

/// protobuf's largest `Duration`, either way: 10,000 years of seconds.
const MAX_DURATION_SECONDS: i64 = 315_576_000_000;

/// A protobuf `Duration` of `seconds` and `nanos`, or `None` outside
/// protobuf's range. Negative is 0. Checked before any arithmetic:
/// prost-types' conversion overflows on `i64::MIN` seconds.
fn protobuf_duration(seconds: i64, nanos: i32) -> Option<Duration> {
    let in_range = (-MAX_DURATION_SECONDS..=MAX_DURATION_SECONDS).contains(&seconds)
        && (-999_999_999..=999_999_999).contains(&nanos);
    if !in_range {
        return None;
    }
    let nanos = i64::from(nanos);
    // Both in range: no overflow, and a sign of its own for each.
    let total = i128::from(seconds) * 1_000_000_000 + i128::from(nanos);
    let total = u128::try_from(total).unwrap_or(0);
    let whole = u64::try_from(total / 1_000_000_000).unwrap_or(u64::MAX);
    let rest = u32::try_from(total % 1_000_000_000).unwrap_or(0);
    Some(Duration::new(whole, rest))
}

/// Sets `request`'s `grpc-timeout` to the time `attempt` has left before
/// `max_elapsed` (nothing without `max_elapsed`), so the server stops
/// working on an attempt the caller will not wait for.
///
/// ```
/// use backoff_runtime::{Attempt, Policy};
/// use backoff_grpc::status::set_grpc_timeout;
/// use std::time::Duration;
///
/// let policy = Policy::new().max_elapsed(Duration::from_secs(30));
/// let result = policy
///     .retry_with_attempt(|attempt: Attempt| {
///         let mut request = tonic::Request::new(());
///         set_grpc_timeout(&mut request, &attempt);
///         assert!(request.metadata().get("grpc-timeout").is_some());
///         Ok::<_, tonic::Status>(())
///     })
///     .call();
/// assert!(result.is_ok());
/// ```
pub fn set_grpc_timeout<T>(request: &mut tonic::Request<T>, attempt: &Attempt) {
    if let Some(left) = attempt.time_left() {
        request.set_timeout(left);
    }
}

/// The protocol marker of `Status`'s [`SemanticConventions`] impl: the
/// orphan rule lets this crate implement the runtime's trait for tonic's
/// type only with a type of its own among the trait's parameters. Not
/// public API.
#[doc(hidden)]
#[derive(Debug)]
pub enum Grpc {}

/// With the `tracing` feature, the retry and give-up events of a function
/// failing with a `Status` carry OpenTelemetry's `rpc.grpc.status_code`.
impl SemanticConventions<Grpc> for Status {
    fn grpc_status_code(&self) -> Option<i32> {
        Some(self.code() as i32)
    }
}

#[cfg(test)]
mod tests;
