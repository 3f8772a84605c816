//! Google's truncated exponential backoff as one attribute.
//!
//! ```
//! use backoff_runtime::retry;
//!
//! #[derive(Debug)]
//! struct Busy;
//!
//! #[retry(max_retries = 3, initial_backoff = "1ms", max_backoff = "4ms")]
//! fn flaky(calls: &mut u32) -> Result<u32, Busy> {
//!     *calls += 1;
//!     if *calls < 3 { Err(Busy) } else { Ok(*calls) }
//! }
//!
//! let mut calls = 0;
//! assert_eq!(flaky(&mut calls).unwrap(), 3);
//! ```
//!
//! `#[retry]` rewrites the function into a retry loop at compile time and
//! checks its parameters there: a typo or a bad duration is a compile error
//! on the token. The loop calls this crate for the schedule ([`Policy`]), the
//! jitter and the sleep (`std::thread::sleep` in sync functions,
//! `tokio::time::sleep` in async ones). The same loop is available without
//! the macro: [`Policy::retry`] builds a [`Retry`] whose methods are the
//! attribute's keys.
//!
//! Public API, by job:
//!
//! - the attribute: [`retry`], and [`bounds`] (what it requires, named in
//!   its compile errors);
//! - the schedule: [`Policy`], [`PolicyError`], [`Jitter`], [`HintAboveCap`],
//!   [`Schedule`];
//! - the attribute's grammar at run time (environment variables, flags,
//!   settings): [`parse_duration`], [`format_duration`], [`DurationError`],
//!   `FromStr` for [`Jitter`] and [`HintAboveCap`], [`ParseError`];
//! - the builder: [`Retry`], [`RetryFuture`], and hedging: [`Hedged`],
//!   [`HedgedFuture`];
//! - the limits shared by many calls: the [`limits`] module, what counts
//!   retries (the retry budget, the throttle) and what admits attempts
//!   (the adaptive limiters, the circuit breaker, the cooldown);
//! - the attempt's context: [`Attempt`], [`InvocationId`];
//! - the events: [`RetryEvent`], [`GiveUp`], [`Success`], [`StopReason`];
//! - a server's instruction that overrides the schedule: [`Pushback`]
//!   (the front ends read it from their protocol's answers);
//! - a timed-out attempt: [`Elapsed`];
//! - the clocks' instant, native or web: [`Instant`];
//! - fault injection: the [`chaos`] module (feature `chaos`);
//! - the feature-gated modules below.
//!
//! `__private` is what the attribute's expansion calls. `__front_end` is
//! what `backoff-tower` and `backoff-grpc` call. Neither is public API;
//! both may change in any release.
//!
//! # Features
//!
//! | feature | default | what it adds |
//! |---|---|---|
//! | `macros` | yes | the [`retry`] attribute |
//! | `tokio` | yes | async retry loops inside a tokio runtime sleep and time out on tokio's timer |
//! | `futures-timer` | yes | async retry loops on any other executor (smol, async-std, `futures::executor::block_on`) sleep and time out on futures-timer's thread; in the browser and Node (wasm32-unknown-unknown), on `setTimeout` |
//! | `tracing` | no | a WARN event for each retry and at give-up, an INFO event for a success after retries |
//! | `metrics` | no | [`metrics`]: counters, histograms and gauges through the `metrics` facade |
//! | `http` | no | [`http_errors`]: classification of status codes and I/O errors, and `Retry-After` |
//! | `reqwest` | no | [`reqwest_errors`]: classification of reqwest's errors and a status-carrying error type |
//! | `chaos` | no | [`chaos`]: faults, fake outcomes and latency injected into each attempt, seedable |
//! | `test-util` | no | [`testing`]: a virtual clock for sync retry loops and a seedable generator |
//! | `serde` | no | `Deserialize` and `Serialize` for [`Policy`] and [`Jitter`] with the attribute's keys, durations and rules, and [`settings`] for the limiters |
//!
//! The front ends are crates of their own, each one dependency line:
//! `backoff-tower` (a tower layer for HTTP services, the replay body, the
//! reqwest middleware) and `backoff-grpc` (gRPC's retries in the channel,
//! its service config, and gRPC statuses at the call).
#![forbid(unsafe_code)]
// The functions an annotated function's happy path calls are
// `#[cfg_attr(not(debug_assertions), inline(always))]`: inlined into every
// annotated function where it is optimised, called where it is a debug
// build (forced inlining at opt-level 0 made each function's code bigger
// and a dev rebuild slower; BENCHMARKS.md, "Compile cost").
#![warn(missing_docs, missing_debug_implementations)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

#[doc(hidden)]
#[path = "front_end.rs"]
pub mod __front_end;
mod builder;
#[cfg(feature = "chaos")]
pub mod chaos;
mod classify;
pub mod limits;
mod observe;
mod run;
mod schedule;
#[cfg(feature = "serde")]
pub mod settings;
mod stand_in;
#[cfg(any(test, feature = "test-util"))]
pub mod testing;
mod time;

