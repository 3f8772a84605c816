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
//! the macro: [`Policy::retry`] and [`Policy::retry_async`].
//!
//! # Features
//!
//! | feature | default | what it adds |
//! |---|---|---|
//! | `macros` | yes | the [`retry`] attribute |
//! | `tokio` | yes | sleeping and timing async retry loops on tokio |
#![forbid(unsafe_code)]
#![warn(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod async_loop;
mod clock;
mod decide;
pub mod hooks;
mod jitter;
mod plain;
mod policy;
mod result;
mod rng;
mod schedule;
mod stop;
mod sync_loop;
pub mod testing;
mod timeout;

pub use crate::policy::{Jitter, Policy, PolicyError};
pub use crate::result::RetryResult;
pub use crate::rng::ThreadRng;
pub use crate::schedule::Schedule;
pub use crate::stop::StopReason;
pub use crate::timeout::Elapsed;

/// The random number generator crate (rand 0.10) whose `Rng` trait
/// [`Policy::wait_for`] and [`Policy::schedule_with_rng`] accept.
pub use rand;

#[cfg(feature = "macros")]
pub use backoff_macros::retry;

/// Not public API: what `#[retry]` expansions call. May change in any release.
#[doc(hidden)]
pub mod __private {
    pub use crate::async_loop::{AsyncLoop, AsyncSleeper, CustomSleeper, Step, TokioSleeper};
    pub use crate::hooks::HookSet;
    pub use crate::policy::{Jitter, Policy};
    pub use crate::result::RetryResult;
    pub use crate::sync_loop::{after_first_attempt, start_sync, thread_sleep};
    pub use crate::timeout::{FromElapsed, TimeoutSupport, timed_out_result, with_timeout};
    pub use core::time::Duration;

    /// Gives the body's closure its `FnMut` type (the return type is checked
    /// once, by `after_first_attempt`).
    #[inline(always)]
    pub fn sync_body<R, F: FnMut() -> R>(body: F) -> F {
        body
    }
}
