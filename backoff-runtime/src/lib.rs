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
//! Public API: the [`retry`] attribute, [`Policy`], [`Schedule`],
//! [`RetryBudget`], [`RetryThrottle`], the [`RetryLimit`] they implement, the builder ([`Retry`], [`RetryFuture`]), the attempt's context ([`Attempt`], [`InvocationId`]),
//! the events ([`RetryEvent`], [`GiveUp`], [`StopReason`]),
//! [`Elapsed`], [`bounds`] (what the attribute requires, named in its compile errors), and the feature-gated modules below. `__private` is what the
//! attribute's expansion calls: it is not part of the API and may change in
//! any release.
//!
//! # Features
//!
//! | feature | default | what it adds |
//! |---|---|---|
//! | `macros` | yes | the [`retry`] attribute |
//! | `tokio` | yes | sleeping and timing async retry loops on tokio |
//! | `tracing` | no | a WARN event for each retry and at give-up, an INFO event for a success after retries |
//! | `metrics` | no | [`metrics`]: counters, histograms and gauges through the `metrics` facade |
//! | `http` | no | [`http_errors`]: classification of status codes and I/O errors, and `Retry-After` |
//! | `reqwest` | no | [`reqwest_errors`]: classification of reqwest's errors and a status-carrying error type |
//! | `test-util` | no | [`testing`]: a virtual clock for sync retry loops and a seedable generator |
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
mod classify;
mod limits;
mod observe;
mod run;
mod schedule;
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
pub use crate::builder::retry::Retry;
// The builder's keys and modes, reachable so that compile errors name them
// by these paths (`Config<Blocking, ..>`), not by their private module's.
#[doc(hidden)]
pub use crate::builder::retry::{Awaited, Blocking, Config};
pub use crate::limits::adaptive_rate::AdaptiveRateLimiter;
pub use crate::limits::adaptive_throttle::AdaptiveThrottle;
pub use crate::limits::admission::Refused;
pub use crate::limits::admission_limit::{Admission, AdmissionLimit, AdmissionRequest};
pub use crate::limits::budget::{BudgetError, RetryBudget};
pub use crate::limits::limit::RetryLimit;
pub use crate::limits::throttle::{RetryThrottle, ThrottleError};
pub use crate::observe::events::{GiveUp, RetryEvent, Success};
pub use crate::observe::stop::StopReason;
pub use crate::run::attempt::{Attempt, InvocationId};
pub use crate::schedule::backoff::Schedule;
pub use crate::schedule::policy::{HintAboveCap, Jitter, Policy, PolicyError};
pub use crate::time::timeout::Elapsed;

