//! `.chaos(&injector)`: a fault injector around each attempt.
//!
//! Each attempt of the operation runs under a fault
//! injector, innermost (feature `chaos`).

// Each method's return type names the wrapped operation (one line each).
#![allow(clippy::type_complexity)]

use core::future::Future;

use crate::chaos::{Injected, Injector};

use super::config::Config;
use super::operation::{Awaited, Blocking};
use super::retry::Retry;

impl<'a, Op, T, E, O, H, S, A> Retry<'a, Op, Config<Blocking, T, E, O, H, S, A>>
where
    Op: FnMut() -> Result<T, E>,
{
    /// Runs each attempt under `injector` (`chaos`): innermost, so the
    /// retries, the budget and the admission limiter see what it injects.
    /// Its latency sleeps on the default blocking sleep (the virtual clock
    /// in tests), not on [`sleep`](Retry::sleep).
    ///
    /// ```
    /// use backoff_runtime::chaos::{Injector, Rate};
    /// use backoff_runtime::Policy;
    /// use std::time::Duration;
    ///
    /// static FIRST_FAILS: Injector<&str, &str> = Injector::new().fault(Rate::new(0.5), || "injected").seed(1);
    /// let result = Policy::new()
    ///     .initial_backoff(Duration::from_millis(1))
    ///     .max_retries(20)
    ///     .retry(|| Ok("real"))
    ///     .chaos(&FIRST_FAILS)
    ///     .call();
    /// assert_eq!(result, Ok("real"), "injected faults are retried like any other");
    /// ```
    pub fn chaos(
        self,
        injector: &'a Injector<T, E>,
    ) -> Retry<'a, impl FnMut() -> Result<T, E>, Config<Blocking, T, E, O, H, S, A>> {
        self.map_op(|mut op| move || injector.blocking(&mut op))
    }
}

impl<'a, Op, Fut, T, E, O, H, S, A> Retry<'a, Op, Config<Awaited, T, E, O, H, S, A>>
where
    Op: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    /// Runs each attempt under `injector` (`chaos`): innermost, so the
    /// retries, the budget, the admission limiter, the `timeout` and
    /// hedging see what it injects. Its latency waits on the default timer
    /// (tokio's, a paused clock included), not on [`sleep`](Retry::sleep).
    /// Give it before [`hedge_after`](Retry::hedge_after).
    ///
    /// ```
    /// use backoff_runtime::chaos::{Injector, Rate};
    /// use backoff_runtime::Policy;
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// static SLOW: Injector<u8, ()> = Injector::new().latency(Rate::new(1.0), Duration::from_secs(1));
    /// let started = tokio::time::Instant::now();
    /// let result = Policy::new().retry(|| async { Ok(1) }).chaos(&SLOW).await;
    /// assert_eq!((result, started.elapsed()), (Ok(1), Duration::from_secs(1)));
    /// # }
    /// ```
    pub fn chaos(
        self,
        injector: &'a Injector<T, E>,
    ) -> Retry<'a, impl FnMut() -> Injected<Fut, T, E>, Config<Awaited, T, E, O, H, S, A>> {
        self.map_op(|mut op| move || injector.attempt(op()))
    }
}
