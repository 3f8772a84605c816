//! [`RetryLayer`] and the [`RetryService`] it makes: each call runs
//! [`Policy::retry_with_attempt`] over clones of the request and of the
//! inner service, with the keys the layer was given.

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};
use core::time::Duration;
use std::sync::Arc;

use crate::limits::limit::RetryLimit;
use crate::observe::events::{GiveUp, RetryEvent, Success};
use crate::run::attempt::Attempt;
use crate::schedule::policy::Policy;
use crate::time::timeout::Elapsed;
use crate::tower::classify::Classify;
use crate::tower::http::HttpRetry;

/// No per-attempt timeout (the layer's default).
#[derive(Clone, Copy, Debug, Default)]
pub struct NoTimeout;

/// A per-attempt timeout, set by [`RetryLayer::timeout`]: the inner
/// service's error must then be `From<Elapsed>` (tower's `BoxError` is).
#[derive(Clone, Copy, Debug)]
pub struct WithTimeout(Duration);

/// A hook of the layer, shared by every call.
type Hook<A> = Arc<dyn Fn(&A) + Send + Sync>;

/// What is observed of each call: `on_retry`, `on_give_up`, `on_success`.
#[derive(Clone, Default)]
struct Observers {
    on_retry: Option<Hook<RetryEvent>>,
    on_give_up: Option<Hook<GiveUp>>,
    on_success: Option<Hook<Success>>,
}

impl Observers {
    fn any(&self) -> bool {
        self.on_retry.is_some() || self.on_give_up.is_some() || self.on_success.is_some()
    }
}

/// A tower [`Layer`](tower_layer::Layer) that retries each request of the
/// service it wraps on a [`Policy`], with the attribute's keys as methods.
///
/// ```
/// use backoff_runtime::{Policy, RetryBudget};
/// use backoff_runtime::tower::RetryLayer;
/// use std::sync::Arc;
/// use std::time::Duration;
///
/// static BACKEND: RetryBudget = RetryBudget::new().name("backend");
/// const POLICY: Policy = Policy::new().max_retries(4).max_backoff(Duration::from_secs(8));
///
/// let layer = RetryLayer::new(POLICY)
///     .budget(Arc::new(&BACKEND))
///     .name("backend")
///     .idempotency_key()
///     .timeout(Duration::from_secs(2))
///     .on_retry(|event| eprintln!("retrying in {:?}", event.wait()));
/// # let _ = layer;
/// ```
#[derive(Clone)]
pub struct RetryLayer<C = HttpRetry, T = NoTimeout> {
    policy: Policy,
    classify: C,
    timeout: T,
    budget: Option<Arc<dyn RetryLimit + Send>>,
    name: Option<&'static str>,
    observers: Observers,
}

impl core::fmt::Debug for RetryLayer {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("RetryLayer")
            .field("policy", &self.policy)
            .field("name", &self.name)
            .field("budget", &self.budget.is_some())
            .finish_non_exhaustive()
    }
}

impl RetryLayer {
    /// A layer retrying HTTP requests on `policy` ([`HttpRetry`]'s rules).
    ///
    /// ```
    /// use backoff_runtime::Policy;
    /// use backoff_runtime::tower::RetryLayer;
    /// let layer = RetryLayer::new(Policy::new());
    /// # let _ = layer;
    /// ```
    #[must_use]
    pub fn new(policy: Policy) -> Self {
        RetryLayer {
            policy,
            classify: HttpRetry::new(),
            timeout: NoTimeout,
            budget: None,
            name: None,
            observers: Observers::default(),
        }
    }

    /// Adds an `Idempotency-Key` header (the call's invocation id) to a
    /// request of a method that is not idempotent and has none, so that it
    /// may be retried: the server sees the same key on every attempt.
    ///
    /// ```
    /// use backoff_runtime::Policy;
    /// use backoff_runtime::tower::RetryLayer;
    /// let layer = RetryLayer::new(Policy::new()).idempotency_key();
    /// # let _ = layer;
    /// ```
    #[must_use]
    pub fn idempotency_key(mut self) -> Self {
        self.classify = self.classify.idempotency_key();
        self
    }

