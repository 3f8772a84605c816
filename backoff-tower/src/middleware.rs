//! `RetryLayer` as a reqwest-middleware middleware.
//!
//! [`RetryLayer`] as a [reqwest-middleware](https://docs.rs/reqwest-middleware)
//! middleware (this crate's feature `reqwest-middleware`): the same loop, schedule, keys
//! and HTTP rules as the tower layer, for a `reqwest_middleware::ClientWithMiddleware`.
//!
//! reqwest 0.13's own retries (`reqwest::retry`) classify and budget, but
//! never wait: they resend at once, so the schedule cannot drive them. This
//! middleware waits the schedule (and the server's `Retry-After`).

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};
use core::time::Duration;

use http::Extensions;
use reqwest_middleware::{Error, Middleware, Next};

use crate::classify::{Classify, LayerClassify};
use crate::future::ResponseFuture;
use crate::held::{AdmissionHold, AdmissionSlot};
use crate::http::HttpRetry;
use crate::layer::{NoAdmission, PerAttemptAdmission, PerAttemptTimeout, RefusedAttempt, RetryLayer, WithAdmission};
use backoff_runtime::Attempt;
use backoff_runtime::http_errors::{is_retryable_status, retry_after_header};
use backoff_runtime::reqwest_errors::is_retryable_reqwest_error;

/// HTTP's rules for reqwest's requests: as for `http::Request`, and a
/// request whose body is a stream (not in memory) gets its one attempt; the
/// errors retried are those [`is_retryable_reqwest_error`] retries (another
/// middleware's errors are not).
impl Classify<reqwest::Request, reqwest::Response, Error> for HttpRetry {
    const READS_ATTEMPT_TIME: bool = false;

    fn may_retry(&self, request: &reqwest::Request) -> bool {
        let replayable = request.body().is_none_or(|body| body.as_bytes().is_some());
        replayable && self.allows(request.method(), request.headers())
    }

    /// The host (without the port).
    fn admission_key<'r>(&self, request: &'r reqwest::Request) -> Option<&'r str> {
        request.url().host_str()
    }

    fn replay(&self, request: &reqwest::Request, attempt: &Attempt) -> reqwest::Request {
        // `may_retry` has checked that the body is in memory, so the clone
        // is whole; the fallback (no body) is never sent.
        let mut replayed = request
            .try_clone()
            .unwrap_or_else(|| reqwest::Request::new(request.method().clone(), request.url().clone()));
        let method = replayed.method().clone();
        self.add_key(&method, replayed.headers_mut(), attempt);
        replayed
    }

    fn retry_error(&self, error: &Error) -> bool {
        match error {
            Error::Reqwest(error) => is_retryable_reqwest_error(error),
            Error::Middleware(_) => false,
        }
    }

    fn retry_response(&self, response: &reqwest::Response) -> bool {
        is_retryable_status(response.status())
    }

    fn response_hint(&self, response: &reqwest::Response) -> Option<Duration> {
        retry_after_header(response.headers())
    }
}

/// The future of one run of the rest of the chain.
type ChainFuture<'a> = Pin<Box<dyn Future<Output = reqwest_middleware::Result<reqwest::Response>> + Send + 'a>>;

/// The rest of the middleware chain as a tower service, so that a
/// middleware call is the layer's [`ResponseFuture`]: each attempt runs it
/// with its own copy of the request's extensions. Always ready.
#[derive(Clone)]
struct Chain<'a> {
    next: Next<'a>,
    extensions: Extensions,
}

impl<'a> tower_service::Service<reqwest::Request> for Chain<'a> {
    type Response = reqwest::Response;
    type Error = Error;
    type Future = ChainFuture<'a>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: reqwest::Request) -> ChainFuture<'a> {
        let next = self.next.clone();
        let mut extensions = self.extensions.clone();
        Box::pin(async move { next.run(request, &mut extensions).await })
    }
}

