//! How a loop waits between attempts.
//!
//! One blocking abstraction ([`BlockingSleep`]: the default [`DefaultSleep`],
//! `std::thread::sleep` or the test's virtual clock, and the user's
//! [`CustomSleep`]) and one async one ([`Timer`]: the default [`DefaultTimer`]
//! and the user's [`CustomTimer`]). The user's sleep is wrapped once, where its
//! type is checked (`bounds::sync_sleep`, `bounds::async_sleep`: the
//! attribute's `sleep = ...` and the builder's `.sleep(...)` alike). The sleep
//! also says which clock `max_elapsed` is measured on.

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};
use core::time::Duration;

use crate::time::clock::Clock;
use crate::time::cold_box::ColdBox;
use crate::time::default_wait::DefaultWait;

/// The default sleep: `std::thread::sleep` (or the thread's
/// [`VirtualClock`](crate::testing::VirtualClock)) for blocking loops;
/// awaited, it becomes a [`DefaultTimer`] (`IntoTimer`).
#[derive(Clone, Copy, Debug, Default)]
pub struct DefaultSleep;

/// The default async timer: tokio's inside a tokio runtime, futures-timer's
/// elsewhere ([`DefaultWait`]). One boxed wait, allocated on the first wait
/// and reset for the next ones.
#[derive(Debug, Default)]
pub struct DefaultTimer {
    slot: ColdBox<DefaultWait>,
}

impl DefaultTimer {
    /// The clock its waits are measured on: its [`Timer::CLOCK`], under a
    /// name the expansion writes in one path.
    ///
    /// ```
    /// use backoff_runtime::__private::{DefaultTimer, Timer};
    /// assert_eq!(DefaultTimer::CLOCK, <DefaultTimer as Timer>::CLOCK);
    /// ```
    pub const CLOCK: Clock = <Self as Timer>::CLOCK;

    /// A timer that allocates nothing until the first wait.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[must_use]
    pub fn new() -> Self {
        DefaultTimer::default()
    }
}

/// What a sleep given to the builder becomes when the retry is awaited
/// (made with `From`): the default sleep becomes the default timer, a
/// custom one stays itself.
pub trait IntoTimer: Sized {
    /// The timer.
    type Timer: Timer + From<Self>;
    /// The timer whose pending wait the waiting future keeps in place (a
    /// hedged call's delay: no allocation when the first attempt answers
    /// before it).
    type InPlace: Timer + From<Self>;
}

impl IntoTimer for DefaultSleep {
    type Timer = DefaultTimer;
    type InPlace = InlineTimer;
}

impl From<DefaultSleep> for DefaultTimer {
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn from(DefaultSleep: DefaultSleep) -> Self {
        DefaultTimer::new()
    }
}

impl From<DefaultSleep> for InlineTimer {
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn from(DefaultSleep: DefaultSleep) -> Self {
        InlineTimer
    }
}

impl<F, Fut> IntoTimer for CustomTimer<F, Fut> {
    type Timer = Self;
    type InPlace = Self;
}

/// How a blocking loop waits, and which clock it measures `max_elapsed` on.
///
/// On wasm32-unknown-unknown the default sleep has none: there is no thread
/// to sleep on, so a sync `#[retry]` and the builder's `.call()` without a
/// `sleep` of their own do not compile there.
#[cfg_attr(
    not(all(target_arch = "wasm32", target_os = "unknown")),
    diagnostic::on_unimplemented(
        message = "the `sleep` of a sync function must be a `Fn(Duration)`",
        label = "not a blocking sleep",
        note = "an async sleep (returning a future) belongs on an `async fn`"
    )
)]
#[cfg_attr(
    all(target_arch = "wasm32", target_os = "unknown"),
    diagnostic::on_unimplemented(
        message = "`#[retry]` on a sync function cannot wait on wasm32-unknown-unknown: there is no thread to sleep on",
        label = "a sync retry loop (`#[retry]` on a sync fn, or the builder's `.call()`) blocks its thread between attempts",
        note = "make the function `async`: its waits are the platform's `setTimeout`",
        note = "or give a blocking sleep of your own: `#[retry(sleep = my_sleep)]`, the builder's `.sleep(my_sleep)`"
    )
)]
pub trait BlockingSleep {
    /// Waits for `wait`.
    fn sleep(&self, wait: Duration);
    /// The clock of loops that sleep this way.
    fn clock(&self) -> Clock;
}

