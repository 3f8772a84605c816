//! [`RetryService`]: the service a [`RetryLayer`] makes, whose calls are
//! [`ResponseFuture`]s.

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, ready};
use std::sync::Arc;

use crate::classify::{Classified, Classify, LayerClassify};
use crate::future::ResponseFuture;
use crate::http::HttpRetry;
use crate::layer::{
    NoAdmission, NoTimeout, PerAttemptAdmission, PerAttemptTimeout, RetryLayer, WithAdmission, WithTimeout,
};

impl<S, C: Clone, T: Clone, A: Clone> tower_layer::Layer<S> for RetryLayer<C, T, A> {
    type Service = RetryService<S, C, T, A>;

    fn layer(&self, inner: S) -> Self::Service {
        RetryService {
            inner: BoxErrors(inner),
            config: self.shared(),
        }
    }
}

/// The service a [`RetryLayer`] makes: each call retries the inner service.
///
/// Its error is the inner service's. Under HTTP's rules (the default) with
/// a [`timeout`](RetryLayer::timeout) or an
/// [`admission`](RetryLayer::admission) limiter, it is tower's
/// [`BoxError`], as tower's own `Timeout` answers: the inner error boxed as
/// it came, a timed-out attempt as [`Elapsed`](backoff_runtime::Elapsed), a
/// refused one as [`Refused`](backoff_runtime::limits::Refused). The inner error
/// must convert into it (`Into<BoxError>`: hyper-util's client error does).
/// A classification of one's own ([`Classified`]) keeps the inner error.
///
/// ```
/// use backoff_runtime::Policy;
/// use backoff_tower::{RetryLayer, RetryService};
/// use tower::Layer;
///
/// let backend = tower::service_fn(|_: http::Request<String>| async {
///     Ok::<_, std::io::Error>(http::Response::new(String::new()))
/// });
/// let service: RetryService<_> = RetryLayer::new(Policy::new()).layer(backend);
/// # let _ = service;
/// ```
#[derive(Clone)]
pub struct RetryService<S, C = HttpRetry, T = NoTimeout, A = NoAdmission> {
    inner: BoxErrors<S>,
    config: Arc<RetryLayer<C, T, A>>,
}

impl<S: core::fmt::Debug, C, T, A> core::fmt::Debug for RetryService<S, C, T, A> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("RetryService")
            .field("inner", &self.inner.0)
            .field("policy", &self.config.calls.policy)
            .finish_non_exhaustive()
    }
}

/// The keys under which a [`RetryService`] answers the inner service's
/// error as it came: a classification of one's own (any timeout and
/// admission), or HTTP's rules without a timeout or an admission limiter.
#[allow(
    unreachable_pub,
    reason = "sealed: named by `RetryService`'s `Service` impl, implemented here alone"
)]
pub trait KeepsErrors {}

impl<C, T, A> KeepsErrors for (Classified<C>, T, A) {}
impl KeepsErrors for (HttpRetry, NoTimeout, NoAdmission) {}

impl<S, Req, C, T, A> tower_service::Service<Req> for RetryService<S, C, T, A>
where
    (C, T, A): KeepsErrors,
    S: tower_service::Service<Req> + Clone,
    C: LayerClassify<Req, S::Response, S::Error>,
    T: PerAttemptTimeout<S::Error>,
    A: PerAttemptAdmission<S::Error>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = ResponseFuture<S, Req, RetryLayer<C, T, A>>;

    #[inline]
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.0.poll_ready(cx)
    }

    /// Calls the inner service (made ready by `poll_ready`) with the first
    /// attempt; the future keeps a clone of it for the resends.
    #[inline]
    fn call(&mut self, request: Req) -> Self::Future {
        ResponseFuture::start(&mut self.inner.0, &self.config, request)
    }
}