    /// Retries every method, `POST` and `PATCH` without an
    /// `Idempotency-Key` included: for servers that make them idempotent
    /// another way.
    ///
    /// ```
    /// use backoff_runtime::Policy;
    /// use backoff_runtime::tower::RetryLayer;
    /// let layer = RetryLayer::new(Policy::new()).retry_any_method();
    /// # let _ = layer;
    /// ```
    #[must_use]
    pub fn retry_any_method(mut self) -> Self {
        self.classify = self.classify.retry_any_method();
        self
    }
}

impl<C, T> RetryLayer<C, T> {
    /// Classifies requests, responses and errors with `classify` instead of
    /// HTTP's rules.
    ///
    /// ```
    /// use backoff_runtime::Policy;
    /// use backoff_runtime::tower::{Classify, RetryLayer};
    ///
    /// #[derive(Clone)]
    /// struct Always;
    /// impl Classify<u8, u8, ()> for Always {
    ///     fn may_retry(&self, _: &u8) -> bool {
    ///         true
    ///     }
    ///     fn replay(&self, request: &u8, _: &backoff_runtime::Attempt) -> u8 {
    ///         *request
    ///     }
    /// }
    /// let layer = RetryLayer::new(Policy::new()).classify(Always);
    /// # let _ = layer;
    /// ```
    #[must_use]
    pub fn classify<D>(self, classify: D) -> RetryLayer<D, T> {
        RetryLayer {
            policy: self.policy,
            classify,
            timeout: self.timeout,
            budget: self.budget,
            name: self.name,
            observers: self.observers,
        }
    }

    /// Limits each attempt to `limit` (the attribute's `timeout`): a slower
    /// attempt is dropped and becomes the error `E::from(Elapsed)`, which the
    /// classification sees like any other error. Needs tokio's timer.
    ///
    /// ```
    /// use backoff_runtime::Policy;
    /// use backoff_runtime::tower::RetryLayer;
    /// use std::time::Duration;
    /// let layer = RetryLayer::new(Policy::new()).timeout(Duration::from_secs(1));
    /// # let _ = layer;
    /// ```
    #[must_use]
    pub fn timeout(self, limit: Duration) -> RetryLayer<C, WithTimeout> {
        RetryLayer {
            policy: self.policy,
            classify: self.classify,
            timeout: WithTimeout(limit),
            budget: self.budget,
            name: self.name,
            observers: self.observers,
        }
    }

