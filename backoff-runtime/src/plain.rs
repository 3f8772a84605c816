//! The plain-Rust API: the same loop as `#[retry]`, for code that cannot use
//! the attribute (closures, trait objects, a policy read at run time).

use crate::hooks::{HookSet, Hooks};
use crate::policy::Policy;
use crate::sync_loop::{ThreadSleep, retry_sync, start_sync};

impl Policy {
    /// Calls `op` until it returns `Ok` or this policy says stop, sleeping
    /// between attempts on the current thread (or the test's
    /// [`VirtualClock`](crate::testing::VirtualClock)); returns the last
    /// result. Every error is retried.
    ///
    /// ```
    /// use backoff_runtime::Policy;
    /// use std::time::Duration;
    ///
    /// let policy = Policy::new().initial_backoff(Duration::from_millis(1)).max_backoff(Duration::from_millis(5));
    /// let mut calls = 0;
    /// let result: Result<u32, &str> = policy.retry(|| {
    ///     calls += 1;
    ///     if calls < 3 { Err("busy") } else { Ok(calls) }
    /// });
    /// assert_eq!(result, Ok(3));
    /// ```
    pub fn retry<T, E, F>(&self, op: F) -> Result<T, E>
    where
        F: FnMut() -> Result<T, E>,
    {
        self.retry_with(op, |hooks| hooks)
    }

    /// Like [`retry`](Self::retry), but retries only the errors for which
    /// `retry_if` returns `true`; any other error is returned at once.
    ///
    /// ```
    /// use backoff_runtime::Policy;
    /// use std::time::Duration;
    ///
    /// let policy = Policy::new().initial_backoff(Duration::from_millis(1));
    /// let mut calls = 0;
    /// let result: Result<(), u16> = policy.retry_if(|status| *status >= 500, || {
    ///     calls += 1;
    ///     Err(404)
    /// });
    /// assert_eq!((result, calls), (Err(404), 1));
    /// ```
    pub fn retry_if<T, E, F, P>(&self, retry_if: P, op: F) -> Result<T, E>
    where
        F: FnMut() -> Result<T, E>,
        P: Fn(&E) -> bool,
    {
        self.retry_with(op, |hooks| hooks.retry_if(retry_if))
    }

    /// Like [`retry`](Self::retry), with hooks: after `op`, `hooks` receives an empty
    /// [`HookSet`] for the error type and adds what it needs (`retry_if`,
    /// `retry_after`, `on_retry`, `on_give_up`, `name`): the attribute's keys
    /// as methods.
    ///
    /// ```
    /// use backoff_runtime::{Policy, StopReason};
    /// use std::time::Duration;
    ///
    /// let policy = Policy::new().initial_backoff(Duration::from_millis(1));
    /// let gave_up = std::cell::Cell::new(None);
    /// let result: Result<(), &str> = policy.retry_with(
    ///     || Err("denied"),
    ///     |hooks| hooks.retry_if(|e| *e != "denied").on_give_up(|_, event| gave_up.set(Some(event.reason()))),
    /// );
    /// assert_eq!(result, Err("denied"));
    /// assert_eq!(gave_up.get(), Some(StopReason::Permanent));
    /// ```
    pub fn retry_with<T, E, F, B, H>(&self, mut op: F, hooks: B) -> Result<T, E>
    where
        F: FnMut() -> Result<T, E>,
        B: FnOnce(HookSet<E>) -> H,
        H: Hooks<E>,
    {
        let hooks = hooks(HookSet::new());
        let start = start_sync(self, hooks.observes(), &ThreadSleep);
        match op() {
            Ok(value) => Ok(value),
            Err(error) => retry_sync(self, start, error, &mut op, hooks, ThreadSleep),
        }
    }
}

#[cfg(feature = "tokio")]
mod tokio_api {
    use core::future::Future;

    use crate::async_loop::{AsyncLoop, Step, TokioSleepSlot, TokioSleeper};
    use crate::hooks::{HookSet, Hooks};
    use crate::policy::Policy;

    impl Policy {
        /// Calls `op` and awaits its future until it returns `Ok` or this
        /// policy says stop, sleeping with `tokio::time::sleep` between
        /// attempts (the `tokio` feature); returns the last result. Every
        /// error is retried.
        ///
        /// `op` is an `FnMut() -> impl Future`: each call makes a fresh future,
        /// so the returned future is `Send` whenever `op`'s futures are. An
        /// `async` closure could lend `&mut` state to each attempt, but its
        /// futures are not `Send`; `#[retry]` on an `async fn` has neither
        /// limit.
        ///
        /// ```
        /// use backoff_runtime::Policy;
        /// use std::time::Duration;
        ///
        /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
        /// # async fn main() {
        /// let policy = Policy::new().initial_backoff(Duration::from_millis(10));
        /// let calls = std::sync::atomic::AtomicU32::new(0);
        /// let result: Result<u32, &str> = policy
        ///     .retry_async(|| async {
        ///         let n = calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        ///         if n < 3 { Err("busy") } else { Ok(n) }
        ///     })
        ///     .await;
        /// assert_eq!(result, Ok(3));
        /// # }
        /// ```
        pub async fn retry_async<T, E, F, Fut>(&self, op: F) -> Result<T, E>
        where
            F: FnMut() -> Fut,
            Fut: Future<Output = Result<T, E>>,
        {
            self.retry_async_with(op, |hooks| hooks).await
        }

        /// Like [`retry_async`](Self::retry_async), but retries only the
        /// errors for which `retry_if` returns `true`.
        ///
        /// ```
        /// use backoff_runtime::Policy;
        ///
        /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
        /// # async fn main() {
        /// let result: Result<(), u16> = Policy::new()
        ///     .retry_async_if(|status| *status >= 500, || async { Err(401) })
        ///     .await;
        /// assert_eq!(result, Err(401));
        /// # }
        /// ```
        pub async fn retry_async_if<T, E, F, Fut, P>(&self, retry_if: P, op: F) -> Result<T, E>
        where
            F: FnMut() -> Fut,
            Fut: Future<Output = Result<T, E>>,
            P: Fn(&E) -> bool,
        {
            self.retry_async_with(op, |hooks| hooks.retry_if(retry_if)).await
        }

        /// Like [`retry_async`](Self::retry_async), with hooks (see
        /// [`retry_with`](Self::retry_with)).
        ///
        /// ```
        /// use backoff_runtime::Policy;
        /// use std::time::Duration;
        ///
        /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
        /// # async fn main() {
        /// let result: Result<(), Option<u64>> = Policy::new()
        ///     .max_backoff(Duration::from_secs(10))
        ///     .retry_async_with(|| async { Err(Some(60)) }, |hooks| hooks.retry_after(|hint| hint.map(Duration::from_secs)))
        ///     .await;
        /// assert_eq!(result, Err(Some(60)), "a 60 s hint above the 10 s cap ends the retries");
        /// # }
        /// ```
        pub async fn retry_async_with<T, E, F, Fut, B, H>(&self, mut op: F, hooks: B) -> Result<T, E>
        where
            F: FnMut() -> Fut,
            Fut: Future<Output = Result<T, E>>,
            B: FnOnce(HookSet<E>) -> H,
            H: Hooks<E>,
        {
            let hooks = hooks(HookSet::new());
            let mut retry = AsyncLoop::start::<TokioSleeper>(self, hooks.observes());
            let mut timer = TokioSleepSlot::new();
            loop {
                let wait = match retry.step(self, op().await, |_| &hooks) {
                    Step::Return(result) => return result,
                    Step::Wait(wait) => wait,
                };
                timer.sleep(wait).await;
            }
        }
    }
}
