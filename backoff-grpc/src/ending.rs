//! `EndingBody`: the body of a committed call.
//!
//! The body of a committed call, read through to its
//! trailers, where the call's status is. The call is reported there (the
//! throttle, the events, `on_success` or `on_give_up`, A96's metrics), not
//! when its headers came.

use core::convert::Infallible;
use core::pin::Pin;
use core::task::{Context, Poll, ready};
use core::time::Duration;
use std::sync::Arc;

use bytes::Bytes;
use http::{HeaderMap, Response, Uri};
use http_body::{Frame, SizeHint};
use tonic::body::Body;
use tonic::{Code, Status};

use super::call::{FailureKind, GrpcCall};
use super::layer::Keys;
use super::wire;
use crate::status::retry_info_delay;
use backoff_runtime::limits::RetryLimit;
use backoff_tower::__grpc::{CommittedCall, Failure};
use backoff_tower::{AdmissionSlot, NoAdmission, Pushback};

/// How a committed call is reported when its status comes.
pub(crate) enum End<A: AdmissionSlot = NoAdmission> {
    /// A call of a method with a `retryPolicy`: its end in the retry
    /// layer, and what A96's per-call metrics record (its method, retries,
    /// waits).
    Retried {
        call: CommittedCall<Keys<A>>,
        /// The method's URI, for A96's metrics (kept with the `metrics`
        /// feature only).
        uri: Option<Uri>,
        retries: u32,
        delay: Duration,
        hedged: bool,
    },
    /// A call sent once (no `retryPolicy`): the layer's throttle.
    Once(Arc<dyn RetryLimit + Send>),
}

impl<A: AdmissionSlot> End<A> {
    /// Reports the call, which ended with `status` (and `trailers`, when
    /// they came).
    fn ended_with(self, status: &Status, trailers: Option<&HeaderMap>) {
        match self {
            End::Retried {
                call,
                uri,
                retries,
                delay,
                hedged,
            } => {
                if status.code() == Code::Ok {
                    call.succeeded();
                } else {
                    let failure = Failure {
                        kind: FailureKind::<Infallible>::Status {
                            response: Response::new(Body::empty()),
                            code: status.code(),
                            pushback: trailers.and_then(wire::pushback),
                            retry_info: retry_info_delay(status),
                        },
                        // Judged as its status alone: whether a retry
                        // could have sent it again does not change how
                        // the throttle counts it.
                        replayable: true,
                    };
                    call.failed::<GrpcCall, Response<Body>, _>(Err(failure));
                }
                if let Some(uri) = uri {
                    crate::metrics::call_ended(uri.path(), retries, delay, hedged);
                }
            }
            // A6: an `OK` gives back `tokenRatio`; a refusing pushback takes
            // a token (no status of a method without a policy is retryable).
            End::Once(throttle) => {
                if status.code() == Code::Ok {
                    throttle.succeeded();
                } else if trailers.and_then(wire::pushback) == Some(Pushback::Stop) {
                    throttle.failed();
                }
            }
        }
    }
}

pin_project_lite::pin_project! {
    /// The body of a committed call: its frames passed through as they
    /// come (none copied), and the call reported at its status. Dropped
    /// before its end (the caller cancelled), it reports nothing but to
    /// the admission limiter, which hears the attempt as abandoned.
    pub(crate) struct EndingBody<A: AdmissionSlot> {
        #[pin]
        inner: Body,
        end: Option<End<A>>,
    }
}

impl<A: AdmissionSlot> EndingBody<A> {
    /// `inner`, reported by `end` when its status comes.
    pub(crate) fn new(inner: Body, end: End<A>) -> Self {
        EndingBody { inner, end: Some(end) }
    }
}

impl<A: AdmissionSlot> http_body::Body for EndingBody<A> {
    type Data = Bytes;
    type Error = Status;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Status>>> {
        let this = self.project();
        let frame = ready!(this.inner.poll_frame(cx));
        match &frame {
            Some(Ok(frame)) => {
                if let Some(trailers) = frame.trailers_ref()
                    && let Some(end) = this.end.take()
                {
                    let status = wire::status_of(trailers)
                        .unwrap_or_else(|| Status::unknown("the trailers carry no grpc-status"));
                    end.ended_with(&status, Some(trailers));
                }
            }
            Some(Err(status)) => {
                if let Some(end) = this.end.take() {
                    end.ended_with(status, None);
                }
            }
            None => {
                if let Some(end) = this.end.take() {
                    end.ended_with(&Status::unknown("the response ended without trailers"), None);
                }
            }
        }
        Poll::Ready(frame)
    }

    fn is_end_stream(&self) -> bool {
        // Not ended while the call is unreported: the reader polls on, to
        // the end that reports it.
        self.end.is_none() && self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// `response`, its body read through [`EndingBody`] and reported by `end`.
pub(crate) fn ending<A: AdmissionSlot>(response: Response<Body>, end: End<A>) -> Response<Body> {
    response.map(|body| Body::new(EndingBody::new(body, end)))
}