    /// Shares a [`RetryBudget`](crate::RetryBudget), a
    /// [`RetryThrottle`](crate::RetryThrottle) or another
    /// [`RetryLimit`] among every call of the services this layer makes (and
    /// any other user of the same limit).
    ///
    /// ```
    /// use backoff_runtime::{Policy, RetryThrottle};
    /// use backoff_runtime::tower::RetryLayer;
    /// use std::sync::Arc;
    /// let throttle = Arc::new(RetryThrottle::new(10, 0.1));
    /// let layer = RetryLayer::new(Policy::new()).budget(throttle);
    /// # let _ = layer;
    /// ```
    #[must_use]
    pub fn budget<L: RetryLimit + Send + 'static>(mut self, limit: Arc<L>) -> Self {
        self.budget = Some(limit);
        self
    }

    /// The name metrics, tracing events and [`RetryEvent::function`] report
    /// (the attribute's `name`; `"retry"` when not given).
    ///
    /// ```
    /// use backoff_runtime::Policy;
    /// use backoff_runtime::tower::RetryLayer;
    /// let layer = RetryLayer::new(Policy::new()).name("payments");
    /// # let _ = layer;
    /// ```
    #[must_use]
    pub fn name(mut self, name: &'static str) -> Self {
        self.name = Some(name);
        self
    }

    /// Called before each wait with the retry's event (the attribute's
    /// `on_retry`; the failed response or error itself is in the tracing
    /// events).
    ///
    /// ```
    /// use backoff_runtime::Policy;
    /// use backoff_runtime::tower::RetryLayer;
    /// let layer = RetryLayer::new(Policy::new()).on_retry(|event| eprintln!("attempt {} failed", event.attempt()));
    /// # let _ = layer;
    /// ```
    #[must_use]
    pub fn on_retry(mut self, hook: impl Fn(&RetryEvent) + Send + Sync + 'static) -> Self {
        self.observers.on_retry = Some(Arc::new(hook));
        self
    }

    /// Called once when a stop rule ends a call (`on_give_up`).
    ///
    /// ```
    /// use backoff_runtime::Policy;
    /// use backoff_runtime::tower::RetryLayer;
    /// let layer = RetryLayer::new(Policy::new()).on_give_up(|give_up| eprintln!("{}", give_up.reason()));
    /// # let _ = layer;
    /// ```
    #[must_use]
    pub fn on_give_up(mut self, hook: impl Fn(&GiveUp) + Send + Sync + 'static) -> Self {
        self.observers.on_give_up = Some(Arc::new(hook));
        self
    }

    /// Called once when a call succeeds (`on_success`).
    ///
    /// ```
    /// use backoff_runtime::Policy;
    /// use backoff_runtime::tower::RetryLayer;
    /// let layer = RetryLayer::new(Policy::new()).on_success(|success| eprintln!("{} attempts", success.attempts()));
    /// # let _ = layer;
    /// ```
    #[must_use]
    pub fn on_success(mut self, hook: impl Fn(&Success) + Send + Sync + 'static) -> Self {
        self.observers.on_success = Some(Arc::new(hook));
        self
    }
}

impl<C, T> RetryLayer<C, T> {
    /// The classification this layer uses.
    #[cfg(feature = "reqwest-middleware")]
    pub(crate) fn classify_ref(&self) -> &C {
        &self.classify
    }
}

impl<S, C: Clone, T: Clone> tower_layer::Layer<S> for RetryLayer<C, T> {
    type Service = RetryService<S, C, T>;

    fn layer(&self, inner: S) -> Self::Service {
        RetryService {
            inner,
            config: Arc::new(self.clone()),
        }
    }
}

/// The service a [`RetryLayer`] makes: each call retries the inner service.
#[derive(Clone)]
pub struct RetryService<S, C = HttpRetry, T = NoTimeout> {
    inner: S,
    config: Arc<RetryLayer<C, T>>,
}

impl<S: core::fmt::Debug, C, T> core::fmt::Debug for RetryService<S, C, T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("RetryService")
            .field("inner", &self.inner)
            .field("policy", &self.config.policy)
            .finish_non_exhaustive()
    }
}

/// A per-attempt limit and the result standing for a timed-out attempt.
type TimedOutAttempt<T, E> = Option<(Duration, fn() -> Result<T, E>)>;

/// How the layer's timeout reaches the builder: nothing, or
/// [`Retry::timeout`](crate::Retry::timeout).
///
/// ```
/// use backoff_runtime::tower::{PerAttemptTimeout, NoTimeout};
/// fn takes<L: PerAttemptTimeout<std::io::Error>>(_: L) {}
/// takes(NoTimeout);
/// ```
#[diagnostic::on_unimplemented(
    message = "a `RetryLayer` with a `timeout` needs the service's error to be `From<backoff_runtime::Elapsed>`, and `{E}` is not",
    label = "a timed-out attempt becomes this error",
    note = "tower's `BoxError` is; or map the service's error into one that is"
)]
pub trait PerAttemptTimeout<E>: Clone + Send + Sync + 'static {
    /// The limit, and the result that stands for a timed-out attempt.
    fn limit<T>(&self) -> TimedOutAttempt<T, E>;
}

impl<E> PerAttemptTimeout<E> for NoTimeout {
    fn limit<T>(&self) -> TimedOutAttempt<T, E> {
        None
    }
}

