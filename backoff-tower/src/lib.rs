//! A tower layer that retries a service's requests.
//!
//! The same driver, schedule, stop rules, limits, events, tracing and metrics
//! as `#[retry]` and [`Policy::retry`](backoff_runtime::Policy::retry), in
//! front of any `Service<http::Request<B>>` whose request body can be cloned
//! (hyper-util's client, a tonic or axum stack with a buffered body, reqwest's
//! `Service` users), or, with [`RetryLayer::streaming`], whose body streams.
//!
//! ```
//! use backoff_runtime::Policy;
//! use backoff_tower::RetryLayer;
//! use std::sync::Arc;
//! use std::sync::atomic::{AtomicU32, Ordering};
//! use std::time::Duration;
//! use tower::{Layer, ServiceExt, service_fn};
//!
//! const POLICY: Policy = Policy::new().max_retries(3).initial_backoff(Duration::from_millis(1));
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! // A backend that answers 503 twice, then 200.
//! let calls = Arc::new(AtomicU32::new(0));
//! let counter = Arc::clone(&calls);
//! let backend = service_fn(move |_request: http::Request<String>| {
//!     let status = if counter.fetch_add(1, Ordering::SeqCst) < 2 { 503 } else { 200 };
//!     async move { http::Response::builder().status(status).body(String::new()) }
//! });
//!
//! let client = RetryLayer::new(POLICY).layer(backend);
//! let request = http::Request::get("http://backend/").body(String::new()).unwrap();
//! let response = client.oneshot(request).await.unwrap();
//! assert_eq!((response.status().as_u16(), calls.load(Ordering::SeqCst)), (200, 3));
//! # }
//! ```
//!
//! What is retried, by default ([`HttpRetry`]):
//!
//! - **Which requests.** Only those that may be sent twice: the idempotent
//!   methods (`GET`, `HEAD`, `PUT`, `DELETE`, `OPTIONS`, `TRACE`), and any
//!   other method (`POST`, `PATCH`) only when the request carries an
//!   `Idempotency-Key` header. [`RetryLayer::idempotency_key`] adds one to
//!   those that lack it (the call's [`InvocationId`](backoff_runtime::InvocationId),
//!   the same on every attempt, so the server can tell a retry from a new
//!   request); [`RetryLayer::retry_any_method`] retries them without one. A
//!   request that may not be retried gets its one attempt.
//! - **Which answers.** Responses with a status Google Cloud retries (408,
//!   429 and every 5xx), waiting the response's `Retry-After` when it has
//!   one (capped by `max_backoff` like every hint: a longer one ends the
//!   call with the last response, unless the policy says
//!   [`HintAboveCap::WaitCap`](backoff_runtime::HintAboveCap::WaitCap)); and every error of the
//!   inner service (a connection refused or reset). When the retries end,
//!   the caller gets the last response or error, as it came.
//! - **The body.** Each attempt sends a clone of the request: its method,
//!   URI, version, headers, extensions and body (`B: Clone`: `String`,
//!   `Vec<u8>`, `Bytes`, `http_body_util::Full<Bytes>` or `Empty`). A
//!   streaming body (any `http_body::Body`) is retried by
//!   [`RetryLayer::streaming`]'s layer: each attempt sends a
//!   [`ReplayBody`], which forwards each frame at once and keeps a
//!   reference-counted clone of it for the next attempt, up to the caps of
//!   [`ReplayLimits`] (linkerd's lazy tee, [`Replay`]); past the cap the
//!   attempt in flight finishes and is the last.
//!
//! gRPC: `backoff-grpc`'s `GrpcRetryLayer` goes under any tonic
//! client and retries as gRPC's own clients do, by the service config
//! (per-method policies, Trailers-Only statuses, pushback, throttling, the
//! deadline across attempts, streaming request bodies replayed up to a
//! cap); it never retries a call whose response headers arrived.
//!
//! Other requests (a protocol of your own) are classified by a
//! [`Classify`] of your own, given to [`RetryLayer::classify`]. With the
//! `reqwest-middleware` feature the same layer is a reqwest middleware:
//! `reqwest_middleware::ClientBuilder::new(client).with(RetryLayer::new(POLICY))`.
//!
//! The first attempt is the call of the service `poll_ready` made ready;
//! each resend runs a clone of it, made ready first (tower's rule for
//! services used more than once), so an inner service with real readiness
//! (`ConcurrencyLimit`, `Buffer`, a connection pool) admits every attempt.
//! With the `tracing` feature, each resent attempt runs in a span named
//! `resend` that carries OpenTelemetry's `http.request.resend_count` (1 for
//! the first resend), beside the retry's WARN event.
//! [`RetryLayer::admission`] paces every attempt, the first included, with
//! an [`AdaptiveRateLimiter`](backoff_runtime::limits::AdaptiveRateLimiter), an
//! [`AdaptiveThrottle`](backoff_runtime::limits::AdaptiveThrottle) or a pacing limit of your
//! own: a held attempt waits in the call's future before the inner service
//! is called, a refused one ends the call with `E::from(`[`Refused`](backoff_runtime::limits::Refused)`)`,
//! reported as a give-up.
//! A call's future is a named type, [`ResponseFuture`] (no allocation per
//! call, no clock read and no span unless a key needs one): it is `Send`
//! whenever the inner service, its future, the request and the response
//! are, so the layered service can sit behind tower's `Buffer` and be
//! called from spawned tasks.

//!
//! With the `chaos` feature, [`ChaosLayer`] goes under the retry layer:
//! each attempt passes through a fault injector, so the retries, the budget
//! and the admission limiter see what it injects.

#![forbid(unsafe_code)]
#![warn(missing_docs, missing_debug_implementations)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

#[cfg(feature = "chaos")]
mod chaos;
mod classify;
mod future;
mod held;
mod http;
mod kept;
mod layer;
#[cfg(feature = "reqwest-middleware")]
mod middleware;
mod replay;
mod resend_span;
mod service;
mod streaming;

#[cfg(feature = "chaos")]
pub use self::chaos::{ChaosFuture, ChaosLayer, ChaosService};
pub use self::classify::{Classified, Classify};
pub use self::future::ResponseFuture;
pub use self::held::{AdmissionHold, AdmissionSlot};
pub use self::http::HttpRetry;
pub use self::layer::{
    NoAdmission, NoTimeout, PerAttemptAdmission, PerAttemptTimeout, RetryLayer, WithAdmission, WithTimeout,
};
pub use self::replay::{Replay, ReplayBody, ReplayError, ReplayLimits};
pub use self::service::{BoxError, BoxErrors, BoxErrorsFuture, BoxesErrors, RetryService};
pub use self::streaming::{StreamingResponseFuture, StreamingRetryLayer, StreamingRetryService};

// The server's instruction that [`Classify::pushback`] reads: the
// runtime's, whose driver follows it.
pub use backoff_runtime::Pushback;

/// What `backoff-grpc` builds on: not public API, hidden from the docs, and
/// free to change in any release (`backoff-grpc` pins this crate's exact
/// version).
#[doc(hidden)]
#[path = "grpc.rs"]
pub mod __grpc;
