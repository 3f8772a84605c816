//! The plain-Rust API, the attribute's twin: `policy.retry(op)` builds a
//! [`Retry`] whose methods are the attribute's keys; `.call()` runs a sync
//! operation, `.await` an async one. The same loop, stop rules and events as
//! `#[retry]`.

use core::future::{Future, IntoFuture};
use core::marker::PhantomData;
use core::pin::Pin;
use core::task::{Context, Poll, ready};
use core::time::Duration;

use crate::__private::AsBudget;
use crate::limits::limit::Limit;
use crate::observe::events::{GiveUp, RetryEvent, Success};
use crate::run::async_loop::{AsyncLoop, ClockChoice, Step};
use crate::run::attempt::{Attempt, AttemptSource};
use crate::run::decide::RetryState;
use crate::run::hooks::{HookSet, Hooks, OnGiveUpHook, OnRetryHook, OnSuccessHook, RetryAfterHook, RetryIfHook};
use crate::run::nested::NestedAttempt;
use crate::run::sync_loop::{SyncSleeper, ThreadSleep, custom_sync_sleep, judge_errors, retry_sync, start_sync};
use crate::schedule::policy::Policy;
use crate::time::clock::ClockKind;
use crate::time::timeout::Elapsed;

/// Marks an operation that returns a `Result` (run with [`Retry::call`]).
#[derive(Debug)]
pub enum Blocking {}

/// Marks an operation that returns a future of a `Result` (run with `.await`).
#[derive(Debug)]
pub enum Awaited {}

/// An operation [`Policy::retry`] can run: a closure returning a `Result`
/// ([`Blocking`]) or returning a future of one ([`Awaited`]). Implemented for
/// every such closure; it names the error type, so hook closures written
/// without parameter types infer `&E`.
///
/// ```
/// use backoff_runtime::__private::{Blocking, Operation};
/// fn error_of<O: Operation<Blocking>>(_: &O) {}
/// error_of(&|| Err::<(), u16>(503));
/// ```
pub trait Operation<Kind> {
    /// The operation's error type.
    type Error;
}

impl<F, T, E> Operation<Blocking> for F
where
    F: FnMut() -> Result<T, E>,
{
    type Error = E;
}

impl<F, Fut, T, E> Operation<Awaited> for F
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    type Error = E;
}

/// An operation that takes the [`Attempt`] it runs as
/// ([`Policy::retry_with_attempt`]): a closure returning a `Result`
/// ([`Blocking`]) or a future of one ([`Awaited`]).
///
/// ```
/// use backoff_runtime::Attempt;
/// use backoff_runtime::__private::{AttemptOperation, Blocking};
/// fn error_of<O: AttemptOperation<Blocking>>(_: &O) {}
/// error_of(&|attempt: Attempt| if attempt.is_first() { Err(503) } else { Ok(()) });
/// ```
pub trait AttemptOperation<Kind> {
    /// The operation's error type.
    type Error;
    /// What one call of the operation returns.
    type Output;
    /// The clock the loop of this kind reads.
    #[doc(hidden)]
    const CLOCK: ClockChoice;
    /// Runs the operation as `attempt`.
    fn run(&mut self, attempt: Attempt) -> Self::Output;
}

impl<F, T, E> AttemptOperation<Blocking> for F
where
    F: FnMut(Attempt) -> Result<T, E>,
{
    type Error = E;
    type Output = Result<T, E>;
    const CLOCK: ClockChoice = ClockChoice(ClockKind::Sync);

    #[inline(always)]
    fn run(&mut self, attempt: Attempt) -> Result<T, E> {
        self(attempt)
    }
}

impl<F, Fut, T, E> AttemptOperation<Awaited> for F
where
    F: FnMut(Attempt) -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    type Error = E;
    type Output = Fut;
    #[cfg(feature = "tokio")]
    const CLOCK: ClockChoice = ClockChoice(ClockKind::Tokio);
    #[cfg(not(feature = "tokio"))]
    const CLOCK: ClockChoice = ClockChoice(ClockKind::Std);

    #[inline(always)]
    fn run(&mut self, attempt: Attempt) -> Fut {
        self(attempt)
    }
}