impl<E: From<Elapsed>> PerAttemptTimeout<E> for WithTimeout {
    fn limit<T>(&self) -> TimedOutAttempt<T, E> {
        Some((self.0, || Err(E::from(Elapsed::new()))))
    }
}

/// The future of a [`RetryService`] call.
pub type RetryServiceFuture<R, E> = Pin<Box<dyn Future<Output = Result<R, E>> + Send>>;

impl<S, Req, C, T> tower_service::Service<Req> for RetryService<S, C, T>
where
    S: tower_service::Service<Req> + Clone + Send + 'static,
    S::Future: Send,
    S::Response: Send + 'static,
    S::Error: Send + 'static,
    Req: Send + 'static,
    C: Classify<Req, S::Response, S::Error>,
    T: PerAttemptTimeout<S::Error>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = RetryServiceFuture<S::Response, S::Error>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Req) -> Self::Future {
        // The service made ready goes into the call; a clone stays here.
        let clone = self.inner.clone();
        let ready = core::mem::replace(&mut self.inner, clone);
        let config = Arc::clone(&self.config);
        // One call: a request that may not be sent twice gets its one
        // attempt; otherwise `retry_attempts` over ready clones of the
        // service.
        Box::pin(async move {
            let mut ready = ready;
            if !config.classify.may_retry(&request) {
                return ready.call(request).await;
            }
            let template = ready.clone();
            let mut first = Some(ready);
            let send = move |request: Req| {
                // The first attempt takes the service `poll_ready` made ready; each
                // later one a clone, made ready before it is called.
                let (mut service, is_ready) = match first.take() {
                    Some(service) => (service, true),
                    None => (template.clone(), false),
                };
                async move {
                    if !is_ready {
                        core::future::poll_fn(|cx| service.poll_ready(cx)).await?;
                    }
                    service.call(request).await
                }
            };
            retry_attempts(&config, request, send).await
        })
    }
}

/// The attempts of one call, each sending (with `send`) the request the
/// classifier replays from the caller's: the one loop of the tower service
/// and of the reqwest middleware.
pub(crate) async fn retry_attempts<Req, Res, E, C, T, Send, Fut>(
    config: &RetryLayer<C, T>,
    request: Req,
    mut send: Send,
) -> Result<Res, E>
where
    C: Classify<Req, Res, E>,
    T: PerAttemptTimeout<E>,
    Send: FnMut(Req) -> Fut,
    Fut: Future<Output = Result<Res, E>>,
{
    let policy = config.policy;
    // Owned clones in `move` closures: closures that borrowed the config
    // would make the future's `Send` proof higher-ranked (rustc then cannot
    // show the hooks judge every lifetime).
    let replay = config.classify.clone();
    let attempt = move |attempt: Attempt| {
        let request = replay.replay(&request, &attempt);
        crate::observe::trace::resend(attempt.number(), send(request))
    };
    let (if_error, after_error, if_response, after_response) = (
        config.classify.clone(),
        config.classify.clone(),
        config.classify.clone(),
        config.classify.clone(),
    );
    let mut retry = policy
        .retry_with_attempt(attempt)
        .retry_if(move |error| if_error.retry_error(error))
        .retry_after(move |error| after_error.error_hint(error))
        .retry_if_ok(move |response| if_response.retry_response(response))
        .retry_after_ok(move |response| after_response.response_hint(response))
        .values_are_failures();
    retry.config.timeout = config.timeout.limit();
    if let Some(name) = config.name {
        retry = retry.name(name);
    }
    if let Some(budget) = &config.budget {
        retry = retry.budget(budget);
    }
    if !config.observers.any() {
        return retry.await;
    }
    let Observers {
        on_retry,
        on_give_up,
        on_success,
    } = config.observers.clone();
    retry
        .on_retry(move |_, event| {
            if let Some(hook) = &on_retry {
                hook(event);
            }
        })
        .on_give_up(move |_, give_up| {
            if let Some(hook) = &on_give_up {
                hook(give_up);
            }
        })
        .on_success(move |success| {
            if let Some(hook) = &on_success {
                hook(success);
            }
        })
        .await
}
