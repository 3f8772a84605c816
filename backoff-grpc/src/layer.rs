//! `GrpcRetryLayer`: gRPC's retries in the channel.
//!
//! gRPC's retries in the channel, configured by a
//! service config, and shared by every call of the services it makes.

use core::time::Duration;
use std::sync::Arc;

use super::codes::CodeSet;
use super::config::{ByPath, MethodConfig, RetryPolicy, ServiceConfig};
use super::rules::GrpcRules;
use backoff_runtime::Policy;
use backoff_runtime::limits::AdmissionLimit;
use backoff_runtime::limits::RetryLimit;
use backoff_runtime::limits::RetryThrottle;
use backoff_runtime::{GiveUp, RetryEvent, Success};
use backoff_tower::__grpc::PerMethod;
use backoff_tower::ReplayLimits;
use backoff_tower::{NoAdmission, NoTimeout, RetryLayer, WithAdmission};

/// The keys every method's layer starts from: gRPC's rules, no per-attempt
/// timeout (the deadline is the call's), and the admission `A`
/// ([`NoAdmission`], or a limiter: [`WithAdmission`]).
pub(crate) type Keys<A> = RetryLayer<GrpcRules, NoTimeout, A>;

/// A tower layer that retries gRPC calls in the channel, as gRPC's own
/// clients in Go, Java, C++, Python and .NET do (gRPC's retry design, A6):
/// put it under any tonic client, `Client::new(layer.layer(channel))`.
///
/// Each call's `retryPolicy` and `timeout` come from the service config by
/// the request's path (`/package.Service/Method`); a method without a
/// `retryPolicy` is sent once. What it retries, and what never:
///
/// - **Attempts.** At most `maxAttempts` (5 at most, unless the config was
///   built with a higher
///   [`max_attempts_cap`](crate::ServiceConfigBuilder::max_attempts_cap)),
///   waiting as A6 says (`initialBackoff * backoffMultiplier^(n-1)`, at
///   most `maxBackoff`, jittered by ±20%: [`Jitter::Grpc`](backoff_runtime::Jitter::Grpc)).
/// - **Statuses.** A status in `retryableStatusCodes`, read from a
///   Trailers-Only response (`grpc-status` in the response headers). A
///   transport error before any response counts as `UNAVAILABLE`. A policy
///   built in code without codes retries `UNAVAILABLE`, and a
///   `RESOURCE_EXHAUSTED` that carries a `RetryInfo`
///   ([`RetryPolicy::retries_exhausted_with_retry_info`]); in JSON the
///   codes are required, as gRPC's clients require them.
/// - **Committed calls are never retried.** Response headers that are not
///   Trailers-Only commit the call: whatever its trailers say later
///   (`UNAVAILABLE` included), and however long a server stream runs, that
///   attempt is the last. The call is reported at its status, in its
///   trailers, as the body passes through (no frame copied): the throttle
///   counts it, and `on_success` or `on_give_up`
///   ([`StopReason::Committed`](backoff_runtime::StopReason::Committed)),
///   tracing and A96's metrics hear of it then.
/// - **The request body** is kept for replay while it fits the caps
///   ([`ReplayLimits`]: 1 MiB per call and 16 MiB for all the calls of the
///   layer by default, as grpc-java): unary and client-streaming calls are
///   retried until committed; a call whose body outgrows the cap is sent
///   once, and not retried. Each attempt sends the body from its first
///   byte, never a byte twice, even when the server answered before the
///   request stream ended.
/// - **The server's pushback** (`grpc-retry-pushback-ms`): a valid value
///   up to 120 s is the exact wait (0: at once; no jitter, even above
///   `maxBackoff`), after which the backoff starts again from
///   `initialBackoff`; a negative, unparsable or longer one (or several
///   values) ends the call. The 120 s ceiling is this crate's, not A6's:
///   a hostile server cannot park a call without a deadline. A
///   `google.rpc.RetryInfo` in `grpc-status-details-bin` is a hint,
///   capped by `maxBackoff` as every hint is (a longer one ends the call).
/// - **Throttling.** The config's `retryThrottling` is one
///   [`RetryThrottle`] per layer (share one among layers with
///   [`throttle`](Self::throttle)), fed by every call on the channel, as
///   A6 says: each retryable failure (and each pushback that refuses)
///   takes a token, committed or not; each success (an `OK` status, in the
///   trailers or Trailers-Only) gives back `tokenRatio`, those of methods without a
///   `retryPolicy` included; retries stop while half the bucket or less
///   is left.
/// - **Headers and deadline.** Each retry carries
///   `grpc-previous-rpc-attempts`. The caller's deadline (its
///   `grpc-timeout`, else the method's `timeout`) bounds all the attempts
///   and waits together: no wait ends past it, and each attempt's
///   `grpc-timeout` is the time left. When the next wait would pass it,
///   the call ends at the deadline with `DEADLINE_EXCEEDED`, as gRPC's
///   clients end it; its message names the last attempt's status. A zero
///   deadline (`"timeout": "0s"`, or `grpc-timeout: 0m`) has passed
///   already: the call ends at once with `DEADLINE_EXCEEDED`, unsent.
/// - **Dropping the call** (the caller's future) stops it: the attempt in
///   flight is cancelled and no other starts.
///
/// - **Hedging** (`hedgingPolicy`, A6): the first attempt is sent at
///   once; each next one after `hedgingDelay` without an answer (0: all at
///   once), up to `maxAttempts` (capped as above). A status in
///   `nonFatalStatusCodes` sends the next hedge at once; any other status
///   ends the call and cancels the others. A pushback of `n` ms sends the
///   next hedge in `n` ms; a refusing one sends no more. Response headers
///   (or an `OK`) commit that attempt and cancel the others. The throttle
///   is asked before each hedge (the first attempt always goes); a hedge it
///   refuses is not sent, and a failure with nothing else in flight ends
///   the call at once (grpc-java waited for the deadline, grpc-java#7222).
///   Each hedge carries `grpc-previous-rpc-attempts`, and is fed the whole
///   request body, side by side with the others. When every attempt
///   fails, the call ends with the last failure, as grpc-java does.
///   Where grpc-java, grpc-dotnet and grpc-node differ, this follows A6's
///   text (docs/services.md).
///
/// - **Hostile answers** never panic the layer: status details that are
///   not base64 are left out of the status it reads (tonic would panic on
///   them), and a `RetryInfo` delay outside protobuf's range is no hint.
///
/// A hedged request body past its cap commits the call to the attempt
/// that has sent the most: the attempts behind it lose their body, and
/// their failures are dropped.
///
/// Not done: A6's transparent retries of a request the server's transport
/// refused (hyper does not report it).
///
/// Every retry goes through the crate's driver: the same events,
/// `on_retry`, `on_give_up`, `on_success`, tracing (with
/// `rpc.grpc.status_code`) and metrics as `#[retry]`.
///
/// ```
/// use backoff_grpc::{GrpcRetryLayer, ServiceConfig};
/// use tower::Layer;
///
/// let config = ServiceConfig::from_json(r#"{
///   "methodConfig": [{
///     "name": [{"service": "helloworld.Greeter"}],
///     "retryPolicy": {
///       "maxAttempts": 4, "initialBackoff": "0.1s", "maxBackoff": "1s",
///       "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]
///     }
///   }],
///   "retryThrottling": {"maxTokens": 10, "tokenRatio": 0.1}
/// }"#).unwrap();
/// let layer = GrpcRetryLayer::new(config).name("greeter");
/// # let channel = tower::service_fn(|_: http::Request<tonic::body::Body>| async {
/// #     Ok::<_, std::io::Error>(http::Response::new(tonic::body::Body::empty()))
/// # });
/// // With tonic: `GreeterClient::new(layer.layer(channel))`.
/// let service = layer.layer(channel);
/// # let _ = service;
/// ```
#[derive(Clone)]
pub struct GrpcRetryLayer<A = NoAdmission> {
    config: ServiceConfig,
    /// The keys every method's retries share: the throttle, the name, the
    /// observers, the admission (its policy and codes are each method's).
    keys: Keys<A>,
    limits: ReplayLimits,
}