/// The user's blocking sleep, a `Fn(Duration)` (what it returns is checked
/// to be `()` by `bounds::sync_sleep`, on the user's token, so nothing is
/// asked of it here). It keeps a function pointer made here, so the loop
/// asks nothing more of it.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn custom_sleep<F: Fn(Duration) -> O, O>(sleep: F) -> CustomSleep<F> {
    CustomSleep {
        sleep,
        call: |sleep, wait| drop(sleep(wait)),
    }
}

/// The user's async sleep (`sleep = ...`, the builder's `.sleep(...)`),
/// checked by `bounds::async_sleep`: it keeps function pointers made there,
/// where the sleep's signature and its future were checked, so the loop
/// asks nothing more of them. The future's output is ignored, so
/// `async_io::Timer::after` fits.
pub struct CustomTimer<F, Fut> {
    sleep: F,
    start: fn(&F, Duration) -> Fut,
    poll: fn(Pin<&mut Fut>, &mut Context<'_>) -> Poll<()>,
}

impl<F, Fut> core::fmt::Debug for CustomTimer<F, Fut> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("CustomTimer")
    }
}

/// The user's async sleep, as the loop keeps it.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn custom_timer<F: Fn(Duration) -> Fut, Fut: Future>(sleep: F) -> CustomTimer<F, Fut> {
    CustomTimer {
        sleep,
        start: |sleep, wait| sleep(wait),
        poll: |pending, cx| pending.poll(cx).map(drop),
    }
}

impl<F, Fut> Timer for CustomTimer<F, Fut> {
    type Pending = Fut;
    const CLOCK: Clock = DefaultWait::CLOCK;

    #[inline]
    fn start(&mut self, wait: Duration) -> Fut {
        (self.start)(&self.sleep, wait)
    }

    #[inline]
    fn poll_wait(&mut self, pending: Pin<&mut Fut>, cx: &mut Context<'_>) -> Poll<()> {
        (self.poll)(pending, cx)
    }
}

/// The user's blocking sleep (`sleep = ...` on a sync function, the
/// builder's `.sleep(...)` before `.call()`), checked by `bounds::sync_sleep`.
pub struct CustomSleep<F> {
    sleep: F,
    call: fn(&F, Duration),
}

impl<F> core::fmt::Debug for CustomSleep<F> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("CustomSleep")
    }
}

impl<F> BlockingSleep for CustomSleep<F> {
    #[inline]
    fn sleep(&self, wait: Duration) {
        (self.call)(&self.sleep, wait);
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn clock(&self) -> Clock {
        Clock::Std
    }
}

/// No thread to sleep on in the browser or Node: no blocking default there.
#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
impl BlockingSleep for DefaultSleep {
    fn sleep(&self, wait: Duration) {
        #[cfg(any(test, feature = "test-util"))]
        if crate::testing::virtual_sleep(wait) {
            return;
        }
        std::thread::sleep(wait);
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn clock(&self) -> Clock {
        Clock::StdOrVirtual
    }
}

/// What an async retry loop needs to sleep between attempts: a default
/// timer (the features `tokio` and `futures-timer`, both on by default), or
/// a sleep of the caller's runtime. A name compile errors use: the
/// attribute checks it on the function's return type, the builder on its
/// timer; with either feature every type has it, without both only a
/// custom sleep.
///
/// ```
/// use backoff_runtime::bounds::DefaultAsyncSleep;
///
/// fn sleeps<R: DefaultAsyncSleep>() {}
/// # #[cfg(any(feature = "tokio", feature = "futures-timer"))]
/// sleeps::<Result<u8, String>>();
/// ```
#[diagnostic::on_unimplemented(
    message = "an async retry loop (`#[retry]` on an `async fn`, or an awaited `Policy::retry`) needs a timer: the `tokio` or `futures-timer` feature of `backoff-runtime`, or a sleep of your runtime",
    label = "async retry loops sleep on the default timer unless given `sleep = ...` (the builder's `.sleep(...)`)",
    note = "enable a timer: `backoff-runtime = {{ version = \"0.1\", features = [\"futures-timer\"] }}` (any executor) or `[\"tokio\"]`, or pass your runtime's sleep: `#[retry(sleep = async_io::Timer::after)]`"
)]
pub trait DefaultAsyncSleep {
    /// Nothing: the bound is the check.
    fn has_default_timer() {}
}

