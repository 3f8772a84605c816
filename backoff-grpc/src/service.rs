//! [`GrpcRetryService`]: the service a [`GrpcRetryLayer`] makes, and
//! [`GrpcResponseFuture`], one call through it.

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, ready};
use std::sync::Arc;

use http::{Request, Response};
use tonic::body::Body;
use tower_service::Service;

use core::time::Duration;

use tonic::{Code, Status};

use super::call::{Attempts, FailedAttempt, FailureKind, GrpcCall};
use super::codes;
use super::ending::{End, ending};
use super::layer::{GrpcRetryLayer, Keys, Methods};
use super::wire::{self, ThrottleFeed};
use backoff_runtime::__front_end::DefaultWait;
use backoff_runtime::StopReason;
use backoff_runtime::limits::RetryLimit;
use backoff_tower::__grpc::{Failure, KeptRequest, RetriedCall};
use backoff_tower::{AdmissionSlot, NoAdmission, PerAttemptAdmission, ResponseFuture};

/// The admission of a [`GrpcRetryLayer`]'s calls over a channel whose error
/// is `E`: none, or a limiter asked before every attempt.
pub(crate) trait GrpcAdmission<E>: PerAttemptAdmission<Failure<FailureKind<E>>> {}

impl<E, A: PerAttemptAdmission<Failure<FailureKind<E>>>> GrpcAdmission<E> for A {}

impl<S, A: Clone> tower_layer::Layer<S> for GrpcRetryLayer<A> {
    type Service = GrpcRetryService<S, A>;

    fn layer(&self, inner: S) -> Self::Service {
        GrpcRetryService {
            attempts: Attempts { inner },
            methods: self.methods(),
        }
    }
}

/// The service a [`GrpcRetryLayer`] makes over a gRPC channel (tonic's
/// `Channel`, or any `Service<http::Request<tonic::body::Body>>` answering
/// `http::Response<tonic::body::Body>`): give it to a tonic client,
/// `Client::new(service)`.
///
/// ```
/// use backoff_grpc::{GrpcRetryLayer, GrpcRetryService, ServiceConfig};
/// use tower::Layer;
///
/// let channel = tower::service_fn(|_: http::Request<tonic::body::Body>| async {
///     Ok::<_, std::io::Error>(http::Response::new(tonic::body::Body::empty()))
/// });
/// let service: GrpcRetryService<_> = GrpcRetryLayer::new(ServiceConfig::default()).layer(channel);
/// # let _ = service;
/// ```
pub struct GrpcRetryService<S, A = NoAdmission> {
    attempts: Attempts<S>,
    methods: Arc<Methods<A>>,
}

impl<S: Clone, A> Clone for GrpcRetryService<S, A> {
    fn clone(&self) -> Self {
        GrpcRetryService {
            attempts: self.attempts.clone(),
            methods: Arc::clone(&self.methods),
        }
    }
}

impl<S: core::fmt::Debug, A> core::fmt::Debug for GrpcRetryService<S, A> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("GrpcRetryService")
            .field("inner", &self.attempts.inner)
            .finish_non_exhaustive()
    }
}

impl<S, A> Service<Request<Body>> for GrpcRetryService<S, A>
where
    S: Service<Request<Body>, Response = Response<Body>> + Clone,
    A: GrpcAdmission<S::Error>,
{
    type Response = Response<Body>;
    type Error = S::Error;
    type Future = GrpcResponseFuture<S, A>;

    #[inline]
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.attempts.inner.poll_ready(cx)
    }

    /// The call of `request`'s method: sent once when the method has no
    /// `retryPolicy` (or its body is larger than the cap says up front),
    /// else retried by the method's policy, the first attempt sent at once
    /// through the inner service `poll_ready` made ready. A zero deadline
    /// ends the call at once, unsent, with `DEADLINE_EXCEEDED`.
    fn call(&mut self, mut request: Request<Body>) -> Self::Future {
        let methods = &*self.methods;
        let method = methods.by_path.get(request.uri().path());
        let timeout = method.and_then(|method| method.timeout);
        let asked = wire::read_timeout(request.headers());
        // The method's `timeout` when it is shorter than the caller's (or
        // the caller set none): what a call sent once carries.
        if let Some(timeout) = timeout.filter(|timeout| asked.is_none_or(|asked| *timeout < asked)) {
            request
                .headers_mut()
                .insert(wire::GRPC_TIMEOUT, wire::timeout_value(timeout));
        }
        let deadline = match (asked, timeout) {
            (Some(asked), Some(timeout)) => Some(asked.min(timeout)),
            (asked, timeout) => asked.or(timeout),
        };
        if deadline == Some(Duration::ZERO) {
            return past_deadline_at_start();
        }
        let Some(retry) = method.and_then(|method| method.retry.as_ref()) else {
            return GrpcResponseFuture {
                call: Call::Once {
                    response: self.attempts.inner.call(request),
                    throttle: methods.throttle.clone(),
                },
            };
        };
        let call = GrpcCall {
            request: KeptRequest::new(request, &methods.limits),
            deadline,
            previous: 0,
        };
        if !call.request.is_kept() {
            return self.sent_once(call);
        }
        GrpcResponseFuture {
            call: Call::Retried {
                call: ResponseFuture::start(&mut self.attempts, retry, call),
            },
        }
    }
}