/// The default sleep of a [`Retry`]: `std::thread::sleep` for [`Retry::call`]
/// (or the test's virtual clock), `tokio::time::sleep` for `.await`.
#[derive(Clone, Copy, Debug, Default)]
pub struct DefaultSleep;

/// A sleep given with [`Retry::sleep`].
#[derive(Clone, Copy, Debug)]
pub struct CustomSleep<F>(F);

impl Policy {
    /// Retries `op` on this policy: the attribute's twin. Add the
    /// attribute's keys as methods ([`retry_if`](Retry::retry_if),
    /// [`retry_after`](Retry::retry_after), [`on_retry`](Retry::on_retry),
    /// [`on_give_up`](Retry::on_give_up), [`sleep`](Retry::sleep),
    /// [`budget`](Retry::budget), [`timeout`](Retry::timeout)), then run a
    /// sync operation with [`.call()`](Retry::call), or `.await` an async one.
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
    /// (An async closure could lend `&mut` state to each attempt, but its
    /// futures are not `Send`; `#[retry]` on an `async fn` has neither
    /// limit.) It sleeps on tokio unless given [`sleep`](Retry::sleep).
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
    pub fn retry<Op, K>(&self, op: Op) -> Retry<'_, Op, Op::Error, K, HookSet<Op::Error>, DefaultSleep>
    where
        Op: Operation<K>,
    {
        Retry {
            policy: self,
            op,
            hooks: HookSet::new(),
            sleep: DefaultSleep,
            budget: None,
            timeout: None,
            _kind: PhantomData,
        }
    }
}

impl Policy {
    /// [`retry`](Policy::retry) for an operation that takes the [`Attempt`]
    /// it runs as: its number, the retries left, the time left before
    /// `max_elapsed` and the call's invocation id (what `#[retry(context =
    /// attempt)]` gives a body). The call's start is read when the first
    /// attempt runs.
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
    #[allow(clippy::type_complexity)]
    pub fn retry_with_attempt<Op, K>(
        &self,
        mut op: Op,
    ) -> Retry<'_, impl FnMut() -> Op::Output, Op::Error, K, HookSet<Op::Error>, DefaultSleep>
    where
        Op: AttemptOperation<K>,
    {
        let policy = self;
        let mut attempts: Option<AttemptSource> = None;
        let op = move || {
            let source = attempts.get_or_insert_with(|| AttemptSource::new(policy, None, Op::CLOCK));
            op.run(source.next_attempt())
        };
        Retry {
            policy: self,
            op,
            hooks: HookSet::new(),
            sleep: DefaultSleep,
            budget: None,
            timeout: None,
            _kind: PhantomData,
        }
    }
}

/// A retried operation being configured; built by [`Policy::retry`]. Run it
/// with [`call`](Retry::call) (sync) or `.await` (async).
#[must_use = "a Retry does nothing until `.call()` or `.await`"]
pub struct Retry<'a, Op, E, K, H, S> {
    policy: &'a Policy,
    op: Op,
    hooks: H,
    sleep: S,
    budget: Option<Limit<'a>>,
    /// Per-attempt limit (async) and the error standing for a timed-out attempt.
    timeout: Option<(Duration, fn() -> E)>,
    _kind: PhantomData<fn() -> K>,
}

impl<Op, E, K, H, S: core::fmt::Debug> core::fmt::Debug for Retry<'_, Op, E, K, H, S> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Retry")
            .field("policy", self.policy)
            .field("sleep", &self.sleep)
            .field("budget", &self.budget)
            .field("timeout", &self.timeout.map(|(limit, _)| limit))
            .finish_non_exhaustive()
    }
}

