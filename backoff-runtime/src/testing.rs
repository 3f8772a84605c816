//! Deterministic tests without waiting.
//!
//! A seedable per-thread RNG and a virtual clock for sync retry loops.
//!
//! Async code needs neither: run it under `#[tokio::test(start_paused =
//! true)]` and tokio's paused clock drives both the waits and `max_elapsed`.

use core::cell::RefCell;
use core::time::Duration;

use crate::time::Instant;

/// Reseeds the calling thread's jitter generator, so the waits that follow on
/// this thread are the same from run to run.
///
/// Invocation ids are not affected: they come from a secure generator of
/// their own ([`InvocationId`](crate::InvocationId)), in tests as in
/// production, so that a build with `test-util` can never make an
/// idempotency key predictable. Tests compare ids with each other (one id
/// for all attempts of a call, a new one per call), not with literals.
///
/// ```
/// use backoff_runtime::Policy;
/// use backoff_runtime::testing::seed_thread_rng;
///
/// seed_thread_rng(42);
/// let first: Vec<_> = Policy::new().schedule().collect();
/// seed_thread_rng(42);
/// let second: Vec<_> = Policy::new().schedule().collect();
/// assert_eq!(first, second);
/// ```
pub fn seed_thread_rng(seed: u64) {
    crate::schedule::rng::seed_thread(seed);
}

/// One installed virtual clock.
struct VirtualState {
    /// Which guard owns it.
    id: u64,
    origin: Instant,
    elapsed: Duration,
    waits: Vec<Duration>,
}

thread_local! {
    /// The clocks installed on this thread, oldest first; the last is live.
    static VIRTUAL: RefCell<Vec<VirtualState>> = const { RefCell::new(Vec::new()) };
    /// How many virtual clocks this thread has installed: read first, so a
    /// thread without one (every thread outside tests) pays one load.
    static INSTALLED: core::cell::Cell<usize> = const { core::cell::Cell::new(0) };
    /// The id of the next clock installed on this thread.
    static NEXT_ID: core::cell::Cell<u64> = const { core::cell::Cell::new(0) };
}

/// The live virtual clock's "now", when one is installed on this thread
/// (saturating: a virtual time too far ahead to represent reads as far ahead
/// as can be represented).
pub(crate) fn virtual_now() -> Option<Instant> {
    if INSTALLED.with(core::cell::Cell::get) == 0 {
        return None;
    }
    VIRTUAL.with(|v| v.borrow().last().map(|s| saturating_add(s.origin, s.elapsed)))
}

/// Records `wait` on the live virtual clock instead of sleeping; `false` when
/// no virtual clock is installed on this thread.
pub(crate) fn virtual_sleep(wait: Duration) -> bool {
    if INSTALLED.with(core::cell::Cell::get) == 0 {
        return false;
    }
    VIRTUAL.with(|v| match v.borrow_mut().last_mut() {
        Some(state) => {
            state.elapsed = state.elapsed.saturating_add(wait);
            state.waits.push(wait);
            true
        }
        None => false,
    })
}

/// A virtual clock for sync retry loops on the current thread: while it is
/// installed, the waits of sync `#[retry]` functions and of
/// [`Policy::retry`](crate::Policy::retry) are recorded and advance virtual
/// time instead of sleeping, and `max_elapsed` is measured on virtual time.
///
/// Clocks nest like a stack of guards: installing a second one on the same
/// thread makes it the live one until it is dropped, and then the first is
/// live again. Dropping a clock that is not the live one only removes it
/// (the live one stays). Each guard reports its own waits and time.
///
/// ```
/// use backoff_runtime::{Jitter, Policy};
/// use backoff_runtime::testing::VirtualClock;
/// use std::time::Duration;
///
/// let clock = VirtualClock::install();
/// let policy = Policy::new().jitter(Jitter::None).max_retries(3);
/// let result: Result<(), &str> = policy.retry(|| Err("down")).call();
/// assert_eq!(result, Err("down"));
/// assert_eq!(clock.waits(), [1, 2, 4].map(Duration::from_secs));
/// assert_eq!(clock.elapsed(), Duration::from_secs(7));
/// ```
#[derive(Debug)]
#[must_use = "the virtual clock is uninstalled when this guard is dropped"]
pub struct VirtualClock {
    /// The id of this guard's clock on its thread.
    id: u64,
    // Not Send: the clock belongs to the thread that installed it.
    _thread_bound: core::marker::PhantomData<*const ()>,
}