/// The call of a zero deadline (the caller's `grpc-timeout`, or the
/// method's `timeout`): past it before it starts, so never sent.
#[cold]
#[inline(never)]
fn past_deadline_at_start<S, A>() -> GrpcResponseFuture<S, A>
where
    S: Service<Request<Body>, Response = Response<Body>> + Clone,
    A: AdmissionSlot,
{
    GrpcResponseFuture {
        call: Call::PastDeadline {
            deadline: Duration::ZERO,
        },
    }
}

impl<S, A> GrpcRetryService<S, A>
where
    S: Service<Request<Body>, Response = Response<Body>> + Clone,
    A: AdmissionSlot,
{
    /// A call whose body is over the cap from the start: sent once, as a
    /// call of a method without a `retryPolicy`, and fed to the throttle.
    #[cold]
    #[inline(never)]
    fn sent_once(&mut self, call: GrpcCall) -> GrpcResponseFuture<S, A> {
        let (head, body) = call.request.into_parts();
        let body = match body {
            Err(Some(once)) => once,
            // Not made by `KeptRequest::new`: a kept body is retried.
            Ok(_) | Err(None) => Body::empty(),
        };
        GrpcResponseFuture {
            call: Call::Once {
                response: self.attempts.inner.call(head.map(|()| body)),
                throttle: self.methods.throttle.clone(),
            },
        }
    }
}

/// A6: every call changes the throttle, retried or not. A call sent once
/// gives back `tokenRatio` when it succeeds, and takes a token when the
/// server's pushback refuses a retry.
fn feed(throttle: &(dyn RetryLimit + Send), headers: &http::HeaderMap) {
    match wire::throttle_feed(headers) {
        ThrottleFeed::Success => throttle.succeeded(),
        ThrottleFeed::Refused => throttle.failed(),
        ThrottleFeed::Neither => {}
    }
}

