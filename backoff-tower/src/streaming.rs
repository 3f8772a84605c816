//! `StreamingRetryLayer`: the HTTP layer for streaming bodies.
//!
//! The HTTP layer for requests whose body streams
//! (any `http_body::Body`, not only one that can be cloned): each request
//! body is kept in a [`Replay`] up to the caps of [`ReplayLimits`], and the
//! inner service gets each attempt's [`ReplayBody`]. [`StreamingRetryService`]
//! is the service it makes, [`StreamingResponseFuture`] one call.

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, ready};
use core::time::Duration;

use http::Request;
use http_body::Body;
use tower_service::Service;

use crate::classify::Classify;
use crate::future::ResponseFuture;
use crate::held::AdmissionSlot;
use crate::http::HttpRetry;
use crate::kept::{Failure, KeptRequest, still_replayable};
use crate::layer::{NoAdmission, NoTimeout, PerAttemptAdmission, PerAttemptTimeout, RetryLayer};
use crate::replay::{Replay, ReplayBody, ReplayLimits};
use backoff_runtime::Attempt;
use backoff_runtime::Elapsed;
use backoff_runtime::limits::Refused;

/// The HTTP retry layer for streaming request bodies, made by
/// [`RetryLayer::streaming`]: the same rules as [`RetryLayer`] (which
/// requests, which answers, `Retry-After`, the keys), with any
/// `http_body::Body` as the request body instead of one that can be
/// cloned.
///
/// The layered service takes `http::Request<B>` and its inner service gets
/// `http::Request<ReplayBody<B>>`: each attempt's body sends the frames as
/// they come and keeps reference-counted clones of them for the next
/// attempt, up to [`ReplayLimits`] (1 MiB per call, 16 MiB for all the
/// calls of the services this layer makes, by default). Then:
///
/// - a body whose size hint is already above the per-call cap is sent
///   once, and the call is not retried;
/// - a body that outgrows the cap while it is sent: the attempt in flight
///   sends the rest, and the call is not retried after it (its last
///   answer comes back as it is);
/// - a response that comes before the body ends (a `503` after the first
///   bytes) is retried like any other: the next attempt sends the kept
///   frames, then the rest of the original, never a byte twice;
/// - a response that is not retried (a success, a client error) commits the
///   call: nothing more is kept, and the reserved bytes are given back.
///
/// The body must be `Unpin` (hyper's `Incoming`, `Full`, `StreamBody` of an
/// `Unpin` stream; otherwise `Box::pin` it). Each attempt starts from the
/// caller's request: the same head, and the body from its first byte.
///
/// ```
/// use backoff_runtime::Policy;
/// use backoff_tower::{ReplayBody, RetryLayer};
/// use bytes::Bytes;
/// use http_body::Frame;
/// use http_body_util::{BodyExt, StreamBody};
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicU32, Ordering};
/// use std::time::Duration;
/// use tower::{Layer, ServiceExt, service_fn};
///
/// type Streamed = StreamBody<futures_util::stream::Iter<std::vec::IntoIter<Result<Frame<Bytes>, std::io::Error>>>>;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// // A backend that reads the whole body, and answers 503 once, then 200.
/// let calls = Arc::new(AtomicU32::new(0));
/// let counter = Arc::clone(&calls);
/// let backend = service_fn(move |request: http::Request<ReplayBody<Streamed>>| {
///     let first = counter.fetch_add(1, Ordering::SeqCst) == 0;
///     async move {
///         let body = request.into_body().collect().await?.to_bytes();
///         let status = if first { 503 } else { 200 };
///         Ok::<_, Box<dyn std::error::Error + Send + Sync>>(http::Response::builder().status(status).body(body).unwrap())
///     }
/// });
///
/// let policy = Policy::new().initial_backoff(Duration::from_millis(1));
/// let client = RetryLayer::new(policy).streaming().layer(backend);
/// let frames = vec![Ok(Frame::data(Bytes::from("chunk 1, "))), Ok(Frame::data(Bytes::from("chunk 2")))];
/// let request = http::Request::put("http://backend/").body(StreamBody::new(futures_util::stream::iter(frames))).unwrap();
/// let response = client.oneshot(request).await.unwrap();
/// assert_eq!((response.status().as_u16(), calls.load(Ordering::SeqCst)), (200, 2));
/// assert_eq!(response.into_body(), "chunk 1, chunk 2", "the retry sent every byte again");
/// # }
/// ```
#[derive(Clone)]
pub struct StreamingRetryLayer<T = NoTimeout, A = NoAdmission> {
    keys: RetryLayer<HttpRetry, T, A>,
    limits: ReplayLimits,
}

