//! One gRPC call as the retry loop sees it.
//!
//! The request it keeps ([`GrpcCall`]: the head, and the body kept for replay),
//! the service that sends each attempt ([`Attempts`]: the body replayed, the
//! answer judged as it arrives) and what a failed attempt is (`Failure` of a
//! [`FailureKind`]).

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, ready};
use core::time::Duration;

use http::{Request, Response};
use tonic::body::Body;
use tonic::{Code, Status};
use tower_service::Service;

use super::wire;
use crate::status::retry_info_delay;
use backoff_runtime::__front_end::SemanticConventions;
use backoff_tower::__grpc::{Failure, KeptRequest};
use backoff_tower::{Pushback, Replay};

/// The request of a call, kept by its future: each attempt is made from it.
pub(crate) struct GrpcCall {
    pub(crate) request: KeptRequest<Body>,
    /// The call's deadline from its start: the caller's `grpc-timeout`, or
    /// the method's `timeout` (the shorter).
    pub(crate) deadline: Option<Duration>,
    /// The attempts made before this one (`grpc-previous-rpc-attempts`).
    pub(crate) previous: u32,
}

impl GrpcCall {
    /// The request of an attempt: the head as given, and the body (the
    /// original, or a replay of it, with the call's body kept beside it);
    /// `None` when the body is no longer kept.
    #[inline(always)]
    fn request(self) -> Option<Sent> {
        let previous = self.previous;
        let (head, body) = self.request.into_parts();
        let (body, replay) = match body {
            Ok(replay) => (Body::new(replay.attempt()?), Some(replay)),
            Err(once) => (once?, None),
        };
        Some((head.map(|()| body), replay, previous))
    }
}

/// An attempt's request, the call's kept body when it has one, and the
/// attempts made before it.
type Sent = (Request<Body>, Option<Replay<Body>>, u32);

/// The answer standing for an attempt that could not be sent.
fn not_kept() -> Response<Body> {
    Status::unavailable("the request body is no longer kept for a retry").into_http()
}

/// What a failed attempt ended with.
pub(crate) enum FailureKind<E> {
    /// The inner service failed before any response (a transport error):
    /// retried as `UNAVAILABLE`.
    Transport(E),
    /// A Trailers-Only response with a status other than `OK`.
    Status {
        response: Response<Body>,
        code: Code,
        pushback: Option<Pushback>,
        retry_info: Option<Duration>,
    },
}

impl<E> FailureKind<E> {
    /// The status code the retry policy judges: a transport error's is
    /// `UNAVAILABLE`.
    pub(crate) fn code(&self) -> Code {
        match self {
            FailureKind::Transport(_) => Code::Unavailable,
            FailureKind::Status { code, .. } => *code,
        }
    }
}

/// With the `tracing` feature, the retry and give-up events of the layer
/// carry OpenTelemetry's `rpc.grpc.status_code`.
impl<E> SemanticConventions for FailureKind<E> {
    fn grpc_status_code(&self) -> Option<i32> {
        Some(self.code() as i32)
    }
}

/// An attempt the layer's admission limiter refused: `UNAVAILABLE`, its
/// message the refusal's, with `grpc-retry-pushback-ms` set to how long
/// the limiter stays shut when it knows (so a gRPC client around this one
/// waits that long). It ends the call: this layer does not retry it.
impl<E> From<backoff_runtime::limits::Refused> for FailureKind<E> {
    fn from(refused: backoff_runtime::limits::Refused) -> Self {
        let mut response = Status::unavailable(refused.to_string()).into_http();
        if let Some(left) = refused.retry_after() {
            wire::set_pushback(response.headers_mut(), left);
        }
        FailureKind::Status {
            response,
            code: Code::Unavailable,
            pushback: None,
            retry_info: None,
        }
    }
}

/// A failed attempt as this crate reads it (an extension of
/// `backoff-tower`'s `Failure`).
pub(crate) trait FailedAttempt<E> {
    /// The status code the retry policy judges.
    fn code(&self) -> Code;
    /// What the caller gets when this failure ends the call: the inner
    /// service's error, or the response as it came.
    fn into_result(self) -> Result<Response<Body>, E>;
}