/// Retries the function with truncated exponential backoff.
///
/// ```
/// use backoff_runtime::retry;
/// # #[derive(Debug)] struct ApiError;
/// # impl ApiError { fn is_transient(&self) -> bool { true } }
///
/// #[retry(max_backoff = "32s", max_retries = 5, retry_if = |e| e.is_transient())]
/// async fn fetch(url: &str) -> Result<String, ApiError> {
///     # let _ = url;
///     Ok("body".to_owned())
/// }
/// ```
///
/// The function is rewritten at compile time into a retry loop around its own
/// body; its signature does not change. Callers get the first `Ok`, or the
/// last error once a stop rule holds. Sync functions sleep with
/// `std::thread::sleep`; async functions with `tokio::time::sleep` (feature
/// `tokio`, on by default).
///
/// # Keys
///
/// | key | default | accepted forms | meaning |
/// |---|---|---|---|
/// | `max_retries` | `5` | integer literal `>= 1`, or `unlimited` with `max_elapsed` | retries after the first call; `unlimited`: bounded by `max_elapsed` alone ("poll for at most 2 minutes": `max_retries = unlimited, max_elapsed = "2m"`) |
/// | `max_backoff` | `"32s"` | duration string | cap on every wait, jitter included |
/// | `initial_backoff` | `"1s"` | duration string | the wait before the first retry, before jitter; tokio rounds waits up to whole milliseconds (see "Clocks and timers") |
/// | `multiplier` | `2` | integer or float literal, finite, `>= 1` | growth per retry |
/// | `jitter` | additive, one `initial_backoff` | `additive`, `full`, `equal`, `decorrelated`, `grpc`, `none`, or a duration string (additive amount) | see [`Jitter`] |
/// | `max_elapsed` | none | duration string | total budget from the first call (on the clock described in "Clocks and timers"); a wait that would end past it is not started, nor is an attempt with no time left under `timeout` |
/// | `retry_if` | retry every error | a path to `fn(&E) -> bool`, or a closure (parameter type optional) | which errors to retry |
/// | `retry_after` | none | path or closure, `Fn(&E) -> Option<Duration>` | the server's hint: the wait when `<= max_backoff`; a larger hint ends the retries unless `hint_above_cap = cap` |
/// | `hint_above_cap` | `stop` | `stop` or `cap`; needs `retry_after` or `retry_after_ok` | a server hint longer than `max_backoff`: `stop` ends the call ([`StopReason::HintAboveCap`]: the server will not be ready sooner, and the caller will not wait that long), `cap` waits `max_backoff` and retries (see [`HintAboveCap`]) |
/// | `retry_if_ok` | no value is retried | path or closure, `Fn(&T) -> bool` on the `Ok` type | which values are still pending: wait and run the body again (polling, see "Polling"); when a stop rule holds the last value is returned as it is |
/// | `retry_after_ok` | none | path or closure, `Fn(&T) -> Option<Duration>`; needs `retry_if_ok` | the server's hint for the wait after a pending value (a `202` with `Retry-After`), as `retry_after` is for errors |
/// | `pending_error` | the last value is returned | path or closure, `Fn(T) -> E`, taking the value; needs `retry_if_ok` | the error a value still pending becomes when a stop rule ends the call: "still running after 10 polls" instead of the last `Running` (see "Polling") |
/// | `on_retry` | none | path or closure, `Fn(&E, &`[`RetryEvent`]`)`; with `retry_if_ok`, `Fn(&Result<T, E>, &RetryEvent)` | called before each wait |
/// | `on_give_up` | none | path or closure, `Fn(&E, &`[`GiveUp`]`)`; with `retry_if_ok`, `Fn(&Result<T, E>, &GiveUp)` | called once when a stop rule ends the call or the `admission` limiter refuses an attempt, never on success |
/// | `on_success` | none | path or closure, `Fn(&`[`Success`]`)` | called once when the call succeeds, with the attempts and the time it took; never when it gives up |
/// | `before_retry` | none | `async fn`: an async closure (`async \|e, event\| { ... }`) or a path to an `async fn(&E, &RetryEvent)`, awaited; sync `fn`: path or closure, `Fn(&E, &RetryEvent)`; with `retry_if_ok` the first parameter is `&Result<T, E>` | an action after `on_retry` and before the wait: refresh a token, reconnect (see "Actions before a retry") |
/// | `sleep` | tokio / `std::thread::sleep` | path or closure: `Fn(Duration) -> impl Future` (async; output ignored), `Fn(Duration)` (sync) | another runtime's timer, or a finer one (see "Clocks and timers") |
/// | `context` | none | a name, such as `attempt` | binds an [`Attempt`] of that name in the body: the attempt number, the retries left, the time elapsed and left, the call's [`InvocationId`] (see "The attempt inside the body") |
/// | `nested` | `stop` | `stop` or `retry` | a failure that a retried function this attempt called already gave up on: `stop` ends the call with [`StopReason::RetriedBelow`] (one layer retries), `retry` retries it anyway (see "Nested retries") |
/// | `name` | the function's path (`my_app::users::fetch`; a method: the type of `self`'s path, `my_app::Client::get`) | string literal, not empty | the name that metrics (`function` label), tracing events and [`RetryEvent::function`] report |
/// | `budget` | none | any expression giving a [`RetryBudget`], a [`RetryThrottle`] or another [`RetryLimit`] (your own), or a reference, `Arc` or `Box` of one (`DB_BUDGET`, `&self.budget`, `self.budget_for(host)`), evaluated once per call; a `static`, never a `const` (see "Shared limits") | a retry limit shared by every call and function that names the same one: a budget keeps a floor of retries per second, a throttle stops retrying in a full outage; a refusal ends the call with [`StopReason::Budget`] whatever the limit's kind; a limiter that paces attempts is a compile error here (it belongs in `admission`) |
/// | `admission` | none | any expression giving an [`AdaptiveRateLimiter`], an [`AdaptiveThrottle`] or another [`AdmissionLimit`], or a reference, `Arc` or `Box` of one, evaluated once per call; a `static`, never a `const`; needs `E: From<`[`Refused`]`>` | a limiter asked before every attempt, the first included: the attempt goes, waits (on the loop's timer, at most the limiter's maximum wait) or is refused, and a refused attempt, first or retry, returns `E::from(Refused)` at once without running the body, reported as a give-up with [`StopReason::Refused`] (see "Pacing every attempt") |
/// | `throttled_if` | every error `retry_if` retries | path or closure, `Fn(&E) -> bool`; needs `admission` | which errors tell the `admission` limiter to slow down (a 429, `SlowDown`); every other answer, a success included, is an accept |
/// | `policy` | none | any expression giving a [`Policy`], evaluated once per call | the whole schedule instead of the schedule keys (both is an error) |
/// | `timeout` | none | duration string; `async fn` only | per-attempt limit; a timed-out attempt is `E::from(`[`Elapsed`]`)`; never runs past `max_elapsed` |
/// | `crate` | `"::backoff_runtime"` | string with a path | where this crate is, when re-exported under another name |
///
/// Durations are string literals with a unit (`ns`, `us` or `µs`, `ms`, `s`,
/// `m`, `h`), combinations (`"1m30s"`, `"1m 30s"`) and decimals (`"1.5s"`).
///
/// Wait `n` (0 for the first retry) is built on
/// `base(n) = min(initial_backoff * multiplier^n, max_backoff)`; with the
/// default additive jitter it is `min(base(n) + U[0, initial_backoff],
/// max_backoff)`: Google's `min(2^n s + random_ms, maximum_backoff)`.
/// gRPC's jitter (`jitter = grpc`, [`Jitter::Grpc`]) is `min(base(n) *
/// U[0.8, 1.2], max_backoff)`: gRPC's own clients let the jittered wait
/// exceed their maximum by up to 20%; here, as in every mode, no wait
/// exceeds `max_backoff`:
///
/// ```
/// use backoff_runtime::{RetryEvent, retry};
/// use std::cell::RefCell;
/// use std::time::Duration;
///
/// // The waits are recorded, not slept.
/// #[retry(max_retries = 3, jitter = grpc, sleep = |_| {}, on_retry = |_, event: &RetryEvent| waits.borrow_mut().push(event.wait()))]
/// fn connect(waits: &RefCell<Vec<Duration>>) -> Result<(), ()> {
///     let _ = waits;
///     Err(())
/// }
///
/// let waits = RefCell::new(Vec::new());
/// assert!(connect(&waits).is_err());
/// for (n, wait) in waits.into_inner().into_iter().enumerate() {
///     let base = Duration::from_secs(1 << n);
///     assert!(wait >= base * 4 / 5 && wait <= base * 6 / 5);
/// }
/// ```
///
/// # Stopping
///
/// After each failed attempt, the first of these ends the call with that
/// error (and is the [`StopReason`] reported): `retry_if` says it is
/// permanent; a retried function the attempt called gave up (see "Nested
/// retries"); `max_retries` retries were made; the server's hint exceeds
/// `max_backoff`; the next wait would end past `max_elapsed`; the budget
/// (or throttle) refuses the retry. A throttle takes its token for every
/// retryable failure, the last attempt's included, as gRPC does. A panic in
/// the body is not caught. The budget is
/// charged for a retry just before `on_retry` announces it, so a panic in
/// `on_retry` propagates with that retry already counted. Before each
/// attempt, the first included, the limiter of `admission` may refuse it
/// ([`StopReason::Refused`]; see "Pacing every attempt").
///
/// Hooks may be paths or closures and may read the function's arguments and
/// `self`. The start time is read before the first attempt only when
/// `max_elapsed`, `on_retry`, `on_give_up`, `before_retry`, `context` or
/// `budget` needs it. Dropping the future of an async function stops it: no attempt
/// starts after the drop.
///
/// # Shared limits
///
/// `budget` takes a limit that counts retries (a [`RetryLimit`]).
/// `admission` takes a limiter that admits attempts (an [`AdmissionLimit`]).
/// A limit in the wrong key is a compile error on its name.
///
/// A limit works only when every call shares it. Name a `static`, a field
/// (`&self.budget`) or an `Arc`. A `const` is a new limit at each use, so it
/// would limit nothing. The attribute rejects a `const` named in `budget`
/// or `admission`: rustc reports "cannot take address of a temporary" on
/// its name. Make it a `static`. The builder's `.budget(&X)` and
/// `.admission(&X)` cannot tell: give them a `static` too.
///
/// # Pacing every attempt
///
/// `budget` limits retries; `admission` paces every attempt, the first
/// included, for a backend that answers "slow down" (HTTP 429, S3's
/// `SlowDown`) to a fleet whose first attempts alone overload it. Before
/// each attempt the limiter lets it go, makes it wait (slept on the loop's
/// own timer, tokio's paused clock in tests, holding no lock) or refuses it;
/// after each it hears whether the backend throttled it (`throttled_if`).
/// [`AdaptiveRateLimiter`] is AWS's adaptive retry mode (a token bucket
/// whose rate CUBIC sets), [`AdaptiveThrottle`] Google SRE's client-side
/// throttling (refuse with probability `(requests − 2·accepts) /
/// (requests + 1)` over two minutes). Both keys may be given: a
/// [`RetryBudget`] for the retries, a limiter for every attempt.
///
/// A refused attempt has no error of its own, so the function's error type
/// needs `From<`[`Refused`]`>` (checked on the `admission` key: a missing
/// impl is a compile error there, in those words); the call returns
/// `E::from(Refused)` at once, whether the refused attempt was the first or
/// a retry, without running the body. The call ends there as it does when a
/// stop rule holds, and is seen the same way: a give-up with
/// [`StopReason::Refused`], told to `on_give_up` (with the `E::from(Refused)`
/// the caller gets, and [`GiveUp::attempts`] the attempts made: 0 when the
/// first was refused), the tracing event "giving up" and, with `metrics`,
/// `backoff_calls_total{outcome="gave_up", reason="refused"}`, so every call
/// is counted once by how it ended and a dashboard of give-ups shows the
/// calls the client shed. A retry that was refused was announced first
/// (`on_retry`, its wait slept); the refusal comes after the wait. A
/// retried function that calls this one does not retry a refusal (as for
/// any give-up below: see "Nested retries"). Existing code without
/// `admission` needs no such impl.
///
/// ```
/// use backoff_runtime::{AdaptiveRateLimiter, Refused, RetryBudget, retry};
/// use std::time::Duration;
///
/// static S3_RETRIES: RetryBudget = RetryBudget::new();
/// static S3_RATE: AdaptiveRateLimiter = AdaptiveRateLimiter::new().max_wait(Duration::from_secs(5));
///
/// #[derive(Debug)]
/// enum S3Error { SlowDown, Unavailable, Overloaded }
/// impl From<Refused> for S3Error {
///     fn from(_: Refused) -> Self { S3Error::Overloaded }
/// }
///
/// #[retry(budget = S3_RETRIES, admission = S3_RATE, throttled_if = |e| matches!(e, S3Error::SlowDown), max_backoff = "20s")]
/// async fn put(key: &str) -> Result<(), S3Error> {
///     # let _ = (key, S3Error::Unavailable);
///     Ok(())
/// }
/// ```
///
/// # The attempt inside the body
///
/// `context = attempt` (any name) makes an [`Attempt`] of that name visible
/// in the body, fresh for each attempt: [`number`](Attempt::number) (1 for
/// the first call), [`retries_left`](Attempt::retries_left),
/// [`elapsed`](Attempt::elapsed), and with `max_elapsed`
/// [`time_left`](Attempt::time_left) and [`deadline`](Attempt::deadline)
/// (give the request its own timeout: deadline propagation), and the call's
/// [`invocation_id`](Attempt::invocation_id), random per call (from a
/// cryptographically secure generator keyed by the OS, not the jitter's) and
/// the same for its attempts: an idempotency key, a request header.
///
/// ```
/// use backoff_runtime::retry;
/// use std::time::Duration;
///
/// #[retry(max_retries = 3, initial_backoff = "1ms", max_elapsed = "10s", context = attempt)]
/// fn send(log: &mut Vec<String>) -> Result<(), String> {
///     let timeout = attempt.time_left().unwrap_or(Duration::from_secs(30));
///     log.push(format!("attempt {} of call {} (timeout {timeout:?})", attempt.number(), attempt.invocation_id()));
///     if attempt.is_first() { Err("busy".into()) } else { Ok(()) }
/// }
///
/// let mut log = Vec::new();
/// send(&mut log).unwrap();
/// assert!(log[1].starts_with("attempt 2 of call "));
/// ```
///
/// A function without `context` pays nothing; one with it reads the clock
/// once per call, and computes the id only when the body reads it.
///
/// # Polling
///
/// `retry_if_ok` makes an `Ok` value a reason to wait and run the body again:
/// polling a long-running operation until it is done. The schedule,
/// `max_retries`, `max_elapsed` and `retry_after_ok` (the value's hint)
/// apply as they do to errors; `retry_if` still decides about errors met
/// while polling. A pending value is not a failure: it asks nothing of
/// `budget =` (a [`RetryThrottle`] takes no token for it, a [`RetryBudget`]
/// withdraws nothing), since a limit protects a failing dependency and a
/// healthy job that is still running is not one; errors met while polling
/// ask the limit as usual. Bound polling by `max_retries` or `max_elapsed`. When a stop rule holds on a pending value, the
/// call returns that value as it is: the caller sees it is still pending
/// (ask `retry_if_ok`'s question again), and `on_give_up` and the tracing
/// event say why ([`StopReason`]). `pending_error = |job| ...` turns that
/// last value into the call's error instead (it takes the value), for
/// callers that should not have to ask again:
///
/// ```
/// use backoff_runtime::retry;
///
/// #[retry(
///     max_retries = 2,
///     initial_backoff = "1ms",
///     retry_if_ok = |state| *state == "running",
///     pending_error = |state| format!("still {state} after 3 polls"),
/// )]
/// fn poll() -> Result<&'static str, String> {
///     Ok("running")
/// }
///
/// assert_eq!(poll(), Err("still running after 3 polls".to_owned()));
/// ```
/// With `retry_if_ok`, `on_retry`,
/// `on_give_up` and `before_retry` see the attempt's whole `Result`.
///
/// ```
/// use backoff_runtime::retry;
///
/// #[derive(Debug, PartialEq)]
/// enum Job { Running, Done(u32) }
///
/// #[retry(max_retries = 10, initial_backoff = "1ms", retry_if_ok = |job| *job == Job::Running)]
/// fn poll(polls: &mut u32) -> Result<Job, String> {
///     *polls += 1;
///     Ok(if *polls < 3 { Job::Running } else { Job::Done(42) })
/// }
///
/// let mut polls = 0;
/// assert_eq!(poll(&mut polls), Ok(Job::Done(42)));
/// assert_eq!(polls, 3);
/// ```
///
/// # Actions before a retry
///
/// `before_retry` runs after `on_retry` and before the wait. In an `async fn`
/// it is awaited: an async closure or an `async fn(&E, &RetryEvent)`. It is
/// written in the loop and evaluated once per retry, so it may borrow what
/// the body borrows, `&mut self` included (capture by reference: an `async
/// move` closure cannot move the same value on every retry). Its time counts
/// toward `max_elapsed`: after it the deadline is checked again, and a wait
/// that would now end past it is not started (the call gives up with
/// [`StopReason::Deadline`], after `on_retry` announced the retry), so no
/// attempt starts after the deadline. Dropping the call's future drops it; a
/// panic in it propagates. In a sync `fn` it is a plain closure returning
/// `()`, run by a loop that stays in the function, so it too may use what
/// the body uses, `&mut self` included
/// (`before_retry = |_e, _ev| self.reconnect()`).
///
/// ```
/// use backoff_runtime::{RetryEvent, retry};
///
/// #[derive(Debug)]
/// enum ApiError { Expired, Busy }
///
/// struct Client { token: &'static str, refreshed: u32 }
///
/// impl Client {
///     async fn refresh(&mut self) {
///         self.token = "fresh";
///         self.refreshed += 1;
///     }
///
///     #[retry(
///         initial_backoff = "1ms",
///         before_retry = async |e: &ApiError, _: &RetryEvent| {
///             if matches!(e, ApiError::Expired) { self.refresh().await }
///         },
///     )]
///     async fn get(&mut self) -> Result<&'static str, ApiError> {
///         if self.token == "fresh" { Ok("data") } else { Err(ApiError::Expired) }
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let mut client = Client { token: "expired", refreshed: 0 };
/// assert_eq!(client.get().await.unwrap(), "data");
/// assert_eq!(client.refreshed, 1);
/// # let _ = ApiError::Busy;
/// # }
/// ```
///
/// # Clocks and timers
///
/// An async function measures `max_elapsed` on tokio's clock (feature
/// `tokio`): the current runtime's, paused or not, or `std::time::Instant`
/// outside a runtime. That holds with `sleep = ...` as well, so
/// `sleep = tokio::time::sleep` under `#[tokio::test(start_paused = true)]`
/// keeps the deadline on the clock it advances. Without the `tokio` feature,
/// and in sync functions, elapsed time is `std::time::Instant`, or
/// [`testing::VirtualClock`] for sync functions that sleep the default way.
/// A custom sleep that advances no clock never reaches a deadline.
///
/// tokio's timer has a resolution of 1 ms: a wait below a millisecond, or
/// between two, sleeps until the next tick (a 0.381 ms wait measured
/// 1.45 ms). For finer waits pass a finer timer
/// (`sleep = async_io::Timer::after`) or use a base of a few milliseconds.
///
/// A sync function sleeps with `std::thread::sleep`: called from async code,
/// it blocks the runtime's thread for every wait. In async code annotate an
/// `async fn`, or call the sync one through `tokio::task::spawn_blocking`.
///
/// # The body runs more than once
///
/// Every attempt starts from the arguments as the caller passed them: a
/// `mut` argument is copied afresh for each attempt (it must be `Copy`;
/// `mut self` is rejected). But what the body changes outside itself before
/// it fails (a `&mut` reader it advanced, a buffer it filled, a flag it set,
/// a request it half-sent) is what the next attempt sees. Retry idempotent
/// operations, or ones that reset their state at the start of each attempt;
/// for HTTP, retry `GET`, `HEAD`, `PUT`, `DELETE` and `OPTIONS`, and send a
/// `POST` with an idempotency key (the same on every attempt) or a
/// precondition, or do not retry it.
///
/// Wrong: the failed attempt consumed input, and the retry reads past it.
///
/// ```
/// # use backoff_runtime::retry;
/// use std::io::{self, Cursor, Read};
///
/// #[retry(max_retries = 1, initial_backoff = "1ms")]
/// fn read_pair(reader: &mut Cursor<Vec<u8>>) -> io::Result<[u8; 2]> {
///     let mut pair = [0; 2];
///     reader.read_exact(&mut pair)?;
///     if pair[0] != b'<' { return Err(io::ErrorKind::InvalidData.into()); }
///     Ok(pair)
/// }
///
/// // The first attempt reads "ab" and fails; the retry reads "<c": accepted.
/// assert_eq!(read_pair(&mut Cursor::new(b"ab<c".to_vec())).unwrap(), *b"<c");
/// ```
///
/// Right: each attempt starts from the same place.
///
/// ```
/// # use backoff_runtime::retry;
/// use std::io::{self, Cursor, Read, Seek, SeekFrom};
///
/// #[retry(max_retries = 1, initial_backoff = "1ms")]
/// fn read_pair(reader: &mut Cursor<Vec<u8>>) -> io::Result<[u8; 2]> {
///     reader.seek(SeekFrom::Start(0))?;
///     let mut pair = [0; 2];
///     reader.read_exact(&mut pair)?;
///     if pair[0] != b'<' { return Err(io::ErrorKind::InvalidData.into()); }
///     Ok(pair)
/// }
///
/// assert!(read_pair(&mut Cursor::new(b"ab<c".to_vec())).is_err());
/// ```
///
/// # Nested retries
///
/// Retry at one layer. When an annotated function gives up (for any reason
/// but `Permanent`) inside an attempt of another annotated function, the
/// outer one does not retry that failure: it stops with
/// [`StopReason::RetriedBelow`]. The call chain is the thread for sync code
/// and the task's polls for async code (each poll of an attempt is
/// bracketed, so the task may move between worker threads, other tasks
/// polled in between do not disturb it).
///
/// The rule, the same in sync and async code: after a failed attempt, the
/// loop asks whether **the last retried call that ended inside that attempt
/// gave up**. A give-up (any reason but `Permanent`) says yes, a retried
/// call that succeeds says no, and each attempt starts with no. So:
///
/// | the attempt | the outer loop |
/// |---|---|
/// | `inner()?` where `inner` gave up | stops: `RetriedBelow` |
/// | a retried fallback succeeds after the give-up, then the attempt fails for its own reason | retries |
/// | a retried middle layer recovers (`Ok(inner().unwrap_or(0))`), then the attempt fails for its own reason | retries |
/// | plain code recovers from the give-up (`inner().unwrap_or(0)`), then the attempt fails for its own reason | stops: the loop cannot see plain recovery |
/// | a destructor (a drop guard) calls a retried function that gives up | stops: it was the last retried call to end |
/// | `join!` of an optional retried branch that gives up and a step that fails | stops, for the same reason |
/// | a retried call in a spawned task or thread gives up | retries: another task or thread is a chain of its own |
/// | the plain builder ([`Policy::retry`]) below or above `#[retry]` | the same rule: it is a retried call |
///
/// One difference between the two forms: an `async fn` reads the flag in
/// the poll that ends the attempt, so a give-up followed by an `.await` that
/// is not ready yet (a slow cleanup, a log write) before the attempt
/// returns is not seen, and the outer function retries that failure, where
/// a sync function stops. Keeping the flag across polls would cost every
/// annotated future 8 bytes.
///
/// Where a "stops" above is not what you want, write `nested = retry` on
/// the outer function: it
/// retries such failures anyway, and three layers of `max_retries = 3`
/// reach the bottom up to 64 times. `tests/behaviour/nested.rs` runs each row in both
/// forms.
///
/// ```
/// use backoff_runtime::retry;
/// use std::cell::Cell;
///
/// #[retry(max_retries = 3, initial_backoff = "1ms")]
/// fn query(calls: &Cell<u32>) -> Result<(), &'static str> {
///     calls.set(calls.get() + 1);
///     Err("database down")
/// }
///
/// #[retry(max_retries = 3, initial_backoff = "1ms")]
/// fn handler(calls: &Cell<u32>) -> Result<(), &'static str> {
///     query(calls)
/// }
///
/// let calls = Cell::new(0);
/// assert!(handler(&calls).is_err());
/// assert_eq!(calls.get(), 4, "the handler did not retry what the query already retried");
/// ```
///
/// # What the body may do
///
/// `?` (with `From` conversions) and `return` end the attempt, not the
/// function. Closures and async blocks in the body keep their own `?` and
/// `return`. `&self`, `&mut self`, `self`, generics, lifetimes, `impl Trait`
/// (arguments and the `Ok` type) and `Result` aliases all work, and the body
/// gets the coercions of the plain function (`Ok(&self.name)` into
/// `Result<&str, E>`, `Ok(Box::new(x))` into `Result<Box<dyn Trait>, E>`).
/// An async function's future is `Send` whenever its body is.
///
/// # Compile errors
///
/// Every mistake is reported at compile time, on the token, all at once:
/// an unknown key (with "did you mean"), a duplicate key, a value of the wrong
/// kind (`max_retries = "5"`, `max_backoff = 32`), a duration without a unit
/// or with an unknown one, a zero or unrepresentable duration,
/// `max_retries = 0`, a `multiplier` below 1 or not finite, `initial_backoff`
/// above `max_backoff`, a jitter amount above `max_backoff` or of `"0s"`, a
/// `max_elapsed` shorter than the shortest first wait the written values
/// allow (never when only defaults decide it, with `jitter = full`, or with
/// `retry_after`, whose hint may be 0), an unknown jitter mode, a
/// `crate` that is not a path, a `retry_if` that is neither a path nor a
/// closure, `timeout` on a sync function or without `From<Elapsed>`,
/// `admission` without `From<Refused>`, `throttled_if` without `admission`, a return
/// type that is not a `Result`, a `context` that is not a plain name,
/// `retry_after_ok` without `retry_if_ok`, an async `before_retry` on a sync
/// function (and one returning a value there), a `const fn`, an `extern` function, a
/// function without a body, an item that is not a function, an `async fn`
/// without the `tokio` feature, `#[track_caller]`, `mut self`, a `mut`
/// argument that is not `Copy`, and a result that certainly borrows from
/// `&mut self` or from the one `&mut` argument (see "Limits").
///
/// A type that does not fit (a return type that is not a `Result`, an error
/// type without `From<Elapsed>` under `timeout`, a hook or a `sleep` of the
/// wrong shape, a missing `tokio` feature) is reported in the words of the
/// public [`bounds`] item it misses, on the token you wrote: no message
/// names the expansion's internals (`tests/ui.rs` checks every snapshot).
///
/// # Limits
///
/// The body runs once per attempt, so it cannot consume an owned argument or
/// `self`:
///
/// ```compile_fail
/// # use backoff_runtime::retry;
/// # fn send(_: Vec<u8>) -> Result<(), String> { Ok(()) }
/// #[retry]
/// fn upload(payload: Vec<u8>) -> Result<(), String> {
///     send(payload) // error: cannot move out of `payload`
/// }
/// ```
///
/// Borrow it instead, or clone inside the body:
///
/// ```
/// # use backoff_runtime::retry;
/// # fn send(_: Vec<u8>) -> Result<(), String> { Ok(()) }
/// #[retry]
/// fn upload(payload: Vec<u8>) -> Result<(), String> {
///     send(payload.clone())
/// }
/// ```
///
/// Likewise a `&mut W` argument passed by value to a generic `W: Write` must
/// be reborrowed (`&mut *w`), and a `&mut self` method cannot return a
/// borrow of `self` (each attempt reborrows it): where the signature makes
/// that certain (the elided lifetime, or a lifetime only that input names)
/// it is a compile error on the return type; a result of `'static` data
/// needs `&'static` written out.
///
/// Elapsed time is kept in nanoseconds since a process-wide anchor and
/// saturates after 73 years of process uptime. In a sync `&mut self` method, a `retry_if` closure
/// cannot also read `self` (the body holds it mutably); use a path to a
/// function of the error.
#[cfg(feature = "macros")]
pub use backoff_macros::retry;