impl VirtualClock {
    /// Installs a virtual clock on the current thread, starting at zero
    /// elapsed time.
    ///
    /// ```
    /// let clock = backoff_runtime::testing::VirtualClock::install();
    /// assert!(clock.waits().is_empty());
    /// ```
    pub fn install() -> Self {
        let id = NEXT_ID.with(|next| {
            let id = next.get();
            next.set(id.wrapping_add(1));
            id
        });
        VIRTUAL.with(|v| {
            v.borrow_mut().push(VirtualState {
                id,
                origin: Instant::now(),
                elapsed: Duration::ZERO,
                waits: Vec::new(),
            });
        });
        INSTALLED.with(|installed| installed.set(installed.get() + 1));
        VirtualClock {
            id,
            _thread_bound: core::marker::PhantomData,
        }
    }

    /// Runs `f` on this guard's own clock.
    fn with_state<T>(&self, f: impl FnOnce(&mut VirtualState) -> T) -> Option<T> {
        VIRTUAL.with(|v| v.borrow_mut().iter_mut().find(|s| s.id == self.id).map(f))
    }

    /// Every wait recorded so far, in order.
    ///
    /// ```
    /// let clock = backoff_runtime::testing::VirtualClock::install();
    /// assert_eq!(clock.waits(), Vec::<std::time::Duration>::new());
    /// ```
    #[must_use]
    pub fn waits(&self) -> Vec<Duration> {
        self.with_state(|s| s.waits.clone()).unwrap_or_default()
    }

    /// Virtual time elapsed since the clock was installed.
    ///
    /// ```
    /// use std::time::Duration;
    /// let clock = backoff_runtime::testing::VirtualClock::install();
    /// clock.advance(Duration::from_millis(5));
    /// assert_eq!(clock.elapsed(), Duration::from_millis(5));
    /// ```
    #[must_use]
    pub fn elapsed(&self) -> Duration {
        self.with_state(|s| s.elapsed).unwrap_or_default()
    }

    /// Moves virtual time forward, e.g. to stand for time spent inside the
    /// function's body. Not recorded as a wait.
    ///
    /// ```
    /// use std::time::Duration;
    /// let clock = backoff_runtime::testing::VirtualClock::install();
    /// clock.advance(Duration::from_secs(1));
    /// assert!(clock.waits().is_empty());
    /// ```
    pub fn advance(&self, by: Duration) {
        self.with_state(|s| s.elapsed = s.elapsed.saturating_add(by));
    }
}

impl Drop for VirtualClock {
    fn drop(&mut self) {
        // `try_with`: a guard dropped while the thread's locals are being
        // destroyed has nothing left to remove.
        let _ = VIRTUAL.try_with(|v| v.borrow_mut().retain(|s| s.id != self.id));
        let _ = INSTALLED.try_with(|installed| installed.set(installed.get().saturating_sub(1)));
    }
}

/// `instant + by`, or the latest instant this side of overflow that is
/// cheap to find (`instant` plus 1,000 years, then `instant` itself): never
/// a panic. Far beyond what a [`Timeline`] tells apart (73 years).
pub(crate) fn saturating_add(instant: Instant, by: Duration) -> Instant {
    const FAR: Duration = Duration::from_secs(1_000 * 365 * 24 * 3600);
    instant
        .checked_add(by)
        .or_else(|| instant.checked_add(by.min(FAR)))
        .unwrap_or(instant)
}
