//! The plain-Rust API, the attribute's twin.
//!
//! `policy.retry(op)` builds a [`Retry`] whose methods are the attribute's
//! keys; `.call()` runs a sync operation, `.await` an async one. The same
//! driver, stop rules and events as `#[retry]`.

// Each method's return type names the key it adds (one line each).
#![allow(clippy::type_complexity)]

use core::marker::PhantomData;
use core::time::Duration;

use crate::bounds::{AsyncSleep, SyncSleep};
use crate::builder::owned::{
    Admits, Budgeted, OnGiveUp, OnRetry, OnSuccess, PendingError, RetryAfter, RetryAfterOk, RetryIf, RetryIfOk,
    SlowDownIf,
};
use crate::limits::admission_limit::AdmissionLimit;
use crate::limits::limit::RetryLimit;
use crate::observe::events::{GiveUp, RetryEvent, Success};
use crate::run::attempt::AttemptSource;
use crate::schedule::policy::Policy;
use crate::time::sleep::{CustomSleep, CustomTimer};
use crate::time::timeout::Elapsed;

use super::action::Action;
use super::config::{Config, Fresh};
use super::operation::{AttemptOperation, Awaited, Blocking, Operation};

impl<'a, Op, K, T, E> Retry<'a, Op, Fresh<K, T, E>> {
    /// A call of `op` under `policy` with no key given yet: what
    /// [`Policy::retry`] and [`Policy::retry_with_attempt`] start from.
    fn fresh(policy: &'a Policy, op: Op) -> Self {
        Retry {
            policy,
            op,
            budget: None,
            admission: None,
            config: Config::new(),
        }
    }
}

impl Policy {
    /// Retries `op` on this policy: the attribute's twin. Add the
    /// attribute's keys as methods, then run a sync operation with
    /// [`.call()`](Retry::call), or `.await` an async one.
    ///
    /// The operation runs once per attempt, so it is `FnMut`: what it changes
    /// before it fails is what the next attempt sees.
    ///
    /// ```
    /// use backoff_runtime::Policy;
    /// use std::time::Duration;
    ///
    /// const POLICY: Policy = Policy::new().initial_backoff(Duration::from_millis(1));
    /// let mut calls = 0;
    /// let result = POLICY
    ///     .retry(|| {
    ///         calls += 1;
    ///         if calls < 3 { Err(503) } else { Ok(calls) }
    ///     })
    ///     .retry_if(|status| *status >= 500)
    ///     .call();
    /// assert_eq!(result, Ok(3));
    /// ```
    ///
    /// An async operation is a closure returning a future: each call makes
    /// a fresh future, so the retry's future is `Send` whenever those are.
    /// With the default features it runs on any executor. It sleeps on
    /// tokio's timer inside a tokio runtime, and on futures-timer
    /// elsewhere (smol, `futures::executor`). [`sleep`](Retry::sleep)
    /// gives it another timer.
    ///
    /// The builder is `IntoFuture`, not a `Future`: `.await` takes it as it
    /// is. A function that takes a `Future` (`smol::block_on`,
    /// `futures::executor::block_on`, `tokio::spawn`) takes
    /// `.into_future()`:
    /// `smol::block_on(POLICY.retry(|| async { .. }).into_future())`.
    ///
    /// ```
    /// use backoff_runtime::Policy;
    /// use std::sync::atomic::{AtomicU32, Ordering};
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let calls = AtomicU32::new(0);
    /// let result = Policy::new()
    ///     .retry(|| async {
    ///         let n = calls.fetch_add(1, Ordering::Relaxed) + 1;
    ///         if n < 3 { Err("busy") } else { Ok(n) }
    ///     })
    ///     .await;
    /// assert_eq!(result, Ok(3));
    /// # }
    /// ```
    pub fn retry<Op, K>(&self, op: Op) -> Retry<'_, Op, Fresh<K, Op::Ok, Op::Error>>
    where
        Op: Operation<K>,
    {
        Retry::fresh(self, op)
    }