impl<A> core::fmt::Debug for GrpcRetryLayer<A> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("GrpcRetryLayer")
            .field("config", &self.config)
            .field("name", &self.keys.reported_name())
            .field("throttle", &self.keys.limit().is_some())
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

/// What a method's calls are given: their retries (none: sent once) and
/// their `timeout`.
pub(super) struct Method<A> {
    /// The method's retries or hedges (none: sent once).
    pub(super) retry: Option<Arc<Keys<A>>>,
    pub(super) timeout: Option<Duration>,
}

impl<A> Clone for Method<A> {
    fn clone(&self) -> Self {
        Method {
            retry: self.retry.clone(),
            timeout: self.timeout,
        }
    }
}

/// What every service of one layer shares: each method's rules by path,
/// the replay caps, and the layer's throttle (which the calls sent once
/// feed too).
pub(super) struct Methods<A> {
    pub(super) by_path: ByPath<Method<A>>,
    pub(super) limits: ReplayLimits,
    pub(super) throttle: Option<Arc<dyn RetryLimit + Send>>,
}

impl GrpcRetryLayer {
    /// A layer retrying each call by its method's entry in `config`, with
    /// the config's `retryThrottling` as a new [`RetryThrottle`] of its own.
    ///
    /// ```
    /// use backoff_grpc::{GrpcRetryLayer, ServiceConfig};
    /// let config = ServiceConfig::from_json(r#"{"retryThrottling": {"maxTokens": 10, "tokenRatio": 0.1}}"#).unwrap();
    /// let layer = GrpcRetryLayer::new(config);
    /// # let _ = layer;
    /// ```
    #[must_use]
    pub fn new(config: ServiceConfig) -> Self {
        let rules = GrpcRules {
            codes: CodeSet::default(),
            exhausted_with_retry_info: false,
            hedged: false,
        };
        let mut keys = RetryLayer::new(Policy::new()).with_rules(rules).name("grpc");
        if let Some(throttling) = config.retry_throttling() {
            keys = keys.budget(Arc::new(throttling.throttle()));
        }
        GrpcRetryLayer {
            config,
            keys,
            limits: ReplayLimits::new(),
        }
    }