/// What `#[retry]` requires of the function it rewrites and of its keys'
/// values, one item per requirement: names compile errors use, not
/// interfaces to implement. The expansion checks each where the key or type
/// is written, so an error names the requirement in these words (never the
/// loop's internals):
///
/// - [`RetryResult`](bounds::RetryResult): the function returns a `Result`;
/// - [`FromElapsed`](bounds::FromElapsed): `timeout = ...` needs
///   `E: From<Elapsed>`;
/// - [`FromRefused`](bounds::FromRefused): `admission = ...` needs
///   `E: From<Refused>`;
/// - [`FreshCopy`](bounds::FreshCopy): a `mut` argument is `Copy`;
/// - [`each_attempt_runs_the_body_again`](bounds::each_attempt_runs_the_body_again):
///   a sync body is an `FnMut` closure, so it may not move out what it
///   captures (an argument taken by value, `self`);
/// - [`sync_before_retry`](bounds::sync_before_retry),
///   [`async_before_retry`](bounds::async_before_retry) and
///   [`SyncBeforeRetry`](bounds::SyncBeforeRetry): what `before_retry` is;
/// - [`sync_sleep`](bounds::sync_sleep), [`async_sleep`](bounds::async_sleep),
///   [`SyncSleep`](bounds::SyncSleep) and [`AsyncSleep`](bounds::AsyncSleep):
///   what `sleep = ...` is;
/// - [`DefaultAsyncSleep`](bounds::DefaultAsyncSleep): an async loop without
///   `sleep = ...` needs the `tokio` feature.
///
/// The hooks need no item here: each is lent to the loop as a `&dyn Fn` of
/// its signature (`&dyn Fn(&E) -> bool` for `retry_if`), so a hook of the
/// wrong type is reported as that cast, on the user's token.
///
/// ```
/// use backoff_runtime::bounds::RetryResult;
///
/// fn returns_a_result<R: RetryResult>() {}
/// returns_a_result::<std::io::Result<u8>>();
/// ```
pub mod bounds {
    pub use crate::limits::admission::FromRefused;
    pub use crate::run::result::RetryResult;
    use crate::time::sleep::{CustomSleep, CustomTimer};
    pub use crate::time::timeout::FromElapsed;
    use core::time::Duration;