impl<E> FailedAttempt<E> for Failure<FailureKind<E>> {
    fn code(&self) -> Code {
        self.kind.code()
    }

    fn into_result(self) -> Result<Response<Body>, E> {
        match self.kind {
            FailureKind::Transport(error) => Err(error),
            FailureKind::Status { response, .. } => Ok(response),
        }
    }
}

/// Sends each attempt of a call through the inner service (tonic's
/// `Channel`, or any service of `http::Request<tonic::body::Body>`), and
/// judges its answer when the response headers arrive.
#[derive(Clone, Debug)]
pub(crate) struct Attempts<S> {
    pub(crate) inner: S,
}

impl<S> Service<GrpcCall> for Attempts<S>
where
    S: Service<Request<Body>, Response = Response<Body>>,
{
    type Response = Response<Body>;
    type Error = Failure<FailureKind<S::Error>>;
    type Future = AttemptFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        // Nothing was sent: the body is untouched.
        self.inner.poll_ready(cx).map_err(|error| Failure {
            kind: FailureKind::Transport(error),
            replayable: true,
        })
    }

    fn call(&mut self, call: GrpcCall) -> Self::Future {
        match call.request() {
            Some((request, replay, previous)) => AttemptFuture::Sent {
                response: self.inner.call(request),
                replay,
                previous,
            },
            None => AttemptFuture::Lost {
                response: Some(not_kept()),
            },
        }
    }
}

pin_project_lite::pin_project! {
    /// One attempt: the inner service's future, the call's body (to
    /// commit it, or to tell whether it can still be replayed), and the
    /// attempts made before it (its answer carries their number).
    #[project = AttemptProj]
    pub(crate) enum AttemptFuture<F> {
        Sent { #[pin] response: F, replay: Option<Replay<Body>>, previous: u32 },
        /// The body was no longer kept: no attempt was sent.
        Lost { response: Option<Response<Body>> },
    }
}

impl<F, E> Future for AttemptFuture<F>
where
    F: Future<Output = Result<Response<Body>, E>>,
{
    type Output = Result<Response<Body>, Failure<FailureKind<E>>>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let (response, replay, previous) = match self.project() {
            AttemptProj::Sent {
                response,
                replay,
                previous,
            } => (response, replay, *previous),
            AttemptProj::Lost { response } => {
                let Some(response) = response.take() else {
                    return Poll::Pending;
                };
                return Poll::Ready(Err(Failure {
                    kind: FailureKind::Status {
                        response,
                        code: Code::Unavailable,
                        pushback: None,
                        retry_info: None,
                    },
                    replayable: false,
                }));
            }
        };
        let replayable = |replay: &Option<Replay<Body>>| replay.as_ref().is_some_and(Replay::is_replayable);
        Poll::Ready(match ready!(response.poll(cx)) {
            Err(error) => Err(Failure {
                kind: FailureKind::Transport(error),
                replayable: replayable(replay),
            }),
            Ok(mut response) => {
                if previous > 0 {
                    answered_after(&mut response, previous);
                }
                match wire::trailers_only_status(response.headers()) {
                    Some(status) if status.code() != Code::Ok => Err(Failure {
                        replayable: replayable(replay),
                        kind: FailureKind::Status {
                            code: status.code(),
                            pushback: wire::pushback(response.headers()),
                            retry_info: retry_info_delay(&status),
                            response,
                        },
                    }),
                    _ => {
                        // Response headers (or an OK): the call is committed,
                        // and the body is no longer kept.
                        if let Some(replay) = replay {
                            replay.commit();
                        }
                        Ok(response)
                    }
                }
            }
        })
    }
}

/// A6's exposed retry metadata: the answer of an attempt after `previous`
/// others carries their number, for the caller to read. A first attempt's
/// answer carries none.
#[inline]
fn answered_after(response: &mut Response<Body>, previous: u32) {
    wire::set_previous_attempts(response.headers_mut(), previous);
}

#[cfg(test)]
mod tests;