    /// A layer retrying every method's calls by one `retryPolicy`, without
    /// throttling.
    ///
    /// ```
    /// use backoff_grpc::{GrpcRetryLayer, MethodConfigSpec, RetryPolicySpec, ServiceConfig};
    /// use std::time::Duration;
    /// use tonic::Code;
    ///
    /// let spec = RetryPolicySpec::new()
    ///     .max_attempts(3)
    ///     .initial_backoff(Duration::from_millis(50))
    ///     .max_backoff(Duration::from_secs(1))
    ///     .backoff_multiplier(2.0)
    ///     .retryable_status_codes([Code::Unavailable]);
    /// let config = ServiceConfig::builder()
    ///     .method_config(MethodConfigSpec::new().every_method().retry_policy(spec))
    ///     .build()
    ///     .unwrap();
    /// let policy = *config.retry_policy("/any.Service/Method").unwrap();
    /// let layer = GrpcRetryLayer::for_every_method(policy);
    /// # let _ = layer;
    /// ```
    #[must_use]
    pub fn for_every_method(policy: RetryPolicy) -> Self {
        let config = ServiceConfig {
            every_method: Some(MethodConfig {
                retry_policy: Some(policy),
                hedging_policy: None,
                timeout: None,
            }),
            ..ServiceConfig::default()
        };
        GrpcRetryLayer::new(config)
    }
}