    /// [`retry`](Policy::retry) for an operation that takes the [`Attempt`](crate::Attempt)
    /// it runs as (the attribute's `context = attempt`): its number, the
    /// retries left, the time left before `max_elapsed` and the call's
    /// invocation id. The call's start is read when the first attempt runs.
    ///
    /// ```
    /// use backoff_runtime::{Attempt, Policy};
    /// use std::time::Duration;
    ///
    /// let result = Policy::new()
    ///     .initial_backoff(Duration::from_millis(1))
    ///     .retry_with_attempt(|attempt: Attempt| if attempt.number() < 3 { Err("busy") } else { Ok(attempt.number()) })
    ///     .call();
    /// assert_eq!(result, Ok(3));
    /// ```
    pub fn retry_with_attempt<Op, K>(
        &self,
        mut op: Op,
    ) -> Retry<'_, impl FnMut() -> Op::Output, Fresh<K, Op::Ok, Op::Error>>
    where
        Op: AttemptOperation<K>,
    {
        let policy = self;
        let mut attempts: Option<AttemptSource> = None;
        let op = move || {
            let source = attempts.get_or_insert_with(|| AttemptSource::new(policy, None, Op::CLOCK));
            op.run(source.next_attempt())
        };
        Retry::fresh(self, op)
    }
}

/// A retried operation being configured; built by [`Policy::retry`]. Run it
/// with [`call`](Retry::call) (sync) or `.await` (async). It is
/// `IntoFuture`: where a `Future` is required (an executor's `block_on`,
/// `spawn`), pass `.into_future()`.
///
/// `C` records the keys given so far (the hooks, the sleep, the action):
/// an opaque type parameter, never written in user code.
#[must_use = "a Retry does nothing until `.call()` or `.await`"]
pub struct Retry<'a, Op, C> {
    pub(crate) policy: &'a Policy,
    pub(crate) op: Op,
    pub(crate) budget: Option<&'a dyn RetryLimit>,
    /// The limit of `admission`, asked before every attempt.
    pub(crate) admission: Option<&'a dyn AdmissionLimit>,
    pub(crate) config: C,
}

impl<'a, Op, C> Retry<'a, Op, C> {
    /// The same retry, its operation made by `wrap` of this one.
    #[cfg_attr(not(feature = "chaos"), allow(dead_code))]
    pub(crate) fn map_op<Op2>(self, wrap: impl FnOnce(Op) -> Op2) -> Retry<'a, Op2, C> {
        Retry {
            op: wrap(self.op),
            policy: self.policy,
            budget: self.budget,
            admission: self.admission,
            config: self.config,
        }
    }
}

