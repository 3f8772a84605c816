//! `GrpcRules`: how the gRPC layer judges one method's calls.
//!
//! How the gRPC layer judges one method's calls for the
//! retry loop: the policy's status codes, the server's pushback and
//! `RetryInfo`, the attempt headers (`grpc-previous-rpc-attempts`,
//! `grpc-timeout`), and the call's deadline.

use core::time::Duration;

use http::{HeaderMap, Response};
use tonic::body::Body;

use super::call::{FailedAttempt as _, FailureKind, GrpcCall};
use super::codes::CodeSet;
use super::wire;
use backoff_runtime::__front_end::SemanticConventions;
use backoff_runtime::Attempt;
use backoff_tower::__grpc::{Failure, LayerClassify};
use backoff_tower::{Classify, Pushback};

/// One method's retry rules: the status codes its `retryPolicy` retries.
#[derive(Clone, Copy, Debug)]
pub(crate) struct GrpcRules {
    pub(crate) codes: CodeSet,
    /// A `RESOURCE_EXHAUSTED` with a `RetryInfo` is retried too
    /// ([`RetryPolicy::retries_exhausted_with_retry_info`](super::RetryPolicy::retries_exhausted_with_retry_info)).
    pub(crate) exhausted_with_retry_info: bool,
    /// The method hedges: its attempts run side by side, each fed the
    /// whole request body.
    pub(crate) hedged: bool,
}

/// Room in an attempt's headers for those added after the copy: the
/// attempt headers here (`grpc-previous-rpc-attempts`, `grpc-timeout`) and
/// the channel's own (tonic's `Channel` adds `user-agent`).
const HEADER_ROOM: usize = 4;

/// A copy of the call's `headers` for one attempt, with room for
/// [`HEADER_ROOM`] more. `HeaderMap::clone` copies the entries into a
/// vector of exactly their number, so the first header added below the
/// layer (tonic's `user-agent`, on every call) reallocates it: about 700
/// instructions a call, 7% of what the layer adds to a loopback call.
/// An empty map is not copied: the channel's first header allocates it,
/// as it would without the layer, and the copy's room would save nothing.
fn attempt_headers(headers: &HeaderMap) -> HeaderMap {
    if headers.is_empty() {
        return HeaderMap::new();
    }
    let mut copy = HeaderMap::with_capacity(headers.len() + HEADER_ROOM);
    for (name, value) in headers {
        copy.append(name.clone(), value.clone());
    }
    copy
}

impl<E> Classify<GrpcCall, Response<Body>, Failure<FailureKind<E>>> for GrpcRules {
    /// The attempt headers read the deadline, which is whole without it.
    const READS_ATTEMPT_TIME: bool = false;

    fn may_retry(&self, call: &GrpcCall) -> bool {
        call.request.is_kept()
    }

    /// Its body is kept, and has not outgrown the replay cap.
    fn may_resend(&self, call: &GrpcCall) -> bool {
        call.request.is_replayable()
    }

    /// The method: the request's path, `/package.Service/Method`.
    fn admission_key<'r>(&self, call: &'r GrpcCall) -> Option<&'r str> {
        Some(call.request.uri().path())
    }

    fn replay(&self, call: &GrpcCall, attempt: &Attempt) -> GrpcCall {
        if self.hedged {
            // Before an attempt reads the body: none supersedes another.
            call.request.side_by_side();
        }
        let mut headers = attempt_headers(call.request.headers());
        let before = attempt.number().saturating_sub(1);
        if before > 0 {
            wire::set_previous_attempts(&mut headers, before);
        }
        if let Some(left) = attempt.time_left() {
            headers.insert(wire::GRPC_TIMEOUT, wire::timeout_value(left));
        }
        GrpcCall {
            request: call.request.again(headers),
            deadline: call.deadline,
            previous: before,
        }
    }

    fn deadline(&self, call: &GrpcCall) -> Option<Duration> {
        call.deadline
    }

    /// A retryable status (a transport error counts as `UNAVAILABLE`) of a
    /// call whose body is still kept; also a pushback that says not to
    /// retry, so that the throttle counts it before the call ends; and,
    /// under a policy built in code without codes, a `RESOURCE_EXHAUSTED`
    /// that says when to come back.
    fn retry_error(&self, failure: &Failure<FailureKind<E>>) -> bool {
        let refused = matches!(
            &failure.kind,
            FailureKind::Status {
                pushback: Some(Pushback::Stop),
                ..
            }
        );
        let told_when = self.exhausted_with_retry_info
            && matches!(
                &failure.kind,
                FailureKind::Status {
                    code: tonic::Code::ResourceExhausted,
                    retry_info: Some(_),
                    ..
                }
            );
        failure.replayable && (self.codes.contains(failure.code()) || refused || told_when)
    }

    /// The `RetryInfo` in `grpc-status-details-bin`: a hint, capped by
    /// `maxBackoff` as every hint is.
    fn error_hint(&self, failure: &Failure<FailureKind<E>>) -> Option<Duration> {
        match &failure.kind {
            FailureKind::Status { retry_info, .. } => *retry_info,
            FailureKind::Transport(_) => None,
        }
    }

    fn pushback(&self, failure: &Failure<FailureKind<E>>) -> Option<Pushback> {
        match &failure.kind {
            FailureKind::Status { pushback, .. } => *pushback,
            FailureKind::Transport(_) => None,
        }
    }
}

impl<E> LayerClassify<GrpcCall, Response<Body>, Failure<FailureKind<E>>> for GrpcRules {
    /// Every accepted answer: the layer's future returns it when its
    /// headers come, and the call ends at the status in its trailers (or
    /// at once: a Trailers-Only `OK`, or when no one listens).
    const ENDS_LATER: bool = true;

    /// The failure's status code.
    fn error_conventions(failure: &Failure<FailureKind<E>>) -> Option<&dyn SemanticConventions> {
        Some(&failure.kind)
    }
}