impl<A: Clone> GrpcRetryLayer<A> {
    /// The layer with `change` made to the keys every method's layer
    /// starts from.
    fn with_keys(mut self, change: impl FnOnce(Keys<A>) -> Keys<A>) -> Self {
        self.keys = change(self.keys);
        self
    }

    /// Shares `throttle` among the calls of this layer and of any other
    /// layer given it (A6 throttles per server: give the channels to one
    /// server the same one), instead of the config's own.
    ///
    /// ```
    /// use backoff_runtime::limits::RetryThrottle;
    /// use backoff_grpc::{GrpcRetryLayer, ServiceConfig};
    /// use std::sync::Arc;
    ///
    /// let throttle = Arc::new(RetryThrottle::new(10, 0.1));
    /// let config = ServiceConfig::from_json("{}").unwrap();
    /// let orders = GrpcRetryLayer::new(config.clone()).throttle(Arc::clone(&throttle));
    /// let billing = GrpcRetryLayer::new(config).throttle(throttle);
    /// # let _ = (orders, billing);
    /// ```
    #[must_use]
    pub fn throttle(self, throttle: Arc<RetryThrottle>) -> Self {
        self.with_keys(|keys| keys.budget(throttle))
    }

    /// Bounds the retries and hedges of this layer's calls by `limit`
    /// instead of the config's `retryThrottling`: a
    /// [`RetryBudget`](backoff_runtime::limits::RetryBudget) (for example 10% of
    /// the calls), a [`RetryThrottle`] or your own [`RetryLimit`]. Every
    /// call on the channel feeds it, as it feeds the throttle.
    ///
    /// ```
    /// use backoff_runtime::limits::RetryBudget;
    /// use backoff_grpc::{GrpcRetryLayer, ServiceConfig};
    /// use std::sync::Arc;
    ///
    /// let budget = Arc::new(RetryBudget::new().ratio(0.1));
    /// let layer = GrpcRetryLayer::new(ServiceConfig::default()).budget(budget);
    /// # let _ = layer;
    /// ```
    #[must_use]
    pub fn budget<L: RetryLimit + Send + 'static>(self, limit: Arc<L>) -> Self {
        self.with_keys(|keys| keys.budget(limit))
    }

    /// Asks `limiter` before every attempt of a retried method's call, the
    /// first included: a [`CircuitBreaker`](backoff_runtime::limits::CircuitBreaker),
    /// a [`Cooldown`](backoff_runtime::limits::Cooldown), an
    /// [`AdaptiveRateLimiter`](backoff_runtime::limits::AdaptiveRateLimiter) or
    /// your own [`AdmissionLimit`]. A [`Keyed`](backoff_runtime::limits::Keyed)
    /// one keeps a limiter per method (`/package.Service/Method`). A
    /// refused call ends with `UNAVAILABLE`, whose message names the
    /// limiter and whose `grpc-retry-pushback-ms` says how long it stays
    /// shut, when it knows. Methods without a `retryPolicy` are sent
    /// without asking.
    ///
    /// ```
    /// use backoff_runtime::limits::{CircuitBreaker, Keyed};
    /// use backoff_grpc::{GrpcRetryLayer, ServiceConfig};
    /// use std::sync::Arc;
    ///
    /// let per_method = Arc::new(Keyed::new(|_method| CircuitBreaker::new().consecutive_failures(5)));
    /// let layer = GrpcRetryLayer::new(ServiceConfig::default()).admission(per_method);
    /// # let _ = layer;
    /// ```
    #[must_use]
    pub fn admission<L: AdmissionLimit + Send + 'static>(self, limiter: Arc<L>) -> GrpcRetryLayer<WithAdmission> {
        GrpcRetryLayer {
            config: self.config,
            keys: self.keys.admission(limiter),
            limits: self.limits,
        }
    }

    /// How much of the request bodies may be kept for replay (by default
    /// 1 MiB per call, 16 MiB for all the calls of the services this layer
    /// makes, as grpc-java). Past a cap, a call is sent once.
    ///
    /// ```
    /// use backoff_tower::ReplayLimits;
    /// use backoff_grpc::{GrpcRetryLayer, ServiceConfig};
    ///
    /// let layer = GrpcRetryLayer::new(ServiceConfig::default())
    ///     .replay_limits(ReplayLimits::new().per_call(256 * 1024));
    /// # let _ = layer;
    /// ```
    #[must_use]
    pub fn replay_limits(mut self, limits: ReplayLimits) -> Self {
        self.limits = limits;
        self
    }

    /// The name metrics, tracing events and [`RetryEvent::function`]
    /// report (`"grpc"` when not given).
    ///
    /// ```
    /// use backoff_grpc::{GrpcRetryLayer, ServiceConfig};
    /// let layer = GrpcRetryLayer::new(ServiceConfig::default()).name("inventory");
    /// # let _ = layer;
    /// ```
    #[must_use]
    pub fn name(self, name: &'static str) -> Self {
        self.with_keys(|keys| keys.name(name))
    }

    /// Called before each wait with the retry's event.
    ///
    /// ```
    /// use backoff_grpc::{GrpcRetryLayer, ServiceConfig};
    /// let layer = GrpcRetryLayer::new(ServiceConfig::default()).on_retry(|event| eprintln!("retry in {:?}", event.wait()));
    /// # let _ = layer;
    /// ```
    #[must_use]
    pub fn on_retry(self, hook: impl Fn(&RetryEvent) + Send + Sync + 'static) -> Self {
        self.with_keys(|keys| keys.on_retry(hook))
    }

    /// Called once when a stop rule ends a retried call (`on_give_up`).
    ///
    /// ```
    /// use backoff_grpc::{GrpcRetryLayer, ServiceConfig};
    /// let layer = GrpcRetryLayer::new(ServiceConfig::default()).on_give_up(|give_up| eprintln!("{}", give_up.reason()));
    /// # let _ = layer;
    /// ```
    #[must_use]
    pub fn on_give_up(self, hook: impl Fn(&GiveUp) + Send + Sync + 'static) -> Self {
        self.with_keys(|keys| keys.on_give_up(hook))
    }

    /// Called once when a retried call succeeds (`on_success`).
    ///
    /// ```
    /// use backoff_grpc::{GrpcRetryLayer, ServiceConfig};
    /// let layer = GrpcRetryLayer::new(ServiceConfig::default()).on_success(|success| eprintln!("{} attempts", success.attempts()));
    /// # let _ = layer;
    /// ```
    #[must_use]
    pub fn on_success(self, hook: impl Fn(&Success) + Send + Sync + 'static) -> Self {
        self.with_keys(|keys| keys.on_success(hook))
    }

    /// Each method's rules, as the services of this layer share them.
    pub(super) fn methods(&self) -> Arc<Methods<A>> {
        let by_path = self.config.map_entries(|entry| {
            let retried = entry.retry_policy().map(|retry| {
                let rules = GrpcRules {
                    codes: retry.codes,
                    exhausted_with_retry_info: retry.exhausted_with_retry_info,
                    hedged: false,
                };
                self.keys.for_method(retry.policy, rules, None)
            });
            // A6's hedging: the non-fatal codes are the ones that let the
            // call go on; each hedge after `hedgingDelay`, no backoff.
            let hedged = entry.hedging_policy().map(|hedging| {
                let rules = GrpcRules {
                    codes: hedging.codes,
                    exhausted_with_retry_info: false,
                    hedged: true,
                };
                let delay = Some(hedging.hedging_delay);
                self.keys.for_method(hedging.policy(), rules, delay)
            });
            Method {
                retry: retried.or(hedged),
                timeout: entry.timeout(),
            }
        });
        Arc::new(Methods {
            by_path,
            limits: self.limits.clone(),
            throttle: self.keys.limit().cloned(),
        })
    }
}
