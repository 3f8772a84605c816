//! [`GrpcRetryService`]: the service a [`GrpcRetryLayer`] makes, and
//! [`GrpcResponseFuture`], one call through it.

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, ready};
use std::sync::Arc;

use http::{Request, Response};
use tonic::body::Body;
use tower_service::Service;

use super::call::{Attempts, GrpcCall, Judged};
use super::layer::{GrpcRetryLayer, Methods};
use super::rules::GrpcRules;
use super::wire::{self, ThrottleFeed};
use backoff_runtime::RetryLimit;
use backoff_tower::__grpc::KeptRequest;
use backoff_tower::ResponseFuture;

impl<S> tower_layer::Layer<S> for GrpcRetryLayer {
    type Service = GrpcRetryService<S>;

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
#[derive(Clone)]
pub struct GrpcRetryService<S> {
    attempts: Attempts<S>,
    methods: Arc<Methods>,
}

impl<S: core::fmt::Debug> core::fmt::Debug for GrpcRetryService<S> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("GrpcRetryService")
            .field("inner", &self.attempts.inner)
            .finish_non_exhaustive()
    }
}

impl<S> Service<Request<Body>> for GrpcRetryService<S>
where
    S: Service<Request<Body>, Response = Response<Body>> + Clone,
{
    type Response = Response<Body>;
    type Error = S::Error;
    type Future = GrpcResponseFuture<S>;

    #[inline]
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.attempts.inner.poll_ready(cx)
    }

    /// The call of `request`'s method: sent once when the method has no
    /// `retryPolicy` (or its body is larger than the cap says up front),
    /// else retried by the method's policy, the first attempt sent at once
    /// through the inner service `poll_ready` made ready.
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
        let Some(retry) = method.and_then(|method| method.retry.as_ref()) else {
            return GrpcResponseFuture {
                call: Call::Once {
                    response: self.attempts.inner.call(request),
                    throttle: methods.throttle.clone(),
                },
            };
        };
        let deadline = match (asked, timeout) {
            (Some(asked), Some(timeout)) => Some(asked.min(timeout)),
            (asked, timeout) => asked.or(timeout),
        };
        let call = GrpcCall {
            request: KeptRequest::new(request, &methods.limits),
            deadline,
        };
        GrpcResponseFuture {
            call: Call::Retried {
                call: ResponseFuture::start(&mut self.attempts, retry, call),
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
    /// A call: sent once, or retried.
    #[project = CallProj]
    enum Call<S>
    where
        S: Service<Request<Body>, Response = Response<Body>>,
        S: Clone,
    {
        /// Sent once (no `retryPolicy`): its answer feeds the layer's
        /// throttle, when it has one.
        Once { #[pin] response: S::Future, throttle: Option<Arc<dyn RetryLimit + Send>> },
        Retried { #[pin] call: ResponseFuture<Attempts<S>, GrpcCall, GrpcRules> },
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
    pub struct GrpcResponseFuture<S>
    where
        S: Service<Request<Body>, Response = Response<Body>>,
        S: Clone,
    {
        #[pin]
        call: Call<S>,
    }
}

impl<S> core::fmt::Debug for GrpcResponseFuture<S>
where
    S: Service<Request<Body>, Response = Response<Body>> + Clone,
{
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("GrpcResponseFuture")
            .field("retried", &matches!(self.call, Call::Retried { .. }))
            .finish_non_exhaustive()
    }
}

impl<S> Future for GrpcResponseFuture<S>
where
    S: Service<Request<Body>, Response = Response<Body>> + Clone,
{
    type Output = Result<Response<Body>, S::Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project().call.project() {
            CallProj::Once { response, throttle } => {
                let result = ready!(response.poll(cx));
                if let (Some(throttle), Ok(response)) = (throttle.as_deref(), &result) {
                    feed(throttle, response.headers());
                }
                Poll::Ready(result)
            }
            CallProj::Retried { mut call } => {
                let result = ready!(call.as_mut().poll(cx));
                if let Some((request, retries, delay)) = call.retried() {
                    backoff_runtime::__front_end::grpc_call(request.request.uri().path(), retries, delay);
                }
                Poll::Ready(result.or_else(Judged::into_result))
            }
        }
    }
}