impl<T, A> core::fmt::Debug for StreamingRetryLayer<T, A> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("StreamingRetryLayer")
            .field("policy", &self.keys.calls.policy)
            .field("name", &self.keys.calls.site.name())
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl<T, A> RetryLayer<HttpRetry, T, A> {
    /// This layer for streaming request bodies: see
    /// [`StreamingRetryLayer`]. Set the other keys first; the caps are
    /// [`StreamingRetryLayer::replay_limits`].
    ///
    /// ```
    /// use backoff_runtime::Policy;
    /// use backoff_tower::RetryLayer;
    /// let layer = RetryLayer::new(Policy::new()).name("uploads").streaming();
    /// # let _ = layer;
    /// ```
    #[must_use]
    pub fn streaming(self) -> StreamingRetryLayer<T, A> {
        StreamingRetryLayer {
            keys: self,
            limits: ReplayLimits::new(),
        }
    }
}

impl<T, A> StreamingRetryLayer<T, A> {
    /// How much of the request bodies may be kept for replay (by default
    /// 1 MiB per call, 16 MiB for all the calls of the services this layer
    /// makes, as grpc-java). Past a cap, a call is not retried.
    ///
    /// ```
    /// use backoff_runtime::Policy;
    /// use backoff_tower::{ReplayLimits, RetryLayer};
    /// let layer = RetryLayer::new(Policy::new())
    ///     .streaming()
    ///     .replay_limits(ReplayLimits::new().per_call(256 * 1024));
    /// # let _ = layer;
    /// ```
    #[must_use]
    pub fn replay_limits(mut self, limits: ReplayLimits) -> Self {
        self.limits = limits;
        self
    }
}

impl<S, T: Clone, A: Clone> tower_layer::Layer<S> for StreamingRetryLayer<T, A> {
    type Service = StreamingRetryService<S, T, A>;

    fn layer(&self, inner: S) -> Self::Service {
        StreamingRetryService {
            attempts: Streamed {
                inner,
                limits: self.limits.clone(),
            },
            config: self.keys.shared(),
        }
    }
}

/// The service a [`StreamingRetryLayer`] makes: it takes
/// `http::Request<B>` and calls the inner service with
/// `http::Request<ReplayBody<B>>`, once per attempt.
///
/// ```
/// use backoff_runtime::Policy;
/// use backoff_tower::{ReplayBody, RetryLayer, StreamingRetryService};
/// use tower::Layer;
///
/// let backend = tower::service_fn(|_: http::Request<ReplayBody<String>>| async {
///     Ok::<_, std::io::Error>(http::Response::new(String::new()))
/// });
/// let service: StreamingRetryService<_> = RetryLayer::new(Policy::new()).streaming().layer(backend);
/// # let _ = service;
/// ```
#[derive(Clone)]
pub struct StreamingRetryService<S, T = NoTimeout, A = NoAdmission> {
    attempts: Streamed<S>,
    config: std::sync::Arc<RetryLayer<HttpRetry, T, A>>,
}

impl<S: core::fmt::Debug, T, A> core::fmt::Debug for StreamingRetryService<S, T, A> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("StreamingRetryService")
            .field("inner", &self.attempts.inner)
            .field("policy", &self.config.calls.policy)
            .finish_non_exhaustive()
    }
}

impl<S, B, T, A> Service<Request<B>> for StreamingRetryService<S, T, A>
where
    S: Service<Request<ReplayBody<B>>> + Clone,
    B: Body + Unpin,
    HttpRetry: Classify<Request<()>, S::Response, S::Error>,
    T: PerAttemptTimeout<StreamedFailure<S, B>>,
    A: PerAttemptAdmission<StreamedFailure<S, B>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = StreamingResponseFuture<S, B, T, A>;

    #[inline]
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.attempts.inner.poll_ready(cx)
    }

    /// Keeps the body for replay (or, over the cap up front, to send it
    /// once), then calls the inner service (made ready by `poll_ready`)
    /// with the first attempt.
    #[inline]
    fn call(&mut self, request: Request<B>) -> Self::Future {
        let request = KeptRequest::new(request, &self.attempts.limits);
        StreamingResponseFuture {
            call: ResponseFuture::start(&mut self.attempts, &self.config, request),
        }
    }
}