/// The layer's admission limiter in a middleware: a refused attempt ends
/// the call with [`Error::Middleware`] holding the
/// [`Refused`](backoff_runtime::limits::Refused).
#[derive(Clone, Debug)]
#[allow(
    unreachable_pub,
    reason = "sealed: `MiddlewareAdmission`'s answer for `WithAdmission`"
)]
pub struct RefusedAsMiddleware(WithAdmission);

impl AdmissionSlot for RefusedAsMiddleware {
    type Held = AdmissionHold;

    fn hold<'h>(&'h self, held: &'h mut AdmissionHold) -> Option<(&'h WithAdmission, &'h mut AdmissionHold)> {
        self.0.hold(held)
    }
}

impl PerAttemptAdmission<Error> for RefusedAsMiddleware {
    fn admission<T>(&self) -> RefusedAttempt<'_, T, Error> {
        Some((self.0.limit(), |refused| Err(Error::middleware(refused))))
    }
}

/// A layer's admission key as a middleware asks it: no limiter, or the
/// limiter with a refusal as [`Error::Middleware`] (the orphan rule keeps
/// reqwest-middleware's error from being `From<Refused>`).
#[allow(
    unreachable_pub,
    reason = "sealed: named by the `Middleware` impl, implemented here alone"
)]
pub trait MiddlewareAdmission: AdmissionSlot {
    /// What the middleware's calls ask.
    type Asked: PerAttemptAdmission<Error>;

    /// The key, as the middleware's calls ask it.
    fn asked(self) -> Self::Asked;
}

impl MiddlewareAdmission for NoAdmission {
    type Asked = NoAdmission;

    fn asked(self) -> NoAdmission {
        self
    }
}

impl MiddlewareAdmission for WithAdmission {
    type Asked = RefusedAsMiddleware;

    fn asked(self) -> RefusedAsMiddleware {
        RefusedAsMiddleware(self)
    }
}

/// The layer as a reqwest middleware: `ClientBuilder::new(client).with(RetryLayer::new(POLICY))`.
/// Each attempt runs the rest of the chain with a copy of the request's
/// extensions (what a later middleware adds to one attempt's is not seen
/// by the next).
///
/// With an admission limiter ([`RetryLayer::admission`]), a refused attempt
/// ends the call with [`Error::Middleware`], whose source is the
/// [`Refused`](backoff_runtime::limits::Refused).
///
/// ```
/// use backoff_runtime::limits::CircuitBreaker;
/// use backoff_runtime::Policy;
/// use backoff_tower::RetryLayer;
/// use std::sync::Arc;
///
/// let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
///     .with(RetryLayer::new(Policy::new()))
///     .build();
/// let breaker = Arc::new(CircuitBreaker::new());
/// let guarded = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
///     .with(RetryLayer::new(Policy::new()).admission(breaker))
///     .build();
/// # let _ = (client, guarded);
/// ```
impl<C, T, A> Middleware for RetryLayer<C, T, A>
where
    C: LayerClassify<reqwest::Request, reqwest::Response, Error>,
    T: PerAttemptTimeout<Error>,
    A: MiddlewareAdmission,
{
    fn handle<'life0, 'life1, 'life2, 'async_trait>(
        &'life0 self,
        request: reqwest::Request,
        extensions: &'life1 mut Extensions,
        next: Next<'life2>,
    ) -> Pin<Box<dyn Future<Output = reqwest_middleware::Result<reqwest::Response>> + Send + 'async_trait>>
    where
        'life0: 'async_trait,
        'life1: 'async_trait,
        'life2: 'async_trait,
        Self: 'async_trait,
    {
        if !self.classify.may_retry(&request) {
            return next.run(request, extensions);
        }
        let mut chain = Chain {
            next,
            extensions: extensions.clone(),
        };
        // The layer's keys, shared as a layered service shares them.
        let config = self
            .clone()
            .retyped(|classify, timeout, admission| (classify, timeout, admission.asked()))
            .into_shared();
        Box::pin(ResponseFuture::start(&mut chain, &config, request))
    }
}