    /// The body of a sync `#[retry]` function as its attempts run it: one
    /// `FnMut` closure, called again for every attempt (the return type is
    /// checked once, by [`RetryResult`] on the return type).
    ///
    /// rustc's E0507 pointing here ("cannot move out of `payload`, a
    /// captured variable in an `FnMut` closure") means the body moves out
    /// something the next attempt needs: an argument taken by value passed on
    /// by value (`send(payload)`), a `match` that moves it, `self` consumed.
    /// The first attempt would leave nothing for the second. Borrow it
    /// (`send(&payload)`, `payload.as_slice()`), or clone it where it is
    /// moved (`send(payload.clone())`) so every attempt starts from what the
    /// caller passed. The attribute does not clone it for you: it cannot see
    /// whether the body moves or only borrows (a method taking `self`, a
    /// macro), and a clone per attempt would need `Clone` of every argument.
    /// In an `async fn` the same mistake reads "use of moved value: `payload`
    /// ... value moved here, in previous iteration of loop", the loop being
    /// the `#[retry]` attribute.
    ///
    /// ```
    /// use backoff_runtime::bounds::each_attempt_runs_the_body_again;
    ///
    /// let payload = vec![1_u8, 2, 3];
    /// let mut attempt = each_attempt_runs_the_body_again(|| payload.len());
    /// assert_eq!((attempt(), attempt()), (3, 3));
    /// ```
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn each_attempt_runs_the_body_again<R, F: FnMut() -> R>(so_borrow_or_clone_what_it_moves: F) -> F {
        so_borrow_or_clone_what_it_moves
    }

