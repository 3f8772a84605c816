//! `RetryLayer`: the keys of a layered service's retries.
//!
//! The keys of a layered service's retries (the policy,
//! the classification, the per-attempt timeout, the limit, the admission
//! limiter, the name and the observing hooks), shared by every call of the
//! services it makes.

use core::time::Duration;
use std::sync::Arc;

use crate::classify::Classified;
use crate::held::AdmissionSlot;
use crate::http::HttpRetry;
use backoff_runtime::__front_end::{Loop, Site};
use backoff_runtime::Elapsed;
use backoff_runtime::Policy;
use backoff_runtime::limits::Refused;
use backoff_runtime::limits::{AdmissionLimit, RetryLimit};
use backoff_runtime::{GiveUp, RetryEvent, Success};

/// No per-attempt timeout (the layer's default).
#[derive(Clone, Copy, Debug, Default)]
pub struct NoTimeout;

/// A per-attempt timeout, set by [`RetryLayer::timeout`]: a timed-out
/// attempt becomes an error (see there which).
#[derive(Clone, Copy, Debug)]
pub struct WithTimeout(Duration);

/// No admission limiter (the layer's default): every attempt goes at once.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoAdmission;

/// A limiter asked before every attempt, set by [`RetryLayer::admission`]:
/// a refused attempt becomes an error (see there which).
#[derive(Clone)]
pub struct WithAdmission(Arc<dyn AdmissionLimit + Send>);

impl WithAdmission {
    /// The limiter.
    pub(crate) fn limit(&self) -> &dyn AdmissionLimit {
        &*self.0
    }

    /// The limiter, shared: what a call's hold keeps.
    pub(crate) fn shared(&self) -> Arc<dyn AdmissionLimit + Send> {
        Arc::clone(&self.0)
    }
}

impl core::fmt::Debug for WithAdmission {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("WithAdmission").finish_non_exhaustive()
    }
}

/// A hook of the layer, shared by every call.
type Hook<A> = Arc<dyn Fn(&A) + Send + Sync>;

/// What is observed of each call: `on_retry`, `on_give_up`, `on_success`.
#[derive(Clone, Default)]
pub(super) struct Observers {
    pub(super) on_retry: Option<Hook<RetryEvent>>,
    pub(super) on_give_up: Option<Hook<GiveUp>>,
    pub(super) on_success: Option<Hook<Success>>,
}

impl Observers {
    /// Whether a hook observes the calls (their start is then read).
    pub(super) fn any(&self) -> bool {
        self.on_retry.is_some() || self.on_give_up.is_some() || self.on_success.is_some()
    }
}

/// A tower [`Layer`](tower_layer::Layer) that retries each request of the
/// service it wraps on a [`Policy`], with the attribute's keys as methods.
///
/// ```
/// use backoff_runtime::limits::RetryBudget;
/// use backoff_runtime::Policy;
/// use backoff_tower::RetryLayer;
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
pub struct RetryLayer<C = HttpRetry, T = NoTimeout, A = NoAdmission> {
    pub(super) classify: C,
    pub(super) timeout: T,
    pub(super) admission: A,
    /// The keys whose types never change as the layer is built.
    pub(super) calls: Calls,
}

/// The keys of a [`RetryLayer`] that keep their types as the
/// classification, timeout or admission change: how each call is
/// scheduled, counted and reported.
#[derive(Clone)]
pub(super) struct Calls {
    pub(super) policy: Policy,
    pub(super) budget: Option<Arc<dyn RetryLimit + Send>>,
    /// What events and metrics name the calls: `"retry"`, or [`name`](RetryLayer::name)'s.
    pub(super) site: Site,
    pub(super) observers: Observers,
    /// Whether a call reads its start when it starts (`max_elapsed`, a limit
    /// that reads the clock, or an observer): asked once, by
    /// [`shared`](RetryLayer::shared), not on every call.
    pub(super) reads_start: bool,
    /// With [`hedge_after`](RetryLayer::hedge_after): the delay after which
    /// the next attempt starts beside the one running.
    pub(super) hedge_after: Option<Duration>,
}

impl core::fmt::Debug for RetryLayer {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("RetryLayer")
            .field("policy", &self.calls.policy)
            .field("name", &self.calls.site.name())
            .field("budget", &self.calls.budget.is_some())
            .finish_non_exhaustive()
    }
}