// Type-state builder: each method's return type spells out the hook it sets.
#[allow(clippy::type_complexity)]
impl<'a, Op, E, K, If, After, OnRetry, OnGiveUp, OnSuccess, S>
    Retry<'a, Op, E, K, HookSet<E, If, After, OnRetry, OnGiveUp, OnSuccess>, S>
{
    /// Rebuilds with the hooks and the sleep that `change` makes of the
    /// current ones.
    fn with<H2, S2>(
        self,
        change: impl FnOnce(HookSet<E, If, After, OnRetry, OnGiveUp, OnSuccess>, S) -> (H2, S2),
    ) -> Retry<'a, Op, E, K, H2, S2> {
        let (hooks, sleep) = change(self.hooks, self.sleep);
        Retry {
            policy: self.policy,
            op: self.op,
            hooks,
            sleep,
            budget: self.budget,
            timeout: self.timeout,
            _kind: PhantomData,
        }
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
    pub fn retry_if<F: Fn(&E) -> bool>(
        self,
        retry_if: F,
    ) -> Retry<'a, Op, E, K, HookSet<E, RetryIfHook<E, F>, After, OnRetry, OnGiveUp, OnSuccess>, S> {
        self.with(|hooks, sleep| (hooks.retry_if(retry_if), sleep))
    }

    /// The server's suggested wait (`retry_after`): the wait when it is
    /// `<= max_backoff`; a larger hint ends the retries.
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
    ) -> Retry<'a, Op, E, K, HookSet<E, If, RetryAfterHook<E, F>, OnRetry, OnGiveUp, OnSuccess>, S> {
        self.with(|hooks, sleep| (hooks.retry_after(retry_after), sleep))
    }

    /// Called before each wait (`on_retry`).
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
    pub fn on_retry<F: Fn(&E, &RetryEvent)>(
        self,
        on_retry: F,
    ) -> Retry<'a, Op, E, K, HookSet<E, If, After, OnRetryHook<E, F>, OnGiveUp, OnSuccess>, S> {
        self.with(|hooks, sleep| (hooks.on_retry(on_retry), sleep))
    }

    /// Called once when the final error is returned (`on_give_up`), never on
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
    pub fn on_give_up<F: Fn(&E, &GiveUp)>(
        self,
        on_give_up: F,
    ) -> Retry<'a, Op, E, K, HookSet<E, If, After, OnRetry, OnGiveUpHook<E, F>, OnSuccess>, S> {
        self.with(|hooks, sleep| (hooks.on_give_up(on_give_up), sleep))
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
    ) -> Retry<'a, Op, E, K, HookSet<E, If, After, OnRetry, OnGiveUp, OnSuccessHook<F>>, S> {
        self.with(|hooks, sleep| (hooks.on_success(on_success), sleep))
    }

    /// The name events, tracing and metrics report for this operation (the
    /// attribute uses the function's name); `"retry"` by default.
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
        self.hooks = self.hooks.name(name);
        self
    }

    /// How to wait between attempts (`sleep`): `Fn(Duration)` for
    /// [`call`](Retry::call); `Fn(Duration) -> impl Future` for `.await`
    /// (another runtime's timer, or a finer one).
    ///
    /// ```
    /// use backoff_runtime::Policy;
    /// let slept = std::cell::Cell::new(0);
    /// let _ = Policy::new().max_retries(3).retry(|| Err::<(), ()>(())).sleep(|_| slept.set(slept.get() + 1)).call();
    /// assert_eq!(slept.get(), 3);
    /// ```
    pub fn sleep<F>(
        self,
        sleep: F,
    ) -> Retry<'a, Op, E, K, HookSet<E, If, After, OnRetry, OnGiveUp, OnSuccess>, CustomSleep<F>> {
        self.with(|hooks, _| (hooks, CustomSleep(sleep)))
    }

    /// A retry limit for this call (`budget`): a
    /// [`RetryBudget`](crate::RetryBudget) (the call deposits, each retry
    /// withdraws) or a [`RetryThrottle`](crate::RetryThrottle) (each
    /// retryable failure takes a token, each success returns some), or an
    /// `Arc`/`Box` of one. A retry it refuses ends the call with
    /// [`StopReason::Budget`](crate::StopReason::Budget). Any limit the call
    /// can borrow: a `static`, one per backend in a map, a field.
    ///
    /// ```
    /// use backoff_runtime::{Policy, RetryBudget};
    /// let budget = RetryBudget::new().ratio(0.0).min_per_second(0);
    /// let mut calls = 0;
    /// let result = Policy::new().retry(|| { calls += 1; Err::<(), ()>(()) }).budget(&budget).call();
    /// assert_eq!((result, calls), (Err(()), 1), "an empty budget refuses every retry");
    /// ```
    pub fn budget<B: AsBudget + ?Sized>(mut self, budget: &'a B) -> Self {
        self.budget = Some(budget.as_budget());
        self
    }
}