#[cfg(feature = "http")]
pub use crate::classify::http_errors;
#[cfg(feature = "reqwest")]
pub use crate::classify::reqwest_errors;
#[cfg(feature = "metrics")]
pub use crate::observe::metrics;

pub use crate::builder::future::RetryFuture;
pub use crate::builder::hedge::{Hedged, HedgedFuture};
pub use crate::builder::retry::Retry;
// The builder's keys and modes, reachable so that compile errors name them
// by these paths (`Config<Blocking, ..>`), not by their private module's.
#[doc(hidden)]
pub use crate::builder::config::Config;
#[doc(hidden)]
pub use crate::builder::operation::{Awaited, Blocking};
pub use crate::observe::events::{GiveUp, RetryEvent, Success};
pub use crate::observe::stop::StopReason;
pub use crate::run::attempt::{Attempt, InvocationId};
pub use crate::run::pushback::Pushback;
pub use crate::schedule::backoff::Schedule;
/// ```
/// use backoff_runtime::{DurationError, parse_duration};
///
/// let error = parse_duration("32").unwrap_err();
/// assert_eq!(error, DurationError::MissingUnit("32".to_owned()));
/// assert!(error.to_string().contains("write \"32s\""));
/// ```
pub use crate::schedule::grammar::DurationError;
/// ```
/// use backoff_runtime::{format_duration, parse_duration};
/// use std::time::Duration;
///
/// assert_eq!(format_duration(Duration::from_secs(90)), "1m30s");
/// assert_eq!(format_duration(Duration::from_millis(250)), "250ms");
/// let d = Duration::new(3_723, 4_005);
/// assert_eq!(parse_duration(&format_duration(d)), Ok(d));
/// ```
pub use crate::schedule::grammar::format_duration;
/// ```
/// use backoff_runtime::parse_duration;
/// use std::time::Duration;
///
/// assert_eq!(parse_duration("1m30s"), Ok(Duration::from_secs(90)));
/// assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
/// assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
/// assert!(parse_duration("32").is_err());
/// ```
pub use crate::schedule::grammar::parse_duration;
pub use crate::schedule::policy::{HintAboveCap, Jitter, Policy, PolicyError};
pub use crate::schedule::text::ParseError;
pub use crate::time::Instant;
pub use crate::time::timeout::Elapsed;

#[doc = include_str!("../docs/retry.md")]
#[cfg(feature = "macros")]
pub use backoff_macros::retry;

pub mod bounds;

/// Not public API: what `#[retry]` expansions name. May change in any
/// release. Generated code reaches the public items (the schedule's modes,
/// `bounds`, `limits::Admission`, `Duration`) by their public paths.
#[doc(hidden)]
pub mod __private {
    pub use crate::bounds::{FreshCopy, RetryResult};
    #[cfg(feature = "chaos")]
    pub use crate::chaos::Injector;
    pub use crate::limits::admission::{Admitting, admission_of, admitted_from};
    pub use crate::limits::limit::{Charged, budget_of};
    pub use crate::observe::site::{CallSite, Site};
    pub use crate::run::attempt::AttemptSource;
    pub use crate::run::blocking::{
        FirstAdmitted, Rerun, blocking_attempt, first_success, refused_as_body, refused_first_blocking, rerunning,
        retry_blocking_owned, start_blocking,
    };
    pub use crate::run::driver::{Acts, Loop, Step, Waits};
    pub use crate::run::hooks::Hooks;
    pub use crate::run::nested::{NestedAttempt, enter_attempt};
    pub use crate::run::outcome::{Judged, judged};

    /// The probe, and its answers, which the expansion brings into scope.
    pub mod probe {
        pub use crate::run::probe::{Probe, ProbeBoth, ProbeConventions, ProbeDebug, ProbeNeither};
    }
    pub use crate::run::result::{refused_result, timed_out_result};
    pub use crate::schedule::policy::{Policy, literal_policy};
    pub use crate::time::sleep::{BlockingSleep, DefaultSleep, DefaultTimer, Timer};
    pub use crate::time::timeout::with_timeout;
    // `core`'s items under the short name the deciding block imports: a
    // path of one segment more is a measurable share of the expansion's
    // compile cost (scripts/compile_cost.sh).
    pub use core::option::Option::{None, Some};
    pub use core::result::Result::{Err, Ok};

    /// Never called: the expansion's `if false { return never::<R>(); }`
    /// gives the body's closure or async block the function's return type,
    /// so `?` converts errors as in the plain function.
    #[inline(always)]
    pub fn never<R>() -> R {
        unreachable!("the fake return edge of #[retry] is never taken")
    }
}
