//! `ChaosLayer`: a fault injector around the inner service.
//!
//! The runtime's fault injector around each call of the
//! inner service (feature `chaos`). Under a [`RetryLayer`](crate::RetryLayer),
//! each attempt passes through it.

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, ready};

use backoff_runtime::__front_end::DefaultWait;
use backoff_runtime::chaos::{Injection, Injector};
use tower_service::Service;

/// A layer that runs each call of the service it wraps under an
/// [`Injector`] of the service's response and error types: a fault or an
/// outcome answers without calling it; latency waits on the default timer
/// (tokio's, a paused clock included), then calls it. Put it under the
/// retry layer, so that each attempt is injected.
///
/// ```
/// use backoff_runtime::chaos::{Injector, Rate};
/// use backoff_runtime::Policy;
/// use backoff_tower::{ChaosLayer, RetryLayer};
/// use http::{Request, Response, StatusCode};
/// use std::time::Duration;
/// use tower::{ServiceBuilder, ServiceExt};
///
/// type Error = Box<dyn std::error::Error + Send + Sync>;
///
/// fn unavailable() -> Response<String> {
///     Response::builder().status(StatusCode::SERVICE_UNAVAILABLE).body(String::new()).unwrap()
/// }
///
/// static OUTAGE: Injector<Response<String>, Error> = Injector::new().outcome(Rate::new(1.0), unavailable);
/// const POLICY: Policy = Policy::new().max_retries(2).initial_backoff(Duration::from_millis(1));
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let service = ServiceBuilder::new()
///     .layer(RetryLayer::new(POLICY))
///     .layer(ChaosLayer::new(&OUTAGE))
///     .service_fn(|_: Request<String>| async { Ok::<_, Error>(Response::new("real".to_owned())) });
/// let response = service.oneshot(Request::new(String::new())).await.unwrap();
/// assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE, "three injected 503s, the last returned");
/// # }
/// ```
pub struct ChaosLayer<T: 'static, E: 'static> {
    injector: &'static Injector<T, E>,
}

impl<T, E> ChaosLayer<T, E> {
    /// A layer over `injector`, a `static`.
    ///
    /// ```
    /// use backoff_runtime::chaos::Injector;
    /// use backoff_tower::ChaosLayer;
    ///
    /// static NONE: Injector<http::Response<()>, std::io::Error> = Injector::new();
    /// let _layer = ChaosLayer::new(&NONE);
    /// ```
    pub const fn new(injector: &'static Injector<T, E>) -> Self {
        ChaosLayer { injector }
    }
}

impl<T, E> Clone for ChaosLayer<T, E> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T, E> Copy for ChaosLayer<T, E> {}

impl<T, E> core::fmt::Debug for ChaosLayer<T, E> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ChaosLayer").field("injector", self.injector).finish()
    }
}

impl<S, T, E> tower_layer::Layer<S> for ChaosLayer<T, E> {
    type Service = ChaosService<S, T, E>;

    fn layer(&self, inner: S) -> Self::Service {
        ChaosService {
            inner,
            injector: self.injector,
        }
    }
}

/// The service of a [`ChaosLayer`].
///
/// ```
/// use backoff_runtime::chaos::{Injector, Rate};
/// use backoff_tower::ChaosLayer;
/// use tower::{Layer, ServiceExt, service_fn};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// static DOWN: Injector<u8, &str> = Injector::new().fault(Rate::new(1.0), || "injected");
/// let service = ChaosLayer::new(&DOWN).layer(service_fn(|_: ()| async { Ok::<u8, &str>(1) }));
/// assert_eq!(service.oneshot(()).await, Err("injected"));
/// # }
/// ```
pub struct ChaosService<S, T: 'static, E: 'static> {
    inner: S,
    injector: &'static Injector<T, E>,
}

impl<S: Clone, T, E> Clone for ChaosService<S, T, E> {
    fn clone(&self) -> Self {
        ChaosService {
            inner: self.inner.clone(),
            injector: self.injector,
        }
    }
}

impl<S: core::fmt::Debug, T, E> core::fmt::Debug for ChaosService<S, T, E> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ChaosService")
            .field("inner", &self.inner)
            .field("injector", self.injector)
            .finish()
    }
}

impl<S, Req> Service<Req> for ChaosService<S, S::Response, S::Error>
where
    S: Service<Req> + Clone,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = ChaosFuture<S, Req>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Req) -> Self::Future {
        let state = match self.injector.inject() {
            Injection::Pass => State::Calling {
                future: self.inner.call(request),
            },
            Injection::Fault(error) => State::Answered {
                result: Some(Err(error)),
            },
            Injection::Outcome(response) => State::Answered {
                result: Some(Ok(response)),
            },
            Injection::Latency(wait) => {
                // The service made ready goes with the request; this one
                // keeps a clone (tower's rule for a call made later).
                let clone = self.inner.clone();
                let ready = core::mem::replace(&mut self.inner, clone);
                State::Waiting {
                    wait: DefaultWait::start(wait),
                    call: Some((ready, request)),
                }
            }
        };
        ChaosFuture { state }
    }
}

pin_project_lite::pin_project! {
    /// Where a call under a [`ChaosLayer`] is.
    #[project = StateProj]
    enum State<S: Service<Req>, Req> {
        /// An injected answer, taken by the first poll.
        Answered { result: Option<Result<S::Response, S::Error>> },
        /// An injected wait, then the call.
        Waiting { #[pin] wait: DefaultWait, call: Option<(S, Req)> },
        /// The inner service's call.
        Calling { #[pin] future: S::Future },
    }
}

pin_project_lite::pin_project! {
    /// The future of a [`ChaosService`] call.
    ///
    /// ```
    /// use backoff_runtime::chaos::Injector;
    /// use backoff_tower::{ChaosFuture, ChaosLayer};
    /// use tower::{Layer, Service, service_fn};
    ///
    /// static NONE: Injector<u8, ()> = Injector::new();
    /// # type S = tower::util::ServiceFn<fn(()) -> std::future::Ready<Result<u8, ()>>>;
    /// let mut service = ChaosLayer::new(&NONE).layer(service_fn((|()| std::future::ready(Ok(1))) as fn(()) -> _));
    /// let _future: ChaosFuture<S, ()> = service.call(());
    /// ```
    #[must_use = "a call does nothing unless awaited"]
    pub struct ChaosFuture<S: Service<Req>, Req> {
        #[pin]
        state: State<S, Req>,
    }
}

impl<S: Service<Req>, Req> core::fmt::Debug for ChaosFuture<S, Req> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let state = match &self.state {
            State::Answered { .. } => "answered",
            State::Waiting { .. } => "waiting",
            State::Calling { .. } => "calling",
        };
        f.debug_struct("ChaosFuture").field("state", &state).finish()
    }
}

impl<S: Service<Req>, Req> Future for ChaosFuture<S, Req> {
    type Output = Result<S::Response, S::Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut state = self.project().state;
        loop {
            match state.as_mut().project() {
                StateProj::Answered { result } => {
                    return match result.take() {
                        Some(result) => Poll::Ready(result),
                        None => Poll::Pending,
                    };
                }
                StateProj::Waiting { wait, call } => {
                    ready!(wait.poll(cx));
                    let Some((mut service, request)) = call.take() else {
                        return Poll::Pending;
                    };
                    let future = service.call(request);
                    state.set(State::Calling { future });
                }
                StateProj::Calling { future } => return future.poll(cx),
            }
        }
    }
}