impl RetryLayer {
    /// A layer retrying HTTP requests on `policy` ([`HttpRetry`]'s rules).
    ///
    /// ```
    /// use backoff_runtime::Policy;
    /// use backoff_tower::RetryLayer;
    /// let layer = RetryLayer::new(Policy::new());
    /// # let _ = layer;
    /// ```
    #[must_use]
    pub fn new(policy: Policy) -> Self {
        RetryLayer {
            classify: HttpRetry::new(),
            timeout: NoTimeout,
            admission: NoAdmission,
            calls: Calls {
                policy,
                budget: None,
                site: Site::Named("retry"),
                observers: Observers::default(),
                reads_start: false,
                hedge_after: None,
            },
        }
    }

    /// Adds an `Idempotency-Key` header (the call's invocation id) to a
    /// request of a method that is not idempotent and has none, so that it
    /// may be retried: the server sees the same key on every attempt.
    ///
    /// ```
    /// use backoff_runtime::Policy;
    /// use backoff_tower::RetryLayer;
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
    /// use backoff_tower::RetryLayer;
    /// let layer = RetryLayer::new(Policy::new()).retry_any_method();
    /// # let _ = layer;
    /// ```
    #[must_use]
    pub fn retry_any_method(mut self) -> Self {
        self.classify = self.classify.retry_any_method();
        self
    }
}

impl<C, T, A> RetryLayer<C, T, A> {
    /// The same layer with the classification, timeout and admission that
    /// `change` makes of these (each may change type).
    pub(crate) fn retyped<D, T2, A2>(self, change: impl FnOnce(C, T, A) -> (D, T2, A2)) -> RetryLayer<D, T2, A2> {
        let RetryLayer {
            classify,
            timeout,
            admission,
            calls,
        } = self;
        let (classify, timeout, admission) = change(classify, timeout, admission);
        RetryLayer {
            classify,
            timeout,
            admission,
            calls,
        }
    }

    /// Classifies requests, responses and errors with `classify` instead of
    /// HTTP's rules. The layered service then answers the inner service's
    /// errors unchanged ([`Classified`]).
    ///
    /// ```
    /// use backoff_runtime::Policy;
    /// use backoff_tower::{Classify, RetryLayer};
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
    pub fn classify<D>(self, classify: D) -> RetryLayer<Classified<D>, T, A> {
        self.retyped(|_, timeout, admission| (Classified(classify), timeout, admission))
    }

    /// Gives each attempt a timeout (the attribute's `timeout`): a slower
    /// attempt is dropped and becomes an error, which the classification
    /// sees like any other. Needs tokio's timer.
    ///
    /// Under HTTP's rules (the default) the service then answers tower's
    /// `BoxError` ([`BoxError`](crate::BoxError)): the inner error boxed, a
    /// timed-out attempt as [`Elapsed`]. Under a classification of one's own
    /// the error stays the inner service's, which must be `From<Elapsed>`.
    ///
    /// ```
    /// use backoff_runtime::Policy;
    /// use backoff_tower::RetryLayer;
    /// use std::time::Duration;
    /// let layer = RetryLayer::new(Policy::new()).timeout(Duration::from_secs(1));
    /// # let _ = layer;
    /// ```
    #[must_use]
    pub fn timeout(self, timeout: Duration) -> RetryLayer<C, WithTimeout, A> {
        self.retyped(|classify, _, admission| (classify, WithTimeout(timeout), admission))
    }