#[cfg(any(feature = "tokio", feature = "futures-timer"))]
impl<R: ?Sized> DefaultAsyncSleep for R {}

#[cfg(not(any(feature = "tokio", feature = "futures-timer")))]
#[diagnostic::do_not_recommend]
impl<F, Fut> DefaultAsyncSleep for CustomTimer<F, Fut> {}

/// How an async loop waits, and which clock it measures `max_elapsed` on:
/// the default timer ([`DefaultTimer`]) or the user's async sleep.
pub trait Timer {
    /// What a wait keeps while it is pending (the default timer keeps it in
    /// the timer itself: nothing).
    type Pending;
    /// The clock `max_elapsed` is measured on: tokio's (paused or not) when
    /// the feature is on, so `sleep = tokio::time::sleep` keeps the
    /// deadline on the clock it advances.
    const CLOCK: Clock;
    /// Starts a wait of `wait`.
    fn start(&mut self, wait: Duration) -> Self::Pending;
    /// Polls the wait started last.
    fn poll_wait(&mut self, pending: Pin<&mut Self::Pending>, cx: &mut Context<'_>) -> Poll<()>;

    /// Its [`CLOCK`](Self::CLOCK), read from a timer whose type has no name
    /// to write (the expansion's `sleep = ...`).
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn clock(&self) -> Clock {
        Self::CLOCK
    }

    /// A wait of `wait`, to await in place.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn sleep(&mut self, wait: Duration) -> Sleeping<'_, Self>
    where
        Self: Sized,
    {
        let pending = self.start(wait);
        Sleeping { timer: self, pending }
    }
}

impl Timer for DefaultTimer {
    type Pending = ();
    const CLOCK: Clock = DefaultWait::CLOCK;

    /// Resets the boxed wait (made on the first wait, where the backend is
    /// chosen).
    #[cfg_attr(not(any(feature = "tokio", feature = "futures-timer")), allow(unreachable_code))] // no backend: nothing to wait on
    fn start(&mut self, wait: Duration) {
        match self.slot.get() {
            Some(pending) => pending.reset(wait),
            None => self.slot = ColdBox::new(DefaultWait::start(wait)),
        }
    }

    #[inline]
    fn poll_wait(&mut self, _pending: Pin<&mut ()>, cx: &mut Context<'_>) -> Poll<()> {
        match self.slot.get() {
            Some(pending) => pending.poll(cx),
            None => Poll::Ready(()),
        }
    }
}

/// The default timer whose pending wait is kept by the future that waits
/// (the tower layer's): no allocation, and nothing to drop on a call that
/// never waits.
#[derive(Clone, Copy, Debug, Default)]
pub struct InlineTimer;

impl Timer for InlineTimer {
    type Pending = DefaultWait;
    const CLOCK: Clock = DefaultWait::CLOCK;

    fn start(&mut self, wait: Duration) -> DefaultWait {
        DefaultWait::start(wait)
    }

    #[inline]
    fn poll_wait(&mut self, pending: Pin<&mut DefaultWait>, cx: &mut Context<'_>) -> Poll<()> {
        pending.poll(cx)
    }
}

pin_project_lite::pin_project! {
    /// One wait of a [`Timer`], awaited in place.
    #[derive(Debug)]
    #[must_use = "a wait does nothing unless awaited"]
    pub struct Sleeping<'a, Tm: Timer> {
        timer: &'a mut Tm,
        #[pin]
        pending: Tm::Pending,
    }
}

impl<Tm: Timer> Future for Sleeping<'_, Tm> {
    type Output = ();

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.project();
        this.timer.poll_wait(this.pending, cx)
    }
}