    /// What a `mut` argument of a `#[retry]` function must be: `Copy`, since
    /// each attempt starts from a fresh copy of the caller's value.
    ///
    /// ```
    /// use backoff_runtime::bounds::FreshCopy;
    ///
    /// let cursor = 3_usize;
    /// assert_eq!(cursor.fresh_copy(), 3);
    /// ```
    #[diagnostic::on_unimplemented(
        message = "a `mut` argument of a `#[retry]` function must be `Copy`, and `{Self}` is not: each attempt starts from a fresh copy of what the caller passed",
        label = "each attempt would otherwise see what the failed one changed",
        note = "remove `mut` here and, if the body changes the value, copy or clone it inside the body: `let mut value = value.clone();`"
    )]
    pub trait FreshCopy: Sized {
        /// A fresh copy for one attempt.
        fn fresh_copy(&self) -> Self;
    }

    impl<T: Copy> FreshCopy for T {
        #[cfg_attr(not(debug_assertions), inline(always))]
        fn fresh_copy(&self) -> Self {
            *self
        }
    }

    /// What the `before_retry` of an `async fn` must be: an async action on
    /// what failed and the retry's event (`async |error, event| { ... }`,
    /// or a path to an `async fn(&E, &RetryEvent)`), awaited before the
    /// wait. The expansion hands the action through this function, so a
    /// plain closure is reported here (rustc: "`()` is not a future"). It
    /// only types the action (a closure's parameter types are inferred from
    /// `_failed`); the loop calls it in place, since calling it inside a
    /// generic function would leave higher-ranked lifetimes in the caller's
    /// future that `tokio::spawn` rejects.
    ///
    /// ```
    /// use backoff_runtime::RetryEvent;
    /// use backoff_runtime::bounds::async_before_retry;
    ///
    /// let error = String::from("token expired");
    /// let refresh = async_before_retry(&error, async |error: &String, _: &RetryEvent| {
    ///     let _ = error;
    /// });
    /// # let _ = refresh;
    /// ```
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn async_before_retry<D, F>(_failed: &D, action: F) -> F
    where
        F: AsyncFnOnce(&D, &crate::RetryEvent),
    {
        action
    }

    /// What the `before_retry` of a sync function must be: an action on
    /// what failed and the retry's event (`|error, event| { ... }`, or a
    /// path to a `fn(&E, &RetryEvent)`), run before the wait. The expansion
    /// hands the action through this function, so a closure's parameter
    /// types are inferred from `_failed` and an action of the wrong type is
    /// reported against this public item; the loop calls it in place (it
    /// may borrow `&mut self`).
    ///
    /// ```
    /// use backoff_runtime::RetryEvent;
    /// use backoff_runtime::bounds::sync_before_retry;
    ///
    /// let error = String::from("token expired");
    /// let refresh = sync_before_retry(&error, |error: &String, _: &RetryEvent| {
    ///     let _ = error;
    /// });
    /// # let _ = refresh;
    /// ```
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn sync_before_retry<D, F, R>(_failed: &D, action: F) -> F
    where
        F: FnOnce(&D, &crate::RetryEvent) -> R,
    {
        action
    }

    /// What the `before_retry` action of a sync function returns: `()`. A
    /// future would never be awaited, a value never used.
    ///
    /// ```
    /// use backoff_runtime::bounds::SyncBeforeRetry;
    ///
    /// let reconnect = || println!("reconnecting");
    /// SyncBeforeRetry::returned(reconnect());
    /// ```
    #[diagnostic::on_unimplemented(
        message = "`before_retry` of a sync function must return `()`, but it returns `{Self}`",
        label = "nothing would await or use this value",
        note = "an async action needs an `async fn`; in a sync function, run the action to completion inside the closure"
    )]
    pub trait SyncBeforeRetry {
        /// Takes what the action returned.
        fn returned(self);
    }

    impl SyncBeforeRetry for () {
        #[cfg_attr(not(debug_assertions), inline(always))]
        fn returned(self) {}
    }

    /// What the `sleep = ...` of a sync function returns: `()`, once it has
    /// waited (a `Fn(Duration)`, such as `std::thread::sleep`). A name
    /// compile errors use (see [`sync_sleep`]), not an interface to
    /// implement.
    ///
    /// ```
    /// use backoff_runtime::bounds::SyncSleep;
    ///
    /// fn blocks<R: SyncSleep>(_: fn(std::time::Duration) -> R) {}
    /// blocks(std::thread::sleep);
    /// ```
    #[diagnostic::on_unimplemented(
        message = "`sleep = ...` on a sync function must block and return `()`, but it returns `{Self}`",
        label = "a sync function's sleep must wait before it returns",
        note = "pass a blocking sleep such as `std::thread::sleep`; an async sleep (returning a future) belongs on an `async fn`"
    )]
    pub trait SyncSleep {}

    impl SyncSleep for () {}

    /// What the `sleep = ...` of an `async fn` returns: a future to await
    /// (its output is ignored), such as `tokio::time::sleep`'s or
    /// `async_io::Timer::after`'s. A name compile errors use (see
    /// [`async_sleep`]), not an interface to implement.
    ///
    /// ```
    /// use backoff_runtime::bounds::AsyncSleep;
    ///
    /// fn awaits<F: AsyncSleep>(_: F) {}
    /// awaits(std::future::ready(()));
    /// ```
    #[diagnostic::on_unimplemented(
        message = "`sleep = ...` on an `async fn` must return a future to await, but it returns `{Self}`",
        label = "this sleep does not return a future",
        note = "pass your runtime's async sleep, such as `async_io::Timer::after`; a blocking sleep belongs on a sync fn"
    )]
    pub trait AsyncSleep: core::future::Future {}

    impl<F: core::future::Future> AsyncSleep for F {}

    /// The `sleep = ...` of a sync function, as the loop uses it: what the
    /// expansion hands it through, so a sleep of the wrong type is reported
    /// against this function's bounds (`Fn(Duration)` returning `()`), on
    /// the user's token.
    ///
    /// ```
    /// let _sleep = backoff_runtime::bounds::sync_sleep(std::thread::sleep);
    /// ```
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn sync_sleep<F, R>(sleep: F) -> CustomSleep<F>
    where
        F: Fn(Duration) -> R,
        R: SyncSleep,
    {
        crate::time::sleep::custom_sleep(sleep)
    }

    /// The `sleep = ...` of an `async fn`, as the loop uses it: what the
    /// expansion hands it through, so a sleep of the wrong type is reported
    /// against this function's bounds (`Fn(Duration)` returning a future),
    /// on the user's token.
    ///
    /// ```
    /// # #[cfg(feature = "tokio")]
    /// let _timer = backoff_runtime::bounds::async_sleep(tokio::time::sleep);
    /// ```
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn async_sleep<F, Fut>(sleep: F) -> CustomTimer<F, Fut>
    where
        F: Fn(Duration) -> Fut,
        Fut: AsyncSleep,
    {
        crate::time::sleep::custom_timer(sleep)
    }

    pub use crate::time::sleep::DefaultAsyncSleep;
}