pin_project_lite::pin_project! {
    /// The future of a [`StreamingRetryService`] call: a named type (no box
    /// per call), `Send` when the inner service, its future, the body and
    /// the response are. It ends with the last attempt's response or the
    /// inner service's error, as they came.
    ///
    /// ```
    /// use backoff_runtime::Policy;
    /// use backoff_tower::{ReplayBody, RetryLayer, StreamingResponseFuture};
    /// use tower::{Layer, Service, ServiceExt};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let backend = tower::service_fn(|_: http::Request<ReplayBody<String>>| async {
    ///     Ok::<_, std::io::Error>(http::Response::new("hello"))
    /// });
    /// let mut client = RetryLayer::new(Policy::new()).streaming().layer(backend);
    /// let request = http::Request::get("http://backend/").body(String::new()).unwrap();
    /// let future = client.ready().await.unwrap().call(request);
    /// fn is_send<F: Send>(_: &F) {}
    /// is_send(&future);
    /// assert_eq!(*future.await.unwrap().body(), "hello");
    /// # }
    /// ```
    pub struct StreamingResponseFuture<S, B, T = NoTimeout, A = NoAdmission>
    where
        S: Service<Request<ReplayBody<B>>>,
        B: Body,
        B: Unpin,
        HttpRetry: Classify<Request<()>, S::Response, S::Error>,
        T: Clone,
        T: Send,
        T: Sync,
        T: 'static,
        A: AdmissionSlot,
    {
        #[pin]
        call: StreamedCall<S, B, T, A>,
    }
}

/// The retry loop of a streaming layer's call, over its streamed attempts.
type StreamedCall<S, B, T, A> = ResponseFuture<Streamed<S>, KeptRequest<B>, RetryLayer<HttpRetry, T, A>>;

/// What a failed streamed attempt of `S` with a body `B` is, as the retry
/// loop sees it.
type StreamedFailure<S, B> = Failure<
    FailureKind<<S as Service<Request<ReplayBody<B>>>>::Response, <S as Service<Request<ReplayBody<B>>>>::Error>,
>;

impl<S, B, T, A> core::fmt::Debug for StreamingResponseFuture<S, B, T, A>
where
    S: Service<Request<ReplayBody<B>>>,
    B: Body + Unpin,
    HttpRetry: Classify<Request<()>, S::Response, S::Error>,
    T: Clone + Send + Sync + 'static,
    A: AdmissionSlot,
{
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("StreamingResponseFuture").finish_non_exhaustive()
    }
}

impl<S, B, T, A> Future for StreamingResponseFuture<S, B, T, A>
where
    S: Service<Request<ReplayBody<B>>> + Clone,
    B: Body + Unpin,
    HttpRetry: Classify<Request<()>, S::Response, S::Error>,
    T: Clone + Send + Sync + 'static,
    A: AdmissionSlot,
    StreamedCall<S, B, T, A>: Future<Output = Result<S::Response, StreamedFailure<S, B>>>,
{
    type Output = Result<S::Response, S::Error>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let result = ready!(self.project().call.poll(cx));
        Poll::Ready(result.or_else(|failure| match failure.kind {
            FailureKind::Error(error) => Err(error),
            FailureKind::Retryable(response) => Ok(response),
        }))
    }
}

/// What a failed attempt ended with.
pub(crate) enum FailureKind<R, E> {
    /// The inner service's error.
    Error(E),
    /// A response with a status HTTP's rules retry (a 503).
    Retryable(R),
}

/// A timed-out attempt, when the layer has a per-attempt timeout.
impl<R, E: From<Elapsed>> From<Elapsed> for Failure<FailureKind<R, E>> {
    fn from(elapsed: Elapsed) -> Self {
        Failure {
            kind: FailureKind::Error(E::from(elapsed)),
            replayable: true,
        }
    }
}

/// An attempt the layer's admission limiter refused: the call ends with
/// the inner service's error made from the refusal.
impl<R, E: From<Refused>> From<Refused> for Failure<FailureKind<R, E>> {
    fn from(refused: Refused) -> Self {
        Failure {
            kind: FailureKind::Error(E::from(refused)),
            replayable: true,
        }
    }
}