#[cfg(feature = "tokio")]
impl<'a, Op, E, If, After, OnRetry, OnGiveUp, OnSuccess, S>
    Retry<'a, Op, E, Awaited, HookSet<E, If, After, OnRetry, OnGiveUp, OnSuccess>, S>
where
    E: From<Elapsed>,
{
    /// A limit on each attempt of an async operation (`timeout`): a
    /// timed-out attempt is `E::from(Elapsed)`, classified by `retry_if`
    /// like any other error; an attempt never runs past `max_elapsed`, and
    /// one with no time left is not started. Needs the `tokio` feature.
    ///
    /// ```
    /// use backoff_runtime::{Elapsed, Policy};
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
    pub fn timeout(mut self, limit: Duration) -> Self {
        self.timeout = Some((limit, || E::from(Elapsed::new())));
        self
    }
}

impl<Op, T, E, H, S> Retry<'_, Op, E, Blocking, H, S>
where
    Op: FnMut() -> Result<T, E>,
    H: Hooks<E>,
    S: SyncSleepKind,
{
    /// Runs a sync operation until it succeeds or a stop rule holds, and
    /// returns its last result.
    ///
    /// ```
    /// use backoff_runtime::Policy;
    /// use std::time::Duration;
    /// let result = Policy::new().initial_backoff(Duration::from_millis(1)).max_retries(1).retry(|| Err::<(), _>("down")).call();
    /// assert_eq!(result, Err("down"));
    /// ```
    #[inline]
    pub fn call(self) -> Result<T, E> {
        let Retry {
            policy,
            mut op,
            hooks,
            sleep,
            budget,
            ..
        } = self;
        let sleeper = sleep.into_sleeper();
        let start = start_sync(policy, budget, hooks.observes(), &sleeper);
        crate::run::nested::enter_attempt();
        match op() {
            Ok(value) => {
                RetryState::first_success(budget, sleeper.clock().0, start, || &hooks);
                Ok(value)
            }
            Err(error) => retry_sync(
                policy,
                budget,
                start,
                error,
                &mut op,
                hooks,
                sleeper,
                judge_errors::<Result<T, E>, H>,
                Err,
            ),
        }
    }
}

/// How [`Retry::call`] sleeps: `std::thread::sleep` by default, the given
/// `Fn(Duration)` otherwise.
#[diagnostic::on_unimplemented(
    message = "`.sleep(...)` of a sync retry must be a `Fn(Duration)`",
    label = "not a blocking sleep"
)]
pub trait SyncSleepKind {
    /// The sleeper of the sync loop.
    #[doc(hidden)]
    type Sleeper: SyncSleeper;
    /// Makes it.
    #[doc(hidden)]
    fn into_sleeper(self) -> Self::Sleeper;
}

impl SyncSleepKind for DefaultSleep {
    type Sleeper = ThreadSleep;
    #[inline]
    fn into_sleeper(self) -> ThreadSleep {
        ThreadSleep
    }
}

impl<F: Fn(Duration)> SyncSleepKind for CustomSleep<F> {
    type Sleeper = crate::run::sync_loop::CustomSleep<F>;
    #[inline]
    fn into_sleeper(self) -> Self::Sleeper {
        custom_sync_sleep(self.0)
    }
}

/// How an awaited [`Retry`] sleeps: tokio's timer by default (feature
/// `tokio`), the given `Fn(Duration) -> impl Future` otherwise.
#[diagnostic::on_unimplemented(
    message = "an awaited retry needs the `tokio` feature of `backoff-runtime`, or `.sleep(...)` with an async sleep",
    label = "no timer to wait with",
    note = "enable the `tokio` feature, or pass your runtime's sleep: `.sleep(async_io::Timer::after)`"
)]
pub trait AsyncSleepKind {
    /// The timer the future keeps between waits.
    #[doc(hidden)]
    type Timer: Timer;
    /// Makes it.
    #[doc(hidden)]
    fn into_timer(self) -> Self::Timer;
}

