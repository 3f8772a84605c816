//! gRPC's retries on `backoff-runtime`, two ways.
//!
//! - In the channel, as gRPC's own clients do them (gRFC A6):
//!   [`GrpcRetryLayer`] under any tonic client, configured by the service
//!   config below.
//! - At the call, with `#[retry]` or the builder around a client's method:
//!   [`status`] says which statuses to retry (Google's AIP-194) and reads
//!   `google.rpc.RetryInfo` as the hint.
//!
//! gRPC's service config: the JSON that gRPC's channels in
//! Go, Java, C++, Python and .NET read (`methodConfig` with `retryPolicy`,
//! `hedgingPolicy` and `timeout`, and `retryThrottling`), validated as their clients
//! validate it, each request's entry found by its path, the retry policy
//! on the crate's [`Policy`](backoff_runtime::Policy) (A6's schedule with
//! [`Jitter::Grpc`](backoff_runtime::Jitter::Grpc)) and the throttle on
//! [`RetryThrottle`](backoff_runtime::limits::RetryThrottle). The same config can be built
//! in code ([`ServiceConfig::builder`]).
//!
//! ```
//! use backoff_grpc::ServiceConfig;
//! use tonic::Code;
//!
//! // Pasted from a Go or Java deployment.
//! let config = ServiceConfig::from_json(r#"{
//!   "methodConfig": [{
//!     "name": [{"service": "helloworld.Greeter"}],
//!     "retryPolicy": {
//!       "maxAttempts": 4,
//!       "initialBackoff": "0.1s",
//!       "maxBackoff": "1s",
//!       "backoffMultiplier": 2,
//!       "retryableStatusCodes": ["UNAVAILABLE"]
//!     }
//!   }],
//!   "retryThrottling": {"maxTokens": 10, "tokenRatio": 0.1}
//! }"#).unwrap();
//!
//! let retry = config.retry_policy("/helloworld.Greeter/SayHello").unwrap();
//! assert_eq!(retry.policy().get_max_retries(), 3);
//! assert!(retry.retries(Code::Unavailable));
//! let throttle = config.retry_throttling().unwrap().throttle();
//! assert!(throttle.allows_retry());
//! ```
//!
//! What differs from gRPC's clients, on purpose:
//!
//! - A `backoffMultiplier` below 1 is rejected: gRPC allows a shrinking
//!   backoff (any value above 0); this crate's schedule only grows.
//! - A `tokenRatio` above 1000 is rejected ([`RetryThrottle`](backoff_runtime::limits::RetryThrottle)'s
//!   limit: more than a full bucket per success); so is one that rounds to
//!   0.000.
//! - Every wait stays at most `maxBackoff` ([`Jitter::Grpc`](backoff_runtime::Jitter::Grpc));
//!   gRPC lets the jittered wait pass it by up to 20%.
//! - A committed `UNAVAILABLE` (in the trailers, after the headers) takes
//!   a throttle token, as A6's text and grpcio do; grpc-js does not.
//! - A pushback of 0 ms is retried at once; grpcio hangs.
//! - Every field not named above is ignored.
//!
//! `hedgingPolicy` is read as A6 writes it ([`HedgingPolicy`]): see
//! [`GrpcRetryLayer`] for its rules, and where gRPC's clients differ.
//!
//! A committed call is reported at its status, in its trailers: the
//! throttle, the events and A96's metrics. A deadline that stops the
//! retries ends the call at the deadline with `DEADLINE_EXCEEDED`, as
//! gRPC's clients do; its message names the last attempt's status.

#![forbid(unsafe_code)]
#![warn(missing_docs, missing_debug_implementations)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod builder;
mod call;
mod codes;
mod config;
mod ending;
mod error;
mod json;
mod layer;
pub mod metrics;
mod rules;
mod service;
pub mod status;
mod wire;

pub use self::builder::{HedgingPolicySpec, MethodConfigSpec, RetryPolicySpec, ServiceConfigBuilder};
pub use self::config::{HedgingPolicy, MethodConfig, RetryPolicy, RetryThrottling, ServiceConfig};
pub use self::error::ConfigError;
pub use self::layer::GrpcRetryLayer;
pub use self::service::{GrpcResponseFuture, GrpcRetryService};