/// Not public API: what `#[retry]` expansions name. May change in any
/// release.
#[doc(hidden)]
pub mod __private {
    pub use crate::bounds::{DefaultAsyncSleep, FreshCopy, RetryResult, each_attempt_runs_the_body_again};
    pub use crate::limits::admission::{Admitting, admission_of, admitted};
    pub use crate::limits::limit::budget_of;
    pub use crate::observe::conventions::SemanticConventions;
    pub use crate::observe::site::CallSite;
    pub use crate::observe::site::Site;
    pub use crate::run::attempt::AttemptSource;
    pub use crate::run::driver::{
        Acts, Loop, Rerun, Step, Waits, blocking_attempt, first_success, rerunning, retry_blocking_owned,
        start_blocking, timer_clock,
    };
    pub use crate::run::hooks::{Hooks, Judged, Probe, judged, method_site, probe, static_site};
    pub use crate::run::nested::{NestedAttempt, enter_attempt};
    pub use crate::run::result::{refused_result, timed_out_result};
    pub use crate::schedule::policy::{HintAboveCap, Jitter, Policy};
    pub use crate::time::sleep::{BlockingSleep, CustomSleep, CustomTimer, DefaultSleep, Timer, TokioTimer};
    pub use crate::time::timeout::{TimeoutSupport, with_timeout};
    pub use core::option::Option::{None, Some};
    pub use core::result::Result::{Err, Ok};
    pub use core::time::Duration;

    /// Never called: the expansion's `if false { return never::<R>(); }`
    /// gives the body's closure or async block the function's return type,
    /// so `?` converts errors as in the plain function.
    #[inline(always)]
    pub fn never<R>() -> R {
        unreachable!("the fake return edge of #[retry] is never taken")
    }
}