impl<Op, C: core::fmt::Debug> core::fmt::Debug for Retry<'_, Op, C> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Retry")
            .field("policy", self.policy)
            .field("budget", &self.budget.map(|_| format_args!("RetryLimit")))
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl<'a, Op, K, T, E, O, H, S, A> Retry<'a, Op, Config<K, T, E, O, H, S, A>> {
    /// Rebuilds with the hooks, sleep and action that `change` makes.
    pub(crate) fn with<O2, H2, S2, A2>(
        self,
        change: impl FnOnce(H, S, A) -> (H2, S2, A2),
    ) -> Retry<'a, Op, Config<K, T, E, O2, H2, S2, A2>> {
        let Config {
            hooks,
            sleep,
            action,
            call,
            ..
        } = self.config;
        let (hooks, sleep, action) = change(hooks, sleep, action);
        Retry {
            policy: self.policy,
            op: self.op,
            budget: self.budget,
            admission: self.admission,
            config: Config {
                hooks,
                sleep,
                action,
                call,
                _kind: PhantomData,
            },
        }
    }

    /// Adds an owned hook.
    fn add<W>(self, hook: W) -> Retry<'a, Op, Config<K, T, E, O, (H, W), S, A>> {
        self.with(|hooks, sleep, action| ((hooks, hook), sleep, action))
    }

    /// A retry limit shared by every call that names it (`budget`): a
    /// [`RetryBudget`](crate::limits::RetryBudget), a
    /// [`RetryThrottle`](crate::limits::RetryThrottle), your own
    /// [`RetryLimit`](crate::limits::RetryLimit), or a reference, `Arc` or `Box` of
    /// one. A retry it refuses ends the call with
    /// [`StopReason::Budget`](crate::StopReason::Budget). Give it a `static`
    /// or a shared value, never a `const`: a `const` is a new budget at each
    /// use.
    ///
    /// ```
    /// use backoff_runtime::limits::RetryBudget;
    /// use backoff_runtime::Policy;
    /// let budget = RetryBudget::new().ratio(0.0).min_per_second(0);
    /// let mut calls = 0;
    /// let result = Policy::new().retry(|| { calls += 1; Err::<(), ()>(()) }).budget(&budget).call();
    /// assert_eq!((result, calls), (Err(()), 1), "an empty budget refuses every retry");
    /// ```
    pub fn budget<B: RetryLimit>(mut self, budget: &'a B) -> Retry<'a, Op, Config<K, T, E, O, (H, Budgeted), S, A>> {
        self.budget = Some(budget);
        self.add(Budgeted::NEW)
    }

    /// A limiter asked before every attempt, the first included
    /// (`admission`): an [`AdaptiveRateLimiter`](crate::limits::AdaptiveRateLimiter),
    /// an [`AdaptiveThrottle`](crate::limits::AdaptiveThrottle), a
    /// [`CircuitBreaker`](crate::limits::CircuitBreaker), a [`Cooldown`](crate::limits::Cooldown),
    /// a [`Keyed`](crate::limits::Keyed) or your own
    /// [`AdmissionLimit`](crate::limits::AdmissionLimit). It lets the attempt go, makes it
    /// wait (on the loop's own sleep) or refuses it: the call then returns
    /// `E::from(`[`Refused`](crate::limits::Refused)`)` at once, which is why this
    /// needs `E: From<Refused>`, reported as a give-up with
    /// [`StopReason::Refused`](crate::StopReason::Refused) (`on_give_up`,
    /// tracing, metrics). After each attempt it hears whether the
    /// attempt was throttled ([`slow_down_if`](Retry::slow_down_if)). Give
    /// it a `static` or a shared value, never a `const`: a `const` is a new
    /// limiter at each use.
    ///
    /// ```
    /// use backoff_runtime::limits::{AdaptiveThrottle, Refused};
    /// use backoff_runtime::Policy;
    /// use std::time::Duration;
    ///
    /// #[derive(Debug, PartialEq)]
    /// enum Error { Overloaded, Shed }
    /// impl From<Refused> for Error {
    ///     fn from(_: Refused) -> Self { Error::Shed }
    /// }
    ///
    /// let throttle = AdaptiveThrottle::new();
    /// let policy = Policy::new().max_retries(1).initial_backoff(Duration::from_millis(1));
    /// let mut sent = 0;
    /// for _ in 0..50 {
    ///     let _ = policy.retry(|| { sent += 1; Err::<(), _>(Error::Overloaded) }).admission(&throttle).call();
    /// }
    /// assert!(sent < 100, "a backend that accepts nothing is shed on the client: {sent} of 100 sent");
    /// ```
    pub fn admission<L: AdmissionLimit>(mut self, limit: &'a L) -> Retry<'a, Op, Config<K, T, E, O, (H, Admits), S, A>>
    where
        E: crate::limits::admission::FromRefused,
    {
        self.admission = Some(limit);
        self.config.call.refused = Some(|refused| Err(E::from_refused(refused)));
        self.add(Admits::NEW)
    }

    /// Which errors tell the [`admission`](Retry::admission) limiter to
    /// slow down (`slow_down_if`: a 429, S3's `SlowDown`); by default every
    /// error [`retry_if`](Retry::retry_if) retries. Any other answer, a
    /// success included, tells it the backend accepted the attempt.
    ///
    /// ```
    /// use backoff_runtime::limits::{AdaptiveRateLimiter, Refused};
    /// use backoff_runtime::Policy;
    /// use std::io;
    ///
    /// let limiter = AdaptiveRateLimiter::new();
    /// let result = Policy::new()
    ///     .retry(|| Err::<(), _>(io::Error::from(io::ErrorKind::NotFound)))
    ///     .retry_if(|e| e.kind() != io::ErrorKind::NotFound)
    ///     .slow_down_if(|e| e.kind() == io::ErrorKind::WouldBlock)
    ///     .admission(&limiter)
    ///     .call();
    /// assert!(result.is_err());
    /// assert!(!limiter.is_enabled(), "a not-found is no throttle");
    /// # let _ = Refused::new();
    /// ```
    pub fn slow_down_if<F: Fn(&E) -> bool>(
        self,
        slow_down_if: F,
    ) -> Retry<'a, Op, Config<K, T, E, O, (H, SlowDownIf<F>), S, A>> {
        self.add(SlowDownIf(slow_down_if))
    }

    /// Which errors to retry (`retry_if`); any other error is returned at
    /// once. By default every error is retried.
    ///
    /// ```
    /// use backoff_runtime::Policy;
    /// let mut calls = 0;
    /// let result = Policy::new().retry(|| { calls += 1; Err::<(), u16>(404) }).retry_if(|s| *s >= 500).call();
    /// assert_eq!((result, calls), (Err(404), 1));
    /// ```
    pub fn retry_if<F: Fn(&E) -> bool>(self, retry_if: F) -> Retry<'a, Op, Config<K, T, E, O, (H, RetryIf<F>), S, A>> {
        self.add(RetryIf(retry_if))
    }

    /// The server's suggested wait after an error (`retry_after`): the wait
    /// when it is `<= max_backoff`; a larger hint ends the retries unless
    /// the policy says [`HintAboveCap::WaitCap`](crate::HintAboveCap).
    ///
    /// ```
    /// use backoff_runtime::Policy;
    /// use std::time::Duration;
    /// let result = Policy::new()
    ///     .max_backoff(Duration::from_secs(10))
    ///     .retry(|| Err::<(), u64>(60))
    ///     .retry_after(|secs| Some(Duration::from_secs(*secs)))
    ///     .call();
    /// assert_eq!(result, Err(60), "a 60 s hint above the 10 s cap ends the retries");
    /// ```
    pub fn retry_after<F: Fn(&E) -> Option<Duration>>(
        self,
        retry_after: F,
    ) -> Retry<'a, Op, Config<K, T, E, O, (H, RetryAfter<F>), S, A>> {
        self.add(RetryAfter(retry_after))
    }

    /// The server's suggested wait after a pending value (`retry_after_ok`,
    /// with [`retry_if_ok`](Retry::retry_if_ok)).
    pub fn retry_after_ok<F: Fn(&T) -> Option<Duration>>(
        self,
        retry_after_ok: F,
    ) -> Retry<'a, Op, Config<K, T, E, O, (H, RetryAfterOk<F>), S, A>> {
        self.add(RetryAfterOk(retry_after_ok))
    }

    /// The error a still-pending value becomes when a stop rule ends the
    /// call (`pending_error`, with [`retry_if_ok`](Retry::retry_if_ok));
    /// without it the last value is returned as it is.
    ///
    /// ```
    /// use backoff_runtime::Policy;
    /// use std::time::Duration;
    ///
    /// let policy = Policy::new().max_retries(2).initial_backoff(Duration::from_millis(1));
    /// let result = policy
    ///     .retry(|| Ok::<&str, String>("running"))
    ///     .retry_if_ok(|state| *state == "running")
    ///     .pending_error(|state| format!("still {state} after 3 polls"))
    ///     .call();
    /// assert_eq!(result, Err("still running after 3 polls".to_owned()));
    /// ```
    pub fn pending_error<F: Fn(T) -> E>(
        self,
        pending_error: F,
    ) -> Retry<'a, Op, Config<K, T, E, O, (H, PendingError<F>), S, A>> {
        self.add(PendingError(pending_error))
    }

    /// Called before each wait (`on_retry`), with the error (or with
    /// [`retry_if_ok`](Retry::retry_if_ok) the whole result).
    ///
    /// ```
    /// use backoff_runtime::{Policy, RetryEvent};
    /// use std::time::Duration;
    /// let waits = std::cell::Cell::new(0);
    /// let _ = Policy::new()
    ///     .initial_backoff(Duration::from_millis(1))
    ///     .max_retries(2)
    ///     .retry(|| Err::<(), ()>(()))
    ///     .on_retry(|_, _: &RetryEvent| waits.set(waits.get() + 1))
    ///     .call();
    /// assert_eq!(waits.get(), 2);
    /// ```
    pub fn on_retry<F: Fn(&O, &RetryEvent)>(
        self,
        on_retry: F,
    ) -> Retry<'a, Op, Config<K, T, E, O, (H, OnRetry<F>), S, A>> {
        self.add(OnRetry(on_retry))
    }

    /// Called once when a stop rule ends the call (`on_give_up`), never on
    /// success.
    ///
    /// ```
    /// use backoff_runtime::{GiveUp, Policy, StopReason};
    /// let reason = std::cell::Cell::new(None);
    /// let _ = Policy::new()
    ///     .retry(|| Err::<(), &str>("denied"))
    ///     .retry_if(|e| *e != "denied")
    ///     .on_give_up(|_, event: &GiveUp| reason.set(Some(event.reason())))
    ///     .call();
    /// assert_eq!(reason.get(), Some(StopReason::Permanent));
    /// ```
    pub fn on_give_up<F: Fn(&O, &GiveUp)>(
        self,
        on_give_up: F,
    ) -> Retry<'a, Op, Config<K, T, E, O, (H, OnGiveUp<F>), S, A>> {
        self.add(OnGiveUp(on_give_up))
    }

    /// Called once when the operation succeeds (`on_success`), with the
    /// attempts it took and the time it took; never when it gives up.
    ///
    /// ```
    /// use backoff_runtime::{Policy, Success};
    /// let attempts = std::cell::Cell::new(0);
    /// let _ = Policy::new().retry(|| Ok::<_, ()>(1)).on_success(|event: &Success| attempts.set(event.attempts())).call();
    /// assert_eq!(attempts.get(), 1);
    /// ```
    pub fn on_success<F: Fn(&Success)>(
        self,
        on_success: F,
    ) -> Retry<'a, Op, Config<K, T, E, O, (H, OnSuccess<F>), S, A>> {
        self.add(OnSuccess(on_success))
    }

    /// An action after `on_retry` and before the wait (`before_retry`):
    /// refresh a token, reconnect. For [`call`](Retry::call), a
    /// `FnMut(&E, &RetryEvent)`; for `.await`, a `FnMut(&E, &RetryEvent)
    /// -> impl Future<Output = ()>` whose future owns what it needs (copy
    /// what you need out of the error before the `async move` block). Its
    /// time counts toward `max_elapsed`: a wait that would then end past
    /// it is not started.
    ///
    /// ```
    /// use backoff_runtime::Policy;
    /// use std::time::Duration;
    ///
    /// let mut token = "expired";
    /// let refreshed = std::cell::Cell::new(0);
    /// let result = Policy::new()
    ///     .initial_backoff(Duration::from_millis(1))
    ///     .retry(|| if refreshed.get() > 0 { Ok("data") } else { Err("expired token") })
    ///     .before_retry(|_, _| refreshed.set(refreshed.get() + 1))
    ///     .call();
    /// assert_eq!((result, refreshed.get()), (Ok("data"), 1));
    /// # token = "fresh"; let _ = token;
    /// ```
    pub fn before_retry<F, R>(self, before_retry: F) -> Retry<'a, Op, Config<K, T, E, O, H, S, Action<F, R>>>
    where
        F: FnMut(&O, &RetryEvent) -> R,
    {
        self.with(|hooks, sleep, _| {
            let action = Action {
                action: before_retry,
                _output: PhantomData,
            };
            (hooks, sleep, action)
        })
    }

    /// The name events, tracing and metrics report for this operation (the
    /// attribute uses the function's path); `"retry"` by default.
    ///
    /// ```
    /// use backoff_runtime::{GiveUp, Policy};
    /// let name = std::cell::Cell::new("");
    /// let _ = Policy::new()
    ///     .retry(|| Err::<(), ()>(()))
    ///     .retry_if(|_| false)
    ///     .on_give_up(|_, event: &GiveUp| name.set(event.function()))
    ///     .name("load_config")
    ///     .call();
    /// assert_eq!(name.get(), "load_config");
    /// ```
    pub fn name(mut self, name: &'static str) -> Self {
        self.config.call.identity.name = name;
        self
    }

    /// Retries a failure even when a retried call the attempt made already
    /// gave up on it (the attribute's `nested = retry`); by default such a
    /// failure ends the call with
    /// [`StopReason::RetriedBelow`](crate::StopReason::RetriedBelow).
    ///
    /// ```
    /// use backoff_runtime::Policy;
    /// use std::time::Duration;
    /// let policy = Policy::new().initial_backoff(Duration::from_millis(1)).max_retries(1);
    /// let mut outer = 0;
    /// let result = policy
    ///     .retry(|| { outer += 1; policy.retry(|| Err::<(), ()>(())).call() })
    ///     .nested_retry()
    ///     .call();
    /// assert_eq!((result, outer), (Err(()), 2));
    /// ```
    pub fn nested_retry(mut self) -> Self {
        self.config.call.identity.retries_nested = true;
        self
    }
}

