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
//! [`RetryBudget`], the events ([`RetryEvent`], [`GiveUp`], [`StopReason`]),
//! [`Elapsed`], and the feature-gated modules below. `__private` is what the
//! attribute's expansion calls: it is not part of the API and may change in
//! any release.
//!
//! # Features
//!
//! | feature | default | what it adds |
//! |---|---|---|
//! | `macros` | yes | the [`retry`] attribute |
//! | `tokio` | yes | sleeping and timing async retry loops on tokio |
//! | `tracing` | no | a WARN event for each retry and at give-up |
//! | `http` | no | [`http_errors`]: classification of status codes and I/O errors, and `Retry-After` |
//! | `reqwest` | no | [`reqwest_errors`]: classification of reqwest's errors and a status-carrying error type |
//! | `test-util` | no | [`testing`]: a virtual clock for sync retry loops and a seedable generator |
#![forbid(unsafe_code)]
#![warn(missing_docs, missing_debug_implementations)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod async_loop;
mod budget;
mod clock;
mod decide;
mod events;
mod hooks;
#[cfg(feature = "http")]
pub mod http_errors;
mod jitter;
mod plain;
mod policy;
#[cfg(all(test, feature = "macros", feature = "tokio"))]
mod props;
#[cfg(feature = "reqwest")]
pub mod reqwest_errors;
mod result;
mod rng;
mod schedule;
mod stop;
mod sync_loop;
#[cfg(any(test, feature = "test-util"))]
pub mod testing;
mod throttle;
mod timeout;
mod trace;

pub use crate::budget::{BudgetError, RetryBudget};
pub use crate::events::{GiveUp, RetryEvent};
pub use crate::plain::{Retry, RetryFuture};
pub use crate::policy::{Jitter, Policy, PolicyError};
pub use crate::schedule::Schedule;
pub use crate::stop::StopReason;
pub use crate::throttle::{RetryThrottle, ThrottleError};
pub use crate::timeout::Elapsed;

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
/// | `max_retries` | `5` | integer literal `>= 1` | retries after the first call |
/// | `max_backoff` | `"32s"` | duration string | cap on every wait, jitter included |
/// | `initial_backoff` | `"1s"` | duration string | the wait before the first retry, before jitter; tokio rounds waits up to whole milliseconds (see "Clocks and timers") |
/// | `multiplier` | `2` | integer or float literal, finite, `>= 1` | growth per retry |
/// | `jitter` | additive, one `initial_backoff` | `additive`, `full`, `equal`, `decorrelated`, `none`, or a duration string (additive amount) | see [`Jitter`] |
/// | `max_elapsed` | none | duration string | total budget from the first call (on the clock described in "Clocks and timers"); a wait that would end past it is not started, nor is an attempt with no time left under `timeout` |
/// | `retry_if` | retry every error | a path to `fn(&E) -> bool`, or a closure (parameter type optional) | which errors to retry |
/// | `retry_after` | none | path or closure, `Fn(&E) -> Option<Duration>` | the server's hint: the wait when `<= max_backoff`; a larger hint ends the retries |
/// | `on_retry` | none | path or closure, `Fn(&E, &`[`RetryEvent`]`)` | called before each wait |
/// | `on_give_up` | none | path or closure, `Fn(&E, &`[`GiveUp`]`)` | called once when the final error is returned, never on success |
/// | `sleep` | tokio / `std::thread::sleep` | path or closure: `Fn(Duration) -> impl Future` (async; output ignored), `Fn(Duration)` (sync) | another runtime's timer, or a finer one (see "Clocks and timers") |
/// | `budget` | none | any expression giving a [`RetryBudget`] or a reference to one (`DB_BUDGET`, `&self.budget`, `self.budget_for(host)`), evaluated once per call | a retry budget: shared by every call and function that names the same one |
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
///
/// # Stopping
///
/// After each failed attempt, the first of these ends the call with that
/// error (and is the [`StopReason`] reported): `retry_if` says it is
/// permanent; `max_retries` retries were made; the server's hint exceeds
/// `max_backoff`; the next wait would end past `max_elapsed`; the budget
/// refuses the retry. A panic in the body is not caught. The budget is
/// charged for a retry just before `on_retry` announces it, so a panic in
/// `on_retry` propagates with that retry already counted.
///
/// Hooks may be paths or closures and may read the function's arguments and
/// `self`. The start time is read before the first attempt only when
/// `max_elapsed`, `on_retry`, `on_give_up` or `budget` needs it. Dropping the future of an async function stops it: no attempt
/// starts after the drop.
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
/// Retry at one layer: an annotated function that calls another annotated
/// function retries both, so with `max_retries = 5` each the inner operation
/// runs up to 36 times per outer call.
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
/// closure, `timeout` on a sync function or without `From<Elapsed>`, a return
/// type that is not a `Result`, a `const fn`, an `extern` function, a
/// function without a body, an item that is not a function, an `async fn`
/// without the `tokio` feature, `#[track_caller]`, `mut self`, a `mut`
/// argument that is not `Copy`, and a result that certainly borrows from
/// `&mut self` or from the one `&mut` argument (see "Limits").
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

