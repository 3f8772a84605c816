//! [`AdaptiveThrottle`]: Google SRE's client-side adaptive throttling over a
//! window that forgets.

use core::time::Duration;
use std::sync::{Mutex, MutexGuard};

use crate::limits::admission_limit::{Admission, AdmissionLimit, AdmissionRequest, AttemptEnd, Ending};
use crate::limits::named::name_methods;
use crate::time::Instant;

/// The window's slots: counts older than the window drop out a tenth of it
/// at a time.
const SLOTS: usize = 10;

/// Client-side adaptive throttling (the SRE book's "Handling Overload"):
/// each attempt, the first included, is refused locally with probability
/// `max(0, (requests − K·accepts) / (requests + 1))`, where `requests` counts
/// the attempts the client made or refused itself and `accepts` the answers
/// that were not throttles, over the last [`window`](Self::window) (default
/// two minutes, K = 2). An attempt let through counts when its answer comes
/// (the SDKs count it when it is sent, so a client whose first attempts are
/// still in flight sheds the next ones from a healthy backend). Name it in `admission = ...` (or
/// [`Retry::admission`](crate::Retry::admission)).
///
/// An attempt that never answered counts nothing: one abandoned (its call
/// was dropped, or it lost a hedge) or one whose body panicked says nothing
/// of the backend ([`Ending`](crate::limits::Ending)).
///
/// While the backend accepts everything, `requests = accepts` and nothing
/// is refused; as it rejects more, the client sheds the excess itself, so
/// the backend sees about K times what it accepts. The window forgets: a
/// long-lived client throttles a new overload as quickly as a fresh one.
/// It never makes an attempt wait. An answer is a throttle when the attempt
/// failed with an error that `slow_down_if` flags (by default every error
/// `retry_if` retries); a success, a pending value and any other error are
/// accepts.
///
/// ```
/// use backoff_runtime::limits::{AdaptiveThrottle, Admission, AdmissionLimit, AdmissionRequest, AttemptEnd};
/// use std::time::{Duration, Instant};
///
/// static BACKEND: AdaptiveThrottle = AdaptiveThrottle::new();
///
/// let now = Instant::now();
/// let ask = || BACKEND.admit(AdmissionRequest::new(now, 1, Duration::ZERO));
/// // A backend that accepts everything: nothing is refused.
/// for _ in 0..100 {
///     assert_eq!(ask(), Admission::Go);
///     BACKEND.observed(AttemptEnd::new(now, false));
/// }
/// ```
#[derive(Debug)]
pub struct AdaptiveThrottle {
    k: f64,
    window: Duration,
    name: Option<&'static str>,
    /// The requests and accepts of the window (its settings first, so its
    /// `Debug` shows them first).
    state: Mutex<Window>,
}

crate::limits::named::default_is_new!(AdaptiveThrottle);

impl AdaptiveThrottle {
    /// K = 2 over two minutes. `const`, so it lives in a `static`.
    ///
    /// ```
    /// use backoff_runtime::limits::AdaptiveThrottle;
    /// use std::time::Duration;
    ///
    /// let throttle = AdaptiveThrottle::new();
    /// assert_eq!((throttle.get_k(), throttle.get_window()), (2.0, Duration::from_secs(120)));
    /// ```
    #[must_use]
    pub const fn new() -> Self {
        AdaptiveThrottle {
            k: 2.0,
            window: Duration::from_secs(120),
            name: None,
            state: Mutex::new(Window::new()),
        }
    }

    name_methods! {
        /// Names the throttle (the `budget` label of its metrics).
        ///
        /// ```
        /// let throttle = backoff_runtime::limits::AdaptiveThrottle::new().name("search");
        /// assert_eq!(throttle.get_name(), Some("search"));
        /// ```
        fn name;
        /// The name given with [`name`](Self::name).
        ///
        /// ```
        /// assert_eq!(backoff_runtime::limits::AdaptiveThrottle::new().get_name(), None);
        /// ```
        fn get_name;
    }

    /// The multiplier K of the accepts: the backend sees about K times what
    /// it accepts (the SRE book's 2; lower sheds sooner).
    ///
    /// # Panics
    ///
    /// When `k` is not finite or below 1.
    ///
    /// ```
    /// let throttle = backoff_runtime::limits::AdaptiveThrottle::new().k(1.5);
    /// assert_eq!(throttle.get_k(), 1.5);
    /// ```
    #[must_use]
    pub const fn k(mut self, k: f64) -> Self {
        assert!(k.is_finite() && k >= 1.0, "K must be finite and at least 1");
        self.k = k;
        self
    }

    /// The window the counts cover; older counts drop out a tenth of it at
    /// a time.
    ///
    /// # Panics
    ///
    /// When `window` is shorter than 10 nanoseconds.
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let throttle = backoff_runtime::limits::AdaptiveThrottle::new().window(Duration::from_secs(30));
    /// assert_eq!(throttle.get_window(), Duration::from_secs(30));
    /// ```
    #[must_use]
    pub const fn window(mut self, window: Duration) -> Self {
        assert!(window.as_nanos() >= SLOTS as u128, "the window must be at least 10 ns");
        self.window = window;
        self
    }

    /// K.
    ///
    /// ```
    /// assert_eq!(backoff_runtime::limits::AdaptiveThrottle::new().get_k(), 2.0);
    /// ```
    #[must_use]
    pub const fn get_k(&self) -> f64 {
        self.k
    }