impl<'a, Op, K, T, E, H, S, A> Retry<'a, Op, Config<K, T, E, E, H, S, A>> {
    /// Which values are still pending (`retry_if_ok`): wait and run the
    /// operation again (polling). A value it accepts is returned; when a
    /// stop rule holds on a pending value, that value is returned as it is.
    /// The observers then see the whole `Result`, so give this before
    /// `on_retry`, `on_give_up` and `before_retry`.
    ///
    /// ```
    /// use backoff_runtime::Policy;
    /// use std::time::Duration;
    /// let mut polls = 0;
    /// let result = Policy::new()
    ///     .initial_backoff(Duration::from_millis(1))
    ///     .retry(|| { polls += 1; Ok::<_, ()>(if polls < 3 { "running" } else { "done" }) })
    ///     .retry_if_ok(|state| *state == "running")
    ///     .call();
    /// assert_eq!(result, Ok("done"));
    /// ```
    pub fn retry_if_ok<F: Fn(&T) -> bool>(
        self,
        retry_if_ok: F,
    ) -> Retry<'a, Op, Config<K, T, E, Result<T, E>, (RetryIfOk<F>, H), S, A>> {
        self.with(|hooks, sleep, action| ((RetryIfOk(retry_if_ok), hooks), sleep, action))
    }
}