    /// Paces every attempt of every call, the first included, with
    /// `limiter` (the attribute's `admission`): an
    /// [`AdaptiveRateLimiter`](backoff_runtime::limits::AdaptiveRateLimiter), an
    /// [`AdaptiveThrottle`](backoff_runtime::limits::AdaptiveThrottle) or your own
    /// [`AdmissionLimit`], shared with any other user of the same one. Before
    /// each attempt it lets it go, makes it wait (a tokio `Sleep` in the
    /// call's future, before the inner service is called: a delayed first
    /// attempt is sent, as a resend is, through a clone of the service made
    /// ready) or refuses it: the call then ends with a [`Refused`] error
    /// without sending, reported as a give-up with
    /// [`StopReason::Refused`](backoff_runtime::StopReason::Refused) (`on_give_up`,
    /// tracing, metrics). Under HTTP's rules (the default) the service then
    /// answers tower's `BoxError` ([`BoxError`](crate::BoxError)): the
    /// inner error boxed, a refusal as [`Refused`]; any client whose error
    /// is `Into<BoxError>` works as it is (hyper-util's, tower's). Under a
    /// classification of one's own the error stays the inner service's,
    /// which must be `From<Refused>`. After each attempt it hears
    /// whether the attempt was throttled: every error and response the
    /// classification retries counts as a throttle.
    ///
    /// The streaming layer ([`streaming`](Self::streaming), after this) and
    /// the reqwest middleware take it too. In the middleware, a refusal is
    /// `reqwest_middleware::Error::Middleware`, whose source is the
    /// [`Refused`].
    ///
    /// ```
    /// use backoff_runtime::limits::AdaptiveRateLimiter;
    /// use backoff_runtime::Policy;
    /// use backoff_tower::RetryLayer;
    /// use std::sync::Arc;
    /// use std::time::Duration;
    ///
    /// let limiter = Arc::new(AdaptiveRateLimiter::new().max_wait(Duration::from_secs(5)));
    /// let layer = RetryLayer::new(Policy::new()).admission(limiter);
    /// # let _ = layer;
    /// ```
    #[must_use]
    pub fn admission<L: AdmissionLimit + Send + 'static>(self, limiter: Arc<L>) -> RetryLayer<C, T, WithAdmission> {
        self.retyped(|classify, timeout, _| (classify, timeout, WithAdmission(limiter)))
    }

    /// Hedges (the attribute's `hedge_after`): the first attempt is sent at
    /// once; the next is sent beside it when `delay` passes without an
    /// accepted answer, or at once when an attempt fails with a retryable
    /// error, up to `max_retries + 1` attempts in all. The first accepted
    /// response wins; the attempts still running are cancelled (dropped)
    /// before the call returns. Each hedge goes through a clone of the
    /// service made ready, and asks the budget (and the admission limiter)
    /// as a retry does, so one budget bounds retries and hedges. Only
    /// requests that may be sent twice are hedged (for HTTP: idempotent
    /// methods, or a request with an `Idempotency-Key`); hedge idempotent
    /// reads.
    ///
    /// ```
    /// use backoff_runtime::Policy;
    /// use backoff_tower::RetryLayer;
    /// use std::time::Duration;
    /// let layer = RetryLayer::new(Policy::new().max_retries(2)).hedge_after(Duration::from_millis(50));
    /// # let _ = layer;
    /// ```
    #[must_use]
    pub fn hedge_after(mut self, delay: Duration) -> Self {
        self.calls.hedge_after = Some(delay);
        self
    }

    /// Shares a [`RetryBudget`](backoff_runtime::limits::RetryBudget), a
    /// [`RetryThrottle`](backoff_runtime::limits::RetryThrottle) or another
    /// [`RetryLimit`] among every call of the services this layer makes (and
    /// any other user of the same limit).
    ///
    /// ```
    /// use backoff_runtime::limits::RetryThrottle;
    /// use backoff_runtime::Policy;
    /// use backoff_tower::RetryLayer;
    /// use std::sync::Arc;
    /// let throttle = Arc::new(RetryThrottle::new(10, 0.1));
    /// let layer = RetryLayer::new(Policy::new()).budget(throttle);
    /// # let _ = layer;
    /// ```
    #[must_use]
    pub fn budget<L: RetryLimit + Send + 'static>(mut self, limit: Arc<L>) -> Self {
        self.calls.budget = Some(limit);
        self
    }

    /// The name metrics, tracing events and [`RetryEvent::function`] report
    /// (the attribute's `name`; `"retry"` when not given).
    ///
    /// ```
    /// use backoff_runtime::Policy;
    /// use backoff_tower::RetryLayer;
    /// let layer = RetryLayer::new(Policy::new()).name("payments");
    /// # let _ = layer;
    /// ```
    #[must_use]
    pub fn name(mut self, name: &'static str) -> Self {
        self.calls.site = Site::Named(name);
        self
    }

    /// Called before each wait with the retry's event (the attribute's
    /// `on_retry`; the failed response or error itself is in the tracing
    /// events).
    ///
    /// ```
    /// use backoff_runtime::Policy;
    /// use backoff_tower::RetryLayer;
    /// let layer = RetryLayer::new(Policy::new()).on_retry(|event| eprintln!("attempt {} failed", event.attempt()));
    /// # let _ = layer;
    /// ```
    #[must_use]
    pub fn on_retry(mut self, hook: impl Fn(&RetryEvent) + Send + Sync + 'static) -> Self {
        self.calls.observers.on_retry = Some(Arc::new(hook));
        self
    }

    /// Called once when a stop rule ends a call (`on_give_up`).
    ///
    /// ```
    /// use backoff_runtime::Policy;
    /// use backoff_tower::RetryLayer;
    /// let layer = RetryLayer::new(Policy::new()).on_give_up(|give_up| eprintln!("{}", give_up.reason()));
    /// # let _ = layer;
    /// ```
    #[must_use]
    pub fn on_give_up(mut self, hook: impl Fn(&GiveUp) + Send + Sync + 'static) -> Self {
        self.calls.observers.on_give_up = Some(Arc::new(hook));
        self
    }

    /// Called once when a call succeeds (`on_success`).
    ///
    /// ```
    /// use backoff_runtime::Policy;
    /// use backoff_tower::RetryLayer;
    /// let layer = RetryLayer::new(Policy::new()).on_success(|success| eprintln!("{} attempts", success.attempts()));
    /// # let _ = layer;
    /// ```
    #[must_use]
    pub fn on_success(mut self, hook: impl Fn(&Success) + Send + Sync + 'static) -> Self {
        self.calls.observers.on_success = Some(Arc::new(hook));
        self
    }
}