/// The timer of an awaited retry.
#[doc(hidden)]
pub trait Timer {
    /// The clock `max_elapsed` is measured on.
    const CLOCK: ClockChoice;
    /// Starts a wait.
    fn start(self: Pin<&mut Self>, wait: Duration);
    /// Polls the wait started last.
    fn poll_wait(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()>;
}

/// tokio's timer: one boxed `Sleep`, allocated on the first wait and reset
/// for the next ones.
#[cfg(feature = "tokio")]
#[derive(Debug, Default)]
pub struct TokioTimer(crate::run::async_loop::TokioSleepSlot);

#[cfg(feature = "tokio")]
impl AsyncSleepKind for DefaultSleep {
    type Timer = TokioTimer;
    #[inline]
    fn into_timer(self) -> TokioTimer {
        TokioTimer::default()
    }
}

#[cfg(feature = "tokio")]
impl Timer for TokioTimer {
    const CLOCK: ClockChoice = ClockChoice(ClockKind::Tokio);

    #[inline]
    fn start(self: Pin<&mut Self>, wait: Duration) {
        self.get_mut().0.start(wait);
    }

    #[inline]
    fn poll_wait(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.get_mut().0.poll_current(cx)
    }
}

impl<F, SF> core::fmt::Debug for CustomTimer<F, SF> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("CustomTimer")
            .field("waiting", &self.current.is_some())
            .finish_non_exhaustive()
    }
}

pin_project_lite::pin_project! {
    /// A timer from the caller's `Fn(Duration) -> impl Future`.
    #[doc(hidden)]
    pub struct CustomTimer<F, SF> {
        sleep: F,
        #[pin]
        current: Option<SF>,
    }
}

impl<F, SF> AsyncSleepKind for CustomSleep<F>
where
    F: Fn(Duration) -> SF,
    SF: Future,
{
    type Timer = CustomTimer<F, SF>;
    #[inline]
    fn into_timer(self) -> Self::Timer {
        CustomTimer {
            sleep: self.0,
            current: None,
        }
    }
}

impl<F, SF> Timer for CustomTimer<F, SF>
where
    F: Fn(Duration) -> SF,
    SF: Future,
{
    #[cfg(feature = "tokio")]
    const CLOCK: ClockChoice = ClockChoice(ClockKind::Tokio);
    #[cfg(not(feature = "tokio"))]
    const CLOCK: ClockChoice = ClockChoice(ClockKind::Std);

    #[inline]
    fn start(self: Pin<&mut Self>, wait: Duration) {
        let mut this = self.project();
        let next = (this.sleep)(wait);
        this.current.set(Some(next));
    }

    #[inline]
    fn poll_wait(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let mut this = self.project();
        if let Some(current) = this.current.as_mut().as_pin_mut() {
            ready!(current.poll(cx));
            this.current.set(None);
        }
        Poll::Ready(())
    }
}

/// An attempt under a time limit: tokio's `Timeout`.
#[cfg(feature = "tokio")]
type LimitedAttempt<Fut> = tokio::time::Timeout<Fut>;

/// Without tokio no attempt is limited (`timeout` needs tokio): never built.
#[cfg(not(feature = "tokio"))]
type LimitedAttempt<Fut> = Unlimited<Fut>;

#[cfg(not(feature = "tokio"))]
pin_project_lite::pin_project! {
    /// Without a timer, an attempt runs unlimited (`timeout` needs tokio,
    /// so none is ever built).
    struct Unlimited<Fut> {
        #[pin]
        future: Fut,
    }
}

#[cfg(not(feature = "tokio"))]
impl<Fut: Future> Future for Unlimited<Fut> {
    type Output = Result<Fut::Output, Elapsed>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.project().future.poll(cx).map(Ok)
    }
}

/// `future` limited to `limit`.
fn limited<Fut: Future>(limit: Duration, future: Fut) -> LimitedAttempt<Fut> {
    #[cfg(feature = "tokio")]
    return tokio::time::timeout(limit, future);
    #[cfg(not(feature = "tokio"))]
    {
        let _ = limit;
        Unlimited { future }
    }
}