impl<'a, Op, T, E, O, H, S, A> Retry<'a, Op, Config<Blocking, T, E, O, H, S, A>> {
    /// How to wait between the attempts of [`call`](Retry::call)
    /// (`sleep`): a `Fn(Duration)` that blocks and returns `()`, such as
    /// `std::thread::sleep` or a test's recorder.
    ///
    /// ```
    /// use backoff_runtime::Policy;
    /// let slept = std::cell::Cell::new(0);
    /// let _ = Policy::new().max_retries(3).retry(|| Err::<(), ()>(())).sleep(|_| slept.set(slept.get() + 1)).call();
    /// assert_eq!(slept.get(), 3);
    /// ```
    pub fn sleep<F, R>(self, sleep: F) -> Retry<'a, Op, Config<Blocking, T, E, O, H, CustomSleep<F>, A>>
    where
        F: Fn(Duration) -> R,
        R: SyncSleep,
    {
        self.with(|hooks, _, action| (hooks, crate::bounds::sync_sleep(sleep), action))
    }
}

impl<'a, Op, T, E, O, H, S, A> Retry<'a, Op, Config<Awaited, T, E, O, H, S, A>> {
    /// How to wait between the attempts of an awaited retry (`sleep`): a
    /// `Fn(Duration)` returning a future (its output is ignored), such as
    /// another runtime's timer or a finer one; without it, tokio's.
    ///
    /// ```
    /// use backoff_runtime::Policy;
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let waits = std::cell::RefCell::new(Vec::new());
    /// let result = Policy::new()
    ///     .max_retries(2)
    ///     .retry(|| async { Err::<(), ()>(()) })
    ///     .sleep(|wait: Duration| {
    ///         waits.borrow_mut().push(wait);
    ///         std::future::ready(())
    ///     })
    ///     .await;
    /// assert_eq!((result, waits.borrow().len()), (Err(()), 2));
    /// # }
    /// ```
    pub fn sleep<F, Fut>(self, sleep: F) -> Retry<'a, Op, Config<Awaited, T, E, O, H, CustomTimer<F, Fut>, A>>
    where
        F: Fn(Duration) -> Fut,
        Fut: AsyncSleep,
    {
        self.with(|hooks, _, action| (hooks, crate::bounds::async_sleep(sleep), action))
    }
}

impl<'a, Op, T, E, O, H, S, A> Retry<'a, Op, Config<Awaited, T, E, O, H, S, A>>
where
    E: From<Elapsed>,
{
    /// A limit on each attempt of an async operation (`timeout`): a
    /// timed-out attempt is `E::from(Elapsed)`, classified by `retry_if`
    /// like any other error; an attempt never runs past `max_elapsed`, and
    /// one with no time left is not started. Needs a default timer (the
    /// `tokio` or `futures-timer` feature), even with a sleep of one's own.
    ///
    /// ```
    /// use backoff_runtime::Policy;
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let result: Result<(), std::io::Error> = Policy::new()
    ///     .max_retries(1)
    ///     .retry(|| std::future::pending())
    ///     .timeout(Duration::from_secs(5))
    ///     .await;
    /// assert_eq!(result.unwrap_err().kind(), std::io::ErrorKind::TimedOut);
    /// # }
    /// ```
    pub fn timeout(mut self, timeout: Duration) -> Self
    where
        E: crate::bounds::TimeoutSupport,
    {
        self.config.call.timeout = Some((timeout, || Err(E::from(Elapsed::new()))));
        self
    }
}