    /// The window.
    ///
    /// ```
    /// use std::time::Duration;
    /// assert_eq!(backoff_runtime::limits::AdaptiveThrottle::new().get_window(), Duration::from_secs(120));
    /// ```
    #[must_use]
    pub const fn get_window(&self) -> Duration {
        self.window
    }

    /// The requests and accepts counted in the window at `now`.
    ///
    /// ```
    /// use std::time::Instant;
    /// assert_eq!(backoff_runtime::limits::AdaptiveThrottle::new().counts(Instant::now()), (0, 0));
    /// ```
    #[must_use]
    pub fn counts(&self, now: Instant) -> (u64, u64) {
        let mut window = self.lock();
        let slot = window.slot(now, self.window);
        window.totals(slot)
    }

    /// The probability that an attempt at `now` is refused.
    ///
    /// ```
    /// use std::time::Instant;
    /// assert_eq!(backoff_runtime::limits::AdaptiveThrottle::new().rejection_probability(Instant::now()), 0.0);
    /// ```
    #[must_use]
    pub fn rejection_probability(&self, now: Instant) -> f64 {
        let (requests, accepts) = self.counts(now);
        rejection_probability(requests, accepts, self.k)
    }

    /// Whether an attempt at `now`, drawing `draw` in `[0, 1)`, is refused;
    /// a refused one counts as a request now, one let through when its
    /// answer comes.
    fn admit_drawing(&self, now: Instant, draw: f64) -> Admission {
        let mut window = self.lock();
        let slot = window.slot(now, self.window);
        let (requests, accepts) = window.totals(slot);
        if draw < rejection_probability(requests, accepts, self.k) {
            window.count(slot, Counter::Requests);
            Admission::Refuse
        } else {
            Admission::Go
        }
    }

    /// The window, locked for a few additions (never across a wait). Its
    /// counts stay counts whatever a panic interrupted, so a poisoned lock
    /// is taken as is.
    fn lock(&self) -> MutexGuard<'_, Window> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// SRE's rule: `max(0, (requests − K·accepts) / (requests + 1))`.
fn rejection_probability(requests: u64, accepts: u64, k: f64) -> f64 {
    let requests = requests as f64;
    ((requests - k * accepts as f64) / (requests + 1.0)).max(0.0)
}

impl AdmissionLimit for AdaptiveThrottle {
    fn admit(&self, request: AdmissionRequest<'_>) -> Admission {
        let draw = crate::schedule::rng::with_thread_rng(|rng| crate::schedule::rng::unit(rand::Rng::next_u64(rng)));
        self.admit_drawing(request.now(), draw)
    }

    fn observed(&self, end: AttemptEnd<'_>) {
        // An attempt that never answered says nothing of the backend.
        if end.ending() != Ending::Answered {
            return;
        }
        let mut window = self.lock();
        let slot = window.slot(end.now(), self.window);
        window.count(slot, Counter::Requests);
        if !end.slow_down() {
            window.count(slot, Counter::Accepts);
        }
    }

    fn name(&self) -> Option<&'static str> {
        self.get_name()
    }
}

/// Which count an event adds to.
#[derive(Clone, Copy)]
enum Counter {
    Requests,
    Accepts,
}

/// The counts of the last `SLOTS` tenths of the window, each stamped with
/// the tenth it counts (so a slot reused after a pause starts from zero).
#[derive(Debug)]
struct Window {
    anchor: Option<Instant>,
    /// `(tenth, requests, accepts)`.
    slots: [(u64, u64, u64); SLOTS],
}

impl Window {
    const fn new() -> Self {
        Window {
            anchor: None,
            slots: [(0, 0, 0); SLOTS],
        }
    }

    /// The tenth of the window that `now` falls in, counted from the first
    /// instant seen (an earlier instant counts as that one).
    fn slot(&mut self, now: Instant, window: Duration) -> u64 {
        let anchor = *self.anchor.get_or_insert(now);
        let width = (window.as_nanos() / SLOTS as u128).max(1);
        let tenth = now.saturating_duration_since(anchor).as_nanos() / width;
        u64::try_from(tenth).unwrap_or(u64::MAX)
    }

    /// The requests and accepts of the window ending with tenth `slot`.
    fn totals(&self, slot: u64) -> (u64, u64) {
        self.slots
            .iter()
            .filter(|(tenth, _, _)| *tenth <= slot && slot - *tenth < SLOTS as u64)
            .fold((0, 0), |(requests, accepts), (_, r, a)| {
                (requests.saturating_add(*r), accepts.saturating_add(*a))
            })
    }

    /// Counts one event in tenth `slot`.
    fn count(&mut self, slot: u64, counter: Counter) {
        let index = usize::try_from(slot % SLOTS as u64).unwrap_or(0);
        let entry = &mut self.slots[index];
        if entry.0 != slot {
            // A tenth this slot counted earlier (or a late event, counted in
            // the newer tenth that holds the slot now).
            if entry.0 > slot {
                return;
            }
            *entry = (slot, 0, 0);
        }
        match counter {
            Counter::Requests => entry.1 = entry.1.saturating_add(1),
            Counter::Accepts => entry.2 = entry.2.saturating_add(1),
        }
    }
}

#[cfg(test)]
mod tests;