impl<C: Clone, T: Clone, A: Clone> RetryLayer<C, T, A> {
    /// The keys as every call of a service shares them, with what each call
    /// would otherwise ask again asked once: whether it reads its start.
    pub(super) fn shared(&self) -> Arc<Self> {
        self.clone().into_shared()
    }

    /// [`shared`](Self::shared), of a layer made for it.
    pub(super) fn into_shared(mut self) -> Arc<Self> {
        let calls = &mut self.calls;
        let budget = calls.budget.as_deref().map(|budget| budget as &dyn RetryLimit);
        calls.reads_start = Loop::start_needed(&calls.policy, budget, calls.observers.any());
        Arc::new(self)
    }
}

/// A per-attempt timeout and the result standing for a timed-out attempt.
type TimedOutAttempt<T, E> = Option<(Duration, fn() -> Result<T, E>)>;

/// How the layer's timeout reaches each attempt: nothing ([`NoTimeout`]:
/// the attempt is polled as it is), or a limit ([`WithTimeout`]: the
/// attempt runs under tokio's timeout, as with
/// [`Retry::timeout`](backoff_runtime::Retry::timeout)).
///
/// ```
/// use backoff_tower::{PerAttemptTimeout, NoTimeout};
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
    fn timeout<T>(&self) -> TimedOutAttempt<T, E>;
}

impl<E> PerAttemptTimeout<E> for NoTimeout {
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn timeout<T>(&self) -> TimedOutAttempt<T, E> {
        None
    }
}

impl<E: From<Elapsed>> PerAttemptTimeout<E> for WithTimeout {
    #[inline]
    fn timeout<T>(&self) -> TimedOutAttempt<T, E> {
        Some((self.0, || Err(E::from(Elapsed::new()))))
    }
}

/// A pacing limiter and the result standing for a refused attempt.
pub(crate) type RefusedAttempt<'a, T, E> = Option<(&'a dyn AdmissionLimit, fn(Refused) -> Result<T, E>)>;

/// How the layer's admission limiter reaches each attempt: not at all
/// ([`NoAdmission`]: every attempt goes at once, and the checks compile
/// away), or asked before each ([`WithAdmission`], as with
/// [`Retry::admission`](backoff_runtime::Retry::admission)).
///
/// ```
/// use backoff_tower::{NoAdmission, PerAttemptAdmission};
/// fn takes<L: PerAttemptAdmission<std::io::Error>>(_: L) {}
/// takes(NoAdmission);
/// ```
#[diagnostic::on_unimplemented(
    message = "a `RetryLayer` with an `admission` limiter needs the service's error to be `From<backoff_runtime::limits::Refused>`, and `{E}` is not",
    label = "a refused attempt becomes this error",
    note = "tower's `BoxError` is; or map the service's error into one that is"
)]
pub trait PerAttemptAdmission<E>: AdmissionSlot {
    /// The limiter, and the result that stands for a refused attempt.
    fn admission<T>(&self) -> RefusedAttempt<'_, T, E>;
}

impl<E> PerAttemptAdmission<E> for NoAdmission {
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn admission<T>(&self) -> RefusedAttempt<'_, T, E> {
        None
    }
}

impl<E: From<Refused>> PerAttemptAdmission<E> for WithAdmission {
    #[inline]
    fn admission<T>(&self) -> RefusedAttempt<'_, T, E> {
        Some((self.limit(), |refused| Err(E::from(refused))))
    }
}