/// The inner service as the retry loop calls it: each attempt's request is
/// the call's head with a [`ReplayBody`], and its answer is judged by
/// HTTP's rules as it arrives (a failure carries whether the call may
/// still be sent again; any other response commits the call).
#[derive(Clone, Debug)]
pub(crate) struct Streamed<S> {
    inner: S,
    limits: ReplayLimits,
}

impl<S, B> Service<KeptRequest<B>> for Streamed<S>
where
    S: Service<Request<ReplayBody<B>>>,
    B: Body + Unpin,
    HttpRetry: Classify<Request<()>, S::Response, S::Error>,
{
    type Response = S::Response;
    type Error = Failure<FailureKind<S::Response, S::Error>>;
    type Future = StreamedAttempt<S::Future, B>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        // Nothing was sent: the body is untouched.
        self.inner.poll_ready(cx).map_err(|error| Failure {
            kind: FailureKind::Error(error),
            replayable: true,
        })
    }

    fn call(&mut self, request: KeptRequest<B>) -> Self::Future {
        let (head, body) = request.into_parts();
        let (body, replay) = match body {
            Ok(replay) => (replay.attempt_or_unavailable(), Some(replay)),
            Err(once) => (Replay::unkept(once, &self.limits).attempt_or_unavailable(), None),
        };
        StreamedAttempt {
            response: self.inner.call(head.map(|()| body)),
            replay,
        }
    }
}

pin_project_lite::pin_project! {
    /// One attempt: the inner service's future, and the call's body (to
    /// commit it, or to tell whether it can still be replayed).
    #[derive(Debug)]
    pub(crate) struct StreamedAttempt<F, B> {
        #[pin]
        response: F,
        replay: Option<Replay<B>>,
    }
}

impl<F, B, R, E> Future for StreamedAttempt<F, B>
where
    F: Future<Output = Result<R, E>>,
    HttpRetry: Classify<Request<()>, R, E>,
{
    type Output = Result<R, Failure<FailureKind<R, E>>>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let replayable = |replay: &Option<Replay<B>>| still_replayable(replay.as_ref());
        Poll::Ready(match ready!(this.response.poll(cx)) {
            Err(error) => Err(Failure {
                replayable: replayable(this.replay),
                kind: FailureKind::Error(error),
            }),
            Ok(response) if Classify::<Request<()>, R, E>::retry_response(&HttpRetry::new(), &response) => {
                Err(Failure {
                    replayable: replayable(this.replay),
                    kind: FailureKind::Retryable(response),
                })
            }
            Ok(response) => {
                // Not retried: the call is over, and the body no longer kept.
                if let Some(replay) = this.replay {
                    replay.commit();
                }
                Ok(response)
            }
        })
    }
}

impl<B, R, E> Classify<KeptRequest<B>, R, Failure<FailureKind<R, E>>> for HttpRetry
where
    HttpRetry: Classify<Request<()>, R, E>,
{
    /// The idempotency key is the call's id: no time is read.
    const READS_ATTEMPT_TIME: bool = false;

    /// A request HTTP's rules retry, whose body is kept.
    fn may_retry(&self, request: &KeptRequest<B>) -> bool {
        self.allows(request.method(), request.headers()) && request.is_replayable()
    }

    /// The host: the URI's authority, else the `Host` header.
    fn admission_key<'r>(&self, request: &'r KeptRequest<B>) -> Option<&'r str> {
        crate::http::host_of(request.uri(), request.headers())
    }

    fn replay(&self, request: &KeptRequest<B>, attempt: &Attempt) -> KeptRequest<B> {
        let mut headers = request.headers().clone();
        self.add_key(request.method(), &mut headers, attempt);
        request.again(headers)
    }

    /// Every error and retryable response of a call whose body is still
    /// kept (not past the cap).
    fn retry_error(&self, failure: &Failure<FailureKind<R, E>>) -> bool {
        failure.replayable
    }

    /// A retried response's `Retry-After`.
    fn error_hint(&self, failure: &Failure<FailureKind<R, E>>) -> Option<Duration> {
        match &failure.kind {
            FailureKind::Retryable(response) => Classify::<Request<()>, R, E>::response_hint(self, response),
            FailureKind::Error(_) => None,
        }
    }
}