/// tower's boxed error: what a [`RetryService`] under HTTP's rules with a
/// timeout or an admission limiter answers.
///
/// ```
/// let error: backoff_tower::BoxError = backoff_runtime::limits::Refused::new().into();
/// assert!(error.is::<backoff_runtime::limits::Refused>());
/// ```
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The layer keys that make a [`RetryService`] under HTTP's rules answer
/// [`BoxError`]: a timeout, an admission limiter, or both.
///
/// ```
/// use backoff_tower::{BoxesErrors, NoAdmission, WithTimeout};
/// fn boxes<K: BoxesErrors>() {}
/// boxes::<(WithTimeout, NoAdmission)>();
/// ```
pub trait BoxesErrors {}

impl BoxesErrors for (WithTimeout, NoAdmission) {}
impl BoxesErrors for (NoTimeout, WithAdmission) {}
impl BoxesErrors for (WithTimeout, WithAdmission) {}

impl<S, Req, T, A> tower_service::Service<Req> for RetryService<S, HttpRetry, T, A>
where
    (T, A): BoxesErrors,
    S: tower_service::Service<Req> + Clone,
    S::Error: Into<BoxError>,
    HttpRetry: Classify<Req, S::Response, BoxError>,
    T: PerAttemptTimeout<BoxError>,
    A: PerAttemptAdmission<BoxError>,
{
    type Response = S::Response;
    type Error = BoxError;
    type Future = ResponseFuture<BoxErrors<S>, Req, RetryLayer<HttpRetry, T, A>>;

    #[inline]
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.0.poll_ready(cx).map_err(Into::into)
    }

    /// Calls the inner service (made ready by `poll_ready`) with the first
    /// attempt; the future keeps a clone of it for the resends.
    #[inline]
    fn call(&mut self, request: Req) -> Self::Future {
        ResponseFuture::start(&mut self.inner, &self.config, request)
    }
}

/// The inner service of a [`RetryService`], its errors boxed into
/// [`BoxError`] when the layer has a timeout or an admission limiter
/// (a refusal or a timeout is then a `BoxError` too).
///
/// ```
/// use backoff_runtime::Policy;
/// use backoff_tower::{BoxError, RetryLayer};
/// use std::time::Duration;
/// use tower::{Layer, ServiceExt};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let backend = tower::service_fn(|_: http::Request<String>| async {
///     Err::<http::Response<String>, _>(std::io::Error::other("down"))
/// });
/// let client = RetryLayer::new(Policy::new().max_retries(1).initial_backoff(Duration::from_millis(1)))
///     .timeout(Duration::from_secs(1))
///     .layer(backend);
/// let request = http::Request::get("http://backend/").body(String::new()).unwrap();
/// let error: BoxError = client.oneshot(request).await.unwrap_err();
/// assert!(error.is::<std::io::Error>(), "the inner error, boxed as it came");
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct BoxErrors<S>(S);

impl<S, Req> tower_service::Service<Req> for BoxErrors<S>
where
    S: tower_service::Service<Req>,
    S::Error: Into<BoxError>,
{
    type Response = S::Response;
    type Error = BoxError;
    type Future = BoxErrorsFuture<S::Future>;

    #[inline]
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.0.poll_ready(cx).map_err(Into::into)
    }

    #[inline]
    fn call(&mut self, request: Req) -> Self::Future {
        BoxErrorsFuture {
            inner: self.0.call(request),
        }
    }
}

pin_project_lite::pin_project! {
    /// The answer of a [`BoxErrors`] service: the inner one's, its error
    /// boxed.
    ///
    /// ```
    /// use backoff_tower::BoxErrorsFuture;
    /// fn named<F>(_: BoxErrorsFuture<F>) {}
    /// ```
    #[derive(Debug)]
    pub struct BoxErrorsFuture<F> {
        #[pin]
        inner: F,
    }
}

impl<F, T, E> Future for BoxErrorsFuture<F>
where
    F: Future<Output = Result<T, E>>,
    E: Into<BoxError>,
{
    type Output = Result<T, BoxError>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        Poll::Ready(ready!(self.project().inner.poll(cx)).map_err(Into::into))
    }
}