pin_project_lite::pin_project! {
    /// One attempt of an awaited retry, with its time limit if any.
    #[project = AttemptProj]
    enum AttemptFuture<Fut, E> {
        Plain { #[pin] future: Fut },
        // Boxed: tokio's `Timeout` holds a whole `Sleep`, which an attempt
        // without a limit should not carry.
        Limited { future: Pin<Box<LimitedAttempt<Fut>>>, on_elapsed: fn() -> E },
        // An attempt with no time left before `max_elapsed`: not started.
        NotStarted { error: Option<E> },
    }
}

impl<Fut, T, E> Future for AttemptFuture<Fut, E>
where
    Fut: Future<Output = Result<T, E>>,
{
    type Output = Result<T, E>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project() {
            AttemptProj::Plain { future } => future.poll(cx),
            AttemptProj::Limited { future, on_elapsed } => match ready!(future.as_mut().poll(cx)) {
                Ok(result) => Poll::Ready(result),
                Err(_) => Poll::Ready(Err(on_elapsed())),
            },
            AttemptProj::NotStarted { error } => match error.take() {
                Some(error) => Poll::Ready(Err(error)),
                None => Poll::Pending,
            },
        }
    }
}

pin_project_lite::pin_project! {
    /// The future of an awaited [`Retry`]: the same loop as an `async fn`
    /// with `#[retry]`.
    pub struct RetryFuture<'a, Op, Fut, E, H, Tm> {
        policy: &'a Policy,
        budget: Option<Limit<'a>>,
        op: Op,
        hooks: H,
        timeout: Option<(Duration, fn() -> E)>,
        // Read when `.await` turns the retry into this future.
        state: AsyncLoop,
        sleeping: bool,
        #[pin]
        timer: Tm,
        #[pin]
        attempt: Option<NestedAttempt<AttemptFuture<Fut, E>>>,
    }
}

impl<Op, Fut, E, H, Tm> core::fmt::Debug for RetryFuture<'_, Op, Fut, E, H, Tm> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("RetryFuture")
            .field("policy", self.policy)
            .field("sleeping", &self.sleeping)
            .finish_non_exhaustive()
    }
}

impl<'a, Op, Fut, T, E, H, S> IntoFuture for Retry<'a, Op, E, Awaited, H, S>
where
    Op: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
    H: Hooks<E>,
    S: AsyncSleepKind,
{
    type Output = Result<T, E>;
    type IntoFuture = RetryFuture<'a, Op, Fut, E, H, S::Timer>;

    #[inline]
    fn into_future(self) -> Self::IntoFuture {
        let observes = self.hooks.observes();
        RetryFuture {
            policy: self.policy,
            budget: self.budget,
            op: self.op,
            hooks: self.hooks,
            timeout: self.timeout,
            state: AsyncLoop::start_on(<S::Timer as Timer>::CLOCK.0, self.policy, self.budget, observes),
            sleeping: false,
            timer: self.sleep.into_timer(),
            attempt: None,
        }
    }
}

impl<Op, Fut, T, E, H, Tm> Future for RetryFuture<'_, Op, Fut, E, H, Tm>
where
    Op: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
    H: Hooks<E>,
    Tm: Timer,
{
    type Output = Result<T, E>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        let policy: &Policy = this.policy;
        let budget = *this.budget;
        loop {
            if let Some(attempt) = this.attempt.as_mut().as_pin_mut() {
                let result = ready!(attempt.poll(cx));
                // A finished attempt is dropped when the next one starts, or
                // with this future: nothing more on the happy path.
                let hooks = &*this.hooks;
                match this.state.step(policy, budget, result, |_| hooks) {
                    Step::Return(result) => return Poll::Ready(result),
                    Step::Wait(wait) => {
                        this.attempt.set(None);
                        this.timer.as_mut().start(wait);
                        *this.sleeping = true;
                    }
                }
            }
            if *this.sleeping {
                ready!(this.timer.as_mut().poll_wait(cx));
                *this.sleeping = false;
            }
            let state = &*this.state;
            let attempt = match *this.timeout {
                None => AttemptFuture::Plain { future: (this.op)() },
                Some((limit, on_elapsed)) => {
                    let limit = state.attempt_limit(policy, limit);
                    if limit.is_zero() {
                        AttemptFuture::NotStarted {
                            error: Some(on_elapsed()),
                        }
                    } else {
                        AttemptFuture::Limited {
                            future: Box::pin(limited(limit, (this.op)())),
                            on_elapsed,
                        }
                    }
                }
            };
            this.attempt.set(Some(NestedAttempt::new(attempt)));
        }
    }
}