/// Not public API: what `#[retry]` expansions and the plain builder's
/// bounds use. May change in any release.
#[doc(hidden)]
pub mod __private {
    use crate::budget::RetryBudget;

    pub use crate::hooks::{
        DebugFmt, ErrorType, HookSet, Hooks, OnGiveUpHook, OnRetryHook, RetryAfterHook, RetryIfHook, Set, Slot, Unset,
    };
    pub use crate::plain::CustomTimer;
    #[cfg(feature = "tokio")]
    pub use crate::plain::TokioTimer;
    pub use crate::plain::{
        AsyncSleepKind, Awaited, Blocking, CustomSleep, DefaultSleep, Operation, SyncSleepKind, Timer,
    };
    pub use crate::sync_loop::{CustomSleep as CustomSyncSleep, SyncSleeper};

    pub use crate::async_loop::{
        AsyncLoop, AsyncSleeper, CustomSleeper, Step, TokioSleepSlot, TokioSleeper, custom_sleep,
    };
    pub use crate::hooks::{DebugProbe, ProbeDebug, ProbeOpaque};
    pub use crate::policy::{Jitter, Policy};
    pub use crate::result::RetryResult;
    pub use crate::sync_loop::{ThreadSleep, after_first_attempt, custom_sync_sleep, start_sync};
    pub use crate::timeout::{FromElapsed, TimeoutSupport, timed_out_result, with_timeout};
    pub use core::time::Duration;

    /// What `budget = ...` accepts: a [`RetryBudget`] or anything that
    /// borrows one (`&RetryBudget`, `Arc<RetryBudget>`, ...).
    #[diagnostic::on_unimplemented(
        message = "`budget = ...` needs a `RetryBudget` or a reference to one, and `{Self}` is neither",
        label = "not a retry budget",
        note = "name a `static RetryBudget`, or give `&self.budget`, `Arc<RetryBudget>`, or a function returning `&RetryBudget`"
    )]
    pub trait AsBudget {
        /// The budget.
        fn as_budget(&self) -> &RetryBudget;
    }

    impl AsBudget for RetryBudget {
        #[inline(always)]
        fn as_budget(&self) -> &RetryBudget {
            self
        }
    }

    impl<T: AsBudget + ?Sized> AsBudget for &T {
        #[inline(always)]
        fn as_budget(&self) -> &RetryBudget {
            (**self).as_budget()
        }
    }

    impl<T: AsBudget + ?Sized> AsBudget for std::sync::Arc<T> {
        #[inline(always)]
        fn as_budget(&self) -> &RetryBudget {
            (**self).as_budget()
        }
    }

    impl<T: AsBudget + ?Sized> AsBudget for Box<T> {
        #[inline(always)]
        fn as_budget(&self) -> &RetryBudget {
            (**self).as_budget()
        }
    }

    /// The budget of `budget = EXPR`, borrowed for the call.
    #[inline(always)]
    pub fn budget_of<B: AsBudget + ?Sized>(budget: &B) -> &RetryBudget {
        budget.as_budget()
    }

    /// What a `mut` argument must be: each attempt starts from a fresh copy
    /// of the caller's value.
    #[diagnostic::on_unimplemented(
        message = "a `mut` argument of a `#[retry]` function must be `Copy`, and `{Self}` is not: each attempt starts from a fresh copy of what the caller passed",
        label = "each attempt would otherwise see what the failed one changed",
        note = "remove `mut` here and, if the body changes the value, copy or clone it inside the body: `let mut value = value.clone();`"
    )]
    pub trait FreshCopy: Copy {}

    impl<T: Copy> FreshCopy for T {}

    /// A fresh copy of a `mut` argument for one attempt.
    #[inline(always)]
    pub fn fresh_copy<T: FreshCopy>(value: &T) -> T {
        *value
    }

    /// Gives the body's closure its `FnMut` type (the return type is checked
    /// once, by `after_first_attempt`).
    #[inline(always)]
    pub fn sync_body<R, F: FnMut() -> R>(body: F) -> F {
        body
    }
}
