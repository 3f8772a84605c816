//! [`RetryService`]: the service a [`RetryLayer`] makes, whose calls are
//! [`ResponseFuture`]s.

use core::task::{Context, Poll};
use std::sync::Arc;

use crate::classify::Classify;
use crate::future::ResponseFuture;
use crate::http::HttpRetry;
use crate::layer::{NoAdmission, NoTimeout, PerAttemptAdmission, PerAttemptTimeout, RetryLayer};

impl<S, C: Clone, T: Clone, A: Clone> tower_layer::Layer<S> for RetryLayer<C, T, A> {
    type Service = RetryService<S, C, T, A>;

    fn layer(&self, inner: S) -> Self::Service {
        RetryService {
            inner,
            config: self.shared(),
        }
    }
}

/// The service a [`RetryLayer`] makes: each call retries the inner service.
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
    inner: S,
    config: Arc<RetryLayer<C, T, A>>,
}

impl<S: core::fmt::Debug, C, T, A> core::fmt::Debug for RetryService<S, C, T, A> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("RetryService")
            .field("inner", &self.inner)
            .field("policy", &self.config.calls.policy)
            .finish_non_exhaustive()
    }
}

impl<S, Req, C, T, A> tower_service::Service<Req> for RetryService<S, C, T, A>
where
    S: tower_service::Service<Req> + Clone,
    C: Classify<Req, S::Response, S::Error>,
    T: PerAttemptTimeout<S::Error>,
    A: PerAttemptAdmission<S::Error>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = ResponseFuture<S, Req, C, T, A>;

    #[inline]
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    /// Calls the inner service (made ready by `poll_ready`) with the first
    /// attempt; the future keeps a clone of it for the resends.
    #[inline]
    fn call(&mut self, request: Req) -> Self::Future {
        ResponseFuture::start(&mut self.inner, &self.config, request)
    }
}