pin_project_lite::pin_project! {
    /// A call: sent once, retried, or waiting for the deadline that ended it.
    #[project = CallProj]
    enum Call<S, A>
    where
        S: Service<Request<Body>, Response = Response<Body>>,
        S: Clone,
        A: AdmissionSlot,
    {
        /// Sent once (no `retryPolicy`): its answer feeds the layer's
        /// throttle, when it has one.
        Once { #[pin] response: S::Future, throttle: Option<Arc<dyn RetryLimit + Send>> },
        Retried { #[pin] call: ResponseFuture<Attempts<S>, GrpcCall, Keys<A>> },
        /// The deadline stopped the retries before the next attempt: the
        /// call ends when it passes, with `DEADLINE_EXCEEDED`, as gRPC's
        /// clients end it.
        Expiring { expiring: Pin<Box<Expiring>> },
        /// A zero deadline: the call ends with `DEADLINE_EXCEEDED`, unsent,
        /// as gRPC's clients end a call started past its deadline.
        PastDeadline { deadline: Duration },
    }
}

pin_project_lite::pin_project! {
    /// The wait until the deadline, and the status the call then ends
    /// with (boxed: a call that does not end so keeps its future small).
    struct Expiring {
        #[pin]
        wait: DefaultWait,
        status: Option<Status>,
    }
}

pin_project_lite::pin_project! {
    /// The future of a [`GrpcRetryService`] call: a named type (no box per
    /// call), `Send` when the inner service and its future are, so the
    /// layered channel works behind tower's `Buffer` and from spawned
    /// tasks. It ends with the last attempt's response (a failed status
    /// stays in it, as the server sent it, for the client to read) or the
    /// inner service's error.
    ///
    /// ```
    /// use backoff_grpc::{GrpcResponseFuture, GrpcRetryLayer, ServiceConfig};
    /// use tower::{Layer, Service, ServiceExt};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let channel = tower::service_fn(|_: http::Request<tonic::body::Body>| async {
    ///     Ok::<_, std::io::Error>(http::Response::new(tonic::body::Body::empty()))
    /// });
    /// let mut service = GrpcRetryLayer::new(ServiceConfig::default()).layer(channel);
    /// let request = http::Request::post("/a.B/C").body(tonic::body::Body::empty()).unwrap();
    /// let future = service.ready().await.unwrap().call(request);
    /// fn is_send<F: Send>(_: &F) {}
    /// is_send(&future);
    /// assert_eq!(future.await.unwrap().status(), 200);
    /// # }
    /// ```
    pub struct GrpcResponseFuture<S, A = NoAdmission>
    where
        S: Service<Request<Body>, Response = Response<Body>>,
        S: Clone,
        A: AdmissionSlot,
    {
        #[pin]
        call: Call<S, A>,
    }
}

impl<S, A> core::fmt::Debug for GrpcResponseFuture<S, A>
where
    S: Service<Request<Body>, Response = Response<Body>> + Clone,
    A: AdmissionSlot,
{
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("GrpcResponseFuture")
            .field("retried", &matches!(self.call, Call::Retried { .. }))
            .finish_non_exhaustive()
    }
}

impl<S, A> Future for GrpcResponseFuture<S, A>
where
    S: Service<Request<Body>, Response = Response<Body>> + Clone,
    A: GrpcAdmission<S::Error>,
{
    type Output = Result<Response<Body>, S::Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut call = self.project().call;
        match call.as_mut().project() {
            CallProj::Once { response, throttle } => {
                let result = ready!(response.poll(cx));
                match (throttle.take(), result) {
                    (Some(throttle), Ok(response)) if !wire::is_trailers_only(response.headers()) => {
                        Poll::Ready(Ok(ending(response, End::<NoAdmission>::Once(throttle))))
                    }
                    (Some(throttle), Ok(response)) => {
                        feed(&*throttle, response.headers());
                        Poll::Ready(Ok(response))
                    }
                    (_, result) => Poll::Ready(result),
                }
            }
            CallProj::Retried { call: mut retried } => {
                let result = ready!(retried.as_mut().poll(cx));
                let hedged = retried.hedged();
                let failure = match result {
                    Ok(response) => {
                        let Some(committed) = retried.as_mut().committed_call() else {
                            // No one hears how it ends: reported now.
                            return Poll::Ready(Ok(response));
                        };
                        let Some((request, retries, delay)) = retried.retried() else {
                            return Poll::Ready(Ok(response));
                        };
                        if wire::is_trailers_only(response.headers()) {
                            // A Trailers-Only `OK`: its status is known now.
                            committed.succeeded();
                            crate::metrics::call_ended(request.request.uri().path(), retries, delay, hedged);
                            return Poll::Ready(Ok(response));
                        }
                        let end = End::Retried {
                            call: committed,
                            uri: cfg!(feature = "metrics").then(|| request.request.uri().clone()),
                            retries,
                            delay,
                            hedged,
                        };
                        return Poll::Ready(Ok(ending(response, end)));
                    }
                    Err(failure) => failure,
                };
                let Some((request, retries, delay)) = retried.retried() else {
                    // Sent once: its body was past the cap from the start.
                    return Poll::Ready(failure.into_result());
                };
                crate::metrics::call_ended(request.request.uri().path(), retries, delay, hedged);
                let Some(deadline) = request.deadline else {
                    return Poll::Ready(failure.into_result());
                };
                let left = retried
                    .started_at()
                    .map(|start| (start + deadline).saturating_duration_since(DefaultWait::CLOCK.now()));
                // The deadline stopped the retries, or it passed while the
                // last attempts ran (the channel cut them there, as
                // `CANCELLED`): A6 ends the call `DEADLINE_EXCEEDED`.
                let expired = retried.stopped_by() == Some(StopReason::Deadline) || left == Some(Duration::ZERO);
                if !expired {
                    return Poll::Ready(failure.into_result());
                }
                let left = left.unwrap_or_default();
                call.set(Call::Expiring {
                    expiring: Box::pin(Expiring {
                        wait: DefaultWait::start(left),
                        status: Some(past_deadline(&failure)),
                    }),
                });
                self_poll_expiring(call, cx)
            }
            CallProj::Expiring { .. } => self_poll_expiring(call, cx),
            CallProj::PastDeadline { deadline } => {
                let status =
                    Status::deadline_exceeded(format!("the deadline ({deadline:?}) passed before the call was sent"));
                Poll::Ready(Ok(status.into_http()))
            }
        }
    }
}

/// The wait of a call the deadline ended, and then its `DEADLINE_EXCEEDED`.
fn self_poll_expiring<S, A, E>(call: Pin<&mut Call<S, A>>, cx: &mut Context<'_>) -> Poll<Result<Response<Body>, E>>
where
    S: Service<Request<Body>, Response = Response<Body>> + Clone,
    A: AdmissionSlot,
{
    let CallProj::Expiring { expiring } = call.project() else {
        return Poll::Pending;
    };
    let expiring = expiring.as_mut().project();
    ready!(expiring.wait.poll(cx));
    let status = expiring
        .status
        .take()
        .unwrap_or_else(|| Status::deadline_exceeded("the deadline passed"));
    Poll::Ready(Ok(status.into_http()))
}

/// The `DEADLINE_EXCEEDED` of a call whose deadline passes before the
/// attempt after `failure`, or while the last attempts ran: its message
/// says what the last attempt ended with.
fn past_deadline<E>(failure: &Failure<FailureKind<E>>) -> Status {
    let (code, message) = match &failure.kind {
        FailureKind::Transport(_) => (Code::Unavailable, "the transport failed".to_owned()),
        FailureKind::Status { response, code, .. } => {
            let message = wire::trailers_only_status(response.headers())
                .map(|status| status.message().to_owned())
                .unwrap_or_default();
            (*code, message)
        }
    };
    Status::deadline_exceeded(format!(
        "the deadline passed before an attempt succeeded; the last attempt ended with {}: {message}",
        codes::name_of(code)
    ))
}
